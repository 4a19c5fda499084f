/*
 * The drop-in's neighborhood all-to-all (docs/preload.md): MPI_Neighbor_alltoallv on
 * tuna_neighbor_alltoallv, MPI_Ineighbor_alltoallv on tuna_ineighbor_alltoallv (behind a proxy
 * request, requests.c), the persistent MPI_Neighbor_alltoallv_init (Open MPI 4.1:
 * MPIX_Neighbor_alltoallv_init) on tuna_neighbor_alltoallv_init (a plan behind a persistent
 * proxy), and MPI_Neighbor_alltoall / MPI_Ineighbor_alltoall on the same rows with count and
 * displacement arrays built from the uniform count. All take the communicator's
 * neighbor_alltoallv choice (info key tuna_neighbor_alltoallv, TUNA_NEIGHBOR_ALLTOALLV); vendor,
 * intercommunicators (no neighborhood) and device buffers take the library's own call.
 * Statistics: "neighbor_alltoallv" (and its plans), "ineighbor_alltoallv", "neighbor_alltoall",
 * "ineighbor_alltoall". Not taken (the library's own, untouched): MPI_Neighbor_alltoall_init,
 * the alltoallw, allgather(v) and large-count neighborhood forms.
 */
#include "preload_internal.h"
#include "tuna_internal.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* A call's arguments: the alltoallv form's arrays, or MPI_Neighbor_alltoall's uniform counts
 * (the arrays are then built: uniform_make). */
typedef struct nbr_args {
    const void *sendbuf;
    const int *sc, *sd;
    MPI_Datatype st;
    void *recvbuf;
    const int *rc, *rd;
    MPI_Datatype rt;
    bool uniform;
    int scount, rcount;
} nbr_args;

/* The neighborhood's size on this rank: in-degree (receive blocks) and out-degree (send
 * blocks), in MPI_Neighbor_alltoall's terms; MPI_ERR_TOPOLOGY without a topology. */
static int topo_degrees(MPI_Comm comm, int *indeg, int *outdeg)
{
    int kind = MPI_UNDEFINED, rc = PMPI_Topo_test(comm, &kind);
    if (rc != MPI_SUCCESS)
        return rc;
    if (kind == MPI_DIST_GRAPH) {
        int weighted;
        return PMPI_Dist_graph_neighbors_count(comm, indeg, outdeg, &weighted);
    }
    if (kind == MPI_GRAPH) {
        int me;
        rc = PMPI_Comm_rank(comm, &me);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Graph_neighbors_count(comm, me, indeg);
        *outdeg = *indeg;
        return rc;
    }
    if (kind == MPI_CART) {
        int ndims;
        rc = PMPI_Cartdim_get(comm, &ndims);
        *indeg = *outdeg = 2 * ndims;
        return rc;
    }
    return MPI_ERR_TOPOLOGY;
}

/* This rank's bytes of one side (0 for invalid arguments: statistics only). */
static unsigned long long side_bytes(const int counts[], MPI_Datatype type, int n)
{
    MPI_Count size = 0;
    if (!counts || type == MPI_DATATYPE_NULL || PMPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        size <= 0)
        return 0;
    unsigned long long b = 0;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0)
            b += (unsigned long long)counts[i] * (unsigned long long)size;
    return b;
}

