/*
 * The drop-in's start-up and finalize: MPI_Init and MPI_Init_thread (MPI_THREAD_MULTIPLE under
 * TUNA_PROGRESS=thread), the start-up on first contact with MPI (keyvals, the configuration
 * checked collectively: TUNA_* settings, TUNA_PLAN, TUNA_WISDOM imported), and the work of
 * MPI_Finalize, run from an MPI_COMM_SELF attribute delete callback (so Fortran's
 * MPI_FINALIZE, which calls PMPI_Finalize, is covered): operations in flight finished, wisdom
 * saved, the statistics written, everything released.
 */
#include "preload_internal.h"
#include "tuna_internal.h"
#include "op.h" /* TUNA_PROGRESS */
#include "../select/tuna_select.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int startup_done;
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
        preload_say("invalid configuration, aborting: %s", msg);
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

/* TUNA_SETUP_AT_CREATION: 1 (set the new intracommunicators up in their creation calls; unset
 * or empty too) or 0. -1 with a message for another value. */
static int read_setup_at_creation(char *msg, size_t len)
{
    const char *v = getenv("TUNA_SETUP_AT_CREATION");
    if (!v || !*v)
        return 1;
    if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)
        return *v - '0';
    snprintf(msg, len, "TUNA_SETUP_AT_CREATION=%s: expected 0 or 1", v);
    return -1;
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
        int rc = tuna_options_default((tuna_collective)c, &opt);
        if (rc != MPI_SUCCESS) {
            snprintf(msg, sizeof msg, "%s", tuna_error_string(rc));
            failed = 1;
        }
    }
    if (!failed)
        failed = read_plan_config(msg, sizeof msg) != 0;
    int at_creation = 0;
    if (!failed)
        failed = (at_creation = read_setup_at_creation(msg, sizeof msg)) < 0;
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
    if (!at_creation)
        return;
    preload_setup_at_creation = 1;
    /* Set-up at creation (comm_create.c; docs/nonblocking.md, "Set-up at creation"):
     * MPI_COMM_WORLD and MPI_COMM_SELF here, collective anyway, so that their first
     * nonblocking calls run tuna's rows. */
    if (comm != MPI_COMM_WORLD) /* start-up from a first call (MPI_Init not seen) */
        return;
    rc = tuna_ctx_setup_created(MPI_COMM_WORLD, MPI_COMM_NULL);
    if (rc == MPI_SUCCESS)
        rc = tuna_ctx_setup_created(MPI_COMM_SELF, MPI_COMM_NULL);
    snprintf(msg, sizeof msg, "%s", rc == MPI_SUCCESS ? "" : tuna_error_string(rc));
    abort_if_any(comm, rc != MPI_SUCCESS, msg);
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
        if (tuna_verbosity() >= 1 && preload_comm_rank0(comm))
            preload_say("TUNA_WISDOM=%s: no file yet, plans start without wisdom", path);
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
    if (tuna_verbosity() >= 1 && preload_comm_rank0(comm))
        preload_say("TUNA_WISDOM=%s: imported", path);
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
        preload_say("TUNA_WISDOM=%s: not saved: %s", path, tuna_error_string(rc));
    else if (tuna_verbosity() >= 1 && preload_comm_rank0(MPI_COMM_WORLD))
        preload_say("TUNA_WISDOM=%s: saved", path);
}
#endif

/*
 * First contact with MPI: keyvals, the MPI_COMM_SELF attribute whose delete
 * callback (run first thing in MPI_Finalize, whichever language calls it)
 * writes the statistics, and the configuration check over `comm`
 * (MPI_COMM_WORLD from MPI_Init; the communicator of the first call when
 * MPI_Init was not seen, which is collective only over that communicator).
 */
void preload_startup(MPI_Comm comm)
{
    if (startup_done)
        return;
    startup_done = 1;
    const char *stats = getenv("TUNA_STATS");
    preload_stats_enabled = stats && *stats;
    preload_keyval_init();
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
        preload_startup(MPI_COMM_WORLD);
}

/* TUNA_PROGRESS=thread: tuna's progress thread calls MPI, so the process asks for
 * MPI_THREAD_MULTIPLE (MPI lets the level provided exceed the one required; the
 * application sees what the library gave). */
int MPI_Init(int *argc, char ***argv)
{
#if defined(TUNA_MPI_ABI)
    preload_abi_check();
#endif
    int provided, rc = tuna_progress_thread_wanted()
                           ? PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided)
                           : PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        tuna_preload_startup();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
#if defined(TUNA_MPI_ABI)
    preload_abi_check();
#endif
    int rc = PMPI_Init_thread(
        argc, argv, tuna_progress_thread_wanted() ? MPI_THREAD_MULTIPLE : required, provided);
    if (rc == MPI_SUCCESS)
        tuna_preload_startup();
    return rc;
}

static int finalize_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)attr;
    (void)extra;
    preload_proxies_drain(); /* freed requests' operations: their peers are in them */
#ifdef TUNA_PRELOAD_PERSISTENT
    wisdom_export();   /* collective over MPI_COMM_WORLD, like the statistics */
#endif
    preload_write_stats();
    preload_proxies_release();
    preload_states_release();
    preload_stats_release();
    PMPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}
