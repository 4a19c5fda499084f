/*
 * What the drop-in says and raises: lines on stderr prefixed with the world rank, errors
 * raised through the communicator's error handler with tuna's message attached to the error
 * code, the fallbacks to the library's own call (reported once per communicator and reason)
 * and the calls of tuna's that failed.
 */
#include "preload_internal.h"
#include "tuna_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int world_rank(void)
{
    int r = -1, init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin)
        PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

void preload_say(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "tuna-preload[%d]: %s\n", world_rank(), msg);
    fflush(stderr);
}

/*
 * One error code per error class, carrying tuna's latest message, so that the
 * error handler (MPI_ERRORS_ARE_FATAL prints it, mpi4py raises it) and
 * MPI_Error_string show what tuna found while MPI_Error_class stays the class.
 */
#define CLASS_TABLE 128   /* predefined classes are below this (MPI_ERR_LASTCODE is huge in MPICH) */
static int class_codes[CLASS_TABLE];

static int error_code_with_message(int rc, const char *msg)
{
    int cls = MPI_ERR_OTHER;
    if (PMPI_Error_class(rc, &cls) != MPI_SUCCESS || cls < 0 || cls >= CLASS_TABLE)
        return rc;
    if (!class_codes[cls] && PMPI_Add_error_code(cls, &class_codes[cls]) != MPI_SUCCESS) {
        class_codes[cls] = 0;
        return rc;
    }
    char text[MPI_MAX_ERROR_STRING], back[MPI_MAX_ERROR_STRING];
    snprintf(text, sizeof text, "tuna-preload: %s", msg);
    int len = 0;
    /* MPICH 4.0.2 decodes such codes as its own error stacks: then use the plain code. */
    if (PMPI_Add_error_string(class_codes[cls], text) != MPI_SUCCESS ||
        PMPI_Error_string(class_codes[cls], back, &len) != MPI_SUCCESS ||
        strncmp(back, "tuna-preload:", 13) != 0)
        return rc;
    return class_codes[cls];
}

/* Report rc on comm as MPI does: through the communicator's error handler. */
int preload_raise_error(MPI_Comm comm, int rc, const char *msg)
{
    if (tuna_verbosity() >= 1)
        preload_say("error: %s", msg);
    int code = error_code_with_message(rc, msg);
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

int preload_comm_rank0(MPI_Comm comm)
{
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    return r == 0;
}

const char *const preload_reason_name[WHY_COUNT] = {
    "intercommunicator", "MPI_BOTTOM or NULL buffer with data",
    "MPI_IN_PLACE with a non-contiguous type and a block over 2 GiB",
    "the algorithm has no nonblocking form yet", "MPI_IN_PLACE with a block over 2 GiB",
    "device memory (docs/gpu.md)"};

void preload_log_fallback(MPI_Comm comm, comm_state *s, enum coll coll, enum reason why)
{
    choice *ch = &s->ch[coll];
    if (tuna_verbosity() < 1 || (ch->fallback_logged & (1u << why)))
        return;
    ch->fallback_logged |= 1u << why;
    const comm_record *rec = preload_state_record(s);
    if (preload_comm_rank0(comm))
        preload_say("communicator %d '%s': %s fallback: %s", rec ? rec->id : -1,
                    rec ? rec->name : "-", tuna_collective_table[coll].library, preload_reason_name[why]);
}

int preload_tuna_failed_as(comm_state *s, enum coll coll, enum coll stat, MPI_Comm comm, int rc,
                           double t0)
{
    preload_account(s, stat, PATH_ERROR, s->ch[coll].label, preload_clock_now() - t0, 0, 0);
    char msg[600];
    snprintf(msg, sizeof msg, "%s", tuna_error_string(rc));
    return preload_raise_error(comm, rc, msg);
}

int preload_tuna_failed(comm_state *s, enum coll coll, MPI_Comm comm, int rc, double t0)
{
    return preload_tuna_failed_as(s, coll, coll, comm, rc, t0);
}

int preload_init_failed(comm_state *s, enum coll coll, MPI_Comm comm, int rc, double t0)
{
    char label[LABEL_MAX + 32], msg[600];
    snprintf(msg, sizeof msg, "%s", tuna_error_string(rc));
    snprintf(label, sizeof label, "%s (%s_init)", s->ch[coll].label,
             tuna_collective_table[coll].name);
    preload_account(s, coll, PATH_ERROR, label, preload_clock_now() - t0, 0, 0);
    return preload_raise_error(comm, rc, msg);
}
