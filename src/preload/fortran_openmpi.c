/*
 * Fortran MPI_ALLTOALLV, MPI_ALLTOALL, MPI_ALLGATHER and MPI_ALLREDUCE for Open MPI. Open
 * MPI's Fortran wrappers (libmpi_mpifh: mpif.h and `use mpi`; libmpi_usempif08: `use
 * mpi_f08`) call PMPI_Alltoallv (PMPI_Alltoall, ...) directly, so a C-only MPI_Alltoallv never
 * sees Fortran calls. These definitions take the Fortran symbols instead and route them
 * through tuna_preload_alltoallv (tuna_preload_alltoall, ...). MPI_INIT and MPI_INIT_THREAD are wrapped
 * too (forwarded to Open MPI's own, then the configuration check), since
 * they call PMPI_Init. (MPICH's Fortran wrappers call the C MPI_Alltoallv and
 * MPI_Init, so this file is built for Open MPI only.)
 */
#define _GNU_SOURCE   /* RTLD_DEFAULT */
#include "fortran_openmpi.h"

#include <dlfcn.h>
#include <stddef.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed as int");

/*
 * Fortran MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are common-block
 * variables of libmpi (mpif.h and `use mpi`; `use mpi_f08` refers to the same ones) whose
 * addresses are the sentinels; Open MPI accepts every name mangling.
 */
enum { IN_PLACE, BOTTOM, STATUS_IGNORE, STATUSES_IGNORE, NSENTINEL };
static const char *const sentinel_names[NSENTINEL][4] = {
    {"mpi_fortran_in_place", "mpi_fortran_in_place_", "mpi_fortran_in_place__",
     "MPI_FORTRAN_IN_PLACE"},
    {"mpi_fortran_bottom", "mpi_fortran_bottom_", "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"},
    {"mpi_fortran_status_ignore", "mpi_fortran_status_ignore_", "mpi_fortran_status_ignore__",
     "MPI_FORTRAN_STATUS_IGNORE"},
    {"mpi_fortran_statuses_ignore", "mpi_fortran_statuses_ignore_",
     "mpi_fortran_statuses_ignore__", "MPI_FORTRAN_STATUSES_IGNORE"}};
static void *sentinel_addr[NSENTINEL][4];
static int sentinels_loaded;

static int is_sentinel(const void *p, int which)
{
    if (!sentinels_loaded) {
        for (int s = 0; s < NSENTINEL; s++)
            for (int i = 0; i < 4; i++)
                sentinel_addr[s][i] = dlsym(RTLD_DEFAULT, sentinel_names[s][i]);
        sentinels_loaded = 1;
    }
    for (int i = 0; i < 4; i++)
        if (sentinel_addr[which][i] && p == sentinel_addr[which][i])
            return 1;
    return 0;
}

void *preload_f_buffer(void *buf)
{
    if (is_sentinel(buf, IN_PLACE))
        return MPI_IN_PLACE;
    if (is_sentinel(buf, BOTTOM))
        return MPI_BOTTOM;
    return buf;
}

int preload_f_status_ignore(const MPI_Fint *status)
{
    return is_sentinel(status, STATUS_IGNORE);
}

int preload_f_statuses_ignore(const MPI_Fint *statuses)
{
    return is_sentinel(statuses, STATUSES_IGNORE);
}

static void alltoallv_f(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,
                        const MPI_Fint *sendtype, void *recvbuf, const MPI_Fint *recvcounts,
                        const MPI_Fint *rdispls, const MPI_Fint *recvtype, const MPI_Fint *comm,
                        MPI_Fint *ierr)
{
    void *sbuf = preload_f_buffer(sendbuf);
    MPI_Datatype st = sbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : PMPI_Type_f2c(*sendtype);
    int rc = tuna_preload_alltoallv(sbuf, sendcounts, sdispls, st, preload_f_buffer(recvbuf),
                                    recvcounts, rdispls, PMPI_Type_f2c(*recvtype),
                                    PMPI_Comm_f2c(*comm));
    if (ierr)   /* optional in mpi_f08 */
        *ierr = (MPI_Fint)rc;
}

