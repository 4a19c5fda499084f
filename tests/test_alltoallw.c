/*
 * tuna_alltoallw against an independent reference: for every alltoallv row (at its defaults)
 * and a set of layouts, the whole sentinel-filled receive region (blocks, holes of the types,
 * guard bytes) must be byte-identical to what each sender's block, packed with MPI_Pack from
 * its arguments (recomputed on the receiver) and unpacked with MPI_Unpack, gives; the send
 * buffer unchanged. PMPI_Alltoallw runs on the same inputs and is compared too, but a
 * difference of the library's is printed as a note, not counted: Open MPI 4.1.4's at P = 1
 * reads byte displacements as extents. Layouts (n(i,j): the ints rank i sends to rank j, zero for some pairs):
 *   one-int      every block MPI_INT at extent-multiple displacements (the no-copy way);
 *   odd-disp     MPI_INT, one byte of padding between blocks (the packed way, one type);
 *   mixed        per pair one of MPI_INT, a strided vector of ints, pairs of ints, a resized
 *                struct of int + hole, chosen independently on the sending and the receiving
 *                side (signatures match, types differ), and doubles for some pairs;
 *   ranks-differ even ranks one-int, odd ranks mixed (each rank decides its way alone);
 *   inplace      MPI_IN_PLACE, symmetric n, the mixed types (packed) and one-int (no copy).
 * Each case runs blocking (tuna_alltoallw) and nonblocking (tuna_ialltoallw, tested once,
 * then waited for); and persistent (tuna_alltoallw_init): two requests of different layouts
 * outstanding at once, each started three times with its send buffer rewritten between
 * starts and its receive buffer sentinel-filled, the caller's derived types freed after init.
 * Then this rank's argument errors (negative count, MPI_DATATYPE_NULL, options of another
 * collective) must come back as errors with nothing written. Exit code = failure count.
 *
 * Built with TUNA_TEST_PRELOAD it is a client of the drop-in (tests/preload): no tuna header,
 * MPI_Alltoallw (which the drop-in takes) instead of tuna_alltoallw, the default choice only;
 * MPI_Alltoallw_init (or Open MPI's MPIX_Alltoallw_init) where the library has it.
 *
 * Usage: test_alltoallw [--rows a,b,...]   (default: every alltoallv row)
 */
#ifdef TUNA_TEST_PRELOAD
#include <mpi.h>
typedef int tuna_options; /* unused: the drop-in's choice is the environment's */
#define tuna_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm, opt)                             \
    ((void)(opt), MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm))
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0xA5
#define GUARD 64

static int P, me, failures;
static long cases_run;

enum layout { L_ONE_INT, L_ODD_DISP, L_MIXED, L_RANKS_DIFFER, L_INPLACE_MIXED,
              L_INPLACE_ONE, L_COUNT };
static const char *const layout_name[L_COUNT] = {"one-int", "odd-disp", "mixed", "ranks-differ",
                                                 "inplace-mixed", "inplace-one"};

/* Ints from rank i to rank j (symmetric when sym). */
static int nints(int i, int j, int sym, int salt)
{
    if (sym && i > j) {
        int t = i;
        i = j;
        j = t;
    }
    int v = (i * 7 + j * 13 + salt * 5) % 11;
    return v == 3 ? 0 : v * 2; /* even, so "pairs of ints" fits; some zero */
}

/* Element types: every one has a signature of k ints per element (k = ints_per). */
static MPI_Datatype t_vec, t_pair, t_holey, t_dbl2; /* t_dbl2: signature 2 doubles... */

static void make_types(void)
{
    MPI_Type_vector(2, 1, 3, MPI_INT, &t_vec); /* 2 ints, stride 3: holes inside */
    MPI_Type_commit(&t_vec);
    MPI_Type_contiguous(2, MPI_INT, &t_pair);
    MPI_Type_commit(&t_pair);
    /* An int, then a hole of 4 bytes; lb moved by -4 (a resized type). */
    MPI_Datatype s;
    int bl = 1;
    MPI_Aint d = 4;
    MPI_Datatype ty = MPI_INT;
    MPI_Type_create_struct(1, &bl, &d, &ty, &s);
    MPI_Type_create_resized(s, 0, 12, &t_holey);
    MPI_Type_free(&s);
    MPI_Type_commit(&t_holey);
    MPI_Type_contiguous(1, MPI_DOUBLE, &t_dbl2);
    MPI_Type_commit(&t_dbl2);
}

