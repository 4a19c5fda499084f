/*
 * tuna_alltoallv: argument checks (local by default, as MPI libraries do), the
 * agreement on errors and global size statistics where an algorithm needs them,
 * normalisation (byte displacements, in-place), dispatch. The lean path: a
 * cached context, cached defaults and datatype facts, no collective unless the
 * algorithm (or auto's periodic agreement) needs one; docs/algorithms.md.
 * The pieces that the nonblocking call (ialltoallv.c) and plans (src/plan/) run are
 * here too: tuna_a2av_prepare, tuna_a2av_check_args, tuna_a2av_describe.
 */
#include "alltoallv.h"
#include "memkind.h"
#include "../transport/cuda_staged.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int tuna_a2av_check_totals(const long long v[TUNA_AGREE_N])
{
    /* Only this direction: receive counts larger than what arrives are erroneous too, but
     * the MPI libraries accept them (the message is just shorter), so tuna does as well. */
    if (v[TUNA_AGREE_SUM_BYTES] > v[TUNA_AGREE_SUM_RECV])
        return tuna_error_set(MPI_ERR_TRUNCATE,
                              "tuna_alltoallv: the ranks send %lld bytes in all but their "
                              "receive counts hold %lld: some receive would be truncated (type "
                              "signatures must match); no data moved",
                              v[TUNA_AGREE_SUM_BYTES], v[TUNA_AGREE_SUM_RECV]);
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

/* slot: 0 send, 1 receive side of ctx's type_seen (ctx may be NULL: no memo). */
static int check_type(MPI_Datatype t, const char *which, tuna_ctx *ctx, int slot,
                      tuna_type_info *info)
{
    if (t == MPI_DATATYPE_NULL)
        return tuna_error_set(MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", which);
    if (ctx && ctx->type_seen[slot].type == t) {
        *info = ctx->type_seen[slot].info;
        return MPI_SUCCESS;
    }
    int rc = tuna_type_info_get(t, info);
    if (rc == MPI_SUCCESS && ctx && info->named) {
        ctx->type_seen[slot].type = t;
        ctx->type_seen[slot].info = *info;
    }
    return rc;
}

/*
 * The pass over the counts that every call makes: byte displacements (when disp is given:
 * receive side at disp + P, send side at disp unless in place), this rank's statistics
 * for the agreement (acc: total, largest, empty blocks sent, total received), and whether
 * any count is negative. Branch-light; always inlined with `large` a constant, once per kind of counts.
 */
static inline __attribute__((always_inline)) bool scan_counts(
    const tuna_counts *sc, const tuna_counts *rcv, bool inplace, bool large, int P,
    MPI_Aint sext, MPI_Aint rext, size_t ssize, size_t rsize, MPI_Aint *disp,
    long long acc[4])
{
    long long total = 0, maxb = 0, zeros = 0, received = 0;
    bool negative = false;
    for (int j = 0; j < P; j++) {
        const long long r = large ? (long long)rcv->nl[j] : rcv->n[j];
        const long long n = inplace ? r : large ? (long long)sc->nl[j] : sc->n[j];
        negative |= (r < 0) | (n < 0);
        if (disp) {
            disp[P + j] = (large ? rcv->dl[j] : (MPI_Aint)rcv->d[j]) * rext;
            if (!inplace)
                disp[j] = (large ? sc->dl[j] : (MPI_Aint)sc->d[j]) * sext;
        }
        const long long b = n * (long long)ssize;
        received += r * (long long)rsize;
        total += b;
        maxb = b > maxb ? b : maxb;
        zeros += b == 0;
    }
    acc[0] = total, acc[1] = maxb, acc[2] = zeros, acc[3] = received;
    return negative;
}

/* The first count scan_counts() or the buffers rule out, with its message. */
static int report_counts(const void *sendbuf, const tuna_counts *sc, const void *recvbuf,
                         const tuna_counts *rcv, int P, int me, const tuna_type_info *sinfo,
                         const tuna_type_info *rinfo)
{
    const bool inplace = sendbuf == MPI_IN_PLACE;
    const size_t rsize = rinfo->size, ssize = sinfo->size;
    for (int j = 0; j < P; j++) {
        const long long r = tuna_counts_n(rcv, j);
        if (r < 0)
            return tuna_error_set(MPI_ERR_COUNT, "recvcounts[%d] = %lld is negative (rank %d)",
                                  j, r, me);
        if (r > 0 && rsize > 0 && !recvbuf && rinfo->true_lb == 0)
            return tuna_error_set(MPI_ERR_BUFFER,
                                  "recvbuf is NULL but recvcounts[%d] = %lld (rank %d)", j, r,
                                  me);
        if (inplace && !rinfo->contig && (size_t)r * rsize > (size_t)INT_MAX)
            return tuna_error_set(MPI_ERR_COUNT,
                                  "MPI_IN_PLACE with a non-contiguous recvtype supports blocks "
                                  "up to 2 GiB; recvcounts[%d] is %zu bytes (rank %d)",
                                  j, (size_t)r * rsize, me);
        if (!inplace) {
            const long long n = tuna_counts_n(sc, j);
            if (n < 0)
                return tuna_error_set(MPI_ERR_COUNT,
                                      "sendcounts[%d] = %lld is negative (rank %d)", j, n, me);
            if (n > 0 && ssize > 0 && !sendbuf && sinfo->true_lb == 0)
                return tuna_error_set(MPI_ERR_BUFFER,
                                      "sendbuf is NULL but sendcounts[%d] = %lld (rank %d)", j,
                                      n, me);
        }
    }
    return MPI_SUCCESS;
}

/* Block j of one side as a span of addresses. */
static tuna_span block_span(const void *buf, const tuna_counts *k, const tuna_type_info *t,
                            int j)
{
    return tuna_span_of(buf, tuna_counts_d(k, j) * t->extent, tuna_counts_n(k, j), t->size,
                        t->extent, t->true_lb, t->true_extent);
}

/* No send block overlaps a receive block (by extent). One pass for the hulls of both sides;
 * the blocks themselves are compared only when the hulls meet (one buffer holding both). */
static int check_overlap(const void *sendbuf, const tuna_counts *sc, const tuna_type_info *si,
                         const void *recvbuf, const tuna_counts *rcv, const tuna_type_info *ri,
                         int P, int me)
{
    tuna_span hs = TUNA_SPAN_EMPTY_HULL, hr = TUNA_SPAN_EMPTY_HULL;
    for (int j = 0; j < P; j++) {
        tuna_span_extend(&hs, block_span(sendbuf, sc, si, j));
        tuna_span_extend(&hr, block_span(recvbuf, rcv, ri, j));
    }
    if (!tuna_spans_meet(hs, hr))
        return MPI_SUCCESS;
    tuna_span *spans = tuna_malloc(sizeof(tuna_span) * 2 * (size_t)P);
    if (!spans)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallv: no memory to check buffer "
                                              "overlap (rank %d)", me);
    for (int j = 0; j < P; j++) {
        spans[j] = block_span(sendbuf, sc, si, j);
        spans[P + j] = block_span(recvbuf, rcv, ri, j);
    }
    int rc = tuna_check_overlap("tuna_alltoallv", me, spans, P, spans + P, P);
    free(spans);
    return rc;
}

/*
 * Local argument checks; on success also this rank's contribution to the agreement
 * (v[TUNA_AGREE_*], from the blocks it sends) and, when disp is given, the byte
 * displacements describe() needs, from one pass over the counts (scan_counts). Only a
 * negative count, a NULL buffer or an in-place non-contiguous type takes the per-count
 * checks that name the culprit (report_counts).
 */
static int check_args(const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                      const void *recvbuf, const tuna_counts *rcv, MPI_Datatype recvtype, int P,
                      int me, tuna_ctx *ctx, tuna_type_info *sinfo, tuna_type_info *rinfo,
                      long long v[TUNA_AGREE_N], MPI_Aint *disp)
{
    const bool inplace = sendbuf == MPI_IN_PLACE;
    int rc;
    if (!tuna_counts_given(rcv))
        return tuna_error_set(MPI_ERR_ARG, "recvcounts or rdispls is NULL");
    if ((rc = tuna_check_recv_inplace("tuna_alltoallv", recvbuf, me)))
        return rc;
    rc = check_type(recvtype, "recvtype", ctx, 1, rinfo);
    if (rc)
        return rc;
    if (!inplace) {
        if (!tuna_counts_given(sc))
            return tuna_error_set(MPI_ERR_ARG, "sendcounts or sdispls is NULL");
        if ((rc = check_type(sendtype, "sendtype", ctx, 0, sinfo)))
            return rc;
    } else {
        *sinfo = *rinfo;
    }
    const size_t rsize = rinfo->size, ssize = sinfo->size;
    long long acc[4];
    const bool negative =
        rcv->n ? scan_counts(sc, rcv, inplace, false, P, sinfo->extent, rinfo->extent, ssize,
                             rsize, disp, acc)
               : scan_counts(sc, rcv, inplace, true, P, sinfo->extent, rinfo->extent, ssize,
                             rsize, disp, acc);
    if (negative || !recvbuf || !sendbuf || (inplace && !rinfo->contig)) {
        if ((rc = report_counts(sendbuf, sc, recvbuf, rcv, P, me, sinfo, rinfo)))
            return rc;
    }
    const long long total = acc[0];
    const tuna_counts *cnt = inplace ? rcv : sc;
    /* acc[3]: the bytes this rank receives (scan_counts), so equal pointers err only with
     * data on both sides */
    if (sendbuf == recvbuf && total > 0 &&
        (rc = tuna_check_alias("tuna_alltoallv", sendbuf, recvbuf, acc[3] > 0)))
        return rc;
    const size_t self_out = (size_t)tuna_counts_n(cnt, me) * ssize,
                 self_in = (size_t)tuna_counts_n(rcv, me) * rsize;
    if (!inplace && self_out > self_in)
        return tuna_error_set(MPI_ERR_TRUNCATE,
                              "rank %d sends itself %zu bytes but receives only %zu", me,
                              self_out, self_in);
    if (!inplace && total > 0 && acc[3] > 0 &&
        (rc = check_overlap(sendbuf, sc, sinfo, recvbuf, rcv, rinfo, P, me)))
        return rc;
    v[TUNA_AGREE_MAX_BLOCK] = acc[1];
    v[TUNA_AGREE_MAX_TOTAL] = total;
    v[TUNA_AGREE_ZERO_BLOCKS] = acc[2];
    v[TUNA_AGREE_SUM_BYTES] = total;
    v[TUNA_AGREE_SUM_RECV] = acc[3];
    return MPI_SUCCESS;
}

/*
 * Before auto hands a call to the MPI library (PMPI_Alltoallv on the user's communicator):
 * true when nothing check_args() reports could apply, found without inspecting a datatype
 * (no missing array, no MPI_DATATYPE_NULL, no negative count, no NULL buffer). Otherwise
 * check_args() decides; what it leaves out (truncation, ...) the library reports as
 * MPI_Alltoallv does.
 */
static inline __attribute__((always_inline)) bool plainly_valid(const void *sendbuf, const int *sendcounts, const int *sdispls,
                          MPI_Datatype sendtype, const void *recvbuf, const int *recvcounts,
                          const int *rdispls, MPI_Datatype recvtype, int P)
{
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (!recvcounts || !rdispls || (!inplace && (!sendcounts || !sdispls)) ||
        recvtype == MPI_DATATYPE_NULL || (!inplace && sendtype == MPI_DATATYPE_NULL) ||
        !recvbuf || !sendbuf || sendbuf == recvbuf || recvbuf == MPI_IN_PLACE)
        return false;
    for (int j = 0; j < P; j++)
        if (recvcounts[j] < 0 || (!inplace && sendcounts[j] < 0))
            return false;
    return true;
}

/* Block of n elements of a predefined contiguous type of `size` bytes at element d. */
static inline tuna_span contig_span(const void *buf, int d, int n, size_t size)
{
    const uintptr_t lo = (uintptr_t)buf + (uintptr_t)((MPI_Aint)d * (MPI_Aint)size);
    return (tuna_span){lo, lo + (uintptr_t)n * size};
}

/*
 * A row with a pair_tag at P = 2 on plain arguments (both types predefined and contiguous,
 * as remembered by an earlier call on the communicator, no in-place, distinct buffers, no
 * negative count, no NULL buffer): the own block's memcpy and one MPI_Sendrecv with the
 * peer, exactly the messages the row's full path sends (an empty side is MPI_PROC_NULL
 * there too), so the two ranks may take different paths. Returns -1 (nothing done) when the
 * arguments are not plain or the own block would be truncated: the full path checks and
 * reports them.
 */
static int run_two_rank_exchange(const tuna_a2av_algorithm *row, tuna_ctx *ctx,
                                 const void *sendbuf, const int *sendcounts, const int *sdispls,
                                 MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                                 const int *rdispls, MPI_Datatype recvtype)
{
    const tuna_type_info *si = &ctx->type_seen[0].info, *ri = &ctx->type_seen[1].info;
    if (sendbuf == MPI_IN_PLACE || ctx->type_seen[0].type != sendtype ||
        ctx->type_seen[1].type != recvtype || !si->contig || !ri->contig ||
        !plainly_valid(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                       recvtype, 2))
        return -1;
    const int me = ctx->rank, peer = 1 - me;
    const size_t self_out = (size_t)sendcounts[me] * si->size;
    if (self_out > (size_t)recvcounts[me] * ri->size)
        return -1;
    /* check_overlap's rule for the two predefined contiguous types remembered here (lb 0,
     * extent = size): four spans, no hull pass, no allocation; a hit takes the full path,
     * which reports it. */
    const tuna_span s0 = contig_span(sendbuf, sdispls[0], sendcounts[0], si->size),
                    s1 = contig_span(sendbuf, sdispls[1], sendcounts[1], si->size),
                    r0 = contig_span(recvbuf, rdispls[0], recvcounts[0], ri->size),
                    r1 = contig_span(recvbuf, rdispls[1], recvcounts[1], ri->size);
    if (tuna_spans_meet(s0, r0) || tuna_spans_meet(s0, r1) || tuna_spans_meet(s1, r0) ||
        tuna_spans_meet(s1, r1))
        return -1;
    const tuna_transport *tp = &tuna_transport_mpi_host; /* before the arguments: the call's */
    if (self_out > 0)
        tuna_tp_copy(tp, (char *)recvbuf + (MPI_Aint)rdispls[me] * ri->extent,
                     (const char *)sendbuf + (MPI_Aint)sdispls[me] * si->extent, self_out);
    const bool send = sendcounts[peer] > 0 && si->size > 0,
               recv = recvcounts[peer] > 0 && ri->size > 0;
    int rc = tuna_tp_sendrecv_typed(
        tp, (const char *)sendbuf + (MPI_Aint)sdispls[peer] * si->extent,
        send ? sendcounts[peer] : 0, sendtype, send ? peer : MPI_PROC_NULL, row->desc.pair_tag,
        (char *)recvbuf + (MPI_Aint)rdispls[peer] * ri->extent, recv ? recvcounts[peer] : 0,
        recvtype, recv ? peer : MPI_PROC_NULL, row->desc.pair_tag, ctx->comm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : tuna_error_set(rc, "MPI_Sendrecv failed");
}

size_t tuna_a2av_inplace_bytes(const tuna_counts *rcv, size_t rsize, int P)
{
    size_t tot = 0;
    for (int j = 0; j < P; j++)
        tot += (size_t)tuna_counts_n(rcv, j) * rsize;
    return tot;
}

/* a's buffer fields from arguments whose byte displacements scan_counts() already wrote to
 * disp (in place: the send side's packed offsets are written here). */
static void describe(tuna_a2av_args *a, const void *sendbuf, const tuna_counts *sc,
                     MPI_Datatype sendtype, const tuna_type_info *si, void *recvbuf,
                     const tuna_counts *rcv, MPI_Datatype recvtype, const tuna_type_info *ri,
                     MPI_Aint *disp, char *copy, int *copy_counts)
{
    const int P = a->size;
    a->rbuf = recvbuf;
    a->rcounts = rcv->n;
    a->rcounts_l = rcv->nl;
    a->rdisp = disp + P;
    a->rtype = recvtype;
    a->rext = ri->extent;
    a->rsize = ri->size;
    a->rcontig = ri->contig;
    if (sendbuf == MPI_IN_PLACE) {
        /* The send side is a packed copy of the receive blocks: algorithms never alias. */
        size_t tot = 0;
        for (int j = 0; j < P; j++) {
            const size_t b = (size_t)tuna_counts_n(rcv, j) * ri->size;
            disp[j] = (MPI_Aint)tot;
            tot += b;
            if (copy_counts)
                copy_counts[j] = (int)b; /* <= INT_MAX: check_args() */
        }
        a->sbuf = copy;
        a->scounts = copy_counts ? copy_counts : rcv->n;
        a->scounts_l = copy_counts ? NULL : rcv->nl;
        a->stype = copy_counts ? MPI_PACKED : recvtype;
        a->ssize = copy_counts ? 1 : ri->size;
        a->sext = copy_counts ? 1 : ri->extent;
        a->scontig = true;
    } else {
        a->sbuf = sendbuf;
        a->scounts = sc->n;
        a->scounts_l = sc->nl;
        a->stype = sendtype;
        a->ssize = si->size;
        a->sext = si->extent;
        a->scontig = si->contig;
    }
    a->sdisp = disp;
}

void tuna_a2av_describe(tuna_a2av_args *a, const void *sendbuf, const tuna_counts *sc,
                        MPI_Datatype sendtype, const tuna_type_info *si, void *recvbuf,
                        const tuna_counts *rcv, MPI_Datatype recvtype, const tuna_type_info *ri,
                        MPI_Aint *disp, char *copy, int *copy_counts)
{
    const bool inplace = sendbuf == MPI_IN_PLACE;
    long long acc[4];
    /* the displacements; the counts were checked */
    if (rcv->n)
        (void)scan_counts(sc, rcv, inplace, false, a->size, si->extent, ri->extent, si->size,
                          ri->size, disp, acc);
    else
        (void)scan_counts(sc, rcv, inplace, true, a->size, si->extent, ri->extent, si->size,
                          ri->size, disp, acc);
    describe(a, sendbuf, sc, sendtype, si, recvbuf, rcv, recvtype, ri, disp, copy, copy_counts);
}

int tuna_a2av_pack_inplace(const tuna_a2av_args *a, char *copy)
{
    int rc = MPI_SUCCESS;
    for (int j = 0; j < a->size && rc == MPI_SUCCESS; j++)
        rc = tuna_pack_block(tuna_rblock(a, j), tuna_rcount(a, j), a->rtype, a->rext, a->rsize,
                             copy + a->sdisp[j], a->ctx->comm);
    return rc;
}

int tuna_a2av_prepare(tuna_a2av_args *a, const void *sendbuf, const tuna_counts *sc,
                      MPI_Datatype sendtype, void *recvbuf, const tuna_counts *rcv,
                      MPI_Datatype recvtype, long long v[TUNA_AGREE_N], MPI_Aint *disp,
                      char **copy, int **copy_counts)
{
    tuna_type_info si, ri;
    *copy = NULL;
    *copy_counts = NULL;
    int rc = check_args(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, a->size, a->rank, a->ctx,
                        &si, &ri, v, disp);
    if (rc != MPI_SUCCESS)
        return rc;
    if (sendbuf == MPI_IN_PLACE) {
        *copy = tuna_malloc(tuna_a2av_inplace_bytes(rcv, ri.size, a->size) + 1);
        if (*copy && !ri.contig)
            *copy_counts = tuna_malloc(sizeof(int) * (size_t)a->size);
        if (!*copy || (!ri.contig && !*copy_counts)) {
            free(*copy);
            *copy = NULL;
            return tuna_error_set(MPI_ERR_NO_MEM, "no memory for the in-place copy");
        }
    }
    describe(a, sendbuf, sc, sendtype, &si, recvbuf, rcv, recvtype, &ri, disp, *copy,
             *copy_counts);
    if (*copy && (rc = tuna_a2av_pack_inplace(a, *copy)) != MPI_SUCCESS) {
        free(*copy);
        free(*copy_counts);
        *copy = NULL;
        *copy_counts = NULL;
    }
    return rc;
}

int tuna_a2av_check_args(const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                         const void *recvbuf, const tuna_counts *rcv, MPI_Datatype recvtype,
                         int P, int me, tuna_type_info *sinfo, tuna_type_info *rinfo,
                         long long v[TUNA_AGREE_N])
{
    return check_args(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, P, me, NULL, sinfo, rinfo, v,
                      NULL);
}


/* The library's call with sendbuf == recvbuf (rare: the counts are read only then): an error
 * if this rank sends and receives data, as tuna's own algorithms report it. */
int tuna_a2av_library_alias(const char *fn, const void *sendbuf, const void *recvbuf,
                            const tuna_counts *sc, const tuna_counts *rcv, MPI_Comm comm)
{
    int n = 0, inter = 0;
    if (sendbuf != recvbuf || (!sc->n && !sc->nl) || (!rcv->n && !rcv->nl) ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        (inter ? PMPI_Comm_remote_size(comm, &n) : PMPI_Comm_size(comm, &n)) != MPI_SUCCESS)
        return MPI_SUCCESS; /* the library reports what is wrong here */
    bool s = false, r = false;
    for (int j = 0; j < n; j++)
        s |= tuna_counts_n(sc, j) > 0, r |= tuna_counts_n(rcv, j) > 0;
    return tuna_check_alias(fn, sendbuf, recvbuf, s && r);
}

/* The MPI library's own call on the user's communicator: vendor, and auto choosing it. */
static int run_vendor_passthrough(const void *sendbuf, const int *sendcounts, const int *sdispls,
                                  MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                                  const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                                  double t_start)
{
    int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm);
    if (rc != MPI_SUCCESS)
        rc = tuna_error_set(rc, "PMPI_Alltoallv failed");
    tuna_stats_publish_library(t_start);
    return rc;
}

/*
 * The library's call on the user's arguments, for either kind of counts (vendor, and auto
 * choosing it), or -1 when the library has no large-count alltoallv (MPI_Alltoallv_c is
 * MPI 4): the vendor row then runs tuna's linear exchange on the normalised arguments.
 * Decided by the build, so the same on every rank.
 */
static int run_vendor_counts(const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                             void *recvbuf, const tuna_counts *rcv, MPI_Datatype recvtype,
                             MPI_Comm comm, double t_start)
{
    if (rcv->n)
        return run_vendor_passthrough(sendbuf, sc->n, sc->d, sendtype, recvbuf, rcv->n, rcv->d,
                                      recvtype, comm, t_start);
#ifdef TUNA_HAVE_MPI_ALLTOALLV_C
    int rc = PMPI_Alltoallv_c(sendbuf, sc->nl, sc->dl, sendtype, recvbuf, rcv->nl, rcv->dl,
                              recvtype, comm);
    if (rc != MPI_SUCCESS)
        rc = tuna_error_set(rc, "PMPI_Alltoallv_c failed");
    tuna_stats_publish(t_start);
    return rc;
#else
    (void)sendbuf, (void)sendtype, (void)recvbuf, (void)recvtype, (void)comm, (void)t_start;
    return -1;
#endif
}

/*
 * Past the fast paths: checks, the agreement where needed, auto's decision, normalisation
 * (byte displacements, in-place copy), the algorithm. Counts are int or large (sc, rcv).
 */
static int alltoallv_full_path(const void *sendbuf, const tuna_counts *sc,
                               MPI_Datatype sendtype, void *recvbuf, const tuna_counts *rcv,
                               MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                               tuna_ctx *ctx, double t_start, const tuna_transport *tp)
{
    const tuna_a2av_algorithm *alg = &tuna_a2av_table[opt->algorithm];
    bool collective = false;
    int rc = MPI_SUCCESS;
    if (!ctx->argcheck_local && (rc = tuna_argcheck_collective(&collective)) != MPI_SUCCESS)
        return rc;
    const int P = ctx->size, me = ctx->rank;
    const bool inplace = sendbuf == MPI_IN_PLACE;
    const bool is_auto = alg->desc.kind == TUNA_ROW_AUTO;
    tuna_a2av_args a = {.ctx = ctx, .tp = tp, .scr = &ctx->scr, .rank = me, .size = P};

    /* auto: between its agreements it runs the choice of the last one, with no collective;
     * when that is the MPI library's own algorithm, the call is the library's. */
    const tuna_a2av_algorithm *run = alg;
    bool due = false;
    if (is_auto) {
        int reuse = -1;
        rc = tuna_a2av_auto_begin(ctx, collective, &due, &reuse, a.param);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!due) {
            run = &tuna_a2av_table[reuse];
            if (run->desc.kind == TUNA_ROW_VENDOR) {
                /* auto returns tuna's errors whatever it runs: one pass over the counts,
                 * then the library's own call (or, without a large-count one, the vendor
                 * row's replacement below). */
                if (!rcv->n || !plainly_valid(sendbuf, sc->n, sc->d, sendtype, recvbuf, rcv->n,
                                              rcv->d, recvtype, P)) {
                    tuna_type_info si, ri;
                    long long v[TUNA_AGREE_N];
                    rc = check_args(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, P, me, ctx,
                                    &si, &ri, v, NULL);
                    if (rc != MPI_SUCCESS)
                        return rc;
                }
                rc = run_vendor_counts(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, comm,
                                       t_start);
                if (rc >= 0)
                    return rc;
                rc = MPI_SUCCESS;
            }
        }
    } else {
        tuna_params_resolve(&alg->desc.info, opt->value, P, a.param);
    }

    /* Past the fast paths: checks and byte displacements (MPI_Aint, so no int overflow) in
     * one pass; a failure here is this rank's error like any other. */
    tuna_timer tm;
    tuna_timer_start(&tm);
    tuna_type_info sinfo, rinfo;
    long long agreed[TUNA_AGREE_N + TUNA_LEARN_FIELDS] = {0};
    MPI_Aint *disp = tuna_ctx_scratch(ctx, 0, sizeof(MPI_Aint) * 2 * (size_t)P);
    int local_rc = disp ? check_args(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, P, me, ctx,
                                     &sinfo, &rinfo, agreed, disp)
                        : tuna_error_set(MPI_ERR_NO_MEM,
                                         "tuna_alltoallv: no memory for %d displacements", 2 * P);
    agreed[TUNA_AGREE_ERROR] = local_rc != MPI_SUCCESS;
    /* One allreduce where it is needed anyway (global statistics, auto's agreement) or asked
     * for (TUNA_ARGCHECK=collective); the error flag rides along. */
    const bool agree_now = collective || due || (run->desc.needs & TUNA_NEEDS_GLOBAL_STATS);
    /* auto's agreement also carries the samples of its learning (the maximum over ranks). */
    const int nlearn = due ? tuna_learn_fields(ctx, agreed + TUNA_AGREE_N) : 0;
    double t_agree = 0;
    if (agree_now) {
        t_agree = due && tuna_select_learn_on() ? PMPI_Wtime() : 0; /* nlearn: due */
        rc = tuna_agree_n(ctx, agreed, TUNA_AGREE_N + nlearn);
        if (rc != MPI_SUCCESS)
            return rc;
        if (nlearn)
            tuna_learn_apply_fields(ctx, agreed + TUNA_AGREE_N);
        if (t_agree > 0)
            t_agree = PMPI_Wtime() - t_agree;
    }
    if (local_rc != MPI_SUCCESS)
        return local_rc;
    if (agreed[TUNA_AGREE_ERROR])
        return tuna_error_set(MPI_ERR_ARG,
                              "tuna_alltoallv: invalid arguments on another rank; no data moved");
    if (agree_now && (rc = tuna_a2av_check_totals(agreed)) != MPI_SUCCESS)
        return rc;
    if (agree_now)
        tuna_a2av_set_stats(&a, agreed);
    /* A call between agreements re-decides only without learning (with it, the reused
     * choice is a candidate or the winner, whatever this call's statistics). */
    bool timed = false;
    double t_run = 0;
    if (is_auto && agree_now && (due || !ctx->learn)) {
        int chosen;
        rc = tuna_a2av_auto_decide(&a, &chosen, due);
        if (rc != MPI_SUCCESS)
            return rc;
        run = &tuna_a2av_table[chosen];
        /* A candidate (or the winner) of learning: its time from here, plus the agreement's
         * when it needs the statistics on every call. */
        timed = due && ctx->learn_class;
        t_run = timed ? PMPI_Wtime() - ((run->desc.needs & TUNA_NEEDS_GLOBAL_STATS) ? t_agree : 0)
                      : 0;
        if (run->desc.kind == TUNA_ROW_VENDOR) {
            rc = run_vendor_counts(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, comm, t_start);
            if (rc >= 0) {
                if (timed)
                    tuna_a2av_learn_end(ctx, PMPI_Wtime() - t_run, rc);
                return rc;
            }
            rc = MPI_SUCCESS;
        }
    }

    /* Normalise: types, in-place. */
    char *inplace_copy = NULL;
    int *inplace_counts = NULL;
    if (inplace) {
        inplace_copy = tuna_malloc(tuna_a2av_inplace_bytes(rcv, rinfo.size, P));
        if (!rinfo.contig)
            inplace_counts = tuna_malloc(sizeof(int) * (size_t)P);
        if (!inplace_copy || (!rinfo.contig && !inplace_counts)) {
            free(inplace_copy);
            free(inplace_counts);
            return tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallv: no memory for the in-place copy");
        }
    }
    describe(&a, sendbuf, sc, sendtype, &sinfo, recvbuf, rcv, recvtype, &rinfo, disp,
             inplace_copy, inplace_counts);
    if (inplace)
        rc = tuna_a2av_pack_inplace(&a, inplace_copy);
    if (tuna_stats_on && !is_auto)
        tuna_params_copy(tuna_stats_current.params, a.param);
    tuna_timer_stop(&tm, TUNA_PHASE_PREPARE);

    if (rc == MPI_SUCCESS)
        rc = tuna_a2av_run_row(run, &a);

    if (inplace) { /* only then allocated: no two free(NULL) calls on every call */
        free(inplace_copy);
        free(inplace_counts);
    }
    if (timed)
        tuna_a2av_learn_end(ctx, PMPI_Wtime() - t_run, rc);
    tuna_stats_publish(t_start);
    return rc;
}

