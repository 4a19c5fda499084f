/*
 * libtuna-preload.so: MPI_Alltoallv and MPI_Alltoall (and their large-count forms
 * MPI_Alltoallv_c, MPI_Alltoall_c, MPI_Ialltoall_c where the MPI library has them),
 * MPI_Allgather and MPI_Allreduce on top of tuna's collectives and PMPI_*, for applications
 * that change nothing:
 * LD_PRELOAD=libtuna-preload.so TUNA_ALLTOALLV=... mpiexec ...
 *
 * The choice of algorithm is per communicator and collective (info key, environment,
 * built-in default: choice.c), cached on the communicator with an attribute.
 * Calls tuna cannot take go to the library's own call and are counted as fallbacks.
 * Every such decision is the same on all ranks of the communicator (a local
 * decision would pair tuna's messages with the vendor's on other ranks).
 * TUNA_STATS=FILE: rank 0 writes one file at MPI_Finalize (from an
 * MPI_COMM_SELF attribute delete callback, so Fortran's MPI_FINALIZE, which
 * calls PMPI_Finalize, is covered) with one row per rank x communicator x
 * collective x path.
 * Persistent alltoallv and alltoall (MPI_Alltoallv_init, MPI_Alltoall_init, or Open
 * MPI's MPIX_ forms): the same choice; tuna's path makes a tuna plan
 * (TUNA_PLAN=estimate|measure, TUNA_WISDOM=FILE) and hands the application a proxy
 * request, and MPI_Start, MPI_Startall and MPI_Request_free act on the proxies; so do
 * MPI_Ialltoallv and MPI_Ialltoall, and the nonblocking and persistent allgather and
 * allreduce (docs/preload.md, docs/nonblocking.md).
 * The preload assumes its collectives are not called concurrently by several
 * threads of one process (see docs/preload.md).
 *
 * This header: what the drop-in's own files share beyond the MPI entry points: the
 * collectives it configures, a call's start on a communicator with its configured choice, the
 * statistics and errors, and tuna's operations behind proxy requests. Not exported from
 * libtuna-preload.so (exports.map keeps only the MPI entry points).
 *
 * The files, one concern each:
 *   choice.c              the choice per communicator (info key, environment, default;
 *                         the names: tuna_collective_table), a call's start
 *   comm_state.c          per-communicator state: the attribute, its copy (dup) and delete
 *                         callbacks, the live list released at finalize
 *   stats.c               TUNA_STATS: records per communicator, the file written at finalize
 *   messages.c            messages on stderr, errors raised on the communicator, fallbacks
 *   alltoallv.c           MPI_Alltoallv, _c, MPI_Ialltoallv, _c, MPI(X)_Alltoallv_init
 *   alltoallw.c           MPI_Alltoallw, MPI_Ialltoallw, MPI(X)_Alltoallw_init
 *   alltoall.c            MPI_Alltoall, _c, MPI_Ialltoall, _c, MPI(X)_Alltoall_init
 *   allgather_allreduce.c the same for MPI_Allgather and MPI_Allreduce
 *   neighbor.c            MPI_(I)neighbor_alltoallv, MPI(X)_Neighbor_alltoallv_init,
 *                         MPI_(I)neighbor_alltoall
 *   requests.c            proxy requests, their progress, the completion calls, MPI_Start*,
 *                         MPI_Request_free, MPI_Cancel
 *   info_keys.c           MPI_Comm_set_info, MPI_Comm_dup_with_info (info keys captured)
 *   comm_create.c         the communicator-creating calls: set-up at creation
 *   init_finalize.c       MPI_Init*, the configuration check at start-up, MPI_Finalize's work
 *   fortran_openmpi.c     Open MPI's Fortran bindings (fortran_openmpi_nonblocking.c: the
 *                         nonblocking and persistent ones and the request calls;
 *                         fortran_openmpi_alltoallw.c: alltoallw's three)
 */
#ifndef TUNA_PRELOAD_INTERNAL_H
#define TUNA_PRELOAD_INTERNAL_H

#include "preload.h"
#include "tuna.h"
#include "tuna_internal.h" /* tuna_collective_table */
#include "memkind.h"       /* preload_route: the buffers' memory kinds */

#include <stdbool.h>

#if defined(TUNA_HAVE_MPIX_ALLTOALLV_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALL_INIT) ||         \
    defined(TUNA_HAVE_MPIX_ALLGATHER_INIT) || defined(TUNA_HAVE_MPIX_ALLREDUCE_INIT) ||          \
    defined(TUNA_HAVE_MPIX_ALLTOALLW_INIT) || defined(TUNA_HAVE_MPIX_NEIGHBOR_ALLTOALLV_INIT)
