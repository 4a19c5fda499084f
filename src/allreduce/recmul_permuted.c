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
 */
#include "allreduce.h"

#include <stdlib.h>

typedef struct plan {
    const tuna_ar_args *a;
    const tuna_fold *f;
    MPI_Aint *off;      /* off[p]: first element of segment p; off[Q] = n */
    int g, rg;          /* this leader's group and its digit-reversed position */
    MPI_Request *req;   /* 2(k-1) */
} plan;

static int range_count(const plan *pl, int p0, int p1)
{
    return (int)(pl->off[p1] - pl->off[p0]);
}

static char *range_ptr(const plan *pl, char *base, int p0)
{
    return tuna_ar_elem(pl->a, base, pl->off[p0]);
}

/* Leader rank of the group that differs from mine only in digit value j at distance d. */
static int partner(const plan *pl, int d, int digit, int j)
{
    return tuna_fold_start(pl->f, pl->g + (j - digit) * d + 1) - 1;
}

static int post(const plan *pl, int *nreq, bool send, char *buf, int count, int peer, int tag)
{
    if (count == 0) /* both sides compute the same sizes, so both skip */
        return MPI_SUCCESS;
    MPI_Comm comm = pl->a->ctx->comm;
    MPI_Request *r = &pl->req[*nreq];
    return tuna_posted(send ? MPI_Isend(buf, count, pl->a->type, peer, tag, comm, r)
                            : MPI_Irecv(buf, count, pl->a->type, peer, tag, comm, r),
                       nreq);
}

/* End of a round: every request complete; a failure recorded in *comm_rc (the rounds go on). */
static void finish(const plan *pl, int nreq, int rc, const char *what, int *comm_rc)
{
    if ((rc = tuna_requests_finish(nreq, pl->req, rc)) != MPI_SUCCESS)
        *comm_rc = tuna_first_error(*comm_rc, tuna_error_set(rc, "recmul-permuted allreduce: "
                                                                 "%s exchange failed", what));
}

