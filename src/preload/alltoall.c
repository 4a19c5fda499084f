/*
 * The drop-in's alltoall (docs/preload.md): MPI_Alltoall and its large-count form
 * MPI_Alltoall_c, the nonblocking MPI_Ialltoall and MPI_Ialltoall_c (tuna's operation behind a
 * proxy request, requests.c), and the persistent MPI_Alltoall_init and MPI_Alltoall_init_c
 * (Open MPI: MPIX_Alltoall_init; a tuna plan behind a persistent proxy). All take the
 * communicator's choice (info key tuna_alltoall, TUNA_ALLTOALL). Statistics: "alltoall" (and its
 * plans), "ialltoall".
 */
#include "preload_internal.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

/*
 * MPI_Alltoall: tuna takes every intracommunicator call (MPI_IN_PLACE, derived types,
 * MPI_BOTTOM, as tuna_alltoall does), with no collective of the preload's own: every choice
 * below depends only on what MPI makes the same on every rank (the communicator, MPI_IN_PLACE,
 * the block's bytes).
 */

/* count elements of type in bytes, types over 2 GiB and large counts included (0 for invalid
 * arguments). */
static unsigned long long count_bytes(MPI_Count count, MPI_Datatype type)
{
    MPI_Count size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        size < 0)
        return 0;
    return (unsigned long long)count * (unsigned long long)size;
}

/* The bytes of one block of an alltoall on this rank (in place: the receive side's; 0 for
 * invalid arguments, which tuna reports). */
static unsigned long long a2a_block_bytes(const void *sendbuf, MPI_Count sendcount,
                                          MPI_Datatype sendtype, MPI_Count recvcount,
                                          MPI_Datatype recvtype)
{
    return sendbuf == MPI_IN_PLACE ? count_bytes(recvcount, recvtype)
                                   : count_bytes(sendcount, sendtype);
}

/* Where this alltoall goes, the same on every rank (preload_route, and one reason more). In
 * place, tuna packs a non-contiguous receive type's blocks with int counts (MPI_ERR_COUNT over
 * 2 GiB), and a rank cannot know another's type: the block's bytes are every rank's (MPI's
 * rule, and MPI_IN_PLACE is given on all ranks), so every in-place call with blocks over 2 GiB
 * goes to the library (MPI_Alltoall_c's large counts too: tuna_alltoall_c has the same
 * limit). */
static int route(const choice *ch, int inter, const void *sendbuf, const void *recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype)
{
    const int why = preload_route(ch, inter, sendbuf, recvbuf);
    if (why == PRELOAD_TUNA && sendbuf == MPI_IN_PLACE &&
        count_bytes(recvcount, recvtype) > (unsigned long long)INT_MAX)
        return WHY_INPLACE_BLOCK_BIG;
    return why;
}

/* One alltoall call counted on `path`: this rank sends and receives P blocks. */
static void account_a2a(comm_state *s, enum coll stat, enum path path, const char *label,
                        double t0, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, MPI_Count recvcount, MPI_Datatype recvtype, int P)
{
    if (!preload_stats_enabled || !s)
        return;
    const unsigned long long n = (unsigned long long)P;
    preload_account(s, stat, path, label, preload_clock_now() - t0,
                    n * a2a_block_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype),
                    n * count_bytes(recvcount, recvtype));
}

/* A call the library took (why: route's), once it succeeded: the reason reported, the call
 * counted on stat's row. */
static int library_done(comm_state *s, enum coll stat, int why, MPI_Comm comm, double t0,
                        const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        MPI_Count recvcount, MPI_Datatype recvtype, int P)
{
    if (why >= 0)
        preload_log_fallback(comm, s, COLL_ALLTOALL, (enum reason)why);
    account_a2a(s, stat, preload_library_path(why), preload_library_label(s, COLL_ALLTOALL, why),
                t0, sendbuf, sendcount, sendtype, recvcount, recvtype, P);
    return MPI_SUCCESS;
}

/* The library's own MPI_Alltoall, or MPI_Alltoall_c for a call that came as one (`large` is
 * never set where the library has no MPI_Alltoall_c: the preload then defines none). */
static int library_alltoall(bool large, const void *sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm)
{
#ifdef TUNA_HAVE_MPI_ALLTOALL_C
    if (large)
        return PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
#endif
    (void)large;
    return PMPI_Alltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype,
                         comm);
}

