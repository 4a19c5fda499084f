/*
 * The public entries' hand-over of buffers that are not host memory (memkind.h): the MPI
 * library's own call on the caller's communicator, which takes whatever memory the library
 * does (CUDA-aware or not, its business), recorded as vendor with the reason; or, for an
 * alltoallv, allgather or allreduce (blocking, nonblocking, plan) whose row declares device
 * memory (tuna_algorithm.memory), contiguous types (alltoallv: no MPI_IN_PLACE; allreduce: a
 * predefined type and op), where CUDA's runtime loads, tuna's path with the staging transport
 * (src/transport/cuda_staged.c); `auto` stages only where the MPI is not CUDA-aware (a
 * fixed row in nonblocking calls). Every rank decides alone from its own
 * buffers and types: the ranks of one call must agree (docs/gpu.md).
 */
#include "memkind.h"

#include "op.h"
#include "tuna_mpi_features.h"
#include "tuna_registry.h"
#include "../transport/cuda_staged.h"
#include "../transport/transport.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* MPIX_Query_cuda_support: Open MPI declares it in mpi-ext.h (its cuda extension), MPICH 4 in
 * mpi.h (beside MPIX_GPU_SUPPORT_CUDA). */
#if defined(OPEN_MPI) && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif
#if defined(OMPI_HAVE_MPI_EXT_CUDA) || defined(MPIX_GPU_SUPPORT_CUDA)
#define TUNA_HAVE_QUERY_CUDA 1
#endif

/* What a call offers besides its buffers: whether its form has a staged path (alltoallv,
 * allgather, allreduce), and its arguments' shape (a row on device memory
 * stages contiguous bytes; alltoallv never in place; allreduce reduces with MPI's own ops on
 * pinned host memory). */
typedef struct call_form {
    bool staged;
    const void *sendbuf;
    MPI_Datatype stype, rtype; /* MPI_DATATYPE_NULL: not asked (stype: in place) */
    bool in_place;             /* MPI_IN_PLACE served (allgather, allreduce) */
    MPI_Op op;                 /* allreduce's (MPI_OP_NULL: none) */
} call_form;

static int cuda_aware = -1; /* 1: the MPI takes device memory; 0: it does not */
static const char *cuda_aware_source = "assumed";
static pthread_once_t cuda_aware_once = PTHREAD_ONCE_INIT;

static void cuda_aware_load(void)
{
    const char *e = getenv("TUNA_CUDA_AWARE");
    if (e && (!strcmp(e, "0") || !strcmp(e, "1"))) {
        cuda_aware = *e == '1';
        cuda_aware_source = "TUNA_CUDA_AWARE";
        return;
    }
#ifdef TUNA_HAVE_QUERY_CUDA
    cuda_aware = MPIX_Query_cuda_support() != 0;
    cuda_aware_source = "MPIX_Query_cuda_support";
#else
    cuda_aware = 1; /* no way to ask: the library's call, as before staging existed */
#endif
}

bool tuna_memory_mpi_cuda_aware(const char **source)
{
    pthread_once(&cuda_aware_once, cuda_aware_load);
    if (source)
        *source = cuda_aware_source;
    return cuda_aware == 1;
}

static bool contiguous(MPI_Datatype t)
{
    tuna_type_info info;
    return t != MPI_DATATYPE_NULL && tuna_type_info_get(t, &info) == MPI_SUCCESS && info.contig;
}

/* A predefined type without gaps: what MPI_Reduce_local takes with a predefined op (Open MPI
 * 4.1 refuses those ops on derived types, contiguous ones included). */
static bool predefined_contiguous(MPI_Datatype t)
{
    tuna_type_info info;
    return t != MPI_DATATYPE_NULL && tuna_type_info_get(t, &info) == MPI_SUCCESS &&
           info.contig && info.named;
}

/* MPI's predefined reductions: MPI_Reduce_local runs them on the pinned host copies (a user
 * op might keep pointers or expect the caller's buffers: the library's call). */
static bool predefined_op(MPI_Op op)
{
    static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN,  MPI_LAND,   MPI_LOR,
                                 MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (op == ops[i])
            return true;
    return false;
}

/* Whether the call's arguments have the shape the staged rows serve. */
static bool form_served(tuna_collective coll, const call_form *f)
{
    const bool in_place = f->sendbuf == MPI_IN_PLACE;
    if (coll == TUNA_ALLREDUCE)
        return f->staged && predefined_contiguous(f->rtype) && predefined_op(f->op);
    return f->staged && (!in_place || f->in_place) && (in_place || contiguous(f->stype)) &&
           contiguous(f->rtype);
}

/* Whether the asked row (opt) serves memory of `kinds` in this form of call; auto: where the
 * MPI is not CUDA-aware (it then runs a device row: blocking calls and plans the model's,
 * front.c, the allgather and allreduce dispatch, plans; nonblocking ones a fixed row,
 * tuna_memory_nb_row). */