/* One side's description of the block between rank `me` and `peer`: its type, its count and
 * the bytes it spans. n ints (doubles where dbl); kind picks the type. */
typedef struct blk {
    MPI_Datatype type;
    int count;
    MPI_Aint span;
} blk;

static blk describe(int n, int kind, int dbl)
{
    blk b;
    if (dbl) {
        b.type = (kind & 1) ? t_dbl2 : MPI_DOUBLE;
        b.count = n;
        b.span = (MPI_Aint)n * 8;
        return b;
    }
    switch (kind % 4) {
    case 0: b.type = MPI_INT; b.count = n; b.span = (MPI_Aint)n * 4; break;
    case 1: b.type = t_vec; b.count = n / 2; b.span = (MPI_Aint)(n / 2) * 16; break;
    case 2: b.type = t_pair; b.count = n / 2; b.span = (MPI_Aint)n * 4; break;
    default: b.type = t_holey; b.count = n; b.span = (MPI_Aint)n * 12 + 4; break;
    }
    return b;
}

/* Rank r's arguments for layout L: counts, byte displacements, types of both sides, and the
 * bytes its send and receive buffers span. */
typedef struct args {
    int *sc, *sd, *rc, *rd;
    MPI_Datatype *st, *rt;
    size_t sbytes, rbytes;
} args;

static void args_of(int r, enum layout L, int salt, args *a)
{
    const int inplace = L == L_INPLACE_MIXED || L == L_INPLACE_ONE;
    const int mixed_r = L == L_MIXED || L == L_INPLACE_MIXED || (L == L_RANKS_DIFFER && r % 2);
    const int dbl_layout = L == L_MIXED || L == L_INPLACE_MIXED;
    MPI_Aint soff = 0, roff = 0;
    for (int j = 0; j < P; j++) {
        /* Doubles for some pairs (the same pairs on both sides). */
        const int dbl_s = dbl_layout && (r + j + salt) % 5 == 1;
        const int dbl_r = dbl_layout && (j + r + salt) % 5 == 1;
        const int ns = nints(r, j, inplace, salt), nr = nints(j, r, inplace, salt);
        blk bs = describe(ns, mixed_r ? (r * 3 + j + salt) : 0, dbl_s);
        blk br = describe(nr, mixed_r ? (r + j * 5 + salt + 1) : 0, dbl_r);
        if (inplace)
            bs = br; /* ignored by MPI_IN_PLACE; defined all the same */
        if (L == L_ODD_DISP) {
            soff += 1;
            roff += 1;
        } else if (!mixed_r) { /* one type: displacements multiples of its extent */
            soff = (soff + 7) / 8 * 8;
            roff = (roff + 7) / 8 * 8;
        }
        a->sc[j] = bs.count;
        a->st[j] = bs.type;
        a->rc[j] = br.count;
        a->rt[j] = br.type;
        a->sd[j] = (int)soff;
        a->rd[j] = (int)roff;
        soff += bs.span + (j % 3 == 1 ? 8 : 0);
        roff += br.span + (j % 2 == 1 ? 8 : 0);
    }
    a->sbytes = (size_t)soff + GUARD;
    a->rbytes = (size_t)roff + GUARD;
}

static void args_alloc(args *a)
{
    a->sc = malloc(sizeof(int) * (size_t)P * 4);
    a->sd = a->sc + P;
    a->rc = a->sc + 2 * P;
    a->rd = a->sc + 3 * P;
    a->st = malloc(sizeof(MPI_Datatype) * (size_t)P * 2);
    a->rt = a->st + P;
}

static void args_free(args *a)
{
    free(a->sc);
    free(a->st);
}

/* Rank r's send buffer (and, in place, its receive buffer before the call). */
static int gen; /* persistent starts: the send buffer's contents differ per start */