static unsigned long long uniform_bytes(int count, MPI_Datatype type, int n)
{
    MPI_Count size = 0;
    if (count <= 0 || n <= 0 || type == MPI_DATATYPE_NULL ||
        PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (unsigned long long)n * (unsigned long long)count * (unsigned long long)size;
}

/* This rank's bytes of a call (statistics on; 0 where the topology can't be read). */
static void call_bytes(const nbr_args *a, MPI_Comm comm, unsigned long long *sent,
                       unsigned long long *recvd)
{
    int in = 0, out = 0;
    *sent = *recvd = 0;
    if (topo_degrees(comm, &in, &out) != MPI_SUCCESS)
        return;
    *sent = a->uniform ? uniform_bytes(a->scount, a->st, out) : side_bytes(a->sc, a->st, out);
    *recvd = a->uniform ? uniform_bytes(a->rcount, a->rt, in) : side_bytes(a->rc, a->rt, in);
}

/* MPI_Neighbor_alltoall's arrays, and the types the rows see (the header frees them). */
typedef struct uniform_args {
    preload_owned own; /* first: a nonblocking call's proxy frees the block through it */
    int *sc, *sd, *rc, *rd;
    MPI_Datatype st, rt;
    int arrays[];
} uniform_args;

/* One side of n blocks of `count` elements of `type`, block i at i * count elements. Where
 * that displacement passes INT_MAX, each block is one element of a contiguous type of count
 * elements instead (the same type signature, its extent the block's): a choice of this rank's
 * own description, so no peer needs to know. */
static int uniform_side(int n, int count, MPI_Datatype type, int *counts, int *displs,
                        MPI_Datatype *made, MPI_Datatype *use)
{
    int per = count;
    *use = type;
    if (count > 0 && n > 1 && (long long)(n - 1) * count > INT_MAX) {
        int rc = PMPI_Type_contiguous(count, type, made);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Type_commit(made);
        if (rc != MPI_SUCCESS)
            return rc;
        *use = *made;
        per = 1;
    }
    for (int i = 0; i < n; i++) {
        counts[i] = per;
        displs[i] = count < 0 ? 0 : i * per; /* a negative count: tuna reports it */
    }
    return MPI_SUCCESS;
}

/* The arrays of an MPI_Neighbor_alltoall call, or NULL with an MPI error code in *rc (raised
 * by the caller: MPI_ERR_TOPOLOGY without a topology). */
static uniform_args *uniform_make(const nbr_args *a, MPI_Comm comm, int *rc, const char **why)
{
    int in = 0, out = 0;
    *why = "no memory for the count arrays";
    if ((*rc = topo_degrees(comm, &in, &out)) != MPI_SUCCESS) {
        *why = *rc == MPI_ERR_TOPOLOGY ? "the communicator has no graph, distributed graph or "
                                         "Cartesian topology"
                                       : "its topology could not be read";
        return NULL;
    }
    uniform_args *u = malloc(sizeof *u + sizeof(int) * (2 * (size_t)in + 2 * (size_t)out + 1));
    if (!u) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    u->own.type[0] = u->own.type[1] = MPI_DATATYPE_NULL;
    u->sc = u->arrays;
    u->sd = u->sc + out;
    u->rc = u->sd + out;
    u->rd = u->rc + in;
    *rc = uniform_side(out, a->scount, a->st, u->sc, u->sd, &u->own.type[0], &u->st);
    if (*rc == MPI_SUCCESS)
        *rc = uniform_side(in, a->rcount, a->rt, u->rc, u->rd, &u->own.type[1], &u->rt);
    if (*rc != MPI_SUCCESS) {
        *why = "a block type for displacements beyond INT_MAX could not be made";
        preload_owned_free(&u->own);
        return NULL;
    }
    return u;
}

/* Whether a Cartesian topology names some neighbor twice (a periodic dimension of size 1 or
 * 2): the same answer on every rank. */
static bool cart_twice(MPI_Comm comm)
{
    int kind = MPI_UNDEFINED, ndims = 0;
    if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS || kind != MPI_CART ||
        PMPI_Cartdim_get(comm, &ndims) != MPI_SUCCESS || ndims <= 0)
        return false;
    int *v = malloc(3 * (size_t)ndims * sizeof *v);
    bool twice = false;
    if (v && PMPI_Cart_get(comm, ndims, v, v + ndims, v + 2 * ndims) == MPI_SUCCESS)
        for (int d = 0; d < ndims; d++)
            twice = twice || (v[ndims + d] && v[d] <= 2);
    free(v);
    return twice;
}

/*
 * Where MPI_(I)neighbor_alltoall is the library's own call on tuna's path: auto (which runs
 * the library's call outside plans), and a Cartesian topology that names a neighbor twice
 * (tuna leaves it to the library; MPICH 4.0.2 matches the two messages by direction in its
 * alltoall but in order in its alltoallv, so the library's alltoall, not alltoallv with built
 * arrays). NULL: tuna's rows; else the label of the statistics row, in buf.
 */
static const char *uniform_library(const choice *ch, MPI_Comm comm, char *buf, size_t len)
{
    const tuna_registry *reg = tuna_registry_of(TUNA_NEIGHBOR_ALLTOALLV);
    const bool is_auto = tuna_registry_row(reg, ch->opt.algorithm)->kind == TUNA_ROW_AUTO;
    if (!is_auto && !cart_twice(comm))
        return NULL;
    /* What tuna's own call records when it takes the library's (preload_ran_label reads it). */
    tuna_stats_current.algorithm = tuna_registry_find_kind(reg, TUNA_ROW_VENDOR);
    tuna_stats_current.fallback = is_auto ? NULL : "a Cartesian neighbor named twice";
    return preload_ran_label(ch->label, COLL_NEIGHBOR_ALLTOALLV, ch->opt.algorithm, buf, len);
}