#include <mpi-ext.h>   /* Open MPI's persistent collectives: MPIX_*_init */
#endif
/* Some persistent collective is intercepted (plans behind persistent proxies). */
#if defined(TUNA_HAVE_MPI_ALLTOALLV_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALLV_INIT) ||          \
    defined(TUNA_HAVE_MPI_ALLTOALL_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALL_INIT) ||            \
    defined(TUNA_HAVE_MPI_ALLGATHER_INIT) || defined(TUNA_HAVE_MPIX_ALLGATHER_INIT) ||          \
    defined(TUNA_HAVE_MPI_ALLREDUCE_INIT) || defined(TUNA_HAVE_MPIX_ALLREDUCE_INIT) ||          \
    defined(TUNA_HAVE_MPI_ALLTOALLW_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALLW_INIT) ||          \
    defined(TUNA_HAVE_MPI_NEIGHBOR_ALLTOALLV_INIT) ||                                           \
    defined(TUNA_HAVE_MPIX_NEIGHBOR_ALLTOALLV_INIT)
#define TUNA_PRELOAD_PERSISTENT 1
#endif

#define OPT_MAX 256      /* longest option string accepted in an info key */
#define LABEL_MAX 128

/* The collectives the preload takes (tuna_collective_table[] names each). */
enum coll {
    COLL_ALLTOALLV,
    COLL_ALLGATHER,
    COLL_ALLREDUCE,
    COLL_ALLTOALL,
    COLL_NEIGHBOR_ALLTOALLV,
    NCOLL
};

/* Statistics rows only: the nonblocking forms (configured as their blocking forms). */
#define STAT_IALLTOALLV ((enum coll)NCOLL)
#define STAT_IALLTOALL ((enum coll)(NCOLL + 1))
#define STAT_IALLGATHER ((enum coll)(NCOLL + 2))
#define STAT_IALLREDUCE ((enum coll)(NCOLL + 3))
/* ... and MPI_Alltoallw (configured as alltoallv, whose rows run it). */
#define STAT_ALLTOALLW ((enum coll)(NCOLL + 4))
#define STAT_IALLTOALLW ((enum coll)(NCOLL + 5))
#define STAT_ALLTOALLW_INIT ((enum coll)(NCOLL + 6))
/* MPI_Ineighbor_alltoallv, and MPI_(I)neighbor_alltoall (configured as neighbor_alltoallv, whose
 * rows run them with count arrays built from the uniform count). */
#define STAT_INEIGHBOR_ALLTOALLV ((enum coll)(NCOLL + 7))
#define STAT_NEIGHBOR_ALLTOALL ((enum coll)(NCOLL + 8))
#define STAT_INEIGHBOR_ALLTOALL ((enum coll)(NCOLL + 9))

/* Each collective's names, configuration and the library's call: tuna_collective_table[coll]
 * (src/core/collective_names.c); enum coll counts as tuna_collective does. */
_Static_assert(COLL_ALLTOALLV == (int)TUNA_ALLTOALLV && COLL_ALLGATHER == (int)TUNA_ALLGATHER &&
                   COLL_ALLREDUCE == (int)TUNA_ALLREDUCE && COLL_ALLTOALL == (int)TUNA_ALLTOALL &&
                   COLL_NEIGHBOR_ALLTOALLV == (int)TUNA_NEIGHBOR_ALLTOALLV &&
                   NCOLL == (int)TUNA_COLLECTIVE_COUNT,
               "enum coll follows tuna_collective");

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
    WHY_DEVICE, /* a buffer is not host memory (src/core/memkind.h) */
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
    char source[48];            /* where the choice came from, for messages */
    unsigned fallback_logged;   /* bit per fallback reason already printed */
} choice;

typedef struct stat_row stat_row;   /* stats.c */

/* Statistics of one communicator; outlives the communicator (written at finalize). */
typedef struct comm_record {
    int id;                     /* order of first MPI_Alltoallv on this rank */
    int size;
    char name[MPI_MAX_OBJECT_NAME];
    stat_row *rows;
    int nrows, cap;
    struct comm_record *next;
} comm_record;

/* The drop-in's state of one communicator (comm_state.c): an attribute of it. */
typedef struct comm_state {
    MPI_Comm comm;
    choice ch[NCOLL];
    int detached;               /* off the live list; only the delete callback frees it */
    comm_record *rec;
    struct comm_state *next, *prev;  /* live states, released at MPI_Finalize */
} comm_state;

/* comm_state.c. State of comm, created empty if absent; NULL on failure. */
comm_state *preload_state_get(MPI_Comm comm);
/* This thread's last communicator's state and its facts (inter, size) when comm is it and
 * no state has been freed since, else NULL (comm_state.c); _remember sets them. */