static void fill(unsigned char *buf, size_t n, int r, int salt, int which)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(r * 31 + (int)i * 7 + salt * 3 + which * 101 + (int)(i >> 9) +
                                 gen * 57);
}

/* The independent reference: what rank `me` must hold after the call, built from every
 * sender's arguments and buffer (recomputed here) with MPI_Pack / MPI_Unpack alone. */
static void reference(enum layout L, int salt, const args *mine, unsigned char *ref)
{
    const int inplace = L == L_INPLACE_MIXED || L == L_INPLACE_ONE;
    memset(ref, SENTINEL, mine->rbytes);
    if (inplace)
        fill(ref, mine->rbytes, me, salt, 1);
    args o;
    args_alloc(&o);
    for (int i = 0; i < P; i++) {
        args_of(i, L, salt, &o);
        const size_t n = inplace ? o.rbytes : o.sbytes;
        unsigned char *sb = malloc(n);
        fill(sb, n, i, salt, inplace);
        const int cnt = inplace ? o.rc[me] : o.sc[me];
        const MPI_Datatype t = inplace ? o.rt[me] : o.st[me];
        const int d = inplace ? o.rd[me] : o.sd[me];
        int psize = 0, pos = 0;
        MPI_Pack_size(cnt, t, MPI_COMM_WORLD, &psize);
        char *packed = malloc((size_t)psize + 1);
        MPI_Pack(sb + d, cnt, t, packed, psize, &pos, MPI_COMM_WORLD);
        int upos = 0;
        MPI_Unpack(packed, pos, &upos, ref + mine->rd[i], mine->rc[i], mine->rt[i],
                   MPI_COMM_WORLD);
        free(packed);
        free(sb);
    }
    args_free(&o);
}

static void report(const char *who, const char *optname, enum layout L, int salt,
                   const unsigned char *want, const unsigned char *got, size_t n)
{
    size_t i = 0;
    while (want[i] == got[i])
        i++;
    fprintf(stderr, "%s rank %d P=%d %s %s salt %d: byte %zu of %zu differs (want %02x, got "
            "%02x)\n", who, me, P, optname, layout_name[L], salt, i, n, want[i], got[i]);
}

/* The library's MPI_Alltoallw disagreed with the reference (Open MPI 4.1.4 at P = 1 reads
 * byte displacements as extents): said once per layout, not tuna's failure. */
static int library_wrong[L_COUNT];

#ifdef TUNA_TEST_PRELOAD
#define tuna_request MPI_Request
#define TUNA_REQUEST_NULL MPI_REQUEST_NULL
#define tuna_ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm, opt, req)                        \
    ((void)(opt), MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm, req))
#define tuna_request_test(req, flag) MPI_Test(req, flag, MPI_STATUS_IGNORE)
#define tuna_request_wait(req) MPI_Wait(req, MPI_STATUS_IGNORE)
#endif

/* The call in one of its forms: blocking, or started, tested once and waited for. */
static int call_form(int nonblocking, const void *sb, const int *sc, const int *sd,
                     const MPI_Datatype *st, void *rb, const int *rc, const int *rd,
                     const MPI_Datatype *rt, const tuna_options *opt)
{
    if (!nonblocking)
        return tuna_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD, opt);
    tuna_request req = TUNA_REQUEST_NULL;
    int e = tuna_ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD, opt, &req);
    if (e != MPI_SUCCESS)
        return e;
    int flag = 0;
    e = tuna_request_test(&req, &flag);
    if (e == MPI_SUCCESS && !flag)
        e = tuna_request_wait(&req);
    return e;
}

static int nonblocking_form; /* the form of the cases run now */

#ifdef TUNA_TEST_PRELOAD
/* ALLTOALLW_INIT: MPI_ or MPIX_Alltoallw_init, where the library has it */
#include "tuna_mpi_features.h"
#ifdef ALLTOALLW_INIT
#define HAVE_PERSISTENT 1
typedef MPI_Request plan_t;
#define plan_init(sb, sc, sd, st, rb, rc, rd, rt, opt, p)                                      \
    ((void)(opt), ALLTOALLW_INIT(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD, MPI_INFO_NULL, p))
