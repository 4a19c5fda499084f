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

/* Every entry's prologue (preload_enter) and where this alltoall goes, the same on every rank
 * (preload_route, and one reason more in c->why). In place, tuna packs a non-contiguous
 * receive type's blocks with int counts (MPI_ERR_COUNT over 2 GiB), and a rank cannot know
 * another's type: the block's bytes are every rank's (MPI's rule, and MPI_IN_PLACE is given
 * on all ranks), so every in-place call with blocks over 2 GiB goes to the library
 * (MPI_Alltoall_c's large counts too: tuna_alltoall_c has the same limit). */
static inline __attribute__((always_inline)) int
enter(MPI_Comm comm, bool request_ok, const void *sendbuf, const void *recvbuf,
      MPI_Count recvcount, MPI_Datatype recvtype, preload_call *c)
{
    const int rc = preload_enter(comm, COLL_ALLTOALL, request_ok, sendbuf, recvbuf, c);
    if (rc == MPI_SUCCESS && c->why == PRELOAD_TUNA && sendbuf == MPI_IN_PLACE &&
        count_bytes(recvcount, recvtype) > (unsigned long long)INT_MAX)
        c->why = WHY_INPLACE_BLOCK_BIG;
    return rc;
}

/* This rank's bytes sent and received by an alltoall: P blocks each way. */
static void a2a_bytes(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      MPI_Count recvcount, MPI_Datatype recvtype, int P,
                      unsigned long long *sent, unsigned long long *recvd)
{
    const unsigned long long n = (unsigned long long)P;
    *sent = n * a2a_block_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype);
    *recvd = n * count_bytes(recvcount, recvtype);
}

/* One alltoall call counted on `path`. */
static void account_a2a(comm_state *s, enum coll stat, enum path path, const char *label,
                        double t0, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, MPI_Count recvcount, MPI_Datatype recvtype, int P)
{
    if (!preload_stats_enabled || !s)
        return;
    unsigned long long sent, recvd;
    a2a_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, P, &sent, &recvd);
    preload_account(s, stat, path, label, preload_clock_now() - t0, sent, recvd);
}

/* A call the library took (why: enter's), once it succeeded: the reason reported, the call
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
    preload_call c;
    int rc = enter(comm, true, sendbuf, recvbuf, recvcount, recvtype, &c);
    if (rc < 0)
        return library_alltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                recvtype, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c.why != PRELOAD_TUNA) {
        rc = library_alltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              comm);
        if (rc != MPI_SUCCESS)
            return rc;   /* the library has invoked the error handler */
        return library_done(c.s, COLL_ALLTOALL, c.why, comm, c.t0, sendbuf, sendcount, sendtype,
                            recvcount, recvtype, c.P);
    }
    rc = tuna_alltoall_host(large, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm, &c.ch->opt);
    if (rc != MPI_SUCCESS)
        return preload_tuna_failed(c.s, COLL_ALLTOALL, comm, rc, c.t0);
    if (preload_stats_enabled) {
        char buf[LABEL_MAX];
        account_a2a(c.s, COLL_ALLTOALL, PATH_TUNA,
                    preload_ran_label(c.ch->label, COLL_ALLTOALL, c.ch->opt.algorithm, buf,
                                      sizeof buf),
                    c.t0, sendbuf, sendcount, sendtype, recvcount, recvtype, c.P);
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
    preload_call c;
    int rc = enter(comm, request != NULL, sendbuf, recvbuf, recvcount, recvtype, &c);
    if (rc < 0)
        return library_ialltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                 recvtype, comm, request);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c.why == PRELOAD_TUNA) {
        /* Every alltoall row has a step form: tuna takes the call (from the first call on a
         * communicator: its set-up runs as the operation's first steps). */
        tuna_request op = TUNA_REQUEST_NULL;
        rc = tuna_ialltoall_host(large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                 recvtype, comm, &c.ch->opt, &op);
        if (rc != MPI_SUCCESS)
            return preload_tuna_failed_as(c.s, COLL_ALLTOALL, STAT_IALLTOALL, comm, rc, c.t0);
        unsigned long long sent, recvd;
        a2a_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, c.P, &sent, &recvd);
        return preload_proxy_for_op(c.s, COLL_ALLTOALL, op, comm, c.t0, sent, recvd, request);
    }
    rc = library_ialltoall(large, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                           comm, request);
    if (rc != MPI_SUCCESS)
        return rc; /* the library has invoked the error handler */
    return library_done(c.s, STAT_IALLTOALL, c.why, comm, c.t0, sendbuf, sendcount, sendtype,
                        recvcount, recvtype, c.P);
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
    preload_call c;
    int rc = enter(comm, request != NULL, sendbuf, recvbuf, recvcount, recvtype, &c);
    if (rc < 0)
        return library_alltoall_init(library, large, sendbuf, sendcount, sendtype, recvbuf,
                                     recvcount, recvtype, comm, info, request);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c.why == PRELOAD_TUNA) {
        /* The plan duplicates derived datatypes itself (freeing them after init is valid). */
        tuna_plan plan = NULL;
        rc = large ? tuna_alltoall_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm, &c.ch->opt, preload_plan_flags, &plan)
                   : tuna_alltoall_init(sendbuf, (int)sendcount, sendtype, recvbuf,
                                        (int)recvcount, recvtype, comm, &c.ch->opt,
                                        preload_plan_flags, &plan);
        if (rc != MPI_SUCCESS)
            return preload_init_failed(c.s, COLL_ALLTOALL, comm, rc, c.t0);
        unsigned long long sent, recvd;
        a2a_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, c.P, &sent, &recvd);
        return preload_plan_request(c.s, COLL_ALLTOALL, COLL_ALLTOALL, plan, comm, c.t0, sent,
                                    recvd, request);
    }
    /* The library's own persistent alltoall; its request goes back untouched. */
    rc = library_alltoall_init(library, large, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, info, request);
    if (rc != MPI_SUCCESS)
        return rc;   /* the library has invoked the error handler */
    preload_library_init_done(c.s, COLL_ALLTOALL, c.why, comm, c.t0);
    return MPI_SUCCESS;
}

/* The persistent entry under each name the library has (`library`: its own init under that
 * name; MPI_Alltoall_init_c: MPI 4's large-count form, MPICH 4, on tuna_alltoall_init_c). */
#define ALLTOALL_INIT_ENTRY(name, library, large, count_t)                                         \
    int name(const void *sendbuf, count_t sendcount, MPI_Datatype sendtype, void *recvbuf,        \
             count_t recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,              \
             MPI_Request *request)                                                                \
    {                                                                                             \
        return persistent_alltoall_init(library, large, sendbuf, sendcount, sendtype, recvbuf,    \
                                        recvcount, recvtype, comm, info, request);                \
    }
#ifdef TUNA_HAVE_MPI_ALLTOALL_INIT
ALLTOALL_INIT_ENTRY(MPI_Alltoall_init, PMPI_Alltoall_init, false, int)
#endif
#ifdef TUNA_HAVE_MPI_ALLTOALL_INIT_C
ALLTOALL_INIT_ENTRY(MPI_Alltoall_init_c, PMPI_Alltoall_init, true, MPI_Count)
#endif
#ifdef TUNA_HAVE_MPIX_ALLTOALL_INIT
ALLTOALL_INIT_ENTRY(MPIX_Alltoall_init, PMPIX_Alltoall_init, false, int)
#endif
#endif /* a persistent alltoall */
