/*
 * tuna_alltoall, tuna_alltoall_c: the uniform all-to-all, blocking. Checks (local, as MPI
 * libraries do; agreed under TUNA_ARGCHECK=collective), auto's choice from the block size
 * (the same on every rank, so no agreement), then the row: the library's own MPI_Alltoall,
 * or a step form on the P blocks described as alltoallv's arguments with a->uniform set
 * (tuna_a2a_prepare), which the nonblocking calls (ialltoall.c) and plans
 * (src/plan/plan_alltoall.c) share. docs/algorithms-alltoall.md.
 */
#include "alltoall.h"
#include "memkind.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* One side's type, count and buffer (side: "send" or "recv", for the messages): *t its type,
 * *bytes its block. Inlined: tuna_alltoall checks on every call. */
static inline __attribute__((always_inline)) int
side_check(const char *fn, const char *side, const void *buf, MPI_Count count, MPI_Datatype type,
           int me, tuna_type_info *t, size_t *bytes)
{
    if (type == MPI_DATATYPE_NULL)
        return tuna_error_set(MPI_ERR_TYPE, "%s: %stype is MPI_DATATYPE_NULL (rank %d)", fn, side,
                              me);
    if (count < 0)
        return tuna_error_set(MPI_ERR_COUNT, "%s: %scount = %lld is negative (rank %d)", fn, side,
                              (long long)count, me);
    int rc = tuna_type_info_get(type, t);
    if (rc)
        return rc;
    *bytes = (size_t)count * t->size;
    /* NULL with data only for a type that addresses absolutely (MPI_BOTTOM). */
    if (*bytes > 0 && !buf && t->true_lb == 0)
        return tuna_error_set(MPI_ERR_BUFFER, "%s: %sbuf is NULL but %scount = %lld (rank %d)",
                              fn, side, side, (long long)count, me);
    return MPI_SUCCESS;
}

int tuna_a2a_check_args(const char *fn, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, const void *recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, int P, int me, size_t *block)
{
    const bool inplace = sendbuf == MPI_IN_PLACE;
    int rc;
    *block = 0;
    if ((rc = tuna_check_recv_inplace(fn, recvbuf, me)))
        return rc;
    tuna_type_info ri, si;
    size_t rbytes = 0, sbytes = 0;
    if ((rc = side_check(fn, "recv", recvbuf, recvcount, recvtype, me, &ri, &rbytes)))
        return rc;
    if (inplace) {
        /* The in-place copy of a non-contiguous type is packed with int counts (tuna_alltoallv's
         * limit): refused here, so that a plan's init agrees on it before preparing. */
        if (!ri.contig && rbytes > (size_t)INT_MAX)
            return tuna_error_set(MPI_ERR_COUNT,
                                  "%s: MPI_IN_PLACE with a non-contiguous recvtype supports "
                                  "blocks up to 2 GiB; recvcount is %zu bytes (rank %d)",
                                  fn, rbytes, me);
        *block = rbytes;
        return MPI_SUCCESS;
    }
    if ((rc = side_check(fn, "send", sendbuf, sendcount, sendtype, me, &si, &sbytes)))
        return rc;
    /* Every block of every rank is the same size (MPI's type-signature rule): the rows that
     * skip the size messages rely on it, so a mismatch is refused here. */
    if (sbytes != rbytes)
        return tuna_error_set(MPI_ERR_TRUNCATE,
                              "%s: rank %d sends %zu bytes but receives %zu bytes per rank (type "
                              "signatures must match)",
                              fn, me, sbytes, rbytes);
    if (sbytes > 0 && (rc = tuna_check_alias(fn, sendbuf, recvbuf, true)))
        return rc;
    /* No byte sent may be a byte received (by extent: the P blocks of each side). */
    const tuna_span out = tuna_span_of(sendbuf, 0, sendcount * P, si.size, si.extent, si.true_lb,
                                       si.true_extent),
                    in = tuna_span_of(recvbuf, 0, recvcount * P, ri.size, ri.extent, ri.true_lb,
                                      ri.true_extent);
    if (sbytes > 0 && (rc = tuna_check_overlap(fn, me, &out, 1, &in, 1)))
        return rc;
    *block = sbytes;
    return MPI_SUCCESS;
}

size_t tuna_a2a_counts_bytes(int P)
{
    return (sizeof(MPI_Count) + sizeof(MPI_Aint)) * 2 * (size_t)(P > 0 ? P : 1);
}

