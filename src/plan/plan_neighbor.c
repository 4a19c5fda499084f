/*
 * tuna_neighbor_alltoallv_init: the persistent neighborhood all-to-all as a plan. Init is
 * collective: the arguments checked and the outcome agreed, the row chosen (forced, or auto
 * over the pattern agreed by all ranks: src/neighbor/auto.c), and node-aware's aggregated
 * pattern worked out once (its metadata stages run here). A start is local: the row's data
 * stages posted with the plan's tags. vendor (and device buffers, and a Cartesian topology
 * where a rank is a neighbor twice) starts the library's blocking call. TUNA_PLAN_MEASURE with
 * auto times the library's call, node-aware and tuna on the arguments and keeps the fastest.
 */
#include "plan.h"
#include "../neighbor/neighbor.h"
#include "memkind.h"

#include <stdbool.h>
#include <stdlib.h>

typedef struct nbr_plan {
    tuna_nbr_op o;
    const tuna_nbr_algorithm *row;
    /* the caller's arguments, for the library's call (MPI: unchanged until the free) */
    const void *sbuf;
    void *rbuf;
    const int *sc, *sd, *rc, *rd;
    MPI_Datatype st, rt;
} nbr_plan;

static void nbr_plan_free(nbr_plan *s)
{
    tuna_nbr_op_clear(&s->o);
    free(s);
}

static void nbr_plan_release(struct tuna_plan_s *p)
{
    nbr_plan_free(p->extra);
    p->extra = NULL;
}

static void op_reset(nbr_plan *s)
{
    s->o.op = (tuna_op){.step = s->row->step, .tp = s->o.c->tp, .publish_stats = true};
    tuna_nbr_op_rewind(&s->o); /* stage 0 for a row without a pattern */
}

static int nbr_library_start(struct tuna_plan_s *p)
{
    nbr_plan *s = p->extra;
    return tuna_library_result(PMPI_Neighbor_alltoallv(s->sbuf, s->sc, s->sd, s->st, s->rbuf,
                                                       s->rc, s->rd, s->rt, p->comm),
                               "PMPI_Neighbor_alltoallv");
}

/* A blocking exchange of the plan's row (the start of a choice without a local start). */
static int nbr_start(struct tuna_plan_s *p)
{
    nbr_plan *s = p->extra;
    if (p->vendor)
        return nbr_library_start(p);
    op_reset(s);
    s->o.op.publish_stats = false;
    return tuna_op_run(&s->o.op);
}

static int nbr_begin(struct tuna_plan_s *p)
{
    nbr_plan *s = p->extra;
    if (p->vendor)
        return 1;
    op_reset(s);
    p->inflight = &s->o.op;
    tuna_op_start(p->inflight);
    return MPI_SUCCESS;
}

/* The plan runs `c`'s row from now on; a row with a pattern works it out (collective:
 * node-aware exchanges its lists inside each node, tuna records its rounds' sizes), the
 * outcome agreed. */
static int plan_set_row(struct tuna_plan_s *p, nbr_plan *s, const tuna_choice *c, int source)
{
    s->row = &tuna_nbr_table[c->algorithm];
    p->vendor = s->row->desc.kind == TUNA_ROW_VENDOR;
    s->o.info = &s->row->desc.info;
    for (int i = 0; i < TUNA_MAX_PARAMS; i++)
        s->o.param[i] = c->param[i];
    tuna_plan_set_info_choice(p, c, source);
    tuna_nbr_agg_free(s->o.agg);
    tuna_nbr_rounds_free(s->o.rounds);
    s->o.agg = NULL;
    s->o.rounds = NULL;
    s->o.data_stage = 0;
    if (!s->row->pattern)
        return MPI_SUCCESS;
    op_reset(s);
    s->o.stage = 0;
    s->o.pattern_only = true;
    int rc = tuna_op_run(&s->o.op);
    s->o.pattern_only = false;
    return tuna_coll_agree_args(p->ctx, tuna_collective_name(TUNA_NEIGHBOR_ALLTOALLV), rc, NULL,
                                NULL, 0);
}

#define MEASURE_BURST 8  /* exchanges back to back, timed as one (as applications repeat) */
#define MEASURE_SAMPLES 3

