/*
 * tuna_neighbor_alltoallv (blocking), tuna_ineighbor_alltoallv (nonblocking, two outstanding),
 * their large-count forms (_c, on the same counts)
 * and tuna_neighbor_alltoallv_init (persistent, three starts with the send buffer rewritten
 * between them) against the library's PMPI_Neighbor_alltoallv on the same inputs: the whole
 * sentinel-filled receive region (blocks, gaps between them, guard bytes after) must be
 * byte-identical, and the send buffer unchanged. Topologies:
 *   random    distributed graph (adjacent): directed edges drawn at random, asymmetric,
 *             repeated edges between a pair, self edges, some ranks with no edges at all;
 *   ring2     distributed graph (MPI_Dist_graph_create, each rank declares its own out-edges):
 *             both ring neighbours and the rank P/2 away, twice;
 *   cart      Cartesian 2-D grid from MPI_Dims_create, periodic in dimension 0 only (a
 *             periodic dimension of size 1 or 2 names a rank twice: the library's call then);
 *   graph     MPI_Graph_create, a symmetric ring with chords both ways (repeated at even P);
 *   spmv      (with a Matrix Market file as argument) the halo exchange of a sparse
 *             matrix-vector product over a 1-D row partition: rank q sends rank p as many
 *             elements as p's rows use x entries of q's columns (MPI_Dist_graph_create_adjacent,
 *             reorder allowed).
 * Types: MPI_INT; a strided vector (2 ints, stride 3, resized to 12 bytes); MPI_DOUBLE on the
 * send side against a double resized to 16 bytes on the receive side. Counts 0..5 per edge,
 * some edges empty, displacements with gaps; every row (node-aware with several leaders and
 * thresholds, tuna with several radices). Run with TUNA_RANKS_PER_NODE so that nodes hold several ranks.
 * Then errors: negative count, MPI_DATATYPE_NULL, a communicator without topology, and
 * MPI_IN_PLACE must come back as errors with nothing written. Exit code = failure count.
 *
 * Built with TUNA_TEST_PRELOAD it is a client of the drop-in (tests/preload): no tuna header,
 * MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv and the persistent MPI_Neighbor_alltoallv_init
 * (MPIX_ with Open MPI 4.1) instead of tuna's calls, the environment's choice as the one row;
 * and on MPI_INT, MPI_Neighbor_alltoall and MPI_Ineighbor_alltoall (a uniform count of 3)
 * against PMPI_Neighbor_alltoall.
 */
#ifdef TUNA_TEST_PRELOAD
#include <mpi.h>
#include "tuna_mpi_features.h" /* NEIGHBOR_ALLTOALLV_INIT: the name the library declares */
typedef int tuna_options; /* unused: the drop-in's choice is the environment's */
typedef MPI_Request tuna_request;
typedef MPI_Request tuna_plan;
#define TUNA_NEIGHBOR_ALLTOALLV 0
#define TUNA_PLAN_ESTIMATE 0
#define TUNA_PLAN_MEASURE 0 /* the drop-in measures where TUNA_PLAN=measure says so */
static int tuna_options_parse(const char *str, int coll, tuna_options *opt)
{
    (void)str;
    (void)coll;
    *opt = 0;
    return MPI_SUCCESS;
}
#define tuna_neighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, opt)                     \
    ((void)(opt), MPI_Neighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm))
#define tuna_ineighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, opt, req)               \
    ((void)(opt), MPI_Ineighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm, req))
#define tuna_request_wait(req) MPI_Wait(req, MPI_STATUS_IGNORE)
#define tuna_neighbor_alltoallv_init(sb, sc, sd, st, rb, rc, rd, rt, comm, opt, flags, plan)   \
    ((void)(opt), NEIGHBOR_ALLTOALLV_INIT(sb, sc, sd, st, rb, rc, rd, rt, comm, MPI_INFO_NULL, plan))
#define tuna_start(plan) MPI_Start(&(plan))
#define tuna_wait(plan) MPI_Wait(&(plan), MPI_STATUS_IGNORE)
#define tuna_plan_free(plan) MPI_Request_free(plan)
static const char *tuna_error_string(int code)
{
    static char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    return msg;
}
#else
#include "tuna.h"
#endif

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0xA5
#define GUARD 32

static int P, me, failures;
static long cases;

static unsigned long rnd_state;
static unsigned rnd(void)
{
    rnd_state = rnd_state * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned)(rnd_state >> 33);
}

enum topo { T_RANDOM, T_RING2, T_CART, T_GRAPH, T_SPMV, T_COUNT };
static const char *const topo_name[T_COUNT] = {"random", "ring2", "cart", "graph", "spmv"};

