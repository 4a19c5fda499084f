/*
 * Fortran nonblocking and persistent collectives, and the request calls, for
 * Open MPI. Open MPI's Fortran wrappers (libmpi_mpifh, libmpi_usempif08) call
 * PMPI_Ialltoallv, PMPI_Wait, ... directly, so the preload's C definitions
 * never see Fortran calls. These bindings take the Fortran symbols, convert the
 * handles, sentinels, statuses and indices, and call the preload's own
 * MPI_Ialltoallv, MPI_Wait, ...: a Fortran program gets tuna's rows behind
 * proxy requests, and its point-to-point requests pass through to the library
 * as a C program's do. The starts and the completions are taken together: a
 * proxy made by a binding here must never reach the library's own PMPI_Wait
 * (nothing would progress its operation).
 *
 * MPICH 4.0.2 (TUNA_PRELOAD_MPICH): mpif.h and `use mpi` call the C MPI_Ialltoallv, MPI_Wait,
 * ..., and so do mpi_f08's collectives (through its descriptor functions), but mpi_f08's
 * request calls call PMPI_Wait, PMPI_Test, ... (libmpichfort, checked by disassembly): a
 * Fortran MPI_Ialltoallv completed by MPI_Wait would hang. There only those are taken, under
 * their one mpi_f08 name, with MPICH's mpi_f08 status sentinels.
 */
#include "fortran_openmpi.h"
#include "preload_internal.h" /* mpi-ext.h where the MPIX_ persistent collectives exist */

#include <stdlib.h>
#include <string.h>

/* A Fortran status is INTEGER(MPI_STATUS_SIZE), as long as the C one (Open MPI
 * copies it integer by integer; TYPE(MPI_Status) of mpi_f08 has the C layout, in
 * Open MPI 4.1 and MPICH 4.0 alike). */
#define F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
_Static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "a status is whole INTEGERs");
/* Fortran LOGICAL .TRUE. of gfortran (the compiler Open MPI's Fortran bindings
 * are built with on Debian; its own bindings store 1 too). */
#define F_TRUE 1

#if defined(TUNA_PRELOAD_MPICH)
static int f_status_ignore(const MPI_Fint *status)
{
    return (const void *)status == (const void *)MPI_F08_STATUS_IGNORE;
}
static int f_statuses_ignore(const MPI_Fint *statuses)
{
    return (const void *)statuses == (const void *)MPI_F08_STATUSES_IGNORE;
}
#define REQUEST_NAMES(impl, params, args, lo, UP) PRELOAD_F_BIND(impl, params, args, lo##_f08_)
#else
#define f_status_ignore preload_f_status_ignore
#define f_statuses_ignore preload_f_statuses_ignore
#define REQUEST_NAMES PRELOAD_F_NAMES
#endif

static void set_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr) /* optional in mpi_f08 */
        *ierr = (MPI_Fint)rc;
}

#if !defined(TUNA_PRELOAD_MPICH)
/* The send type, unless the send buffer is MPI_IN_PLACE (its type argument is
 * then ignored). */
static MPI_Datatype send_type(const void *sbuf, const MPI_Fint *type)
{
    return sbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : PMPI_Type_f2c(*type);
}

/* ---- the nonblocking collectives */

static void ialltoallv_f(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                         const MPI_Fint *sendtype, void *recvbuf, const MPI_Fint *recvcounts,
                         const MPI_Fint *rdispls, const MPI_Fint *recvtype, const MPI_Fint *comm,
                         MPI_Fint *request, MPI_Fint *ierr)
{
    void *sbuf = preload_f_buffer(sendbuf);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Ialltoallv(sbuf, sendcounts, sdispls, send_type(sbuf, sendtype),
                            preload_f_buffer(recvbuf), recvcounts, rdispls,
                            PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm), &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}

/* MPI_IALLTOALL and MPI_IALLGATHER share their arguments. */
typedef int (*counted_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
                          MPI_Request *);

static void counted_f(counted_fn fn, void *sendbuf, const MPI_Fint *sendcount,
                      const MPI_Fint *sendtype, void *recvbuf, const MPI_Fint *recvcount,
                      const MPI_Fint *recvtype, const MPI_Fint *comm, MPI_Fint *request,
                      MPI_Fint *ierr)
{
    void *sbuf = preload_f_buffer(sendbuf);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = fn(sbuf, (int)*sendcount, send_type(sbuf, sendtype), preload_f_buffer(recvbuf),
                (int)*recvcount, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm), &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}