static bool row_serves(tuna_collective coll, const tuna_options *opt, unsigned kinds,
                       const call_form *f)
{
    const tuna_algorithm *row = tuna_registry_row(tuna_registry_of(coll), opt->algorithm);
    if (row->kind == TUNA_ROW_AUTO ? tuna_memory_mpi_cuda_aware(NULL)
                                   : ((row->memory | TUNA_MEMORY_HOST) & kinds) != kinds)
        return false;
    return form_served(coll, f) && tuna_staged_available();
}

bool tuna_memory_a2av_stages(const tuna_options *opt, unsigned kinds, const void *sendbuf,
                             MPI_Datatype sendtype, MPI_Datatype recvtype)
{
    const call_form f = {true, sendbuf, sendtype, recvtype, false, MPI_OP_NULL};
    return row_serves(TUNA_ALLTOALLV, opt, kinds, &f);
}

/* The form of an allgather (op MPI_OP_NULL) or allreduce (stype = rtype = its type) call. */
static call_form coll_form(const void *sendbuf, MPI_Datatype stype,
                           MPI_Datatype rtype, MPI_Op op)
{
    return (call_form){true, sendbuf, stype, rtype, true, op};
}

bool tuna_memory_coll_stages(tuna_collective coll, const tuna_options *opt, unsigned kinds,
                             const void *sendbuf, MPI_Datatype sendtype, MPI_Datatype recvtype,
                             MPI_Op op)
{
    const call_form f = coll_form(sendbuf, sendtype, recvtype, op);
    return row_serves(coll, opt, kinds, &f);
}

/* Why a call the row asked for does not serve goes to the library: [mixed][why]. */
enum { WHY_ROW, WHY_AUTO_AWARE, WHY_RUNTIME, WHY_FORM, WHY_FORM_AG, WHY_FORM_AR,
       WHY_N };
static const char *const why_text[2][WHY_N] = {
    {"device buffers: the algorithm asked for does not serve device memory (docs/gpu.md)",
     "device buffers: auto keeps the library's call, which takes device memory itself "
     "(CUDA-aware MPI; TUNA_CUDA_AWARE=0 stages them) (docs/gpu.md)",
     "device buffers: CUDA's runtime (libcudart) is not usable to stage them (docs/gpu.md)",
     "device buffers: the algorithm serves them with contiguous datatypes, not in place "
     "(docs/gpu.md)",
     "device buffers: the algorithm serves them with contiguous datatypes (docs/gpu.md)",
     "device buffers: the algorithm serves them with a predefined datatype without gaps and a "
     "predefined MPI_Op (docs/gpu.md)"},
    {"host and device buffers in one call: the algorithm asked for does not serve device "
     "memory (docs/gpu.md)",
     "host and device buffers in one call: auto keeps the library's call, which takes device "
     "memory itself (CUDA-aware MPI; TUNA_CUDA_AWARE=0 stages them) (docs/gpu.md)",
     "host and device buffers in one call: CUDA's runtime (libcudart) is not usable to stage "
     "them (docs/gpu.md)",
     "host and device buffers in one call: the algorithm serves device memory with contiguous "
     "datatypes, not in place (docs/gpu.md)",
     "host and device buffers in one call: the algorithm serves device memory with contiguous "
     "datatypes (docs/gpu.md)",
     "host and device buffers in one call: the algorithm serves device memory with a "
     "predefined datatype without gaps and a predefined MPI_Op (docs/gpu.md)"},
};

static const char *reason(tuna_collective coll, const tuna_options *opt, unsigned kinds,
                          const call_form *f)
{
    const tuna_algorithm *row = tuna_registry_row(tuna_registry_of(coll), opt->algorithm);
    const int mixed = (kinds & TUNA_MEMORY_HOST) != 0;
    const int form = coll == TUNA_ALLGATHER   ? WHY_FORM_AG
                     : coll == TUNA_ALLREDUCE ? WHY_FORM_AR
                                              : WHY_FORM;
    int why = WHY_ROW;
    if (row->kind == TUNA_ROW_AUTO && f->staged)
        why = tuna_memory_mpi_cuda_aware(NULL)     ? WHY_AUTO_AWARE
              : !tuna_staged_available()           ? WHY_RUNTIME
                                                   : form;
    else if (((row->memory | TUNA_MEMORY_HOST) & kinds) == kinds)
        why = !tuna_staged_available() ? WHY_RUNTIME : form;
    return why_text[mixed][why];
}

const char *tuna_memory_a2av_reason(const tuna_options *opt, unsigned kinds)
{
    const call_form f = {true, NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, false,
                         MPI_OP_NULL};
    return reason(TUNA_ALLTOALLV, opt, kinds, &f);
}

const char *tuna_memory_coll_reason(tuna_collective coll, const tuna_options *opt,
                                    unsigned kinds)
{
    const call_form f = coll_form(NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_OP_NULL);
    return reason(coll, opt, kinds, &f);
}