/* mpif.h and `use mpi`: every name mangling Open MPI exports. */
#define FORTRAN_BINDING(name)                                                                   \
    void name(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,               \
              const MPI_Fint *sendtype, void *recvbuf, const MPI_Fint *recvcounts,              \
              const MPI_Fint *rdispls, const MPI_Fint *recvtype, const MPI_Fint *comm,          \
              MPI_Fint *ierr);                                                                  \
    void name(void *sendbuf, const MPI_Fint *sendcounts, const MPI_Fint *sdispls,               \
              const MPI_Fint *sendtype, void *recvbuf, const MPI_Fint *recvcounts,              \
              const MPI_Fint *rdispls, const MPI_Fint *recvtype, const MPI_Fint *comm,          \
              MPI_Fint *ierr)                                                                   \
    {                                                                                           \
        alltoallv_f(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,       \
                    recvtype, comm, ierr);                                                      \
    }

FORTRAN_BINDING(mpi_alltoallv)
FORTRAN_BINDING(mpi_alltoallv_)
FORTRAN_BINDING(mpi_alltoallv__)
FORTRAN_BINDING(MPI_ALLTOALLV)
/*
 * `use mpi_f08`: Open MPI 4.1's MPI_Alltoallv_f08 takes the buffers by
 * address (ignore-TKR), TYPE(MPI_Datatype)/TYPE(MPI_Comm) as a reference to
 * their INTEGER MPI_VAL, and an optional ierror (NULL when absent).
 */
FORTRAN_BINDING(mpi_alltoallv_f08_)

/* MPI_ALLTOALL, MPI_ALLGATHER and MPI_ALLREDUCE, every binding as for MPI_ALLTOALLV. */