/* The P equal blocks as alltoallv's counts and element displacements in mem: int arrays
 * where every count and displacement fits an int (most calls: the rows' int paths), else
 * the large-count ones. */
static void uniform_counts(void *mem, int P, MPI_Count scount, MPI_Count rcount,
                           tuna_counts *sc, tuna_counts *rcv)
{
    const MPI_Count most = scount > rcount ? scount : rcount;
    if (most <= INT_MAX / (P > 0 ? P : 1)) {
        int *n = mem;
        for (int j = 0; j < P; j++) {
            n[j] = (int)scount;
            n[P + j] = (int)(j * scount);
            n[2 * P + j] = (int)rcount;
            n[3 * P + j] = (int)(j * rcount);
        }
        *sc = (tuna_counts){.n = n, .d = n + P};
        *rcv = (tuna_counts){.n = n + 2 * P, .d = n + 3 * P};
        return;
    }
    MPI_Count *c = mem;
    MPI_Aint *d = (MPI_Aint *)(c + 2 * P);
    for (int j = 0; j < P; j++) {
        c[j] = scount;
        d[j] = (MPI_Aint)j * (MPI_Aint)scount;
        c[P + j] = rcount;
        d[P + j] = (MPI_Aint)j * (MPI_Aint)rcount;
    }
    *sc = (tuna_counts){.nl = c, .dl = d};
    *rcv = (tuna_counts){.nl = c + P, .dl = d + P};
}

int tuna_a2a_prepare(tuna_a2av_args *a, const void *sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, size_t block, void *counts, MPI_Aint *disp,
                     char **copy, int **copy_counts)
{
    const int P = a->size;
    tuna_counts sc, rcv;
    uniform_counts(counts, P, sendbuf == MPI_IN_PLACE ? recvcount : sendcount, recvcount, &sc,
                   &rcv);
    long long v[TUNA_AGREE_N];
    int rc = tuna_a2av_prepare(a, sendbuf, &sc, sendtype, recvbuf, &rcv, recvtype, v, disp,
                               copy, copy_counts);
    if (rc != MPI_SUCCESS)
        return rc;
    /* What an agreement would give, known here: P equal blocks on every rank. */
    a->uniform = true;
    a->max_block_bytes = block;
    a->total_bytes_max = block * (size_t)P;
    a->zero_fraction = block ? 0 : 1;
    a->mean_block_bytes = (double)block;
    a->stats_agreed = true;
    return MPI_SUCCESS;
}

/* The MPI library's own call on the user's arguments; -1 when it has no large-count one
 * (MPI_Alltoall_c is MPI 4, as MPI_Alltoallv_c: the build's check): the vendor row then runs
 * the linear exchange, Open MPI's basic alltoall. */
static int run_vendor(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      bool large)
{
    int rc;
    if (!large) {
        rc = PMPI_Alltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype,
                           comm);
        return tuna_library_result(rc, "PMPI_Alltoall");
    }
#ifdef TUNA_HAVE_MPI_ALLTOALL_C
    rc = PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return tuna_library_result(rc, "PMPI_Alltoall_c");
#else
    (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvbuf, (void)recvcount;
    (void)recvtype, (void)comm, (void)rc;
    return -1;
#endif
}

/* Row `run` with resolved parameters on checked arguments of `block`-byte blocks. */
static int run_row(const tuna_a2av_algorithm *run, const long *param, const void *sendbuf,
                   MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, tuna_ctx *ctx,
                   size_t block, bool large)
{
    if (run->desc.kind == TUNA_ROW_VENDOR) {
        int rc = run_vendor(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            large);
        if (rc >= 0)
            return rc;
        const int linear = tuna_algorithm_find(TUNA_ALLTOALL, "linear");
        run = &tuna_a2a_table[linear];
        tuna_stats_current.algorithm = linear;
        tuna_stats_current.fallback = "the MPI library has no MPI_Alltoall_c";
    }
    const int P = ctx->size;
    tuna_timer tm;
    tuna_timer_start(&tm);
    tuna_a2av_args a = {.ctx = ctx, .tp = &tuna_transport_mpi_host, .scr = &ctx->scr,
                        .rank = ctx->rank, .size = P};
    tuna_params_copy(a.param, param);
    /* Scratch slot 0: the byte displacements (as alltoallv's); 2: the counts. */
    MPI_Aint *disp = tuna_ctx_scratch(ctx, 0, sizeof(MPI_Aint) * 2 * (size_t)P);
    void *counts = disp ? tuna_ctx_scratch(ctx, 2, tuna_a2a_counts_bytes(P)) : NULL;
    if (!counts)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoall: no memory for %d blocks' counts", P);
    char *copy = NULL;
    int *copy_counts = NULL;
    int rc = tuna_a2a_prepare(&a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              block, counts, disp, &copy, &copy_counts);
    tuna_timer_stop(&tm, TUNA_PHASE_PREPARE);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = tuna_a2av_run_row(run, &a);
    free(copy);
    free(copy_counts);
    return rc;
}

