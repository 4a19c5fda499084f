/*
 * The drop-in's alltoallv (docs/preload.md): MPI_Alltoallv and its large-count form
 * MPI_Alltoallv_c, the nonblocking MPI_Ialltoallv and MPI_Ialltoallv_c (tuna's operation behind
 * a proxy request, requests.c), and the persistent MPI_Alltoallv_init and MPI_Alltoallv_init_c
 * (Open MPI: MPIX_Alltoallv_init; a tuna plan behind a persistent proxy). All take the
 * communicator's choice (info key tuna_alltoallv, TUNA_ALLTOALLV); the library's own call takes
 * intercommunicators, and arguments that are valid MPI that tuna does not take, all ranks
 * together. Statistics: "alltoallv" (and its plans), "ialltoallv".
 */
#include "preload_internal.h"
#include "memkind.h"
#include "tuna_internal.h"

#include <limits.h>
#include <stdbool.h>

/* Bytes of one side of an alltoallv, int or large counts (0 for invalid arguments:
 * statistics only). */
static unsigned long long block_bytes(const tuna_counts *k, MPI_Datatype type, int P)
{
    MPI_Count size = 0;
    if ((!k->n && !k->nl) || type == MPI_DATATYPE_NULL ||
        PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    unsigned long long n = 0;
    for (int j = 0; j < P; j++) {
        const MPI_Count c = tuna_counts_n(k, j);
        if (c > 0)
            n += (unsigned long long)c * (unsigned long long)size;
    }
    return n;
}

/* This rank's bytes sent and received by an alltoallv (MPI_IN_PLACE: the receive side). */
static void a2av_bytes(const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                       const tuna_counts *rcv, MPI_Datatype recvtype, int P,
                       unsigned long long *sent, unsigned long long *recvd)
{
    const bool inplace = sendbuf == MPI_IN_PLACE;
    *sent = block_bytes(inplace ? rcv : sc, inplace ? recvtype : sendtype, P);
    *recvd = block_bytes(rcv, recvtype, P);
}

/* One alltoallv call counted on `path` (nothing without TUNA_STATS). */
static void account_a2av(comm_state *s, enum path path, const char *label, double t0,
                         const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                         const tuna_counts *rcv, MPI_Datatype recvtype, int P)
{
    if (!preload_stats_enabled || !s)
        return;
    unsigned long long sent, recvd;
    a2av_bytes(sendbuf, sc, sendtype, rcv, recvtype, P, &sent, &recvd);
    preload_account(s, COLL_ALLTOALLV, path, label, preload_clock_now() - t0, sent, recvd);
}

/* True if a buffer is NULL (MPI_BOTTOM) while this rank has data to move through it. */
static int bottom_with_data(const void *buf, const tuna_counts *k, MPI_Datatype type, int P)
{
    MPI_Count size = 0;
    if (buf != NULL || (!k->n && !k->nl) || type == MPI_DATATYPE_NULL ||
        PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size == 0)
        return 0;
    for (int j = 0; j < P; j++)
        if (tuna_counts_n(k, j) > 0)
            return 1;
    return 0;
}

/* Why this rank's valid-MPI arguments are beyond tuna, or -1 (int or large counts). */
static int local_unsupported(const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                             const void *recvbuf, const tuna_counts *rcv, MPI_Datatype recvtype,
                             int P)
{
    int inplace = sendbuf == MPI_IN_PLACE;
    if ((!inplace && bottom_with_data(sendbuf, sc, sendtype, P)) ||
        bottom_with_data(recvbuf, rcv, recvtype, P))
        return WHY_BOTTOM;
    MPI_Count size = 0;
    if (inplace && (rcv->n || rcv->nl) && recvtype != MPI_DATATYPE_NULL &&
        !tuna_type_is_contiguous(recvtype) && PMPI_Type_size_x(recvtype, &size) == MPI_SUCCESS &&
        size > 0) {
        for (int j = 0; j < P; j++)
            if (tuna_counts_n(rcv, j) > INT_MAX / size)
                return WHY_INPLACE_BIG;
    }
    return -1;
}

/* tuna's argument errors are agreed on by all ranks before any data moves. */
static int is_agreed_argument_error(int rc)
{
    int cls = MPI_ERR_OTHER;
    PMPI_Error_class(rc, &cls);
    return cls == MPI_ERR_ARG || cls == MPI_ERR_BUFFER || cls == MPI_ERR_COUNT ||
           cls == MPI_ERR_TYPE || cls == MPI_ERR_TRUNCATE;
}

/* The arguments of MPI_Alltoallv, MPI_Ialltoallv or (large) MPI_Alltoallv_c,
 * MPI_Ialltoallv_c: int or MPI_Count counts, int or MPI_Aint displacements. One body per call
 * serves both widths. */
typedef struct ia2av_args {
    bool large;
    const void *sendbuf, *scounts, *sdispls;
    MPI_Datatype sendtype;
    void *recvbuf;
    const void *rcounts, *rdispls;
    MPI_Datatype recvtype;
} ia2av_args;

/* One side's counts as tuna_counts, of the width the call came with. */
static tuna_counts counts_of(bool large, const void *counts)
{
    return large ? (tuna_counts){.nl = counts} : (tuna_counts){.n = counts};
}

/* The library's own MPI_Alltoallv, or MPI_Alltoallv_c for a call that came as one (`large` is
 * never set where the library has no MPI_Alltoallv_c: the preload then defines none). */
static int library_alltoallv(const ia2av_args *a, MPI_Comm comm)
{
#ifdef TUNA_HAVE_MPI_ALLTOALLV_C
    if (a->large)
        return PMPI_Alltoallv_c(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                                a->rcounts, a->rdispls, a->recvtype, comm);
#endif
    return PMPI_Alltoallv(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                          a->rcounts, a->rdispls, a->recvtype, comm);
}

/* The library's own call, counted on `path` when it succeeds. */
static int library_call(comm_state *s, enum path path, const char *label, const ia2av_args *a,
                        MPI_Comm comm, int P, double t0)
{
    int rc = library_alltoallv(a, comm);
    if (rc == MPI_SUCCESS) {
        const tuna_counts sc = counts_of(a->large, a->scounts),
                          rcv = counts_of(a->large, a->rcounts);
        account_a2av(s, path, label, t0, a->sendbuf, &sc, a->sendtype, &rcv, a->recvtype, P);
    }
    return rc;   /* the library has already invoked the error handler */
}

/* A call the library took for a reason (why >= 0) or as the choice (PRELOAD_VENDOR), once it
 * succeeded: the reason reported, the call counted on stat's row (nothing without
 * TUNA_STATS). */
static int library_done(comm_state *s, enum coll stat, int why, const ia2av_args *a,
                        MPI_Comm comm, int P, double t0)
{
    if (why >= 0)
        preload_log_fallback(comm, s, COLL_ALLTOALLV, (enum reason)why);
    if (preload_stats_enabled) {
        const tuna_counts sc = counts_of(a->large, a->scounts),
                          rcv = counts_of(a->large, a->rcounts);
        unsigned long long sent, recvd;
        a2av_bytes(a->sendbuf, &sc, a->sendtype, &rcv, a->recvtype, P, &sent, &recvd);
        preload_account(s, stat, preload_library_path(why),
                        preload_library_label(s, COLL_ALLTOALLV, why), preload_clock_now() - t0,
                        sent, recvd);
    }
    return MPI_SUCCESS;
}

/* tuna_alltoallv_c runs tuna's algorithms with any counts (each rank describes its own large
 * blocks as derived types, no agreement needed), so the choice is the communicator's for
 * both widths, with no extra collective. The route checked the buffers: the _host entry. */
static int tuna_alltoallv_of(const ia2av_args *a, MPI_Comm comm, const tuna_options *opt)
{
    return tuna_alltoallv_host(a->large, a->sendbuf, a->scounts, a->sdispls, a->sendtype,
                               a->recvbuf, a->rcounts, a->rdispls, a->recvtype, comm, opt);
}

/* MPI_Alltoallv (large: MPI_Alltoallv_c), counted on the "alltoallv" rows either way. */
static int preload_alltoallv(const ia2av_args *a, MPI_Comm comm)
{
    preload_call c;
    int rc = preload_enter(comm, COLL_ALLTOALLV, true, a->sendbuf, a->recvbuf, &c);
    if (rc < 0)
        return library_alltoallv(a, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    comm_state *s = c.s;
    if (c.why != PRELOAD_TUNA) {
        if (c.why >= 0) /* reported before the call, as the argument fallback below */
            preload_log_fallback(comm, s, COLL_ALLTOALLV, (enum reason)c.why);
        return library_call(s, preload_library_path(c.why),
                            preload_library_label(s, COLL_ALLTOALLV, c.why), a, comm, c.P, c.t0);
    }

    rc = tuna_alltoallv_of(a, comm, &c.ch->opt);
    if (rc == MPI_SUCCESS) {
        if (!preload_stats_enabled)
            return MPI_SUCCESS;
        const tuna_counts sc = counts_of(a->large, a->scounts),
                          rcv = counts_of(a->large, a->rcounts);
        char buf[LABEL_MAX];
        account_a2av(s, PATH_TUNA,
                     preload_ran_label(c.ch->label, COLL_ALLTOALLV, c.ch->opt.algorithm, buf,
                                       sizeof buf),
                     c.t0, a->sendbuf, &sc, a->sendtype, &rcv, a->recvtype, c.P);
        return MPI_SUCCESS;
    }
    /* By default argument errors are this rank's alone (as in MPI libraries): reported here.
     * Under TUNA_ARGCHECK=collective every rank got an argument error and no data moved: if
     * some rank's arguments are valid MPI that tuna does not take (MPI_IN_PLACE with a
     * non-contiguous type and a block over 2 GiB), all ranks hand the call to the vendor
     * together; otherwise it is an error. MPI_Alltoallv_c reports every error here, as it
     * always has (local_unsupported reads int counts). */
    bool collective = false;
    if (a->large || !is_agreed_argument_error(rc) ||
        tuna_argcheck_collective(&collective) != MPI_SUCCESS || !collective)
        return preload_tuna_failed(s, COLL_ALLTOALLV, comm, rc, c.t0);
    const tuna_counts sc = counts_of(false, a->scounts), rcv = counts_of(false, a->rcounts);
    int any =
        local_unsupported(a->sendbuf, &sc, a->sendtype, a->recvbuf, &rcv, a->recvtype, c.P);
    if (PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS || any < 0)
        return preload_tuna_failed(s, COLL_ALLTOALLV, comm, rc, c.t0);
    preload_log_fallback(comm, s, COLL_ALLTOALLV, (enum reason)any);
    return library_call(s, PATH_FALLBACK, preload_reason_name[any], a, comm, c.P, c.t0);
}

int tuna_preload_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    const ia2av_args a = {false,   sendbuf,    sendcounts, sdispls, sendtype,
                          recvbuf, recvcounts, rdispls,    recvtype};
    return preload_alltoallv(&a, comm);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return tuna_preload_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                  rdispls, recvtype, comm);
}

