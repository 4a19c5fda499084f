/*
 * The drop-in's MPI_Alltoallw (docs/preload.md): tuna_alltoallw on the communicator's alltoallv
 * choice (info key tuna_alltoallv, TUNA_ALLTOALLV): the alltoallv rows run it, on the blocks'
 * own types where each side has one type, else on the blocks packed to bytes. vendor, an
 * intercommunicator and device buffers take the library's own MPI_Alltoallw. Statistics:
 * "alltoallw"; MPI_Ialltoallw (tuna_ialltoallw behind a proxy request, requests.c) the same
 * way, "ialltoallw"; MPI_Alltoallw_init (MPI 4; Open MPI 4.1's MPIX_Alltoallw_init) a
 * tuna_alltoallw_init plan behind a persistent proxy, "alltoallw_init" (plan_init, plan).
 * Not taken (the library's own, untouched): MPI_Alltoallw_c, MPI_Alltoallw_init_c
 * (docs/reference.md, "Limits").
 */
#include "preload_internal.h"
#include "tuna_internal.h"

/* One call's arguments, as every entry takes them. */
typedef struct w_args {
    const void *sendbuf;
    const int *scounts, *sdispls;
    const MPI_Datatype *stypes;
    void *recvbuf;
    const int *rcounts, *rdispls;
    const MPI_Datatype *rtypes;
} w_args;

#define W_ARGS(a) (a)->sendbuf, (a)->scounts, (a)->sdispls, (a)->stypes, (a)->recvbuf, \
                  (a)->rcounts, (a)->rdispls, (a)->rtypes

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

/* This rank's bytes sent and received by the call (statistics on: else 0). */
static void call_bytes(const w_args *a, int P, unsigned long long *sent,
                       unsigned long long *recvd)
{
    *sent = *recvd = 0;
    if (!preload_stats_enabled)
        return;
    *recvd = side_bytes(a->rcounts, a->rtypes, P);
    *sent = a->sendbuf == MPI_IN_PLACE ? *recvd : side_bytes(a->scounts, a->stypes, P);
}

/* The library's call for `why` (route) done with rc: a success counted on row `stat` (the
 * vendor path, or a fallback for the reason, said once per communicator). bytes: whether the
 * call's bytes count (a persistent init moves none). */
static int library_done(comm_state *s, enum coll stat, int why, int rc, MPI_Comm comm,
                        double t0, const w_args *a, int P, bool bytes)
{
    if (rc != MPI_SUCCESS)
        return rc; /* the library has invoked the error handler */
    if (why >= 0)
        preload_log_fallback(comm, s, COLL_ALLTOALLV, (enum reason)why);
    if (!preload_stats_enabled)
        return MPI_SUCCESS;
    unsigned long long sent = 0, recvd = 0;
    if (bytes)
        call_bytes(a, P, &sent, &recvd);
    preload_account(s, stat, preload_library_path(why),
                    preload_library_label(s, COLL_ALLTOALLV, why), preload_clock_now() - t0,
                    sent, recvd);
    return MPI_SUCCESS;
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    const w_args a = {sendbuf, sendcounts, sdispls, sendtypes,
                      recvbuf, recvcounts, rdispls, recvtypes};
    /* The route is alltoallv's (preload_route): the same on every rank but for device
     * memory. */
    preload_call c;
    int rc = preload_enter(comm, COLL_ALLTOALLV, true, sendbuf, recvbuf, &c);
    if (rc < 0)
        return PMPI_Alltoallw(W_ARGS(&a), comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c.why != PRELOAD_TUNA)
        return library_done(c.s, STAT_ALLTOALLW, c.why, PMPI_Alltoallw(W_ARGS(&a), comm), comm,
                            c.t0, &a, c.P, true);
    rc = tuna_alltoallw(W_ARGS(&a), comm, &c.ch->opt);
    if (rc != MPI_SUCCESS) /* this rank's argument error (as the library reports them) */
        return preload_tuna_failed_as(c.s, COLL_ALLTOALLV, STAT_ALLTOALLW, comm, rc, c.t0);
    if (preload_stats_enabled) {
        char buf[LABEL_MAX];
        unsigned long long sent, recvd;
        call_bytes(&a, c.P, &sent, &recvd);
        preload_account(
            c.s, STAT_ALLTOALLW, PATH_TUNA,
            preload_ran_label(c.ch->label, COLL_ALLTOALLV, c.ch->opt.algorithm, buf, sizeof buf),
            preload_clock_now() - c.t0, sent, recvd);
    }
    return MPI_SUCCESS;
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    const w_args a = {sendbuf, sendcounts, sdispls, sendtypes,
                      recvbuf, recvcounts, rdispls, recvtypes};
    preload_call c;
    int rc = preload_enter(comm, COLL_ALLTOALLV, request != NULL, sendbuf, recvbuf, &c);
    if (rc < 0)
        return PMPI_Ialltoallw(W_ARGS(&a), comm, request);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c.why != PRELOAD_TUNA)
        return library_done(c.s, STAT_IALLTOALLW, c.why,
                            PMPI_Ialltoallw(W_ARGS(&a), comm, request), comm, c.t0, &a, c.P,
                            true);
    tuna_request op = TUNA_REQUEST_NULL;
    rc = tuna_ialltoallw(W_ARGS(&a), comm, &c.ch->opt, &op);
    if (rc != MPI_SUCCESS) /* this rank's argument error, at the start */
        return preload_tuna_failed_as(c.s, COLL_ALLTOALLV, STAT_IALLTOALLW, comm, rc, c.t0);
    unsigned long long sent, recvd;
    call_bytes(&a, c.P, &sent, &recvd);
    return preload_proxy_for_op_owning(c.s, COLL_ALLTOALLV, STAT_IALLTOALLW, op, NULL, comm, c.t0,
                                       sent, recvd, request);
}