/* T_SPMV: the halo of a sparse matrix-vector product over a 1-D row partition of a Matrix
 * Market matrix (argv[1]): rank q sends rank p the x entries of q's columns that p's rows
 * use; halo[q * P + p] of them. NULL without a matrix. */
static long *halo;

static int owner(long i, long n)
{
    return (int)((i * P) / n); /* rows [p n / P, (p + 1) n / P) */
}

static int read_halo(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    long n = 0, m = 0, nnz = 0;
    int symmetric = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '%') {
            symmetric |= strstr(line, "symmetric") != NULL;
            continue;
        }
        if (sscanf(line, "%ld %ld %ld", &n, &m, &nnz) == 3)
            break;
    }
    if (n <= 0 || m != n) {
        fclose(f);
        return -1;
    }
    /* need[p * n + j]: rank p's rows use column j */
    unsigned char *need = calloc((size_t)P * (size_t)n, 1);
    for (long e = 0; e < nnz && fgets(line, sizeof line, f); e++) {
        long i, j;
        if (sscanf(line, "%ld %ld", &i, &j) != 2)
            continue;
        i--, j--;
        need[(size_t)owner(i, n) * (size_t)n + (size_t)j] = 1;
        if (symmetric)
            need[(size_t)owner(j, n) * (size_t)n + (size_t)i] = 1;
    }
    fclose(f);
    halo = calloc((size_t)P * (size_t)P, sizeof *halo);
    for (int p = 0; p < P; p++)
        for (long j = 0; j < n; j++)
            if (need[(size_t)p * (size_t)n + (size_t)j] && owner(j, n) != p)
                halo[(size_t)owner(j, n) * (size_t)P + (size_t)p]++;
    free(need);
    return 0;
}

/* The topology communicator; NULL where it can't be made at this P. */
static MPI_Comm make_topo(int t, unsigned long seed)
{
    MPI_Comm c = MPI_COMM_NULL;
    if (t == T_RANDOM) {
        /* the same edge list on every rank: rank s sends e(s) edges, each to a random rank
         * (self and repeats allowed); rank 1 (if any) has none in and out */
        rnd_state = seed;
        int cap = 8 * P + 1, n = 0, *src = malloc(cap * sizeof *src), *dst = malloc(cap * sizeof *dst);
        for (int s = 0; s < P; s++) {
            int e = (int)(rnd() % 5);
            for (int k = 0; k < e; k++) {
                int d = (int)(rnd() % (unsigned)P);
                if (P > 2 && (s == 1 || d == 1))
                    continue;
                src[n] = s;
                dst[n] = d;
                n++;
                if (rnd() % 4 == 0) { /* a repeated edge */
                    src[n] = s;
                    dst[n] = d;
                    n++;
                }
            }
        }
        int indeg = 0, outdeg = 0, *in = malloc((n + 1) * sizeof *in), *out = malloc((n + 1) * sizeof *out);
        /* in-edges listed in reverse: the order of different sources is free, that of one
         * source's repeated edges matches in order */
        for (int q = n - 1; q >= 0; q--)
            if (dst[q] == me)
                in[indeg++] = src[q];
        for (int q = 0; q < n; q++)
            if (src[q] == me)
                out[outdeg++] = dst[q];
        /* repeated sources in reverse would pair k-th with (m-k)-th: both sides are lists of
         * identical ranks, so any order of them is the same list */
        /* weighted (Open MPI's MPI_UNWEIGHTED is a zero-size array to the compiler) */
        int *w = malloc((n + 1) * sizeof *w);
        for (int q = 0; q <= n; q++)
            w[q] = 1 + q % 3;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, indeg, in, w, outdeg, out, w,
                                       MPI_INFO_NULL, 0, &c);
        free(w);
        free(src);
        free(dst);
        free(in);
        free(out);
    } else if (t == T_RING2) {
        int d[4] = {(me + 1) % P, (me + P - 1) % P, (me + P / 2) % P, (me + P / 2) % P};
        int w[4] = {1, 2, 3, 4};
        int src = me, deg = 4;
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, d, w, MPI_INFO_NULL, 0, &c);
    } else if (t == T_SPMV) {
        int indeg = 0, outdeg = 0, *in = malloc((P + 1) * sizeof *in),
            *out = malloc((P + 1) * sizeof *out);
        for (int q = 0; q < P; q++) {
            if (halo[(size_t)q * P + (size_t)me])
                in[indeg++] = q;
            if (halo[(size_t)me * P + (size_t)q])
                out[outdeg++] = q;
        }
        int *w = malloc((P + 1) * sizeof *w);
        for (int q = 0; q <= P; q++)
            w[q] = 1;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, indeg, in, w, outdeg, out, w,
                                       MPI_INFO_NULL, 1, &c);
        free(in);
        free(out);
        free(w);
    } else if (t == T_CART) {
        int dims[2] = {0, 0}, periods[2] = {1, 0};
        MPI_Dims_create(P, 2, dims);
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c);
    } else {
        /* symmetric (a graph's neighbors send and receive alike): chords both ways */
        int *index = malloc(P * sizeof *index), *edges = malloc(4 * P * sizeof *edges), n = 0;
        for (int r = 0; r < P; r++) {
            edges[n++] = (r + 1) % P;
            edges[n++] = (r + P - 1) % P;
            if (P > 3) {
                edges[n++] = (r + P / 2) % P;
                edges[n++] = (r + P - P / 2) % P;
            }
            index[r] = n;
        }
        MPI_Graph_create(MPI_COMM_WORLD, P, index, edges, 0, &c);
        free(index);
        free(edges);
    }
    return c;
}