/* A row's time per exchange: bursts of MEASURE_BURST exchanges after a barrier, the slowest
 * rank's, the best of MEASURE_SAMPLES bursts (after one exchange to warm up). Single
 * exchanges would favour the library's one hop: a late rank finds its messages there. */
static int time_row(struct tuna_plan_s *p, double *seconds)
{
    int rc = nbr_start(p);
    *seconds = 0;
    for (int sample = 0; sample < MEASURE_SAMPLES && rc == MPI_SUCCESS; sample++) {
        TUNA_MPI_CHECK(PMPI_Barrier(p->ctx->comm));
        const double t = PMPI_Wtime();
        for (int r = 0; r < MEASURE_BURST && rc == MPI_SUCCESS; r++)
            rc = nbr_start(p);
        double dt = (PMPI_Wtime() - t) / MEASURE_BURST, slowest;
        TUNA_MPI_CHECK(PMPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, p->ctx->comm));
        if (sample == 0 || slowest < *seconds)
            *seconds = slowest;
    }
    return rc;
}

/* TUNA_PLAN_MEASURE: the library's call, node-aware and tuna at their defaults timed on these
 * arguments (a private receive buffer: the caller's is not written), the fastest kept (the
 * rows' slowest rank: every rank keeps the same). */
static int plan_measure(struct tuna_plan_s *p, nbr_plan *s)
{
    tuna_nbr_call *c = s->o.c;
    size_t bytes = 0;
    MPI_Aint lo = 0;
    /* the receive blocks' span (MPI_PROC_NULL's blocks included: only the size of the
     * private buffer grows) */
    const tuna_counts in = {.nl = c->in.count, .dl = c->in.displ};
    int rc = tuna_plan_span(c->rtype, &in, c->in.n, &bytes, &lo);
    char *priv = rc == MPI_SUCCESS ? malloc(bytes + 1) : NULL;
    int ok = priv != NULL, all = 0;
    TUNA_MPI_CHECK(PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, p->ctx->comm));
    if (!all) {
        free(priv);
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_neighbor_alltoallv_init: no memory for "
                                              "the measure's receive buffer (on some rank)");
    }
    void *user = s->rbuf;
    s->rbuf = priv - lo;
    c->rbuf = priv - lo;
    static const char *const rows[] = {"vendor", "node-aware", "tuna"};
    enum { NCAND = sizeof rows / sizeof *rows };
    tuna_choice cand[NCAND] = {{0}};
    double t[NCAND] = {0};
    int best = 0;
    for (int i = 0; i < NCAND && rc == MPI_SUCCESS; i++) {
        tuna_options def;
        rc = tuna_options_parse(rows[i], TUNA_NEIGHBOR_ALLTOALLV, &def);
        if (rc != MPI_SUCCESS)
            break;
        cand[i].algorithm = def.algorithm;
        tuna_params_resolve(&tuna_nbr_table[def.algorithm].desc.info, def.value, p->ctx->size,
                            cand[i].param);
        rc = plan_set_row(p, s, &cand[i], TUNA_PLAN_SOURCE_MEASURE);
        if (rc == MPI_SUCCESS)
            rc = time_row(p, &t[i]);
        cand[i].predicted = t[i];
        best = t[i] < t[best] ? i : best;
    }
    s->rbuf = user;
    c->rbuf = user;
    free(priv);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_log(1, "tuna_neighbor_alltoallv_init (measure): library %.3g us, node-aware %.3g us, "
                "tuna %.3g us",
             1e6 * t[0], 1e6 * t[1], 1e6 * t[2]);
    return plan_set_row(p, s, &cand[best], TUNA_PLAN_SOURCE_MEASURE);
}