/* An auto call between agreements that runs a candidate of its learning: timed whole (every
 * rank counts the same calls, so all time the same ones). */
static inline bool exploring(const tuna_a2av_algorithm *alg, const tuna_ctx *ctx)
{
    return alg->desc.kind == TUNA_ROW_AUTO && ctx->learn_class && ctx->agreed_valid &&
           ctx->auto_countdown > 0 && ctx->argcheck_local;
}

/* The full path; a call of auto's learning between its agreements is timed whole there. */
static int alltoallv_full(const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                          void *recvbuf, const tuna_counts *rcv, MPI_Datatype recvtype,
                          MPI_Comm comm, const tuna_options *opt, tuna_ctx *ctx, double t_start)
{
    const tuna_transport *tp = &tuna_transport_mpi_host;
    if (!exploring(&tuna_a2av_table[opt->algorithm], ctx))
        return alltoallv_full_path(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, comm, opt, ctx,
                                   t_start, tp);
    const double t0 = PMPI_Wtime();
    int rc = alltoallv_full_path(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, comm, opt, ctx,
                                 t_start, tp);
    tuna_a2av_learn_end(ctx, PMPI_Wtime() - t0, rc);
    return rc;
}

/*
 * auto on device buffers it stages (memory_route.c: the MPI is not CUDA-aware): the agreed
 * statistics (one allreduce per call, which agrees on argument errors too), then the model's
 * cheapest row that declares device memory, run as if the caller had named it (*chosen).
 */