/*
 * The start of a hand-over: -1 where tuna's path goes on (host memory, or a row that serves
 * it), else MPI_SUCCESS with the statistics naming the vendor row and the reason (none where
 * vendor was asked), or the call's error (a bad communicator or options).
 */
static int begin(tuna_collective coll, const void *sendbuf, const void *recvbuf,
                 const tuna_options **opt, double *t_start, const call_form *f)
{
    const unsigned kinds = tuna_memory_kinds_query(sendbuf, recvbuf);
    if (kinds == TUNA_MEMORY_HOST)
        return -1;
    *t_start = tuna_stats_on ? PMPI_Wtime() : 0.0;
    int rc = tuna_call_begin(coll, MPI_COMM_WORLD, opt); /* the options (comm: the caller's) */
    if (rc != MPI_SUCCESS)
        return rc;
    if (row_serves(coll, *opt, kinds, f))
        return -1;
    const int vendor = tuna_registry_find_kind(tuna_registry_of(coll), TUNA_ROW_VENDOR);
    if ((*opt)->algorithm != vendor) {
        tuna_stats_current.fallback = reason(coll, *opt, kinds, f);
        tuna_stats_current.algorithm = vendor;
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
    const call_form f = {true, sendbuf, sendtype, recvtype, false, MPI_OP_NULL};
    int rc = begin(TUNA_ALLTOALLV, sendbuf, recvbuf, &opt, &t, &f);
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
    const call_form f = {false, sendbuf, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, false,
                         MPI_OP_NULL};
    int rc = begin(TUNA_ALLTOALL, sendbuf, recvbuf, &opt, &t, &f);
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
    const call_form f = coll_form(sendbuf, sendtype, recvtype, MPI_OP_NULL);
    int rc = begin(TUNA_ALLGATHER, sendbuf, recvbuf, &opt, &t, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    return finish(PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                  "PMPI_Allgather", t);
}

int tuna_memory_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                          MPI_Op op, MPI_Comm comm, const tuna_options *opt)
{
    double t = 0;
    const call_form f = coll_form(sendbuf, type, type, op);
    int rc = begin(TUNA_ALLREDUCE, sendbuf, recvbuf, &opt, &t, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    return finish(PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm), "PMPI_Allreduce", t);
}

/* ------------------------------------------------------------------ nonblocking */

/* Nonblocking auto on device memory the MPI cannot take (row_serves): a fixed row, the same
 * on every rank without an agreement (the selector's agreement is not restricted to device
 * rows in nonblocking calls): a bounded round of pinned memory each. */
static tuna_options nb_rows[TUNA_COLLECTIVE_COUNT];
static pthread_once_t nb_rows_once = PTHREAD_ONCE_INIT;

static void nb_rows_parse(void)
{
    (void)tuna_options_parse("scattered", TUNA_ALLTOALLV, &nb_rows[TUNA_ALLTOALLV]);
    (void)tuna_options_parse("ring", TUNA_ALLGATHER, &nb_rows[TUNA_ALLGATHER]);
    (void)tuna_options_parse("ring", TUNA_ALLREDUCE, &nb_rows[TUNA_ALLREDUCE]);
}

const tuna_options *tuna_memory_nb_row(tuna_collective coll, const tuna_options *opt)
{
    const tuna_options *o = opt;
    if (tuna_call_begin(coll, MPI_COMM_WORLD, &o) != MPI_SUCCESS ||
        tuna_registry_row(tuna_registry_of(coll), o->algorithm)->kind != TUNA_ROW_AUTO)
        return opt;
    pthread_once(&nb_rows_once, nb_rows_parse);
    return &nb_rows[coll];
}

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
                  const tuna_options **opt, tuna_request *req, library_op **x,
                  const call_form *f)
{
    *x = NULL;
    if (!req)
        return -1; /* tuna's path reports it */
    double t = 0;
    int rc = begin(coll, sendbuf, recvbuf, opt, &t, f);
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
    const call_form f = {true, sendbuf, sendtype, recvtype, false, MPI_OP_NULL};
    int rc = ibegin(TUNA_ALLTOALLV, sendbuf, recvbuf, &opt, req, &x, &f);
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
    const call_form f = {false, sendbuf, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, false,
                         MPI_OP_NULL};
    int rc = ibegin(TUNA_ALLTOALL, sendbuf, recvbuf, &opt, req, &x, &f);
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
    const call_form f = coll_form(sendbuf, sendtype, recvtype, MPI_OP_NULL);
    int rc = ibegin(TUNA_ALLGATHER, sendbuf, recvbuf, &opt, req, &x, &f);
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
    const call_form f = coll_form(sendbuf, type, type, op);
    int rc = ibegin(TUNA_ALLREDUCE, sendbuf, recvbuf, &opt, req, &x, &f);
    if (!x)
        return rc;
    return ilaunch(x, PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &x->req),
                   "PMPI_Iallreduce", req);
}