static void degrees(MPI_Comm c, int *indeg, int *outdeg, int **in, int **out)
{
    int kind;
    MPI_Topo_test(c, &kind);
    if (kind == MPI_DIST_GRAPH) {
        int w;
        MPI_Dist_graph_neighbors_count(c, indeg, outdeg, &w);
        *in = malloc((*indeg + 1) * sizeof **in);
        *out = malloc((*outdeg + 1) * sizeof **out);
        int *wi = malloc((*indeg + 1) * sizeof *wi), *wo = malloc((*outdeg + 1) * sizeof *wo);
        MPI_Dist_graph_neighbors(c, *indeg, *in, wi, *outdeg, *out, wo);
        free(wi);
        free(wo);
    } else if (kind == MPI_GRAPH) {
        MPI_Graph_neighbors_count(c, me, indeg);
        *outdeg = *indeg;
        *in = malloc((*indeg + 1) * sizeof **in);
        *out = malloc((*indeg + 1) * sizeof **out);
        MPI_Graph_neighbors(c, me, *indeg, *in);
        memcpy(*out, *in, *indeg * sizeof **in);
    } else {
        int nd;
        MPI_Cartdim_get(c, &nd);
        *indeg = *outdeg = 2 * nd;
        *in = malloc((2 * nd + 1) * sizeof **in);
        *out = malloc((2 * nd + 1) * sizeof **out);
        for (int d = 0; d < nd; d++) {
            MPI_Cart_shift(c, d, 1, &(*in)[2 * d], &(*in)[2 * d + 1]);
            (*out)[2 * d] = (*in)[2 * d];
            (*out)[2 * d + 1] = (*in)[2 * d + 1];
        }
    }
}

/* Elements on edge s -> d, the k-th such edge (same on both sides). */
static int nelems(int s, int d, int k, int salt)
{
    unsigned h = (unsigned)(s * 7919 + d * 104729 + k * 31 + salt * 65537);
    h ^= h >> 13;
    h *= 2654435761u;
    return (h >> 7) % 7 == 0 ? 0 : (int)((h >> 11) % 5) + 1;
}

enum tkind { K_INT, K_VECTOR, K_DOUBLE_SPREAD, K_COUNT };
static const char *const kind_name[K_COUNT] = {"int", "vector", "double-spread"};

typedef struct side {
    int n, *peer, *counts, *displs;
    MPI_Datatype type;
    MPI_Aint extent;
    size_t bytes; /* buffer, guard included */
} side;

static MPI_Datatype spread; /* a double in 16 bytes: the receive side of double-spread */

static void side_make(side *s, int n, const int *peer, bool send, int kind, int salt,
                      MPI_Datatype vec, bool cart)
{
    s->n = n;
    s->peer = (int *)peer;
    s->counts = malloc((n + 1) * sizeof *s->counts);
    s->displs = malloc((n + 1) * sizeof *s->displs);
    s->type = kind == K_INT ? MPI_INT : kind == K_VECTOR ? vec : send ? MPI_DOUBLE : spread;
    MPI_Aint lb;
    MPI_Type_get_extent(s->type, &lb, &s->extent);
    int at = 1; /* a gap before the first block */
    for (int i = 0; i < n; i++) {
        int k = 0; /* the order of this edge among the side's edges with the same peer */
        for (int q = 0; q < i; q++)
            k += peer[q] == peer[i];
        /* Cartesian: by direction (MPI 4.1: what a rank sends towards -1 in dimension d
         * arrives in its neighbor's slot from +1), so that a rank that is a neighbor twice
         * gets valid counts; graphs: the k-th edge between a pair matches in order. */
        int c = peer[i] == MPI_PROC_NULL ? (int)(rnd() % 3)
                : salt == T_SPMV && send ? (int)halo[(size_t)me * P + (size_t)peer[i]]
                : salt == T_SPMV         ? (int)halo[(size_t)peer[i] * P + (size_t)me]
                : cart && send           ? nelems(me, -1 - i / 2, i % 2, salt)
                : cart                   ? nelems(peer[i], -1 - i / 2, 1 - i % 2, salt)
                : send                   ? nelems(me, peer[i], k, salt)
                                         : nelems(peer[i], me, k, salt);
        s->counts[i] = c;
        s->displs[i] = at;
        at += s->counts[i] + 1 + (int)(rnd() % 2);
    }
    s->bytes = (size_t)at * (size_t)s->extent + GUARD;
}

