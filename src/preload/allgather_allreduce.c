/*
 * The drop-in's allgather and allreduce (docs/preload.md): MPI_Allgather and MPI_Allreduce,
 * their nonblocking forms MPI_Iallgather and MPI_Iallreduce (tuna's operation behind a proxy
 * request, requests.c), and their persistent forms MPI_Allgather_init and MPI_Allreduce_init
 * (Open MPI: MPIX_; a tuna plan behind a persistent proxy, whose MPI_Start is local). All take
 * the same choice (info keys tuna_allgather / tuna_allreduce, TUNA_ALLGATHER /
 * TUNA_ALLREDUCE). tuna takes every intracommunicator call (MPI_IN_PLACE, derived types,
 * user-defined and non-commutative operations); the library keeps vendor, intercommunicators
 * and a NULL buffer with data (MPI_BOTTOM with absolute addresses), which tuna's allgather and
 * allreduce do not address. Statistics: "allgather" / "allreduce" (and their plans),
 * "iallgather" / "iallreduce".
 */
#include "preload_internal.h"

/* One call's arguments: scount/stype are allgather's send side (unused for allreduce);
 * rcount/rtype its receive side, allreduce's count and datatype. */
typedef struct coll_call {
    enum coll coll;
    const void *sendbuf;
    int scount;
    MPI_Datatype stype;
    void *recvbuf;
    int rcount;
    MPI_Datatype rtype;
    MPI_Op op;
    MPI_Comm comm;
} coll_call;

/* count elements of type in bytes (0 for invalid arguments: statistics only). */
static unsigned long long vector_bytes(int count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return 0;
    return (unsigned long long)count * (unsigned long long)size;
}

/* Whether buf is NULL standing for MPI_BOTTOM with data. Only a type that may hold absolute
 * addresses (true lower bound not 0) makes NULL mean MPI_BOTTOM; a NULL buffer of any other
 * type with data is an error, which tuna reports (MPI_ERR_BUFFER) on the rank that passes
 * it, as MPICH does. */
static int bottom_vector(const void *buf, int count, MPI_Datatype type)
{
    MPI_Aint true_lb = 0, true_extent = 0;
    return buf == NULL && vector_bytes(count, type) > 0 &&
           PMPI_Type_get_true_extent(type, &true_lb, &true_extent) == MPI_SUCCESS && true_lb != 0;
}

/* Where the call goes (why: preload_route's, and one reason more: MPI_BOTTOM with data). */
static int route(int why, const coll_call *c)
{
    const bool ag = c->coll == COLL_ALLGATHER;
    if (why == PRELOAD_TUNA &&
        ((c->sendbuf != MPI_IN_PLACE &&
          bottom_vector(c->sendbuf, ag ? c->scount : c->rcount, ag ? c->stype : c->rtype)) ||
         bottom_vector(c->recvbuf, c->rcount, c->rtype)))
        return WHY_BOTTOM;
    return why;
}

/* This rank's bytes sent and received by one call. */
static void call_bytes(const coll_call *c, int P, unsigned long long *sent,
                       unsigned long long *recvd)
{
    const bool ag = c->coll == COLL_ALLGATHER;
    const unsigned long long in = vector_bytes(c->rcount, c->rtype);
    *sent = ag && c->sendbuf != MPI_IN_PLACE ? vector_bytes(c->scount, c->stype) : in;
    *recvd = ag ? in * (unsigned long long)P : in;
}

/* One call counted on `stat`'s row (nothing without TUNA_STATS). */
static void count_call(comm_state *s, enum coll stat, enum path path, const char *label,
                       double t0, const coll_call *c, int P)
{
    if (!preload_stats_enabled || !s)
        return;
    unsigned long long sent, recvd;
    call_bytes(c, P, &sent, &recvd);
    preload_account(s, stat, path, label, preload_clock_now() - t0, sent, recvd);
}

/* The library's own call. */
static int library_call(const coll_call *c)
{
    return c->coll == COLL_ALLGATHER ? PMPI_Allgather(c->sendbuf, c->scount, c->stype,
                                                      c->recvbuf, c->rcount, c->rtype, c->comm)
                                     : PMPI_Allreduce(c->sendbuf, c->recvbuf, c->rcount,
                                                      c->rtype, c->op, c->comm);
}

static int library_icall(const coll_call *c, MPI_Request *request)
{
    return c->coll == COLL_ALLGATHER
               ? PMPI_Iallgather(c->sendbuf, c->scount, c->stype, c->recvbuf, c->rcount,
                                 c->rtype, c->comm, request)
               : PMPI_Iallreduce(c->sendbuf, c->recvbuf, c->rcount, c->rtype, c->op, c->comm,
                                 request);
}

/* The library's call where tuna leaves it (vendor, or a reason in call->why, reported here);
 * false: tuna's. The caller counts it once it succeeded (library_done). */