static void iallreduce_f(void *sendbuf, void *recvbuf, const MPI_Fint *count,
                         const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                         MPI_Fint *request, MPI_Fint *ierr)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Iallreduce(preload_f_buffer(sendbuf), preload_f_buffer(recvbuf), (int)*count,
                            PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm), &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}

/* MPI_IALLTOALL and MPI_IALLGATHER: the arguments with the C function to call. */
#define COUNTED_A(fn)                                                                              \
    (fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request, ierr)
#define ALLREDUCE_P                                                                                \
    (void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype,                \
     const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr)
#define ALLREDUCE_A (sendbuf, recvbuf, count, datatype, op, comm, request, ierr)

PRELOAD_F_NAMES(ialltoallv_f, PRELOAD_F_VECTOR_NB_P, PRELOAD_F_VECTOR_NB_A, mpi_ialltoallv,
                MPI_IALLTOALLV)
PRELOAD_F_NAMES(counted_f, PRELOAD_F_COUNTED_NB_P, COUNTED_A(MPI_Ialltoall), mpi_ialltoall,
                MPI_IALLTOALL)
PRELOAD_F_NAMES(counted_f, PRELOAD_F_COUNTED_NB_P, COUNTED_A(MPI_Iallgather), mpi_iallgather,
                MPI_IALLGATHER)
PRELOAD_F_NAMES(iallreduce_f, ALLREDUCE_P, ALLREDUCE_A, mpi_iallreduce, MPI_IALLREDUCE)

/* ---- the persistent collectives: Open MPI 5's MPI_ALLTOALLV_INIT etc., or Open MPI 4.1's
 * MPIX_ forms (the pcollreq extension); either takes an info argument before the request. The
 * build found which the library declares (cmake/tuna_mpi_features.cmake); each binding calls
 * the preload's C entry of the same name. */
#if defined(TUNA_HAVE_MPI_ALLTOALLV_INIT)
#define F_ALLTOALLV_INIT MPI_Alltoallv_init
#define F_ALLTOALLV_INIT_NAMES mpi_alltoallv_init, MPI_ALLTOALLV_INIT
#elif defined(TUNA_HAVE_MPIX_ALLTOALLV_INIT)
#define F_ALLTOALLV_INIT MPIX_Alltoallv_init
#define F_ALLTOALLV_INIT_NAMES mpix_alltoallv_init, MPIX_ALLTOALLV_INIT
#endif
#if defined(TUNA_HAVE_MPI_ALLTOALL_INIT)
#define F_ALLTOALL_INIT MPI_Alltoall_init
#define F_ALLTOALL_INIT_NAMES mpi_alltoall_init, MPI_ALLTOALL_INIT
#elif defined(TUNA_HAVE_MPIX_ALLTOALL_INIT)
#define F_ALLTOALL_INIT MPIX_Alltoall_init
#define F_ALLTOALL_INIT_NAMES mpix_alltoall_init, MPIX_ALLTOALL_INIT
#endif
#if defined(TUNA_HAVE_MPI_ALLGATHER_INIT)
#define F_ALLGATHER_INIT MPI_Allgather_init
#define F_ALLGATHER_INIT_NAMES mpi_allgather_init, MPI_ALLGATHER_INIT
#elif defined(TUNA_HAVE_MPIX_ALLGATHER_INIT)
#define F_ALLGATHER_INIT MPIX_Allgather_init
#define F_ALLGATHER_INIT_NAMES mpix_allgather_init, MPIX_ALLGATHER_INIT
#endif
#if defined(TUNA_HAVE_MPI_ALLREDUCE_INIT)
#define F_ALLREDUCE_INIT MPI_Allreduce_init
#define F_ALLREDUCE_INIT_NAMES mpi_allreduce_init, MPI_ALLREDUCE_INIT
#elif defined(TUNA_HAVE_MPIX_ALLREDUCE_INIT)
#define F_ALLREDUCE_INIT MPIX_Allreduce_init
#define F_ALLREDUCE_INIT_NAMES mpix_allreduce_init, MPIX_ALLREDUCE_INIT
#endif

