/*
 * The drop-in's MPI_Alltoallw (docs/preload.md): tuna_alltoallw on the communicator's alltoallv
 * choice (info key tuna_alltoallv, TUNA_ALLTOALLV): the alltoallv rows run it, on the blocks'
 * own types where each side has one type, else on the blocks packed to bytes. vendor, an
 * intercommunicator and device buffers take the library's own MPI_Alltoallw. Statistics:
 * "alltoallw"; MPI_Ialltoallw (tuna_ialltoallw behind a proxy request, requests.c) the same
 * way, "ialltoallw". Not taken (the library's own, untouched): MPI_Alltoallw_init,
 * MPI_Alltoallw_c and Fortran's MPI_ALLTOALLW (docs/reference.md, "Limits").
 */
#include "preload_internal.h"
#include "memkind.h"
#include "tuna_internal.h"

/* This rank's bytes of one side (0 for invalid arguments: statistics only). */
static unsigned long long side_bytes(const int counts[], const MPI_Datatype types[], int P)
{
    unsigned long long n = 0;
    for (int j = 0; counts && types && j < P; j++) {
        MPI_Count size = 0;
        if (counts[j] > 0 && types[j] != MPI_DATATYPE_NULL &&
            PMPI_Type_size_x(types[j], &size) == MPI_SUCCESS && size > 0)
            n += (unsigned long long)counts[j] * (unsigned long long)size;
    }
    return n;
}

static void account(comm_state *s, enum coll stat, enum path path, const char *label, double t0,
                    const void *sendbuf, const int sendcounts[], const MPI_Datatype sendtypes[],
                    const int recvcounts[], const MPI_Datatype recvtypes[], int P)
{
    if (!preload_stats_enabled)
        return;
    const unsigned long long recvd = side_bytes(recvcounts, recvtypes, P);
    const unsigned long long sent =
        sendbuf == MPI_IN_PLACE ? recvd : side_bytes(sendcounts, sendtypes, P);
    preload_account(s, stat, path, label, preload_clock_now() - t0, sent, recvd);
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s;
    int rc = preload_call_begin(comm, COLL_ALLTOALLV, &s, &inter, &P, &t0);
    if (rc < 0)
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                              rdispls, recvtypes, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALLV];
    int why = ch->vendor ? -1
              : inter    ? WHY_INTER
              : tuna_memory_kinds(sendbuf, recvbuf) != TUNA_MEMORY_HOST ? WHY_DEVICE
                                                                      : -2;
    if (why != -2) {
        rc = PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                            rdispls, recvtypes, comm);
        if (rc != MPI_SUCCESS)
            return rc; /* the library has invoked the error handler */
        if (why >= 0)
            preload_log_fallback(comm, s, COLL_ALLTOALLV, (enum reason)why);
        account(s, STAT_ALLTOALLW, why >= 0 ? PATH_FALLBACK : PATH_VENDOR,
                why >= 0 ? preload_reason_name[why] : ch->label, t0, sendbuf, sendcounts,
                sendtypes, recvcounts, recvtypes, P);
        return MPI_SUCCESS;
    }
    rc = tuna_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                        recvtypes, comm, &ch->opt);
    if (rc != MPI_SUCCESS) /* this rank's argument error (as the library reports them) */
        return preload_tuna_failed_as(s, COLL_ALLTOALLV, STAT_ALLTOALLW, comm, rc, t0);
    if (preload_stats_enabled) {
        char buf[LABEL_MAX];
        account(s, STAT_ALLTOALLW, PATH_TUNA,
                preload_ran_label(ch->label, COLL_ALLTOALLV, ch->opt.algorithm, buf, sizeof buf),
                t0, sendbuf, sendcounts, sendtypes, recvcounts, recvtypes, P);
    }
    return MPI_SUCCESS;
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s = NULL;
    int rc = request ? preload_call_begin(comm, COLL_ALLTOALLV, &s, &inter, &P, &t0) : -1;
    if (rc < 0)
        return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                               rdispls, recvtypes, comm, request);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALLV];
    int why = ch->vendor ? -1
              : inter    ? WHY_INTER
              : tuna_memory_kinds(sendbuf, recvbuf) != TUNA_MEMORY_HOST ? WHY_DEVICE
                                                                      : -2;
    if (why != -2) {
        rc = PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                             rdispls, recvtypes, comm, request);
        if (rc != MPI_SUCCESS)
            return rc; /* the library has invoked the error handler */
        if (why >= 0)
            preload_log_fallback(comm, s, COLL_ALLTOALLV, (enum reason)why);
        account(s, STAT_IALLTOALLW, why >= 0 ? PATH_FALLBACK : PATH_VENDOR,
                why >= 0 ? preload_reason_name[why] : ch->label, t0, sendbuf, sendcounts,
                sendtypes, recvcounts, recvtypes, P);
        return MPI_SUCCESS;
    }
    tuna_request op = TUNA_REQUEST_NULL;
    rc = tuna_ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                         recvtypes, comm, &ch->opt, &op);
    if (rc != MPI_SUCCESS) /* this rank's argument error, at the start */
        return preload_tuna_failed_as(s, COLL_ALLTOALLV, STAT_IALLTOALLW, comm, rc, t0);
    unsigned long long sent = 0, recvd = 0;
    if (preload_stats_enabled) {
        recvd = side_bytes(recvcounts, recvtypes, P);
        sent = sendbuf == MPI_IN_PLACE ? recvd : side_bytes(sendcounts, sendtypes, P);
    }
    return preload_proxy_for_op_as(s, COLL_ALLTOALLV, STAT_IALLTOALLW, op, comm, t0, sent,
                                   recvd, request);
}