static bool to_library(preload_call *call, const coll_call *c)
{
    call->why = route(call->why, c);
    if (call->why >= 0)
        preload_log_fallback(c->comm, call->s, c->coll, (enum reason)call->why);
    return call->why != PRELOAD_TUNA;
}

/* A call the library took (to_library), once it succeeded: counted on stat's row. */
static int library_done(const preload_call *call, enum coll stat, const coll_call *c)
{
    count_call(call->s, stat, preload_library_path(call->why),
               preload_library_label(call->s, c->coll, call->why), call->t0, c, call->P);
    return MPI_SUCCESS;
}

static int preload_coll(const coll_call *c)
{
    preload_call call;
    int rc = preload_enter(c->comm, c->coll, true, c->sendbuf, c->recvbuf, &call);
    if (rc < 0)
        return library_call(c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (to_library(&call, c)) {
        if ((rc = library_call(c)) != MPI_SUCCESS)
            return rc; /* the library has invoked the error handler */
        return library_done(&call, c->coll, c);
    }
    const choice *ch = call.ch;
    rc = c->coll == COLL_ALLGATHER /* the route checked the buffers: the _host entries */
             ? tuna_allgather_host(c->sendbuf, c->scount, c->stype, c->recvbuf, c->rcount,
                                   c->rtype, c->comm, &ch->opt)
             : tuna_allreduce_host(c->sendbuf, c->recvbuf, c->rcount, c->rtype, c->op, c->comm,
                                   &ch->opt);
    if (rc != MPI_SUCCESS)
        return preload_tuna_failed_as(call.s, c->coll, c->coll, c->comm, rc, call.t0);
    if (preload_stats_enabled) {
        char buf[LABEL_MAX];
        count_call(call.s, c->coll, PATH_TUNA,
                   preload_ran_label(ch->label, c->coll, ch->opt.algorithm, buf, sizeof buf),
                   call.t0, c, call.P);
    }
    return MPI_SUCCESS;
}

/* The nonblocking form: tuna's operation behind a proxy (its start is local), counted on the
 * "iallgather" / "iallreduce" rows. */
static int preload_icoll(const coll_call *c, MPI_Request *request)
{
    const enum coll stat = c->coll == COLL_ALLGATHER ? STAT_IALLGATHER : STAT_IALLREDUCE;
    preload_call call;
    int rc = preload_enter(c->comm, c->coll, request != NULL, c->sendbuf, c->recvbuf, &call);
    if (rc < 0)
        return library_icall(c, request);
    if (rc != MPI_SUCCESS)
        return rc;
    if (to_library(&call, c)) {
        if ((rc = library_icall(c, request)) != MPI_SUCCESS)
            return rc; /* the library has invoked the error handler */
        return library_done(&call, stat, c);
    }
    /* Every row has a step form: tuna takes the call (vendor inside auto runs the library's
     * call inside tuna's request; a first call's set-up runs as its first steps). */
    const choice *ch = call.ch;
    tuna_request op = TUNA_REQUEST_NULL;
    rc = c->coll == COLL_ALLGATHER
             ? tuna_iallgather_host(c->sendbuf, c->scount, c->stype, c->recvbuf, c->rcount,
                                    c->rtype, c->comm, &ch->opt, &op)
             : tuna_iallreduce_host(c->sendbuf, c->recvbuf, c->rcount, c->rtype, c->op, c->comm,
                                    &ch->opt, &op);
    if (rc != MPI_SUCCESS) /* counted on the nonblocking call's row */
        return preload_tuna_failed_as(call.s, c->coll, stat, c->comm, rc, call.t0);
    unsigned long long sent = 0, recvd = 0;
    if (preload_stats_enabled)
        call_bytes(c, call.P, &sent, &recvd);
    return preload_proxy_for_op(call.s, c->coll, op, c->comm, call.t0, sent, recvd, request);
}

int tuna_preload_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const coll_call c = {COLL_ALLGATHER, sendbuf,  sendcount,   sendtype, recvbuf,
                         recvcount,      recvtype, MPI_OP_NULL, comm};
    return preload_coll(&c);
}

int tuna_preload_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm)
{
    const coll_call c = {COLL_ALLREDUCE, sendbuf, 0, MPI_DATATYPE_NULL, recvbuf, count,
                         datatype,       op,      comm};
    return preload_coll(&c);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return tuna_preload_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    return tuna_preload_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    const coll_call c = {COLL_ALLGATHER, sendbuf,  sendcount,   sendtype, recvbuf,
                         recvcount,      recvtype, MPI_OP_NULL, comm};
    return preload_icoll(&c, request);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    const coll_call c = {COLL_ALLREDUCE, sendbuf, 0, MPI_DATATYPE_NULL, recvbuf, count,
                         datatype,       op,      comm};
    return preload_icoll(&c, request);
}

/* ------------------------------------------------------------------ persistent */

