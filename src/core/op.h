/*
 * Operations as resumable steps (docs/nonblocking.md): the engine every collective's
 * nonblocking, persistent and blocking forms share.
 *
 * An algorithm with a step form is a function that is called again each time the requests
 * it posted have all completed. Between calls its state lives in the operation, never on a
 * stack, so the same steps run
 *   - blocking: step, wait, step, ... inside the call (tuna_op_run), with the same MPI calls
 *     in the same order as the step's posts;
 *   - nonblocking or persistent: the first step at the start (local: it only posts), the
 *     others from whatever call progresses the operation (tuna_request_test/wait,
 *     tuna_progress, a blocking tuna call's wait, the preload's completion calls).
 * This file knows no collective: a family embeds tuna_op as the first member of its own
 * operation and hands the engine its step function.
 */
#ifndef TUNA_OP_H
#define TUNA_OP_H

#include "tuna_internal.h"

/* A step's answer. */
enum {
    TUNA_STEP_DONE = 0, /* finished: the outcome is in op->rc, no request is pending */
    TUNA_STEP_WAIT = 1, /* op->req[0 .. op->nreq) posted: call again when all completed */
    TUNA_STEP_YIELD = 2, /* nothing posted, not finished (it waits for another operation or
                            a shared set-up): call again at the next progress */
};

/*
 * What a step that answered TUNA_STEP_WAIT waits for (op->wait_mode; the engine sets
 * TUNA_WAIT_ALL before each call of the step, which may change it):
 *   TUNA_WAIT_ALL: every request of op->req[0 .. op->nreq), TUNA_WAIT_CHUNK at a time in
 *     order (the transport's settle), the statuses stored in op->status if the step set it
 *     (for at most TUNA_WAIT_CHUNK requests: when progressed, a chunk completed by an earlier
 *     test would be tested again as null requests, its statuses emptied);
 *   TUNA_WAIT_ANY: one request (MPI_Waitany; MPI_Testany when progressed): the step is
 *     called again with its index in op->any and its outcome, the others still pending (the
 *     step keeps them and waits for them again). op->req may hold MPI_REQUEST_NULL, but at
 *     least one request must be active: MPI_Testany's "none active" counts as "not yet"
 *     (SimGrid SMPI 3.32-3.35 answers so for some pending eager sends);
 *   TUNA_WAIT_ANY_POLL: the same, the blocking run polling MPI_Testany instead of blocking in
 *     MPI_Waitany (and falling back to MPI_Waitany on that "none active").
 * The windowed rows (multipair-waitany, multipair-testany) refill a slot as soon as its
 * request completes: a wait for all would be the group barrier they avoid.
 */
enum { TUNA_WAIT_ALL = 0, TUNA_WAIT_ANY = 1, TUNA_WAIT_ANY_POLL = 2 };

typedef struct tuna_request_s tuna_op;

/*
 * One step: called first with wait_rc = MPI_SUCCESS, then each time the requests of the
 * previous step have all completed, with that wait's outcome (the first failed request's
 * error code; every request is complete either way, docs/test-harnesses.md). A step posts with
 * nonblocking calls only (it never waits for a peer) and records where to resume in its
 * own state.
 */
typedef int tuna_step_fn(tuna_op *op, int wait_rc);

struct tuna_request_s {
    tuna_step_fn *step;
    const tuna_transport *tp;     /* completes the steps' requests (src/transport/transport.h):
                                     the transport the family's arguments post with */
    void (*release)(tuna_op *op); /* frees the family's operation (nonblocking ones); NULL:
                                     the owner (a stack frame, a plan) keeps it */
    MPI_Request *req;             /* the current step's requests (the family's storage) */
    int nreq;
    int wait_mode;                /* TUNA_WAIT_ALL (default), TUNA_WAIT_ANY, _ANY_POLL */
    int any;                      /* TUNA_WAIT_ANY*: the index of the completed request */
    MPI_Status *status;           /* TUNA_WAIT_ALL: room for nreq (<= TUNA_WAIT_CHUNK)
                                     statuses, or NULL */
    int rc;                       /* outcome, once done */
    int post_rc;                  /* the current step's failed post, if any */
    int comm_rc;                  /* the first failed step so far, for the rows whose steps go
                                     on after a failure (tuna_op_step_record) */
    bool done;
    bool active;                  /* in the progress list (nonblocking and persistent) */
    bool busy;                    /* a thread is stepping it (progress skips it) */
    bool publish_stats;           /* completion publishes op->stats as tuna_stats_last() */
    tuna_stats stats;             /* the operation's record while stats are on */
    double t_start;
    tuna_op *next, *prev;         /* the progress list */
};

/* Helpers of a step: hand the engine the n requests just posted (post_rc: the first failed
 * post, which ends the step early; the posted ones still complete), returning
 * TUNA_STEP_WAIT; end the operation with outcome rc, returning TUNA_STEP_DONE. */
static inline int tuna_op_step_wait(tuna_op *op, MPI_Request *reqs, int n, int post_rc)
{
    op->req = reqs;
    op->nreq = n;
    op->post_rc = post_rc;
    return TUNA_STEP_WAIT;
}
static inline int tuna_op_step_done(tuna_op *op, int rc)
{
    op->rc = rc;
    return TUNA_STEP_DONE;
}
/* After a step's requests completed: its outcome (the failed post, else the failed wait); a
 * failure is recorded in op->comm_rc (the first one kept) with the message fmt, and the
 * steps go on (the peers, who know nothing of it, post their sides). Returns the outcome. */
int tuna_op_step_record(tuna_op *op, int wait_rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Run op to completion here (a blocking call): its steps and waits. While other operations
 * of the process are active, the wait progresses them too (a peer may wait for one of them
 * before it can answer this call). Returns op->rc. */
int tuna_op_run(tuna_op *op);

/* Start op (nonblocking or persistent): its first step runs now (local: posts only); unless
 * that finished it, it joins the progress list. An error of the first step is the
 * operation's outcome, returned by its completion. */
void tuna_op_start(tuna_op *op);

/* Advance op as far as its completed requests allow (never blocks); *done when finished. */
void tuna_op_advance(tuna_op *op, bool *done);

/* Advance every active operation of the process once (never blocks). */
void tuna_op_progress_all(void);

/* Whether any operation is active in the process (a blocking wait must progress them). */
bool tuna_op_any_active(void);

/* Tag shift of a new operation on ctx (added to every tag of its messages, which travel on
 * ctx->comm): nonblocking operations and persistent plans take the next number of their own
 * sequence at their start / init, in the order every rank makes these calls, so outstanding
 * operations never match each other's messages; blocking calls use 0 (tuna_tags.h). */
int tuna_op_tag_shift(tuna_ctx *ctx, bool persistent);

/* TUNA_PROGRESS (progress_thread.c): "poll" (default) or "thread". The check fails with
 * MPI_ERR_ARG on any other value (a context's creation, after the agreement that makes the
 * value the same on every rank, runs it). */
int tuna_progress_config_check(void);
bool tuna_progress_thread_wanted(void);
/* An operation became active: the progress thread starts (first time) or wakes. */
void tuna_progress_thread_wake(void);
/* MPI_Finalize: the thread stops and is joined (no-op without one). */
void tuna_progress_thread_stop(void);

#endif /* TUNA_OP_H */