comm_state *preload_state_cached(MPI_Comm comm, int *inter, int *size);
void preload_state_remember(MPI_Comm comm, comm_state *s, int inter, int size);
/* The keyval of the states (made once; start-up makes it first). */
int preload_keyval_init(void);
/* At MPI_Finalize: the states of the communicators the application never freed. */
void preload_states_release(void);

/* choice.c. Parse `str` as the choice for coll; on failure tuna's message in why. */
int preload_parse_choice(enum coll coll, const char *str, tuna_options *opt, char *why,
                         size_t len);
/* Value of info key `key` in `info` (val holds OPT_MAX): 1 found, 0 absent, -1 too long. */
int preload_info_value(MPI_Info info, const char *key, char *val);

/*
 * Where a call goes, from what every rank knows alike: the library's own where the
 * communicator's choice is vendor (PRELOAD_VENDOR) or for a reason (enum reason, >= 0: an
 * intercommunicator, a buffer that is not host memory), else tuna's (PRELOAD_TUNA). The
 * memory kinds are asked here only: a call that goes to tuna enters it by its _host entry
 * (src/core/memkind.h), which does not ask again. Each collective's file adds its own reasons.
 */
#define PRELOAD_VENDOR (-1)
#define PRELOAD_TUNA (-2)
static inline int preload_route(const choice *ch, int inter, const void *sendbuf,
                                const void *recvbuf)
{
    return ch->vendor ? PRELOAD_VENDOR
           : inter    ? WHY_INTER
           : tuna_memory_kinds(sendbuf, recvbuf) != TUNA_MEMORY_HOST ? WHY_DEVICE
                                                                     : PRELOAD_TUNA;
}

/* The statistics path and label of a call the library took (why: a reason, or
 * PRELOAD_VENDOR: the choice's label). */
static inline enum path preload_library_path(int why)
{
    return why >= 0 ? PATH_FALLBACK : PATH_VENDOR;
}
static inline const char *preload_library_label(const comm_state *s, enum coll coll, int why)
{
    return why >= 0 ? preload_reason_name[why] : s->ch[coll].label;
}

/*
 * The start of every intercepted call: -1 outside MPI or on an invalid communicator (the
 * library's own call then reports it as usual); else the communicator's state with its
 * choice for `coll`, whether it is an intercommunicator, its (remote) size and the start
 * time, and MPI_SUCCESS or the error raised while resolving the choice.
 */
int preload_call_begin(MPI_Comm comm, enum coll coll, comm_state **s, int *inter, int *P,
                       double *t0);

/* An intercepted call once it has started (preload_enter). */
typedef struct preload_call {
    comm_state *s;
    const choice *ch; /* s's choice for the collective */
    int inter, P;     /* an intercommunicator; its (remote) size */
    double t0;        /* the start, for the statistics */
    int why;          /* preload_route's answer: PRELOAD_TUNA, PRELOAD_VENDOR or a reason */
} preload_call;

/*
 * The prologue every entry of every collective shares: preload_call_begin, the choice and
 * preload_route. < 0: the library's own call is to take the call and report what is wrong
 * (outside MPI, an invalid communicator; `request_ok` false: a NULL request pointer); else the
 * MPI error raised while resolving the choice, or MPI_SUCCESS with the call in *c, whose file
 * then adds its collective's own reasons to c->why.
 */
static inline int preload_enter(MPI_Comm comm, enum coll coll, bool request_ok,
                                const void *sendbuf, const void *recvbuf, preload_call *c)
{
    /* preload_call_begin sets every field it returns MPI_SUCCESS with */
    const int rc =
        request_ok ? preload_call_begin(comm, coll, &c->s, &c->inter, &c->P, &c->t0) : -1;
    if (rc != MPI_SUCCESS)
        return rc;
    c->ch = &c->s->ch[coll];
    c->why = preload_route(c->ch, c->inter, sendbuf, recvbuf);
    return MPI_SUCCESS;
}

/* comm_create.c. TUNA_SETUP_AT_CREATION (read at start-up; 0 before it): the creation calls
 * set the new intracommunicators up. */
extern int preload_setup_at_creation;
/* After a creation call (`call`) on the intracommunicator `parent`, in which every rank of
 * parent took part, returned rc with *newcomm: with set-up at creation on, an
 * intracommunicator there set up (collective over parent: ranks with MPI_COMM_NULL take part
 * too); a failure frees it and raises the error on parent. Returns what the call returns. */
int preload_comm_created(MPI_Comm parent, MPI_Comm *newcomm, int rc, const char *call);

/* init_finalize.c. First contact with MPI: keyvals, the finalize hook, the configuration
 * check over `comm` (collective over it). */
