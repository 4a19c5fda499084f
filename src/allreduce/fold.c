/*
 * The allreduce recursive-multiplying family's schedule as steps (tuna_ar_recmul_steps):
 * folding when P is not a power of k (the groups of tuna_fold: members send their vector to
 * the group's leader, its last rank, which reduces the group in rank order, runs the rounds,
 * and sends the result back), with the rounds as the row's hooks. A failed exchange is
 * recorded in o->op.comm_rc and the steps go on without reducing (allreduce.h).
 */
#include "allreduce.h"

/* Where the schedule is (o->phase). */
enum { START, MEMBER_SEND, MEMBER_RECV, FOLD_IN, PLACED, ROUNDS, FOLD_OUT };

/* The next batch of the fold-in: members [lo, o->hi) of the group into fold_tmp, received
 * from the highest rank down (so rbuf, the leader's value and the group's last operand,
 * accumulates v_first op (... op v_last) in rank order). */
static int batch_lo(const tuna_ar_op *o)
{
    return o->hi > o->fold_ntmp ? o->hi - o->fold_ntmp : 0;
}

static int post_fold_batch(tuna_ar_op *o)
{
    const tuna_ar_args *a = &o->a;
    const int lo = batch_lo(o);
    int n = 0, rc = MPI_SUCCESS;
    for (int i = lo; i < o->hi && rc == MPI_SUCCESS; i++)
        rc = tuna_posted(tuna_ar_irecv(a, o->fold_tmp[i - lo], a->count, o->f.first + i,
                                       TUNA_TAG_AR_FOLD_IN + a->tag_shift, &o->req[n]),
                         &n);
    return tuna_op_step_wait(&o->op, o->req, n, rc);
}

/* The result to every member of the group; *n requests. */
static int post_fold_out(tuna_ar_op *o, int *n)
{
    const tuna_ar_args *a = &o->a;
    int members = o->f.last - o->f.first, rc = MPI_SUCCESS;
    for (int i = 0; i < members && rc == MPI_SUCCESS; i++)
        rc = tuna_posted(tuna_ar_isend(a, a->rbuf, a->count, o->f.first + i,
                                       TUNA_TAG_AR_FOLD_OUT + a->tag_shift, &o->req[*n]),
                         n);
    return rc;
}

/* A member: its vector to the leader, then (its buffer free again) the result back. */
static int post_member(tuna_ar_op *o, bool send)
{
    const tuna_ar_args *a = &o->a;
    const int tag = (send ? TUNA_TAG_AR_FOLD_IN : TUNA_TAG_AR_FOLD_OUT) + a->tag_shift;
    int n = 0;
    int rc = tuna_posted(tuna_ar_post(a, send, a->rbuf, a->count, o->f.last, tag, &o->pair[0]),
                         &n);
    o->phase = send ? MEMBER_SEND : MEMBER_RECV;
    return tuna_op_step_wait(&o->op, o->pair, n, rc);
}

/* The next round, or (none left) the end and the fold-out. */
static int next_round(tuna_ar_op *o, const tuna_ar_rounds *rounds)
{
    int n = 0, rc = MPI_SUCCESS;
    if (rounds->post(o, &n, &rc)) {
        o->i++;
        return tuna_op_step_wait(&o->op, o->req, n, rc);
    }
    if (rounds->end && (rc = rounds->end(o)) != MPI_SUCCESS)
        return tuna_op_step_done(&o->op, tuna_first_error(o->op.comm_rc, rc));
    o->phase = FOLD_OUT;
    n = 0;
    rc = post_fold_out(o, &n);
    if (n > 0 || rc != MPI_SUCCESS)
        return tuna_op_step_wait(&o->op, o->req, n, rc);
    return tuna_op_step_done(&o->op, o->op.comm_rc);
}

int tuna_ar_recmul_steps(tuna_ar_op *o, int wait_rc, int k, const tuna_ar_rounds *rounds)
{
    const tuna_ar_args *a = &o->a;
    const char *name = rounds->name;
    int rc = MPI_SUCCESS;
    for (;;) {
        switch (o->phase) {
        case START:
            tuna_fold_init(&o->f, a->size, k, a->rank);
            tuna_stats_rounds(rounds->per_level * o->f.m + (o->f.Q < a->size ? 2 : 0));
            if (a->rank != o->f.last)
                return post_member(o, true);
            /* Requests of every step: 2(k-1) in a round, one per member when folding. */
            o->req = tuna_malloc(sizeof(MPI_Request) * 2 * (size_t)o->f.k);
            if (!o->req)
                return tuna_op_step_done(
                    &o->op, tuna_error_set(MPI_ERR_NO_MEM, "%s: out of memory", name));
            if ((rc = rounds->begin(o)) != MPI_SUCCESS)
                return tuna_op_step_done(&o->op, rc);
            o->hi = o->f.last - o->f.first;
            o->phase = o->hi > 0 ? FOLD_IN : PLACED;
            if (o->hi > 0)
                return post_fold_batch(o);
            break;
        case MEMBER_SEND:
            /* The leader sends the result back whatever became of this vector. */
            tuna_op_step_record(&o->op, wait_rc, "allreduce fold: member exchange failed");
            return post_member(o, false);
        case MEMBER_RECV:
            tuna_op_step_record(&o->op, wait_rc, "allreduce fold: member exchange failed");
            return tuna_op_step_done(&o->op, o->op.comm_rc);
        case FOLD_IN: {
            const int lo = batch_lo(o);
            tuna_op_step_record(&o->op, wait_rc, "allreduce fold-in: receive failed");
            for (int i = o->hi - 1; i >= lo && o->op.comm_rc == MPI_SUCCESS; i--)
                if ((rc = tuna_ar_reduce(a, o->fold_tmp[i - lo], a->rbuf, a->count)) !=
                    MPI_SUCCESS)
                    return tuna_op_step_done(&o->op, rc);
            o->hi = lo;
            if (o->hi > 0)
                return post_fold_batch(o);
            o->phase = PLACED;
            break;
        }
        case PLACED:
            if (rounds->placed && (rc = rounds->placed(o)) != MPI_SUCCESS)
                return tuna_op_step_done(&o->op, tuna_first_error(o->op.comm_rc, rc));
            o->phase = ROUNDS;
            o->i = 0;
            return next_round(o, rounds);
        case ROUNDS:
            tuna_op_step_record(&o->op, wait_rc, "%s: round %d exchange failed", name, o->i - 1);
            if ((rc = rounds->received(o)) != MPI_SUCCESS)
                return tuna_op_step_done(&o->op, tuna_first_error(o->op.comm_rc, rc));
            return next_round(o, rounds);
        case FOLD_OUT:
            tuna_op_step_record(&o->op, wait_rc, "allreduce fold-out: send failed");
            return tuna_op_step_done(&o->op, o->op.comm_rc);
        default:
            return tuna_op_step_done(&o->op,
                                     tuna_error_set(MPI_ERR_INTERN, "%s: bad phase", name));
        }
    }
}