static int device_auto(const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                       const void *recvbuf, const tuna_counts *rcv, MPI_Datatype recvtype,
                       tuna_ctx *ctx, tuna_options *chosen)
{
    tuna_type_info si, ri;
    long long v[TUNA_AGREE_N] = {0};
    const int local = check_args(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, ctx->size,
                                 ctx->rank, ctx, &si, &ri, v, NULL);
    v[TUNA_AGREE_ERROR] = local != MPI_SUCCESS;
    int rc = tuna_agree(ctx, v);
    if (rc != MPI_SUCCESS)
        return rc;
    if (local != MPI_SUCCESS)
        return local;
    if (v[TUNA_AGREE_ERROR])
        return tuna_error_set(MPI_ERR_ARG,
                              "tuna_alltoallv: invalid arguments on another rank; no data moved");
    if ((rc = tuna_a2av_check_totals(v)) != MPI_SUCCESS)
        return rc;
    tuna_a2av_args a = {.ctx = ctx, .rank = ctx->rank, .size = ctx->size};
    tuna_a2av_set_stats(&a, v);
    tuna_choice c;
    if ((rc = tuna_a2av_select_device(ctx, &a, &c)) != MPI_SUCCESS)
        return rc;
    const tuna_algorithm_info *info = &tuna_a2av_table[c.algorithm].desc.info;
    *chosen = (tuna_options){.collective = TUNA_ALLTOALLV, .algorithm = c.algorithm};
    for (int i = 0; i < info->nparams; i++) {
        chosen->set |= 1u << i;
        chosen->value[i] = c.param[i];
    }
    return MPI_SUCCESS;
}

