/*
 * Per-communicator context: a private duplicate communicator, the node
 * topology and reusable scratch buffers, cached on the user's communicator
 * with an MPI attribute and freed by the attribute's delete callback. Contexts
 * still alive when MPI_Finalize starts are detached (and so freed) by a
 * callback on MPI_COMM_SELF, which MPI runs first thing in MPI_Finalize.
 */
#include "tuna_internal.h"
#include "op.h"
#include "../transport/cuda_staged.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ctx_keyval = MPI_KEYVAL_INVALID;
static int self_keyval = MPI_KEYVAL_INVALID;
static tuna_ctx *live_head;
/* The list of live contexts and the keyvals: threads may set up and free contexts of
 * different communicators at once (MPI_THREAD_MULTIPLE). Held for list edits and the
 * keyvals' creation only, never across a call that communicates. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Fast lookup: each thread remembers the last (communicator, context) pair it used, valid
 * while no context has been freed since (a freed communicator's handle may be reused for a
 * new one). MPI_Comm_get_attr costs about as much as the rest of a small call's checks.
 */
static atomic_uint ctx_generation;
static _Thread_local struct {
    MPI_Comm comm;
    tuna_ctx *ctx;
    unsigned generation;
} last_used;

/* Take ctx out of the live list; false when it is not there (freed at MPI_Finalize). */
static bool live_remove(tuna_ctx *ctx)
{
    pthread_mutex_lock(&live_lock);
    bool found = false;
    for (tuna_ctx *c = live_head; c && !found; c = c->next)
        found = c == ctx;
    if (found) {
        atomic_fetch_add(&ctx_generation, 1);
        TUNA_LIST_UNLINK(live_head, ctx);
    }
    pthread_mutex_unlock(&live_lock);
    return found;
}

static void live_add(tuna_ctx *c)
{
    pthread_mutex_lock(&live_lock);
    TUNA_LIST_PUSH(live_head, c);
    pthread_mutex_unlock(&live_lock);
}

/* A context out of the list: its communicator and memory. */
static void ctx_release(tuna_ctx *ctx)
{
    tuna_setup_release(ctx); /* a nonblocking set-up's state (setup.c) */
    if (ctx->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&ctx->comm);
    tuna_scratch_free(&ctx->scr);
    tuna_staged_free(ctx->staged);
    TUNA_FREE_ALL(ctx->node_of, ctx->local_of, ctx->vrank_to_rank, ctx->rank_to_vrank);
    if (ctx->learn_free)
        ctx->learn_free(ctx->learn);
    free(ctx);
}

static void ctx_free(tuna_ctx *ctx)
{
    live_remove(ctx);
    ctx_release(ctx);
}

static int ctx_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    /* A context already freed at MPI_Finalize (see self_delete_fn) is not in the list:
     * some MPI libraries delete MPI_COMM_WORLD's attributes after MPI_COMM_SELF's. */
    if (live_remove(attr))
        ctx_release(attr);
    return MPI_SUCCESS;
}

static int self_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)attr;
    (void)extra;
    /* MPI_Finalize has started. Operations still in flight (a request the application
     * freed, or never completed) finish first: their messages travel on the contexts'
     * communicators, and their peers, in MPI_Finalize too, progress them likewise. Then
     * free every live context here (its private communicator included) rather than
     * detaching it from its user communicator, which some MPI libraries (SimGrid SMPI) no
     * longer allow at this point. */
    tuna_progress_thread_stop();
    while (tuna_op_any_active())
        tuna_op_progress_all();
    for (tuna_ctx *c; (c = live_head) != NULL;) {
        live_remove(c);
        ctx_release(c);
    }
    PMPI_Comm_free_keyval(&ctx_keyval);
    self_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static int keyvals_create(void)
{
    if (ctx_keyval != MPI_KEYVAL_INVALID)
        return MPI_SUCCESS;
    TUNA_MPI_CHECK(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, ctx_delete_fn, &ctx_keyval,
                                          NULL));
    TUNA_MPI_CHECK(PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete_fn, &self_keyval,
                                          NULL));
    TUNA_MPI_CHECK(PMPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL));
    return MPI_SUCCESS;
}

