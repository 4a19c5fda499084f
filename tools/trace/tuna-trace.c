/*
 * tuna-trace: every point-to-point message one tuna_alltoallv sends, as JSON lines.
 *
 *   mpiexec -n P tuna-trace [-q Q] [-r R] -o FILE OPTIONS    (options before OPTIONS)
 *     OPTIONS  the option string of the call (tuna:radix=3, coalesced:radix=2, staggered, ...)
 *     -q Q     logical nodes of Q ranks (sets TUNA_RANKS_PER_NODE before the first call)
 *     -r R     also check flat TuNA's schedule at radix R (rounds, hops per block, digits)
 *     -o FILE  where rank 0 writes the trace
 *
 * The sends are caught below the profiling interface: tuna makes its own calls through the
 * PMPI_ names (docs/preload.md, "tuna's own calls"), so this executable defines PMPI_Send,
 * PMPI_Isend, PMPI_Ssend, PMPI_Issend and PMPI_Sendrecv, records, and calls the library's
 * (found with dlsym(RTLD_NEXT)). It exports its symbols (ENABLE_EXPORTS), so libtuna.so's
 * calls bind to these definitions before libmpi's. A run that intercepts no message fails: the trace would
 * otherwise be silently empty.
 *
 * Rank p's block for rank d is 3 ints {TRACE_MAGIC, p, d}, so the packed payload of a data
 * message is the list of blocks it carries, in order. A payload that is not a whole number of
 * such blocks is metadata (TuNA's size messages start with a width byte in {0,1,2,4,8}, never
 * the magic's first byte). The exchange is checked byte for byte against PMPI_Alltoallv.
 *
 * Lines: first {"kind":"run", P, options, ranks_per_node}, then one per message:
 *   {"rank","dest","tag","call","kind":"data"|"meta"|"empty","seq","round","bytes","blocks"}
 * seq is the call order on the sending rank; round the index among that rank's messages of
 * the same tag and kind (the same on every rank: TuNA's schedule is rank-symmetric).
 *
 * Checks on the gathered trace (exit status 1 on failure): every block o -> d, o != d, travels
 * along one chain of data messages from o to d (each rank forwards it at most once); no
 * block is sent twice in one round of a tag; with -r R, every rank sends K data messages
 * (K = the pairs (x, z), z in [1, R), with z*R^x < P), round k goes to rank + z*R^x and carries
 * exactly the blocks whose base-R digit x is z, and each block moves once per non-zero digit.
 */
#define _GNU_SOURCE /* getopt, setenv, RTLD_NEXT */
#include "tuna.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRACE_MAGIC 0x54524331 /* "TRC1": marks a block, not a metadata byte */
#define BLOCK_INTS 3
/* Record header in the gathered int stream: rank dest tag call kind seq round bytes nblocks */
#define HDR 9

enum { CALL_SEND, CALL_ISEND, CALL_SSEND, CALL_ISSEND, CALL_SENDRECV };
static const char *const call_name[] = {"Send", "Isend", "Ssend", "Issend", "Sendrecv"};
enum { KIND_DATA, KIND_META, KIND_EMPTY };
static const char *const kind_name[] = {"data", "meta", "empty"};

static int tracing;      /* record only inside the traced call */
static int world_rank, world_size;
static long intercepted; /* sends seen, tracing or not: proves the interposition works */
static int *rec;         /* records, HDR ints + 2 per block each */
static size_t nrec_ints, cap_ints;
static int nmsg;

static void die(const char *msg)
{
    fprintf(stderr, "tuna-trace (rank %d): %s\n", world_rank, msg);
    PMPI_Abort(MPI_COMM_WORLD, 1);
}

static void push(int v)
{
    if (nrec_ints == cap_ints) {
        cap_ints = cap_ints ? 2 * cap_ints : 4096;
        rec = realloc(rec, sizeof(int) * cap_ints);
        if (!rec)
            die("out of memory");
    }
    rec[nrec_ints++] = v;
}

/* The library's PMPI_Sendrecv (this executable's own is interposed below). */
static int library_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
                            int stag, void *rbuf, int rcount, MPI_Datatype rtype, int source,
                            int rtag, MPI_Comm comm, MPI_Status *status);

