/*
 * recmul-permuted allreduce: a radix-k reduce-scatter followed by a radix-k
 * allgather (Rabenseifner's scheme generalised to k partners per round), with
 * ownership of the vector's segments permuted so every message is one
 * contiguous range.
 *
 * The vector is cut into Q segments (Q = k^m leaders, see tuna_fold). The
 * reduce-scatter runs in distance-doubling order (distance 1 first, where the
 * data is largest and, with node-major ranks, stays inside a node); leader g
 * ends up owning segment rev(g), rev being base-k digit reversal, because in
 * round t it keeps the sub-range selected by its digit t and those sub-ranges
 * are contiguous only in digit-reversed order. The allgather then runs in
 * distance-halving order (largest distance first, least data), each rank
 * receiving every partner's range contiguously into its final place. Unlike
 * the allgather, no data permutation is needed at the end: a reduction keeps
 * every element at its position, so the permutation is one of ownership.
 *
 * Operand order: round t combines k partial results, each covering a
 * contiguous range of k^t groups, in digit order, so non-commutative ops see
 * their operands in rank order.
 * Rounds: 2 log_k Q (+2 if Q < P). Elements sent per leader: about
 * 2 n (Q-1)/Q. Memory: (k-1) ceil(n/k)-ish elements (n while folding in).
 * The schedule of steps with folding is the family's (tuna_ar_recmul_steps, fold.c); these
 * are its rounds, one per step: the reduce-scatter's, then the allgather's.
 */
#include "allreduce.h"

#include <stdlib.h>

/* A leader's state: the segments' offsets, the temporaries, the round in flight. */
typedef struct plan {
    MPI_Aint *off;      /* off[p]: first element of segment p; off[Q] = n */
    int g, rg;          /* this leader's group and its digit-reversed position */
    char **pool;        /* pool[0..k-2]: temporaries; pool[k..2k-1]: tmp[j] of a round */
    void **mem;         /* their allocations */
    void *fold_mem;     /* the fold-in's one vector (mem: its allocation) */
    char *fold_tmp;
    bool gather;        /* the allgather rounds (else the reduce-scatter's) */
    int d, L;           /* the round in flight: distance, range length */
    int digit, my0, my1;
} plan;

static int range_count(const plan *pl, int p0, int p1)
{
    return (int)(pl->off[p1] - pl->off[p0]);
}

static char *range_ptr(const tuna_ar_op *o, const plan *pl, char *base, int p0)
{
    return tuna_ar_elem(&o->a, base, pl->off[p0]);
}

/* Leader rank of the group that differs from mine only in digit value j at distance d. */
static int partner(const tuna_ar_op *o, const plan *pl, int j)
{
    return tuna_fold_start(&o->f, pl->g + (j - pl->digit) * pl->d + 1) - 1;
}

static int post(tuna_ar_op *o, int *nreq, bool send, char *buf, int count, int peer, int tag)
{
    if (count == 0) /* both sides compute the same sizes, so both skip */
        return MPI_SUCCESS;
    return tuna_posted(tuna_ar_post(&o->a, send, buf, count, peer, tag + o->a.tag_shift,
                                    &o->req[*nreq]),
                       nreq);
}

static void state_free(tuna_ar_op *o)
{
    plan *pl = o->state;
    if (pl) {
        if (pl->mem)
            for (int i = 0; i < o->f.k - 1; i++)
                free(pl->mem[i]);
        TUNA_FREE_ALL(pl->mem, pl->pool, pl->off, pl->fold_mem);
    }
    tuna_ar_state_release(o);
}

/* Fold-in with one vector-sized temporary (members are reduced one at a time). */
static int begin(tuna_ar_op *o)
{
    plan *pl = tuna_calloc(1, sizeof *pl);
    if (!pl)
        return MPI_ERR_NO_MEM;
    o->state = pl;
    o->state_free = state_free;
    if (o->f.last == o->f.first)
        return MPI_SUCCESS;
    if (!(pl->fold_tmp = tuna_ar_tmp(&o->a, o->a.count, &pl->fold_mem)))
        return tuna_error_set(MPI_ERR_NO_MEM, "recmul-permuted allreduce: out of memory");
    o->fold_tmp = &pl->fold_tmp;
    o->fold_ntmp = 1;
    return MPI_SUCCESS;
}