static int keyvals_init(void)
{
    pthread_mutex_lock(&live_lock);
    int rc = keyvals_create();
    pthread_mutex_unlock(&live_lock);
    return rc;
}

/*
 * TUNA_RANKS_PER_NODE: "Q" (logical nodes of Q consecutive ranks) or
 * "Q:roundrobin" (rank r on node r mod ceil(P/Q)). *q = 0 when unset;
 * returns -1 when malformed.
 */
static int env_ranks_per_node(int *q, bool *roundrobin)
{
    const char *s = getenv("TUNA_RANKS_PER_NODE");
    *q = 0;
    *roundrobin = false;
    if (!s || !*s)
        return 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1 || v > 1 << 30)
        return -1;
    if (strcmp(end, ":roundrobin") == 0)
        *roundrobin = true;
    else if (*end != '\0')
        return -1;
    *q = (int)v;
    return 0;
}

static int ranks_per_node_error(void)
{
    return tuna_error_set(MPI_ERR_ARG,
                          "TUNA_RANKS_PER_NODE='%s' is not Q or Q:roundrobin with Q a positive "
                          "integer",
                          getenv("TUNA_RANKS_PER_NODE"));
}

int tuna_settings_check(void)
{
    int q;
    bool roundrobin, collective;
    if (env_ranks_per_node(&q, &roundrobin) < 0)
        return ranks_per_node_error();
    return tuna_argcheck_collective(&collective);
}

/* node_of and local_of from each rank's (leader, rank within its node) pair: a node's index
 * is the count of distinct leaders below its own (leaders are ranks). */
static int topology_from_leaders(tuna_ctx *c, const int *leaders)
{
    const int P = c->size;
    /* below[s] = leaders among ranks 0..s-1 (one pass, not one scan per rank). */
    int *below = tuna_malloc(sizeof(int) * ((size_t)P + 1));
    if (!below)
        return MPI_ERR_NO_MEM;
    below[0] = 0;
    for (int s = 0; s < P; s++)
        below[s + 1] = below[s] + (leaders[2 * s] == s);
    for (int r = 0; r < P; r++) {
        c->node_of[r] = below[leaders[2 * r]];
        c->local_of[r] = leaders[2 * r + 1];
    }
    free(below);
    return MPI_SUCCESS;
}

/* The nodes by MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): collective, blocking. */
static int topology_split(tuna_ctx *c)
{
    MPI_Comm node;
    TUNA_MPI_CHECK(PMPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL,
                                        &node));
    int lrank, leader;
    PMPI_Comm_rank(node, &lrank);
    /* The leader of a node is its lowest rank (key = rank keeps rank order). */
    leader = c->rank;
    int rc = PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
    PMPI_Comm_free(&node);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "node topology: MPI_Bcast failed");
    int *leaders = tuna_malloc(sizeof(int) * (size_t)c->size * 2);
    if (!leaders)
        return MPI_ERR_NO_MEM;
    int mine[2] = {leader, lrank};
    rc = PMPI_Allgather(mine, 2, MPI_INT, leaders, 2, MPI_INT, c->comm);
    if (rc == MPI_SUCCESS)
        rc = topology_from_leaders(c, leaders);
    else
        rc = tuna_error_set(rc, "node topology: MPI_Allgather failed");
    free(leaders);
    return rc;
}

typedef struct id_rank {
    long long id;
    int rank;
} id_rank;