/* The drop-in's calls with one count and type per side: alltoall and allgather. */
typedef int counted_call(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

static void counted_f(counted_call *call, void *sendbuf, const MPI_Fint *sendcount,
                      const MPI_Fint *sendtype, void *recvbuf, const MPI_Fint *recvcount,
                      const MPI_Fint *recvtype, const MPI_Fint *comm, MPI_Fint *ierr)
{
    void *sbuf = preload_f_buffer(sendbuf);
    MPI_Datatype st = sbuf == MPI_IN_PLACE ? MPI_DATATYPE_NULL : PMPI_Type_f2c(*sendtype);
    int rc = call(sbuf, (int)*sendcount, st, preload_f_buffer(recvbuf), (int)*recvcount,
                  PMPI_Type_f2c(*recvtype), PMPI_Comm_f2c(*comm));
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

static void allreduce_f(void *sendbuf, void *recvbuf, const MPI_Fint *count,
                        const MPI_Fint *datatype, const MPI_Fint *op, const MPI_Fint *comm,
                        MPI_Fint *ierr)
{
    int rc = tuna_preload_allreduce(preload_f_buffer(sendbuf), preload_f_buffer(recvbuf),
                                    (int)*count, PMPI_Type_f2c(*datatype), PMPI_Op_f2c(*op),
                                    PMPI_Comm_f2c(*comm));
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

/* A binding `name` of the counted call `call` (tuna_preload_alltoall, _allgather). */
#define FORTRAN_COUNTED(name, call)                                                             \
    void name(void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype,               \
              void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *recvtype,               \
              const MPI_Fint *comm, MPI_Fint *ierr);                                            \
    void name(void *sendbuf, const MPI_Fint *sendcount, const MPI_Fint *sendtype,               \
              void *recvbuf, const MPI_Fint *recvcount, const MPI_Fint *recvtype,               \
              const MPI_Fint *comm, MPI_Fint *ierr)                                             \
    {                                                                                           \
        counted_f(call, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,       \
                  ierr);                                                                        \
    }
#define FORTRAN_ALLTOALL(name) FORTRAN_COUNTED(name, tuna_preload_alltoall)
#define FORTRAN_ALLGATHER(name) FORTRAN_COUNTED(name, tuna_preload_allgather)

#define FORTRAN_ALLREDUCE(name)                                                                 \
    void name(void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype,    \
              const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *ierr);                        \
    void name(void *sendbuf, void *recvbuf, const MPI_Fint *count, const MPI_Fint *datatype,    \
              const MPI_Fint *op, const MPI_Fint *comm, MPI_Fint *ierr)                         \
    {                                                                                           \
        allreduce_f(sendbuf, recvbuf, count, datatype, op, comm, ierr);                         \
    }

FORTRAN_ALLTOALL(mpi_alltoall)
FORTRAN_ALLTOALL(mpi_alltoall_)
FORTRAN_ALLTOALL(mpi_alltoall__)
FORTRAN_ALLTOALL(MPI_ALLTOALL)
FORTRAN_ALLTOALL(mpi_alltoall_f08_)
FORTRAN_ALLGATHER(mpi_allgather)
FORTRAN_ALLGATHER(mpi_allgather_)
FORTRAN_ALLGATHER(mpi_allgather__)
FORTRAN_ALLGATHER(MPI_ALLGATHER)
FORTRAN_ALLGATHER(mpi_allgather_f08_)
FORTRAN_ALLREDUCE(mpi_allreduce)
FORTRAN_ALLREDUCE(mpi_allreduce_)
FORTRAN_ALLREDUCE(mpi_allreduce__)
FORTRAN_ALLREDUCE(MPI_ALLREDUCE)
FORTRAN_ALLREDUCE(mpi_allreduce_f08_)

/*
 * MPI_INIT / MPI_INIT_THREAD: Open MPI's own binding (the next definition in
 * link order; it handles the command line), then the configuration check.
 */
typedef void (*init_fn)(MPI_Fint *ierr);
typedef void (*init_thread_fn)(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);

static void *next_symbol(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static void after_init(const MPI_Fint *ierr)
{
    if (!ierr || *ierr == MPI_SUCCESS)
        tuna_preload_startup();
}

#define FORTRAN_INIT(name)                                                                      \
    void name(MPI_Fint *ierr);                                                                  \
    void name(MPI_Fint *ierr)                                                                   \
    {                                                                                           \
        init_fn next;                                                                           \
        *(void **)&next = next_symbol(#name);                                                   \
        if (next) {                                                                             \
            next(ierr);                                                                         \
        } else {                                                                                \
            int rc = PMPI_Init(NULL, NULL);                                                     \
            if (ierr)                                                                           \
                *ierr = (MPI_Fint)rc;                                                           \
        }                                                                                       \
        after_init(ierr);                                                                       \
    }

#define FORTRAN_INIT_THREAD(name)                                                               \
    void name(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);                    \
    void name(const MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)                     \
    {                                                                                           \
        init_thread_fn next;                                                                    \
        *(void **)&next = next_symbol(#name);                                                   \
        if (next) {                                                                             \
            next(required, provided, ierr);                                                     \
        } else {                                                                                \
            int p = 0, rc = PMPI_Init_thread(NULL, NULL, (int)*required, &p);                   \
            *provided = (MPI_Fint)p;                                                            \
            if (ierr)                                                                           \
                *ierr = (MPI_Fint)rc;                                                           \
        }                                                                                       \
        after_init(ierr);                                                                       \
    }

FORTRAN_INIT(mpi_init)
FORTRAN_INIT(mpi_init_)
FORTRAN_INIT(mpi_init__)
FORTRAN_INIT(MPI_INIT)
FORTRAN_INIT(mpi_init_f08_)
FORTRAN_INIT_THREAD(mpi_init_thread)
FORTRAN_INIT_THREAD(mpi_init_thread_)
FORTRAN_INIT_THREAD(mpi_init_thread__)
FORTRAN_INIT_THREAD(MPI_INIT_THREAD)
FORTRAN_INIT_THREAD(mpi_init_thread_f08_)
