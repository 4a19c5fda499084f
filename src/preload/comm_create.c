/*
 * Set-up at creation (docs/nonblocking.md, "Set-up at creation"): the calls that create
 * communicators call the library's own (PMPI_*) first; then, with TUNA_SETUP_AT_CREATION on
 * (the default), an
 * intracommunicator they return (not MPI_COMM_NULL, not an intercommunicator) is set up at
 * once: every member is inside the creation call, so a collective on the new communicator is
 * valid there. Its first nonblocking or persistent call then runs tuna's rows.
 * MPI_Comm_idup's communicator exists only at the idup's completion, which is not collective:
 * it is not set up here (its first blocking call or plan does, or a set-up in the operation
 * where the MPI has one). tuna's set-up calls PMPI_* only: a tool in front of the drop-in
 * sees the application's creation call, once. Threads may create communicators on different
 * parents at once (MPI_THREAD_MULTIPLE): the set-up communicates only on the parent, the new
 * communicator and tuna's private one, and tuna's list of contexts is locked.
 */
#include "preload_internal.h"
#include "tuna_internal.h"

#include <stdio.h>

int preload_setup_at_creation;

/* Set up *newcomm after its creation call returned rc. parent: a communicator every rank of
 * which was in the call (members and MPI_COMM_NULL ranks alike), from which tuna's private
 * communicator is split (the color names the new communicator, MPI_UNDEFINED outside it;
 * the key is the rank in it); MPI_COMM_NULL: no such parent, the private communicator is a
 * duplicate of *newcomm. Why split the parent: Open MPI 4.1.4's communicator-id allocation hangs when a
 * thread duplicates a communicator it has just made while other threads create communicators
 * on other parents (a plain MPI program without tuna does too), and creating again on the
 * parent does not; a split also calls no attribute copy callback of the application's. */
static int set_up(MPI_Comm parent, MPI_Comm errcomm, MPI_Comm *newcomm, int rc,
                  const char *call)
{
    if (rc != MPI_SUCCESS || !preload_setup_at_creation)
        return rc;
    int inter = 0, me = 0;
    MPI_Comm priv = MPI_COMM_NULL;
    if (parent != MPI_COMM_NULL) {
        if (PMPI_Comm_test_inter(parent, &inter) != MPI_SUCCESS || inter)
            return rc; /* results of intercommunicators are intercommunicators */
        /* color: the parent rank of the new communicator's rank 0 (a split or a cartesian
         * sub-grid makes several, disjoint, at once); key: the rank in it. */
        int color = MPI_UNDEFINED;
        if (*newcomm != MPI_COMM_NULL) {
            MPI_Group gnew, gpar;
            const int zero = 0;
            PMPI_Comm_rank(*newcomm, &me);
            PMPI_Comm_group(*newcomm, &gnew);
            PMPI_Comm_group(parent, &gpar);
            PMPI_Group_translate_ranks(gnew, 1, &zero, gpar, &color);
            PMPI_Group_free(&gnew);
            PMPI_Group_free(&gpar);
        }
        int src = PMPI_Comm_split(parent, color, me, &priv);
        if (src != MPI_SUCCESS && *newcomm != MPI_COMM_NULL) {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "%s: MPI_Comm_split for tuna's private communicator failed "
                     "(TUNA_SETUP_AT_CREATION=0 leaves the set-up to the first blocking call)",
                     call);
            PMPI_Comm_free(newcomm);
            return preload_raise_error(errcomm, src, msg);
        }
    }
    if (*newcomm == MPI_COMM_NULL)
        return rc;
    if (parent == MPI_COMM_NULL &&
        (PMPI_Comm_test_inter(*newcomm, &inter) != MPI_SUCCESS || inter))
        return rc;
    int src = tuna_ctx_setup_created(*newcomm, priv);
    if (src == MPI_SUCCESS)
        return rc;
    char msg[700];
    snprintf(msg, sizeof msg,
             "%s: setting the new communicator up for tuna failed: %s "
             "(TUNA_SETUP_AT_CREATION=0 leaves it to the first blocking call)",
             call, tuna_error_string(src));
    PMPI_Comm_free(newcomm);
    return preload_raise_error(errcomm, src, msg);
}

int preload_comm_created(MPI_Comm parent, MPI_Comm *newcomm, int rc, const char *call)
{
    return set_up(parent, parent, newcomm, rc, call);
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return preload_comm_created(comm, newcomm, PMPI_Comm_dup(comm, newcomm), "MPI_Comm_dup");
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    return preload_comm_created(comm, newcomm, PMPI_Comm_split(comm, color, key, newcomm),
                                "MPI_Comm_split");
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    return preload_comm_created(comm, newcomm,
                                PMPI_Comm_split_type(comm, split_type, key, info, newcomm),
                                "MPI_Comm_split_type");
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    return preload_comm_created(comm, newcomm, PMPI_Comm_create(comm, group, newcomm),
                                "MPI_Comm_create");
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    /* Only the group's members call it: no parent to split (a duplicate of the result). */
    return set_up(MPI_COMM_NULL, comm, newcomm, PMPI_Comm_create_group(comm, group, tag, newcomm),
                  "MPI_Comm_create_group");
}

#ifdef TUNA_HAVE_MPI_COMM_CREATE_FROM_GROUP
int MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    /* No parent: MPI raises this call's errors on MPI_COMM_SELF (the World Model). */
    return set_up(MPI_COMM_NULL, MPI_COMM_SELF, newcomm,
                  PMPI_Comm_create_from_group(group, stringtag, info, errhandler, newcomm),
                  "MPI_Comm_create_from_group");
}
#endif

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *newcomm)
{
    return preload_comm_created(comm, newcomm,
                                PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm),
                                "MPI_Cart_create");
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    return preload_comm_created(comm, newcomm, PMPI_Cart_sub(comm, remain_dims, newcomm),
                                "MPI_Cart_sub");
}

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *newcomm)
{
    return preload_comm_created(comm, newcomm,
                                PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm),
                                "MPI_Graph_create");
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *newcomm)
{
    return preload_comm_created(comm, newcomm,
                                PMPI_Dist_graph_create(comm, n, sources, degrees, destinations,
                                                       weights, info, reorder, newcomm),
                                "MPI_Dist_graph_create");
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    return preload_comm_created(comm, newcomm,
                                PMPI_Dist_graph_create_adjacent(comm, indegree, sources,
                                                                sourceweights, outdegree,
                                                                destinations, destweights, info,
                                                                reorder, newcomm),
                                "MPI_Dist_graph_create_adjacent");
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newcomm)
{
    /* The parent is an intercommunicator: a duplicate of the result. */
    return set_up(MPI_COMM_NULL, intercomm, newcomm,
                  PMPI_Intercomm_merge(intercomm, high, newcomm), "MPI_Intercomm_merge");
}