static void record(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                   MPI_Comm comm, int call)
{
    intercepted++;
    if (!tracing || dest == MPI_PROC_NULL)
        return;
    /* The bytes in the order they travel, for any datatype. MPICH's MPI_Pack rejects
     * MPI_BOTTOM (a null inbuf), where tuna's hindexed messages start: those go through a
     * send to self, received as MPI_PACKED (which matches any type). */
    int size = 0, pos = 0;
    if (PMPI_Pack_size(count, type, comm, &size) != MPI_SUCCESS)
        die("MPI_Pack_size failed");
    char *bytes = malloc(size ? (size_t)size : 1);
    if (!bytes)
        die("out of memory");
    if (buf != MPI_BOTTOM) {
        if (PMPI_Pack(buf, count, type, bytes, size, &pos, comm) != MPI_SUCCESS)
            die("MPI_Pack failed");
    } else {
        MPI_Status st;
        if (library_sendrecv(buf, count, type, 0, 0, bytes, size, MPI_PACKED, 0, 0,
                             MPI_COMM_SELF, &st) != MPI_SUCCESS ||
            PMPI_Get_count(&st, MPI_PACKED, &pos) != MPI_SUCCESS)
            die("copying a message through MPI_COMM_SELF failed");
    }
    /* tuna talks on a private duplicate: name the peer by its MPI_COMM_WORLD rank. */
    MPI_Group g, wg;
    int wdest;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
    PMPI_Group_translate_ranks(g, 1, &dest, wg, &wdest);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    int nblk = pos / (int)(BLOCK_INTS * sizeof(int)), kind = KIND_DATA;
    if (pos == 0)
        kind = KIND_EMPTY;
    else if (pos % (int)(BLOCK_INTS * sizeof(int)) != 0)
        kind = KIND_META;
    for (int b = 0; b < nblk && kind == KIND_DATA; b++) {
        int v[BLOCK_INTS];
        memcpy(v, bytes + (size_t)b * sizeof v, sizeof v);
        if (v[0] != TRACE_MAGIC || v[1] < 0 || v[1] >= world_size || v[2] < 0 ||
            v[2] >= world_size)
            kind = KIND_META;
    }
    int hdr[HDR] = {world_rank, wdest, tag, call, kind, nmsg++, 0, pos,
                    kind == KIND_DATA ? nblk : 0};
    for (int i = 0; i < HDR; i++)
        push(hdr[i]);
    for (int b = 0; b < hdr[8]; b++) {
        int v[BLOCK_INTS];
        memcpy(v, bytes + (size_t)b * sizeof v, sizeof v);
        push(v[1]);
        push(v[2]);
    }
    free(bytes);
}

/* ---- the interposed sends (prototypes from mpi.h) */

/* The library's definition of a PMPI_ send: the next one after this executable's. */
static void *next(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (!fn) {
        fprintf(stderr, "tuna-trace: the MPI library has no %s\n", name);
        abort();
    }
    return fn;
}
typedef int send_fn(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int isend_fn(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int sendrecv_fn(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype,
                        int, int, MPI_Comm, MPI_Status *);

static int library_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
                            int stag, void *rbuf, int rcount, MPI_Datatype rtype, int source,
                            int rtag, MPI_Comm comm, MPI_Status *status)
{
    static sendrecv_fn *fn;
    if (!fn)
        fn = (sendrecv_fn *)next("PMPI_Sendrecv");
    return fn(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}

int PMPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    static send_fn *fn;
    if (!fn)
        fn = (send_fn *)next("PMPI_Send");
    record(buf, count, type, dest, tag, comm, CALL_SEND);
    return fn(buf, count, type, dest, tag, comm);
}

int PMPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    static send_fn *fn;
    if (!fn)
        fn = (send_fn *)next("PMPI_Ssend");
    record(buf, count, type, dest, tag, comm, CALL_SSEND);
    return fn(buf, count, type, dest, tag, comm);
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    static isend_fn *fn;
    if (!fn)
        fn = (isend_fn *)next("PMPI_Isend");
    record(buf, count, type, dest, tag, comm, CALL_ISEND);
    return fn(buf, count, type, dest, tag, comm, req);
}

int PMPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request *req)
{
    static isend_fn *fn;
    if (!fn)
        fn = (isend_fn *)next("PMPI_Issend");
    record(buf, count, type, dest, tag, comm, CALL_ISSEND);
    return fn(buf, count, type, dest, tag, comm, req);
}

int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                  void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                  MPI_Status *status)
{
    record(sbuf, scount, stype, dest, stag, comm, CALL_SENDRECV);
    return library_sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
                            comm, status);
}

/* ---- checks on the gathered trace (rank 0) */

typedef struct msg {
    const int *h;    /* header */
    const int *blk;  /* nblocks pairs */
} msg;

static int fails;

static void fail(const char *fmt, int a, int b, int c)
{
    if (fails++ < 20) {
        fprintf(stderr, "tuna-trace: check failed: ");
        fprintf(stderr, fmt, a, b, c);
        fputc('\n', stderr);
    }
}

static int carries(const msg *m, int o, int d)
{
    for (int b = 0; b < m->h[8]; b++)
        if (m->blk[2 * b] == o && m->blk[2 * b + 1] == d)
            return 1;
    return 0;
}

/* Every block o -> d follows one chain of data messages o -> ... -> d, each rank once. */
static void check_paths(const msg *m, int n, int P)
{
    for (int o = 0; o < P; o++)
        for (int d = 0; d < P; d++) {
            if (o == d)
                continue;
            int total = 0;
            for (int k = 0; k < n; k++)
                total += m[k].h[4] == KIND_DATA && carries(&m[k], o, d);
            int at = o, hops = 0;
            while (at != d && hops <= P) {
                int next = -1, seen = 0;
                for (int k = 0; k < n; k++)
                    if (m[k].h[0] == at && m[k].h[4] == KIND_DATA && carries(&m[k], o, d)) {
                        next = m[k].h[1];
                        seen++;
                    }
                if (seen != 1) {
                    fail("block %d -> %d leaves rank %d not exactly once", o, d, at);
                    break;
                }
                at = next;
                hops++;
            }
            if (at == d && hops != total)
                fail("block %d -> %d: %d hops on its path, more messages carry it", o, d, hops);
            if (at != d && hops > P)
                fail("block %d -> %d never reaches %d", o, d, d);
        }
}

/* In one round (tag, round index) a block is sent at most once, across all ranks. */
static void check_rounds(const msg *m, int n)
{
    for (int a = 0; a < n; a++)
        for (int b = a; b < n; b++) {
            if (m[a].h[4] != KIND_DATA || m[b].h[4] != KIND_DATA || m[a].h[2] != m[b].h[2] ||
                m[a].h[6] != m[b].h[6])
                continue;
            for (int i = 0; i < m[a].h[8]; i++)
                for (int j = a == b ? i + 1 : 0; j < m[b].h[8]; j++)
                    if (m[a].blk[2 * i] == m[b].blk[2 * j] &&
                        m[a].blk[2 * i + 1] == m[b].blk[2 * j + 1])
                        fail("block %d -> %d sent twice in round %d", m[a].blk[2 * i],
                             m[a].blk[2 * i + 1], m[a].h[6]);
        }
}