static const char *entry_name(const nbr_args *a, bool nonblocking)
{
    return a->uniform ? (nonblocking ? "MPI_Ineighbor_alltoall" : "MPI_Neighbor_alltoall")
                      : (nonblocking ? "MPI_Ineighbor_alltoallv" : "MPI_Neighbor_alltoallv");
}

static int library_call(const nbr_args *a, MPI_Comm comm)
{
    if (a->uniform)
        return PMPI_Neighbor_alltoall(a->sendbuf, a->scount, a->st, a->recvbuf, a->rcount, a->rt,
                                      comm);
    return PMPI_Neighbor_alltoallv(a->sendbuf, a->sc, a->sd, a->st, a->recvbuf, a->rc, a->rd,
                                   a->rt, comm);
}

static int library_icall(const nbr_args *a, MPI_Comm comm, MPI_Request *request)
{
    if (a->uniform)
        return PMPI_Ineighbor_alltoall(a->sendbuf, a->scount, a->st, a->recvbuf, a->rcount,
                                       a->rt, comm, request);
    return PMPI_Ineighbor_alltoallv(a->sendbuf, a->sc, a->sd, a->st, a->recvbuf, a->rc, a->rd,
                                    a->rt, comm, request);
}

/* After the library's call succeeded: counted on `stat`'s vendor or fallback row. */
static void library_done(comm_state *s, enum coll stat, int why, const nbr_args *a,
                         MPI_Comm comm, double t0)
{
    if (why >= 0)
        preload_log_fallback(comm, s, COLL_NEIGHBOR_ALLTOALLV, (enum reason)why);
    if (preload_stats_enabled) {
        unsigned long long sent, recvd;
        call_bytes(a, comm, &sent, &recvd);
        preload_account(s, stat, preload_library_path(why),
                        preload_library_label(s, COLL_NEIGHBOR_ALLTOALLV, why),
                        preload_clock_now() - t0, sent, recvd);
    }
}

/* After the library's MPI_(I)neighbor_alltoall succeeded on tuna's path (uniform_library):
 * counted there, under `label`. */
static void uniform_done(comm_state *s, enum coll stat, const char *label, const nbr_args *a,
                         MPI_Comm comm, double t0)
{
    if (preload_stats_enabled) {
        unsigned long long sent, recvd;
        call_bytes(a, comm, &sent, &recvd);
        preload_account(s, stat, PATH_TUNA, label, preload_clock_now() - t0, sent, recvd);
    }
}

/* The uniform form's arrays could not be made: this rank's error, raised and counted. */
static int uniform_failed(comm_state *s, enum coll stat, const nbr_args *a, bool nonblocking,
                          MPI_Comm comm, int rc, const char *why, double t0)
{
    char msg[300];
    snprintf(msg, sizeof msg, "tuna-preload: %s: %s", entry_name(a, nonblocking), why);
    preload_account(s, stat, PATH_ERROR, s->ch[COLL_NEIGHBOR_ALLTOALLV].label,
                    preload_clock_now() - t0, 0, 0);
    return preload_raise_error(comm, rc, msg);
}

/* The library's own call: MPI_(I)neighbor_alltoall(v) as the call came. */
static int library_any(const nbr_args *a, MPI_Comm comm, bool nonblocking, MPI_Request *request)
{
    return nonblocking ? library_icall(a, comm, request) : library_call(a, comm);
}

/*
 * What the blocking and nonblocking forms do before tuna's rows run: the prologue, the
 * library's own call where the route or uniform_library leave the call to it (its request
 * handed over as it is), then the uniform form's arrays (*u; NULL for the alltoallv form).
 * true: the call is done, *rc its return; false: tuna's rows take it, with c and *u.
 */
static bool neighbor_begin(const nbr_args *a, MPI_Comm comm, enum coll stat, bool nonblocking,
                           MPI_Request *request, preload_call *c, uniform_args **u, int *rc)
{
    *u = NULL;
    *rc = preload_enter(comm, COLL_NEIGHBOR_ALLTOALLV, !nonblocking || request != NULL,
                        a->sendbuf, a->recvbuf, c);
    if (*rc < 0) { /* the library's call reports what is wrong */
        *rc = library_any(a, comm, nonblocking, request);
        return true;
    }
    if (*rc != MPI_SUCCESS)
        return true;
    char buf[LABEL_MAX];
    const char *lib = c->why == PRELOAD_TUNA && a->uniform
                          ? uniform_library(c->ch, comm, buf, sizeof buf)
                          : NULL;
    if (c->why != PRELOAD_TUNA || lib) {
        *rc = library_any(a, comm, nonblocking, request);
        if (*rc != MPI_SUCCESS)
            return true; /* the library has invoked the error handler */
        if (lib)
            uniform_done(c->s, stat, lib, a, comm, c->t0);
        else
            library_done(c->s, stat, c->why, a, comm, c->t0);
        return true;
    }
    if (a->uniform) {
        const char *msg;
        if (!(*u = uniform_make(a, comm, rc, &msg))) {
            *rc = uniform_failed(c->s, stat, a, nonblocking, comm, *rc, msg, c->t0);
            return true;
        }
    }
    return false;
}

