/*
 * libtuna-preload.so: MPI_Alltoallv and MPI_Alltoall (and their large-count forms
 * MPI_Alltoallv_c, MPI_Alltoall_c, MPI_Ialltoall_c where the MPI library has them),
 * MPI_Allgather and MPI_Allreduce (allgather_allreduce.c) on top of tuna's
 * collectives and PMPI_*, for applications that change nothing:
 * LD_PRELOAD=libtuna-preload.so TUNA_ALLTOALLV=... mpiexec ...
 *
 * Choice of algorithm per communicator and collective, first match wins:
 *   1. info key "tuna_alltoallv" ("tuna_alltoall", "tuna_allgather", "tuna_allreduce") given to
 *      MPI_Comm_set_info / MPI_Comm_dup_with_info (captured here, because Open MPI
 *      and MPICH drop unknown keys from the communicator's info), or present in
 *      MPI_Comm_get_info;
 *   2. the environment variable TUNA_ALLTOALLV (TUNA_ALLTOALL, TUNA_ALLGATHER, TUNA_ALLREDUCE);
 *   3. tuna's built-in default.
 * The parsed choices are cached on the communicator with an attribute.
 *
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
 */
#include "preload_internal.h"
#include "tuna_internal.h"
#include "op.h" /* TUNA_PROGRESS */
#include "../select/tuna_select.h"


#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How each collective the preload takes is configured. */
static const struct {
    tuna_collective id;
    const char *name;       /* TUNA_STATS' collective column */
    const char *info_key;   /* per-communicator choice */
    const char *env;        /* job-wide choice */
    const char *pmpi;       /* the library's own call, for messages */
    const char *by_info;    /* where the choice came from, for messages */
} colls[NCOLL] = {
    {TUNA_ALLTOALLV, "alltoallv", "tuna_alltoallv", "TUNA_ALLTOALLV", "PMPI_Alltoallv",
     "info key tuna_alltoallv"},
    {TUNA_ALLGATHER, "allgather", "tuna_allgather", "TUNA_ALLGATHER", "PMPI_Allgather",
     "info key tuna_allgather"},
    {TUNA_ALLREDUCE, "allreduce", "tuna_allreduce", "TUNA_ALLREDUCE", "PMPI_Allreduce",
     "info key tuna_allreduce"},
    {TUNA_ALLTOALL, "alltoall", "tuna_alltoall", "TUNA_ALLTOALL", "PMPI_Alltoall",
     "info key tuna_alltoall"},
};

/* ------------------------------------------------------------------ stats */

static const char *stat_coll_name(enum coll c)
{
    static const char *const nonblocking[] = {"ialltoallv", "ialltoall", "iallgather",
                                              "iallreduce"};
    return c >= NCOLL ? nonblocking[c - NCOLL] : colls[c].name;
}

/* The statistics collective of the nonblocking form of `c`. */
static enum coll stat_nonblocking(enum coll c)
{
    switch (c) {
    case COLL_ALLTOALL:
        return STAT_IALLTOALL;
    case COLL_ALLGATHER:
        return STAT_IALLGATHER;
    case COLL_ALLREDUCE:
        return STAT_IALLREDUCE;
    default:
        return STAT_IALLTOALLV;
    }
}

static const char *const path_name[] = {"tuna", "vendor", "fallback", "plan", "plan_init",
                                        "error"};

typedef struct stat_row {
    enum coll coll;
    enum path path;
    char label[LABEL_MAX];      /* algorithm string, or the fallback's reason */
    long long calls;
    unsigned long long bytes_sent, bytes_recv;
    double seconds;
} stat_row;

/* Statistics of one communicator; outlives the communicator (written at finalize). */
typedef struct comm_record {
    int id;                     /* order of first MPI_Alltoallv on this rank */
    int size;
    char name[MPI_MAX_OBJECT_NAME];
    stat_row *rows;
    int nrows, cap;
    struct comm_record *next;
} comm_record;

static comm_record *records, **records_tail = &records;
static int records_count;

bool preload_stats_enabled;

double preload_clock_now(void)
{
    return preload_stats_enabled ? PMPI_Wtime() : 0.0;
}

static stat_row *stat_find(comm_record *rec, enum coll coll, enum path path, const char *label)
{
    for (int i = 0; i < rec->nrows; i++)
        if (rec->rows[i].coll == coll && rec->rows[i].path == path &&
            strcmp(rec->rows[i].label, label) == 0)
            return &rec->rows[i];
    if (rec->nrows == rec->cap) {
        int cap = rec->cap ? 2 * rec->cap : 4;
        stat_row *r = realloc(rec->rows, sizeof *r * (size_t)cap);
        if (!r)
            return NULL;    /* statistics are best effort; the call itself goes on */
        rec->rows = r;
        rec->cap = cap;
    }
    stat_row *r = &rec->rows[rec->nrows++];
    memset(r, 0, sizeof *r);
    r->coll = coll;
    r->path = path;
    snprintf(r->label, sizeof r->label, "%s", label);
    return r;
}

/* ------------------------------------------------------------------ per-communicator state */

typedef struct comm_state {
    MPI_Comm comm;
    choice ch[NCOLL];
    int detached;               /* off the live list; only the delete callback frees it */
    comm_record *rec;
    struct comm_state *next, *prev;  /* live states, released at MPI_Finalize */
} comm_state;

static int state_keyval = MPI_KEYVAL_INVALID;
static comm_state *live_states;
static int startup_done;

static void state_unlink_free(comm_state *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else if (live_states == s)
        live_states = s->next;
    if (s->next)
        s->next->prev = s->prev;
    free(s);
}

static comm_state *state_new(MPI_Comm comm)
{
    comm_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->comm = comm;
    s->next = live_states;
    if (live_states)
        live_states->prev = s;
    live_states = s;
    return s;
}

static int state_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    comm_state *s = attr;
    if (s->detached)
        free(s);
    else
        state_unlink_free(s);
    return MPI_SUCCESS;
}

/* Take s off the live list but leave it to the attribute's delete callback. */
static void state_detach(comm_state *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else if (live_states == s)
        live_states = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
    s->detached = 1;
}

/* MPI_Comm_dup keeps an info-key choice, as MPI-4 dup keeps the info hints. */
static int state_copy_fn(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    (void)extra;
    const comm_state *src = in;
    *flag = 0;
    int any = 0;
    for (int c = 0; c < NCOLL; c++)
        any |= src->ch[c].has_override;
    if (!any)
        return MPI_SUCCESS;
    /* The new communicator's handle is not known here; it is set on first use. */
    comm_state *s = state_new(MPI_COMM_NULL);
    if (!s)
        return MPI_ERR_NO_MEM;
    for (int c = 0; c < NCOLL; c++)
        if (src->ch[c].has_override) {
            memcpy(s->ch[c].override, src->ch[c].override, sizeof s->ch[c].override);
            s->ch[c].has_override = 1;
        }
    *(void **)out = s;
    *flag = 1;
    return MPI_SUCCESS;
}

static int keyval_init(void)
{
    if (state_keyval != MPI_KEYVAL_INVALID)
        return MPI_SUCCESS;
    return PMPI_Comm_create_keyval(state_copy_fn, state_delete_fn, &state_keyval, NULL);
}

/* State of comm, created empty if absent; NULL on failure. */
static comm_state *state_get(MPI_Comm comm)
{
    if (keyval_init() != MPI_SUCCESS)
        return NULL;
    void *val = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, state_keyval, &val, &flag) != MPI_SUCCESS)
        return NULL;
    if (flag) {
        comm_state *s = val;
        s->comm = comm;
        return s;
    }
    comm_state *s = state_new(comm);
    if (!s)
        return NULL;
    if (PMPI_Comm_set_attr(comm, state_keyval, s) != MPI_SUCCESS) {
        state_unlink_free(s);
        return NULL;
    }
    return s;
}

/* ------------------------------------------------------------------ messages and errors */