#if defined(F_ALLTOALLV_INIT)
static void alltoallv_init_f(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                             const MPI_Fint *sendtype, void *recvbuf, const MPI_Fint *recvcounts,
                             const MPI_Fint *rdispls, const MPI_Fint *recvtype,
                             const MPI_Fint *comm, const MPI_Fint *info, MPI_Fint *request,
                             MPI_Fint *ierr)
{
    void *sbuf = preload_f_buffer(sendbuf);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = F_ALLTOALLV_INIT(
        sbuf, sendcounts, sdispls, send_type(sbuf, sendtype), preload_f_buffer(recvbuf), recvcounts,
        rdispls, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm), PMPI_Info_f2c(*info), &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
PRELOAD_F_NAMES_OF(alltoallv_init_f, PRELOAD_F_VECTOR_INIT_P, PRELOAD_F_VECTOR_INIT_A,
                   F_ALLTOALLV_INIT_NAMES)
#endif

#if defined(F_ALLTOALL_INIT) || defined(F_ALLGATHER_INIT)
typedef int (*counted_init_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
                               MPI_Info, MPI_Request *);

static void counted_init_f(counted_init_fn fn, void *sendbuf, const MPI_Fint *sendcount,
                           const MPI_Fint *sendtype, void *recvbuf, const MPI_Fint *recvcount,
                           const MPI_Fint *recvtype, const MPI_Fint *comm, const MPI_Fint *info,
                           MPI_Fint *request, MPI_Fint *ierr)
{
    void *sbuf = preload_f_buffer(sendbuf);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = fn(sbuf, (int)*sendcount, send_type(sbuf, sendtype), preload_f_buffer(recvbuf),
                (int)*recvcount, PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm),
                PMPI_Info_f2c(*info), &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
#define COUNTED_INIT_P                                                                             \
    (void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype, void *recvbuf,            \
     const MPI_Fint *recvcount, const MPI_Fint *recvtype, const MPI_Fint *comm,                    \
     const MPI_Fint *info, MPI_Fint *request, MPI_Fint *ierr)
#define COUNTED_INIT_A(fn)                                                                         \
    (fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request, ierr)
#endif
#if defined(F_ALLTOALL_INIT)
PRELOAD_F_NAMES_OF(counted_init_f, COUNTED_INIT_P, COUNTED_INIT_A(F_ALLTOALL_INIT),
                   F_ALLTOALL_INIT_NAMES)
#endif
#if defined(F_ALLGATHER_INIT)
PRELOAD_F_NAMES_OF(counted_init_f, COUNTED_INIT_P, COUNTED_INIT_A(F_ALLGATHER_INIT),
                   F_ALLGATHER_INIT_NAMES)
#endif

#if defined(F_ALLREDUCE_INIT)
static void allreduce_init_f(void *sendbuf, void *recvbuf, const MPI_Fint *count,
                             const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                             const MPI_Fint *info, MPI_Fint *request, MPI_Fint *ierr)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = F_ALLREDUCE_INIT(preload_f_buffer(sendbuf), preload_f_buffer(recvbuf), (int)*count,
                                 PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm),
                                 PMPI_Info_f2c(*info), &r);
    if (rc == MPI_SUCCESS)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}
#define ALLREDUCE_INIT_P                                                                           \
    (void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype,                \
     const MPI_Fint *op, const MPI_Fint *comm, const MPI_Fint *info, MPI_Fint *request,            \
     MPI_Fint *ierr)
#define ALLREDUCE_INIT_A (sendbuf, recvbuf, count, datatype, op, comm, info, request, ierr)
PRELOAD_F_NAMES_OF(allreduce_init_f, ALLREDUCE_INIT_P, ALLREDUCE_INIT_A, F_ALLREDUCE_INIT_NAMES)
#endif
#endif /* !TUNA_PRELOAD_MPICH */

/* ---- request arrays: the C copies of a Fortran array call's requests,
 * statuses and indices (on the stack for a few requests, the usual case in a
 * loop of tests) */

enum { SMALL = 8 };
typedef struct {
    MPI_Request *reqs;
    MPI_Status *sts; /* MPI_STATUSES_IGNORE when the Fortran call ignores them */
    int *idx;
    void *heap;
    MPI_Request small_reqs[SMALL];
    MPI_Status small_sts[SMALL];
    int small_idx[SMALL];
} c_arrays;

/* a's C requests from the n Fortran ones, statuses zeroed unless ignored. */
static int arrays_get(c_arrays *a, int n, const MPI_Fint *freqs, const MPI_Fint *fstatuses)
{
    a->heap = NULL;
    a->reqs = a->small_reqs;
    a->sts = a->small_sts;
    a->idx = a->small_idx;
    if (n > SMALL) {
        size_t un = (size_t)n;
        char *p = calloc(un, sizeof(MPI_Request) + sizeof(MPI_Status) + sizeof(int));
        if (!p)
            return MPI_ERR_NO_MEM;
        a->heap = p;
        a->sts = (MPI_Status *)(void *)p; /* the largest alignment first */
        a->reqs = (MPI_Request *)(void *)(p + un * sizeof(MPI_Status));
        a->idx = (int *)(void *)(p + un * (sizeof(MPI_Status) + sizeof(MPI_Request)));
    } else {
        memset(a->small_sts, 0, sizeof a->small_sts);
    }
    for (int i = 0; i < n; i++)
        a->reqs[i] = PMPI_Request_f2c(freqs[i]);
    if (f_statuses_ignore(fstatuses))
        a->sts = MPI_STATUSES_IGNORE;
    return MPI_SUCCESS;
}

