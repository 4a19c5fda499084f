/* Error messages: a per-thread record of the last error's code and text. */
#include "tuna_internal.h"

#include <stdarg.h>
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
    if (code == last_code && last_msg[0] != '\0')
        return last_msg;
    int len = 0;
    if (MPI_Error_string(code, mpi_msg, &len) != MPI_SUCCESS)
        snprintf(mpi_msg, sizeof mpi_msg, "unknown error code %d", code);
    return mpi_msg;
}

void *tuna_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        tuna_error_set(MPI_ERR_NO_MEM, "out of memory allocating %zu bytes", bytes);
    return p;
}

int tuna_verbosity(void)
{
    static int level = -1;
    if (level < 0) {
        const char *s = getenv("TUNA_VERBOSE");
        level = s && *s ? atoi(s) : 0;
        if (level < 0)
            level = 0;
    }
    return level;
}

void tuna_log(int level, const char *fmt, ...)
{
    if (tuna_verbosity() < level)
        return;
    int rank = -1, init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "tuna[%d]: %s\n", rank, msg);
}