static int world_rank(void)
{
    int r = -1, init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin)
        PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static void say(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static void say(const char *fmt, ...)
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
        say("error: %s", msg);
    int code = error_code_with_message(rc, msg);
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

/* ------------------------------------------------------------------ choice of algorithm */

static int parse_choice(enum coll coll, const char *str, tuna_options *opt, char *why,
                        size_t len)
{
    int rc = tuna_options_parse(str, colls[coll].id, opt);
    if (rc != MPI_SUCCESS)
        snprintf(why, len, "%s", tuna_error_string(rc));
    return rc;
}

/* Value of info key `key` in `info`: 1 found, 0 absent, -1 too long. */
static int info_value(MPI_Info info, const char *key, char *val)
{
    if (info == MPI_INFO_NULL)
        return 0;
    int len = 0, flag = 0;
    if (PMPI_Info_get_valuelen(info, key, &len, &flag) != MPI_SUCCESS || !flag)
        return 0;
    if (len >= OPT_MAX)
        return -1;
    PMPI_Info_get(info, key, OPT_MAX - 1, val, &flag);
    return flag ? 1 : 0;
}

/* Fill the communicator's choice for `coll` from its info key or the environment. */
static int resolve(MPI_Comm comm, comm_state *s, enum coll coll)
{
    choice *ch = &s->ch[coll];
    const char *key = colls[coll].info_key;
    char why[512], val[OPT_MAX];
    int rc;
    if (ch->has_override) {
        /* Validated when captured. */
        rc = parse_choice(coll, ch->override, &ch->opt, why, sizeof why);
        ch->source = colls[coll].by_info;
    } else {
        MPI_Info info = MPI_INFO_NULL;
        int found = 0;
        if (PMPI_Comm_get_info(comm, &info) == MPI_SUCCESS && info != MPI_INFO_NULL) {
            found = info_value(info, key, val);
            PMPI_Info_free(&info);
        }
        if (found < 0) {
            snprintf(why, sizeof why, "info key %s: value longer than %d characters", key,
                     OPT_MAX - 1);
            return preload_raise_error(comm, MPI_ERR_INFO_VALUE, why);
        }
        if (found) {
            rc = parse_choice(coll, val, &ch->opt, why, sizeof why);
            ch->source = colls[coll].by_info;
            if (rc != MPI_SUCCESS) {
                char msg[1024];
                snprintf(msg, sizeof msg, "info key %s='%s': %s", key, val, why);
                return preload_raise_error(comm, MPI_ERR_INFO_VALUE, msg);
            }
        } else {
            const char *env = getenv(colls[coll].env);
            ch->source = env && *env ? colls[coll].env : "built-in default";
            rc = tuna_options_default(colls[coll].id, &ch->opt);
            if (rc != MPI_SUCCESS)
                snprintf(why, sizeof why, "%s", tuna_error_string(rc));
        }
    }
    if (rc != MPI_SUCCESS)
        return preload_raise_error(comm, rc, why);
    ch->vendor = tuna_registry_row(tuna_registry_of(colls[coll].id), ch->opt.algorithm)->kind ==
                 TUNA_ROW_VENDOR;
    if (tuna_options_format(&ch->opt, ch->label, sizeof ch->label) != MPI_SUCCESS)
        snprintf(ch->label, sizeof ch->label, "%s",
                 tuna_algorithm_get(colls[coll].id, ch->opt.algorithm)->name);
    ch->resolved = 1;
    return MPI_SUCCESS;
}

static comm_record *record_new(MPI_Comm comm)
{
    comm_record *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->id = records_count++;
    PMPI_Comm_size(comm, &r->size);
    int len = 0;
    if (PMPI_Comm_get_name(comm, r->name, &len) != MPI_SUCCESS || len == 0)
        snprintf(r->name, sizeof r->name, "-");
    /* Names go into a tab-separated file. */
    for (char *c = r->name; *c; c++)
        if (*c == '\t' || *c == '\n')
            *c = ' ';
    *records_tail = r;
    records_tail = &r->next;
    return r;
}

static int comm_rank0(MPI_Comm comm)
{
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    return r == 0;
}

/* ------------------------------------------------------------------ the call */

const char *const preload_reason_name[WHY_COUNT] = {
    "intercommunicator", "MPI_BOTTOM or NULL buffer with data",
    "MPI_IN_PLACE with a non-contiguous type and a block over 2 GiB",
    "the algorithm has no nonblocking form yet", "MPI_IN_PLACE with a block over 2 GiB"};

static void account_rec(comm_record *rec, enum coll coll, enum path path, const char *label,
                        double secs, unsigned long long sent, unsigned long long recvd)
{
    stat_row *r = rec && preload_stats_enabled ? stat_find(rec, coll, path, label) : NULL;
    if (!r)
        return;
    r->calls++;
    r->seconds += secs;
    r->bytes_sent += sent;
    r->bytes_recv += recvd;
}

/* The communicator's statistics record, made on first use (NULL without memory). */
static comm_record *state_record(comm_state *s)
{
    if (!s->rec)
        s->rec = record_new(s->comm);
    return s->rec;
}

void preload_account(comm_state *s, enum coll coll, enum path path, const char *label,
                     double secs, unsigned long long sent, unsigned long long recvd)
{
    if (preload_stats_enabled)
        account_rec(state_record(s), coll, path, label, secs, sent, recvd);
}

/* Bytes of one side of an alltoallv, int or large counts (0 for invalid arguments:
 * statistics only). */
static unsigned long long block_bytes(const tuna_counts *k, MPI_Datatype type, int P)
{
    MPI_Count size = 0;
    if ((!k->n && !k->nl) || type == MPI_DATATYPE_NULL ||
        PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    unsigned long long n = 0;
    for (int j = 0; j < P; j++) {
        const MPI_Count c = tuna_counts_n(k, j);
        if (c > 0)
            n += (unsigned long long)c * (unsigned long long)size;
    }
    return n;
}

/* This rank's bytes sent and received by an alltoallv (MPI_IN_PLACE: the receive side). */
static void a2av_bytes(const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                       const tuna_counts *rcv, MPI_Datatype recvtype, int P,
                       unsigned long long *sent, unsigned long long *recvd)
{
    const bool inplace = sendbuf == MPI_IN_PLACE;
    *sent = block_bytes(inplace ? rcv : sc, inplace ? recvtype : sendtype, P);
    *recvd = block_bytes(rcv, recvtype, P);
}

/* One alltoallv call counted on `path` (nothing without TUNA_STATS). */
static void account_a2av(comm_state *s, enum path path, const char *label, double t0,
                         const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                         const tuna_counts *rcv, MPI_Datatype recvtype, int P)
{
    if (!preload_stats_enabled || !s)
        return;
    unsigned long long sent, recvd;
    a2av_bytes(sendbuf, sc, sendtype, rcv, recvtype, P, &sent, &recvd);
    preload_account(s, COLL_ALLTOALLV, path, label, preload_clock_now() - t0, sent, recvd);
}

void preload_log_fallback(MPI_Comm comm, comm_state *s, enum coll coll, enum reason why)
{
    choice *ch = &s->ch[coll];
    if (tuna_verbosity() < 1 || (ch->fallback_logged & (1u << why)))
        return;
    ch->fallback_logged |= 1u << why;
    const comm_record *rec = state_record(s);
    if (comm_rank0(comm))
        say("communicator %d '%s': %s fallback: %s", rec ? rec->id : -1, rec ? rec->name : "-",
            colls[coll].pmpi, preload_reason_name[why]);
}

/* True if a buffer is NULL (MPI_BOTTOM) while this rank has data to move through it. */
static int bottom_with_data(const void *buf, const int *counts, MPI_Datatype type, int P)
{
    if (buf != NULL || !counts || type == MPI_DATATYPE_NULL)
        return 0;
    int size = 0;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size == 0)
        return 0;
    for (int j = 0; j < P; j++)
        if (counts[j] > 0)
            return 1;
    return 0;
}

/* Why this rank's valid-MPI arguments are beyond tuna, or -1. */
static int local_unsupported(const void *sendbuf, const int *sendcounts, MPI_Datatype sendtype,
                             const void *recvbuf, const int *recvcounts, MPI_Datatype recvtype,
                             int P)
{
    int inplace = sendbuf == MPI_IN_PLACE;
    if ((!inplace && bottom_with_data(sendbuf, sendcounts, sendtype, P)) ||
        bottom_with_data(recvbuf, recvcounts, recvtype, P))
        return WHY_BOTTOM;
    if (inplace && recvcounts && recvtype != MPI_DATATYPE_NULL &&
        !tuna_type_is_contiguous(recvtype)) {
        int size = 0;
        PMPI_Type_size(recvtype, &size);
        for (int j = 0; j < P; j++)
            if ((long long)recvcounts[j] * size > INT_MAX)
                return WHY_INPLACE_BIG;
    }
    return -1;
}

/* tuna's argument errors are agreed on by all ranks before any data moves. */
static int is_agreed_argument_error(int rc)
{
    int cls = MPI_ERR_OTHER;
    PMPI_Error_class(rc, &cls);
    return cls == MPI_ERR_ARG || cls == MPI_ERR_BUFFER || cls == MPI_ERR_COUNT ||
           cls == MPI_ERR_TYPE || cls == MPI_ERR_TRUNCATE;
}

static int vendor_call(comm_state *s, enum path path, const char *label, const void *sendbuf,
                       const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                       void *recvbuf, const int *recvcounts, const int *rdispls,
                       MPI_Datatype recvtype, MPI_Comm comm, int P, double t0)
{
    int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm);
    if (rc == MPI_SUCCESS) {
        const tuna_counts sc = {.n = sendcounts}, rcv = {.n = recvcounts};
        account_a2av(s, path, label, t0, sendbuf, &sc, sendtype, &rcv, recvtype, P);
    }
    return rc;   /* the vendor has already invoked the error handler */
}

static void startup(MPI_Comm comm);

/* The communicator's state with its choice for `coll` resolved (reported once with
 * TUNA_VERBOSE). */
static int comm_ready(MPI_Comm comm, enum coll coll, comm_state **out)
{
    comm_state *s = *out = state_get(comm);
    if (!s)
        return preload_raise_error(comm, MPI_ERR_NO_MEM,
                                   "out of memory for the communicator's state");
    choice *ch = &s->ch[coll];
    if (!ch->resolved) {
        int rc = resolve(comm, s, coll);
        if (rc != MPI_SUCCESS)
            return rc;
        const comm_record *rec = state_record(s);
        if (tuna_verbosity() >= 1 && comm_rank0(comm))
            say("communicator %d '%s' (size %d): %s %s (%s)%s", rec ? rec->id : -1,
                rec ? rec->name : "-", rec ? rec->size : 0, colls[coll].name, ch->label,
                ch->source, ch->vendor ? ": the library's own call" : "");
    }
    return MPI_SUCCESS;
}

const choice *preload_choice(const comm_state *s, enum coll coll)
{
    return &s->ch[coll];
}

int preload_call_begin(MPI_Comm comm, enum coll coll, comm_state **s, int *inter, int *P,
                       double *t0)
{
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!init || fin || comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, inter) != MPI_SUCCESS)
        return -1;
    startup(comm);
    *t0 = preload_clock_now();
    int rc = comm_ready(comm, coll, s);
    if (rc != MPI_SUCCESS)
        return rc;
    if (*inter)
        PMPI_Comm_remote_size(comm, P);
    else
        PMPI_Comm_size(comm, P);
    return MPI_SUCCESS;
}

int preload_tuna_failed_as(comm_state *s, enum coll coll, enum coll stat, MPI_Comm comm, int rc,
                           double t0)
{
    preload_account(s, stat, PATH_ERROR, s->ch[coll].label, preload_clock_now() - t0, 0, 0);
    char msg[600];
    snprintf(msg, sizeof msg, "%s", tuna_error_string(rc));
    return preload_raise_error(comm, rc, msg);
}

static int tuna_failed(comm_state *s, enum coll coll, MPI_Comm comm, int rc, double t0)
{
    return preload_tuna_failed_as(s, coll, coll, comm, rc, t0);
}

