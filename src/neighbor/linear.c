/*
 * linear: the neighborhood exchange as Open MPI and MPICH run it — every receive posted (one
 * per in-edge, in the topology's order), then every send (one per out-edge), then one wait.
 * MPI's non-overtaking rule matches repeated edges between two ranks in order: the k-th send
 * of a to b lands in b's k-th receive from a. Empty edges and MPI_PROC_NULL neighbors post
 * nothing (both sides know the count is zero: the type signatures match). On a Cartesian
 * topology where a rank is a neighbor twice (c->by_direction: the large-count form where the
 * library has no call of its own), MPI 4.1 matches by direction: a dimension's + messages
 * travel under a tag of their own, so out-edge 2d+1 meets the peer's in-edge 2d.
 * Rounds: 1. Messages: in-degree + out-degree per rank.
 */
#include "neighbor.h"

int tuna_nbr_linear_step(tuna_op *op, int wait_rc)
{
    tuna_nbr_op *o = (tuna_nbr_op *)op;
    const tuna_nbr_call *c = o->c;
    if (o->stage == 1)
        return tuna_op_step_done(op, tuna_op_step_record(op, wait_rc,
                                                         "neighbor linear: a message failed"));
    int rc = tuna_nbr_reserve(o, c->in.n + c->out.n);
    if (rc != MPI_SUCCESS)
        return tuna_op_step_done(op, rc);
    const int tag = TUNA_TAG_NBR_LINEAR + c->tag_shift;
    int n = 0;
    /* The receives (send = 0), then the sends. By direction: in-edge 2d comes from the - side
     * and out-edge 2d+1 goes to the + side, both under the + direction's tag. */
    for (int send = 0; send < 2; send++) {
        const tuna_nbr_side *s = send ? &c->out : &c->in;
        for (int i = 0; i < s->n && rc == MPI_SUCCESS; i++) {
            if (s->peer[i] == MPI_PROC_NULL || s->count[i] == 0)
                continue;
            const int t = c->by_direction && i % 2 == send ? TUNA_TAG_NBR_LINEAR_UP + c->tag_shift
                                                           : tag;
            rc = tuna_nbr_post_edge(c, send, i, t, &o->req[n]);
            if (rc == MPI_SUCCESS)
                n++;
        }
    }
    if (rc != MPI_SUCCESS)
        rc = tuna_error_set(rc, "neighbor linear: posting a message failed");
    o->stage = 1;
    return tuna_op_step_wait(op, o->req, n, rc);
}