static int by_id_rank(const void *a, const void *b)
{
    const id_rank *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The nodes from every rank's node identity (ids[r], gathered by a nonblocking set-up):
 * ranks with the same identity share a node; sorted by (identity, rank), each run's first
 * rank is its leader and the position in the run the rank within the node. */
static int topology_ids(tuna_ctx *c, const long long *ids)
{
    const int P = c->size;
    id_rank *v = tuna_malloc(sizeof *v * (size_t)P);
    int *leaders = tuna_malloc(sizeof(int) * (size_t)P * 2);
    int rc = v && leaders ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        for (int r = 0; r < P; r++)
            v[r] = (id_rank){ids[r], r};
        qsort(v, (size_t)P, sizeof *v, by_id_rank);
        for (int i = 0, first = 0; i < P; i++) {
            if (i > 0 && v[i].id != v[i - 1].id)
                first = i;
            leaders[2 * v[i].rank] = v[first].rank;
            leaders[2 * v[i].rank + 1] = i - first;
        }
        rc = topology_from_leaders(c, leaders);
    }
    free(v);
    free(leaders);
    return rc;
}

/*
 * Node topology: node ids ordered by each node's lowest rank; local ranks in rank order.
 * TUNA_RANKS_PER_NODE forces logical nodes (see env_ranks_per_node); else the nodes come from
 * ids (a nonblocking set-up's gathered node identities) or, ids NULL, MPI_Comm_split_type.
 */