const char *preload_ran_label(const char *asked, enum coll coll, int asked_alg, char *buf,
                              size_t len)
{
    const int ran = tuna_stats_current.algorithm;
    if (ran == asked_alg || ran < 0)
        return asked;
    const tuna_algorithm_info *a = tuna_algorithm_get(colls[coll].id, ran);
    /* A label longer than buf is cut: it is a statistics key, not data (the return value is
     * checked so that GCC's -Wformat-truncation knows the cut is intended). */
    int n = tuna_stats_current.fallback
                ? snprintf(buf, len, "%s (ran %s: %s)", asked, a ? a->name : "?",
                           tuna_stats_current.fallback)
            : tuna_stats_current.auto_source == TUNA_AUTO_SOURCE_LEARNING
                ? snprintf(buf, len, "%s (ran %s, learning)", asked, a ? a->name : "?")
                : snprintf(buf, len, "%s (ran %s)", asked, a ? a->name : "?");
    return n < 0 ? asked : buf;
}

int tuna_preload_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s;
    int rc0 = preload_call_begin(comm, COLL_ALLTOALLV, &s, &inter, &P, &t0);
    if (rc0 < 0)
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    if (rc0 != MPI_SUCCESS)
        return rc0;
    const choice *ch = &s->ch[COLL_ALLTOALLV];
    if (ch->vendor)
        return vendor_call(s, PATH_VENDOR, ch->label, sendbuf, sendcounts, sdispls, sendtype,
                           recvbuf, recvcounts, rdispls, recvtype, comm, P, t0);
    if (inter) {
        preload_log_fallback(comm, s, COLL_ALLTOALLV, WHY_INTER);
        return vendor_call(s, PATH_FALLBACK, preload_reason_name[WHY_INTER], sendbuf, sendcounts,
                           sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, P,
                           t0);
    }

    int rc = tuna_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm, &ch->opt);
    if (rc == MPI_SUCCESS) {
        if (!preload_stats_enabled)
            return MPI_SUCCESS;
        const tuna_counts sc = {.n = sendcounts}, rcv = {.n = recvcounts};
        char buf[LABEL_MAX];
        account_a2av(s, PATH_TUNA,
                     preload_ran_label(ch->label, COLL_ALLTOALLV, ch->opt.algorithm, buf,
                                       sizeof buf),
                     t0, sendbuf, &sc, sendtype, &rcv, recvtype, P);
        return MPI_SUCCESS;
    }
    /* By default argument errors are this rank's alone (as in MPI libraries): reported here.
     * Under TUNA_ARGCHECK=collective every rank got an argument error and no data moved: if
     * some rank's arguments are valid MPI that tuna does not take (MPI_IN_PLACE with a
     * non-contiguous type and a block over 2 GiB), all ranks hand the call to the vendor
     * together; otherwise it is an error. */
    bool collective = false;
    if (!is_agreed_argument_error(rc) || tuna_argcheck_collective(&collective) != MPI_SUCCESS ||
        !collective)
        return tuna_failed(s, COLL_ALLTOALLV, comm, rc, t0);
    int any = local_unsupported(sendbuf, sendcounts, sendtype, recvbuf, recvcounts, recvtype, P);
    if (PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS || any < 0)
        return tuna_failed(s, COLL_ALLTOALLV, comm, rc, t0);
    preload_log_fallback(comm, s, COLL_ALLTOALLV, (enum reason)any);
    return vendor_call(s, PATH_FALLBACK, preload_reason_name[any], sendbuf, sendcounts, sdispls,
                       sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, P, t0);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return tuna_preload_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                  rdispls, recvtype, comm);
}

/*
 * MPI_Alltoall: tuna takes every intracommunicator call (MPI_IN_PLACE, derived types,
 * MPI_BOTTOM, as tuna_alltoall does), with no collective of the preload's own: every choice
 * below depends only on what MPI makes the same on every rank (the communicator, MPI_IN_PLACE,
 * the block's bytes).
 */

/* count elements of type in bytes, types over 2 GiB and large counts included (0 for invalid
 * arguments). */
static unsigned long long count_bytes(MPI_Count count, MPI_Datatype type)
{
    MPI_Count size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        size < 0)
        return 0;
    return (unsigned long long)count * (unsigned long long)size;
}

/* The bytes of one block of an alltoall on this rank (in place: the receive side's; 0 for
 * invalid arguments, which tuna reports). */
static unsigned long long a2a_block_bytes(const void *sendbuf, MPI_Count sendcount,
                                          MPI_Datatype sendtype, MPI_Count recvcount,
                                          MPI_Datatype recvtype)
{
    return sendbuf == MPI_IN_PLACE ? count_bytes(recvcount, recvtype)
                                   : count_bytes(sendcount, sendtype);
}

/* Why this alltoall goes to the library on every rank, or -1. In place, tuna packs a
 * non-contiguous receive type's blocks with int counts (MPI_ERR_COUNT over 2 GiB), and a rank
 * cannot know another's type: the block's bytes are every rank's (MPI's rule, and MPI_IN_PLACE
 * is given on all ranks), so every in-place call with blocks over 2 GiB goes to the library
 * (MPI_Alltoall_c's large counts too: tuna_alltoall_c has the same limit). */
static int a2a_unsupported(int inter, const void *sendbuf, MPI_Count recvcount,
                           MPI_Datatype recvtype)
{
    if (inter)
        return WHY_INTER;
    if (sendbuf == MPI_IN_PLACE && count_bytes(recvcount, recvtype) > (unsigned long long)INT_MAX)
        return WHY_INPLACE_BLOCK_BIG;
    return -1;
}

/* One alltoall call counted on `path`: this rank sends and receives P blocks. */
static void account_a2a(comm_state *s, enum coll stat, enum path path, const char *label,
                        double t0, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, MPI_Count recvcount, MPI_Datatype recvtype, int P)
{
    if (!preload_stats_enabled || !s)
        return;
    const unsigned long long n = (unsigned long long)P;
    preload_account(s, stat, path, label, preload_clock_now() - t0,
                    n * a2a_block_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype),
                    n * count_bytes(recvcount, recvtype));
}

/* The library's own MPI_Alltoall, or MPI_Alltoall_c for a call that came as one (`large` is
 * never set where the library has no MPI_Alltoall_c: the preload then defines none). */
static int library_alltoall(bool large, const void *sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm)
{
#ifdef TUNA_HAVE_MPI_ALLTOALL_C
    if (large)
        return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
#endif
    (void)large;
    return PMPI_Alltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype,
                         comm);
}

/* MPI_Alltoall (large: MPI_Alltoall_c, tuna_alltoall_c), counted on the "alltoall" rows
 * either way. */
static int preload_alltoall(bool large, const void *sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s;
    int rc = preload_call_begin(comm, COLL_ALLTOALL, &s, &inter, &P, &t0);
    if (rc < 0)
        return library_alltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                recvtype, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALL];
    const int why = ch->vendor ? -1 : a2a_unsupported(inter, sendbuf, recvcount, recvtype);
    if (ch->vendor || why >= 0) {
        rc = library_alltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              comm);
        if (rc != MPI_SUCCESS)
            return rc;   /* the library has invoked the error handler */
        if (why >= 0)
            preload_log_fallback(comm, s, COLL_ALLTOALL, (enum reason)why);
        account_a2a(s, COLL_ALLTOALL, why >= 0 ? PATH_FALLBACK : PATH_VENDOR,
                    why >= 0 ? preload_reason_name[why] : ch->label, t0, sendbuf, sendcount,
                    sendtype, recvcount, recvtype, P);
        return MPI_SUCCESS;
    }
    rc = large ? tuna_alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm, &ch->opt)
               : tuna_alltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount,
                               recvtype, comm, &ch->opt);
    if (rc != MPI_SUCCESS)
        return tuna_failed(s, COLL_ALLTOALL, comm, rc, t0);
    if (preload_stats_enabled) {
        char buf[LABEL_MAX];
        account_a2a(s, COLL_ALLTOALL, PATH_TUNA,
                    preload_ran_label(ch->label, COLL_ALLTOALL, ch->opt.algorithm, buf,
                                      sizeof buf),
                    t0, sendbuf, sendcount, sendtype, recvcount, recvtype, P);
    }
    return MPI_SUCCESS;
}

int tuna_preload_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return preload_alltoall(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return tuna_preload_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm);
}

#ifdef TUNA_HAVE_MPI_ALLTOALL_C
/* Large counts: the same choice, statistics and fallbacks; tuna_alltoall_c takes any count
 * (blocks beyond INT_MAX elements become derived types, as for tuna_alltoallv_c). */
int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return preload_alltoall(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm);
}
#endif

#ifdef TUNA_HAVE_MPI_ALLTOALLV_C
/*
 * Large-count variant: tuna_alltoallv_c runs tuna's algorithms with any counts (each rank
 * describes its own large blocks as derived types, no agreement needed), so the choice is
 * the communicator's, as for MPI_Alltoallv, with no extra collective.
 */
static int library_c(comm_state *s, enum path path, const char *label, const void *sendbuf,
                     const MPI_Count *sendcounts, const MPI_Aint *sdispls, MPI_Datatype sendtype,
                     void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *rdispls,
                     MPI_Datatype recvtype, MPI_Comm comm, int P, double t0)
{
    int rc = PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    if (rc == MPI_SUCCESS) {
        const tuna_counts sc = {.nl = sendcounts}, rcv = {.nl = recvcounts};
        account_a2av(s, path, label, t0, sendbuf, &sc, sendtype, &rcv, recvtype, P);
    }
    return rc;   /* the library has invoked the error handler */
}

int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s;
    int rc = preload_call_begin(comm, COLL_ALLTOALLV, &s, &inter, &P, &t0);
    if (rc < 0)
        return library_c(NULL, PATH_VENDOR, NULL, sendbuf, sendcounts, sdispls, sendtype,
                         recvbuf, recvcounts, rdispls, recvtype, comm, 0, 0.0);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALLV];
    if (ch->vendor)
        return library_c(s, PATH_VENDOR, ch->label, sendbuf, sendcounts, sdispls, sendtype,
                         recvbuf, recvcounts, rdispls, recvtype, comm, P, t0);
    if (inter) {
        preload_log_fallback(comm, s, COLL_ALLTOALLV, WHY_INTER);
        return library_c(s, PATH_FALLBACK, preload_reason_name[WHY_INTER], sendbuf, sendcounts,
                         sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, P, t0);
    }
    rc = tuna_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm, &ch->opt);
    if (rc != MPI_SUCCESS)
        return tuna_failed(s, COLL_ALLTOALLV, comm, rc, t0);
    if (!preload_stats_enabled)
        return MPI_SUCCESS;
    const tuna_counts sc = {.nl = sendcounts}, rcv = {.nl = recvcounts};
    char buf[LABEL_MAX];
    account_a2av(s, PATH_TUNA,
                 preload_ran_label(ch->label, COLL_ALLTOALLV, ch->opt.algorithm, buf,
                                   sizeof buf),
                 t0, sendbuf, &sc, sendtype, &rcv, recvtype, P);
    return MPI_SUCCESS;
}
#endif