/* Back to Fortran: every request (a completed nonpersistent one is now
 * MPI_REQUEST_NULL), and the first nst statuses unless ignored; then a's memory
 * freed. */
static void arrays_put(c_arrays *a, int n, MPI_Fint *freqs, int nst, MPI_Fint *fstatuses)
{
    for (int i = 0; i < n; i++)
        freqs[i] = PMPI_Request_c2f(a->reqs[i]);
    if (a->sts != MPI_STATUSES_IGNORE)
        for (int i = 0; i < nst; i++)
            PMPI_Status_c2f(&a->sts[i], fstatuses + (size_t)i * F_STATUS_SIZE);
    free(a->heap);
}

/* A single status: the C one to fill, or MPI_STATUS_IGNORE. */
static MPI_Status *c_status(MPI_Status *st, const MPI_Fint *fstatus)
{
    memset(st, 0, sizeof *st);
    return f_status_ignore(fstatus) ? MPI_STATUS_IGNORE : st;
}

static void status_put(const MPI_Status *st, MPI_Fint *fstatus)
{
    if (st != MPI_STATUS_IGNORE)
        PMPI_Status_c2f(st, fstatus);
}

/* A C index to Fortran's (1-based; MPI_UNDEFINED stays). */
static MPI_Fint f_index(int i)
{
    return (MPI_Fint)(i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1);
}

/* ---- the completion and request calls, through the preload's C definitions */

static void wait_f(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cst, *st = c_status(&cst, status);
    MPI_Request r = PMPI_Request_f2c(*request);
    int rc = MPI_Wait(&r, st);
    *request = PMPI_Request_c2f(r);
    status_put(st, status);
    set_ierr(ierr, rc);
}

static void test_f(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
    MPI_Status cst, *st = c_status(&cst, status);
    MPI_Request r = PMPI_Request_f2c(*request);
    int cflag = 0, rc = MPI_Test(&r, &cflag, st);
    *request = PMPI_Request_c2f(r);
    *flag = cflag ? F_TRUE : 0;
    if (cflag)
        status_put(st, status);
    set_ierr(ierr, rc);
}

static void waitall_f(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
{
    c_arrays a;
    int n = (int)*count, rc = arrays_get(&a, n, requests, statuses);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Waitall(n, a.reqs, a.sts);
        arrays_put(&a, n, requests, n, statuses);
    }
    set_ierr(ierr, rc);
}

static void testall_f(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
                      MPI_Fint *ierr)
{
    c_arrays a;
    int n = (int)*count, cflag = 0, rc = arrays_get(&a, n, requests, statuses);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Testall(n, a.reqs, &cflag, a.sts);
        arrays_put(&a, n, requests, cflag ? n : 0, statuses);
    }
    *flag = cflag ? F_TRUE : 0;
    set_ierr(ierr, rc);
}

static void waitany_f(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
                      MPI_Fint *ierr)
{
    c_arrays a;
    MPI_Status cst, *st = c_status(&cst, status);
    int n = (int)*count, i = MPI_UNDEFINED, rc = arrays_get(&a, n, requests, NULL);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Waitany(n, a.reqs, &i, st);
        arrays_put(&a, n, requests, 0, NULL);
        status_put(st, status);
    }
    *index = f_index(i);
    set_ierr(ierr, rc);
}

static void testany_f(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
                      MPI_Fint *status, MPI_Fint *ierr)
{
    c_arrays a;
    MPI_Status cst, *st = c_status(&cst, status);
    int n = (int)*count, i = MPI_UNDEFINED, cflag = 0, rc = arrays_get(&a, n, requests, NULL);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Testany(n, a.reqs, &i, &cflag, st);
        arrays_put(&a, n, requests, 0, NULL);
        if (cflag)
            status_put(st, status);
    }
    *index = f_index(i);
    *flag = cflag ? F_TRUE : 0;
    set_ierr(ierr, rc);
}

/* MPI_WAITSOME and MPI_TESTSOME share their arguments. */
typedef int (*some_fn)(int, MPI_Request *, int *, int *, MPI_Status *);

