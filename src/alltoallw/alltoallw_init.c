/*
 * tuna_alltoallw_init: the persistent MPI_Alltoallw_init on the alltoallv plans. The arrays
 * and types are copied at init (derived types duplicated: the caller may free its own), the
 * way of each rank decided once (tuna_w_layout), and an alltoallv plan made of it
 * (tuna_alltoallv_init_c: the planner, wisdom, local starts): on the caller's buffers where
 * each side has one type, else on the packed buffers, with the send blocks packed before every
 * start (the send buffer's contents at that start) and the received ones unpacked after every
 * exchange (the plan's before / after hooks, src/plan/plan.h). Init is collective: one
 * allreduce agrees on the errors and on whether the library serves the plan (vendor, device
 * memory on some rank); then each start runs the library's MPI_Alltoallw (vendor's starts
 * complete inside, as an alltoallv plan forced to vendor).
 */
#include "alltoallw.h"
#include "../plan/plan.h"
#include "memkind.h"

#include <stdlib.h>
#include <string.h>

/* The plan's own copies of the caller's arguments, and the call laid out on them. */
typedef struct w_plan {
    tuna_w_call c;
    MPI_Comm comm;
    int P;                      /* peers: the remote group on an intercommunicator */
    int *ints;                  /* send counts, displs, receive counts, displs (P each) */
    MPI_Datatype *types;        /* send then receive types (P each); derived ones are dups */
    unsigned char *dup;         /* 2P: types[j] is a duplicate the plan frees */
} w_plan;

static void w_release(struct tuna_plan_s *p)
{
    w_plan *w = p->extra;
    if (!w)
        return;
    for (int j = 0; w->types && j < 2 * w->P; j++)
        if (w->dup[j])
            PMPI_Type_free(&w->types[j]);
    tuna_w_free(&w->c);
    free(w->ints);
    free(w->types);
    free(w->dup);
    free(w);
    p->extra = NULL;
}

static int w_before(struct tuna_plan_s *p)
{
    w_plan *w = p->extra;
    return tuna_w_pack(&w->c, w->comm);
}

static int w_after(struct tuna_plan_s *p)
{
    w_plan *w = p->extra;
    return tuna_w_finish(&w->c, w->comm);
}

/* vendor (and device memory): the library's MPI_Alltoallw on the plan's copies. */
static int w_vendor_start(struct tuna_plan_s *p)
{
    w_plan *w = p->extra;
    const tuna_w_side *s = &w->c.snd, *r = &w->c.rcv;
    int rc = PMPI_Alltoallw(w->c.inplace ? MPI_IN_PLACE : s->buf, s->counts, s->displs,
                            s->types, (void *)r->buf, r->counts, r->displs, r->types, w->comm);
    return rc == MPI_SUCCESS ? rc : tuna_library_result(rc, "PMPI_Alltoallw");
}

/* Copy one side's arguments into the plan (k: 0 send, 1 receive), duplicating each distinct
 * derived type once (blocks that shared a type still do: the one-type way sees them). */
static int keep_side(w_plan *w, int k, tuna_w_side *s)
{
    const int P = w->P;
    int *counts = w->ints + (size_t)2 * k * P, *displs = counts + P;
    MPI_Datatype *types = w->types + (size_t)k * P;
    unsigned char *dup = w->dup + (size_t)k * P;
    if (P > 0) {
        memcpy(counts, s->counts, sizeof *counts * (size_t)P);
        memcpy(displs, s->displs, sizeof *displs * (size_t)P);
    }
    for (int j = 0; j < P; j++) {
        int i = 0;
        while (i < j && s->types[i] != s->types[j])
            i++;
        if (i < j) { /* seen: the same handle (a duplicate is not freed twice) */
            types[j] = types[i];
            continue;
        }
        int ni, na, nd, combiner;
        TUNA_MPI_CHECK(PMPI_Type_get_envelope(s->types[j], &ni, &na, &nd, &combiner));
        types[j] = s->types[j];
        if (combiner != MPI_COMBINER_NAMED) {
            TUNA_MPI_CHECK(PMPI_Type_dup(s->types[j], &types[j]));
            dup[j] = 1;
        }
    }
    *s = (tuna_w_side){s->buf, counts, displs, types};
    return MPI_SUCCESS;
}

/* The plan's copies of both sides (in place: the receive side only). */
static int w_keep(w_plan *w)
{
    const int P = w->P;
    w->ints = tuna_malloc(sizeof *w->ints * (size_t)(4 * P + 1));
    w->types = tuna_malloc(sizeof *w->types * (size_t)(2 * P + 1));
    w->dup = tuna_calloc((size_t)(2 * P + 1), 1);
    if (!w->ints || !w->types || !w->dup)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallw_init: no memory for %d peers", P);
    int rc = keep_side(w, 1, &w->c.rcv);
    if (rc == MPI_SUCCESS && !w->c.inplace)
        rc = keep_side(w, 0, &w->c.snd);
    if (w->c.inplace)
        w->c.snd = w->c.rcv;
    return rc;
}

