/* Error messages: a per-thread record of the last error's code and text. */
#include "tuna_internal.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local int last_code = MPI_SUCCESS;
static _Thread_local char last_msg[512];
static _Thread_local char mpi_msg[MPI_MAX_ERROR_STRING + 64];

int tuna_error_set(int code, const char *fmt, ...)
{
    /* Keep the first (innermost) message: it names the cause. */
    if (last_code != MPI_SUCCESS)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
    last_code = code;
    return code;
}

void tuna_error_clear(void)
{
    last_code = MPI_SUCCESS;
    last_msg[0] = '\0';
}

const char *tuna_error_string(int code)
{
    if (code == MPI_SUCCESS)
        return "success";
#ifdef SMPI_SHARED_MALLOC
    /* Shared globals (smpi/privatization:no): the per-thread message is every rank's, and
     * another rank's next call may have cleared it; the refusal's text is constant. */
    const char *shared = tuna_smpi_shared_globals();
    if (code == MPI_ERR_OTHER && shared)
        return shared;
#endif
    if (code == last_code && last_msg[0] != '\0')
        return last_msg;
    int len = 0;
    if (PMPI_Error_string(code, mpi_msg, &len) != MPI_SUCCESS)
        snprintf(mpi_msg, sizeof mpi_msg, "unknown error code %d", code);
    return mpi_msg;
}

/*
 * Allocation-failure test hook (docs/testing.md; a testing facility, not a user feature):
 * every internal allocation is counted from the last tuna_test_alloc_fail(k), and the k-th
 * fails as if memory were exhausted. Per process, not per thread: the tests that use it
 * call tuna from one thread. Atomic (relaxed) because threads calling tuna at once all count
 * here (ThreadSanitizer found the plain counter racing): one locked increment per allocation.
 */
static atomic_long alloc_count, alloc_fail_at;
static atomic_bool alloc_hit;

void tuna_test_alloc_fail(long k)
{
    atomic_store_explicit(&alloc_count, 0, memory_order_relaxed);
    atomic_store_explicit(&alloc_fail_at, k > 0 ? k : 0, memory_order_relaxed);
    atomic_store_explicit(&alloc_hit, false, memory_order_relaxed);
}

long tuna_test_alloc_count(void)
{
    return atomic_load_explicit(&alloc_count, memory_order_relaxed);
}

bool tuna_test_alloc_hit(void)
{
    return atomic_load_explicit(&alloc_hit, memory_order_relaxed);
}

static bool alloc_fails(void)
{
    const long n = atomic_fetch_add_explicit(&alloc_count, 1, memory_order_relaxed) + 1;
    if (n != atomic_load_explicit(&alloc_fail_at, memory_order_relaxed))
        return false;
    atomic_store_explicit(&alloc_hit, true, memory_order_relaxed);
    return true;
}

static void *no_mem(size_t bytes)
{
    tuna_error_set(MPI_ERR_NO_MEM, "out of memory allocating %zu bytes", bytes);
    return NULL;
}

void *tuna_malloc(size_t bytes)
{
    void *p = alloc_fails() ? NULL : malloc(bytes ? bytes : 1);
    return p ? p : no_mem(bytes);
}

void *tuna_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return no_mem(SIZE_MAX);
    void *p = alloc_fails() ? NULL : calloc(n ? n : 1, size ? size : 1);
    return p ? p : no_mem(n * size);
}

void *tuna_realloc_try(void *old, size_t bytes)
{
    return alloc_fails() ? NULL : realloc(old, bytes ? bytes : 1);
}

void *tuna_realloc(void *old, size_t bytes)
{
    void *p = tuna_realloc_try(old, bytes);
    return p ? p : no_mem(bytes);
}

int tuna_verbosity(void)
{
    /* Read once; atomic because threads may ask first at the same time (the value they
     * store is the same). */
    static atomic_int level = -1;
    int v = atomic_load_explicit(&level, memory_order_relaxed);
    if (v < 0) {
        const char *s = getenv("TUNA_VERBOSE");
        v = s && *s ? atoi(s) : 0;
        if (v < 0)
            v = 0;
        atomic_store_explicit(&level, v, memory_order_relaxed);
    }
    return v;
}

void tuna_log(int level, const char *fmt, ...)
{
    if (tuna_verbosity() < level)
        return;
    int rank = -1, init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin)
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char msg[1536]; /* auto's learning lines name six candidates */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "tuna[%d]: %s\n", rank, msg);
}