static void some_f(some_fn fn, const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
                   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
    c_arrays a;
    int n = (int)*incount, out = 0, rc = arrays_get(&a, n, requests, statuses);
    if (rc == MPI_SUCCESS) {
        rc = fn(n, a.reqs, &out, a.idx, a.sts);
        /* statuses are by position in the indices */
        int done = out == MPI_UNDEFINED ? 0 : out;
        for (int k = 0; k < done; k++)
            indices[k] = f_index(a.idx[k]);
        arrays_put(&a, n, requests, done, statuses);
    }
    *outcount = (MPI_Fint)out;
    set_ierr(ierr, rc);
}

static void request_get_status_f(const MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status,
                                 MPI_Fint *ierr)
{
    MPI_Status cst, *st = c_status(&cst, status);
    int cflag = 0, rc = MPI_Request_get_status(PMPI_Request_f2c(*request), &cflag, st);
    *flag = cflag ? F_TRUE : 0;
    if (cflag)
        status_put(st, status);
    set_ierr(ierr, rc);
}

/* MPI_START, MPI_REQUEST_FREE and MPI_CANCEL: one request, written back
 * (MPI_CANCEL's is INTENT(IN) in Fortran and stays as it is). */
static void one_request_f(int (*fn)(MPI_Request *), MPI_Fint *request, int write_back,
                          MPI_Fint *ierr)
{
    MPI_Request r = PMPI_Request_f2c(*request);
    int rc = fn(&r);
    if (rc == MPI_SUCCESS && write_back)
        *request = PMPI_Request_c2f(r);
    set_ierr(ierr, rc);
}

static void startall_f(const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierr)
{
    c_arrays a;
    int n = (int)*count, rc = arrays_get(&a, n, requests, NULL);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Startall(n, a.reqs);
        arrays_put(&a, n, requests, 0, NULL);
    }
    set_ierr(ierr, rc);
}

#define WAIT_P (MPI_Fint * request, MPI_Fint * status, MPI_Fint * ierr)
#define TEST_P (MPI_Fint * request, MPI_Fint * flag, MPI_Fint * status, MPI_Fint * ierr)
#define WAITALL_P (const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
#define TESTALL_P                                                                                  \
    (const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses, MPI_Fint *ierr)
#define WAITANY_P                                                                                  \
    (const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierr)
#define TESTANY_P                                                                                  \
    (const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status, \
     MPI_Fint *ierr)
#define SOME_P                                                                                     \
    (const MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices,           \
     MPI_Fint *statuses, MPI_Fint *ierr)
#define GET_STATUS_P (const MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
#define ONE_P (MPI_Fint * request, MPI_Fint * ierr)
#define STARTALL_P (const MPI_Fint *count, MPI_Fint *requests, MPI_Fint *ierr)

REQUEST_NAMES(wait_f, WAIT_P, (request, status, ierr), mpi_wait, MPI_WAIT)
REQUEST_NAMES(test_f, TEST_P, (request, flag, status, ierr), mpi_test, MPI_TEST)
REQUEST_NAMES(waitall_f, WAITALL_P, (count, requests, statuses, ierr), mpi_waitall, MPI_WAITALL)
REQUEST_NAMES(testall_f, TESTALL_P, (count, requests, flag, statuses, ierr), mpi_testall,
              MPI_TESTALL)
REQUEST_NAMES(waitany_f, WAITANY_P, (count, requests, index, status, ierr), mpi_waitany,
              MPI_WAITANY)
REQUEST_NAMES(testany_f, TESTANY_P, (count, requests, index, flag, status, ierr), mpi_testany,
              MPI_TESTANY)
REQUEST_NAMES(some_f, SOME_P, (MPI_Waitsome, incount, requests, outcount, indices, statuses, ierr),
              mpi_waitsome, MPI_WAITSOME)
REQUEST_NAMES(some_f, SOME_P, (MPI_Testsome, incount, requests, outcount, indices, statuses, ierr),
              mpi_testsome, MPI_TESTSOME)
REQUEST_NAMES(request_get_status_f, GET_STATUS_P, (request, flag, status, ierr),
              mpi_request_get_status, MPI_REQUEST_GET_STATUS)
REQUEST_NAMES(one_request_f, ONE_P, (MPI_Start, request, 1, ierr), mpi_start, MPI_START)
REQUEST_NAMES(one_request_f, ONE_P, (MPI_Request_free, request, 1, ierr), mpi_request_free,
              MPI_REQUEST_FREE)
REQUEST_NAMES(one_request_f, ONE_P, (MPI_Cancel, request, 0, ierr), mpi_cancel, MPI_CANCEL)
REQUEST_NAMES(startall_f, STARTALL_P, (count, requests, ierr), mpi_startall, MPI_STARTALL)
