/*
 * The drop-in's choice of algorithm, per communicator and collective (docs/preload.md), first
 * match wins:
 *   1. info key "tuna_alltoallv" ("tuna_alltoall", "tuna_allgather", "tuna_allreduce") given to
 *      MPI_Comm_set_info / MPI_Comm_dup_with_info (captured by info_keys.c, because Open MPI
 *      and MPICH drop unknown keys from the communicator's info), or present in
 *      MPI_Comm_get_info;
 *   2. the environment variable TUNA_ALLTOALLV (TUNA_ALLTOALL, TUNA_ALLGATHER, TUNA_ALLREDUCE);
 *   3. tuna's built-in default.
 * The parsed choices are cached on the communicator's state (comm_state.c), resolved on the
 * first call of each collective (their names, keys and variables: tuna_collective_table). Also
 * here: the start of every intercepted call (preload_call_begin), which runs the start-up on
 * first contact and resolves the choice.
 */
#include "preload_internal.h"
#include "tuna_internal.h"

#include <stdio.h>
#include <stdlib.h>

int preload_parse_choice(enum coll coll, const char *str, tuna_options *opt, char *why,
                         size_t len)
{
    int rc = tuna_options_parse(str, (tuna_collective)coll, opt);
    if (rc != MPI_SUCCESS)
        snprintf(why, len, "%s", tuna_error_string(rc));
    return rc;
}

/* Value of info key `key` in `info`: 1 found, 0 absent, -1 too long. */
int preload_info_value(MPI_Info info, const char *key, char *val)
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
    const char *key = tuna_collective_table[coll].info_key;
    char why[512], val[OPT_MAX];
    int rc;
    if (ch->has_override) {
        /* Validated when captured. */
        rc = preload_parse_choice(coll, ch->override, &ch->opt, why, sizeof why);
        snprintf(ch->source, sizeof ch->source, "info key %s", key);
    } else {
        MPI_Info info = MPI_INFO_NULL;
        int found = 0;
        if (PMPI_Comm_get_info(comm, &info) == MPI_SUCCESS && info != MPI_INFO_NULL) {
            found = preload_info_value(info, key, val);
            PMPI_Info_free(&info);
        }
        if (found < 0) {
            snprintf(why, sizeof why, "info key %s: value longer than %d characters", key,
                     OPT_MAX - 1);
            return preload_raise_error(comm, MPI_ERR_INFO_VALUE, why);
        }
        if (found) {
            rc = preload_parse_choice(coll, val, &ch->opt, why, sizeof why);
            snprintf(ch->source, sizeof ch->source, "info key %s", key);
            if (rc != MPI_SUCCESS) {
                char msg[1024];
                snprintf(msg, sizeof msg, "info key %s='%s': %s", key, val, why);
                return preload_raise_error(comm, MPI_ERR_INFO_VALUE, msg);
            }
        } else {
            const char *name = tuna_collective_table[coll].env, *env = getenv(name);
            snprintf(ch->source, sizeof ch->source, "%s", env && *env ? name : "built-in default");
            rc = tuna_options_default((tuna_collective)coll, &ch->opt);
            if (rc != MPI_SUCCESS)
                snprintf(why, sizeof why, "%s", tuna_error_string(rc));
        }
    }
    if (rc != MPI_SUCCESS)
        return preload_raise_error(comm, rc, why);
    ch->vendor =
        tuna_registry_row(tuna_registry_of((tuna_collective)coll), ch->opt.algorithm)->kind ==
        TUNA_ROW_VENDOR;
    if (tuna_options_format(&ch->opt, ch->label, sizeof ch->label) != MPI_SUCCESS)
        snprintf(ch->label, sizeof ch->label, "%s",
                 tuna_algorithm_get((tuna_collective)coll, ch->opt.algorithm)->name);
    ch->resolved = 1;
    return MPI_SUCCESS;
}

/* The communicator's state with its choice for `coll` resolved (reported once with
 * TUNA_VERBOSE). */
static int comm_ready(MPI_Comm comm, enum coll coll, comm_state **out)
{
    comm_state *s = *out = preload_state_get(comm);
    if (!s)
        return preload_raise_error(comm, MPI_ERR_NO_MEM,
                                   "out of memory for the communicator's state");
    choice *ch = &s->ch[coll];
    if (!ch->resolved) {
        int rc = resolve(comm, s, coll);
        if (rc != MPI_SUCCESS)
            return rc;
        const comm_record *rec = preload_state_record(s);
        if (tuna_verbosity() >= 1 && preload_comm_rank0(comm))
            preload_say("communicator %d '%s' (size %d): %s %s (%s)%s", rec ? rec->id : -1,
                        rec ? rec->name : "-", rec ? rec->size : 0, tuna_collective_table[coll].name,
                        ch->label, ch->source, ch->vendor ? ": the library's own call" : "");
    }
    return MPI_SUCCESS;
}

int preload_call_begin(MPI_Comm comm, enum coll coll, comm_state **s, int *inter, int *P,
                       double *t0)
{
    /* A repeated call on this thread's last communicator, its choice resolved */
    comm_state *c = preload_state_cached(comm, inter, P);
    if (c && c->ch[coll].resolved) {
        *s = c;
        *t0 = preload_clock_now();
        return MPI_SUCCESS;
    }
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!init || fin || comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, inter) != MPI_SUCCESS)
        return -1;
    preload_startup(comm);
    *t0 = preload_clock_now();
    int rc = comm_ready(comm, coll, s);
    if (rc != MPI_SUCCESS)
        return rc;
    if (*inter)
        PMPI_Comm_remote_size(comm, P);
    else
        PMPI_Comm_size(comm, P);
    preload_state_remember(comm, *s, *inter, *P);
    return MPI_SUCCESS;
}