/* The library's own call after tuna's aliasing rule (the vendor row); -1: the library has
 * no MPI_Alltoall_c for a large call. */
static int library_call(const char *fn, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, bool large)
{
    int rc = tuna_check_alias(fn, sendbuf, recvbuf, sendcount > 0 && recvcount > 0);
    return rc == MPI_SUCCESS
               ? run_vendor(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            large)
               : rc;
}

/*
 * auto repeating its settled choice of the library's own call (tuna_learn_last_find's, for
 * this block size), on a call with statistics off and local checks: the library's call with
 * its own checks, as the vendor row runs it, after tuna's aliasing rule. The full path would
 * first check and describe the arguments for tuna's rows (P = 2, 16 B, Open MPI: about 650
 * instructions of tuna's per call against the vendor row's 160, 0.63x the library's call).
 * Kept for tuna_repeat_matches (predefined types), so that the next call with the same
 * arguments takes alltoall_entry's shortest path, before even this. `given`: the caller's options (NULL: the
 * defaults). -1: not that case.
 */
static int reuse_library(const char *fn, tuna_ctx *ctx, const tuna_options *given,
                         const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm, bool large)
{
    const struct tuna_auto_last *l = &ctx->auto_last[TUNA_ALLTOALL];
    int tsize, ssize;
    /* Plainly valid, as the full path would find it (a matching send block, no NULL buffer
     * or type, recvbuf not MPI_IN_PLACE): anything else takes the full path, which reports it
     * with tuna's message. The null type is tested first: the library's type calls would
     * report it to MPI_COMM_SELF's handler, fatal by default. */
    if (!l->valid || tuna_a2a_table[l->choice.algorithm].desc.kind != TUNA_ROW_VENDOR ||
        recvcount <= 0 || !recvbuf || recvbuf == MPI_IN_PLACE ||
        recvtype == MPI_DATATYPE_NULL || PMPI_Type_size(recvtype, &tsize) != MPI_SUCCESS ||
        (double)recvcount * tsize != l->bytes)
        return -1;
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (!inplace &&
        (!sendbuf || sendcount <= 0 || sendtype == MPI_DATATYPE_NULL ||
         PMPI_Type_size(sendtype, &ssize) != MPI_SUCCESS ||
         (double)sendcount * ssize != l->bytes))
        return -1;
    const int rc = library_call(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                comm, large);
    if (rc == MPI_SUCCESS)
        tuna_repeat_keep(ctx, TUNA_ALLTOALL, given, sendbuf, sendcount, sendtype, recvcount,
                         recvtype, MPI_OP_NULL);
    return rc;
}