#define plan_start(p) MPI_Start(p)
#define plan_wait(p) MPI_Wait(p, MPI_STATUS_IGNORE)
#define plan_free(p) MPI_Request_free(p)
#endif
#else
#define HAVE_PERSISTENT 1
typedef tuna_plan plan_t;
#define plan_init(sb, sc, sd, st, rb, rc, rd, rt, opt, p)                                      \
    tuna_alltoallw_init(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD, opt, TUNA_PLAN_ESTIMATE, p)
#define plan_start(p) tuna_start(*(p))
#define plan_wait(p) tuna_wait(*(p))
#define plan_free(p) tuna_plan_free(p)
#endif

#ifdef HAVE_PERSISTENT
/* One persistent request's buffers and arguments (salt picks its layout). */
typedef struct pcase {
    args a;
    int salt;
    unsigned char *sbuf, *rbuf, *ref;
    MPI_Datatype *dups; /* derived types duplicated for the init, freed right after it */
    plan_t plan;
} pcase;

/* The case's derived types duplicated (each distinct one once): MPI lets the caller free them
 * after the init, so the plan must hold its own. */
static void dup_types(pcase *c)
{
    MPI_Datatype *t = c->a.st;
    c->dups = malloc(sizeof *c->dups * (size_t)P * 2);
    for (int j = 0; j < 2 * P; j++) {
        c->dups[j] = MPI_DATATYPE_NULL;
        int ni, na, nd, comb, k = 0;
        MPI_Type_get_envelope(t[j], &ni, &na, &nd, &comb);
        if (comb == MPI_COMBINER_NAMED)
            continue;
        while (k < j && t[k] != t[j])
            k++;
        if (k < j && c->dups[k] != MPI_DATATYPE_NULL) {
            c->dups[j] = c->dups[k];
            continue;
        }
        MPI_Type_dup(t[j], &c->dups[j]);
    }
    for (int j = 0; j < 2 * P; j++)
        if (c->dups[j] != MPI_DATATYPE_NULL)
            t[j] = c->dups[j];
}

static void free_dups(pcase *c)
{
    for (int j = 0; j < 2 * P; j++) {
        if (c->dups[j] == MPI_DATATYPE_NULL)
            continue;
        MPI_Datatype d = c->dups[j];
        for (int k = j; k < 2 * P; k++)
            if (c->dups[k] == d)
                c->dups[k] = MPI_DATATYPE_NULL;
        MPI_Type_free(&d);
    }
    free(c->dups);
}

/* This start's buffers: the send buffer (in place: the receive buffer) rewritten for
 * generation g, the receive buffer sentinel-filled, the reference of g. */
static void pcase_refill(pcase *c, enum layout L, int g)
{
    const int inplace = L == L_INPLACE_MIXED || L == L_INPLACE_ONE;
    gen = g;
    fill(c->sbuf, c->a.sbytes, me, c->salt, 0);
    memset(c->rbuf, SENTINEL, c->a.rbytes);
    if (inplace)
        fill(c->rbuf, c->a.rbytes, me, c->salt, 1);
    reference(L, c->salt, &c->a, c->ref);
    gen = 0;
}

static int pcase_check(pcase *c, const char *optname, enum layout L, int g, int e)
{
    /* vendor is the library's MPI_Alltoallw: excused where the library's own blocking call
     * was wrong on this layout (library_wrong, noted by run_case). */
    const int lenient = !strcmp(optname, "vendor") && library_wrong[L];
    if (e != MPI_SUCCESS && !lenient) {
        fprintf(stderr, "FAIL rank %d P=%d %s %s salt %d persistent start %d: rc %d (%s)\n",
                me, P, optname, layout_name[L], c->salt, g, e, tuna_error_string(e));
        return 1;
    }
    if (e == MPI_SUCCESS && memcmp(c->ref, c->rbuf, c->a.rbytes) && !lenient) {
        report("FAIL (persistent)", optname, L, c->salt, c->ref, c->rbuf, c->a.rbytes);
        return 1;
    }
    return 0;
}

/* The persistent form: two requests outstanding at once (two layouts: salt and salt + 1),
 * each started three times with its send buffer rewritten in between, against the
 * reference of each start's contents; derived types freed by the caller after the init. */
