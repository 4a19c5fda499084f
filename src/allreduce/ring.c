/*
 * ring allreduce: a ring reduce-scatter (P-1 rounds; segment s of the vector
 * travels once around the ring, reduced at every hop) followed by a ring
 * allgather of the reduced segments (P-1 rounds).
 * Rounds: 2(P-1). Volume sent per rank: 2 n (P-1)/P elements.
 * Memory: one segment (ceil(n/P) elements).
 * Any P: segments of n/P or n/P + 1 elements. Non-commutative ops: the ring
 * combines operands in a rotated order, so it runs recursive-doubling instead
 * (which keeps MPI's rank order), logged at TUNA_VERBOSE >= 1.
 * The ring phases' steps (tuna_ar_ring_phases_step) are kring's too: one round per step,
 * o->phase the phase, o->i its rounds posted so far.
 */
#include "allreduce.h"

#include <stdlib.h>

void tuna_ar_ring_state_free(tuna_ar_op *o)
{
    tuna_ar_ring_state *st = o->state;
    if (st)
        TUNA_FREE_ALL(st->tmp_mem, st->off, st->cnt);
    tuna_ar_state_release(o);
}

/* Round s of phase ph: rcount elements from left (into tmp when reducing, else into their
 * segment) while scount go right. */
static int post_round(tuna_ar_op *o, const tuna_ar_ring_phase *ph, int s)
{
    const tuna_ar_args *a = &o->a;
    const tuna_ar_ring_state *st = o->state;
    const int m = ph->m, me = ph->me, tag = ph->tag + a->tag_shift;
    const int ss = ph->reduce ? (me - s + m) % m : (me + 1 - s + m) % m;
    const int rs = ph->reduce ? (me - s - 1 + m) % m : (me - s + m) % m;
    char *rbuf = ph->reduce ? st->tmp : tuna_ar_elem(a, a->rbuf, ph->off[rs]);
    int n = 0;
    int rc = tuna_posted(tuna_ar_irecv(a, rbuf, ph->cnt[rs], ph->left, tag, &o->pair[n]), &n);
    if (rc == MPI_SUCCESS)
        rc = tuna_posted(tuna_ar_isend(a, tuna_ar_elem(a, a->rbuf, ph->off[ss]), ph->cnt[ss],
                                       ph->right, tag, &o->pair[n]),
                         &n);
    return tuna_op_step_wait(&o->op, o->pair, n, rc);
}

int tuna_ar_ring_phases_step(tuna_ar_op *o, int wait_rc)
{
    const tuna_ar_ring_state *st = o->state;
    const tuna_ar_args *a = &o->a;
    if (o->i > 0) { /* round o->i - 1 of the phase completed */
        const tuna_ar_ring_phase *ph = &st->phase[o->phase];
        tuna_op_step_record(&o->op, wait_rc,
                            "allreduce ring: exchange with ranks %d and %d failed", ph->left,
                            ph->right);
        /* After a failed step the data is void: the steps go on, the reductions stop. */
        if (ph->reduce && o->op.comm_rc == MPI_SUCCESS) {
            const int rs = (ph->me - o->i + ph->m) % ph->m;
            int rc = tuna_ar_reduce(a, st->tmp, tuna_ar_elem(a, a->rbuf, ph->off[rs]),
                                    ph->cnt[rs]);
            if (rc != MPI_SUCCESS)
                return tuna_op_step_done(&o->op, rc);
        }
    }
    for (; o->phase < st->nphases; o->phase++, o->i = 0) {
        const tuna_ar_ring_phase *ph = &st->phase[o->phase];
        if (o->i < ph->m - 1)
            return post_round(o, ph, o->i++);
        tuna_stats_rounds(ph->m - 1);
    }
    return tuna_op_step_done(&o->op, o->op.comm_rc);
}

/* The first step of a ring row: recursive doubling for a non-commutative op, else the ring
 * state (tmp: `tmp_count` elements; offsets and counts for `nindex` segments). false: the
 * step is decided (*r its answer); true: the row fills the state's phases. */
bool tuna_ar_ring_begin(tuna_ar_op *o, int wait_rc, const char *row, int tmp_count, int nindex,
                        int *r)
{
    if (!o->a.commute) {
        tuna_log(1, "allreduce %s: non-commutative op, running recursive-doubling instead", row);
        o->run = tuna_ar_recursive_doubling_step;
        *r = o->run(o, wait_rc);
        return false;
    }
    tuna_ar_ring_state *st = tuna_calloc(1, sizeof *st);
    if (!st) {
        *r = tuna_op_step_done(&o->op, MPI_ERR_NO_MEM);
        return false;
    }
    o->state = st;
    o->state_free = tuna_ar_ring_state_free;
    st->off = tuna_malloc(sizeof(MPI_Aint) * (size_t)nindex);
    st->cnt = tuna_malloc(sizeof(int) * (size_t)nindex);
    if (st->off && st->cnt)
        st->tmp = tuna_ar_tmp(&o->a, tmp_count, &st->tmp_mem);
    if (!st->tmp) {
        *r = tuna_op_step_done(&o->op, MPI_ERR_NO_MEM);
        return false;
    }
    return true;
}

int tuna_ar_ring_step(tuna_ar_op *o, int wait_rc)
{
    const int P = o->a.size, me = o->a.rank, n = o->a.count;
    int r;
    if (!o->state) {
        if (!tuna_ar_ring_begin(o, wait_rc, "ring", n / P + 1, P, &r))
            return r;
        tuna_ar_ring_state *st = o->state;
        for (int j = 0; j < P; j++) {
            st->off[j] = (MPI_Aint)j * (n / P) + (j < n % P ? j : n % P);
            st->cnt[j] = n / P + (j < n % P);
        }
        const int left = (me - 1 + P) % P, right = (me + 1) % P;
        st->phase[0] = (tuna_ar_ring_phase){P, me, left, right, st->off, st->cnt,
                                            TUNA_TAG_AR_RING_RS, true};
        st->phase[1] = (tuna_ar_ring_phase){P, me, left, right, st->off, st->cnt,
                                            TUNA_TAG_AR_RING_AG, false};
        st->nphases = 2;
    }
    return tuna_ar_ring_phases_step(o, wait_rc);
}
