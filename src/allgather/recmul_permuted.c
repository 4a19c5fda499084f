/*
 * recmul-permuted allgather (recursive multiplying in distance-halving order):
 * the rounds run from the largest distance k^(m-1) down to 1, and the data is
 * kept in base-k digit-reversed group order, where everything a rank holds,
 * and everything it receives from each partner, is one contiguous range.
 * The last step puts the blocks in rank order with an in-place permutation
 * that follows the permutation's cycles (each block moved once, one block of
 * temporary memory; see tuna_permute_blocks_inplace).
 * Rounds: log_k P. Volume received: (P-1) blocks, plus one local move of
 * every block. Memory: one block + O(P) indices. Any P: folded as recmul.c, whose
 * schedule of steps (tuna_ag_recmul_steps) runs these rounds.
 */
#include "allgather.h"
#include "../device/index_maps.h"

#include <stdlib.h>
#include <string.h>

/* poff[q]: first slot of the group at digit-reversed position q (q = 0..Q); the maps are
 * the device kernels' too (src/device/index_maps.h). */
static int *reversed_offsets(const tuna_fold *f)
{
    int *poff = tuna_malloc(sizeof(int) * ((size_t)f->Q + 1));
    if (poff)
        tuna_map_permuted_offsets(f->k, f->m, f->Q, f->base, f->rem, poff);
    return poff;
}

static void layout_from_offsets(const tuna_fold *f, const int *poff, int *slot_of)
{
    for (int r = 0; r < f->P; r++)
        slot_of[r] = tuna_map_permuted_slot(f->k, f->m, f->base, f->rem, poff, r);
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

/* A leader's state, before the fold-in: the digit-reversed offsets and the permutation's
 * room. */
static int begin(tuna_ag_op *o)
{
    o->poff = reversed_offsets(&o->f);
    o->src = tuna_malloc(sizeof(int) * (size_t)o->a.size);
    return o->poff && o->src ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* After the fold-in: the group's own blocks go to their digit-reversed position. */
static void placed(tuna_ag_op *o)
{
    const tuna_fold *f = &o->f;
    const size_t B = o->a.block;
    int gsize = f->last - f->first + 1;
    tuna_tp_move(o->a.tp, o->a.buf + (size_t)o->poff[tuna_fold_reverse(f, f->group)] * B,
                 o->a.buf + (size_t)f->first * B, (size_t)gsize * B);
}

/* The distance-halving rounds among leaders, on the digit-reversed layout (o->d: the next
 * round's distance, o->L the groups a leader holds in it; o->i the rounds posted). */
static bool post_round(tuna_ag_op *o, int *n, int *post_rc)
{
    const tuna_ag_args *a = &o->a;
    const tuna_fold *f = &o->f;
    if (o->i == 0) {
        o->d = f->Q / f->k;
        o->L = 1;
    } else {
        o->d /= f->k;
        o->L *= f->k;
    }
    /* Round with distance d: a leader holds L = Q/(k d) groups, an aligned range of
     * digit-reversed positions; so does each partner (differing in digit log_k d). */
    const int d = o->d, L = o->L, g = f->group, rg = tuna_fold_reverse(f, g);
    if (d < 1)
        return false;
    const size_t B = a->block;
    const int *poff = o->poff, tag = TUNA_TAG_AG_RECMUL_PERMUTED + a->tag_shift;
    int digit = (g / d) % f->k, rc = MPI_SUCCESS;
    int mine = rg / L * L;
    *n = 0;
    for (int j = 0; j < f->k && rc == MPI_SUCCESS; j++) {
        if (j == digit)
            continue;
        int pg = g + (j - digit) * d;
        int peer = tuna_fold_start(f, pg + 1) - 1;
        int theirs = tuna_fold_reverse(f, pg) / L * L;
        rc = tuna_posted(tuna_tp_irecv(a->tp, a->buf + (size_t)poff[theirs] * B,
                                       (size_t)(poff[theirs + L] - poff[theirs]) * B, peer, tag,
                                       a->ctx->comm, &o->req[*n]),
                         n);
        if (rc == MPI_SUCCESS)
            rc = tuna_posted(tuna_tp_isend(a->tp, a->buf + (size_t)poff[mine] * B,
                                           (size_t)(poff[mine + L] - poff[mine]) * B, peer, tag,
                                           a->ctx->comm, &o->req[*n]),
                             n);
    }
    *post_rc = rc;
    return true;
}

/* After the rounds: the blocks in rank order, in place (unless the data is void). */
static int end(tuna_ag_op *o)
{
    tuna_timer tm;
    tuna_timer_start(&tm);
    int rc = MPI_SUCCESS;
    if (o->op.comm_rc == MPI_SUCCESS) {
        layout_from_offsets(&o->f, o->poff, o->src);
        rc = tuna_permute_blocks_inplace(o->a.tp, o->a.buf, o->a.block, o->a.size, o->src);
    }
    tuna_timer_stop(&tm, TUNA_PHASE_REARRANGE);
    return rc;
}

static const tuna_ag_rounds permuted_rounds = {.name = "recmul-permuted allgather",
                                               .begin = begin,
                                               .placed = placed,
                                               .post = post_round,
                                               .end = end};

int tuna_ag_recmul_permuted_step(tuna_ag_op *o, int wait_rc)
{
    return tuna_ag_recmul_steps(o, wait_rc, (int)tuna_ag_param(&o->a, "k"), &permuted_rounds);
}