/* ------------------------------------------------------------------ persistent alltoallv */

/* TUNA_PLAN: the planner's flags for the plans the preload makes (checked at start-up). */
unsigned preload_plan_flags = TUNA_PLAN_ESTIMATE;

/* Read TUNA_PLAN; 0, or -1 with a message for an invalid value. */
static int read_plan_config(char *msg, size_t len)
{
    const char *v = getenv("TUNA_PLAN");
    preload_plan_flags = TUNA_PLAN_ESTIMATE;
    if (!v || !*v || strcmp(v, "estimate") == 0)
        return 0;
    if (strcmp(v, "measure") == 0) {
        preload_plan_flags = TUNA_PLAN_MEASURE;
        return 0;
    }
    snprintf(msg, len, "TUNA_PLAN=%s: expected 'estimate' or 'measure'", v);
    return -1;
}

/* ------------------------------------------------------------------ requests */

/*
 * tuna's operations behind the application's MPI requests: MPI_Ialltoallv (and the other
 * nonblocking collectives) that tuna takes (a tuna_request), and MPI_Alltoallv_init (MPI 4) /
 * MPIX_Alltoallv_init (Open MPI's pcollreq extension; the other persistent collectives
 * likewise) that tuna takes (a tuna plan). The application holds a proxy: a real
 * request of the library, a 0-byte receive from this process on a private duplicate of
 * MPI_COMM_SELF under a tag of its own, which completes when the preload sends it its
 * message, once tuna's operation has finished. Starts are local (MPI_Ialltoallv; MPI_Start of
 * a plan whose algorithm has a step form: docs/nonblocking.md). While an operation is in
 * flight, the completion calls (MPI_Wait*, MPI_Test*, MPI_Request_get_status) progress every
 * one of them and poll the library; the library completes the proxies like any request
 * (arrays mixed with point-to-point requests, statuses, MPI_Request_free). Other candidates
 * for the proxy misbehave in MPICH 4.0.2: a started persistent send to MPI_PROC_NULL looks
 * inactive to Waitany/Testany/Waitsome/Testsome (MPI_UNDEFINED), and MPICH's own persistent
 * collectives (e.g. a barrier on MPI_COMM_SELF) make MPI_Testall return MPI_ERR_IN_STATUS.
 *
 * Threads: the list is guarded by one mutex; progress holds it (one thread progresses at a
 * time), error handlers run outside it.
 */
typedef struct proxy_req {
    MPI_Request req;                /* the application's handle: the proxy */
    int tag;                        /* the proxy's own tag on proxy_comm */
    enum coll coll;                 /* the collective (its blocking form) */
    bool persistent;                /* a plan (else one nonblocking call) */
    bool in_flight;                 /* started, tuna's operation not finished yet */
    bool freed;                     /* MPI_Request_free'd in flight: the proxy is completed and
                                       the entry dropped when the operation finishes */
    int rc;                         /* the finished operation's outcome, for the completion */
    tuna_plan plan;                 /* persistent */
    tuna_request op;                /* nonblocking */
    MPI_Comm comm;                  /* whose error handler reports a failure */
    comm_record *rec;               /* statistics (records outlive communicators) */
    char label[LABEL_MAX];          /* what runs */
    int algorithm;                  /* and its index (-1: unknown) */
    unsigned long long sent, recvd; /* this rank's bytes in one exchange */
    double t0;                      /* the start */
    struct proxy_req *next;
} proxy_req;

static proxy_req *proxies;
static int nproxies, nin_flight;
static pthread_mutex_t proxy_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Comm proxy_comm = MPI_COMM_NULL;
static int proxy_tag_ub = 32767, next_proxy_tag = 2;

/* Linear: a program holds few tuna requests, and other requests pay nothing while there are
 * none (the callers test nproxies first). */
static proxy_req *proxy_find(MPI_Request req)
{
    if (req == MPI_REQUEST_NULL)
        return NULL;
    pthread_mutex_lock(&proxy_lock);
    proxy_req *e = proxies;
    while (e && e->req != req)
        e = e->next;
    pthread_mutex_unlock(&proxy_lock);
    return e;
}

static bool proxy_tag_used(int tag)
{
    for (proxy_req *e = proxies; e; e = e->next)
        if (e->tag == tag)
            return true;
    return false;
}

/* A new entry with its proxy (persistent: MPI_Recv_init; else posted now), or NULL with the
 * error in *rc. */
static proxy_req *proxy_new(enum coll coll, bool persistent, int *rc)
{
    proxy_req *e = calloc(1, sizeof *e);
    if (!e) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    pthread_mutex_lock(&proxy_lock);
    *rc = MPI_SUCCESS;
    if (proxy_comm == MPI_COMM_NULL) {
        if ((*rc = PMPI_Comm_dup(MPI_COMM_SELF, &proxy_comm)) != MPI_SUCCESS) {
            proxy_comm = MPI_COMM_NULL;
        } else {
            int *ub = NULL, flag = 0;
            if (PMPI_Comm_get_attr(proxy_comm, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag &&
                ub && *ub > 2)
                proxy_tag_ub = *ub;
        }
    }
    if (*rc == MPI_SUCCESS) {
        /* A tag no live proxy holds: an operation finishing before an earlier one completes
         * its own proxy, never the earlier one's. */
        int tag = next_proxy_tag;
        while (proxy_tag_used(tag))
            tag = tag >= proxy_tag_ub ? 2 : tag + 1;
        next_proxy_tag = tag >= proxy_tag_ub ? 2 : tag + 1;
        e->tag = tag;
        *rc = persistent ? PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, tag, proxy_comm, &e->req)
                         : PMPI_Irecv(NULL, 0, MPI_BYTE, 0, tag, proxy_comm, &e->req);
    }
    if (*rc != MPI_SUCCESS) {
        pthread_mutex_unlock(&proxy_lock);
        free(e);
        return NULL;
    }
    e->coll = coll;
    e->persistent = persistent;
    e->algorithm = -1;
    e->next = proxies;
    proxies = e;
    nproxies++;
    pthread_mutex_unlock(&proxy_lock);
    return e;
}

/* Caller holds the lock. */
static void proxy_unlink(proxy_req *e)
{
    for (proxy_req **p = &proxies; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            nproxies--;
            break;
        }
}

static void proxy_drop(proxy_req *e)
{
    pthread_mutex_lock(&proxy_lock);
    proxy_unlink(e);
    pthread_mutex_unlock(&proxy_lock);
    free(e);
}

/* Complete e's started proxy (every start gets exactly one such message). */
static int proxy_complete(const proxy_req *e)
{
    MPI_Request r;
    int rc = PMPI_Isend(NULL, 0, MPI_BYTE, 0, e->tag, proxy_comm, &r);
    return rc == MPI_SUCCESS ? PMPI_Request_free(&r) : rc;
}

/* e's operation finished with rc (caller holds the lock): counted, its proxy completed. */
static void proxy_finished(proxy_req *e, int rc)
{
    e->in_flight = false;
    nin_flight--;
    e->rc = rc;
    if (rc != MPI_SUCCESS) {
        account_rec(e->rec, e->coll, PATH_ERROR, e->label, preload_clock_now() - e->t0, 0, 0);
    } else {
        /* A nonblocking call's label says what its start chose (preload_proxy_for_op): the
         * thread's record may be another call's by now. */
        char buf[LABEL_MAX];
        account_rec(e->rec, e->persistent ? e->coll : stat_nonblocking(e->coll),
                    e->persistent ? PATH_PLAN : PATH_TUNA,
                    e->persistent
                        ? preload_ran_label(e->label, e->coll, e->algorithm, buf, sizeof buf)
                        : e->label,
                    preload_clock_now() - e->t0, e->sent, e->recvd);
    }
    int prc = proxy_complete(e);
    if (prc != MPI_SUCCESS && e->rc == MPI_SUCCESS)
        e->rc = prc;
}

/* Advance every operation in flight once (never blocks). */
static void proxies_progress(void)
{
    pthread_mutex_lock(&proxy_lock);
    for (proxy_req *e = proxies, *next; e; e = next) {
        next = e->next;
        if (e->in_flight) {
            int flag = 0;
            int rc = e->persistent ? tuna_test(e->plan, &flag)
                                   : tuna_request_test(&e->op, &flag);
            if (flag || rc != MPI_SUCCESS)
                proxy_finished(e, rc);
        }
        /* A request the application freed in flight: its proxy is still ours (freeing an
         * active receive trips an assertion in MPICH 4.0.2 when its message arrives), so
         * it is completed here, after its message. */
        if (e->freed && !e->in_flight) {
            (void)PMPI_Wait(&e->req, MPI_STATUS_IGNORE);
            proxy_unlink(e);
            free(e);
        }
    }
    pthread_mutex_unlock(&proxy_lock);
}

/* The entries of a request array, before a completion call (NULL where a request is not a
 * proxy; no allocation when the program holds none). */
static proxy_req **proxies_of(int count, const MPI_Request *reqs)
{
    if (!nproxies || count <= 0 || !reqs)
        return NULL;
    proxy_req **e = calloc((size_t)count, sizeof *e);
    if (e)
        for (int i = 0; i < count; i++)
            e[i] = proxy_find(reqs[i]);
    return e;
}

/* After a completion call completed the proxy of entry e (its status at st, or NULL): the
 * operation's outcome (its failure raised on its communicator), the entry dropped unless
 * persistent. */