static void side_free(side *s)
{
    free(s->counts);
    free(s->displs);
}

static void fill_send(unsigned char *b, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)((i * 131 + (size_t)me * 17 + (size_t)salt * 7) & 0xff);
}

static void fail(const char *what, const char *topo, const char *kind, const char *row)
{
    if (failures++ < 20)
        fprintf(stderr, "rank %d: %s: topology %s, type %s, row %s\n", me, what, topo, kind, row);
}

#ifdef TUNA_TEST_PRELOAD
static const char *const rows[] = {"(TUNA_NEIGHBOR_ALLTOALLV)"};
#else
static const char *const rows[] = {"vendor", "linear", "node-aware", "node-aware:leaders=1",
                                   "node-aware:leaders=2,max=16", "node-aware:leaders=P",
                                   "node-aware:max=0", "node-aware:max=2147483647", "tuna",
                                   "tuna:radix=2", "tuna:radix=3", "tuna:radix=P", "auto"};
#endif
#define NROWS ((int)(sizeof rows / sizeof *rows))

#ifdef TUNA_TEST_PRELOAD
/* The library's own neighborhood all-to-all of k ints per neighbor into ref: its
 * MPI_(I)neighbor_alltoall, or (alltoallv) its MPI_(I)neighbor_alltoallv with those counts. */
static int uniform_ref(MPI_Comm c, const int *sbuf, int k, unsigned char *ref, size_t rn,
                       int indeg, int outdeg, bool nonblocking, bool alltoallv)
{
    int *a = malloc(((size_t)(2 * indeg + 2 * outdeg) + 1) * sizeof *a), rc;
    int *sc = a, *sd = a + outdeg, *rc_ = a + 2 * outdeg, *rd = a + 2 * outdeg + indeg;
    for (int i = 0; i < outdeg; i++) {
        sc[i] = k;
        sd[i] = i * k;
    }
    for (int j = 0; j < indeg; j++) {
        rc_[j] = k;
        rd[j] = j * k;
    }
    memset(ref, SENTINEL, rn);
    MPI_Request q;
    if (!nonblocking)
        rc = alltoallv ? PMPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_INT, ref, rc_, rd, MPI_INT, c)
                       : PMPI_Neighbor_alltoall(sbuf, k, MPI_INT, ref, k, MPI_INT, c);
    else {
        rc = alltoallv
                 ? PMPI_Ineighbor_alltoallv(sbuf, sc, sd, MPI_INT, ref, rc_, rd, MPI_INT, c, &q)
                 : PMPI_Ineighbor_alltoall(sbuf, k, MPI_INT, ref, k, MPI_INT, c, &q);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    free(a);
    return rc;
}

/* MPI_Neighbor_alltoall and MPI_Ineighbor_alltoall (the drop-in builds count arrays and runs
 * the alltoallv rows) against the library: 3 ints per neighbor, a guard after the blocks. The
 * result must be the library's MPI_(I)neighbor_alltoall's, or where the library orders a
 * repeated neighbor differently in its alltoall and its alltoallv (MPICH 4.0.2's blocking
 * calls, Open MPI 4.1.4's nonblocking ones on a Cartesian ring of 1 or 2), its alltoallv's. */