static int alltoall_call(const char *fn, const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                         bool large, double t_entry)
{
    const tuna_options *given = opt;
    int rc = tuna_call_begin(TUNA_ALLTOALL, comm, &opt);
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_a2av_algorithm *alg = &tuna_a2a_table[opt->algorithm];
    /* vendor is the library's own call (its checks, plus tuna's aliasing rule; TUNA_ARGCHECK
     * does not apply to it), on any communicator */
    if (alg->desc.kind == TUNA_ROW_VENDOR &&
        (rc = library_call(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                           large)) >= 0)
        return rc;
    tuna_ctx *ctx;
    bool collective;
    if ((rc = tuna_coll_context(comm, alg->desc.info.name, &ctx, &collective)) != MPI_SUCCESS)
        return rc;
    if (alg->desc.kind == TUNA_ROW_AUTO && !collective && !tuna_stats_on &&
        (rc = reuse_library(fn, ctx, given, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, comm, large)) >= 0)
        return rc;
    size_t block = 0;
    int local_rc = tuna_a2a_check_args(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                       recvtype, ctx->size, ctx->rank, &block);
    if (collective) {
        static const char *const names[] = {"recvcount * type size (bytes)"};
        const long long same[] = {(long long)block};
        local_rc = tuna_coll_agree_args(ctx, tuna_collective_name(TUNA_ALLTOALL), local_rc,
                                        same, names, 1);
    }
    if (local_rc != MPI_SUCCESS)
        return local_rc;
    if (block == 0) /* on every rank (MPI's rule): nothing moves */
        return MPI_SUCCESS;
    long param[TUNA_MAX_PARAMS] = {0};
    const tuna_a2av_algorithm *run = alg;
    tuna_learn_class *learning = NULL;
    if (alg->desc.kind == TUNA_ROW_AUTO) {
        tuna_choice c;
        if ((rc = tuna_select_agree(ctx)) != MPI_SUCCESS ||
            (rc = tuna_a2a_auto_choose(ctx, block, &c, &learning)) != MPI_SUCCESS)
            return rc;
        run = &tuna_a2a_table[c.algorithm];
        tuna_params_copy(param, c.param);
    } else if (alg->desc.kind == TUNA_ROW_ALGORITHM) {
        tuna_params_resolve(&alg->desc.info, opt->value, ctx->size, param);
        if (tuna_stats_on)
            tuna_params_copy(tuna_stats_current.params, param);
    }
    /* A learning sample: what the candidate costs once settled (tuna_learn_sample_start;
     * tuna's work around a row is about 0.1 us at P = 2, which had decided against the
     * library under MPICH). */
    const double t0 =
        learning ? tuna_learn_sample_start(run->desc.kind == TUNA_ROW_VENDOR, t_entry) : 0;
    rc = run_row(run, param, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                 ctx, block, large);
    if (alg->desc.kind == TUNA_ROW_AUTO)
        ctx->learn_timing[TUNA_ALLTOALL] = learning != NULL;
    return learning ? tuna_learn_after(ctx, learning, PMPI_Wtime() - t0, rc) : rc;
}

/*
 * tuna_alltoall and tuna_alltoall_c: first the shortest path of a repeated call
 * (tuna_repeat_matches: the arguments and options of the last call reuse_library ran), the
 * library's call with nothing of tuna's around it but those comparisons (P = 2, 16 B, Open
 * MPI: tuna's own instructions per call about 450 -> 100; run_vendor's -1, no
 * MPI_Alltoall_c, takes the usual path); else the usual path, which checks everything.
 */
static int alltoall_entry(const char *fn, bool large, const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt)
{
    const tuna_ctx *cached = tuna_ctx_cached(comm);
    int rc;
    if (tuna_repeat_matches(cached, TUNA_ALLTOALL, opt, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, MPI_OP_NULL) &&
        (rc = run_vendor(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                         large)) >= 0)
        return rc;
    const double t_entry = tuna_learn_entry(cached, TUNA_ALLTOALL);
    const double t_start = tuna_stats_on ? PMPI_Wtime() : 0.0;
    rc = alltoall_call(fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                       opt, large, t_entry);
    tuna_stats_publish(t_start);
    return rc;
}

/* tuna_alltoall and tuna_alltoall_c: device buffers take the library's call (memory_route.c).
 * Inlined: each entry's code is what it was when written out twice. */
static inline __attribute__((always_inline)) int
alltoall_public(const char *fn, bool large, const void *sendbuf, MPI_Count sendcount,
                MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                MPI_Comm comm, const tuna_options *opt)
{
    int rc;
    if (tuna_memory_kinds(sendbuf, recvbuf) != TUNA_MEMORY_HOST &&
        (rc = tuna_memory_alltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                   recvtype, comm, opt)) >= 0)
        return rc;
    return alltoall_entry(fn, large, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                          comm, opt);
}

int tuna_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt)
{
    return alltoall_public("tuna_alltoall", false, sendbuf, sendcount, sendtype, recvbuf,
                           recvcount, recvtype, comm, opt);
}

int tuna_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                    const tuna_options *opt)
{
    return alltoall_public("tuna_alltoall_c", true, sendbuf, sendcount, sendtype, recvbuf,
                           recvcount, recvtype, comm, opt);
}

int tuna_alltoall_host(bool large, const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt)
{
    return alltoall_entry(large ? "tuna_alltoall_c" : "tuna_alltoall", large, sendbuf, sendcount,
                          sendtype, recvbuf, recvcount, recvtype, comm, opt);
}