#ifdef TUNA_HAVE_MPI_ALLTOALLV_C
/* Large counts: the same choice, statistics and fallbacks. */
int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    const ia2av_args a = {true,    sendbuf,    sendcounts, sdispls, sendtype,
                          recvbuf, recvcounts, rdispls,    recvtype};
    return preload_alltoallv(&a, comm);
}
#endif

static int library_ialltoallv(const ia2av_args *a, MPI_Comm comm, MPI_Request *request)
{
#ifdef TUNA_HAVE_MPI_IALLTOALLV_C
    if (a->large)
        return PMPI_Ialltoallv_c(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                                 a->rcounts, a->rdispls, a->recvtype, comm, request);
#endif
    return PMPI_Ialltoallv(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                           a->rcounts, a->rdispls, a->recvtype, comm, request);
}

static int tuna_ialltoallv_of(const ia2av_args *a, MPI_Comm comm, const tuna_options *opt,
                              tuna_request *op)
{
    return tuna_ialltoallv_host(a->large, a->sendbuf, a->scounts, a->sdispls, a->sendtype,
                                a->recvbuf, a->rcounts, a->rdispls, a->recvtype, comm, opt, op);
}

/* MPI_Ialltoallv, MPI_Ialltoallv_c: as MPI_Alltoallv, nonblocking (tuna_ialltoallv behind
 * a proxy), counted on the "ialltoallv" rows either way. */