int tuna_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                 const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                 const int recvcounts[], const int rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                                 unsigned flags, tuna_plan *plan)
{
    static const char fn[] = "tuna_neighbor_alltoallv_init";
    const double t0 = PMPI_Wtime();
    int local = tuna_plan_begin(fn, TUNA_NEIGHBOR_ALLTOALLV, comm, flags, plan, &opt);
    if (comm == MPI_COMM_NULL || !plan)
        return local;
    int inter = 0;
    TUNA_MPI_CHECK(PMPI_Comm_test_inter(comm, &inter));
    if (inter) /* MPI's topologies are on intracommunicators only */
        return local != MPI_SUCCESS
                   ? local
                   : tuna_error_set(MPI_ERR_TOPOLOGY, "%s: an intercommunicator has no "
                                                      "neighborhood topology", fn);
    struct tuna_plan_s *p = calloc(1, sizeof *p);
    nbr_plan *s = calloc(1, sizeof *s);
    if (local == MPI_SUCCESS && (!p || !s))
        local = tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory for the plan", fn);
    tuna_ctx *ctx;
    int rc = tuna_ctx_get(comm, local == MPI_SUCCESS ? tuna_algorithm_get(
                                                           TUNA_NEIGHBOR_ALLTOALLV,
                                                           opt->algorithm)->name
                                                     : "plan",
                          &ctx);
    bool library = false;
    if (rc == MPI_SUCCESS && local == MPI_SUCCESS)
        local = tuna_nbr_call_make(fn, sendbuf, &(tuna_counts){.n = sendcounts, .d = sdispls},
                                   sendtype, recvbuf,
                                   &(tuna_counts){.n = recvcounts, .d = rdispls}, recvtype,
                                   comm, &s->o.c, &library);
    if (rc == MPI_SUCCESS)
        rc = tuna_coll_agree_args(ctx, tuna_collective_name(TUNA_NEIGHBOR_ALLTOALLV), local,
                                  NULL, NULL, 0);
    if (rc != MPI_SUCCESS) {
        if (s)
            nbr_plan_free(s);
        free(p);
        return rc;
    }
    p->coll = TUNA_NEIGHBOR_ALLTOALLV;
    p->comm = comm;
    p->ctx = ctx;
    p->extra = s;
    p->release = nbr_plan_release;
    p->info.collective = TUNA_NEIGHBOR_ALLTOALLV;
    p->tag_shift = tuna_op_tag_shift(ctx, true);
    tuna_nbr_call *c = s->o.c;
    c->comm = ctx->comm;
    c->ctx = ctx;
    c->tag_shift = p->tag_shift;
    *s = (nbr_plan){.o = s->o, .sbuf = sendbuf, .rbuf = recvbuf, .sc = sendcounts,
                    .sd = sdispls, .rc = recvcounts, .rd = rdispls, .st = sendtype,
                    .rt = recvtype};
    /* MPI lets the caller free its types after init: the plan keeps duplicates. */
    rc = tuna_plan_keep_type(p, &s->st);
    if (rc == MPI_SUCCESS)
        rc = tuna_plan_keep_type(p, &s->rt);
    c->stype = s->st;
    c->rtype = s->rt;
    const int vendor = tuna_registry_find_kind(&tuna_nbr_registry, TUNA_ROW_VENDOR);
    const bool host = tuna_memory_kinds(sendbuf, recvbuf) == TUNA_MEMORY_HOST;
    tuna_choice choice = {.algorithm = opt->algorithm};
    int source = TUNA_PLAN_SOURCE_FORCED;
    if (rc == MPI_SUCCESS && tuna_nbr_table[opt->algorithm].desc.kind == TUNA_ROW_AUTO) {
        source = TUNA_PLAN_SOURCE_ESTIMATE;
        choice.algorithm = vendor;
        if (!library && host) /* collective: every rank is here (library is the topology's) */
            rc = tuna_nbr_auto_choose(c, &choice.algorithm, choice.param);
    } else {
        tuna_params_resolve(&tuna_nbr_table[opt->algorithm].desc.info, opt->value, ctx->size,
                            choice.param);
    }
    if (library || !host)
        choice.algorithm = vendor;
    p->begin = nbr_begin;
    p->start = nbr_start;
    if (rc == MPI_SUCCESS)
        rc = plan_set_row(p, s, &choice, source);
    if (rc == MPI_SUCCESS && (flags & TUNA_PLAN_MEASURE) && !library && host &&
        tuna_nbr_table[opt->algorithm].desc.kind == TUNA_ROW_AUTO && ctx->nnodes > 1)
        rc = plan_measure(p, s);
    return tuna_plan_finish(p, rc, t0, plan);
}