static int proxy_report(proxy_req *e, MPI_Status *st)
{
    if (!e)
        return MPI_SUCCESS;
    int rc = e->rc;
    e->rc = MPI_SUCCESS;
    MPI_Comm comm = e->comm;
    char msg[700];
    if (rc != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "%s (%s): %s", colls[e->coll].name, e->label,
                 tuna_error_string(rc));
    if (!e->persistent)
        proxy_drop(e);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (st && st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = rc;
    return preload_raise_error(comm, rc, msg);
}

/* Report the completed entries of an array call: indices idx[0..n) (all when idx is NULL). */
static int proxies_report(proxy_req **e, int n, const int *idx, MPI_Status *statuses)
{
    int first = MPI_SUCCESS;
    for (int k = 0; e && k < n; k++) {
        const int i = idx ? idx[k] : k;
        int rc = proxy_report(e[i], statuses != MPI_STATUSES_IGNORE ? &statuses[i] : NULL);
        if (first == MPI_SUCCESS)
            first = rc;
    }
    free(e);
    return first != MPI_SUCCESS && statuses != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS : first;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!nproxies || !request)
        return PMPI_Wait(request, status);
    proxy_req *e = proxy_find(*request);
    int rc = MPI_SUCCESS, flag = 0;
    while (nin_flight && !flag && rc == MPI_SUCCESS) {
        proxies_progress();
        rc = PMPI_Test(request, &flag, status);
    }
    if (!flag && rc == MPI_SUCCESS)
        rc = PMPI_Wait(request, status);
    return rc == MPI_SUCCESS ? proxy_report(e, status) : rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (!nproxies || !request)
        return PMPI_Test(request, flag, status);
    proxy_req *e = proxy_find(*request);
    proxies_progress();
    int rc = PMPI_Test(request, flag, status);
    return rc == MPI_SUCCESS && *flag ? proxy_report(e, status) : rc;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    proxy_req **e = proxies_of(count, array_of_requests);
    if (!e)
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    int rc = MPI_SUCCESS, flag = 0;
    while (nin_flight && !flag && rc == MPI_SUCCESS) {
        proxies_progress();
        rc = PMPI_Testall(count, array_of_requests, &flag, array_of_statuses);
    }
    if (!flag && rc == MPI_SUCCESS)
        rc = PMPI_Waitall(count, array_of_requests, array_of_statuses);
    if (rc != MPI_SUCCESS) {
        free(e);
        return rc;
    }
    return proxies_report(e, count, NULL, array_of_statuses);
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[])
{
    proxy_req **e = proxies_of(count, array_of_requests);
    if (!e)
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    proxies_progress();
    int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    if (rc != MPI_SUCCESS || !*flag) {
        free(e);
        return rc;
    }
    return proxies_report(e, count, NULL, array_of_statuses);
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    proxy_req **e = proxies_of(count, array_of_requests);
    if (!e)
        return PMPI_Waitany(count, array_of_requests, index, status);
    int rc = MPI_SUCCESS, flag = 0;
    while (nin_flight && !flag && rc == MPI_SUCCESS) {
        proxies_progress();
        rc = PMPI_Testany(count, array_of_requests, index, &flag, status);
    }
    if (!flag && rc == MPI_SUCCESS)
        rc = PMPI_Waitany(count, array_of_requests, index, status);
    if (rc == MPI_SUCCESS && index && *index != MPI_UNDEFINED)
        rc = proxy_report(e[*index], status);
    free(e);
    return rc;
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status)
{
    proxy_req **e = proxies_of(count, array_of_requests);
    if (!e)
        return PMPI_Testany(count, array_of_requests, index, flag, status);
    proxies_progress();
    int rc = PMPI_Testany(count, array_of_requests, index, flag, status);
    if (rc == MPI_SUCCESS && *flag && index && *index != MPI_UNDEFINED)
        rc = proxy_report(e[*index], status);
    free(e);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    proxy_req **e = proxies_of(incount, array_of_requests);
    if (!e)
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    int rc = MPI_SUCCESS;
    *outcount = 0;
    while (nin_flight && *outcount == 0 && rc == MPI_SUCCESS) {
        proxies_progress();
        rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
    }
    if (*outcount == 0 && rc == MPI_SUCCESS)
        rc = PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
    if (rc != MPI_SUCCESS || *outcount == MPI_UNDEFINED) {
        free(e);
        return rc;
    }
    /* Statuses of Waitsome are indexed by the position in array_of_indices. */
    int first = MPI_SUCCESS;
    for (int k = 0; k < *outcount; k++) {
        int r = proxy_report(e[array_of_indices[k]], array_of_statuses != MPI_STATUSES_IGNORE
                                                         ? &array_of_statuses[k]
                                                         : NULL);
        if (first == MPI_SUCCESS)
            first = r;
    }
    free(e);
    return first != MPI_SUCCESS && array_of_statuses != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS
                                                                             : first;
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    proxy_req **e = proxies_of(incount, array_of_requests);
    if (!e)
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    proxies_progress();
    int rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
    int first = MPI_SUCCESS;
    for (int k = 0; rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && k < *outcount; k++) {
        int r = proxy_report(e[array_of_indices[k]], array_of_statuses != MPI_STATUSES_IGNORE
                                                         ? &array_of_statuses[k]
                                                         : NULL);
        if (first == MPI_SUCCESS)
            first = r;
    }
    free(e);
    if (rc != MPI_SUCCESS)
        return rc;
    return first != MPI_SUCCESS && array_of_statuses != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS
                                                                             : first;
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (nin_flight) /* a program polling any request lets tuna's operations go on */
        proxies_progress();
    return PMPI_Request_get_status(request, flag, status);
}

int MPI_Cancel(MPI_Request *request)
{
    proxy_req *e = nproxies && request ? proxy_find(*request) : NULL;
    if (!e)
        return PMPI_Cancel(request);
    return preload_raise_error(e->comm, MPI_ERR_REQUEST,
                               "MPI_Cancel: the request is a collective's (MPI_Ialltoallv, "
                               "MPI_Ialltoall, MPI_Iallgather, MPI_Iallreduce or a persistent "
                               "one of these), which cannot be cancelled");
}

int preload_proxy_for_op(comm_state *s, enum coll coll, tuna_request op, MPI_Comm comm,
                         double t0, unsigned long long sent, unsigned long long recvd,
                         MPI_Request *request)
{
    int rc;
    proxy_req *e = proxy_new(coll, false, &rc);
    if (!e) {
        /* The operation runs on (its peers take part): complete it here, then report. */
        tuna_request_wait(&op);
        char msg[100];
        snprintf(msg, sizeof msg, "no request for the nonblocking %s", colls[coll].name);
        return preload_raise_error(comm, rc, msg);
    }
    const choice *ch = &s->ch[coll];
    e->op = op;
    e->comm = comm;
    e->rec = state_record(s);
    e->t0 = t0;
    e->algorithm = ch->opt.algorithm;
    /* What the start chose (the thread's record is the start's until the next call). */
    char buf[LABEL_MAX];
    snprintf(e->label, sizeof e->label, "%s",
             preload_ran_label(ch->label, coll, ch->opt.algorithm, buf, sizeof buf));
    e->sent = sent;
    e->recvd = recvd;
    pthread_mutex_lock(&proxy_lock);
    e->in_flight = true;
    nin_flight++;
    pthread_mutex_unlock(&proxy_lock);
    *request = e->req;
    return MPI_SUCCESS;
}

/* The arguments of MPI_Ialltoallv or (large) MPI_Ialltoallv_c: int or MPI_Count counts,
 * int or MPI_Aint displacements. */
typedef struct ia2av_args {
    bool large;
    const void *sendbuf, *scounts, *sdispls;
    MPI_Datatype sendtype;
    void *recvbuf;
    const void *rcounts, *rdispls;
    MPI_Datatype recvtype;
} ia2av_args;

static int library_ialltoallv(const ia2av_args *a, MPI_Comm comm, MPI_Request *request)
{
#ifdef TUNA_HAVE_MPI_IALLTOALLV_C
    if (a->large)
        return PMPI_Ialltoallv_c(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                                 a->rcounts, a->rdispls, a->recvtype, comm, request);
#endif
    return PMPI_Ialltoallv(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                           a->rcounts, a->rdispls, a->recvtype, comm, request);
}

static int tuna_ialltoallv_of(const ia2av_args *a, MPI_Comm comm, const tuna_options *opt,
                              tuna_request *op)
{
    if (a->large)
        return tuna_ialltoallv_c(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                                 a->rcounts, a->rdispls, a->recvtype, comm, opt, op);
    return tuna_ialltoallv(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                           a->rcounts, a->rdispls, a->recvtype, comm, opt, op);
}

/* MPI_Ialltoallv, MPI_Ialltoallv_c: as MPI_Alltoallv, nonblocking (tuna_ialltoallv behind
 * a proxy), counted on the "ialltoallv" rows either way. */
static int preload_ialltoallv(const ia2av_args *a, MPI_Comm comm, MPI_Request *request)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s = NULL;
    int rc = request ? preload_call_begin(comm, COLL_ALLTOALLV, &s, &inter, &P, &t0) : -1;
    if (rc < 0)
        return library_ialltoallv(a, comm, request);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALLV];
    const tuna_counts sc = a->large ? (tuna_counts){.nl = a->scounts}
                                    : (tuna_counts){.n = a->scounts},
                      rcv = a->large ? (tuna_counts){.nl = a->rcounts}
                                     : (tuna_counts){.n = a->rcounts};
    int why = ch->vendor ? -1 : inter ? WHY_INTER : -2;
    tuna_request op = TUNA_REQUEST_NULL;
    if (why == -2) {
        rc = tuna_ialltoallv_of(a, comm, &ch->opt, &op);
        if (rc == MPI_ERR_UNSUPPORTED_OPERATION) /* the row has no nonblocking form yet */
            why = WHY_NO_STEP_FORM;
        else if (rc != MPI_SUCCESS) /* counted on the nonblocking call's row */
            return preload_tuna_failed_as(s, COLL_ALLTOALLV, STAT_IALLTOALLV, comm, rc, t0);
    }
    if (why != -2) { /* the library's own */
        rc = library_ialltoallv(a, comm, request);
        if (rc != MPI_SUCCESS)
            return rc; /* the library has invoked the error handler */
        if (why >= 0)
            preload_log_fallback(comm, s, COLL_ALLTOALLV, (enum reason)why);
        if (preload_stats_enabled) {
            unsigned long long sent, recvd;
            a2av_bytes(a->sendbuf, &sc, a->sendtype, &rcv, a->recvtype, P, &sent, &recvd);
            preload_account(s, STAT_IALLTOALLV, why >= 0 ? PATH_FALLBACK : PATH_VENDOR,
                            why >= 0 ? preload_reason_name[why] : ch->label,
                            preload_clock_now() - t0, sent, recvd);
        }
        return MPI_SUCCESS;
    }
    unsigned long long sent = 0, recvd = 0;
    if (preload_stats_enabled)
        a2av_bytes(a->sendbuf, &sc, a->sendtype, &rcv, a->recvtype, P, &sent, &recvd);
    return preload_proxy_for_op(s, COLL_ALLTOALLV, op, comm, t0, sent, recvd, request);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    const ia2av_args a = {false,   sendbuf,    sendcounts, sdispls, sendtype,
                          recvbuf, recvcounts, rdispls,    recvtype};
    return preload_ialltoallv(&a, comm, request);
}