/* Flat TuNA at radix R: rounds (x, z) in order, digit x of each block's distance is z. */
static void check_tuna(const msg *m, int n, int P, int R)
{
    int K = 0, dist[64], digit[64], place[64];
    for (long px = 1, x = 0; px < P; px *= R, x++)
        for (int z = 1; z < R && z * px < P && K < 64; z++, K++) {
            dist[K] = (int)(z * px);
            digit[K] = z;
            place[K] = (int)px;
        }
    for (int p = 0; p < P; p++) {
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (m[i].h[0] != p || m[i].h[4] != KIND_DATA)
                continue;
            if (k >= K) {
                fail("rank %d sends more than K = %d data messages", p, K, 0);
                break;
            }
            if (m[i].h[1] != (p + dist[k]) % P)
                fail("rank %d: round %d goes to rank %d, not p + z*R^x", p, k, m[i].h[1]);
            for (int b = 0; b < m[i].h[8]; b++) {
                int idx = ((m[i].blk[2 * b + 1] - m[i].blk[2 * b]) % P + P) % P;
                if ((idx / place[k]) % R != digit[k])
                    fail("rank %d, round %d: block of distance %d has the wrong digit", p, k, idx);
            }
            k++;
        }
        if (k != K)
            fail("rank %d sends %d data messages, K = %d", p, k, K);
    }
    for (int o = 0; o < P; o++)
        for (int d = 0; d < P; d++) {
            int want = 0, got = 0;
            for (int idx = ((d - o) % P + P) % P; idx; idx /= R)
                want += idx % R != 0;
            for (int i = 0; i < n; i++)
                got += m[i].h[4] == KIND_DATA && carries(&m[i], o, d);
            if (got != want)
                fail("block %d -> %d moves %d times, not once per non-zero digit", o, d, got);
        }
}

/* ---- output */

static void write_trace(FILE *f, const msg *m, int n, int P, const char *options, int q)
{
    fprintf(f, "{\"kind\": \"run\", \"P\": %d, \"options\": \"%s\", \"ranks_per_node\": %d}\n",
            P, options, q);
    for (int i = 0; i < n; i++) {
        const int *h = m[i].h;
        fprintf(f,
                "{\"rank\": %d, \"dest\": %d, \"tag\": %d, \"call\": \"%s\", \"kind\": \"%s\", "
                "\"seq\": %d, \"round\": %d, \"bytes\": %d, \"blocks\": [",
                h[0], h[1], h[2], call_name[h[3]], kind_name[h[4]], h[5], h[6], h[7]);
        for (int b = 0; b < h[8]; b++)
            fprintf(f, "%s[%d, %d]", b ? ", " : "", m[i].blk[2 * b], m[i].blk[2 * b + 1]);
        fprintf(f, "]}\n");
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mpiexec -n P tuna-trace [-q Q] [-r R] -o FILE OPTIONS\n"
               "  OPTIONS  tuna_alltoallv option string (tuna:radix=3, coalesced, ...)\n"
               "  -q Q     logical nodes of Q ranks (TUNA_RANKS_PER_NODE)\n"
               "  -r R     check flat TuNA's schedule at radix R\n"
               "  -o FILE  trace output (JSON lines, written by rank 0)\n");
}

