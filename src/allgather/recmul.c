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
 * The schedule with folding (tuna_ag_recmul_steps) is the whole family's; one step per
 * exchange: the member's, the fold-in, each round, the fold-out.
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

/* Where tuna_ag_recmul_steps is (o->phase). */
enum { START, MEMBER, FOLD_IN, ROUNDS, FOLD_OUT };

/* A member's one exchange with its leader: everything else back, its block out. */
static int post_member(tuna_ag_op *o)
{
    const tuna_ag_args *a = &o->a;
    const int me = a->rank, P = a->size, last = o->f.last;
    MPI_Comm comm = a->ctx->comm;
    const int tag_out = TUNA_TAG_AG_FOLD_OUT + a->tag_shift;
    int n = 0;
    int rc = tuna_posted(
        tuna_tp_irecv(a->tp, slot(a, 0), span(a, 0, me), last, tag_out, comm, &o->pair[n]), &n);
    if (rc == MPI_SUCCESS)
        rc = tuna_posted(tuna_tp_irecv(a->tp, slot(a, me + 1), span(a, me + 1, P), last, tag_out,
                                       comm, &o->pair[n]),
                         &n);
    if (rc == MPI_SUCCESS)
        rc = tuna_posted(tuna_tp_isend(a->tp, slot(a, me), a->block, last,
                                       TUNA_TAG_AG_FOLD_IN + a->tag_shift, comm, &o->pair[n]),
                         &n);
    return tuna_op_step_wait(&o->op, o->pair, n, rc);
}

/* A leader's receives of its members' blocks into their slots; *n requests. */
static int post_fold_in(tuna_ag_op *o, int *n)
{
    const tuna_ag_args *a = &o->a;
    const tuna_fold *f = &o->f;
    int members = f->last - f->first, rc = MPI_SUCCESS;
    for (int i = 0; i < members && rc == MPI_SUCCESS; i++)
        rc = tuna_posted(tuna_tp_irecv(a->tp, slot(a, f->first + i), a->block, f->first + i,
                                       TUNA_TAG_AG_FOLD_IN + a->tag_shift, a->ctx->comm,
                                       &o->req[*n]),
                         n);
    return rc;
}

/* A leader's sends of the result to its members (all but their own block); *n requests. */
static int post_fold_out(tuna_ag_op *o, int *n)
{
    const tuna_ag_args *a = &o->a;
    const tuna_fold *f = &o->f;
    const int P = a->size, tag = TUNA_TAG_AG_FOLD_OUT + a->tag_shift;
    int members = f->last - f->first, rc = MPI_SUCCESS;
    for (int i = 0; i < members && rc == MPI_SUCCESS; i++) {
        int mem = f->first + i;
        rc = tuna_posted(
            tuna_tp_isend(a->tp, slot(a, 0), span(a, 0, mem), mem, tag, a->ctx->comm, &o->req[*n]),
            n);
        if (rc == MPI_SUCCESS)
            rc = tuna_posted(tuna_tp_isend(a->tp, slot(a, mem + 1), span(a, mem + 1, P), mem, tag,
                                           a->ctx->comm, &o->req[*n]),
                             n);
    }
    return rc;
}

