/*
 * The public entries' hand-over of buffers that are not host memory (memkind.h): the MPI
 * library's own call on the caller's communicator, which takes whatever memory the library
 * does (CUDA-aware or not, its business), recorded as vendor with the reason. Every rank
 * decides alone from its own buffers: the ranks of one call must agree (docs/gpu.md).
 */
#include "memkind.h"

#include "op.h"
#include "tuna_mpi_features.h"
#include "tuna_registry.h"
#include "../transport/transport.h"

#include <stdlib.h>

/* Whether the asked row (opt) serves memory of `kinds`. */
static bool row_serves(tuna_collective coll, const tuna_options *opt, unsigned kinds)
{
    const tuna_algorithm *row = tuna_registry_row(tuna_registry_of(coll), opt->algorithm);
    return ((row->memory | TUNA_MEMORY_HOST) & kinds) == kinds;
}

/*
 * The start of a hand-over: -1 where tuna's path goes on (host memory, or a row that serves
 * it), else MPI_SUCCESS with the statistics naming the vendor row and the reason (none where
 * vendor was asked), or the call's error (a bad communicator or options).
 */
static int begin(tuna_collective coll, const void *sendbuf, const void *recvbuf,
                 const tuna_options **opt, double *t_start)
{
    const unsigned kinds = tuna_memory_kinds_query(sendbuf, recvbuf);
    if (kinds == TUNA_MEMORY_HOST)
        return -1;
    *t_start = tuna_stats_on ? PMPI_Wtime() : 0.0;
    int rc = tuna_call_begin(coll, MPI_COMM_WORLD, opt); /* the options (comm: the caller's) */
    if (rc != MPI_SUCCESS)
        return rc;
    if (row_serves(coll, *opt, kinds))
        return -1;
    const int vendor = tuna_registry_find_kind(tuna_registry_of(coll), TUNA_ROW_VENDOR);
    if ((*opt)->algorithm != vendor) {
        tuna_stats_current.algorithm = vendor;
        tuna_stats_current.fallback = tuna_memory_reason(kinds);
    }
    return MPI_SUCCESS;
}

/* The end of a blocking hand-over. */
static int finish(int rc, const char *call, double t_start)
{
    rc = tuna_library_result(rc, call);
    tuna_stats_publish_library(t_start);
    return rc;
}

#if !defined(TUNA_HAVE_MPI_ALLTOALLV_C) || !defined(TUNA_HAVE_MPI_ALLTOALL_C) ||                  \
    !defined(TUNA_HAVE_MPI_IALLTOALLV_C) || !defined(TUNA_HAVE_MPI_IALLTOALL_C)
static int no_large(const char *call)
{
    return tuna_error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                          "device buffers with large counts need the MPI library's %s, which "
                          "it does not have (docs/gpu.md)",
                          call);
}
#endif

int tuna_memory_alltoallv(bool large, const void *sendbuf, const void *sendcounts,
                          const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                          const void *recvcounts, const void *rdispls, MPI_Datatype recvtype,
                          MPI_Comm comm, const tuna_options *opt)
{
    double t = 0;
    int rc = begin(TUNA_ALLTOALLV, sendbuf, recvbuf, &opt, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (large) {
#ifdef TUNA_HAVE_MPI_ALLTOALLV_C
        return finish(PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype, comm),
                      "PMPI_Alltoallv_c", t);
#else
        return no_large("MPI_Alltoallv_c");
#endif
    }
    return finish(PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm),
                  "PMPI_Alltoallv", t);
}

int tuna_memory_alltoall(bool large, const void *sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt)
{
    double t = 0;
    int rc = begin(TUNA_ALLTOALL, sendbuf, recvbuf, &opt, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (large) {
#ifdef TUNA_HAVE_MPI_ALLTOALL_C
        return finish(PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                      recvtype, comm),
                      "PMPI_Alltoall_c", t);
#else
        return no_large("MPI_Alltoall_c");
#endif
    }
    return finish(PMPI_Alltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount,
                                recvtype, comm),
                  "PMPI_Alltoall", t);
}

int tuna_memory_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          const tuna_options *opt)
{
    double t = 0;
    int rc = begin(TUNA_ALLGATHER, sendbuf, recvbuf, &opt, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    return finish(PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                  "PMPI_Allgather", t);
}

int tuna_memory_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                          MPI_Op op, MPI_Comm comm, const tuna_options *opt)
{
    double t = 0;
    int rc = begin(TUNA_ALLREDUCE, sendbuf, recvbuf, &opt, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    return finish(PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm), "PMPI_Allreduce", t);
}