/* The plan of the library's MPI_Alltoallw (vendor's starts, device memory). */
static int vendor_plan(w_plan *w, const tuna_options *opt, unsigned kinds,
                       struct tuna_plan_s **out)
{
    struct tuna_plan_s *p = tuna_calloc(1, sizeof *p);
    if (!p)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallw_init: no memory");
    p->coll = TUNA_ALLTOALLV;
    p->comm = w->comm;
    p->vendor = true;
    p->start = w_vendor_start;
    p->info.collective = TUNA_ALLTOALLV;
    p->info.algorithm = tuna_algorithm_find(TUNA_ALLTOALLV, "vendor");
    p->info.source = opt->algorithm == p->info.algorithm ? TUNA_PLAN_SOURCE_FORCED
                                                         : TUNA_PLAN_SOURCE_ESTIMATE;
    if (opt->algorithm != p->info.algorithm) { /* device memory here or on another rank */
        p->fallback = kinds != TUNA_MEMORY_HOST
                          ? tuna_memory_reason(kinds)
                          : "another rank's buffers are device memory: the library's "
                            "MPI_Alltoallw (docs/gpu.md)";
        p->fallback_algorithm = p->info.algorithm;
    }
    *out = p;
    return MPI_SUCCESS;
}

/* The alltoallv plan of the call's layout (the caller's buffers, or the packed ones). */
static int alltoallv_plan(w_plan *w, const tuna_options *opt, unsigned flags, tuna_plan *out)
{
    tuna_w_call *c = &w->c;
    int rc = tuna_w_layout(c);
    if (rc == MPI_SUCCESS) /* the measure reads the packed send buffer: the init's contents */
        rc = tuna_w_pack(c, w->comm);
    /* Agreed inside the alltoallv init: a rank that failed here joins it with an invalid
     * plan pointer, so every rank returns an error. */
    const int P = c->P;
    const void *sb = c->packed ? c->spack : c->inplace ? MPI_IN_PLACE : c->snd.buf;
    const bool noside = !c->packed && c->inplace;
    void *rb = c->packed ? c->rpack : (void *)c->rcv.buf;
    MPI_Datatype st = c->packed ? MPI_BYTE : c->st, rt = c->packed ? MPI_BYTE : c->rt;
    int inner = tuna_alltoallv_init_c(sb, noside ? NULL : c->n, noside ? NULL : c->d, st, rb,
                                      c->n ? c->n + P : NULL, c->d ? c->d + P : NULL, rt,
                                      w->comm, opt, flags, rc == MPI_SUCCESS ? out : NULL);
    return rc != MPI_SUCCESS ? rc : inner;
}

int tuna_alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        const tuna_options *opt, unsigned flags, tuna_plan *plan)
{
    static const char fn[] = "tuna_alltoallw_init";
    const double t0 = PMPI_Wtime();
    /* Local errors take part in the agreement below: one rank's mistake fails every rank. */
    int local = tuna_plan_begin(fn, TUNA_ALLTOALLV, comm, flags, plan, &opt);
    if (comm == MPI_COMM_NULL)
        return local;
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return tuna_error_set(MPI_ERR_COMM, "%s: not a valid communicator", fn);
    w_plan *w = tuna_calloc(1, sizeof *w);
    if (!w && local == MPI_SUCCESS)
        local = tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory", fn);
    tuna_options def;
    bool library = false;
    tuna_w_call c = {0};
    if (local == MPI_SUCCESS)
        local = tuna_w_begin(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                             rdispls, recvtypes, comm, &opt, &def, &library, &c);
    if (local == MPI_SUCCESS) {
        w->c = c;
        w->comm = comm;
        w->P = c.P;
        if (library) { /* tuna_w_begin checked nothing: the plan's copies need valid arrays */
            local = inter ? PMPI_Comm_remote_size(comm, &w->P) : PMPI_Comm_size(comm, &w->P);
            w->c.inplace = sendbuf == MPI_IN_PLACE;
            w->c.rcv = (tuna_w_side){recvbuf, recvcounts, rdispls, recvtypes};
            w->c.snd = (tuna_w_side){sendbuf, sendcounts, sdispls, sendtypes};
            if (local == MPI_SUCCESS)
                local = tuna_w_check_side("recv", &w->c.rcv, w->P);
            if (local == MPI_SUCCESS && !w->c.inplace)
                local = tuna_w_check_side("send", &w->c.snd, w->P);
        }
        if (local == MPI_SUCCESS)
            local = w_keep(w);
    }
    /* Agreed (an intercommunicator's init is vendor's or an error on every rank alike): every
     * rank fails if one does, and the library serves the plan if it serves one rank's. */
    int v[2] = {local != MPI_SUCCESS, library};
    if (!inter && PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS &&
        local == MPI_SUCCESS)
        local = tuna_error_set(MPI_ERR_OTHER, "%s: the agreement failed", fn);
    if (local == MPI_SUCCESS && v[0])
        local = tuna_error_set(MPI_ERR_ARG, "%s: invalid arguments on another rank; no plan "
                               "made", fn);
    struct tuna_plan_s *p = NULL;
    int rc = local;
    if (rc == MPI_SUCCESS && v[1]) {
        rc = vendor_plan(w, opt, tuna_memory_kinds(sendbuf, recvbuf), &p);
    } else if (rc == MPI_SUCCESS) {
        rc = alltoallv_plan(w, opt, flags, &p);
        if (rc == MPI_SUCCESS && w->c.packed) {
            p->before = w_before;
            p->after = w_after;
        }
    }
    if (rc == MPI_SUCCESS) { /* (the alltoallv init finished its plan: only the time is ours) */
        p->extra = w;
        p->release = w_release;
        p->info.plan_seconds = PMPI_Wtime() - t0;
        *plan = p;
        return MPI_SUCCESS;
    }
    struct tuna_plan_s tmp = {.extra = w};
    w_release(&tmp);
    return rc;
}