static void run_persistent(const tuna_options *opt, const char *optname, enum layout L, int salt)
{
    const int inplace = L == L_INPLACE_MIXED || L == L_INPLACE_ONE;
    pcase c[2];
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        args_alloc(&c[k].a);
        c[k].salt = salt + k;
        args_of(me, L, c[k].salt, &c[k].a);
        c[k].sbuf = malloc(c[k].a.sbytes);
        c[k].rbuf = malloc(c[k].a.rbytes);
        c[k].ref = malloc(c[k].a.rbytes);
        dup_types(&c[k]);
        int e = plan_init(inplace ? MPI_IN_PLACE : c[k].sbuf, c[k].a.sc, c[k].a.sd, c[k].a.st,
                          c[k].rbuf, c[k].a.rc, c[k].a.rd, c[k].a.rt, opt, &c[k].plan);
        free_dups(&c[k]);
        args_of(me, L, c[k].salt, &c[k].a); /* the freed handles gone from the arrays too */
        if (e != MPI_SUCCESS) {
            fprintf(stderr, "FAIL rank %d P=%d %s %s persistent init: rc %d (%s)\n", me, P,
                    optname, layout_name[L], e, tuna_error_string(e));
            failures++;
            /* init errors are agreed: every rank is here; drop what was made */
            for (int i = 0; i <= k; i++) {
                free(c[i].sbuf);
                free(c[i].rbuf);
                free(c[i].ref);
                args_free(&c[i].a);
            }
            if (k == 1)
                plan_free(&c[0].plan);
            return;
        }
    }
    for (int g = 1; g <= 3; g++) {
        int e[2];
        for (int k = 0; k < 2; k++)
            pcase_refill(&c[k], L, g * 2 + k);
        for (int k = 0; k < 2; k++)
            e[k] = plan_start(&c[k].plan);
        for (int k = 1; k >= 0; k--) /* completed in the other order */
            if (e[k] == MPI_SUCCESS)
                e[k] = plan_wait(&c[k].plan);
        for (int k = 0; k < 2; k++)
            bad |= pcase_check(&c[k], optname, L, g, e[k]);
        cases_run++;
    }
    for (int k = 0; k < 2; k++) {
        int e = plan_free(&c[k].plan);
        if (e != MPI_SUCCESS) {
            fprintf(stderr, "FAIL rank %d: persistent free: rc %d\n", me, e);
            bad = 1;
        }
        free(c[k].sbuf);
        free(c[k].rbuf);
        free(c[k].ref);
        args_free(&c[k].a);
    }
    failures += bad;
}
#endif

