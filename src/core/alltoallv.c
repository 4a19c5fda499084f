/*
 * tuna_alltoallv: argument checks, collective agreement on errors and global
 * size statistics, normalisation (byte displacements, in-place), dispatch.
 */
#include "tuna_internal.h"
#include "tuna_coll.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int tuna_stats_on;
tuna_stats tuna_stats_current;
static tuna_stats stats_last;

void tuna_stats_enable(int on)
{
    tuna_stats_on = on != 0;
}

const tuna_stats *tuna_stats_last(void)
{
    return &stats_last;
}

void tuna_stats_publish(double t_start)
{
    if (!tuna_stats_on)
        return;
    tuna_stats_current.total = MPI_Wtime() - t_start;
    stats_last = tuna_stats_current;
}

const char *tuna_phase_name(tuna_phase phase)
{
    static const char *const names[TUNA_PHASE_COUNT] = {
        "prepare", "metadata", "data", "copy", "rearrange", "inter"};
    return (int)phase >= 0 && phase < TUNA_PHASE_COUNT ? names[phase] : "?";
}

/* Element-wise max of the first three entries, sum of the others (TUNA_AGREE_*). */
static void agree_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const long long *a = in;
    long long *b = inout;
    for (int k = 0; k + TUNA_AGREE_N <= *len; k += TUNA_AGREE_N) {
        for (int i = 0; i < TUNA_AGREE_ZERO_BLOCKS; i++)
            if (a[k + i] > b[k + i])
                b[k + i] = a[k + i];
        b[k + TUNA_AGREE_ZERO_BLOCKS] += a[k + TUNA_AGREE_ZERO_BLOCKS];
        b[k + TUNA_AGREE_SUM_BYTES] += a[k + TUNA_AGREE_SUM_BYTES];
    }
}

static MPI_Op agree_op = MPI_OP_NULL;

int tuna_agree(tuna_ctx *ctx, long long v[TUNA_AGREE_N])
{
    if (agree_op == MPI_OP_NULL)
        TUNA_MPI_CHECK(MPI_Op_create(agree_fn, 1, &agree_op));
    TUNA_MPI_CHECK(
        MPI_Allreduce(MPI_IN_PLACE, v, TUNA_AGREE_N, MPI_LONG_LONG, agree_op, ctx->comm));
    return MPI_SUCCESS;
}

void tuna_a2av_set_stats(tuna_a2av_args *a, const long long v[TUNA_AGREE_N])
{
    const double blocks = (double)a->size * a->size;
    a->max_block_bytes = (size_t)v[TUNA_AGREE_MAX_BLOCK];
    a->total_bytes_max = (size_t)v[TUNA_AGREE_MAX_TOTAL];
    a->zero_fraction = (double)v[TUNA_AGREE_ZERO_BLOCKS] / blocks;
    a->mean_block_bytes = (double)v[TUNA_AGREE_SUM_BYTES] / blocks;
    a->stats_agreed = true;
}

/*
 * TUNA_ARGCHECK: "collective" (default) agrees on argument errors with one allreduce, so a
 * bad rank cannot hang the others; "local" skips that allreduce for the algorithms that do
 * not need global size statistics (the linear ones), as MPI libraries do.
 */
static int argcheck_local_only(int *local)
{
    static int mode = -1; /* -1 unread, 0 collective, 1 local, 2 invalid */
    if (mode < 0) {
        const char *s = getenv("TUNA_ARGCHECK");
        mode = !s || !*s || strcmp(s, "collective") == 0 ? 0 : strcmp(s, "local") == 0 ? 1 : 2;
    }
    if (mode == 2)
        return tuna_error_set(MPI_ERR_ARG, "TUNA_ARGCHECK='%s': expected 'collective' or 'local'",
                              getenv("TUNA_ARGCHECK"));
    *local = mode;
    return MPI_SUCCESS;
}