/* After the fold-in: the leaders' buffers (with Q > 1: there are rounds). */
static int placed(tuna_ar_op *o)
{
    plan *pl = o->state;
    const tuna_ar_args *a = &o->a;
    const int k = o->f.k, Q = o->f.Q;
    free(pl->fold_mem);
    pl->fold_mem = NULL;
    if (Q == 1)
        return MPI_SUCCESS;
    pl->g = o->f.group;
    pl->rg = tuna_fold_reverse(&o->f, o->f.group);
    pl->off = tuna_malloc(sizeof(MPI_Aint) * ((size_t)Q + 1));
    pl->pool = tuna_malloc(sizeof(char *) * 2 * (size_t)k);
    pl->mem = tuna_calloc((size_t)k, sizeof(void *));
    if (!pl->off || !pl->pool || !pl->mem)
        return tuna_error_set(MPI_ERR_NO_MEM, "recmul-permuted allreduce: out of memory");
    /* Segment p has n/Q elements, one more for the first n % Q. */
    const int n = a->count, base = n / Q, extra = n % Q;
    pl->off[0] = 0;
    for (int p = 0; p < Q; p++)
        pl->off[p + 1] = pl->off[p] + base + (p < extra);
    /* The first round's sub-ranges are the largest: Q/k segments, the first ones. */
    int chunk = range_count(pl, 0, Q / k);
    for (int i = 0; i < k - 1; i++)
        if (!(pl->pool[i] = tuna_ar_tmp(a, chunk, &pl->mem[i])))
            return tuna_error_set(MPI_ERR_NO_MEM, "recmul-permuted allreduce: out of memory");
    tuna_stats_temp((size_t)(k - 1) * (size_t)chunk * (size_t)a->extent);
    return MPI_SUCCESS;
}

/* The next round: the reduce-scatter's (distance 1 first), then the allgather's (the
 * largest distance first). */
static bool post_round(tuna_ar_op *o, int *n, int *post_rc)
{
    plan *pl = o->state;
    const int k = o->f.k, Q = o->f.Q;
    if (Q == 1)
        return false;
    if (o->i == 0) {
        pl->d = 1;
        pl->L = Q;
    } else if (!pl->gather) {
        pl->d *= k;
        pl->L /= k;
        if (pl->d >= Q) {
            pl->gather = true;
            pl->d = Q / k;
            pl->L = k;
        }
    } else {
        pl->d /= k;
        pl->L *= k;
        if (pl->d < 1)
            return false;
    }
    const int d = pl->d, S = pl->rg / pl->L * pl->L, sub = pl->L / k;
    char **tmp = pl->pool + k; /* tmp[j]: where digit j's partial value arrives */
    int rc = MPI_SUCCESS;
    pl->digit = (pl->g / d) % k;
    pl->my0 = S + pl->digit * sub;
    pl->my1 = pl->my0 + sub;
    if (!pl->gather)
        for (int j = 0, next = 0; j < k; j++)
            tmp[j] = j == pl->digit ? NULL : pl->pool[next++];
    for (int j = 0; j < k && rc == MPI_SUCCESS; j++) {
        if (j == pl->digit)
            continue;
        const int peer = partner(o, pl, j), q0 = S + j * sub;
        if (!pl->gather) {
            rc = post(o, n, false, tmp[j], range_count(pl, pl->my0, pl->my1), peer,
                      TUNA_TAG_AR_PERMUTED_RS);
            if (rc == MPI_SUCCESS)
                rc = post(o, n, true, range_ptr(o, pl, o->a.rbuf, q0),
                          range_count(pl, q0, q0 + sub), peer, TUNA_TAG_AR_PERMUTED_RS);
        } else {
            rc = post(o, n, false, range_ptr(o, pl, o->a.rbuf, q0),
                      range_count(pl, q0, q0 + sub), peer, TUNA_TAG_AR_PERMUTED_AG);
            if (rc == MPI_SUCCESS)
                rc = post(o, n, true, range_ptr(o, pl, o->a.rbuf, pl->my0),
                          range_count(pl, pl->my0, pl->my0 + sub), peer,
                          TUNA_TAG_AR_PERMUTED_AG);
        }
    }
    *post_rc = rc;
    return true;
}

/* A reduce-scatter round complete: combine the k partial values of my sub-range, mine in
 * rbuf, digit j's in tmp[j]. */
static int received(tuna_ar_op *o)
{
    plan *pl = o->state;
    const tuna_ar_args *a = &o->a;
    if (pl->gather || o->op.comm_rc != MPI_SUCCESS)
        return MPI_SUCCESS;
    char **tmp = pl->pool + o->f.k;
    const int k = o->f.k, digit = pl->digit, n = range_count(pl, pl->my0, pl->my1);
    char *mine = range_ptr(o, pl, a->rbuf, pl->my0);
    int rc = MPI_SUCCESS;
    if (a->commute) {
        for (int j = 0; j < k && rc == MPI_SUCCESS; j++)
            if (j != digit)
                rc = tuna_ar_reduce(a, tmp[j], mine, n);
        return rc;
    }
    /* Right fold v_0 op (v_1 op (... op v_{k-1})) into digit k-1's buffer. */
    char *acc = digit == k - 1 ? mine : tmp[k - 1];
    for (int j = k - 2; j >= 0 && rc == MPI_SUCCESS; j--)
        rc = tuna_ar_reduce(a, j == digit ? mine : tmp[j], acc, n);
    if (rc == MPI_SUCCESS && acc != mine)
        rc = tuna_ar_copy(a, acc, mine, n);
    return rc;
}

static const tuna_ar_rounds permuted_rounds = {.begin = begin,
                                               .placed = placed,
                                               .post = post_round,
                                               .received = received,
                                               .name = "recmul-permuted allreduce",
                                               .per_level = 2};

int tuna_ar_recmul_permuted_step(tuna_ar_op *o, int wait_rc)
{
    return tuna_ar_recmul_steps(o, wait_rc, (int)tuna_ar_param(&o->a, "k"), &permuted_rounds);
}