static int run_case(const tuna_options *opt, const char *optname, enum layout L, int salt)
{
    const int inplace = L == L_INPLACE_MIXED || L == L_INPLACE_ONE;
    args a;
    args_alloc(&a);
    args_of(me, L, salt, &a);
    unsigned char *sbuf = malloc(a.sbytes), *scopy = malloc(a.sbytes);
    unsigned char *ref = malloc(a.rbytes), *r1 = malloc(a.rbytes), *r2 = malloc(a.rbytes);
    fill(sbuf, a.sbytes, me, salt, 0);
    memcpy(scopy, sbuf, a.sbytes);
    memset(r1, SENTINEL, a.rbytes);
    memset(r2, SENTINEL, a.rbytes);
    if (inplace) {
        fill(r1, a.rbytes, me, salt, 1);
        fill(r2, a.rbytes, me, salt, 1);
    }
    reference(L, salt, &a, ref);
    if (getenv("TEST_VERBOSE"))
        fprintf(stderr, "rank %d: %s %s salt %d\n", me, optname, layout_name[L], salt);
    int e1 = PMPI_Alltoallw(inplace ? MPI_IN_PLACE : sbuf, a.sc, a.sd, a.st, r1, a.rc, a.rd,
                            a.rt, MPI_COMM_WORLD);
    int e2 = call_form(nonblocking_form, inplace ? MPI_IN_PLACE : sbuf, a.sc, a.sd, a.st, r2,
                       a.rc, a.rd, a.rt, opt);
    cases_run++;
    /* vendor is the library's own call (MPI_Alltoallw, MPI_Ialltoallw): held to the
     * reference, or to the library's blocking call's bytes where the library's are wrong. */
    const unsigned char *want =
        strcmp(optname, "vendor") || !memcmp(ref, r2, a.rbytes) ? ref : r1;
    int bad = 0;
    /* (Every rank of a vendor nonblocking case agrees whether to run the library's call
     * again: the call is collective.) */
    int vendor_failed = e2 != MPI_SUCCESS;
    if (!strcmp(optname, "vendor") && nonblocking_form)
        MPI_Allreduce(MPI_IN_PLACE, &vendor_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (vendor_failed && !strcmp(optname, "vendor") && nonblocking_form) {
        /* vendor is the library's MPI_Ialltoallw: where the library's own fails on these
         * arguments on some rank (MPICH 4.0.2 in place with derived types), so may vendor,
         * and the other ranks' bytes are not sure either. */
        MPI_Request q;
        unsigned char *r3 = malloc(a.rbytes);
        if (inplace)
            fill(r3, a.rbytes, me, salt, 1);
        int e3 = PMPI_Ialltoallw(inplace ? MPI_IN_PLACE : sbuf, a.sc, a.sd, a.st, r3, a.rc,
                                 a.rd, a.rt, MPI_COMM_WORLD, &q);
        if (e3 == MPI_SUCCESS)
            e3 = PMPI_Wait(&q, MPI_STATUS_IGNORE);
        free(r3);
        int lib_failed = e3 != MPI_SUCCESS; /* on any rank: then no rank's bytes are sure */
        MPI_Allreduce(MPI_IN_PLACE, &lib_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (lib_failed) {
            if (!library_wrong[L]++)
                fprintf(stderr, "note rank %d P=%d %s: the library's MPI_Ialltoallw failed "
                        "(%d)\n", me, P, layout_name[L], e3);
            e2 = MPI_SUCCESS;
            memcpy(r2, ref, a.rbytes); /* nothing to compare */
        }
    }
    if (e2 != MPI_SUCCESS) {
        fprintf(stderr, "FAIL rank %d P=%d %s %s salt %d%s: rc %d (%s)\n", me, P, optname,
                layout_name[L], salt, nonblocking_form ? " nonblocking" : "", e2,
                tuna_error_string(e2));
        bad = 1;
    } else if (memcmp(want, r2, a.rbytes)) {
        report(nonblocking_form ? "FAIL (nonblocking)" : "FAIL", optname, L, salt, want, r2,
               a.rbytes);
        bad = 1;
    } else if (memcmp(sbuf, scopy, a.sbytes)) {
        fprintf(stderr, "FAIL rank %d P=%d %s %s: send buffer changed\n", me, P, optname,
                layout_name[L]);
        bad = 1;
    }
    if ((e1 != MPI_SUCCESS || memcmp(ref, r1, a.rbytes)) && !library_wrong[L]++) {
        if (e1 != MPI_SUCCESS)
            fprintf(stderr, "note rank %d P=%d %s: the library's MPI_Alltoallw failed (%d)\n",
                    me, P, layout_name[L], e1);
        else
            report("note: the library's MPI_Alltoallw", "-", L, salt, ref, r1, a.rbytes);
    }
    failures += bad;
    free(r2);
    free(r1);
    free(ref);
    free(scopy);
    free(sbuf);
    args_free(&a);
    return bad;
}

#ifndef TUNA_TEST_PRELOAD
/* tuna_alltoallw_init on an intercommunicator (the two halves of the world, P >= 2): vendor
 * makes a plan of the library's MPI_Alltoallw over the remote group (arrays of its size), its
 * starts send the send buffer's current contents; another row is MPI_ERR_COMM on every rank. */
static void intercomm_plan(void)
{
    if (P < 2)
        return;
    MPI_Comm half, inter;
    const int low = me < P / 2;
    MPI_Comm_split(MPI_COMM_WORLD, low, me, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? P / 2 : 0, 7, &inter);
    int lme, rsize;
    MPI_Comm_rank(half, &lme);
    MPI_Comm_remote_size(inter, &rsize);
    int *a = calloc((size_t)rsize * 4, sizeof(int)), *sb = malloc(sizeof(int) * 2 * rsize),
        *rb = malloc(sizeof(int) * (2 * (size_t)rsize + 1));
    MPI_Datatype *t = malloc(sizeof *t * (size_t)rsize);
    for (int j = 0; j < rsize; j++) {
        a[j] = a[2 * rsize + j] = 2;                     /* two ints each way */
        a[rsize + j] = a[3 * rsize + j] = 8 * j;         /* byte displacements */
        t[j] = MPI_INT;
    }
    tuna_options vendor, pairwise;
    tuna_options_parse("vendor", TUNA_ALLTOALLV, &vendor);
    tuna_options_parse("pairwise", TUNA_ALLTOALLV, &pairwise);
    tuna_plan pl = NULL;
    int rc = tuna_alltoallw_init(sb, a, a + rsize, t, rb, a + 2 * rsize, a + 3 * rsize, t, inter,
                                 &pairwise, TUNA_PLAN_ESTIMATE, &pl);
    if (rc != MPI_ERR_COMM || pl) {
        fprintf(stderr, "FAIL rank %d: pairwise on an intercommunicator: rc %d\n", me, rc);
        failures++;
    }
    rc = tuna_alltoallw_init(sb, a, a + rsize, t, rb, a + 2 * rsize, a + 3 * rsize, t, inter,
                             &vendor, TUNA_PLAN_ESTIMATE, &pl);
    for (int g = 0; rc == MPI_SUCCESS && g < 2; g++) {
        for (int j = 0; j < rsize; j++) {
            sb[2 * j] = 100 * lme + j;
            sb[2 * j + 1] = g * 1000 + low;
        }
        for (int i = 0; i <= 2 * rsize; i++)
            rb[i] = -7;
        rc = tuna_start(pl);
        if (rc == MPI_SUCCESS)
            rc = tuna_wait(pl);
        for (int j = 0; rc == MPI_SUCCESS && j < rsize; j++)
            if (rb[2 * j] != 100 * j + lme || rb[2 * j + 1] != g * 1000 + !low)
                rc = MPI_ERR_OTHER;
        if (rc == MPI_SUCCESS && rb[2 * rsize] != -7)
            rc = MPI_ERR_OTHER;
    }
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL rank %d: vendor plan on an intercommunicator: rc %d\n", me, rc);
        failures++;
    }
    if (pl)
        tuna_plan_free(&pl);
    free(t);
    free(rb);
    free(sb);
    free(a);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}
#endif

/* This rank's argument errors: an error back, the receive buffer untouched. Run by every
 * rank at once with a bad argument on every rank (so no peer waits). */
static void errors(void)
{
    int *a = calloc((size_t)P * 4, sizeof(int));
    MPI_Datatype *t = malloc(sizeof *t * (size_t)P);
    for (int j = 0; j < P; j++)
        t[j] = MPI_INT;
    int buf[4] = {1, 2, 3, 4}, out[4];
    memset(out, SENTINEL, sizeof out);
    a[0] = -1; /* negative send count */
    int rc = tuna_alltoallw(buf, a, a + P, t, out, a + 2 * P, a + 3 * P, t, MPI_COMM_WORLD,
                            NULL);
    unsigned char s[sizeof out];
    memset(s, SENTINEL, sizeof s);
    if (rc == MPI_SUCCESS || memcmp(out, s, sizeof out)) {
        fprintf(stderr, "FAIL rank %d: negative count not reported (rc %d)\n", me, rc);
        failures++;
    }
    a[0] = 0;
    t[0] = MPI_DATATYPE_NULL;
    rc = tuna_alltoallw(buf, a, a + P, t, out, a + 2 * P, a + 3 * P, t, MPI_COMM_WORLD, NULL);
    if (rc == MPI_SUCCESS) {
        fprintf(stderr, "FAIL rank %d: MPI_DATATYPE_NULL not reported\n", me);
        failures++;
    }
#ifdef HAVE_PERSISTENT
    /* persistent: a negative count on every rank, an error at init and no request */
    a[0] = -1;
    t[0] = MPI_INT;
    plan_t pl;
    memset(&pl, 0, sizeof pl);
    rc = plan_init(buf, a, a + P, t, out, a + 2 * P, a + 3 * P, t, (const tuna_options *)NULL,
                   &pl);
    if (rc == MPI_SUCCESS) {
        fprintf(stderr, "FAIL rank %d: persistent init took a negative count\n", me);
        failures++;
        plan_free(&pl);
    }
    a[0] = 0;
#endif
#ifndef TUNA_TEST_PRELOAD
    t[0] = MPI_INT;
    tuna_options o;
    tuna_options_parse("ring", TUNA_ALLGATHER, &o);
    rc = tuna_alltoallw(buf, a, a + P, t, out, a + 2 * P, a + 3 * P, t, MPI_COMM_WORLD, &o);
    if (rc == MPI_SUCCESS) {
        fprintf(stderr, "FAIL rank %d: allgather's options not refused\n", me);
        failures++;
    }
    /* The init's errors are agreed: one rank's NULL plan pointer, bad flags, another
     * collective's options: every rank returns an error and no plan. */
    for (int k = 0; k < 3; k++) {
        tuna_plan pl = (tuna_plan)&pl; /* not NULL: the init must set it */
        rc = tuna_alltoallw_init(buf, a, a + P, t, out, a + 2 * P, a + 3 * P, t, MPI_COMM_WORLD,
                                 k == 2 ? &o : NULL, k == 1 ? 7u : TUNA_PLAN_ESTIMATE,
                                 k == 0 && me == 0 ? NULL : &pl);
        if (rc == MPI_SUCCESS || (!(k == 0 && me == 0) && pl != NULL)) {
            fprintf(stderr, "FAIL rank %d: persistent init error %d not agreed (rc %d)\n", me,
                    k, rc);
            failures++;
        }
    }
#endif
    free(t);
    free(a);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    make_types();
#ifndef TUNA_TEST_PRELOAD
    const char *rows = argc > 2 && !strcmp(argv[1], "--rows") ? argv[2] : NULL;
    const int n = tuna_algorithm_count(TUNA_ALLTOALLV);
    for (int a = 0; a < n; a++) {
        const char *name = tuna_algorithm_get(TUNA_ALLTOALLV, a)->name;
        if (rows) {
            char list[512];
            snprintf(list, sizeof list, ",%s,", rows);
            char key[64];
            snprintf(key, sizeof key, ",%s,", name);
            if (!strstr(list, key))
                continue;
        }
        /* multipair-testany polls: slow when oversubscribed, the same bytes as multipair. */
        if (!rows && !strcmp(name, "multipair-testany"))
            continue;
        tuna_options o;
        if (tuna_options_parse(name, TUNA_ALLTOALLV, &o) != MPI_SUCCESS)
            continue;
        for (nonblocking_form = 0; nonblocking_form < 2; nonblocking_form++)
            for (int L = 0; L < L_COUNT; L++)
                for (int salt = 0; salt < 2; salt++)
                    run_case(&o, name, (enum layout)L, salt);
        for (int L = 0; L < L_COUNT; L++)
            run_persistent(&o, name, (enum layout)L, 0);
    }
#endif
    /* opt == NULL: the default (auto unless TUNA_ALLTOALLV says otherwise), repeated calls. */
    for (nonblocking_form = 0; nonblocking_form < 2; nonblocking_form++)
        for (int k = 0; k < 6; k++)
            for (int L = 0; L < L_COUNT; L++)
                run_case((const tuna_options *)NULL, "default", (enum layout)L, k);
    nonblocking_form = 0;
#ifdef HAVE_PERSISTENT
    for (int k = 0; k < 2; k++)
        for (int L = 0; L < L_COUNT; L++)
            run_persistent((const tuna_options *)NULL, "default", (enum layout)L, k);
#endif
    errors();
#ifndef TUNA_TEST_PRELOAD
    intercomm_plan();
#endif
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_alltoallw P=%d: %ld cases per rank, %d failures\n", P, cases_run, total);
    MPI_Type_free(&t_vec);
    MPI_Type_free(&t_pair);
    MPI_Type_free(&t_holey);
    MPI_Type_free(&t_dbl2);
    MPI_Finalize();
    return total ? 1 : 0;
}