#if defined(TUNA_HAVE_MPI_ALLTOALLW_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALLW_INIT)
typedef int (*alltoallw_init_fn)(const void *, const int[], const int[], const MPI_Datatype[],
                                 void *, const int[], const int[], const MPI_Datatype[],
                                 MPI_Comm, MPI_Info, MPI_Request *);

/* MPI_Alltoallw_init under either name (`library`: the library's own under that name): a
 * tuna_alltoallw_init plan behind a persistent proxy. Init errors are agreed by tuna (every
 * rank raises one); an error at a start is raised there (requests.c). */
static int persistent_init(alltoallw_init_fn library, const w_args *a, MPI_Comm comm,
                           MPI_Info info, MPI_Request *request)
{
    preload_call c;
    int rc = preload_enter(comm, COLL_ALLTOALLV, request != NULL, a->sendbuf, a->recvbuf, &c);
    if (rc < 0)
        return library(W_ARGS(a), comm, info, request);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c.why != PRELOAD_TUNA)
        return library_done(c.s, STAT_ALLTOALLW_INIT, c.why,
                            library(W_ARGS(a), comm, info, request), comm, c.t0, a, c.P, false);
    /* The plan copies the arrays and duplicates derived types: the application may free its
     * own right after the init, as MPI allows. */
    tuna_plan plan = NULL;
    rc = tuna_alltoallw_init(W_ARGS(a), comm, &c.ch->opt, preload_plan_flags, &plan);
    if (rc != MPI_SUCCESS)
        return preload_tuna_failed_as(c.s, COLL_ALLTOALLV, STAT_ALLTOALLW_INIT, comm, rc, c.t0);
    unsigned long long sent, recvd;
    call_bytes(a, c.P, &sent, &recvd);
    return preload_plan_request(c.s, COLL_ALLTOALLV, STAT_ALLTOALLW_INIT, plan, comm, c.t0,
                                sent, recvd, request);
}

/* The persistent entry under each name the library has (`library`: its own init under that
 * name). */
#define ALLTOALLW_INIT_ENTRY(name, library)                                                        \
    int name(const void *sendbuf, const int sendcounts[], const int sdispls[],                    \
             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],               \
             const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,   \
             MPI_Request *request)                                                                \
    {                                                                                             \
        const w_args a = {sendbuf, sendcounts, sdispls, sendtypes,                                \
                          recvbuf, recvcounts, rdispls, recvtypes};                               \
        return persistent_init(library, &a, comm, info, request);                                 \
    }
#ifdef TUNA_HAVE_MPI_ALLTOALLW_INIT
ALLTOALLW_INIT_ENTRY(MPI_Alltoallw_init, PMPI_Alltoallw_init)
#endif
#ifdef TUNA_HAVE_MPIX_ALLTOALLW_INIT
ALLTOALLW_INIT_ENTRY(MPIX_Alltoallw_init, PMPIX_Alltoallw_init)
#endif
#endif /* a persistent alltoallw */