#if defined(TUNA_HAVE_MPI_ALLGATHER_INIT) || defined(TUNA_HAVE_MPIX_ALLGATHER_INIT) ||          \
    defined(TUNA_HAVE_MPI_ALLREDUCE_INIT) || defined(TUNA_HAVE_MPIX_ALLREDUCE_INIT)
/* The library's own persistent init (MPI 4's, or Open MPI's MPIX_ form; the preload defines
 * only the entry points whose library form exists). */
typedef int (*allgather_init_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                                 MPI_Comm, MPI_Info, MPI_Request *);
typedef int (*allreduce_init_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm,
                                 MPI_Info, MPI_Request *);
typedef struct library_init {
    allgather_init_fn allgather;
    allreduce_init_fn allreduce;
} library_init;

static int library_init_call(const library_init *lib, const coll_call *c, MPI_Info info,
                             MPI_Request *request)
{
    return c->coll == COLL_ALLGATHER
               ? lib->allgather(c->sendbuf, c->scount, c->stype, c->recvbuf, c->rcount,
                                c->rtype, c->comm, info, request)
               : lib->allreduce(c->sendbuf, c->recvbuf, c->rcount, c->rtype, c->op, c->comm,
                                info, request);
}

/* The same decision as the blocking call's; tuna's path is a plan (its argument errors
 * agreed over the communicator) behind a persistent proxy, whose starts are local. */
static int persistent_init(const library_init *lib, const coll_call *c, MPI_Info info,
                           MPI_Request *request)
{
    preload_call call;
    int rc = preload_enter(c->comm, c->coll, request != NULL, c->sendbuf, c->recvbuf, &call);
    if (rc < 0)
        return library_init_call(lib, c, info, request);
    if (rc != MPI_SUCCESS)
        return rc;
    if (to_library(&call, c)) {
        /* The library's own persistent collective; its request goes back untouched. */
        if ((rc = library_init_call(lib, c, info, request)) != MPI_SUCCESS)
            return rc; /* the library has invoked the error handler */
        preload_library_init_done(call.s, c->coll, call.why, c->comm, call.t0);
        return MPI_SUCCESS;
    }
    const choice *ch = call.ch;
    tuna_plan plan = NULL;
    rc = c->coll == COLL_ALLGATHER
             ? tuna_allgather_init(c->sendbuf, c->scount, c->stype, c->recvbuf, c->rcount,
                                   c->rtype, c->comm, &ch->opt, preload_plan_flags, &plan)
             : tuna_allreduce_init(c->sendbuf, c->recvbuf, c->rcount, c->rtype, c->op, c->comm,
                                   &ch->opt, preload_plan_flags, &plan);
    if (rc != MPI_SUCCESS)
        return preload_init_failed(call.s, c->coll, c->comm, rc, call.t0);
    unsigned long long sent, recvd;
    call_bytes(c, call.P, &sent, &recvd);
    return preload_plan_request(call.s, c->coll, c->coll, plan, c->comm, call.t0, sent, recvd,
                                request);
}
#endif

/* The persistent entries under each name the library has (`library`: its own init under that
 * name). */
#define ALLGATHER_INIT_ENTRY(name, library)                                                        \
    int name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,            \
             int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,                  \
             MPI_Request *request)                                                                \
    {                                                                                             \
        const library_init lib = {.allgather = library};                                          \
        const coll_call c = {COLL_ALLGATHER, sendbuf,  sendcount,   sendtype, recvbuf,            \
                             recvcount,      recvtype, MPI_OP_NULL, comm};                        \
        return persistent_init(&lib, &c, info, request);                                          \
    }
#define ALLREDUCE_INIT_ENTRY(name, library)                                                        \
    int name(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,     \
             MPI_Comm comm, MPI_Info info, MPI_Request *request)                                  \
    {                                                                                             \
        const library_init lib = {.allreduce = library};                                          \
        const coll_call c = {COLL_ALLREDUCE, sendbuf, 0, MPI_DATATYPE_NULL, recvbuf, count,       \
                             datatype,       op,      comm};                                      \
        return persistent_init(&lib, &c, info, request);                                          \
    }
#ifdef TUNA_HAVE_MPI_ALLGATHER_INIT
ALLGATHER_INIT_ENTRY(MPI_Allgather_init, PMPI_Allgather_init)
#endif
#ifdef TUNA_HAVE_MPIX_ALLGATHER_INIT
ALLGATHER_INIT_ENTRY(MPIX_Allgather_init, PMPIX_Allgather_init)
#endif
#ifdef TUNA_HAVE_MPI_ALLREDUCE_INIT
ALLREDUCE_INIT_ENTRY(MPI_Allreduce_init, PMPI_Allreduce_init)
#endif
#ifdef TUNA_HAVE_MPIX_ALLREDUCE_INIT
ALLREDUCE_INIT_ENTRY(MPIX_Allreduce_init, PMPIX_Allreduce_init)
#endif