/*
 * Device buffers a row serves, or auto stages (memory_route.c let them through; not vendor,
 * so no fast path): the full path with the communicator's staging transport.
 */
static int alltoallv_device(const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                            void *recvbuf, const tuna_counts *rcv, MPI_Datatype recvtype,
                            MPI_Comm comm, const tuna_options *opt, tuna_ctx *ctx,
                            double t_start)
{
    const tuna_transport *tp;
    int rc = tuna_staged_get(ctx, &tp);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_options chosen;
    if (tuna_a2av_table[opt->algorithm].desc.kind == TUNA_ROW_AUTO) {
        if ((rc = device_auto(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, ctx, &chosen)) !=
            MPI_SUCCESS)
            return rc;
        opt = &chosen;
    }
    rc = alltoallv_full_path(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, comm, opt, ctx,
                             t_start, tp);
    const int copy_rc = tuna_staged_result(tp); /* a failed device copy: the call's error */
    return rc != MPI_SUCCESS ? rc : copy_rc;
}

/*
 * The start tuna_alltoallv and tuna_alltoallv_c share: the clock (stats on), the call's checks
 * and options, the row (*alg), the MPI library itself with no tuna work on top for the vendor
 * row (after the alias check), else the communicator's context (*ctx). Returns the call's
 * result when it is done, or -1 to run *alg on *ctx (also vendor with large counts where the
 * library has no MPI_Alltoallv_c: the row then runs tuna's linear exchange).
 * `large` says which call this is, not the counts: NULL counts given to tuna_alltoallv go to
 * PMPI_Alltoallv, which reports them.
 */