static int preload_ialltoallv(const ia2av_args *a, MPI_Comm comm, MPI_Request *request)
{
    preload_call c;
    int rc = preload_enter(comm, COLL_ALLTOALLV, request != NULL, a->sendbuf, a->recvbuf, &c);
    if (rc < 0)
        return library_ialltoallv(a, comm, request);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_request op = TUNA_REQUEST_NULL;
    if (c.why == PRELOAD_TUNA) {
        rc = tuna_ialltoallv_of(a, comm, &c.ch->opt, &op);
        if (rc == MPI_ERR_UNSUPPORTED_OPERATION) /* the row has no nonblocking form yet */
            c.why = WHY_NO_STEP_FORM;
        else if (rc != MPI_SUCCESS) /* counted on the nonblocking call's row */
            return preload_tuna_failed_as(c.s, COLL_ALLTOALLV, STAT_IALLTOALLV, comm, rc, c.t0);
    }
    if (c.why != PRELOAD_TUNA) { /* the library's own */
        rc = library_ialltoallv(a, comm, request);
        if (rc != MPI_SUCCESS)
            return rc; /* the library has invoked the error handler */
        return library_done(c.s, STAT_IALLTOALLV, c.why, a, comm, c.P, c.t0);
    }
    unsigned long long sent = 0, recvd = 0;
    if (preload_stats_enabled) {
        const tuna_counts sc = counts_of(a->large, a->scounts),
                          rcv = counts_of(a->large, a->rcounts);
        a2av_bytes(a->sendbuf, &sc, a->sendtype, &rcv, a->recvtype, c.P, &sent, &recvd);
    }
    return preload_proxy_for_op(c.s, COLL_ALLTOALLV, op, comm, c.t0, sent, recvd, request);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    const ia2av_args a = {false,   sendbuf,    sendcounts, sdispls, sendtype,
                          recvbuf, recvcounts, rdispls,    recvtype};
    return preload_ialltoallv(&a, comm, request);
}

