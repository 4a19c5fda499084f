/*
 * The operation engine (op.h): running an operation's steps to completion, the progress
 * list of the process's active operations, the public request calls, and the tags that keep
 * outstanding operations apart. docs/nonblocking.md.
 *
 * Threads: the list is guarded by one mutex, held only to link, unlink and claim operations;
 * a claimed operation (busy) is stepped by one thread at a time, outside the lock, so two
 * threads progressing at once never step the same operation and never wait for each other's
 * MPI calls.
 */
#include "op.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static tuna_op *list_head;
static atomic_int list_count;

bool tuna_op_any_active(void)
{
    return atomic_load_explicit(&list_count, memory_order_relaxed) > 0;
}

/* Whether op's wait is over (never blocks): *flag, and the wait's outcome. */
static int test_wait(tuna_op *op, int *flag)
{
    if (op->wait_mode == TUNA_WAIT_ALL)
        return tuna_tp_settle(op->tp, op->nreq, op->req, op->status, false, flag);
    int rc = tuna_tp_any(op->tp, op->nreq, op->req, &op->any, false, flag);
    if (rc != MPI_SUCCESS) {
        *flag = 1; /* the step settles the failed request (op->any) and the others */
        return rc;
    }
    if (*flag && op->any == MPI_UNDEFINED)
        *flag = 0; /* the step has one active: "none active" is SMPI's, see op.h */
    return MPI_SUCCESS;
}

/* op's wait, here (nothing else to progress): the blocking calls of today's algorithms. */
static int wait_here(tuna_op *op)
{
    int flag;
    if (op->wait_mode == TUNA_WAIT_ANY)
        return tuna_tp_any(op->tp, op->nreq, op->req, &op->any, true, &flag);
    if (op->wait_mode == TUNA_WAIT_ANY_POLL) {
        for (;;) {
            int rc = tuna_tp_any(op->tp, op->nreq, op->req, &op->any, false, &flag);
            if (rc != MPI_SUCCESS || (flag && op->any != MPI_UNDEFINED))
                return rc;
            if (flag) /* "none active" while one is pending (SMPI): polling would not move */
                return tuna_tp_any(op->tp, op->nreq, op->req, &op->any, true, &flag);
        }
    }
    return tuna_tp_settle(op->tp, op->nreq, op->req, op->status, true, &flag);
}

/* One call of the step with this operation's statistics record current. */
static int run_step(tuna_op *op, int wait_rc)
{
    tuna_stats *saved = tuna_stats_cur;
    tuna_stats_cur = &op->stats;
    op->wait_mode = TUNA_WAIT_ALL;
    op->status = NULL;
    int r = op->step(op, wait_rc);
    tuna_stats_cur = saved;
    if (r != TUNA_STEP_WAIT)
        op->nreq = 0;
    if (r == TUNA_STEP_DONE)
        op->done = true;
    return r;
}

int tuna_op_run(tuna_op *op)
{
    /* A blocking call's record is the thread's own: no redirection, no copy. */
    int wait_rc = MPI_SUCCESS;
    for (;;) {
        op->wait_mode = TUNA_WAIT_ALL;
        op->status = NULL;
        const int r = op->step(op, wait_rc);
        if (r == TUNA_STEP_YIELD) { /* what it waits for advances with the others */
            op->nreq = 0;
            wait_rc = MPI_SUCCESS;
            tuna_op_progress_all();
            continue;
        }
        if (r != TUNA_STEP_WAIT)
            break;
        if (!tuna_op_any_active()) {
            wait_rc = wait_here(op);
            continue;
        }
        for (int flag = 0;;) {
            wait_rc = test_wait(op, &flag);
            if (flag)
                break;
            tuna_op_progress_all();
        }
    }
    op->nreq = 0;
    op->done = true;
    return op->rc;
}

static void list_link(tuna_op *op)
{
    pthread_mutex_lock(&list_lock);
    TUNA_LIST_PUSH(list_head, op);
    op->active = true;
    atomic_fetch_add_explicit(&list_count, 1, memory_order_relaxed);
    pthread_mutex_unlock(&list_lock);
    tuna_progress_thread_wake();
}

/* Caller holds the lock. */
static void list_unlink_locked(tuna_op *op)
{
    if (!op->active)
        return;
    TUNA_LIST_UNLINK(list_head, op);
    op->active = false;
    atomic_fetch_sub_explicit(&list_count, 1, memory_order_relaxed);
}

/* Advance an operation this thread has claimed (or owns alone). */
static void advance_claimed(tuna_op *op)
{
    while (!op->done) {
        int flag = 1, wait_rc = MPI_SUCCESS;
        if (op->nreq > 0) {
            wait_rc = test_wait(op, &flag);
            if (!flag)
                return;
        }
        if (run_step(op, wait_rc) != TUNA_STEP_WAIT) /* done, or yielded: not now */
            return;
    }
}

void tuna_op_start(tuna_op *op)
{
    op->done = false;
    op->busy = false;
    op->nreq = 0;
    op->rc = MPI_SUCCESS;
    if (tuna_stats_on) {
        op->t_start = PMPI_Wtime();
        /* The record the start set up (what runs, its parameters) goes with the operation. */
        op->stats = tuna_stats_current;
    }
    if (run_step(op, MPI_SUCCESS) != TUNA_STEP_DONE)
        list_link(op);
}

/* Claim op for this thread: false when another thread is stepping it. */
static bool claim(tuna_op *op)
{
    pthread_mutex_lock(&list_lock);
    bool ok = !op->busy;
    op->busy = true;
    pthread_mutex_unlock(&list_lock);
    return ok;
}