/* Combine the k partial values of sub-range [p0, p1): mine in rbuf, digit j's in tmp[j]. */
static int combine(const plan *pl, int p0, int p1, int digit, char **tmp)
{
    const tuna_ar_args *a = pl->a;
    const int k = pl->f->k, n = range_count(pl, p0, p1);
    char *mine = range_ptr(pl, a->rbuf, p0);
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

/* The reduce-scatter rounds: a failed round is recorded in *comm_rc and the rounds go on
 * without combining (allreduce.h); a failed combination (local) ends them. */
static int reduce_scatter(const plan *pl, char **pool, int *comm_rc)
{
    const int k = pl->f->k, Q = pl->f->Q;
    char **tmp = pool + k; /* tmp[j]: where digit j's partial value arrives */
    int rc = MPI_SUCCESS;
    for (int d = 1, L = Q; d < Q && rc == MPI_SUCCESS; d *= k, L /= k) {
        int digit = (pl->g / d) % k, S = pl->rg / L * L, sub = L / k, nreq = 0;
        for (int j = 0, next = 0; j < k; j++)
            tmp[j] = j == digit ? NULL : pool[next++];
        int my0 = S + digit * sub, my1 = my0 + sub;
        for (int j = 0; j < k && rc == MPI_SUCCESS; j++) {
            if (j == digit)
                continue;
            int peer = partner(pl, d, digit, j), q0 = S + j * sub;
            rc = post(pl, &nreq, false, tmp[j], range_count(pl, my0, my1), peer,
                      TUNA_TAG_AR_PERMUTED_RS);
            if (rc == MPI_SUCCESS)
                rc = post(pl, &nreq, true, range_ptr(pl, pl->a->rbuf, q0),
                          range_count(pl, q0, q0 + sub), peer, TUNA_TAG_AR_PERMUTED_RS);
        }
        finish(pl, nreq, rc, "reduce-scatter", comm_rc);
        rc = *comm_rc == MPI_SUCCESS ? combine(pl, my0, my1, digit, tmp) : MPI_SUCCESS;
    }
    return rc;
}

static void allgather(const plan *pl, int *comm_rc)
{
    const int k = pl->f->k, Q = pl->f->Q;
    for (int d = Q / k, L = k; d >= 1; d /= k, L *= k) {
        int digit = (pl->g / d) % k, S = pl->rg / L * L, sub = L / k, nreq = 0, rc = MPI_SUCCESS;
        int my0 = S + digit * sub;
        for (int j = 0; j < k && rc == MPI_SUCCESS; j++) {
            if (j == digit)
                continue;
            int peer = partner(pl, d, digit, j), q0 = S + j * sub;
            rc = post(pl, &nreq, false, range_ptr(pl, pl->a->rbuf, q0),
                      range_count(pl, q0, q0 + sub), peer, TUNA_TAG_AR_PERMUTED_AG);
            if (rc == MPI_SUCCESS)
                rc = post(pl, &nreq, true, range_ptr(pl, pl->a->rbuf, my0),
                          range_count(pl, my0, my0 + sub), peer, TUNA_TAG_AR_PERMUTED_AG);
        }
        finish(pl, nreq, rc, "allgather", comm_rc);
    }
}

/* Fold-in with one vector-sized temporary (members are reduced one at a time). */
static int fold_in(const tuna_ar_args *a, const tuna_fold *f, MPI_Request *req, int *comm_rc)
{
    if (f->last == f->first)
        return MPI_SUCCESS;
    void *mem;
    char *tmp = tuna_ar_tmp(a, a->count, &mem);
    if (!tmp)
        return tuna_error_set(MPI_ERR_NO_MEM, "recmul-permuted allreduce: out of memory");
    int rc = tuna_ar_fold_in(a, f, &tmp, 1, req, comm_rc);
    free(mem);
    return rc;
}

/* The leaders' rounds, with req: room for 2k requests. */
static int leader(const tuna_ar_args *a, const tuna_fold *f, MPI_Request *req, int *comm_rc)
{
    const int k = f->k, Q = f->Q;
    plan pl = {.a = a, .f = f, .g = f->group, .rg = tuna_fold_reverse(f, f->group), .req = req};
    pl.off = tuna_malloc(sizeof(MPI_Aint) * ((size_t)Q + 1));
    char **pool = tuna_malloc(sizeof(char *) * 2 * (size_t)k);
    void **mem = tuna_calloc((size_t)k, sizeof(void *));
    int rc = pl.off && pool && mem ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        /* Segment p has n/Q elements, one more for the first n % Q. */
        const int n = a->count, base = n / Q, extra = n % Q;
        pl.off[0] = 0;
        for (int p = 0; p < Q; p++)
            pl.off[p + 1] = pl.off[p] + base + (p < extra);
        /* The first round's sub-ranges are the largest: Q/k segments, the first ones. */
        int chunk = range_count(&pl, 0, Q / k);
        for (int i = 0; i < k - 1 && rc == MPI_SUCCESS; i++)
            if (!(pool[i] = tuna_ar_tmp(a, chunk, &mem[i])))
                rc = MPI_ERR_NO_MEM;
        if (rc == MPI_SUCCESS)
            tuna_stats_temp((size_t)(k - 1) * (size_t)chunk * (size_t)a->extent);
    }
    if (rc == MPI_SUCCESS)
        rc = reduce_scatter(&pl, pool, comm_rc);
    if (rc == MPI_SUCCESS)
        allgather(&pl, comm_rc);
    if (mem)
        for (int i = 0; i < k - 1; i++)
            free(mem[i]);
    free(mem);
    free(pool);
    free(pl.off);
    return rc == MPI_ERR_NO_MEM ? tuna_error_set(rc, "recmul-permuted allreduce: out of memory")
                                : rc;
}

int tuna_ar_recmul_permuted(const tuna_ar_args *a)
{
    tuna_fold f;
    tuna_fold_init(&f, a->size, (int)tuna_ar_param(a, "k"), a->rank);
    tuna_stats_rounds(2 * f.m + (f.Q < a->size ? 2 : 0));
    if (a->rank != f.last)
        return tuna_ar_fold_member(a, &f);
    /* Requests of every step: 2(k-1) in a round, one per member when folding. */
    MPI_Request *req = tuna_malloc(sizeof(MPI_Request) * 2 * (size_t)f.k);
    if (!req)
        return tuna_error_set(MPI_ERR_NO_MEM, "recmul-permuted allreduce: out of memory");
    int comm_rc = MPI_SUCCESS;
    int rc = fold_in(a, &f, req, &comm_rc);
    if (rc == MPI_SUCCESS && f.Q > 1)
        rc = leader(a, &f, req, &comm_rc);
    if (rc == MPI_SUCCESS)
        tuna_ar_fold_out(a, &f, req, &comm_rc);
    free(req);
    return tuna_first_error(comm_rc, rc);
}