int tuna_ctx_topology(tuna_ctx *c, const long long *ids)
{
    int P = c->size;
    c->node_of = tuna_malloc(sizeof(int) * (size_t)P);
    c->local_of = tuna_malloc(sizeof(int) * (size_t)P);
    if (!c->node_of || !c->local_of)
        return MPI_ERR_NO_MEM;
    int q;
    bool roundrobin;
    if (env_ranks_per_node(&q, &roundrobin) < 0)
        return ranks_per_node_error();
    if (q > 0 && roundrobin) {
        int nn = (P + q - 1) / q; /* node r mod nn: node j's lowest rank is j */
        for (int r = 0; r < P; r++) {
            c->node_of[r] = r % nn;
            c->local_of[r] = r / nn;
        }
    } else if (q > 0) {
        for (int r = 0; r < P; r++) {
            c->node_of[r] = r / q;
            c->local_of[r] = r % q;
        }
    } else {
        int rc = ids ? topology_ids(c, ids) : topology_split(c);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    c->nnodes = 0;
    for (int r = 0; r < P; r++)
        if (c->node_of[r] + 1 > c->nnodes)
            c->nnodes = c->node_of[r] + 1;
    c->node_id = c->node_of[c->rank];
    c->local_rank = c->local_of[c->rank];
    /* Equal node sizes? Then node-major virtual ranks are defined. */
    int *count = tuna_calloc((size_t)c->nnodes, sizeof(int));
    if (!count)
        return tuna_error_set(MPI_ERR_NO_MEM, "out of memory in node topology");
    for (int r = 0; r < P; r++)
        count[c->node_of[r]]++;
    c->ranks_per_node = count[0];
    for (int n = 1; n < c->nnodes; n++)
        if (count[n] != count[0])
            c->ranks_per_node = 0;
    free(count);
    if (c->ranks_per_node > 0) {
        c->vrank_to_rank = tuna_malloc(sizeof(int) * (size_t)P);
        c->rank_to_vrank = tuna_malloc(sizeof(int) * (size_t)P);
        if (!c->vrank_to_rank || !c->rank_to_vrank)
            return MPI_ERR_NO_MEM;
        for (int r = 0; r < P; r++) {
            int v = c->node_of[r] * c->ranks_per_node + c->local_of[r];
            c->rank_to_vrank[r] = v;
            c->vrank_to_rank[v] = r;
        }
    }
    return MPI_SUCCESS;
}

/*
 * The TUNA_* settings that change which collectives a call performs must be the same on every
 * rank, or ranks would wait in different operations (a multi-node launch that forgets to
 * export them): agreed once per communicator, at its context's creation (collective anyway),
 * with one small allreduce, naming the variable that differs and its values. File paths are
 * compared as strings (the same path is expected everywhere). TUNA_PLAN is the preload's.
 * TUNA_SETUP_AT_CREATION (the drop-in's) decides which creation calls set up collectively.
 * TUNA_PROGRESS changes no collective, but an invalid value is an error at this creation,
 * which must then fail on every rank alike.
 */
static const char *const other_vars[] = {
    "TUNA_ARGCHECK",       "TUNA_AUTO_PERIOD", "TUNA_AUTO_LEARN", "TUNA_AUTO_LEARN_BUDGET",
    "TUNA_RANKS_PER_NODE", "TUNA_TUNING",      "TUNA_PROFILE",    "TUNA_PLAN_BUDGET",
    "TUNA_PLAN",           "TUNA_PROGRESS",    "TUNA_SETUP_AT_CREATION"};
#define NVARS (TUNA_COLLECTIVE_COUNT + (int)(sizeof other_vars / sizeof other_vars[0]))

/* The i-th agreed variable: first each collective's default (TUNA_ALLTOALLV, ...), then the
 * others. */
static const char *agreed_var(int i)
{
    return i < TUNA_COLLECTIVE_COUNT ? tuna_collective_table[i].env
                                     : other_vars[i - TUNA_COLLECTIVE_COUNT];
}
_Static_assert(2 * NVARS + 2 <= TUNA_CONFIG_AGREE_MAX, "TUNA_CONFIG_AGREE_MAX too small");

/* The effective setting: unset, empty and the built-in default are the same. */
static const char *env_effective(const char *name)
{
    const char *s = getenv(name);
    if (!s)
        return "";
    if ((strcmp(name, "TUNA_ARGCHECK") == 0 && strcmp(s, "local") == 0) ||
        (strncmp(name, "TUNA_ALL", 8) == 0 && strcmp(s, "auto") == 0) ||
        (strcmp(name, "TUNA_PLAN") == 0 && strcmp(s, "estimate") == 0) ||
        (strcmp(name, "TUNA_AUTO_LEARN") == 0 && strcmp(s, "1") == 0) ||
        (strcmp(name, "TUNA_PROGRESS") == 0 && strcmp(s, "poll") == 0) ||
        (strcmp(name, "TUNA_SETUP_AT_CREATION") == 0 && strcmp(s, "1") == 0))
        return "";
    return s;
}

static long long env_hash(const char *name)
{
    unsigned long long h = 1469598103934665603ULL; /* FNV-1a */
    for (const char *s = env_effective(name); *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (long long)(h >> 2);
}

#ifdef SMPI_SHARED_MALLOC /* SimGrid SMPI's mpi.h */
/*
 * SMPI runs every simulated rank in one process. smpi/privatization:dlopen (smpirun's default
 * "yes" on Linux) loads one copy of the program per rank, globals and thread-locals included;
 * smpi/privatization:mmap swaps the globals at each context switch but not the thread-locals
 * (tuna's context cache, error text, the selector's memo: one OS thread runs every rank), and
 * smpi/privatization:no shares both. With anything shared, calls abort or hang. Making all of
 * it per rank would cost every call an SMPI lookup; refusing costs nothing: each rank counts
 * itself in (a global and a thread-local counter) before this agreement's allreduce and out
 * after it. Private, every rank counts 0 before it; shared, every rank but the first in sees
 * the others (none can leave before all arrive), and the allreduce's maximum tells every rank.
 * A shared libtuna.so without smpi/privatize-libs is caught the same way.
 */
static atomic_int agreeing;
static _Thread_local int agreeing_tls;
static const char msg_no[] =
    "SimGrid SMPI runs this program with smpi/privatization:no: all simulated ranks share "
    "tuna's process-global state (communicator contexts, error messages, statistics), which "
    "must be per rank; run with --cfg=smpi/privatization:dlopen (smpirun's default, yes, on "
    "Linux) and libtuna linked statically (or named in smpi/privatize-libs)";
static const char msg_tls[] =
    "SimGrid SMPI shares tuna's thread-local state (communicator context cache, error "
    "messages) between the simulated ranks, as smpi/privatization:mmap does: run with "
    "--cfg=smpi/privatization:dlopen (smpirun's default, yes, on Linux; not "
    "smpi/privatization:no)";
static _Atomic(const char *) refusal; /* set once found, never cleared */

const char *tuna_smpi_shared_globals(void)
{
    return atomic_load(&refusal);
}
#define SHARED_SLOTS 2
#else
#define SHARED_SLOTS 0
#endif

int tuna_config_agree_n(void)
{
    return 2 * NVARS + SHARED_SLOTS;
}

void tuna_config_agree_values(long long *v)
{
    for (int i = 0; i < NVARS; i++) {
        v[2 * i] = env_hash(agreed_var(i));
        v[2 * i + 1] = -v[2 * i];
    }
#ifdef SMPI_SHARED_MALLOC
    v[2 * NVARS] = atomic_fetch_add(&agreeing, 1) > 0;
    v[2 * NVARS + 1] = agreeing_tls++ > 0;
#endif
}

/* "'value'" or "unset", for the messages. */
static void quoted(char *buf, size_t len, const char *value)
{
    snprintf(buf, len, "%s%s%s", value ? "'" : "", value ? value : "unset", value ? "'" : "");
}

int tuna_config_agree_judge(const long long *v, int rc, MPI_Comm comm, int *differs)
{
    if (differs)
        *differs = 0;
#ifdef SMPI_SHARED_MALLOC
    atomic_fetch_sub(&agreeing, 1);
    agreeing_tls--;
    /* MPI_ERR_OTHER: no argument of the call is wrong (not MPI_ERR_ARG) and
     * MPI_ERR_UNSUPPORTED_OPERATION is the class of file operations; every rank returns it. */
    if (rc == MPI_SUCCESS && (v[2 * NVARS] > 0 || v[2 * NVARS + 1] > 0)) {
        const char *msg = v[2 * NVARS] > 0 ? msg_no : msg_tls;
        atomic_store(&refusal, msg);
        return tuna_error_set(MPI_ERR_OTHER, "%s", msg);
    }
#endif
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "MPI_Allreduce of the TUNA_* settings failed");
    for (int i = 0; i < NVARS; i++) {
        if (v[2 * i] == -v[2 * i + 1])
            continue;
        const char *mine = getenv(agreed_var(i));
        char here[160];
        quoted(here, sizeof here, mine);
        if (comm == MPI_COMM_NULL) /* a nonblocking set-up: no second exchange for rank 0's */
            return tuna_error_set(MPI_ERR_ARG,
                                  "%s differs between the ranks (this rank has %s); every rank "
                                  "must see the same value (export it to every rank)",
                                  agreed_var(i), here);
        /* Every rank sees the same difference: rank 0's value goes to all, for the message. */
        char root[128];
        quoted(root, sizeof root, mine);
        TUNA_MPI_CHECK(PMPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, comm));
        int me = 0;
        PMPI_Comm_rank(comm, &me);
        if (differs)
            *differs = strcmp(here, root) != 0;
        if (me == 0)
            return tuna_error_set(MPI_ERR_ARG,
                                  "%s differs between the ranks (rank 0 has %s, some rank has "
                                  "another value); every rank must see the same value (export "
                                  "it to every rank)",
                                  agreed_var(i), root);
        return tuna_error_set(MPI_ERR_ARG,
                              "%s differs between the ranks (rank 0 has %s, rank %d has %s); "
                              "every rank must see the same value (export it to every rank)",
                              agreed_var(i), root, me, here);
    }
    return MPI_SUCCESS;
}