/* MPI_Neighbor_alltoallv and MPI_Neighbor_alltoall, counted on `stat`. */
static int preload_neighbor(const nbr_args *a, MPI_Comm comm, enum coll stat)
{
    preload_call c;
    uniform_args *u;
    int rc;
    if (neighbor_begin(a, comm, stat, false, NULL, &c, &u, &rc))
        return rc;
    rc = tuna_neighbor_alltoallv(a->sendbuf, u ? u->sc : a->sc, u ? u->sd : a->sd,
                                 u ? u->st : a->st, a->recvbuf, u ? u->rc : a->rc,
                                 u ? u->rd : a->rd, u ? u->rt : a->rt, comm, &c.ch->opt);
    preload_owned_free(u ? &u->own : NULL);
    if (rc != MPI_SUCCESS) /* this rank's argument error (as the library reports them) */
        return preload_tuna_failed_as(c.s, COLL_NEIGHBOR_ALLTOALLV, stat, comm, rc, c.t0);
    if (preload_stats_enabled) {
        char buf[LABEL_MAX];
        unsigned long long sent, recvd;
        call_bytes(a, comm, &sent, &recvd);
        preload_account(c.s, stat, PATH_TUNA,
                        preload_ran_label(c.ch->label, COLL_NEIGHBOR_ALLTOALLV,
                                          c.ch->opt.algorithm, buf, sizeof buf),
                        preload_clock_now() - c.t0, sent, recvd);
    }
    return MPI_SUCCESS;
}

/* MPI_Ineighbor_alltoallv and MPI_Ineighbor_alltoall: tuna's operation behind a proxy, which
 * keeps the uniform form's arrays until the operation finishes. */
static int preload_ineighbor(const nbr_args *a, MPI_Comm comm, enum coll stat,
                             MPI_Request *request)
{
    preload_call c;
    uniform_args *u;
    int rc;
    if (neighbor_begin(a, comm, stat, true, request, &c, &u, &rc))
        return rc;
    /* tuna_ineighbor_alltoallv records nothing of what runs (set below for the label): no
     * earlier call's record may show through. */
    tuna_stats_current.algorithm = -1;
    tuna_stats_current.fallback = NULL;
    tuna_request op = TUNA_REQUEST_NULL;
    rc = tuna_ineighbor_alltoallv(a->sendbuf, u ? u->sc : a->sc, u ? u->sd : a->sd,
                                  u ? u->st : a->st, a->recvbuf, u ? u->rc : a->rc,
                                  u ? u->rd : a->rd, u ? u->rt : a->rt, comm, &c.ch->opt, &op);
    if (rc != MPI_SUCCESS) { /* this rank's argument error, at the start */
        preload_owned_free(u ? &u->own : NULL);
        return preload_tuna_failed_as(c.s, COLL_NEIGHBOR_ALLTOALLV, stat, comm, rc, c.t0);
    }
    /* What runs, for the statistics: auto's row and a Cartesian neighbor named twice are the
     * library's call inside tuna's request. */
    const tuna_registry *reg = tuna_registry_of(TUNA_NEIGHBOR_ALLTOALLV);
    if (tuna_registry_row(reg, c.ch->opt.algorithm)->kind == TUNA_ROW_AUTO) {
        tuna_stats_current.algorithm = tuna_registry_find_kind(reg, TUNA_ROW_VENDOR);
    } else if (preload_stats_enabled && cart_twice(comm)) {
        tuna_stats_current.algorithm = tuna_registry_find_kind(reg, TUNA_ROW_VENDOR);
        tuna_stats_current.fallback = "a Cartesian neighbor named twice";
    }
    unsigned long long sent = 0, recvd = 0;
    if (preload_stats_enabled)
        call_bytes(a, comm, &sent, &recvd);
    return preload_proxy_for_op_owning(c.s, COLL_NEIGHBOR_ALLTOALLV, stat, op,
                                       u ? &u->own : NULL, comm, c.t0, sent, recvd, request);
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    const nbr_args a = {sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                        recvcounts, rdispls, recvtype, false, 0, 0};
    return preload_neighbor(&a, comm, COLL_NEIGHBOR_ALLTOALLV);
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    const nbr_args a = {sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                        recvcounts, rdispls, recvtype, false, 0, 0};
    return preload_ineighbor(&a, comm, STAT_INEIGHBOR_ALLTOALLV, request);
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    const nbr_args a = {sendbuf, NULL, NULL, sendtype, recvbuf,
                        NULL, NULL, recvtype, true, sendcount, recvcount};
    return preload_neighbor(&a, comm, STAT_NEIGHBOR_ALLTOALL);
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    const nbr_args a = {sendbuf, NULL, NULL, sendtype, recvbuf,
                        NULL, NULL, recvtype, true, sendcount, recvcount};
    return preload_ineighbor(&a, comm, STAT_INEIGHBOR_ALLTOALL, request);
}