#ifdef TUNA_HAVE_MPI_IALLTOALLV_C
int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    const ia2av_args a = {true,    sendbuf,    sendcounts, sdispls, sendtype,
                          recvbuf, recvcounts, rdispls,    recvtype};
    return preload_ialltoallv(&a, comm, request);
}
#endif

/* The library's own MPI_Ialltoall, or MPI_Ialltoall_c for a call that came as one (as
 * library_alltoall). */
static int library_ialltoall(bool large, const void *sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
#ifdef TUNA_HAVE_MPI_IALLTOALL_C
    if (large)
        return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                request);
#endif
    (void)large;
    return PMPI_Ialltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype,
                          comm, request);
}

/* MPI_Ialltoall (large: MPI_Ialltoall_c, tuna_ialltoall_c): as MPI_Alltoall, nonblocking
 * (tuna's operation behind a proxy), counted on the "ialltoall" rows either way. */
static int preload_ialltoall(bool large, const void *sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s = NULL;
    int rc = request ? preload_call_begin(comm, COLL_ALLTOALL, &s, &inter, &P, &t0) : -1;
    if (rc < 0)
        return library_ialltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                 recvtype, comm, request);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALL];
    const int why = ch->vendor ? -1 : a2a_unsupported(inter, sendbuf, recvcount, recvtype);
    if (!ch->vendor && why < 0) {
        /* Every alltoall row has a step form: tuna takes the call (auto, on a communicator
         * tuna has not set up yet, runs the library's MPI_Ialltoall inside tuna's request). */
        tuna_request op = TUNA_REQUEST_NULL;
        rc = large ? tuna_ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                      comm, &ch->opt, &op)
                   : tuna_ialltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount,
                                    recvtype, comm, &ch->opt, &op);
        if (rc != MPI_SUCCESS)
            return preload_tuna_failed_as(s, COLL_ALLTOALL, STAT_IALLTOALL, comm, rc, t0);
        const unsigned long long n = (unsigned long long)P;
        return preload_proxy_for_op(s, COLL_ALLTOALL, op, comm, t0,
                            n * a2a_block_bytes(sendbuf, sendcount, sendtype, recvcount,
                                                recvtype),
                            n * count_bytes(recvcount, recvtype), request);
    }
    rc = library_ialltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                           comm, request);
    if (rc != MPI_SUCCESS)
        return rc; /* the library has invoked the error handler */
    if (why >= 0)
        preload_log_fallback(comm, s, COLL_ALLTOALL, (enum reason)why);
    account_a2a(s, STAT_IALLTOALL, why >= 0 ? PATH_FALLBACK : PATH_VENDOR,
                why >= 0 ? preload_reason_name[why] : ch->label, t0, sendbuf, sendcount,
                sendtype, recvcount, recvtype, P);
    return MPI_SUCCESS;
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return preload_ialltoall(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm, request);
}

#ifdef TUNA_HAVE_MPI_IALLTOALL_C
int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
    return preload_ialltoall(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm, request);
}
#endif

/* At MPI_Finalize, after the operations still in flight (a freed request's) finished, before
 * the statistics are written: the plans the application never freed (their proxies are the
 * library's). */
static void proxies_release(void)
{
    pthread_mutex_lock(&proxy_lock);
    while (proxies) {
        proxy_req *e = proxies;
        proxies = e->next;
        if (e->persistent)
            tuna_plan_free(&e->plan);
        free(e);
    }
    nproxies = 0;
    pthread_mutex_unlock(&proxy_lock);
}

#ifdef TUNA_PRELOAD_PERSISTENT
static const char *const plan_source_name[] = {"forced", "estimate", "measure", "wisdom"};

/* The plan's algorithm as an option string (its resolved parameters), and how it was chosen. */
static const char *plan_label(tuna_plan plan, char *buf, size_t len, int *algorithm)
{
    tuna_plan_info info;
    snprintf(buf, len, "?");
    *algorithm = -1;
    if (tuna_plan_get_info(plan, &info) != MPI_SUCCESS)
        return "?";
    const tuna_algorithm_info *a = tuna_algorithm_get(info.collective, info.algorithm);
    if (!a)
        return "?";
    *algorithm = info.algorithm;
    tuna_options o = {.collective = info.collective, .algorithm = info.algorithm};
    for (int i = 0; i < a->nparams && i < TUNA_MAX_PARAMS; i++) {
        o.set |= 1u << i;
        o.value[i] = info.params[i];
    }
    if (tuna_options_format(&o, buf, len) != MPI_SUCCESS)
        snprintf(buf, len, "%s", a->name);
    return info.source >= 0 && info.source <= 3 ? plan_source_name[info.source] : "?";
}

int preload_plan_request(comm_state *s, enum coll coll, tuna_plan plan, MPI_Comm comm,
                         double t0, unsigned long long sent, unsigned long long recvd,
                         MPI_Request *request)
{
    int rc;
    proxy_req *e = proxy_new(coll, true, &rc);
    if (!e) {
        tuna_plan_free(&plan);
        char msg[100];
        snprintf(msg, sizeof msg, "no persistent request for the %s plan", colls[coll].name);
        return preload_raise_error(comm, rc, msg);
    }
    e->plan = plan;
    e->comm = comm;
    e->rec = state_record(s);
    /* Fixed at init, so counted once here for every start. */
    e->sent = sent;
    e->recvd = recvd;
    char label[LABEL_MAX + 32];
    const char *source = plan_label(plan, e->label, sizeof e->label, &e->algorithm);
    snprintf(label, sizeof label, "%s (%s)", e->label, source);
    preload_account(s, coll, PATH_PLAN_INIT, label, preload_clock_now() - t0, 0, 0);
    if (tuna_verbosity() >= 1 && comm_rank0(comm))
        say("communicator %d '%s': %s_init: plan %s (%s)", s->rec ? s->rec->id : -1,
            s->rec ? s->rec->name : "-", colls[coll].name, e->label, source);
    *request = e->req;
    return MPI_SUCCESS;
}

void preload_library_init_done(comm_state *s, enum coll coll, int why, MPI_Comm comm,
                               double t0)
{
    char label[LABEL_MAX + 32];
    if (why >= 0) {
        preload_log_fallback(comm, s, coll, (enum reason)why);
        snprintf(label, sizeof label, "%s (%s_init)", preload_reason_name[why], colls[coll].name);
    } else {
        snprintf(label, sizeof label, "%s_init", colls[coll].name);
    }
    preload_account(s, coll, why >= 0 ? PATH_FALLBACK : PATH_VENDOR, label,
                    preload_clock_now() - t0, 0, 0);
}

#if defined(TUNA_HAVE_MPI_ALLTOALLV_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALLV_INIT)
typedef int (*alltoallv_init_fn)(const void *, const int[], const int[], MPI_Datatype, void *,
                                 const int[], const int[], MPI_Datatype, MPI_Comm, MPI_Info,
                                 MPI_Request *);

static int persistent_init(alltoallv_init_fn library, const void *sendbuf,
                           const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void *recvbuf, const int recvcounts[], const int rdispls[],
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                           MPI_Request *request)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s = NULL;
    /* Outside MPI, an invalid communicator or request pointer: the library reports it. */
    int rc = request ? preload_call_begin(comm, COLL_ALLTOALLV, &s, &inter, &P, &t0) : -1;
    if (rc < 0)
        return library(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                       recvtype, comm, info, request);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALLV];
    int why = -1;
    if (!ch->vendor && inter) {
        why = WHY_INTER;
    } else if (!ch->vendor) {
        /* The plan duplicates derived datatypes itself: the application may free its own
         * right after the init, as MPI allows. */
        tuna_plan plan = NULL;
        rc = tuna_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, &ch->opt, preload_plan_flags, &plan);
        if (rc != MPI_SUCCESS) {
            char msg[600];
            snprintf(msg, sizeof msg, "%s", tuna_error_string(rc));
            /* Init errors are agreed (every rank is here): if some rank's arguments are
             * valid MPI that tuna does not take, all ranks hand the init to the library. */
            int any = local_unsupported(sendbuf, sendcounts, sendtype, recvbuf, recvcounts,
                                        recvtype, P);
            if (PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS ||
                any < 0) {
                char label[LABEL_MAX + 32];
                snprintf(label, sizeof label, "%s (alltoallv_init)", ch->label);
                preload_account(s, COLL_ALLTOALLV, PATH_ERROR, label,
                                preload_clock_now() - t0, 0, 0);
                return preload_raise_error(comm, rc, msg);
            }
            why = any;
        } else {
            const tuna_counts sc = {.n = sendcounts}, rcv = {.n = recvcounts};
            unsigned long long sent, recvd;
            a2av_bytes(sendbuf, &sc, sendtype, &rcv, recvtype, P, &sent, &recvd);
            return preload_plan_request(s, COLL_ALLTOALLV, plan, comm, t0, sent, recvd, request);
        }
    }
    /* The library's own persistent alltoallv; its request goes back untouched. */
    rc = library(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                 comm, info, request);
    if (rc != MPI_SUCCESS)
        return rc;   /* the library has invoked the error handler */
    preload_library_init_done(s, COLL_ALLTOALLV, why, comm, t0);
    return MPI_SUCCESS;
}