int tuna_config_agree(MPI_Comm comm, int *differs)
{
    long long v[2 * NVARS + 2];
    tuna_config_agree_values(v);
    int rc = PMPI_Allreduce(MPI_IN_PLACE, v, tuna_config_agree_n(), MPI_LONG_LONG, MPI_MAX, comm);
    return tuna_config_agree_judge(v, rc, comm, differs);
}

/* A new context of comm, in the live list, with what needs no communication. */
static tuna_ctx *ctx_alloc(MPI_Comm comm)
{
    tuna_ctx *c = tuna_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->comm = MPI_COMM_NULL;
    c->user = comm;
    PMPI_Comm_rank(comm, &c->rank);
    PMPI_Comm_size(comm, &c->size);
    c->type_seen[0].type = c->type_seen[1].type = MPI_DATATYPE_NULL;
    /* Link first so that ctx_free() can always unlink. */
    live_add(c);
    return c;
}

/* c attached to comm (rc: its set-up so far): *out, else c freed and `failed` the error. */
static int ctx_attach(MPI_Comm comm, tuna_ctx *c, int rc, const char *failed, tuna_ctx **out)
{
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_attr(comm, ctx_keyval, c);
    if (rc != MPI_SUCCESS) {
        ctx_free(c);
        return tuna_error_set(rc, "%s", failed);
    }
    *out = c;
    return MPI_SUCCESS;
}