static void uniform_case(MPI_Comm c, int t, int indeg, int outdeg)
{
    const int k = 3;
    const size_t sn = (size_t)outdeg * k + 1, rn = (size_t)indeg * k * sizeof(int) + GUARD;
    int *sbuf = malloc(sn * sizeof *sbuf);
    unsigned char *ref = malloc(rn), *refv = malloc(rn), *got = malloc(rn);
    for (size_t i = 0; i < sn; i++)
        sbuf[i] = (int)(i * 7 + (size_t)me * 1000 + (size_t)t);
    for (int nonblocking = 0; nonblocking <= 1; nonblocking++) {
        int lib = uniform_ref(c, sbuf, k, ref, rn, indeg, outdeg, nonblocking, false);
        int libv = uniform_ref(c, sbuf, k, refv, rn, indeg, outdeg, nonblocking, true);
        int both = lib != MPI_SUCCESS || libv != MPI_SUCCESS, any = 0;
        MPI_Allreduce(&both, &any, 1, MPI_INT, MPI_MAX, c);
        if (any)
            continue; /* the library fails: nothing to compare with */
        memset(got, SENTINEL, rn);
        int rc;
        if (!nonblocking) {
            rc = MPI_Neighbor_alltoall(sbuf, k, MPI_INT, got, k, MPI_INT, c);
        } else {
            MPI_Request q;
            rc = MPI_Ineighbor_alltoall(sbuf, k, MPI_INT, got, k, MPI_INT, c, &q);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
        }
        cases++;
        if (rc != MPI_SUCCESS || (memcmp(got, ref, rn) && memcmp(got, refv, rn)))
            fail(nonblocking ? "MPI_Ineighbor_alltoall: received bytes differ"
                             : "MPI_Neighbor_alltoall: received bytes differ",
                 topo_name[t], "int", rows[0]);
    }
    free(sbuf);
    free(ref);
    free(refv);
    free(got);
}
#endif

static void run_case(MPI_Comm c, int t, int kind, MPI_Datatype vec)
{
    int indeg, outdeg, *in, *out;
    degrees(c, &indeg, &outdeg, &in, &out);
    rnd_state = 1000u + (unsigned)me * 7u + (unsigned)t * 13u + (unsigned)kind;
    side s, r;
    side_make(&s, outdeg, out, true, kind, t, vec, t == T_CART);
    side_make(&r, indeg, in, false, kind, t, vec, t == T_CART);
    unsigned char *sbuf = malloc(s.bytes), *copy = malloc(s.bytes), *ref = malloc(r.bytes),
                  *got = malloc(r.bytes), *got2 = malloc(r.bytes), *ref_nb = NULL;
    fill_send(sbuf, s.bytes, 0);
    memcpy(copy, sbuf, s.bytes);
    memset(ref, SENTINEL, r.bytes);
    /* The library's own call is the reference; where it fails (Open MPI 4.1.4 on some
     * graphs with self edges, docs/results/neighbor.md) the case is skipped on every rank. */
    int lib = PMPI_Neighbor_alltoallv(sbuf, s.counts, s.displs, s.type, ref, r.counts, r.displs,
                                      r.type, c);
    int lib_all = 0;
    MPI_Allreduce(&lib, &lib_all, 1, MPI_INT, MPI_MAX, c);
    if (lib_all != MPI_SUCCESS) {
        if (me == 0) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(lib_all, msg, &len);
            printf("note: the library's MPI_Neighbor_alltoallv failed (%s) on topology %s, "
                   "type %s at P = %d: case skipped\n", msg, topo_name[t], kind_name[kind], P);
        }
        goto done;
    }
    /* the nonblocking reference: the library's MPI_Ineighbor_alltoallv (Open MPI 4.1.4's
     * differs from its blocking call where a Cartesian neighbor appears twice) */
    ref_nb = malloc(r.bytes);
    memset(ref_nb, SENTINEL, r.bytes);
    MPI_Request lreq;
    PMPI_Ineighbor_alltoallv(sbuf, s.counts, s.displs, s.type, ref_nb, r.counts, r.displs,
                             r.type, c, &lreq);
    int nb = PMPI_Wait(&lreq, MPI_STATUS_IGNORE), nb_all = 0;
    MPI_Allreduce(&nb, &nb_all, 1, MPI_INT, MPI_MAX, c);
    if (nb_all != MPI_SUCCESS && me == 0)
        printf("note: the library's MPI_Ineighbor_alltoallv failed on topology %s, type %s at "
               "P = %d (Open MPI 4.1.4 matches a Cartesian neighbor named twice in order, its "
               "blocking call by direction): nonblocking case skipped\n", topo_name[t],
               kind_name[kind], P);
    else if (memcmp(ref, ref_nb, r.bytes) && me == 0 && kind == 0)
        printf("note: the library's blocking and nonblocking calls differ on topology %s at "
               "P = %d\n", topo_name[t], P);
#ifdef TUNA_TEST_PRELOAD
    if (kind == K_INT)
        uniform_case(c, t, indeg, outdeg);
