/*
 * Agreements over a communicator that every family's front end uses: the one allreduce of
 * an error flag and size statistics (TUNA_AGREE_*, with auto's learning samples after them),
 * and TUNA_ARGCHECK, which says whether argument errors are agreed on every call.
 */
#include "tuna_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Element-wise: sum of the TUNA_AGREE_ZERO_BLOCKS .. TUNA_AGREE_N - 1 entries, max of the
 * others (the first three, and auto's learning samples after TUNA_AGREE_N). One vector per
 * call: the reduction is of at most TUNA_AGREE_N + TUNA_LEARN_FIELDS values. */
static void agree_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const long long *a = in;
    long long *b = inout;
    for (int i = 0; i < *len; i++) {
        if (i >= TUNA_AGREE_ZERO_BLOCKS && i < TUNA_AGREE_N)
            b[i] += a[i];
        else if (a[i] > b[i])
            b[i] = a[i];
    }
}

static MPI_Op agree_op = MPI_OP_NULL;
static pthread_mutex_t agree_op_lock = PTHREAD_MUTEX_INITIALIZER;

/* The agreement's reduction, made on first use; under the lock because threads may agree
 * first on their communicators at once. */
static int agree_op_get(MPI_Op *op)
{
    pthread_mutex_lock(&agree_op_lock);
    int rc = agree_op == MPI_OP_NULL ? PMPI_Op_create(agree_fn, 1, &agree_op) : MPI_SUCCESS;
    *op = agree_op;
    pthread_mutex_unlock(&agree_op_lock);
    return rc;
}

int tuna_agree_n(tuna_ctx *ctx, long long *v, int n)
{
    MPI_Op op;
    TUNA_MPI_CHECK(agree_op_get(&op));
    TUNA_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, v, n, MPI_LONG_LONG, op, ctx->comm));
    return MPI_SUCCESS;
}

int tuna_agree_start(tuna_ctx *ctx, long long *v, int n, MPI_Request *req)
{
    MPI_Op op;
    TUNA_MPI_CHECK(agree_op_get(&op));
    TUNA_MPI_CHECK(PMPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_LONG_LONG, op, ctx->comm, req));
    return MPI_SUCCESS;
}

int tuna_agree(tuna_ctx *ctx, long long v[TUNA_AGREE_N])
{
    return tuna_agree_n(ctx, v, TUNA_AGREE_N);
}

/*
 * TUNA_ARGCHECK: "local" (default) checks each rank's arguments on that rank and returns
 * the error there, as MPI libraries do: a rank with bad arguments returns at once and its
 * peers may wait for it. "collective" (a debugging mode) agrees on argument errors with one
 * allreduce per call, so every rank returns an error and none waits.
 */
enum { ARGCHECK_LOCAL, ARGCHECK_COLLECTIVE, ARGCHECK_INVALID };

int tuna_argcheck_collective(bool *collective)
{
    /* Read once; atomic because threads may ask first at once (they store the same). */
    static atomic_int read_once = -1;
    int cached = atomic_load_explicit(&read_once, memory_order_relaxed);
    if (cached < 0) {
        const char *s = getenv("TUNA_ARGCHECK");
        cached = !s || !*s || strcmp(s, "local") == 0 ? ARGCHECK_LOCAL
                 : strcmp(s, "collective") == 0       ? ARGCHECK_COLLECTIVE
                                                      : ARGCHECK_INVALID;
        atomic_store_explicit(&read_once, cached, memory_order_relaxed);
    }
    if (cached == ARGCHECK_INVALID)
        return tuna_error_set(MPI_ERR_ARG, "TUNA_ARGCHECK='%s': expected 'local' or 'collective'",
                              getenv("TUNA_ARGCHECK"));
    *collective = cached == ARGCHECK_COLLECTIVE;
    return MPI_SUCCESS;
}