/* Out of line: the lookup's hit path stays a few loads and compares. */
__attribute__((noinline)) static int ctx_create(MPI_Comm comm, const char *algorithm,
                                                tuna_ctx **out)
{
    int rc = keyvals_init();
    if (rc != MPI_SUCCESS)
        return rc;
    void *val = NULL;
    int flag = 0;
    TUNA_MPI_CHECK(PMPI_Comm_get_attr(comm, ctx_keyval, &val, &flag));
    if (flag) {
        *out = val;
        /* A nonblocking call began the set-up: a blocking call finishes it (setup.c). */
        return tuna_ctx_ready(*out) ? MPI_SUCCESS : tuna_setup_wait(*out);
    }
    /* Only intracommunicators get a context: the check is paid once, here. */
    rc = tuna_require_intracomm(comm, algorithm);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_ctx *c = ctx_alloc(comm);
    if (!c)
        return tuna_error_set(MPI_ERR_NO_MEM, "out of memory creating the communicator context");
    rc = PMPI_Comm_dup(comm, &c->comm);
    if (rc != MPI_SUCCESS) {
        c->comm = MPI_COMM_NULL;
        ctx_free(c);
        return tuna_error_set(rc, "MPI_Comm_dup of the user communicator failed");
    }
    /* tuna.h promises error codes: internal traffic must never abort the job. */
    PMPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    /* auto's own agreement (tuna_select_agree) waits for auto's first call: loading the
     * profile and tuning files before the settings are agreed would keep a rank's own. */
    rc = tuna_config_agree(c->comm, NULL);
    if (rc == MPI_SUCCESS)
        rc = tuna_ctx_settings_agreed(c);
    if (rc == MPI_SUCCESS)
        rc = tuna_ctx_topology(c, NULL);
    return ctx_attach(comm, c, rc, "creating the communicator context failed", out);
}

int tuna_ctx_settings_agreed(tuna_ctx *c)
{
    int rc = tuna_progress_config_check(); /* the same value on every rank: agreed */
    if (rc != MPI_SUCCESS)
        return rc;
    bool collective;
    /* An invalid TUNA_ARGCHECK leaves this false: the call path reports it. Read (once per
     * process) only now that every rank has the same. */
    c->argcheck_local = tuna_argcheck_collective(&collective) == MPI_SUCCESS && !collective;
    tuna_error_clear();
    return MPI_SUCCESS;
}

int tuna_ctx_begin(MPI_Comm comm, tuna_ctx **out)
{
    *out = NULL;
    int rc = keyvals_init();
    if (rc != MPI_SUCCESS)
        return rc;
    void *val = NULL;
    int flag = 0, inter = 0;
    TUNA_MPI_CHECK(PMPI_Comm_get_attr(comm, ctx_keyval, &val, &flag));
    if (flag) {
        *out = val;
        return MPI_SUCCESS;
    }
    TUNA_MPI_CHECK(PMPI_Comm_test_inter(comm, &inter));
    if (inter) /* no context: the caller runs the library's call */
        return MPI_SUCCESS;
#if TUNA_NO_NONBLOCKING_SETUP
    /* SimGrid SMPI has no MPI_Comm_idup (it aborts); Open MPI 4's fails beside the
     * application's other nonblocking collectives on the communicator (docs/nonblocking.md):
     * no context, as for intercommunicators. */
    return MPI_SUCCESS;
#endif
    tuna_ctx *c = ctx_alloc(comm);
    if (!c)
        return tuna_error_set(MPI_ERR_NO_MEM, "out of memory creating the communicator context");
    atomic_store(&c->state, TUNA_CTX_PENDING);
    rc = tuna_setup_begin(c); /* posts MPI_Comm_idup: local */
    return ctx_attach(comm, c, rc, "beginning the communicator context's set-up failed", out);
}