static int check_type(MPI_Datatype t, const char *which)
{
    if (t == MPI_DATATYPE_NULL)
        return tuna_error_set(MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", which);
    return MPI_SUCCESS;
}

/*
 * Local argument checks; the result is then agreed on by all ranks. On success *rcontig
 * tells whether recvtype is contiguous (inspected once per call: it walks the type).
 */
static int check_args(const void *sendbuf, const int *sendcounts, const int *sdispls,
                      MPI_Datatype sendtype, const void *recvbuf, const int *recvcounts,
                      const int *rdispls, MPI_Datatype recvtype, int P, int me, bool *rcontig_out)
{
    bool inplace = sendbuf == MPI_IN_PLACE;
    if (!recvcounts || !rdispls)
        return tuna_error_set(MPI_ERR_ARG, "recvcounts or rdispls is NULL");
    int rc = check_type(recvtype, "recvtype");
    if (rc)
        return rc;
    if (!inplace) {
        if (!sendcounts || !sdispls)
            return tuna_error_set(MPI_ERR_ARG, "sendcounts or sdispls is NULL");
        if ((rc = check_type(sendtype, "sendtype")))
            return rc;
    }
    int rsize, ssize = 0;
    TUNA_MPI_CHECK(MPI_Type_size(recvtype, &rsize));
    if (!inplace)
        TUNA_MPI_CHECK(MPI_Type_size(sendtype, &ssize));
    bool rcontig = tuna_type_is_contiguous(recvtype);
    *rcontig_out = rcontig;
    for (int j = 0; j < P; j++) {
        if (recvcounts[j] < 0)
            return tuna_error_set(MPI_ERR_COUNT, "recvcounts[%d] = %d is negative (rank %d)", j,
                                  recvcounts[j], me);
        if (recvcounts[j] > 0 && rsize > 0 && !recvbuf)
            return tuna_error_set(MPI_ERR_BUFFER,
                                  "recvbuf is NULL but recvcounts[%d] = %d (rank %d)", j,
                                  recvcounts[j], me);
        if (inplace && !rcontig && (size_t)recvcounts[j] * (size_t)rsize > (size_t)INT_MAX)
            return tuna_error_set(MPI_ERR_COUNT,
                                  "MPI_IN_PLACE with a non-contiguous recvtype supports blocks "
                                  "up to 2 GiB; recvcounts[%d] is %zu bytes (rank %d)",
                                  j, (size_t)recvcounts[j] * (size_t)rsize, me);
        if (inplace)
            continue;
        if (sendcounts[j] < 0)
            return tuna_error_set(MPI_ERR_COUNT, "sendcounts[%d] = %d is negative (rank %d)", j,
                                  sendcounts[j], me);
        if (sendcounts[j] > 0 && ssize > 0 && !sendbuf)
            return tuna_error_set(MPI_ERR_BUFFER,
                                  "sendbuf is NULL but sendcounts[%d] = %d (rank %d)", j,
                                  sendcounts[j], me);
    }
    if (!inplace && (size_t)sendcounts[me] * (size_t)ssize > (size_t)recvcounts[me] * (size_t)rsize)
        return tuna_error_set(MPI_ERR_TRUNCATE,
                              "rank %d sends itself %zu bytes but receives only %zu", me,
                              (size_t)sendcounts[me] * (size_t)ssize,
                              (size_t)recvcounts[me] * (size_t)rsize);
    return MPI_SUCCESS;
}

static int run_vendor_passthrough(const void *sendbuf, const int *sendcounts, const int *sdispls,
                                  MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                                  const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "PMPI_Alltoallv failed");
    return MPI_SUCCESS;
}

