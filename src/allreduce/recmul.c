/*
 * recmul allreduce (recursive multiplying, radix k): in round r = 0..m-1 a
 * rank exchanges its whole partial result with the k-1 ranks that differ
 * from it in base-k digit r (distance k^r) and combines the k values in rank
 * order, v_0 op (v_1 op (... op v_{k-1})), the same association on every
 * rank, so all ranks get identical results and non-commutative ops keep
 * MPI's operand order.
 * Rounds: log_k P. Volume sent per rank: (k-1) n log_k P elements.
 * Memory: (k-1) n elements.
 * Any P: with Q = k^m the largest power of k not above P, ranks fold into Q
 * groups of consecutive ranks (at most k each); members send their vector
 * to the group's last rank, which reduces the group in rank order before the
 * rounds and sends the result back after them (2 extra rounds). The schedule of steps
 * with folding is the family's (tuna_ar_recmul_steps, fold.c); these are its rounds.
 */
#include "allreduce.h"

#include <stdlib.h>

/* A leader's buffers: pool[0] is rbuf, pool[1..k-1] temporaries (mem: their allocations);
 * slot[j]: the pool index holding digit j's value in the round in flight; cur: mine. */
typedef struct recmul_state {
    char **pool;
    void **mem;
    int *slot;
    int cur, d; /* d: the round in flight's distance */
} recmul_state;

static void state_free(tuna_ar_op *o)
{
    recmul_state *st = o->state;
    if (st) {
        if (st->mem)
            for (int i = 1; i < o->f.k; i++)
                free(st->mem[i]);
        TUNA_FREE_ALL(st->mem, st->pool, st->slot);
    }
    tuna_ar_state_release(o);
}

static int begin(tuna_ar_op *o)
{
    const int k = o->f.k;
    recmul_state *st = tuna_calloc(1, sizeof *st);
    if (!st)
        return MPI_ERR_NO_MEM;
    o->state = st;
    o->state_free = state_free;
    st->pool = tuna_malloc(sizeof(char *) * (size_t)k);
    st->mem = tuna_calloc((size_t)k, sizeof(void *));
    st->slot = tuna_malloc(sizeof(int) * (size_t)k);
    if (!st->pool || !st->mem || !st->slot)
        return tuna_error_set(MPI_ERR_NO_MEM, "recmul allreduce: out of memory");
    st->pool[0] = o->a.rbuf;
    for (int i = 1; i < k; i++)
        if (!(st->pool[i] = tuna_ar_tmp(&o->a, o->a.count, &st->mem[i])))
            return tuna_error_set(MPI_ERR_NO_MEM, "recmul allreduce: out of memory");
    tuna_stats_temp((size_t)(k - 1) * (size_t)o->a.count * (size_t)o->a.extent);
    o->fold_tmp = st->pool + 1;
    o->fold_ntmp = k - 1;
    return MPI_SUCCESS;
}

/* The next of the log_k Q rounds among leaders: the whole partial result to and from the
 * k-1 partners at distance d. */
static bool post_round(tuna_ar_op *o, int *n, int *post_rc)
{
    const tuna_ar_args *a = &o->a;
    const tuna_fold *f = &o->f;
    recmul_state *st = o->state;
    const int k = f->k, g = f->group;
    st->d = o->i == 0 ? 1 : st->d * k;
    const int d = st->d;
    if (d >= f->Q)
        return false;
    const int digit = (g / d) % k, tag = TUNA_TAG_AR_RECMUL + a->tag_shift;
    /* slot[j]: pool index holding the value of digit j (mine stays where it is). */
    for (int j = 0, next = 0; j < k; j++) {
        if (j == digit) {
            st->slot[j] = st->cur;
            continue;
        }
        if (next == st->cur)
            next++;
        st->slot[j] = next++;
    }
    int rc = MPI_SUCCESS;
    for (int j = 0; j < k && rc == MPI_SUCCESS; j++) {
        if (j == digit)
            continue;
        int peer = tuna_fold_start(f, g + (j - digit) * d + 1) - 1;
        rc = tuna_posted(tuna_ar_irecv(a, st->pool[st->slot[j]], a->count, peer, tag, &o->req[*n]),
                         n);
        if (rc == MPI_SUCCESS)
            rc = tuna_posted(tuna_ar_isend(a, st->pool[st->cur], a->count, peer, tag, &o->req[*n]),
                             n);
    }
    *post_rc = rc;
    return true;
}

/* Right fold in digit order: the result lands in the buffer of digit k-1. */
static int received(tuna_ar_op *o)
{
    recmul_state *st = o->state;
    const int k = o->f.k;
    int rc = MPI_SUCCESS;
    for (int j = k - 2; j >= 0 && rc == MPI_SUCCESS && o->op.comm_rc == MPI_SUCCESS; j--)
        rc = tuna_ar_reduce(&o->a, st->pool[st->slot[j]], st->pool[st->slot[k - 1]],
                            o->a.count);
    st->cur = st->slot[k - 1];
    return rc;
}

/* The result into rbuf, where the last round left it elsewhere. */
static int end(tuna_ar_op *o)
{
    recmul_state *st = o->state;
    if (o->op.comm_rc == MPI_SUCCESS && st->cur != 0)
        return tuna_ar_copy(&o->a, st->pool[st->cur], o->a.rbuf, o->a.count);
    return MPI_SUCCESS;
}

static const tuna_ar_rounds recmul_rounds = {.begin = begin,
                                             .post = post_round,
                                             .received = received,
                                             .end = end,
                                             .name = "recmul allreduce",
                                             .per_level = 1};

int tuna_ar_recmul_k_step(tuna_ar_op *o, int wait_rc, int k)
{
    return tuna_ar_recmul_steps(o, wait_rc, k, &recmul_rounds);
}

int tuna_ar_recmul_step(tuna_ar_op *o, int wait_rc)
{
    return tuna_ar_recmul_k_step(o, wait_rc, (int)tuna_ar_param(&o->a, "k"));
}