#ifdef TUNA_HAVE_MPI_ALLTOALLV_INIT
int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    return persistent_init(PMPI_Alltoallv_init, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                           recvcounts, rdispls, recvtype, comm, info, request);
}
#endif

#ifdef TUNA_HAVE_MPIX_ALLTOALLV_INIT
int MPIX_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    return persistent_init(PMPIX_Alltoallv_init, sendbuf, sendcounts, sdispls, sendtype,
                           recvbuf, recvcounts, rdispls, recvtype, comm, info, request);
}
#endif
#endif /* a persistent alltoallv */

#if defined(TUNA_HAVE_MPI_ALLTOALL_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALL_INIT)
/*
 * Persistent alltoall: the same decision as MPI_Alltoall's (vendor, intercommunicator, in
 * place with blocks over 2 GiB: the library's init; all known alike on every rank), else
 * tuna_alltoall_init, whose argument errors are agreed over the communicator.
 */
typedef int (*alltoall_init_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                                MPI_Comm, MPI_Info, MPI_Request *);

static int persistent_alltoall_init(alltoall_init_fn library, const void *sendbuf,
                                    int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *request)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s = NULL;
    int rc = request ? preload_call_begin(comm, COLL_ALLTOALL, &s, &inter, &P, &t0) : -1;
    if (rc < 0)
        return library(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                       request);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALL];
    const int why = ch->vendor ? -1 : a2a_unsupported(inter, sendbuf, recvcount, recvtype);
    if (!ch->vendor && why < 0) {
        /* The plan duplicates derived datatypes itself (freeing them after init is valid). */
        tuna_plan plan = NULL;
        rc = tuna_alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                &ch->opt, preload_plan_flags, &plan);
        if (rc != MPI_SUCCESS) {
            char label[LABEL_MAX + 32], msg[600];
            snprintf(msg, sizeof msg, "%s", tuna_error_string(rc));
            snprintf(label, sizeof label, "%s (alltoall_init)", ch->label);
            preload_account(s, COLL_ALLTOALL, PATH_ERROR, label, preload_clock_now() - t0, 0, 0);
            return preload_raise_error(comm, rc, msg);
        }
        const unsigned long long n = (unsigned long long)P;
        return preload_plan_request(s, COLL_ALLTOALL, plan, comm, t0,
                            n * a2a_block_bytes(sendbuf, sendcount, sendtype, recvcount,
                                                recvtype),
                            n * count_bytes(recvcount, recvtype), request);
    }
    /* The library's own persistent alltoall; its request goes back untouched. */
    rc = library(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                 request);
    if (rc != MPI_SUCCESS)
        return rc;   /* the library has invoked the error handler */
    preload_library_init_done(s, COLL_ALLTOALL, why, comm, t0);
    return MPI_SUCCESS;
}

#ifdef TUNA_HAVE_MPI_ALLTOALL_INIT
int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    return persistent_alltoall_init(PMPI_Alltoall_init, sendbuf, sendcount, sendtype, recvbuf,
                                    recvcount, recvtype, comm, info, request);
}
#endif

#ifdef TUNA_HAVE_MPIX_ALLTOALL_INIT
int MPIX_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    return persistent_alltoall_init(PMPIX_Alltoall_init, sendbuf, sendcount, sendtype, recvbuf,
                                    recvcount, recvtype, comm, info, request);
}
#endif
#endif /* a persistent alltoall */
#endif /* TUNA_PRELOAD_PERSISTENT */

/* One start of a plan whose proxy is started: local where the plan's algorithm has a step
 * form (the exchange then finishes in the completion calls' progress), else the exchange
 * completes here. A failed start completes the proxy, so the application's completion call
 * returns. */
static int start_plan(proxy_req *e)
{
    e->t0 = preload_clock_now();
    int rc = tuna_start(e->plan);   /* even on errors: the other ranks are in this exchange */
    if (rc != MPI_SUCCESS) {
        account_rec(e->rec, e->coll, PATH_ERROR, e->label, preload_clock_now() - e->t0, 0, 0);
        (void)proxy_complete(e);
        char msg[700];
        snprintf(msg, sizeof msg, "persistent %s (%s): %s", colls[e->coll].name, e->label,
                 tuna_error_string(rc));
        return preload_raise_error(e->comm, rc, msg);
    }
    pthread_mutex_lock(&proxy_lock);
    e->in_flight = true;
    nin_flight++;
    pthread_mutex_unlock(&proxy_lock);
    proxies_progress(); /* a start that completed inside completes its proxy now */
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request *request)
{
    proxy_req *e = nproxies && request ? proxy_find(*request) : NULL;
    if (!e || !e->persistent)
        return PMPI_Start(request);
    /* The proxy first: the library rejects starting an active request before data moves. */
    int rc = PMPI_Start(request);
    return rc == MPI_SUCCESS ? start_plan(e) : rc;
}

/*
 * MPI_Startall acts as MPI_Start on each request in some order: one PMPI_Startall starts
 * the whole array (the library's requests as it always does, and the proxies), then the
 * plans start in array order (every rank must list them in the same order, as for any
 * collectives it starts).
 */
int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    proxy_req **e = proxies_of(count, array_of_requests);
    if (!e)
        return PMPI_Startall(count, array_of_requests);
    int rc = PMPI_Startall(count, array_of_requests);
    /* After a failure the remaining plans still start: the other ranks are in them. */
    int first = MPI_SUCCESS;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
        int r = e[i] && e[i]->persistent ? start_plan(e[i]) : MPI_SUCCESS;
        if (r != MPI_SUCCESS && first == MPI_SUCCESS)
            first = r;
    }
    free(e);
    return rc != MPI_SUCCESS ? rc : first;
}

