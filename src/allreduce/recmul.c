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
 * rounds and sends the result back after them (2 extra rounds).
 */
#include "allreduce.h"

#include <stdlib.h>

/* The log_k Q rounds among leaders; pool[0] is rbuf, pool[1..k-1] temporaries. A failed
 * round is recorded in *comm_rc and the rounds go on without reducing (allreduce.h). */
static int rounds(const tuna_ar_args *a, const tuna_fold *f, char **pool, MPI_Request *req,
                  int *slot, int *comm_rc)
{
    const int k = f->k, g = f->group;
    int cur = 0, rc = MPI_SUCCESS;
    for (int d = 1; d < f->Q && rc == MPI_SUCCESS; d *= k) {
        int digit = (g / d) % k, nreq = 0;
        /* slot[j]: pool index holding the value of digit j (mine stays where it is). */
        for (int j = 0, next = 0; j < k; j++) {
            if (j == digit) {
                slot[j] = cur;
                continue;
            }
            if (next == cur)
                next++;
            slot[j] = next++;
        }
        for (int j = 0; j < k && rc == MPI_SUCCESS; j++) {
            if (j == digit)
                continue;
            int peer = tuna_fold_start(f, g + (j - digit) * d + 1) - 1;
            rc = tuna_posted(MPI_Irecv(pool[slot[j]], a->count, a->type, peer, TUNA_TAG_AR_RECMUL,
                                       a->ctx->comm, &req[nreq]),
                             &nreq);
            if (rc == MPI_SUCCESS)
                rc = tuna_posted(MPI_Isend(pool[cur], a->count, a->type, peer, TUNA_TAG_AR_RECMUL,
                                           a->ctx->comm, &req[nreq]),
                                 &nreq);
        }
        if ((rc = tuna_requests_finish(nreq, req, rc)) != MPI_SUCCESS)
            *comm_rc = tuna_first_error(*comm_rc, tuna_error_set(rc, "recmul allreduce: round "
                                                                     "%d exchange failed", d));
        /* Right fold in digit order: the result lands in the buffer of digit k-1. */
        rc = MPI_SUCCESS;
        for (int j = k - 2; j >= 0 && rc == MPI_SUCCESS && *comm_rc == MPI_SUCCESS; j--)
            rc = tuna_ar_reduce(a, pool[slot[j]], pool[slot[k - 1]], a->count);
        cur = slot[k - 1];
    }
    if (rc == MPI_SUCCESS && *comm_rc == MPI_SUCCESS && cur != 0)
        rc = tuna_ar_copy(a, pool[cur], a->rbuf, a->count);
    return rc;
}

int tuna_ar_recmul_run(const tuna_ar_args *a, int k)
{
    const int P = a->size, me = a->rank;
    tuna_fold f;
    tuna_fold_init(&f, P, k, me);
    tuna_stats_rounds(f.m + (f.Q < P ? 2 : 0));
    if (me != f.last)
        return tuna_ar_fold_member(a, &f);
    k = f.k;
    char **pool = tuna_malloc(sizeof(char *) * (size_t)k);
    void **mem = tuna_calloc((size_t)k, sizeof(void *));
    MPI_Request *req = tuna_malloc(sizeof(MPI_Request) * 2 * (size_t)k);
    int *slot = tuna_malloc(sizeof(int) * (size_t)k);
    int rc = pool && mem && req && slot ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        pool[0] = a->rbuf;
        for (int i = 1; i < k && rc == MPI_SUCCESS; i++)
            if (!(pool[i] = tuna_ar_tmp(a, a->count, &mem[i])))
                rc = MPI_ERR_NO_MEM;
    }
    int comm_rc = MPI_SUCCESS;
    if (rc == MPI_SUCCESS) {
        tuna_stats_temp((size_t)(k - 1) * (size_t)a->count * (size_t)a->extent);
        rc = tuna_ar_fold_in(a, &f, pool + 1, k - 1, req, &comm_rc);
    }
    if (rc == MPI_SUCCESS)
        rc = rounds(a, &f, pool, req, slot, &comm_rc);
    if (rc == MPI_SUCCESS)
        tuna_ar_fold_out(a, &f, req, &comm_rc);
    if (mem)
        for (int i = 1; i < k; i++)
            free(mem[i]);
    free(mem);
    free(pool);
    free(req);
    free(slot);
    if (rc == MPI_ERR_NO_MEM)
        rc = tuna_error_set(rc, "recmul allreduce: out of memory");
    return tuna_first_error(comm_rc, rc);
}

int tuna_ar_recmul(const tuna_ar_args *a)
{
    return tuna_ar_recmul_run(a, (int)tuna_ar_param(a, "k"));
}