/* ------------------------------------------------------------------ nonblocking */

/* The library's request, posted at the start, inside a tuna operation: one wait. */
typedef struct library_op {
    tuna_op op; /* first member: the engine's view */
    MPI_Request req;
    bool waited;
} library_op;

static int library_step(tuna_op *op, int wait_rc)
{
    library_op *x = (library_op *)op;
    if (x->waited)
        return tuna_op_step_done(op, wait_rc == MPI_SUCCESS
                                         ? MPI_SUCCESS
                                         : tuna_error_set(wait_rc, "the library's call failed"));
    x->waited = true;
    return tuna_op_step_wait(op, &x->req, 1, MPI_SUCCESS);
}

static void library_release(tuna_op *op)
{
    free(op);
}

/* begin(), then room for the operation: *x NULL where tuna's path goes on (rc -1). */
static int ibegin(tuna_collective coll, const void *sendbuf, const void *recvbuf,
                  const tuna_options **opt, tuna_request *req, library_op **x)
{
    *x = NULL;
    if (!req)
        return -1; /* tuna's path reports it */
    double t = 0;
    int rc = begin(coll, sendbuf, recvbuf, opt, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    *req = TUNA_REQUEST_NULL;
    *x = tuna_calloc(1, sizeof **x);
    if (!*x)
        return tuna_error_set(MPI_ERR_NO_MEM, "no memory for the operation");
    **x = (library_op){.op = {.step = library_step, .tp = &tuna_transport_mpi_host,
                              .release = library_release, .publish_stats = true},
                       .req = MPI_REQUEST_NULL};
    return MPI_SUCCESS;
}

/* The library's nonblocking call posted (rc): the operation started, or freed. */
static int ilaunch(library_op *x, int rc, const char *call, tuna_request *req)
{
    if (rc != MPI_SUCCESS) {
        free(x);
        return tuna_library_result(rc, call);
    }
    tuna_op_start(&x->op);
    *req = &x->op;
    return MPI_SUCCESS;
}

int tuna_memory_ialltoallv(bool large, const void *sendbuf, const void *sendcounts,
                           const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                           const void *recvcounts, const void *rdispls, MPI_Datatype recvtype,
                           MPI_Comm comm, const tuna_options *opt, tuna_request *req)
{
    library_op *x;
    int rc = ibegin(TUNA_ALLTOALLV, sendbuf, recvbuf, &opt, req, &x);
    if (!x)
        return rc;
    if (large) {
#ifdef TUNA_HAVE_MPI_IALLTOALLV_C
        return ilaunch(x,
                       PMPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype, comm, &x->req),
                       "PMPI_Ialltoallv_c", req);
#else
        free(x);
        return no_large("MPI_Ialltoallv_c");
#endif
    }
    return ilaunch(x,
                   PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm, &x->req),
                   "PMPI_Ialltoallv", req);
}

int tuna_memory_ialltoall(bool large, const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                          tuna_request *req)
{
    library_op *x;
    int rc = ibegin(TUNA_ALLTOALL, sendbuf, recvbuf, &opt, req, &x);
    if (!x)
        return rc;
    if (large) {
#ifdef TUNA_HAVE_MPI_IALLTOALL_C
        return ilaunch(x,
                       PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, comm, &x->req),
                       "PMPI_Ialltoall_c", req);
#else
        free(x);
        return no_large("MPI_Ialltoall_c");
#endif
    }
    return ilaunch(x,
                   PMPI_Ialltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount,
                                  recvtype, comm, &x->req),
                   "PMPI_Ialltoall", req);
}

int tuna_memory_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           const tuna_options *opt, tuna_request *req)
{
    library_op *x;
    int rc = ibegin(TUNA_ALLGATHER, sendbuf, recvbuf, &opt, req, &x);
    if (!x)
        return rc;
    return ilaunch(x,
                   PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   comm, &x->req),
                   "PMPI_Iallgather", req);
}

int tuna_memory_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                           MPI_Op op, MPI_Comm comm, const tuna_options *opt,
                           tuna_request *req)
{
    library_op *x;
    int rc = ibegin(TUNA_ALLREDUCE, sendbuf, recvbuf, &opt, req, &x);
    if (!x)
        return rc;
    return ilaunch(x, PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &x->req),
                   "PMPI_Iallreduce", req);
}