#ifdef TUNA_HAVE_MPI_IALLTOALLV_C
int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    const ia2av_args a = {true,    sendbuf,    sendcounts, sdispls, sendtype,
                          recvbuf, recvcounts, rdispls,    recvtype};
    return preload_ialltoallv(&a, comm, request);
}
#endif

#if defined(TUNA_HAVE_MPI_ALLTOALLV_INIT) || defined(TUNA_HAVE_MPIX_ALLTOALLV_INIT)
typedef int (*alltoallv_init_fn)(const void *, const int[], const int[], MPI_Datatype, void *,
                                 const int[], const int[], MPI_Datatype, MPI_Comm, MPI_Info,
                                 MPI_Request *);

/* The library's own persistent alltoallv: `library` (MPI_ or MPIX_Alltoallv_init), or
 * MPI_Alltoallv_init_c for a call that came as one (only defined where the library has it). */
static int library_init(alltoallv_init_fn library, const ia2av_args *a, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
#ifdef TUNA_HAVE_MPI_ALLTOALLV_INIT_C
    if (a->large)
        return PMPI_Alltoallv_init_c(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                                     a->rcounts, a->rdispls, a->recvtype, comm, info, request);
#endif
    return library(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf, a->rcounts,
                   a->rdispls, a->recvtype, comm, info, request);
}