int main(int argc, char **argv)
{
    int q = 0, R = 0, ch;
    const char *out = NULL;
    while ((ch = getopt(argc, argv, "q:r:o:h")) != -1) {
        switch (ch) {
        case 'q': q = atoi(optarg); break;
        case 'r': R = atoi(optarg); break;
        case 'o': out = optarg; break;
        default: usage(ch == 'h' ? stdout : stderr); return ch == 'h' ? 0 : 2;
        }
    }
    if (optind != argc - 1 || !out || q < 0 || (R != 0 && R < 2) ||
        strchr(argv[optind], '"') || strchr(argv[optind], '\\')) {
        usage(stderr);
        return 2;
    }
    const char *options = argv[optind];
    /* The context reads it when tuna first sees the communicator, after MPI_Init. */
    if (q > 0) {
        char v[32];
        snprintf(v, sizeof v, "%d", q);
        setenv("TUNA_RANKS_PER_NODE", v, 1);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    const int P = world_size, me = world_rank;
    tuna_options opt;
    if (tuna_options_parse(options, TUNA_ALLTOALLV, &opt) != MPI_SUCCESS)
        die(tuna_error_string(MPI_ERR_ARG));

    int *cnt = malloc(sizeof(int) * 2 * (size_t)P);
    int *sbuf = malloc(sizeof(int) * BLOCK_INTS * (size_t)P);
    int *rbuf = calloc((size_t)P * BLOCK_INTS, sizeof(int));
    int *want = calloc((size_t)P * BLOCK_INTS, sizeof(int));
    if (!cnt || !sbuf || !rbuf || !want)
        die("out of memory");
    int *displ = cnt + P;
    for (int j = 0; j < P; j++) {
        cnt[j] = BLOCK_INTS;
        displ[j] = BLOCK_INTS * j;
        sbuf[BLOCK_INTS * j] = TRACE_MAGIC;
        sbuf[BLOCK_INTS * j + 1] = me;
        sbuf[BLOCK_INTS * j + 2] = j;
    }
    PMPI_Alltoallv(sbuf, cnt, displ, MPI_INT, want, cnt, displ, MPI_INT, MPI_COMM_WORLD);
    intercepted = 0; /* only what tuna sends counts */
    PMPI_Barrier(MPI_COMM_WORLD);
    tracing = 1;
    int rc = tuna_alltoallv(sbuf, cnt, displ, MPI_INT, rbuf, cnt, displ, MPI_INT,
                            MPI_COMM_WORLD, &opt);
    tracing = 0;
    if (rc != MPI_SUCCESS)
        die(tuna_error_string(rc));
    int bad = memcmp(rbuf, want, sizeof(int) * BLOCK_INTS * (size_t)P) != 0, anybad;
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (anybad) {
        if (me == 0)
            fprintf(stderr, "tuna-trace: %s delivered other bytes than PMPI_Alltoallv\n",
                    options);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    long total = 0;
    PMPI_Allreduce(&intercepted, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (P > 1 && total == 0) {
        if (me == 0)
            fprintf(stderr, "tuna-trace: no send was intercepted: is the executable linked "
                            "with --export-dynamic, and does %s send point to point?\n",
                    options);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }

    /* Round = index among this rank's messages of the same tag and kind, in call order. */
    for (size_t i = 0; i < nrec_ints; i += HDR + 2 * (size_t)rec[i + 8]) {
        int r = 0;
        for (size_t j = 0; j < i; j += HDR + 2 * (size_t)rec[j + 8])
            r += rec[j + 2] == rec[i + 2] && rec[j + 4] == rec[i + 4];
        rec[i + 6] = r;
    }

    int mine = (int)nrec_ints, *lens = NULL, *offs = NULL, *all = NULL;
    if (me == 0 && !(lens = malloc(sizeof(int) * 2 * (size_t)P)))
        die("out of memory");
    PMPI_Gather(&mine, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t tot = 0;
    if (me == 0) {
        offs = lens + P;
        for (int p = 0; p < P; p++) {
            offs[p] = (int)tot;
            tot += (size_t)lens[p];
        }
        if (!(all = malloc(sizeof(int) * (tot + 1))))
            die("out of memory");
    }
    PMPI_Gatherv(rec, mine, MPI_INT, all, lens, offs, MPI_INT, 0, MPI_COMM_WORLD);
    int status = 0;
    if (me == 0) {
        int n = 0;
        for (size_t i = 0; i < tot; i += HDR + 2 * (size_t)all[i + 8])
            n++;
        msg *m = malloc(sizeof(msg) * ((size_t)n + 1));
        if (!m)
            die("out of memory");
        n = 0;
        for (size_t i = 0; i < tot; i += HDR + 2 * (size_t)all[i + 8], n++) {
            m[n].h = all + i;
            m[n].blk = all + i + HDR;
        }
        check_paths(m, n, P);
        check_rounds(m, n);
        if (R)
            check_tuna(m, n, P, R);
        FILE *f = fopen(out, "w");
        if (!f) {
            perror(out);
            fails++;
        } else {
            write_trace(f, m, n, P, options, q);
            fails += fclose(f) != 0;
        }
        if (fails)
            fprintf(stderr, "tuna-trace: %s at P = %d: %d check(s) failed\n", options, P, fails);
        else
            printf("tuna-trace: %s at P = %d: %d messages (%ld sends intercepted), checks "
                   "passed; wrote %s\n",
                   options, P, n, total, out);
        status = fails != 0;
        free(m);
        free(all);
        free(lens);
    }
    PMPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(rec);
    free(cnt);
    free(sbuf);
    free(rbuf);
    free(want);
    MPI_Finalize();
    return status;
}