/* MPI_Alltoall (large: MPI_Alltoall_c, tuna_alltoall_c), counted on the "alltoall" rows
 * either way. */
static int preload_alltoall(bool large, const void *sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s;
    int rc = preload_call_begin(comm, COLL_ALLTOALL, &s, &inter, &P, &t0);
    if (rc < 0)
        return library_alltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                recvtype, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALL];
    const int why = route(ch, inter, sendbuf, recvbuf, recvcount, recvtype);
    if (why != PRELOAD_TUNA) {
        rc = library_alltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              comm);
        if (rc != MPI_SUCCESS)
            return rc;   /* the library has invoked the error handler */
        return library_done(s, COLL_ALLTOALL, why, comm, t0, sendbuf, sendcount, sendtype,
                            recvcount, recvtype, P);
    }
    rc = tuna_alltoall_host(large, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm, &ch->opt);
    if (rc != MPI_SUCCESS)
        return preload_tuna_failed(s, COLL_ALLTOALL, comm, rc, t0);
    if (preload_stats_enabled) {
        char buf[LABEL_MAX];
        account_a2a(s, COLL_ALLTOALL, PATH_TUNA,
                    preload_ran_label(ch->label, COLL_ALLTOALL, ch->opt.algorithm, buf,
                                      sizeof buf),
                    t0, sendbuf, sendcount, sendtype, recvcount, recvtype, P);
    }
    return MPI_SUCCESS;
}

int tuna_preload_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return preload_alltoall(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return tuna_preload_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm);
}

#ifdef TUNA_HAVE_MPI_ALLTOALL_C
/* Large counts: the same choice, statistics and fallbacks; tuna_alltoall_c takes any count
 * (blocks beyond INT_MAX elements become derived types, as for tuna_alltoallv_c). */
int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return preload_alltoall(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm);
}
#endif

/* The library's own MPI_Ialltoall, or MPI_Ialltoall_c for a call that came as one (as
 * library_alltoall). */
static int library_ialltoall(bool large, const void *sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
#ifdef TUNA_HAVE_MPI_IALLTOALL_C
    if (large)
        return PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                request);
#endif
    (void)large;
    return PMPI_Ialltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype,
                          comm, request);
}

/* MPI_Ialltoall (large: MPI_Ialltoall_c, tuna_ialltoall_c): as MPI_Alltoall, nonblocking
 * (tuna's operation behind a proxy), counted on the "ialltoall" rows either way. */
static int preload_ialltoall(bool large, const void *sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s = NULL;
    int rc = request ? preload_call_begin(comm, COLL_ALLTOALL, &s, &inter, &P, &t0) : -1;
    if (rc < 0)
        return library_ialltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                 recvtype, comm, request);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALL];
    const int why = route(ch, inter, sendbuf, recvbuf, recvcount, recvtype);
    if (why == PRELOAD_TUNA) {
        /* Every alltoall row has a step form: tuna takes the call (from the first call on a
         * communicator: its set-up runs as the operation's first steps). */
        tuna_request op = TUNA_REQUEST_NULL;
        rc = tuna_ialltoall_host(large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                 recvtype, comm, &ch->opt, &op);
        if (rc != MPI_SUCCESS)
            return preload_tuna_failed_as(s, COLL_ALLTOALL, STAT_IALLTOALL, comm, rc, t0);
        const unsigned long long n = (unsigned long long)P;
        return preload_proxy_for_op(s, COLL_ALLTOALL, op, comm, t0,
                            n * a2a_block_bytes(sendbuf, sendcount, sendtype, recvcount,
                                                recvtype),
                            n * count_bytes(recvcount, recvtype), request);
    }
    rc = library_ialltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                           comm, request);
    if (rc != MPI_SUCCESS)
        return rc; /* the library has invoked the error handler */
    return library_done(s, STAT_IALLTOALL, why, comm, t0, sendbuf, sendcount, sendtype,
                        recvcount, recvtype, P);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return preload_ialltoall(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm, request);
}

#ifdef TUNA_HAVE_MPI_IALLTOALL_C
int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
    return preload_ialltoall(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm, request);
}
#endif