int tuna_ag_recmul_steps(tuna_ag_op *o, int wait_rc, int k, const tuna_ag_rounds *rounds)
{
    const tuna_ag_args *a = &o->a;
    const char *name = rounds->name;
    int n = 0, rc = MPI_SUCCESS;
    switch (o->phase) {
    case START:
        tuna_fold_init(&o->f, a->size, k, a->rank);
        tuna_stats_rounds(o->f.m + (o->f.Q < a->size ? 2 : 0));
        if (a->rank != o->f.last) {
            o->phase = MEMBER;
            return post_member(o);
        }
        /* Requests of every step: 2(k-1) in a round, at most that many when folding. */
        o->req = tuna_malloc(sizeof(MPI_Request) * 2 * (size_t)o->f.k);
        if (!o->req)
            return tuna_op_step_done(&o->op, MPI_ERR_NO_MEM);
        if (rounds->begin && (rc = rounds->begin(o)) != MPI_SUCCESS)
            return tuna_op_step_done(&o->op, rc);
        o->phase = FOLD_IN;
        rc = post_fold_in(o, &n);
        if (n > 0 || rc != MPI_SUCCESS)
            return tuna_op_step_wait(&o->op, o->req, n, rc);
        wait_rc = MPI_SUCCESS; /* no members: nothing to wait for */
        break;
    case MEMBER:
        tuna_op_step_record(&o->op, wait_rc, "%s: fold exchange with rank %d failed", name,
                            o->f.last);
        return tuna_op_step_done(&o->op, o->op.comm_rc);
    }
    switch (o->phase) {
    case FOLD_IN:
        tuna_op_step_record(&o->op, wait_rc, "%s: fold-in receive failed", name);
        if (rounds->placed)
            rounds->placed(o);
        o->phase = ROUNDS;
        break;
    case ROUNDS:
        tuna_op_step_record(&o->op, wait_rc, "%s: round %d exchange failed", name, o->i - 1);
        break;
    case FOLD_OUT:
        tuna_op_step_record(&o->op, wait_rc, "%s: fold-out send failed", name);
        return tuna_op_step_done(&o->op, o->op.comm_rc);
    }
    if (rounds->post(o, &n, &rc)) {
        o->i++;
        return tuna_op_step_wait(&o->op, o->req, n, rc);
    }
    rc = rounds->end ? rounds->end(o) : MPI_SUCCESS;
    o->phase = FOLD_OUT;
    n = 0;
    if (rc == MPI_SUCCESS && (rc = post_fold_out(o, &n), n > 0 || rc != MPI_SUCCESS))
        return tuna_op_step_wait(&o->op, o->req, n, rc);
    return tuna_op_step_done(&o->op, tuna_first_error(o->op.comm_rc, rc));
}

/* The distance-doubling rounds on the final layout (o->d: the next round's distance). */
static bool post_round(tuna_ag_op *o, int *n, int *post_rc)
{
    const tuna_ag_args *a = &o->a;
    const tuna_fold *f = &o->f;
    if (o->d == 0)
        o->d = 1;
    else
        o->d *= f->k;
    const int d = o->d, g = f->group;
    if (d >= f->Q)
        return false;
    /* Held: groups [lo, lo + d), aligned; partner j holds [lo + (j - digit) d, + d). */
    int digit = (g / d) % f->k, lo = g - g % d, rc = MPI_SUCCESS;
    const int tag = TUNA_TAG_AG_RECMUL + a->tag_shift;
    int mine0 = tuna_fold_start(f, lo), mine1 = tuna_fold_start(f, lo + d);
    *n = 0;
    for (int j = 0; j < f->k && rc == MPI_SUCCESS; j++) {
        if (j == digit)
            continue;
        int plo = lo + (j - digit) * d;
        int peer = tuna_fold_start(f, g + (j - digit) * d + 1) - 1;
        int p0 = tuna_fold_start(f, plo), p1 = tuna_fold_start(f, plo + d);
        rc = tuna_posted(tuna_tp_irecv(a->tp, slot(a, p0), span(a, p0, p1), peer, tag, a->ctx->comm,
                                       &o->req[*n]),
                         n);
        if (rc == MPI_SUCCESS)
            rc = tuna_posted(tuna_tp_isend(a->tp, slot(a, mine0), span(a, mine0, mine1), peer, tag,
                                           a->ctx->comm, &o->req[*n]),
                             n);
    }
    *post_rc = rc;
    return true;
}

static const tuna_ag_rounds recmul_rounds = {.name = "recmul allgather", .post = post_round};

int tuna_ag_recmul_k_step(tuna_ag_op *o, int wait_rc, int k)
{
    return tuna_ag_recmul_steps(o, wait_rc, k, &recmul_rounds);
}

int tuna_ag_recmul_step(tuna_ag_op *o, int wait_rc)
{
    return tuna_ag_recmul_k_step(o, wait_rc, (int)tuna_ag_param(&o->a, "k"));
}
