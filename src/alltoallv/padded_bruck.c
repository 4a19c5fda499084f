/*
 * padded-bruck: the padded Bruck baseline of the TuNA paper. Every block is
 * padded to the global maximum block size B (already allreduced by the core),
 * a uniform radix-2 Bruck exchange runs on the padded slots, and the real
 * bytes are scanned out. There are no explicit rotations: padding writes slot
 * i from the block for rank me+i, and scan-out reads the block from rank s in
 * slot (me-s) mod P. Send blocks are found through sdispls (the authors'
 * public code ignored them).
 *
 * Parameter `datatype` chooses how a round's slots (those with bit k set)
 * move:
 *   0: memcpy them into one contiguous message and back out of one;
 *   1: describe them with an MPI hindexed-block datatype over the padded set
 *      and send/receive in place: the set has two halves, a round sends from
 *      each slot's current half and receives into the other, so nothing is
 *      packed and no buffer is read and written at once.
 * Rounds: ceil(log2 P). Temporary memory: P*B + 2*floor(P/2)*B (datatype=0)
 * or 2*P*B (datatype=1).
 */
#include "alltoallv.h"

#include <stdlib.h>

/* The rounds with derived datatypes; upper[i] tracks which half holds slot i. */
static int rounds_datatype(const tuna_a2av_args *a, char *w, size_t B, unsigned char *upper,
                           tuna_timer *tm)
{
    int P = a->size, me = a->rank, K = tuna_bruck_rounds(P), half = P / 2;
    int *idx = tuna_malloc(sizeof(int) * (size_t)half);
    MPI_Aint *disp = idx ? tuna_malloc(sizeof(MPI_Aint) * 2 * (size_t)half) : NULL;
    if (!disp) {
        free(idx);
        return MPI_ERR_NO_MEM;
    }
    MPI_Datatype blk = MPI_DATATYPE_NULL;
    int rc = tuna_bruck_block_type(B, &blk);
    for (int k = 0; k < K && rc == MPI_SUCCESS; k++) {
        long long d = 1LL << k;
        int n = tuna_bruck_round_slots(P, k, idx);
        for (int j = 0; j < n; j++) {
            size_t i = (size_t)idx[j];
            disp[j] = (MPI_Aint)(((upper[i] ? (size_t)P : 0) + i) * B);
            disp[half + j] = (MPI_Aint)(((upper[i] ? 0 : (size_t)P) + i) * B);
        }
        MPI_Datatype st = MPI_DATATYPE_NULL, rt = MPI_DATATYPE_NULL;
        MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        if (MPI_Type_create_hindexed_block(n, 1, disp, blk, &st) != MPI_SUCCESS ||
            MPI_Type_commit(&st) != MPI_SUCCESS ||
            MPI_Type_create_hindexed_block(n, 1, disp + half, blk, &rt) != MPI_SUCCESS ||
            MPI_Type_commit(&rt) != MPI_SUCCESS)
            rc = tuna_error_set(MPI_ERR_TYPE, "padded-bruck: building the round-%d datatype "
                                              "failed", k);
        tuna_timer_stop(tm, TUNA_PHASE_PREPARE);
        if (rc == MPI_SUCCESS &&
            (rc = MPI_Irecv(w, 1, rt, tuna_bruck_rank(me, -d, P), TUNA_TAG_PADDED_BRUCK,
                            a->ctx->comm, &req[0])) != MPI_SUCCESS)
            rc = tuna_error_set(rc, "padded-bruck: MPI_Irecv of round %d failed", k);
        if (rc == MPI_SUCCESS &&
            (rc = MPI_Isend(w, 1, st, tuna_bruck_rank(me, d, P), TUNA_TAG_PADDED_BRUCK,
                            a->ctx->comm, &req[1])) != MPI_SUCCESS) {
            rc = tuna_error_set(rc, "padded-bruck: MPI_Isend of round %d failed", k);
            PMPI_Cancel(&req[0]);
        }
        if (rc == MPI_SUCCESS && (rc = tuna_waitall(2, req)) != MPI_SUCCESS)
            rc = tuna_error_set(rc, "padded-bruck: MPI_Waitall of round %d failed", k);
        else if (rc != MPI_SUCCESS && req[0] != MPI_REQUEST_NULL)
            PMPI_Wait(&req[0], MPI_STATUS_IGNORE);
        tuna_timer_stop(tm, TUNA_PHASE_DATA);
        if (st != MPI_DATATYPE_NULL)
            MPI_Type_free(&st);
        if (rt != MPI_DATATYPE_NULL)
            MPI_Type_free(&rt);
        for (int j = 0; j < n && rc == MPI_SUCCESS; j++)
            upper[idx[j]] ^= 1;
    }
    if (blk != MPI_DATATYPE_NULL)
        MPI_Type_free(&blk);
    free(idx);
    free(disp);
    return rc;
}

int tuna_a2av_padded_bruck(const tuna_a2av_args *a)
{
    int P = a->size, me = a->rank;
    bool use_datatype = tuna_a2av_param(a, "datatype") == 1;
    size_t B = a->max_block_bytes, wbytes;
    tuna_timer tm;
    tuna_timer_start(&tm);
    tuna_bytes_view v;
    int rc = tuna_bytes_view_open(a, &v);
    if (rc != MPI_SUCCESS)
        return rc;
    if (B == 0) /* every block of every rank is empty (a global fact) */
        return tuna_bytes_view_close(a, &v, MPI_SUCCESS);
    rc = tuna_bruck_padded_size((size_t)P * (use_datatype ? 2 : 1), B, &wbytes);
    char *w = rc == MPI_SUCCESS ? tuna_malloc(wbytes) : NULL;
    unsigned char *upper = w && use_datatype ? tuna_calloc((size_t)P, 1) : NULL;
    if (!w || (use_datatype && !upper)) {
        free(w);
        if (rc == MPI_SUCCESS)
            rc = tuna_error_set(MPI_ERR_NO_MEM, "padded-bruck: out of memory");
        return tuna_bytes_view_close(a, &v, rc);
    }
    tuna_timer_stop(&tm, TUNA_PHASE_PREPARE);

    tuna_bruck_pad(&v, P, me, B, w); /* slot i <- block for me+i: the rotation is free */
    tuna_timer_stop(&tm, TUNA_PHASE_COPY);
    size_t round_temp = 0;
    if (use_datatype)
        rc = rounds_datatype(a, w, B, upper, &tm);
    else
        rc = tuna_bruck_padded_rounds_packed(a, w, B, TUNA_TAG_PADDED_BRUCK, &tm, &round_temp);
    if (rc == MPI_SUCCESS)
        tuna_bruck_scan_out(&v, P, me, true, B, w, upper); /* block from s <- slot me-s */
    tuna_timer_stop(&tm, TUNA_PHASE_REARRANGE);
    tuna_stats_temp(wbytes + round_temp);
    tuna_stats_rounds(tuna_bruck_rounds(P));
    free(w);
    free(upper);
    return tuna_bytes_view_close(a, &v, rc);
}