#if defined(TUNA_HAVE_MPI_NEIGHBOR_ALLTOALLV_INIT) ||                                             \
    defined(TUNA_HAVE_MPIX_NEIGHBOR_ALLTOALLV_INIT)
typedef int (*nbr_init_fn)(const void *, const int[], const int[], MPI_Datatype, void *,
                           const int[], const int[], MPI_Datatype, MPI_Comm, MPI_Info,
                           MPI_Request *);

/* The persistent form: a tuna plan behind a persistent proxy, counted on the
 * "neighbor_alltoallv" rows (plan_init, plan); `library`: MPI_ or MPIX_Neighbor_alltoallv_init. */
static int persistent_init(nbr_init_fn library, const nbr_args *a, MPI_Comm comm, MPI_Info info,
                           MPI_Request *request)
{
    preload_call c;
    int rc = preload_enter(comm, COLL_NEIGHBOR_ALLTOALLV, request != NULL, a->sendbuf,
                           a->recvbuf, &c);
    if (rc < 0 || rc != MPI_SUCCESS)
        return rc < 0 ? library(a->sendbuf, a->sc, a->sd, a->st, a->recvbuf, a->rc, a->rd, a->rt,
                                comm, info, request)
                      : rc;
    if (c.why == PRELOAD_TUNA) {
        /* The init is collective and its outcome agreed: every rank gets the plan or the
         * error. */
        tuna_plan plan = NULL;
        rc = tuna_neighbor_alltoallv_init(a->sendbuf, a->sc, a->sd, a->st, a->recvbuf, a->rc,
                                          a->rd, a->rt, comm, &c.ch->opt, preload_plan_flags,
                                          &plan);
        if (rc != MPI_SUCCESS)
            return preload_init_failed(c.s, COLL_NEIGHBOR_ALLTOALLV, comm, rc, c.t0);
        unsigned long long sent = 0, recvd = 0;
        if (preload_stats_enabled)
            call_bytes(a, comm, &sent, &recvd);
        return preload_plan_request(c.s, COLL_NEIGHBOR_ALLTOALLV, COLL_NEIGHBOR_ALLTOALLV, plan,
                                    comm, c.t0, sent, recvd, request);
    }
    rc = library(a->sendbuf, a->sc, a->sd, a->st, a->recvbuf, a->rc, a->rd, a->rt, comm, info,
                 request);
    if (rc != MPI_SUCCESS)
        return rc; /* the library has invoked the error handler */
    preload_library_init_done(c.s, COLL_NEIGHBOR_ALLTOALLV, c.why, comm, c.t0);
    return MPI_SUCCESS;
}

/* The persistent entry under each name the library has (`library`: its own init under that
 * name). */
#define NEIGHBOR_INIT_ENTRY(name, library)                                                         \
    int name(const void *sendbuf, const int sendcounts[], const int sdispls[],                    \
             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],   \
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)           \
    {                                                                                             \
        const nbr_args a = {sendbuf,    sendcounts, sdispls,  sendtype, recvbuf,                  \
                            recvcounts, rdispls,    recvtype, false,    0,      0};               \
        return persistent_init(library, &a, comm, info, request);                                 \
    }
#ifdef TUNA_HAVE_MPI_NEIGHBOR_ALLTOALLV_INIT
NEIGHBOR_INIT_ENTRY(MPI_Neighbor_alltoallv_init, PMPI_Neighbor_alltoallv_init)
#endif
#ifdef TUNA_HAVE_MPIX_NEIGHBOR_ALLTOALLV_INIT
NEIGHBOR_INIT_ENTRY(MPIX_Neighbor_alltoallv_init, PMPIX_Neighbor_alltoallv_init)
#endif
#endif /* a persistent neighbor_alltoallv */