#if defined(TUNA_HAVE_MPI_ALLTOALL_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALL_INIT)
/*
 * Persistent alltoall (MPI_Alltoall_init and its large-count form MPI_Alltoall_init_c): the
 * same decision as MPI_Alltoall's (vendor, intercommunicator, in place with blocks over 2 GiB:
 * the library's init; all known alike on every rank), else tuna_alltoall_init(_c), whose
 * argument errors are agreed over the communicator.
 */
typedef int (*alltoall_init_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                                MPI_Comm, MPI_Info, MPI_Request *);

/* The library's own persistent alltoall: `library` (MPI_ or MPIX_Alltoall_init), or
 * MPI_Alltoall_init_c for a call that came as one (`large` is never set where the library has
 * none: the preload then defines no MPI_Alltoall_init_c). */
static int library_alltoall_init(alltoall_init_fn library, bool large, const void *sendbuf,
                                 MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
#ifdef TUNA_HAVE_MPI_ALLTOALL_INIT_C
    if (large)
        return PMPI_Alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, info, request);
#endif
    (void)large;
    return library(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, comm,
                   info, request);
}

static int persistent_alltoall_init(alltoall_init_fn library, bool large, const void *sendbuf,
                                    MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *request)
{
    int inter = 0, P = 0;
    double t0 = 0;
    comm_state *s = NULL;
    int rc = request ? preload_call_begin(comm, COLL_ALLTOALL, &s, &inter, &P, &t0) : -1;
    if (rc < 0)
        return library_alltoall_init(library, large, sendbuf, sendcount, sendtype, recvbuf,
                                     recvcount, recvtype, comm, info, request);
    if (rc != MPI_SUCCESS)
        return rc;
    const choice *ch = &s->ch[COLL_ALLTOALL];
    const int why = route(ch, inter, sendbuf, recvbuf, recvcount, recvtype);
    if (why == PRELOAD_TUNA) {
        /* The plan duplicates derived datatypes itself (freeing them after init is valid). */
        tuna_plan plan = NULL;
        rc = large ? tuna_alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm, &ch->opt, preload_plan_flags, &plan)
                   : tuna_alltoall_init(sendbuf, (int)sendcount, sendtype, recvbuf,
                                        (int)recvcount, recvtype, comm, &ch->opt,
                                        preload_plan_flags, &plan);
        if (rc != MPI_SUCCESS) {
            char label[LABEL_MAX + 32], msg[600];
            snprintf(msg, sizeof msg, "%s", tuna_error_string(rc));
            snprintf(label, sizeof label, "%s (alltoall_init)", ch->label);
            preload_account(s, COLL_ALLTOALL, PATH_ERROR, label, preload_clock_now() - t0, 0, 0);
            return preload_raise_error(comm, rc, msg);
        }
        const unsigned long long n = (unsigned long long)P;
        return preload_plan_request(s, COLL_ALLTOALL, plan, comm, t0,
                            n * a2a_block_bytes(sendbuf, sendcount, sendtype, recvcount,
                                                recvtype),
                            n * count_bytes(recvcount, recvtype), request);
    }
    /* The library's own persistent alltoall; its request goes back untouched. */
    rc = library_alltoall_init(library, large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, info, request);
    if (rc != MPI_SUCCESS)
        return rc;   /* the library has invoked the error handler */
    preload_library_init_done(s, COLL_ALLTOALL, why, comm, t0);
    return MPI_SUCCESS;
}

#ifdef TUNA_HAVE_MPI_ALLTOALL_INIT
int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    return persistent_alltoall_init(PMPI_Alltoall_init, false, sendbuf, sendcount, sendtype,
                                    recvbuf, recvcount, recvtype, comm, info, request);
}
#endif

#ifdef TUNA_HAVE_MPI_ALLTOALL_INIT_C
/* MPI 4's large-count form (MPICH 4; Open MPI 4.1 has none): tuna_alltoall_init_c. */
int MPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    return persistent_alltoall_init(PMPI_Alltoall_init, true, sendbuf, sendcount, sendtype,
                                    recvbuf, recvcount, recvtype, comm, info, request);
}
#endif

#ifdef TUNA_HAVE_MPIX_ALLTOALL_INIT
int MPIX_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    return persistent_alltoall_init(PMPIX_Alltoall_init, false, sendbuf, sendcount, sendtype,
                                    recvbuf, recvcount, recvtype, comm, info, request);
}
#endif
#endif /* a persistent alltoall */