int MPI_Request_free(MPI_Request *request)
{
    proxy_req *e = nproxies && request ? proxy_find(*request) : NULL;
    if (!e)
        return PMPI_Request_free(request);
    if (!e->persistent && e->in_flight) {
        /* MPI lets an active request be freed: the operation runs on; its proxy stays the
         * preload's, completed once the operation has finished (proxies_progress). */
        e->freed = true;
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    /* A persistent request in flight finishes first (its peers are in the exchange). */
    while (e->in_flight)
        proxies_progress();
    int rc = PMPI_Request_free(request);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_plan plan = e->plan;
    MPI_Comm comm = e->comm;
    const enum coll coll = e->coll;
    proxy_drop(e);
    if (plan && (rc = tuna_plan_free(&plan)) != MPI_SUCCESS) {
        char msg[600];
        snprintf(msg, sizeof msg, "freeing the %s plan: %s", colls[coll].name,
                 tuna_error_string(rc));
        return preload_raise_error(comm, rc, msg);
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ info key capture */

/* The info keys found in `info`, validated: found[c] set and vals[c] filled per collective;
 * MPI_SUCCESS, or the error raised for an invalid value (then nothing is applied). */
static int capture_info(MPI_Comm comm, MPI_Info info, char vals[NCOLL][OPT_MAX],
                        int found[NCOLL])
{
    for (int c = 0; c < NCOLL; c++) {
        const char *key = colls[c].info_key;
        found[c] = info_value(info, key, vals[c]);
        if (found[c] == 0)
            continue;
        char why[512], msg[1024];
        tuna_options opt;
        if (found[c] < 0) {
            snprintf(msg, sizeof msg, "info key %s: value longer than %d characters", key,
                     OPT_MAX - 1);
            return preload_raise_error(comm, MPI_ERR_INFO_VALUE, msg);
        }
        if (parse_choice((enum coll)c, vals[c], &opt, why, sizeof why) != MPI_SUCCESS) {
            snprintf(msg, sizeof msg, "info key %s='%s': %s", key, vals[c], why);
            return preload_raise_error(comm, MPI_ERR_INFO_VALUE, msg);
        }
    }
    return MPI_SUCCESS;
}

static void apply_overrides(MPI_Comm comm, char vals[NCOLL][OPT_MAX], const int found[NCOLL])
{
    int any = 0;
    for (int c = 0; c < NCOLL; c++)
        any |= found[c] > 0;
    comm_state *s = any ? state_get(comm) : NULL;
    if (!s)
        return;
    for (int c = 0; c < NCOLL; c++)
        if (found[c] > 0) {
            choice *ch = &s->ch[c];
            snprintf(ch->override, sizeof ch->override, "%s", vals[c]);
            ch->has_override = 1;
            ch->resolved = 0;   /* re-resolved (and reported) on the next call */
        }
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    char vals[NCOLL][OPT_MAX];
    int found[NCOLL], init = 0;
    PMPI_Initialized(&init);
    if (!init || comm == MPI_COMM_NULL)
        return PMPI_Comm_set_info(comm, info);
    int err = capture_info(comm, info, vals, found);
    if (err != MPI_SUCCESS)
        return err;
    int rc = PMPI_Comm_set_info(comm, info);
    if (rc == MPI_SUCCESS)
        apply_overrides(comm, vals, found);
    return rc;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    char vals[NCOLL][OPT_MAX];
    int found[NCOLL], init = 0;
    PMPI_Initialized(&init);
    if (!init || comm == MPI_COMM_NULL)
        return PMPI_Comm_dup_with_info(comm, info, newcomm);
    int err = capture_info(comm, info, vals, found);
    if (err != MPI_SUCCESS)
        return err;
    int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
    /* dup_with_info does not copy attributes, so the overrides start fresh. */
    if (rc == MPI_SUCCESS)
        apply_overrides(*newcomm, vals, found);
    return rc;
}

/* ------------------------------------------------------------------ start-up and finalize */

static int finalize_keyval = MPI_KEYVAL_INVALID;
static int finalize_fn(MPI_Comm comm, int keyval, void *attr, void *extra);

/*
 * Collective over `comm`: if any rank failed, one failing rank prints its message (the lowest
 * with `tell` set, else the lowest failing: rank 0 when the environment is uniform), then
 * every rank aborts.
 */
static void abort_if(MPI_Comm comm, int failed, int tell, const char *msg)
{
    int me = 0, P = 1;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &P);
    long long reporter = failed ? (tell ? me : (long long)P + me) : 2LL * P;
    if (PMPI_Allreduce(MPI_IN_PLACE, &reporter, 1, MPI_LONG_LONG, MPI_MIN, comm) != MPI_SUCCESS)
        reporter = failed ? me : 2LL * P;
    if (reporter >= 2LL * P)
        return;
    if (me == reporter % P)
        say("invalid configuration, aborting: %s", msg);
    PMPI_Barrier(comm);   /* the message is out before anyone aborts */
    /* ... of the process, but the launcher forwards it: MPICH's hydra, under load, has torn
     * the job down before relaying the line (seen once in CI's MPICH preload run). A fifth
     * of a second on a path that ends the job lets it through. */
    const double until = PMPI_Wtime() + 0.2;
    while (PMPI_Wtime() < until)
        ;
    PMPI_Abort(comm, 2);
}

static void abort_if_any(MPI_Comm comm, int failed, const char *msg)
{
    abort_if(comm, failed, 1, msg);
}

/*
 * Check TUNA_ALLTOALLV, TUNA_ALLGATHER, TUNA_ALLREDUCE and TUNA_PLAN collectively over
 * `comm`, then that every rank has the same TUNA_* settings, so that a misconfigured job
 * stops at once with one line (from a rank whose value differs from rank 0's).
 */
static void check_config(MPI_Comm comm)
{
    char msg[600] = "";
    int failed = 0;
    for (int c = 0; c < NCOLL && !failed; c++) {
        tuna_options opt;
        int rc = tuna_options_default(colls[c].id, &opt);
        if (rc != MPI_SUCCESS) {
            snprintf(msg, sizeof msg, "%s", tuna_error_string(rc));
            failed = 1;
        }
    }
    if (!failed)
        failed = read_plan_config(msg, sizeof msg) != 0;
    const tuna_profile *profile;
    int rc;
    if (!failed && ((rc = tuna_settings_check()) != MPI_SUCCESS ||
                    (rc = tuna_select_profile(&profile)) != MPI_SUCCESS)) {
        /* TUNA_RANKS_PER_NODE, TUNA_ARGCHECK; TUNA_PROFILE, TUNA_TUNING, TUNA_AUTO_PERIOD */
        snprintf(msg, sizeof msg, "%s", tuna_error_string(rc));
        failed = 1;
    }
    abort_if_any(comm, failed, msg);
    int differs = 0;
    tuna_error_clear();
    rc = tuna_config_agree(comm, &differs);
    snprintf(msg, sizeof msg, "%s", rc == MPI_SUCCESS ? "" : tuna_error_string(rc));
    abort_if(comm, rc != MPI_SUCCESS, differs, msg);
}

#ifdef TUNA_PRELOAD_PERSISTENT
/*
 * TUNA_WISDOM=FILE: the planner's measurements, imported once here (collective over
 * `comm`) and saved at MPI_Finalize under TUNA_PLAN=measure. No file on any rank is a
 * first run; a file on some ranks only, or one tuna cannot read, stops the job like any
 * other configuration error.
 */
static void wisdom_import(MPI_Comm comm)
{
    const char *path = getenv("TUNA_WISDOM");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "r");
    int exists = f != NULL || errno != ENOENT;
    if (f)
        fclose(f);
    int seen[2] = {exists, !exists};   /* max: some rank has it, some rank lacks it */
    PMPI_Allreduce(MPI_IN_PLACE, seen, 2, MPI_INT, MPI_MAX, comm);
    if (!seen[0]) {
        if (tuna_verbosity() >= 1 && comm_rank0(comm))
            say("TUNA_WISDOM=%s: no file yet, plans start without wisdom", path);
        return;
    }
    char msg[700];
    snprintf(msg, sizeof msg,
             "TUNA_WISDOM=%s: no such file on this rank, but other ranks have one (it must be "
             "on a file system every rank reads)", path);
    abort_if_any(comm, !exists, msg);
    int rc = tuna_wisdom_import(path, comm);
    snprintf(msg, sizeof msg, "TUNA_WISDOM=%s: %s", path,
             rc == MPI_SUCCESS ? "" : tuna_error_string(rc));
    abort_if_any(comm, rc != MPI_SUCCESS, msg);
    if (tuna_verbosity() >= 1 && comm_rank0(comm))
        say("TUNA_WISDOM=%s: imported", path);
}

/* Wisdom grows by measure plans and by auto's learning: saved when it grew on some rank
 * (one allreduce: the save is collective, and what rank 0 learned is what it writes). */
static void wisdom_export(void)
{
    const char *path = getenv("TUNA_WISDOM");
    if (!path || !*path)
        return;
    int grew = tuna_wisdom_additions() > 0;
    PMPI_Allreduce(MPI_IN_PLACE, &grew, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!grew)
        return;
    int rc = tuna_wisdom_export(path, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        say("TUNA_WISDOM=%s: not saved: %s", path, tuna_error_string(rc));
    else if (tuna_verbosity() >= 1 && comm_rank0(MPI_COMM_WORLD))
        say("TUNA_WISDOM=%s: saved", path);
}
#endif

/*
 * First contact with MPI: keyvals, the MPI_COMM_SELF attribute whose delete
 * callback (run first thing in MPI_Finalize, whichever language calls it)
 * writes the statistics, and the configuration check over `comm`
 * (MPI_COMM_WORLD from MPI_Init; the communicator of the first call when
 * MPI_Init was not seen, which is collective only over that communicator).
 */
static void startup(MPI_Comm comm)
{
    if (startup_done)
        return;
    startup_done = 1;
    const char *stats = getenv("TUNA_STATS");
    preload_stats_enabled = stats && *stats;
    keyval_init();
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_fn, &finalize_keyval, NULL) ==
        MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL);
    check_config(comm);
#ifdef TUNA_PRELOAD_PERSISTENT
    wisdom_import(comm);
#endif
}

void tuna_preload_startup(void)
{
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin)
        startup(MPI_COMM_WORLD);
}

/* TUNA_PROGRESS=thread: tuna's progress thread calls MPI, so the process asks for
 * MPI_THREAD_MULTIPLE (MPI lets the level provided exceed the one required; the
 * application sees what the library gave). */
int MPI_Init(int *argc, char ***argv)
{
    int provided, rc = tuna_progress_thread_wanted()
                           ? PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided)
                           : PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        tuna_preload_startup();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(
        argc, argv, tuna_progress_thread_wanted() ? MPI_THREAD_MULTIPLE : required, provided);
    if (rc == MPI_SUCCESS)
        tuna_preload_startup();
    return rc;
}

/* Append to a growing text buffer; returns 0 on allocation failure. */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static int text_add(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int text_add(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return 0;
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->len + (size_t)n + 1) * 2;
        char *s = realloc(t->s, cap);
        if (!s)
            return 0;
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
    return 1;
}

/*
 * TUNA_STATS=FILE: every rank formats its rows, rank 0 gathers them and
 * writes one tab-separated file (a per-rank table; sum rows for totals).
 */
static void write_stats(void)
{
    const char *path = getenv("TUNA_STATS");
    if (!path || !*path)
        return;
    int me = 0, P = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    PMPI_Comm_size(MPI_COMM_WORLD, &P);
    text t = {0};
    int ok = 1;
    for (comm_record *r = records; r && ok; r = r->next)
        for (int i = 0; i < r->nrows && ok; i++) {
            const stat_row *w = &r->rows[i];
            ok = text_add(&t, "%d\t%d\t%s\t%d\t%s\t%s\t%s\t%lld\t%llu\t%llu\t%.9f\n", me,
                          r->id, r->name, r->size, stat_coll_name(w->coll), path_name[w->path],
                          w->label, w->calls, w->bytes_sent, w->bytes_recv, w->seconds);
        }
    if (!ok)
        t.len = 0;    /* out of memory: this rank contributes no rows */
    int len = t.len > INT_MAX ? 0 : (int)t.len;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (me == 0) {
        lens = calloc((size_t)P, sizeof(int));
        displs = calloc((size_t)P, sizeof(int));
    }
    PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long long total = 0;
    if (me == 0 && lens && displs) {
        for (int r = 0; r < P; r++) {
            displs[r] = total > INT_MAX ? 0 : (int)total;
            total += lens[r];
        }
        if (total <= INT_MAX)
            all = malloc((size_t)total + 1);
        if (!all)
            for (int r = 0; r < P; r++)
                lens[r] = displs[r] = 0;   /* gather nothing; report below */
    }
    PMPI_Gatherv(t.s, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (me == 0) {
        FILE *f = fopen(path, "w");
        if (!f) {
            say("TUNA_STATS=%s: cannot open the file for writing", path);
        } else {
            fprintf(f, "# tuna-preload statistics: one row per rank x communicator x collective x "
                       "path; "
                       "bytes are this rank's send/receive totals\n");
            fprintf(f, "rank\tcomm\tcomm_name\tcomm_size\tcollective\tpath\talgorithm\tcalls"
                       "\tbytes_sent\tbytes_received\tseconds\n");
            if (all)
                fwrite(all, 1, (size_t)total, f);
            else
                fprintf(f, "# rows lost: out of memory on rank 0\n");
            fclose(f);
        }
    }
    free(all);
    free(lens);
    free(displs);
    free(t.s);
}

static int finalize_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)attr;
    (void)extra;
    while (nin_flight) /* freed requests' operations: their peers are in them */
        proxies_progress();
#ifdef TUNA_PRELOAD_PERSISTENT
    wisdom_export();   /* collective over MPI_COMM_WORLD, like the statistics */
#endif
    write_stats();
    proxies_release();
    /* Detach states from communicators the application never freed. */
    while (live_states) {
        comm_state *s = live_states;
        int rc = s->comm == MPI_COMM_NULL ? MPI_ERR_COMM
                                          : PMPI_Comm_delete_attr(s->comm, state_keyval);
        /* On success the delete callback has freed s and moved the list head. */
        if (rc != MPI_SUCCESS || live_states == s)
            state_detach(s);
    }
    if (state_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&state_keyval);
    while (records) {
        comm_record *r = records;
        records = r->next;
        free(r->rows);
        free(r);
    }
    records_tail = &records;
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}