void preload_startup(MPI_Comm comm);
#if defined(TUNA_MPI_ABI)
/* abi_check.c: stops the process unless PMPI_Init binds to a standard-ABI library. */
void preload_abi_check(void);
#endif

/* stats.c. TUNA_STATS set (read at start-up): without it no call pays for clocks or byte
 * counts. */
extern bool preload_stats_enabled;
double preload_clock_now(void);
/* The statistics row of the nonblocking form of `c`. */
enum coll preload_stat_nonblocking(enum coll c);
/* One call counted on a record (NULL, or statistics off: nothing). */
void preload_account_rec(comm_record *rec, enum coll coll, enum path path, const char *label,
                         double secs, unsigned long long sent, unsigned long long recvd);
/* The communicator's statistics record, made on first use (NULL without memory). */
comm_record *preload_state_record(comm_state *s);
/* At MPI_Finalize: the statistics file (collective over MPI_COMM_WORLD), then the records. */
void preload_write_stats(void);
void preload_stats_release(void);
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

/* messages.c. One line on stderr, prefixed with the world rank. */
void preload_say(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Whether this process is rank 0 of comm (the one that prints a communicator's messages). */
int preload_comm_rank0(MPI_Comm comm);
/* A fallback to the library for reason why, reported once per communicator and reason
 * (TUNA_VERBOSE >= 1). */
void preload_log_fallback(MPI_Comm comm, comm_state *s, enum coll coll, enum reason why);
/* Raise rc on comm's error handler with tuna's message (one code per class carries it). */
int preload_raise_error(MPI_Comm comm, int rc, const char *msg);
/* A call of tuna's that failed: counted (what the application asked for) on the statistics
 * row of `stat` (the collective, or its nonblocking form's row), raised on comm. */
int preload_tuna_failed_as(comm_state *s, enum coll coll, enum coll stat, MPI_Comm comm, int rc,
                           double t0);
/* The same on the collective's own row. */
int preload_tuna_failed(comm_state *s, enum coll coll, MPI_Comm comm, int rc, double t0);
/* A persistent init of tuna's that failed (its errors are agreed: every rank is here):
 * counted on the collective's row as an error labelled "CHOICE (COLL_init)", raised on comm. */
int preload_init_failed(comm_state *s, enum coll coll, MPI_Comm comm, int rc, double t0);

/* requests.c (the proxies). */
/* tuna's nonblocking operation `op` of `coll` (its choice in s) behind a new proxy, handed to
 * the application in *request; sent/recvd: this rank's bytes, for the statistics. */
int preload_proxy_for_op(comm_state *s, enum coll coll, tuna_request op, MPI_Comm comm,
                         double t0, unsigned long long sent, unsigned long long recvd,
                         MPI_Request *request);
/* What a nonblocking call of the drop-in made for tuna's operation, which reads it until it
 * finishes: one malloc'd block (arrays may follow the header) and up to two derived types
 * (MPI_DATATYPE_NULL: none). preload_owned_free frees the types, then the block (NULL: nothing). */
typedef struct preload_owned {
    MPI_Datatype type[2];
} preload_owned;
void preload_owned_free(preload_owned *o);
/* The same, counted on the statistics row `stat` (MPI_Ialltoallw: alltoallv's choice), the
 * proxy also owning `owned` (NULL: nothing; freed when the operation finishes, or here on
 * failure). */
int preload_proxy_for_op_owning(comm_state *s, enum coll coll, enum coll stat, tuna_request op,
                                preload_owned *owned, MPI_Comm comm, double t0, unsigned long long sent,
                                unsigned long long recvd, MPI_Request *request);
/* A plan tuna made for a persistent `coll` on comm, behind a new persistent proxy handed to
 * the application in *request, counted on the statistics row `stat` (coll's own, or
 * MPI_Alltoallw_init's: alltoallv's choice); sent/recvd: this rank's bytes per start. */
int preload_plan_request(comm_state *s, enum coll coll, enum coll stat, tuna_plan plan,
                         MPI_Comm comm, double t0, unsigned long long sent,
                         unsigned long long recvd, MPI_Request *request);
/* After the library's own persistent init of `coll` succeeded (its request goes back
 * untouched): counted once, on the vendor path or as a fallback for reason `why`. */
void preload_library_init_done(comm_state *s, enum coll coll, int why, MPI_Comm comm,
                               double t0);
/* At MPI_Finalize: first the operations still in flight finish (a freed request's: its peers
 * are in it); after the statistics, the plans the application never freed go. */
void preload_proxies_drain(void);
void preload_proxies_release(void);
/* TUNA_PLAN (init_finalize.c): the planner's flags for the plans the preload makes. */
extern unsigned preload_plan_flags;

#endif /* TUNA_PRELOAD_INTERNAL_H */