static void unclaim(tuna_op *op)
{
    pthread_mutex_lock(&list_lock);
    op->busy = false;
    if (op->done)
        list_unlink_locked(op);
    pthread_mutex_unlock(&list_lock);
}

void tuna_op_advance(tuna_op *op, bool *done)
{
    if (claim(op)) {
        advance_claimed(op);
        unclaim(op);
    }
    pthread_mutex_lock(&list_lock);
    /* busy first: while another thread steps op it may be writing op->done (outside the
     * lock); once it unclaimed (under the lock) its writes are visible here. */
    *done = !op->busy && !op->active && op->done;
    pthread_mutex_unlock(&list_lock);
}

void tuna_op_progress_all(void)
{
    /* A snapshot of the operations nobody steps, claimed under the lock and stepped outside
     * it; operations started meanwhile wait for the next call. */
    enum { BATCH = 64 };
    tuna_op *mine[BATCH];
    int n = 0;
    pthread_mutex_lock(&list_lock);
    for (tuna_op *op = list_head; op && n < BATCH; op = op->next)
        if (!op->busy) {
            op->busy = true;
            mine[n++] = op;
        }
    pthread_mutex_unlock(&list_lock);
    for (int i = 0; i < n; i++) {
        advance_claimed(mine[i]);
        unclaim(mine[i]);
    }
}

int tuna_op_step_record(tuna_op *op, int wait_rc, const char *fmt, ...)
{
    int rc = op->post_rc != MPI_SUCCESS ? op->post_rc : wait_rc;
    op->post_rc = MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        return rc;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    op->comm_rc = tuna_first_error(op->comm_rc, tuna_error_set(rc, "%s", what));
    return rc;
}

/* ------------------------------------------------------------------ tags */

/* Tags of one operation span [shift, shift + TUNA_TAG_SPAN): every tuna_tag is below it. */
#define TUNA_TAG_SPAN 512

int tuna_op_tag_shift(tuna_ctx *ctx, bool persistent)
{
    if (ctx->tag_slots == 0) {
        /* MPI_TAG_UB is at least 32767: 64 spans. Slot 0 is the blocking calls'; the rest is
         * split between nonblocking operations and plans, each cycling through its half. */
        int *ub = NULL, flag = 0;
        long slots = 64;
        if (PMPI_Comm_get_attr(ctx->comm, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag && ub &&
            *ub >= 32767)
            slots = ((long)*ub + 1) / TUNA_TAG_SPAN;
        ctx->tag_slots = slots;
    }
    const long half = (ctx->tag_slots - 1) / 2;
    const long slot = persistent ? 1 + half + (long)(ctx->plan_seq++ % (unsigned long)half)
                                 : 1 + (long)(ctx->op_seq++ % (unsigned long)half);
    return (int)(slot * TUNA_TAG_SPAN);
}

/* ------------------------------------------------------------------ public calls */

/* Complete *req's operation: its outcome, its statistics, its memory; *req = NULL. */
static int finish(tuna_request *req)
{
    tuna_op *op = *req;
    int rc = op->rc;
    if (op->publish_stats && tuna_stats_on) {
        op->stats.total = PMPI_Wtime() - op->t_start;
        tuna_stats_publish_record(&op->stats);
    }
    if (op->release)
        op->release(op);
    *req = TUNA_REQUEST_NULL;
    return rc;
}

int tuna_request_test(tuna_request *req, int *flag)
{
    if (!req || !flag)
        return tuna_error_set(MPI_ERR_ARG, "tuna_request_test: NULL argument");
    if (*req == TUNA_REQUEST_NULL) {
        *flag = 1; /* as MPI_Test on MPI_REQUEST_NULL */
        return MPI_SUCCESS;
    }
    bool done;
    tuna_op_advance(*req, &done);
    if (!done)
        tuna_op_progress_all(); /* the others too: a peer may need one of them first */
    *flag = done;
    return done ? finish(req) : MPI_SUCCESS;
}

/*
 * Whether a wait may block in MPI on its operation's own requests, as a blocking call's wait
 * does: no other operation is active, and no other thread can start one meanwhile (below
 * MPI_THREAD_MULTIPLE one thread calls MPI at a time). Polling instead would burn the same
 * CPU natively and, under SimGrid SMPI, cost simulated time per test (smpi/test).
 */
static bool wait_may_block(void)
{
    if (atomic_load_explicit(&list_count, memory_order_relaxed) != 1)
        return false;
    int level;
    return PMPI_Query_thread(&level) == MPI_SUCCESS && level < MPI_THREAD_MULTIPLE;
}

/* Steps a claimed operation to its end, blocking in MPI between steps. */
static void advance_blocking(tuna_op *op)
{
    while (!op->done) {
        const int wait_rc = op->nreq > 0 ? wait_here(op) : MPI_SUCCESS;
        run_step(op, wait_rc);
    }
}

int tuna_request_wait(tuna_request *req)
{
    if (!req)
        return tuna_error_set(MPI_ERR_ARG, "tuna_request_wait: NULL argument");
    if (*req == TUNA_REQUEST_NULL)
        return MPI_SUCCESS;
    for (;;) {
        bool done;
        if (wait_may_block() && claim(*req)) {
            advance_blocking(*req);
            unclaim(*req);
        }
        tuna_op_advance(*req, &done);
        if (done)
            return finish(req);
        tuna_op_progress_all();
    }
}

int tuna_progress(void)
{
    tuna_op_progress_all();
    return MPI_SUCCESS;
}
