/*
 * A communicator's set-up without a blocking call (docs/nonblocking.md, "Set-up in the
 * operation"): a nonblocking or persistent start on a communicator tuna has not seen begins
 * it, and its steps run as the first steps of the operations started on the communicator
 * meanwhile, through the same progress as their own:
 *   1. MPI_Comm_idup of the user communicator (posted at the start: local);
 *   2. on the duplicate, one MPI_Iallreduce (MAX) of the TUNA_* settings' agreement and
 *      auto's (tuna_select_agree's values) and one MPI_Iallgather of every rank's node
 *      identity (a hash of MPI_Get_processor_name: MPI_Comm_split_type has no nonblocking
 *      form; ranks with the same name share a node, as MPI_COMM_TYPE_SHARED groups them);
 *   3. the agreement judged and the topology built (context.c), then the starts that waited,
 *      run in the order they were made (tuna_setup_defer), so that every rank starts the same
 *      operations in the same order on the private communicator.
 * A blocking call (or plan) on the communicator meanwhile finishes the set-up there
 * (tuna_setup_wait). The set-up's state is guarded by its own mutex: the progress thread and
 * the application may step operations of the same communicator at once.
 */
#include "tuna_internal.h"
#include "op.h"
#include "../select/tuna_select.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local const tuna_ctx *tuna_setup_restarting;

enum { SETUP_IDUP, SETUP_EXCHANGE, SETUP_DONE };

/* A start that waits for the set-up (the request the caller holds). */
typedef struct deferred {
    tuna_op op; /* first member: the engine's view */
    tuna_ctx *ctx;
    tuna_restart_fn *restart;
    void *args;
    tuna_request inner;  /* the family's operation, once restarted */
    _Atomic bool started; /* restart ran (or the set-up failed): inner / rc are set */
    int rc;
    char msg[256];       /* the restart's or set-up's error message (another thread's) */
    struct deferred *next;
} deferred;

typedef struct tuna_setup {
    pthread_mutex_t lock;
    int phase;
    MPI_Request req[2];
    long long agree[TUNA_CONFIG_AGREE_MAX + TUNA_SELECT_AGREE_N];
    int nagree;
    long long my_id;
    long long *ids; /* every rank's node identity */
    int rc;         /* the outcome, once SETUP_DONE */
    char msg[256];
    deferred *head, *tail; /* the starts that wait, in start order */
} tuna_setup;

/* A node identity: FNV-1a of the processor name. */
static long long node_identity(void)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1] = {0};
    int len = 0;
    if (PMPI_Get_processor_name(name, &len) != MPI_SUCCESS)
        len = 0;
    unsigned long long h = 1469598103934665603ULL;
    for (int i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 1099511628211ULL;
    return (long long)(h >> 1);
}

int tuna_setup_begin(tuna_ctx *ctx)
{
    tuna_setup *s = tuna_calloc(1, sizeof *s);
    if (!s)
        return tuna_error_set(MPI_ERR_NO_MEM, "out of memory for the communicator's set-up");
    pthread_mutex_init(&s->lock, NULL);
    s->req[0] = s->req[1] = MPI_REQUEST_NULL;
    s->phase = SETUP_IDUP;
    ctx->setup = s;
    int rc = PMPI_Comm_idup(ctx->user, &ctx->comm, &s->req[0]);
    if (rc != MPI_SUCCESS) {
        ctx->comm = MPI_COMM_NULL;
        s->phase = SETUP_DONE; /* nothing posted: nothing to finish */
        s->rc = rc;
        return tuna_error_set(rc, "MPI_Comm_idup of the user communicator failed");
    }
    return MPI_SUCCESS;
}

/* Step 2: the exchange on the private communicator (posts only). */
static int post_exchange(tuna_ctx *ctx, tuna_setup *s)
{
    /* tuna.h promises error codes: internal traffic must never abort the job. */
    PMPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN);
    const int n = tuna_config_agree_n();
    tuna_config_agree_values(s->agree);
    tuna_select_agree_values(s->agree + n);
    s->nagree = n + TUNA_SELECT_AGREE_N;
    s->my_id = node_identity();
    s->ids = tuna_malloc(sizeof(long long) * (size_t)ctx->size);
    if (!s->ids)
        return tuna_error_set(MPI_ERR_NO_MEM, "out of memory for the communicator's set-up");
    int rc = PMPI_Iallreduce(MPI_IN_PLACE, s->agree, s->nagree, MPI_LONG_LONG, MPI_MAX,
                             ctx->comm, &s->req[0]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Iallgather(&s->my_id, 1, MPI_LONG_LONG, s->ids, 1, MPI_LONG_LONG, ctx->comm,
                             &s->req[1]);
    return rc == MPI_SUCCESS ? rc : tuna_error_set(rc, "posting the set-up's exchange failed");
}