#endif
    for (int a = 0; a < NROWS; a++) {
        tuna_options opt;
        if (tuna_options_parse(rows[a], TUNA_NEIGHBOR_ALLTOALLV, &opt) != MPI_SUCCESS) {
            fail("parse", topo_name[t], kind_name[kind], rows[a]);
            continue;
        }
        /* blocking */
        memset(got, SENTINEL, r.bytes);
        int rc = tuna_neighbor_alltoallv(sbuf, s.counts, s.displs, s.type, got, r.counts,
                                         r.displs, r.type, c, &opt);
        cases++;
        if (rc != MPI_SUCCESS)
            fail(tuna_error_string(rc), topo_name[t], kind_name[kind], rows[a]);
        else if (memcmp(got, ref, r.bytes))
            fail("blocking: received bytes differ", topo_name[t], kind_name[kind], rows[a]);
        if (memcmp(sbuf, copy, s.bytes))
            fail("send buffer changed", topo_name[t], kind_name[kind], rows[a]);
#ifndef TUNA_TEST_PRELOAD
        /* the large-count forms, on the same counts (blocking; nonblocking where the library's
         * nonblocking reference runs) */
        {
            MPI_Count *lc = malloc(((size_t)(s.n + r.n) + 1) * sizeof *lc);
            MPI_Aint *ld = malloc(((size_t)(s.n + r.n) + 1) * sizeof *ld);
            for (int i = 0; i < s.n; i++) {
                lc[i] = s.counts[i];
                ld[i] = s.displs[i];
            }
            for (int j = 0; j < r.n; j++) {
                lc[s.n + j] = r.counts[j];
                ld[s.n + j] = r.displs[j];
            }
            memset(got, SENTINEL, r.bytes);
            rc = tuna_neighbor_alltoallv_c(sbuf, lc, ld, s.type, got, lc + s.n, ld + s.n, r.type,
                                           c, &opt);
            cases++;
            if (rc != MPI_SUCCESS)
                fail(tuna_error_string(rc), topo_name[t], kind_name[kind], rows[a]);
            else if (memcmp(got, ref, r.bytes))
                fail("blocking _c: received bytes differ", topo_name[t], kind_name[kind],
                     rows[a]);
            if (nb_all == MPI_SUCCESS) {
                tuna_request q;
                memset(got, SENTINEL, r.bytes);
                rc = tuna_ineighbor_alltoallv_c(sbuf, lc, ld, s.type, got, lc + s.n, ld + s.n,
                                                r.type, c, &opt, &q);
                if (rc == MPI_SUCCESS)
                    rc = tuna_request_wait(&q);
                cases++;
                if (rc != MPI_SUCCESS)
                    fail(tuna_error_string(rc), topo_name[t], kind_name[kind], rows[a]);
                else if (memcmp(got, ref_nb, r.bytes) && memcmp(got, ref, r.bytes))
                    /* where the library's nonblocking call orders a repeated Cartesian
                     * neighbor differently, tuna's linear by direction gives the blocking
                     * call's (MPI 4.1's) result */
                    fail("nonblocking _c: received bytes differ", topo_name[t], kind_name[kind],
                         rows[a]);
            }
            free(lc);
            free(ld);
        }
#endif
        /* nonblocking: two outstanding, completed in reverse order */
        if (nb_all != MPI_SUCCESS)
            goto persistent;
        memset(got, SENTINEL, r.bytes);
        memset(got2, SENTINEL, r.bytes);
        tuna_request q1, q2;
        rc = tuna_ineighbor_alltoallv(sbuf, s.counts, s.displs, s.type, got, r.counts, r.displs,
                                      r.type, c, &opt, &q1);
        int rc2 = tuna_ineighbor_alltoallv(sbuf, s.counts, s.displs, s.type, got2, r.counts,
                                           r.displs, r.type, c, &opt, &q2);
        if (rc2 == MPI_SUCCESS)
            rc2 = tuna_request_wait(&q2);
        if (rc == MPI_SUCCESS)
            rc = tuna_request_wait(&q1);
        cases++;
        if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS)
            fail(tuna_error_string(rc ? rc : rc2), topo_name[t], kind_name[kind], rows[a]);
        else if (memcmp(got, ref_nb, r.bytes) || memcmp(got2, ref_nb, r.bytes))
            fail("nonblocking: received bytes differ", topo_name[t], kind_name[kind], rows[a]);
    persistent:;
        /* persistent: three starts, the send buffer rewritten before each; auto both by its
         * estimate and by measuring (the measure must not write the receive buffer) */
        for (int measure = 0; measure <= (strcmp(rows[a], "auto") == 0); measure++) {
        tuna_plan plan;
        memset(got, SENTINEL, r.bytes);
        rc = tuna_neighbor_alltoallv_init(sbuf, s.counts, s.displs, s.type, got, r.counts,
                                          r.displs, r.type, c, &opt,
                                          measure ? TUNA_PLAN_MEASURE : TUNA_PLAN_ESTIMATE,
                                          &plan);
        if (rc != MPI_SUCCESS) {
            fail(tuna_error_string(rc), topo_name[t], kind_name[kind], rows[a]);
            continue;
        }
        for (size_t q = 0; q < r.bytes; q++)
            if (got[q] != SENTINEL) {
                fail("init wrote the receive buffer", topo_name[t], kind_name[kind], rows[a]);
                break;
            }
        for (int start = 1; start <= 3; start++) {
            fill_send(sbuf, s.bytes, start);
            memset(ref, SENTINEL, r.bytes);
            PMPI_Neighbor_alltoallv(sbuf, s.counts, s.displs, s.type, ref, r.counts, r.displs,
                                    r.type, c);
            memset(got, SENTINEL, r.bytes);
            rc = tuna_start(plan);
            if (rc == MPI_SUCCESS)
                rc = tuna_wait(plan);
            cases++;
            if (rc != MPI_SUCCESS)
                fail(tuna_error_string(rc), topo_name[t], kind_name[kind], rows[a]);
            else if (memcmp(got, ref, r.bytes))
                fail("persistent: received bytes differ", topo_name[t], kind_name[kind],
                     rows[a]);
        }
        tuna_plan_free(&plan);
        }
        fill_send(sbuf, s.bytes, 0);
        memset(ref, SENTINEL, r.bytes);
        PMPI_Neighbor_alltoallv(sbuf, s.counts, s.displs, s.type, ref, r.counts, r.displs,
                                r.type, c);
    }