static int alltoallv_begin(bool large, const void *sendbuf, const tuna_counts *sc,
                           MPI_Datatype sendtype, void *recvbuf, const tuna_counts *rcv,
                           MPI_Datatype recvtype, MPI_Comm comm, const tuna_options **opt,
                           const tuna_a2av_algorithm **alg, tuna_ctx **ctx, double *t_start)
{
    *t_start = tuna_stats_on ? PMPI_Wtime() : 0.0;
    int rc = tuna_call_begin(TUNA_ALLTOALLV, comm, opt);
    if (rc != MPI_SUCCESS)
        return rc;
    *alg = &tuna_a2av_table[(*opt)->algorithm];
    if ((*alg)->desc.kind == TUNA_ROW_VENDOR) {
        rc = tuna_a2av_library_alias(large ? "tuna_alltoallv_c" : "tuna_alltoallv", sendbuf,
                                     recvbuf, sc, rcv, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        rc = large ? run_vendor_counts(sendbuf, sc, sendtype, recvbuf, rcv, recvtype, comm,
                                       *t_start)
                   : run_vendor_passthrough(sendbuf, sc->n, sc->d, sendtype, recvbuf, rcv->n,
                                            rcv->d, recvtype, comm, *t_start);
        if (rc >= 0)
            return rc;
    }
    rc = tuna_ctx_get(comm, (*alg)->desc.info.name, ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    return -1;
}

/* tuna_alltoallv's common case, auto between agreements reusing the library's own call or a
 * row's two-rank path with plain arguments (kept to the countdown and one pass over the
 * counts), or a row's two-rank path; a call of auto's learning is timed (ctx->learn_class).
 * -1: anything else (stats on, a collective check, an agreement due, a suspicious argument),
 * which takes the full path. */
static inline __attribute__((always_inline)) int
alltoallv_settled(const tuna_a2av_algorithm *alg, tuna_ctx *ctx, const void *sendbuf,
                  const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm, double t_start)
{
    int rc;
    const bool plain = ctx->argcheck_local && !tuna_stats_on;
    if (alg->desc.kind == TUNA_ROW_AUTO && plain && ctx->auto_countdown > 0 &&
        ctx->agreed_valid) {
        const double t0 = ctx->learn_class ? PMPI_Wtime() : 0;
        if (ctx->reuse_vendor &&
            plainly_valid(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, ctx->size)) {
            ctx->auto_countdown--;
            rc = run_vendor_passthrough(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                        recvcounts, rdispls, recvtype, comm, t_start);
            if (ctx->learn_class)
                tuna_a2av_learn_end(ctx, PMPI_Wtime() - t0, rc);
            return rc;
        }
        const tuna_a2av_algorithm *reused = &tuna_a2av_table[ctx->reuse_algorithm];
        if (reused->desc.pair_tag && ctx->size == 2 &&
            (rc = run_two_rank_exchange(reused, ctx, sendbuf, sendcounts, sdispls, sendtype,
                                        recvbuf, recvcounts, rdispls, recvtype)) >= 0) {
            ctx->auto_countdown--;
            if (ctx->learn_class)
                tuna_a2av_learn_end(ctx, PMPI_Wtime() - t0, rc);
            return rc;
        }
    } else if (alg->desc.pair_tag && ctx->size == 2 && plain &&
               (rc = run_two_rank_exchange(alg, ctx, sendbuf, sendcounts, sdispls, sendtype,
                                           recvbuf, recvcounts, rdispls, recvtype)) >= 0) {
        return rc;
    }
    return -1;
}

/* tuna_alltoallv (int arrays) and tuna_alltoallv_c (large: MPI_Count counts, MPI_Aint
 * displacements) once the buffers' memory kinds are known (device: a row serves them).
 * Inlined into each entry with its width, so the public ones' code stays as it was. Large
 * counts (and vendor without the library's MPI_Alltoallv_c, which the vendor row replaces by
 * linear) take the full path: large blocks travel as messages of derived types, decided by
 * each rank alone. */
static inline __attribute__((always_inline)) int
alltoallv_of(bool large, bool device, const void *sendbuf, const void *sendcounts,
             const void *sdispls, MPI_Datatype sendtype, void *recvbuf, const void *recvcounts,
             const void *rdispls, MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt)
{
    int rc;
    const tuna_a2av_algorithm *alg = NULL;
    tuna_ctx *ctx = NULL;
    double t_start = 0.0;
    const tuna_counts sc = large ? (tuna_counts){.nl = sendcounts, .dl = sdispls}
                                 : (tuna_counts){.n = sendcounts, .d = sdispls},
                      rcv = large ? (tuna_counts){.nl = recvcounts, .dl = rdispls}
                                  : (tuna_counts){.n = recvcounts, .d = rdispls};
    rc = alltoallv_begin(large, sendbuf, &sc, sendtype, recvbuf, &rcv, recvtype, comm, &opt,
                         &alg, &ctx, &t_start);
    if (rc >= 0)
        return rc;
    if (device)
        return alltoallv_device(sendbuf, &sc, sendtype, recvbuf, &rcv, recvtype, comm, opt, ctx,
                                t_start);
    if (!large && (rc = alltoallv_settled(alg, ctx, sendbuf, sendcounts, sdispls, sendtype,
                                          recvbuf, recvcounts, rdispls, recvtype, comm,
                                          t_start)) >= 0)
        return rc;
    return alltoallv_full(sendbuf, &sc, sendtype, recvbuf, &rcv, recvtype, comm, opt, ctx,
                          t_start);
}

/* tuna_alltoallv and tuna_alltoallv_c: device buffers go where memory_route.c sends them (the
 * library's call, or a row staging them). Inlined into both. */
static inline __attribute__((always_inline)) int
alltoallv_public(bool large, const void *sendbuf, const void *sendcounts, const void *sdispls,
                 MPI_Datatype sendtype, void *recvbuf, const void *recvcounts,
                 const void *rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                 const tuna_options *opt)
{
    int rc;
    const bool device = tuna_memory_kinds(sendbuf, recvbuf) != TUNA_MEMORY_HOST;
    if (device && (rc = tuna_memory_alltoallv(large, sendbuf, sendcounts, sdispls, sendtype,
                                              recvbuf, recvcounts, rdispls, recvtype, comm,
                                              opt)) >= 0)
        return rc;
    return alltoallv_of(large, device, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                        recvcounts, rdispls, recvtype, comm, opt);
}

int tuna_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   const tuna_options *opt)
{
    return alltoallv_public(false, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm, opt);
}

int tuna_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     const tuna_options *opt)
{
    return alltoallv_public(true, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm, opt);
}

int tuna_alltoallv_host(bool large, const void *sendbuf, const void *sendcounts,
                        const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                        const void *recvcounts, const void *rdispls, MPI_Datatype recvtype,
                        MPI_Comm comm, const tuna_options *opt)
{
    /* Each width inlined with its constant, as in the public entries. */
    if (large)
        return alltoallv_of(true, false, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                            recvcounts, rdispls, recvtype, comm, opt);
    return alltoallv_of(false, false, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                        recvcounts, rdispls, recvtype, comm, opt);
}