/* Step 3: the agreement's and the topology's outcome. */
static int finish_exchange(tuna_ctx *ctx, tuna_setup *s, int wait_rc)
{
    int rc = tuna_config_agree_judge(s->agree, wait_rc, MPI_COMM_NULL, NULL);
    if (rc == MPI_SUCCESS) {
        tuna_select_agree_judge(ctx, s->agree + tuna_config_agree_n());
        rc = tuna_ctx_settings_agreed(ctx);
    }
    if (rc == MPI_SUCCESS)
        rc = tuna_ctx_topology(ctx, s->ids);
    free(s->ids);
    s->ids = NULL;
    return rc;
}

/* The waiting starts, in their order (caller holds s->lock): each restarted, or told the
 * set-up's error. The family's start writes the thread's call record: kept aside. */
static void run_deferred(tuna_ctx *ctx, tuna_setup *s)
{
    tuna_stats saved = tuna_stats_current;
    tuna_setup_restarting = ctx;
    for (deferred *d; (d = s->head) != NULL;) {
        s->head = d->next;
        if (s->rc == MPI_SUCCESS) {
            d->rc = d->restart(d->args, &d->inner);
            if (d->rc != MPI_SUCCESS)
                snprintf(d->msg, sizeof d->msg, "%s", tuna_error_string(d->rc));
        } else {
            d->rc = s->rc;
            snprintf(d->msg, sizeof d->msg, "%s", s->msg);
        }
        atomic_store(&d->started, true);
    }
    s->tail = NULL;
    tuna_setup_restarting = NULL;
    tuna_stats_current = saved;
}

/* Advance the set-up (caller holds s->lock); block: wait in MPI instead of testing. */
static void advance(tuna_ctx *ctx, tuna_setup *s, bool block)
{
    while (s->phase != SETUP_DONE) {
        int flag = 0, rc;
        if (s->phase == SETUP_IDUP)
            rc = block ? (flag = 1, PMPI_Wait(&s->req[0], MPI_STATUS_IGNORE))
                       : PMPI_Test(&s->req[0], &flag, MPI_STATUS_IGNORE);
        else
            rc = block ? (flag = 1, PMPI_Waitall(2, s->req, MPI_STATUSES_IGNORE))
                       : PMPI_Testall(2, s->req, &flag, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS)
            flag = 1;
        if (!flag)
            return;
        if (s->phase == SETUP_IDUP) {
            rc = rc != MPI_SUCCESS ? tuna_error_set(rc, "MPI_Comm_idup failed")
                                   : post_exchange(ctx, s);
            s->phase = SETUP_EXCHANGE;
            if (rc == MPI_SUCCESS)
                continue;
            /* The exchange's posted part still completes (MPI_Waitall below). */
            PMPI_Waitall(2, s->req, MPI_STATUSES_IGNORE);
        } else {
            rc = finish_exchange(ctx, s, rc);
        }
        s->phase = SETUP_DONE;
        s->rc = rc;
        if (rc != MPI_SUCCESS)
            snprintf(s->msg, sizeof s->msg, "setting up the communicator failed: %s",
                     tuna_error_string(rc));
        run_deferred(ctx, s);
        atomic_store_explicit(&ctx->state, rc == MPI_SUCCESS ? TUNA_CTX_READY : TUNA_CTX_FAILED,
                              memory_order_release);
    }
}

/* The same set-up done at once, blocking, on a communicator every member of which is in the
 * call that created it (the drop-in's creation calls): the private communicator (ctx->comm
 * when the caller made it, else MPI_Comm_dup), then the exchange of step 2, waited for. No
 * start can wait for it (the application has no handle yet). */