done:
    free(sbuf);
    free(copy);
    free(ref);
    free(ref_nb);
    free(got);
    free(got2);
    side_free(&s);
    side_free(&r);
    free(in);
    free(out);
}

/* This rank's errors: an error code, nothing written. */
static void errors(MPI_Comm c)
{
    int indeg, outdeg, *in, *out;
    degrees(c, &indeg, &outdeg, &in, &out);
    int *sc = calloc(outdeg + 1, sizeof *sc), *sd = calloc(outdeg + 1, sizeof *sd),
        *rc = calloc(indeg + 1, sizeof *rc), *rd = calloc(indeg + 1, sizeof *rd);
    int sb[4] = {0}, rb[4];
    memset(rb, SENTINEL, sizeof rb);
    tuna_options opt;
    tuna_options_parse("linear", TUNA_NEIGHBOR_ALLTOALLV, &opt);
#ifdef TUNA_TEST_PRELOAD
    /* the drop-in raises errors on the communicator: returned, not fatal */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
#endif
    struct {
        const char *what;
        int code;
    } res[4];
    int n = 0;
    if (outdeg > 0) {
        sc[0] = -1;
        res[n].what = "negative count";
        res[n++].code = tuna_neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c, &opt);
        sc[0] = 0;
    }
    res[n].what = "MPI_DATATYPE_NULL";
    res[n++].code =
        tuna_neighbor_alltoallv(sb, sc, sd, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INT, c, &opt);
    res[n].what = "MPI_IN_PLACE";
    res[n++].code = tuna_neighbor_alltoallv(MPI_IN_PLACE, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c,
                                            &opt);
    res[n].what = "no topology";
    res[n++].code = tuna_neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT,
                                            MPI_COMM_SELF, &opt);
    for (int i = 0; i < n; i++) {
        cases++;
        if (res[i].code == MPI_SUCCESS)
            fail(res[i].what, "errors", "int", "linear");
    }
    for (size_t i = 0; i < sizeof rb; i++)
        if (((unsigned char *)rb)[i] != SENTINEL)
            fail("an erroneous call wrote", "errors", "int", "linear");
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(in);
    free(out);
}

#ifndef TUNA_TEST_PRELOAD
/* A message larger than its receive (MPI_ERR_TRUNCATE): on a graph where every rank sends to
 * itself and to the next rank, the last rank's own block, then its block to the next rank, is
 * one int too long. Every tuna row must return an error on the receiving rank (node-aware:
 * on some rank, the leader that carried the block where it was aggregated), hang nowhere,
 * and write nothing past the receive blocks; blocking, nonblocking and a plan (its init or
 * its start). */