int tuna_ctx_setup_created(MPI_Comm comm, MPI_Comm private_comm)
{
    int rc = keyvals_init();
    void *val = NULL;
    int flag = 0;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_get_attr(comm, ctx_keyval, &val, &flag);
    tuna_ctx *c = rc == MPI_SUCCESS && !flag ? ctx_alloc(comm) : NULL;
    if (rc != MPI_SUCCESS || flag || !c) { /* flag: set up already (on every rank alike) */
        if (private_comm != MPI_COMM_NULL)
            PMPI_Comm_free(&private_comm);
        return rc != MPI_SUCCESS ? tuna_error_set(rc, "MPI_Comm_get_attr failed")
               : flag ? MPI_SUCCESS
                      : tuna_error_set(MPI_ERR_NO_MEM,
                                       "out of memory creating the communicator context");
    }
    c->comm = private_comm; /* MPI_COMM_NULL: tuna_setup_now duplicates comm */
    rc = tuna_setup_now(c); /* its message set where it failed */
    if (rc == MPI_SUCCESS && (rc = PMPI_Comm_set_attr(comm, ctx_keyval, c)) != MPI_SUCCESS)
        rc = tuna_error_set(rc, "MPI_Comm_set_attr of the communicator's context failed");
    if (rc != MPI_SUCCESS)
        ctx_free(c);
    return rc;
}

int tuna_ctx_get(MPI_Comm comm, const char *algorithm, tuna_ctx **out)
{
    unsigned gen = atomic_load_explicit(&ctx_generation, memory_order_acquire);
    if (last_used.ctx && last_used.comm == comm && last_used.generation == gen) {
        *out = last_used.ctx;
        return MPI_SUCCESS;
    }
    int rc = ctx_create(comm, algorithm, out);
    if (rc == MPI_SUCCESS) {
        last_used.comm = comm;
        last_used.ctx = *out;
        last_used.generation = gen;
    }
    return rc;
}

tuna_ctx *tuna_ctx_cached(MPI_Comm comm)
{
    unsigned gen = atomic_load_explicit(&ctx_generation, memory_order_acquire);
    return last_used.comm == comm && last_used.generation == gen ? last_used.ctx : NULL;
}

int tuna_ctx_find(MPI_Comm comm, tuna_ctx **out)
{
    *out = NULL;
    unsigned gen = atomic_load_explicit(&ctx_generation, memory_order_acquire);
    if (last_used.ctx && last_used.comm == comm && last_used.generation == gen) {
        *out = last_used.ctx;
        return MPI_SUCCESS;
    }
    if (ctx_keyval == MPI_KEYVAL_INVALID)
        return MPI_SUCCESS;
    void *val = NULL;
    int flag = 0;
    TUNA_MPI_CHECK(PMPI_Comm_get_attr(comm, ctx_keyval, &val, &flag));
    if (flag)
        *out = val;
    return MPI_SUCCESS;
}

void *tuna_scratch_get(tuna_scratch *s, int slot, size_t bytes)
{
    if (s->len[slot] >= bytes && s->buf[slot])
        return s->buf[slot];
    free(s->buf[slot]);
    s->buf[slot] = tuna_malloc(bytes);
    s->len[slot] = s->buf[slot] ? bytes : 0;
    return s->buf[slot];
}

void tuna_scratch_free(tuna_scratch *s)
{
    for (int i = 0; i < 4; i++)
        free(s->buf[i]);
    for (int i = 0; i < 8; i++)
        free(s->kept[i]);
    *s = (tuna_scratch){0};
}