int tuna_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   const tuna_options *opt)
{
    double t_start = tuna_stats_on ? MPI_Wtime() : 0.0;
    tuna_options dflt;
    int rc = tuna_call_begin(TUNA_ALLTOALLV, comm, &opt, &dflt);
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_a2av_algorithm *alg = &tuna_a2av_table[opt->algorithm];

    if (alg->run == tuna_a2av_vendor) {
        /* vendor is the MPI library itself, with no tuna overhead on top. */
        rc = run_vendor_passthrough(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype, comm);
        tuna_stats_publish(t_start);
        if (tuna_stats_on) /* all of the call is the library's data exchange */
            stats_last.phase[TUNA_PHASE_DATA] = stats_last.total;
        return rc;
    }
    rc = tuna_require_intracomm(comm, alg->info.name);
    if (rc != MPI_SUCCESS)
        return rc;

    tuna_timer tm;
    tuna_timer_start(&tm);
    tuna_ctx *ctx;
    rc = tuna_ctx_get(comm, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    const int P = ctx->size, me = ctx->rank;
    const bool inplace = sendbuf == MPI_IN_PLACE;

    /* Check locally, then agree: every rank learns whether any rank failed. */
    bool rcontig = false;
    int local_rc = check_args(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, P, me, &rcontig);
    long long agreed[TUNA_AGREE_N] = {local_rc != MPI_SUCCESS, 0, 0, 0, 0};
    int local_only = 0;
    rc = argcheck_local_only(&local_only);
    if (rc != MPI_SUCCESS)
        return rc;
    if (local_rc == MPI_SUCCESS) {
        int ts;
        MPI_Type_size(inplace ? recvtype : sendtype, &ts);
        const int *cnt = inplace ? recvcounts : sendcounts;
        long long total = 0, maxb = 0, zeros = 0;
        for (int j = 0; j < P; j++) {
            long long b = (long long)cnt[j] * ts;
            total += b;
            if (b > maxb)
                maxb = b;
            zeros += b == 0;
        }
        agreed[TUNA_AGREE_MAX_BLOCK] = maxb;
        agreed[TUNA_AGREE_MAX_TOTAL] = total;
        agreed[TUNA_AGREE_ZERO_BLOCKS] = zeros;
        agreed[TUNA_AGREE_SUM_BYTES] = total;
    }
    long long local_stats[TUNA_AGREE_N];
    memcpy(local_stats, agreed, sizeof local_stats);
    /* TUNA_ARGCHECK=local: MPI-library behaviour, no allreduce for the algorithms that do
     * not need the statistics; a rank with bad arguments returns at once and its peers may
     * wait for it. */
    const bool agree_now = !(local_only && !alg->needs_global_stats);
    if (agree_now) {
        rc = tuna_agree(ctx, agreed);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (local_rc != MPI_SUCCESS)
        return local_rc;
    if (agreed[TUNA_AGREE_ERROR])
        return tuna_error_set(MPI_ERR_ARG,
                              "tuna_alltoallv: invalid arguments on another rank; no data moved");

    /* Normalise: byte displacements (MPI_Aint, so no int overflow), types, in-place. */
    tuna_a2av_args a = {0};
    a.ctx = ctx;
    a.rank = me;
    a.size = P;
    MPI_Aint lb, sext = 0, rext = 0;
    int rsize, ssize;
    MPI_Type_get_extent(recvtype, &lb, &rext);
    MPI_Type_size(recvtype, &rsize);
    MPI_Aint *disp = tuna_ctx_scratch(ctx, 0, sizeof(MPI_Aint) * 2 * (size_t)P);
    if (!disp)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < P; j++)
        disp[P + j] = (MPI_Aint)rdispls[j] * rext;
    a.rbuf = recvbuf;
    a.rcounts = recvcounts;
    a.rdisp = disp + P;
    a.rtype = recvtype;
    a.rext = rext;
    a.rsize = (size_t)rsize;
    a.rcontig = rcontig;

    char *inplace_copy = NULL;
    int *inplace_counts = NULL;
    if (inplace) {
        /* Pack the receive blocks into a send copy, so algorithms never alias. */
        size_t tot = 0;
        for (int j = 0; j < P; j++) {
            disp[j] = (MPI_Aint)tot;
            tot += (size_t)recvcounts[j] * (size_t)rsize;
        }
        inplace_copy = tuna_malloc(tot);
        if (!inplace_copy)
            return MPI_ERR_NO_MEM;
        if (!a.rcontig) {
            inplace_counts = tuna_malloc(sizeof(int) * (size_t)P);
            if (!inplace_counts) {
                free(inplace_copy);
                return MPI_ERR_NO_MEM;
            }
        }
        for (int j = 0; j < P && rc == MPI_SUCCESS; j++) {
            size_t b = (size_t)recvcounts[j] * (size_t)rsize;
            if (inplace_counts)
                inplace_counts[j] = (int)b; /* <= INT_MAX: checked in check_args() */
            rc = tuna_pack_block(a.rbuf + a.rdisp[j], recvcounts[j], recvtype, rext,
                                     (size_t)rsize, inplace_copy + disp[j], ctx->comm);
        }
        a.sbuf = inplace_copy;
        a.scounts = inplace_counts ? inplace_counts : recvcounts;
        a.stype = inplace_counts ? MPI_PACKED : recvtype;
        ssize = inplace_counts ? 1 : rsize;
        sext = inplace_counts ? 1 : rext;
        a.scontig = true;
    } else {
        MPI_Type_get_extent(sendtype, &lb, &sext);
        MPI_Type_size(sendtype, &ssize);
        for (int j = 0; j < P; j++)
            disp[j] = (MPI_Aint)sdispls[j] * sext;
        a.sbuf = sendbuf;
        a.scounts = sendcounts;
        a.stype = sendtype;
        a.scontig = tuna_type_is_contiguous(sendtype);
    }
    a.sdisp = disp;
    a.sext = sext;
    a.ssize = (size_t)ssize;
    memcpy(a.local_stats, local_stats, sizeof a.local_stats);
    if (agree_now)
        tuna_a2av_set_stats(&a, agreed);
    for (int i = 0; i < alg->info.nparams; i++)
        a.param[i] = tuna_coll_resolve_param(&alg->info.params[i], opt->value[i], P);
    memcpy(tuna_stats_current.params, a.param, sizeof a.param);
    tuna_timer_stop(&tm, TUNA_PHASE_PREPARE);

    if (rc == MPI_SUCCESS)
        rc = alg->run(&a);

    free(inplace_copy);
    free(inplace_counts);
    tuna_stats_publish(t_start);
    return rc;
}