static void truncation(void)
{
    MPI_Comm g;
    int dst[2] = {me, (me + 1) % P}, src[2] = {me, (me + P - 1) % P}, w[2] = {1, 1};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, w, 2, dst, w, MPI_INFO_NULL, 0, &g);
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    int sb[4] = {1, 2, 3, 4}, sd[2] = {0, 2}, rd[2] = {0, 1}, rcnt[2] = {1, 1}, rb[2 + 8];
    /* Does the library report a message to oneself larger than its receive? (Open MPI 4.1.4
     * truncates it silently.) Where it does not, the rows whose own block is such a message
     * (linear, node-aware) cannot either: only the tuna rows, which copy it, must. */
    MPI_Request sq[2];
    MPI_Irecv(rb, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &sq[0]);
    MPI_Isend(sb, 2, MPI_INT, 0, 7, MPI_COMM_SELF, &sq[1]);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    const bool lib_self = MPI_Waitall(2, sq, MPI_STATUSES_IGNORE) != MPI_SUCCESS;
    for (int which = 0; which < 2; which++) {
        /* only the last rank sends the long block: its peers run the exchange as usual */
        const int bad = P - 1, receiver = which == 0 ? bad : (bad + 1) % P;
        int sc[2] = {which == 0 && me == bad ? 2 : 1, which == 1 && me == bad ? 2 : 1};
        for (int a = 1; a < NROWS; a++) { /* tuna's rows: not vendor, not auto */
            if (!strcmp(rows[a], "auto"))
                continue;
            tuna_options opt;
            tuna_options_parse(rows[a], TUNA_NEIGHBOR_ALLTOALLV, &opt);
            for (int form = 0; form < 3; form++) {
                memset(rb, SENTINEL, sizeof rb);
                int rc;
                if (form == 0) {
                    rc = tuna_neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rcnt, rd, MPI_INT, g,
                                                 &opt);
                } else if (form == 1) {
                    tuna_request q;
                    rc = tuna_ineighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rcnt, rd, MPI_INT, g,
                                                  &opt, &q);
                    if (rc == MPI_SUCCESS)
                        rc = tuna_request_wait(&q);
                } else {
                    tuna_plan plan;
                    rc = tuna_neighbor_alltoallv_init(sb, sc, sd, MPI_INT, rb, rcnt, rd, MPI_INT,
                                                      g, &opt, TUNA_PLAN_ESTIMATE, &plan);
                    if (rc == MPI_SUCCESS) {
                        rc = tuna_start(plan);
                        if (rc == MPI_SUCCESS)
                            rc = tuna_wait(plan);
                        tuna_plan_free(&plan);
                    }
                }
                cases++;
                const char *what = which == 0 ? "own block too long" : "block too long";
                /* node-aware: the rank that sees the long block may be the leader that
                 * carried it, not its receiver: some rank must report it */
                const bool seen = (which == 1 && P > 1) || lib_self || !strncmp(rows[a], "tuna", 4);
                const bool aggregating = !strncmp(rows[a], "node-aware", 10);
                int failed = rc != MPI_SUCCESS, any_failed = 0;
                MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                const bool must = aggregating ? seen && me == receiver && !any_failed
                                              : seen && me == receiver;
                if (rc == MPI_SUCCESS && must)
                    fail(form == 0 ? "truncation not reported (blocking)"
                                   : form == 1 ? "truncation not reported (nonblocking)"
                                               : "truncation not reported (plan)",
                         "truncation", what, rows[a]);
                for (size_t i = 2 * sizeof(int); i < sizeof rb; i++)
                    if (((unsigned char *)rb)[i] != SENTINEL) {
                        fail("wrote past the receive blocks", "truncation", what, rows[a]);
                        break;
                    }
            }
        }
    }
    MPI_Comm_free(&g);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    /* the library's failing nonblocking calls report on MPI_COMM_WORLD (Open MPI) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype vec0, vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec0);
    MPI_Type_create_resized(vec0, 0, 12, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_free(&vec0);
    MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &spread);
    MPI_Type_commit(&spread);
    if (argc > 1 && read_halo(argv[1]) != 0) {
        fprintf(stderr, "test_neighbor: cannot read the matrix %s\n", argv[1]);
        failures++;
    }
    for (int t = 0; t < T_COUNT; t++) {
        if (t == T_SPMV && !halo)
            continue;
        MPI_Comm c = make_topo(t, 4242u + (unsigned)P);
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        for (int kind = 0; kind < K_COUNT; kind++)
            run_case(c, t, kind, vec);
#ifdef TUNA_TEST_PRELOAD
        /* the errors are tuna's where a tuna row runs (auto and vendor: the library's) */
        const char *row = getenv("TUNA_NEIGHBOR_ALLTOALLV");
        const bool tuna_row = row && *row && strcmp(row, "auto") && strcmp(row, "vendor");
#else
        const bool tuna_row = true;
#endif
        if (t == T_CART && tuna_row)
            errors(c);
        MPI_Comm_free(&c);
    }
#ifndef TUNA_TEST_PRELOAD
    truncation();
#endif
    MPI_Type_free(&vec);
    MPI_Type_free(&spread);
    free(halo);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_neighbor: P = %d, %ld cases on rank 0, %d failures\n", P, cases, total);
    MPI_Finalize();
    return failures ? 1 : 0;
}
