/*
 * What the drop-in's own files share beyond the MPI entry points (preload.c defines these):
 * the collectives it configures, a call's start on a communicator with its configured
 * choice, the statistics and errors, and tuna's operations behind proxy requests. Not
 * exported from libtuna-preload.so (exports.map keeps only the MPI entry points).
 */
#ifndef TUNA_PRELOAD_INTERNAL_H
#define TUNA_PRELOAD_INTERNAL_H

#include "preload.h"
#include "tuna.h"

#include <stdbool.h>

#if defined(TUNA_HAVE_MPIX_ALLTOALLV_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALL_INIT) ||         \
    defined(TUNA_HAVE_MPIX_ALLGATHER_INIT) || defined(TUNA_HAVE_MPIX_ALLREDUCE_INIT)
#include <mpi-ext.h>   /* Open MPI's persistent collectives: MPIX_*_init */
#endif
/* Some persistent collective is intercepted (plans behind persistent proxies). */
#if defined(TUNA_HAVE_MPI_ALLTOALLV_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALLV_INIT) ||          \
    defined(TUNA_HAVE_MPI_ALLTOALL_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALL_INIT) ||            \
    defined(TUNA_HAVE_MPI_ALLGATHER_INIT) || defined(TUNA_HAVE_MPIX_ALLGATHER_INIT) ||          \
    defined(TUNA_HAVE_MPI_ALLREDUCE_INIT) || defined(TUNA_HAVE_MPIX_ALLREDUCE_INIT)
#define TUNA_PRELOAD_PERSISTENT 1
#endif

#define OPT_MAX 256      /* longest option string accepted in an info key */
#define LABEL_MAX 128

/* The collectives the preload takes (colls[] in preload.c says how each is configured). */
enum coll { COLL_ALLTOALLV, COLL_ALLGATHER, COLL_ALLREDUCE, COLL_ALLTOALL, NCOLL };
/* Statistics rows only: the nonblocking forms (configured as their blocking forms). */
#define STAT_IALLTOALLV ((enum coll)NCOLL)
#define STAT_IALLTOALL ((enum coll)(NCOLL + 1))
#define STAT_IALLGATHER ((enum coll)(NCOLL + 2))
#define STAT_IALLREDUCE ((enum coll)(NCOLL + 3))

/* plan: starts of a persistent collective that tuna planned; plan_init: its inits. */
/* error: calls tuna's code answered with an error (labelled with the algorithm asked for). */
enum path { PATH_TUNA, PATH_VENDOR, PATH_FALLBACK, PATH_PLAN, PATH_PLAN_INIT, PATH_ERROR };

/* Why a call goes to the library's own (preload_reason_name: the statistics label). */
enum reason {
    WHY_INTER,
    WHY_BOTTOM,
    WHY_INPLACE_BIG,
    WHY_NO_STEP_FORM,
    WHY_INPLACE_BLOCK_BIG,
    WHY_COUNT
};
extern const char *const preload_reason_name[WHY_COUNT];

/* A communicator's choice for one collective. */
typedef struct choice {
    char override[OPT_MAX];     /* info key value captured from set_info / dup_with_info */
    int has_override;
    int resolved;               /* opt, vendor, label and source are valid */
    tuna_options opt;
    int vendor;
    char label[LABEL_MAX];
    const char *source;
    unsigned fallback_logged;   /* bit per fallback reason already printed */
} choice;

typedef struct comm_state comm_state;
/* s's choice for coll (resolved by preload_call_begin). */
const choice *preload_choice(const comm_state *s, enum coll coll);

/*
 * The start of every intercepted call: -1 outside MPI or on an invalid communicator (the
 * library's own call then reports it as usual); else the communicator's state with its
 * choice for `coll`, whether it is an intercommunicator, its (remote) size and the start
 * time, and MPI_SUCCESS or the error raised while resolving the choice.
 */
int preload_call_begin(MPI_Comm comm, enum coll coll, comm_state **s, int *inter, int *P,
                       double *t0);

/* TUNA_STATS set (read at start-up): without it no call pays for clocks or byte counts. */
extern bool preload_stats_enabled;
double preload_clock_now(void);
/* One call counted on s's statistics row (stat: the collective or its nonblocking row). */
void preload_account(comm_state *s, enum coll stat, enum path path, const char *label,
                     double secs, unsigned long long sent, unsigned long long recvd);
/*
 * The statistics label of a call of tuna's that succeeded: the algorithm asked for, and what
 * ran when that differs (auto's choice, ", learning" on the calls that explored; flat TuNA
 * for coalesced or staggered on nodes of unequal size, with the reason). tuna records both
 * on every call, statistics on or off.
 */
const char *preload_ran_label(const char *asked, enum coll coll, int asked_alg, char *buf,
                              size_t len);
/* A fallback to the library for reason why, reported once per communicator and reason
 * (TUNA_VERBOSE >= 1). */
void preload_log_fallback(MPI_Comm comm, comm_state *s, enum coll coll, enum reason why);
/* Raise rc on comm's error handler with tuna's message (one code per class carries it). */
int preload_raise_error(MPI_Comm comm, int rc, const char *msg);
/* A call of tuna's that failed: counted (what the application asked for) on the statistics
 * row of `stat` (the collective, or its nonblocking form's row), raised on comm. */
int preload_tuna_failed_as(comm_state *s, enum coll coll, enum coll stat, MPI_Comm comm, int rc,
                           double t0);

/* tuna's nonblocking operation `op` of `coll` (its choice in s) behind a new proxy, handed to
 * the application in *request; sent/recvd: this rank's bytes, for the statistics. */
int preload_proxy_for_op(comm_state *s, enum coll coll, tuna_request op, MPI_Comm comm,
                         double t0, unsigned long long sent, unsigned long long recvd,
                         MPI_Request *request);
/* A plan tuna made for a persistent `coll` on comm, behind a new persistent proxy handed to
 * the application in *request; sent/recvd: this rank's bytes per start. */
int preload_plan_request(comm_state *s, enum coll coll, tuna_plan plan, MPI_Comm comm,
                         double t0, unsigned long long sent, unsigned long long recvd,
                         MPI_Request *request);
/* After the library's own persistent init of `coll` succeeded (its request goes back
 * untouched): counted once, on the vendor path or as a fallback for reason `why`. */
void preload_library_init_done(comm_state *s, enum coll coll, int why, MPI_Comm comm,
                               double t0);
/* TUNA_PLAN: the planner's flags for the plans the preload makes. */
extern unsigned preload_plan_flags;

#endif /* TUNA_PRELOAD_INTERNAL_H */
