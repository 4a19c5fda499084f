/*
 * recmul-permuted allgather (recursive multiplying in distance-halving order):
 * the rounds run from the largest distance k^(m-1) down to 1, and the data is
 * kept in base-k digit-reversed group order, where everything a rank holds,
 * and everything it receives from each partner, is one contiguous range.
 * The last step puts the blocks in rank order with an in-place permutation
 * that follows the permutation's cycles (each block moved once, one block of
 * temporary memory; see tuna_permute_blocks_inplace).
 * Rounds: log_k P. Volume received: (P-1) blocks, plus one local move of
 * every block. Memory: one block + O(P) indices. Any P: folded as recmul.c.
 */
#include "allgather.h"

#include <stdlib.h>
#include <string.h>

/* poff[q]: first slot of the group at digit-reversed position q (q = 0..Q). */
static int *reversed_offsets(const tuna_fold *f)
{
    int *poff = tuna_malloc(sizeof(int) * ((size_t)f->Q + 1));
    if (!poff)
        return NULL;
    poff[0] = 0;
    for (int q = 0; q < f->Q; q++) {
        int g = tuna_fold_reverse(f, q);
        poff[q + 1] = poff[q] + tuna_fold_start(f, g + 1) - tuna_fold_start(f, g);
    }
    return poff;
}

static void layout_from_offsets(const tuna_fold *f, const int *poff, int *slot_of)
{
    for (int r = 0; r < f->P; r++) {
        int g = tuna_fold_group_of(f, r);
        slot_of[r] = poff[tuna_fold_reverse(f, g)] + r - tuna_fold_start(f, g);
    }
}

int tuna_ag_permuted_layout(int P, int k, int *slot_of)
{
    tuna_fold f;
    tuna_fold_init(&f, P, k, 0);
    int *poff = reversed_offsets(&f);
    if (!poff)
        return MPI_ERR_NO_MEM;
    layout_from_offsets(&f, poff, slot_of);
    free(poff);
    return MPI_SUCCESS;
}

/* The distance-halving rounds among leaders, on the digit-reversed layout (req: room for
 * 2(k-1) requests). A failed round is complete when recorded, and the rounds go on
 * (allgather.h). */
static void rounds(const tuna_ag_args *a, const tuna_fold *f, const int *poff, MPI_Request *req,
                   int *comm_rc)
{
    const size_t B = a->block;
    const int g = f->group, rg = tuna_fold_reverse(f, g);
    /* Round with distance d: a leader holds L = Q/(k d) groups, an aligned range of
     * digit-reversed positions; so does each partner (differing in digit log_k d). */
    for (int d = f->Q / f->k, L = 1; d >= 1; d /= f->k, L *= f->k) {
        int digit = (g / d) % f->k, nreq = 0, rc = MPI_SUCCESS;
        int mine = rg / L * L;
        for (int j = 0; j < f->k && rc == MPI_SUCCESS; j++) {
            if (j == digit)
                continue;
            int pg = g + (j - digit) * d;
            int peer = tuna_fold_start(f, pg + 1) - 1;
            int theirs = tuna_fold_reverse(f, pg) / L * L;
            rc = tuna_posted(tuna_irecv_bytes(a->buf + (size_t)poff[theirs] * B,
                                              (size_t)(poff[theirs + L] - poff[theirs]) * B, peer,
                                              TUNA_TAG_AG_RECMUL_PERMUTED, a->ctx->comm,
                                              &req[nreq]),
                             &nreq);
            if (rc == MPI_SUCCESS)
                rc = tuna_posted(tuna_isend_bytes(a->buf + (size_t)poff[mine] * B,
                                                  (size_t)(poff[mine + L] - poff[mine]) * B, peer,
                                                  TUNA_TAG_AG_RECMUL_PERMUTED, a->ctx->comm,
                                                  &req[nreq]),
                                 &nreq);
        }
        if ((rc = tuna_requests_finish(nreq, req, rc)) != MPI_SUCCESS)
            *comm_rc = tuna_first_error(*comm_rc, tuna_error_set(rc, "recmul-permuted allgather: "
                                                                     "exchange failed"));
        if (d == 1)
            break;
    }
}

int tuna_ag_recmul_permuted(const tuna_ag_args *a)
{
    const int P = a->size, me = a->rank;
    tuna_fold f;
    tuna_fold_init(&f, P, (int)tuna_ag_param(a, "k"), me);
    tuna_stats_rounds(f.m + (f.Q < P ? 2 : 0));
    if (me != f.last)
        return tuna_ag_fold_member(a, &f);
    /* Everything the steps use, before the first one. Requests: 2(k-1) in a round, at most
     * that many when folding. */
    int *poff = reversed_offsets(&f);
    int *src = tuna_malloc(sizeof(int) * (size_t)P);
    MPI_Request *req = tuna_malloc(sizeof(MPI_Request) * 2 * (size_t)f.k);
    if (!poff || !src || !req) {
        free(poff);
        free(src);
        free(req);
        return MPI_ERR_NO_MEM;
    }
    int comm_rc = MPI_SUCCESS, rc = MPI_SUCCESS;
    tuna_ag_fold_in(a, &f, req, &comm_rc);
    /* The group's own blocks go to their digit-reversed position first. */
    const size_t B = a->block;
    int gsize = f.last - f.first + 1;
    memmove(a->buf + (size_t)poff[tuna_fold_reverse(&f, f.group)] * B,
            a->buf + (size_t)f.first * B, (size_t)gsize * B);
    if (f.Q > 1)
        rounds(a, &f, poff, req, &comm_rc);
    tuna_timer tm;
    tuna_timer_start(&tm);
    if (comm_rc == MPI_SUCCESS) { /* else the data is void: no need to order it */
        layout_from_offsets(&f, poff, src);
        rc = tuna_permute_blocks_inplace(a->buf, B, P, src);
    }
    tuna_timer_stop(&tm, TUNA_PHASE_REARRANGE);
    if (rc == MPI_SUCCESS)
        tuna_ag_fold_out(a, &f, req, &comm_rc);
    free(poff);
    free(src);
    free(req);
    return tuna_first_error(comm_rc, rc);
}