int tuna_setup_now(tuna_ctx *ctx)
{
    tuna_setup s = {.req = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}};
    int rc = MPI_SUCCESS;
    if (ctx->comm == MPI_COMM_NULL && (rc = PMPI_Comm_dup(ctx->user, &ctx->comm)) != MPI_SUCCESS) {
        ctx->comm = MPI_COMM_NULL;
        return tuna_error_set(rc, "MPI_Comm_dup of the new communicator failed");
    }
    rc = post_exchange(ctx, &s);
    /* What was posted completes, failed post or not (requests not posted are null). */
    const int wait_rc = PMPI_Waitall(2, s.req, MPI_STATUSES_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = finish_exchange(ctx, &s, wait_rc);
    free(s.ids);
    return rc;
}

int tuna_setup_wait(tuna_ctx *ctx)
{
    tuna_setup *s = ctx->setup;
    pthread_mutex_lock(&s->lock);
    advance(ctx, s, true);
    const int rc = s->rc;
    pthread_mutex_unlock(&s->lock);
    return rc == MPI_SUCCESS ? rc : tuna_error_set(rc, "%s", s->msg);
}

void tuna_setup_release(tuna_ctx *ctx)
{
    tuna_setup *s = ctx->setup;
    if (!s)
        return;
    /* Freed with its communicator (MPI_Comm_free, collective; or MPI_Finalize, which first
     * completes every operation, and so the set-up): finish it, then nothing waits. */
    pthread_mutex_lock(&s->lock);
    advance(ctx, s, true);
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_destroy(&s->lock);
    free(s->ids);
    free(s);
    ctx->setup = NULL;
}

/* ------------------------------------------------------------------ deferred starts */

static void deferred_release(tuna_op *op)
{
    deferred *d = (deferred *)op;
    free(d->args);
    free(d);
}

/* Wait for the restart, then for the family's operation; complete with its outcome and its
 * statistics record (the deferred start's clock: the set-up is part of the call). */
static int deferred_step(tuna_op *op, int wait_rc)
{
    (void)wait_rc;
    deferred *d = (deferred *)op;
    if (!atomic_load(&d->started)) {
        tuna_setup *s = d->ctx->setup;
        if (pthread_mutex_trylock(&s->lock) == 0) { /* another thread advances it: later */
            advance(d->ctx, s, false);
            pthread_mutex_unlock(&s->lock);
        }
        if (!atomic_load(&d->started))
            return TUNA_STEP_YIELD;
    }
    if (d->rc != MPI_SUCCESS)
        return tuna_op_step_done(op, tuna_error_set(d->rc, "%s", d->msg));
    if (d->inner == TUNA_REQUEST_NULL) /* a start with nothing left to do */
        return tuna_op_step_done(op, MPI_SUCCESS);
    bool done;
    tuna_op_advance(d->inner, &done);
    if (!done)
        return TUNA_STEP_YIELD;
    tuna_op *in = d->inner;
    op->stats = in->stats;
    const int rc = in->rc;
    if (in->release)
        in->release(in);
    d->inner = TUNA_REQUEST_NULL;
    return tuna_op_step_done(op, rc);
}

int tuna_setup_defer(tuna_ctx *ctx, tuna_restart_fn *restart, void *args, tuna_request *req)
{
    tuna_setup *s = ctx->setup;
    pthread_mutex_lock(&s->lock);
    if (s->phase == SETUP_DONE) { /* finished since the caller looked: start now */
        pthread_mutex_unlock(&s->lock);
        int rc = s->rc == MPI_SUCCESS ? restart(args, req) : tuna_error_set(s->rc, "%s", s->msg);
        free(args);
        return rc;
    }
    deferred *d = tuna_calloc(1, sizeof *d);
    if (!d) {
        pthread_mutex_unlock(&s->lock);
        free(args);
        return tuna_error_set(MPI_ERR_NO_MEM, "no memory for the operation");
    }
    d->op.step = deferred_step;
    d->op.release = deferred_release;
    d->op.publish_stats = true;
    d->ctx = ctx;
    d->restart = restart;
    d->args = args;
    if (s->tail)
        s->tail->next = d;
    else
        s->head = d;
    s->tail = d;
    pthread_mutex_unlock(&s->lock);
    tuna_op_start(&d->op); /* its first step tests the set-up: local */
    *req = &d->op;
    return MPI_SUCCESS;
}

int tuna_setup_defer_copy(tuna_ctx *ctx, tuna_restart_fn *restart, const void *args,
                          size_t size, const char *fn, tuna_request *req)
{
    void *copy = tuna_malloc(size);
    if (!copy)
        return tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory for the operation", fn);
    memcpy(copy, args, size);
    return tuna_setup_defer(ctx, restart, copy, req);
}
