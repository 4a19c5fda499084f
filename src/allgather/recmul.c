/*
 * recmul allgather (recursive multiplying, radix k): in round r = 0..m-1 a
 * rank exchanges everything it holds with the k-1 ranks that differ from it
 * in base-k digit r (distance k^r), so after m = log_k P rounds it holds all.
 * Blocks stay at their final slots; each round's data is one contiguous range.
 * Rounds: log_k P (k = P: one round, every pair exchanges once).
 * Volume received: (P-1) blocks. Messages per round: k-1 sends, k-1 receives.
 * Any P: with Q = k^m the largest power of k not above P, ranks fold into Q
 * groups of consecutive ranks (P/Q or P/Q + 1 <= k ranks each); members send
 * their block to the group's last rank before the rounds and receive the
 * result from it after them (2 extra rounds; a leader sends P-1 blocks per member).
 */
#include "allgather.h"

#include <stdlib.h>

/* Slots [from, to) of the result buffer. */
static char *slot(const tuna_ag_args *a, int from)
{
    return a->buf + (size_t)from * a->block;
}
static size_t span(const tuna_ag_args *a, int from, int to)
{
    return (size_t)(to - from) * a->block;
}

int tuna_ag_fold_member(const tuna_ag_args *a, const tuna_fold *f)
{
    const int me = a->rank, P = a->size;
    MPI_Comm comm = a->ctx->comm;
    MPI_Request req[3];
    int n = 0;
    int rc = tuna_posted(tuna_irecv_bytes(slot(a, 0), span(a, 0, me), f->last,
                                          TUNA_TAG_AG_FOLD_OUT, comm, &req[n]),
                         &n);
    if (rc == MPI_SUCCESS)
        rc = tuna_posted(tuna_irecv_bytes(slot(a, me + 1), span(a, me + 1, P), f->last,
                                          TUNA_TAG_AG_FOLD_OUT, comm, &req[n]),
                         &n);
    if (rc == MPI_SUCCESS)
        rc = tuna_posted(tuna_isend_bytes(slot(a, me), a->block, f->last, TUNA_TAG_AG_FOLD_IN,
                                          comm, &req[n]),
                         &n);
    if ((rc = tuna_requests_finish(n, req, rc)) != MPI_SUCCESS)
        return tuna_error_set(rc, "recmul allgather: fold exchange with rank %d failed", f->last);
    return MPI_SUCCESS;
}

void tuna_ag_fold_in(const tuna_ag_args *a, const tuna_fold *f, MPI_Request *req, int *comm_rc)
{
    int n = f->last - f->first, nreq = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = tuna_posted(tuna_irecv_bytes(slot(a, f->first + i), a->block, f->first + i,
                                          TUNA_TAG_AG_FOLD_IN, a->ctx->comm, &req[nreq]),
                         &nreq);
    if ((rc = tuna_requests_finish(nreq, req, rc)) != MPI_SUCCESS)
        *comm_rc = tuna_first_error(*comm_rc, tuna_error_set(rc, "recmul allgather: fold-in "
                                                                 "receive failed"));
}

void tuna_ag_fold_out(const tuna_ag_args *a, const tuna_fold *f, MPI_Request *req, int *comm_rc)
{
    const int P = a->size;
    int n = f->last - f->first, nreq = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        int mem = f->first + i;
        rc = tuna_posted(tuna_isend_bytes(slot(a, 0), span(a, 0, mem), mem, TUNA_TAG_AG_FOLD_OUT,
                                          a->ctx->comm, &req[nreq]),
                         &nreq);
        if (rc == MPI_SUCCESS)
            rc = tuna_posted(tuna_isend_bytes(slot(a, mem + 1), span(a, mem + 1, P), mem,
                                              TUNA_TAG_AG_FOLD_OUT, a->ctx->comm, &req[nreq]),
                             &nreq);
    }
    if ((rc = tuna_requests_finish(nreq, req, rc)) != MPI_SUCCESS)
        *comm_rc = tuna_first_error(*comm_rc, tuna_error_set(rc, "recmul allgather: fold-out "
                                                                 "send failed"));
}

int tuna_ag_recmul_run(const tuna_ag_args *a, int k)
{
    const int P = a->size, me = a->rank;
    tuna_fold f;
    tuna_fold_init(&f, P, k, me);
    tuna_stats_rounds(f.m + (f.Q < P ? 2 : 0));
    if (me != f.last)
        return tuna_ag_fold_member(a, &f);
    /* Requests of every step: 2(k-1) in a round, at most that many when folding. */
    MPI_Request *req = tuna_malloc(sizeof(MPI_Request) * 2 * (size_t)f.k);
    if (!req)
        return MPI_ERR_NO_MEM;
    int comm_rc = MPI_SUCCESS;
    tuna_ag_fold_in(a, &f, req, &comm_rc);
    const int g = f.group;
    for (int d = 1; d < f.Q; d *= f.k) {
        /* Held: groups [lo, lo + d), aligned; partner j holds [lo + (j - digit) d, + d). */
        int digit = (g / d) % f.k, lo = g - g % d, nreq = 0, rc = MPI_SUCCESS;
        int mine0 = tuna_fold_start(&f, lo), mine1 = tuna_fold_start(&f, lo + d);
        for (int j = 0; j < f.k && rc == MPI_SUCCESS; j++) {
            if (j == digit)
                continue;
            int plo = lo + (j - digit) * d;
            int peer = tuna_fold_start(&f, g + (j - digit) * d + 1) - 1;
            int p0 = tuna_fold_start(&f, plo), p1 = tuna_fold_start(&f, plo + d);
            rc = tuna_posted(tuna_irecv_bytes(slot(a, p0), span(a, p0, p1), peer,
                                              TUNA_TAG_AG_RECMUL, a->ctx->comm, &req[nreq]),
                             &nreq);
            if (rc == MPI_SUCCESS)
                rc = tuna_posted(tuna_isend_bytes(slot(a, mine0), span(a, mine0, mine1), peer,
                                                  TUNA_TAG_AG_RECMUL, a->ctx->comm, &req[nreq]),
                                 &nreq);
        }
        /* A failed round is complete when recorded, and the rounds go on (allgather.h). */
        if ((rc = tuna_requests_finish(nreq, req, rc)) != MPI_SUCCESS)
            comm_rc = tuna_first_error(comm_rc, tuna_error_set(rc, "recmul allgather: round %d "
                                                                   "exchange failed", d));
    }
    tuna_ag_fold_out(a, &f, req, &comm_rc);
    free(req);
    return comm_rc;
}

int tuna_ag_recmul(const tuna_ag_args *a)
{
    return tuna_ag_recmul_run(a, (int)tuna_ag_param(a, "k"));
}