static int tuna_init_of(const ia2av_args *a, MPI_Comm comm, const tuna_options *opt,
                        tuna_plan *plan)
{
    if (a->large)
        return tuna_alltoallv_init_c(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                                     a->rcounts, a->rdispls, a->recvtype, comm, opt,
                                     preload_plan_flags, plan);
    return tuna_alltoallv_init(a->sendbuf, a->scounts, a->sdispls, a->sendtype, a->recvbuf,
                               a->rcounts, a->rdispls, a->recvtype, comm, opt,
                               preload_plan_flags, plan);
}

/* MPI_Alltoallv_init and its large-count form: a tuna plan behind a persistent proxy, counted
 * on the "alltoallv" rows either way. */
static int persistent_init(alltoallv_init_fn library, const ia2av_args *a, MPI_Comm comm,
                           MPI_Info info, MPI_Request *request)
{
    preload_call c;
    int rc = preload_enter(comm, COLL_ALLTOALLV, request != NULL, a->sendbuf, a->recvbuf, &c);
    if (rc < 0)
        return library_init(library, a, comm, info, request);
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_counts sc = counts_of(a->large, a->scounts),
                      rcv = counts_of(a->large, a->rcounts);
    if (c.why == PRELOAD_TUNA) {
        /* The plan duplicates derived datatypes itself: the application may free its own
         * right after the init, as MPI allows. */
        tuna_plan plan = NULL;
        rc = tuna_init_of(a, comm, &c.ch->opt, &plan);
        if (rc == MPI_SUCCESS) {
            unsigned long long sent, recvd;
            a2av_bytes(a->sendbuf, &sc, a->sendtype, &rcv, a->recvtype, c.P, &sent, &recvd);
            return preload_plan_request(c.s, COLL_ALLTOALLV, COLL_ALLTOALLV, plan, comm, c.t0,
                                        sent, recvd, request);
        }
        /* Init errors are agreed (every rank is here): if some rank's arguments are valid MPI
         * that tuna does not take, all ranks hand the init to the library. */
        int any = local_unsupported(a->sendbuf, &sc, a->sendtype, a->recvbuf, &rcv,
                                    a->recvtype, c.P);
        if (PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS ||
            any < 0)
            return preload_init_failed(c.s, COLL_ALLTOALLV, comm, rc, c.t0);
        c.why = any;
    }
    /* The library's own persistent alltoallv; its request goes back untouched. */
    rc = library_init(library, a, comm, info, request);
    if (rc != MPI_SUCCESS)
        return rc;   /* the library has invoked the error handler */
    preload_library_init_done(c.s, COLL_ALLTOALLV, c.why, comm, c.t0);
    return MPI_SUCCESS;
}

/* The persistent entry under each name the library has (`library`: its own init under that
 * name; MPI_Alltoallv_init_c: MPI 4's large-count form, MPICH 4, on tuna_alltoallv_init_c). */
#define ALLTOALLV_INIT_ENTRY(name, library, large, count_t, displ_t)                               \
    int name(const void *sendbuf, const count_t sendcounts[], const displ_t sdispls[],            \
             MPI_Datatype sendtype, void *recvbuf, const count_t recvcounts[],                    \
             const displ_t rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,        \
             MPI_Request *request)                                                                \
    {                                                                                             \
        const ia2av_args a = {large,   sendbuf,    sendcounts, sdispls, sendtype,                 \
                              recvbuf, recvcounts, rdispls,    recvtype};                         \
        return persistent_init(library, &a, comm, info, request);                                 \
    }
#ifdef TUNA_HAVE_MPI_ALLTOALLV_INIT
ALLTOALLV_INIT_ENTRY(MPI_Alltoallv_init, PMPI_Alltoallv_init, false, int, int)
#endif
#ifdef TUNA_HAVE_MPI_ALLTOALLV_INIT_C
ALLTOALLV_INIT_ENTRY(MPI_Alltoallv_init_c, PMPI_Alltoallv_init, true, MPI_Count, MPI_Aint)
#endif
#ifdef TUNA_HAVE_MPIX_ALLTOALLV_INIT
ALLTOALLV_INIT_ENTRY(MPIX_Alltoallv_init, PMPIX_Alltoallv_init, false, int, int)
#endif
#endif /* a persistent alltoallv */
