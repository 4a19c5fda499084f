/*
 * The drop-in's info keys (tuna_alltoallv, tuna_alltoall, tuna_allgather, tuna_allreduce):
 * MPI_Comm_set_info and MPI_Comm_dup_with_info capture them, validated, into the
 * communicator's state before the library sees the info (Open MPI and MPICH drop keys they do
 * not know from the communicator's info); choice.c resolves them on the next call.
 */
#include "preload_internal.h"

#include <stdio.h>

/* The info keys found in `info`, validated: found[c] set and vals[c] filled per collective;
 * MPI_SUCCESS, or the error raised for an invalid value (then nothing is applied). */
static int capture_info(MPI_Comm comm, MPI_Info info, char vals[NCOLL][OPT_MAX],
                        int found[NCOLL])
{
    for (int c = 0; c < NCOLL; c++) {
        const char *key = tuna_collective_table[c].info_key;
        found[c] = preload_info_value(info, key, vals[c]);
        if (found[c] == 0)
            continue;
        char why[512], msg[1024];
        tuna_options opt;
        if (found[c] < 0) {
            snprintf(msg, sizeof msg, "info key %s: value longer than %d characters", key,
                     OPT_MAX - 1);
            return preload_raise_error(comm, MPI_ERR_INFO_VALUE, msg);
        }
        if (preload_parse_choice((enum coll)c, vals[c], &opt, why, sizeof why) != MPI_SUCCESS) {
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
    comm_state *s = any ? preload_state_get(comm) : NULL;
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
    return preload_comm_created(comm, newcomm, rc, "MPI_Comm_dup_with_info");
}
