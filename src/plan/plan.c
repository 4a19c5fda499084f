/*
 * Plans: start / wait / free, and the planner shared by the three init functions. A plan
 * did its collective work at init (agreement, choice, allocation); a start only moves data.
 * The planner's measure times the cost model's best candidates with the plan's own start
 * path, each repetition the maximum over ranks (so every rank sees the same times and
 * adopts the same winner), within TUNA_PLAN_BUDGET seconds. docs/plans.md.
 */
#include "plan.h"

#include "memkind.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tuna_plan_begin(const char *fn, tuna_collective coll, MPI_Comm comm, unsigned flags,
                    tuna_plan *plan, const tuna_options **opt)
{
    if (!plan)
        return tuna_error_set(MPI_ERR_ARG, "%s: the plan pointer is NULL", fn);
    *plan = NULL;
    if (flags & ~TUNA_PLAN_MEASURE)
        return tuna_error_set(MPI_ERR_ARG,
                              "%s: flags = %#x; expected TUNA_PLAN_ESTIMATE or TUNA_PLAN_MEASURE",
                              fn, flags);
    return tuna_call_begin(coll, comm, opt);
}

int tuna_plan_finish(struct tuna_plan_s *p, int rc, double t0, tuna_plan *plan)
{
    rc = tuna_memory_plan_done(p, rc); /* device buffers: the reason (plan_memory.c) */
    if (rc != MPI_SUCCESS) {
        if (p)
            tuna_plan_free(&p);
        return rc;
    }
    p->info.plan_seconds = PMPI_Wtime() - t0;
    *plan = p;
    return MPI_SUCCESS;
}

tuna_options tuna_plan_options_of(tuna_collective coll, const tuna_choice *c)
{
    const tuna_algorithm_info *info = tuna_algorithm_get(coll, c->algorithm);
    tuna_options o = {.collective = coll, .algorithm = c->algorithm};
    for (int i = 0; i < info->nparams; i++) {
        o.set |= 1u << i;
        o.value[i] = c->param[i];
    }
    return o;
}

int tuna_plan_keep_type(struct tuna_plan_s *p, MPI_Datatype *type)
{
    if (*type == MPI_DATATYPE_NULL)
        return MPI_SUCCESS; /* the argument checks report it */
    int ni, na, nd, combiner;
    TUNA_MPI_CHECK(PMPI_Type_get_envelope(*type, &ni, &na, &nd, &combiner));
    if (combiner == MPI_COMBINER_NAMED)
        return MPI_SUCCESS;
    MPI_Datatype dup;
    TUNA_MPI_CHECK(PMPI_Type_dup(*type, &dup));
    p->owned[p->nowned++] = dup;
    *type = dup;
    return MPI_SUCCESS;
}

int tuna_start(tuna_plan p)
{
    if (!p)
        return tuna_error_set(MPI_ERR_REQUEST, "tuna_start: the plan is NULL");
    if (p->active)
        return tuna_error_set(MPI_ERR_REQUEST,
                              "tuna_start: the plan is active (tuna_wait it before starting it "
                              "again)");
    /* A plan whose choice is the library's own call pays nothing on top of it: its start
     * resets the error state only when the call fails (plan_alltoallv.c). */
    if (!p->vendor)
        tuna_error_clear();
    double t_start = 0;
    if (tuna_stats_on) {
        t_start = PMPI_Wtime();
        memset(&tuna_stats_current, 0, sizeof tuna_stats_current);
        memcpy(tuna_stats_current.params, p->info.params, sizeof tuna_stats_current.params);
        tuna_stats_current.predicted = p->info.predicted;
    }
    /* Always: the preload's statistics read what ran (and any fallback) from here. */
    tuna_stats_current.algorithm = p->fallback ? p->fallback_algorithm : p->info.algorithm;
    tuna_stats_current.fallback = p->fallback;
    /* A local start where the choice has a step form (the exchange then completes in
     * tuna_wait / tuna_test); else the exchange completes here and the plan is active until
     * tuna_wait. An error leaves it inactive (nothing to wait for). */
    p->inflight = NULL;
    int rc = p->before ? p->before(p) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = p->begin ? p->begin(p) : 1;
    if (rc == 1) {
        rc = p->start(p);
        /* a blocking call's start (allgather, allreduce) recorded the row it was given */
        tuna_stats_current.algorithm = p->fallback ? p->fallback_algorithm : p->info.algorithm;
        tuna_stats_current.fallback = p->fallback;
    }
    if (rc == MPI_SUCCESS && !p->inflight && p->after) /* completed inside the start */
        rc = p->after(p);
    p->active = rc == MPI_SUCCESS;
    if (tuna_stats_on && !p->inflight)
        tuna_stats_publish(t_start);
    return rc;
}

/* The outcome of the plan's exchange in flight (its statistics record published). */
static int plan_complete(tuna_plan p)
{
    int rc = p->inflight->rc;
    /* A row's state lives as long as one exchange (tuna.c, hierarchical_tuna.c). */
    if (p->inflight == &p->a2av_op.op && p->a2av_op.state_free)
        p->a2av_op.state_free(&p->a2av_op);
    if (p->inflight->publish_stats && tuna_stats_on) {
        p->inflight->stats.total = PMPI_Wtime() - p->inflight->t_start;
        tuna_stats_publish_record(&p->inflight->stats);
    }
    p->inflight = NULL;
    p->active = false;
    return rc == MPI_SUCCESS && p->after ? p->after(p) : rc;
}

int tuna_test(tuna_plan p, int *flag)
{
    if (!p || !flag)
        return tuna_error_set(MPI_ERR_ARG, "tuna_test: NULL argument");
    if (!p->active || !p->inflight) {
        *flag = 1;
        p->active = false;
        return MPI_SUCCESS;
    }
    bool done;
    tuna_op_advance(p->inflight, &done);
    if (!done)
        tuna_op_progress_all();
    *flag = done;
    return done ? plan_complete(p) : MPI_SUCCESS;
}

int tuna_wait(tuna_plan p)
{
    if (!p)
        return tuna_error_set(MPI_ERR_REQUEST, "tuna_wait: the plan is NULL");
    if (!p->active)
        return tuna_error_set(MPI_ERR_REQUEST, "tuna_wait: the plan is not active (no "
                                               "tuna_start since the last tuna_wait)");
    if (!p->inflight) {
        p->active = false;
        return MPI_SUCCESS;
    }
    for (;;) {
        bool done;
        tuna_op_advance(p->inflight, &done);
        if (done)
            return plan_complete(p);
        tuna_op_progress_all();
    }
}

int tuna_plan_free(tuna_plan *pp)
{
    if (!pp || !*pp)
        return tuna_error_set(MPI_ERR_REQUEST, "tuna_plan_free: the plan is NULL");
    tuna_plan p = *pp;
    if (p->active)
        return tuna_error_set(MPI_ERR_REQUEST,
                              "tuna_plan_free: the plan is active (tuna_wait it first)");
    if (p->release)
        p->release(p);
    tuna_scratch_free(&p->scr);
    tuna_staged_free(p->staged);
    TUNA_FREE_ALL(p->arrays, p->disp, p->inplace_copy, p->inplace_counts, p->private_recv);
    for (int i = 0; i < p->nowned; i++)
        PMPI_Type_free(&p->owned[i]);
    free(p);
    *pp = NULL;
    return MPI_SUCCESS;
}

int tuna_plan_get_info(tuna_plan p, tuna_plan_info *info)
{
    if (!p || !info)
        return tuna_error_set(MPI_ERR_ARG, "tuna_plan_get_info: NULL argument");
    *info = p->info;
    return MPI_SUCCESS;
}

void tuna_plan_set_info_choice(struct tuna_plan_s *p, const tuna_choice *c, int source)
{
    p->info.algorithm = c->algorithm;
    memcpy(p->info.params, c->param, sizeof p->info.params);
    p->info.predicted = c->predicted;
    p->info.source = source;
}

/* Widen [*lo, *hi) by n elements of a type (extent, true lb / extent) starting `first`
 * extents from the buffer (a negative extent lays them out downwards). */
static void widen(MPI_Aint extent, MPI_Aint tlb, MPI_Aint textent, MPI_Aint first,
                  long long n, bool *any, MPI_Aint *lo, MPI_Aint *hi)
{
    if (n <= 0)
        return;
    MPI_Aint a = first * extent + tlb, far = (MPI_Aint)(n - 1) * extent;
    MPI_Aint b = a + (far > 0 ? far : 0) + textent;
    a += far < 0 ? far : 0;
    if (!*any || a < *lo)
        *lo = a;
    if (!*any || b > *hi)
        *hi = b;
    *any = true;
}

int tuna_plan_span(MPI_Datatype type, const tuna_counts *blocks, int k, size_t *bytes,
                   MPI_Aint *lo_out)
{
    MPI_Aint lb, extent, tlb, textent;
    TUNA_MPI_CHECK(PMPI_Type_get_extent(type, &lb, &extent));
    TUNA_MPI_CHECK(PMPI_Type_get_true_extent(type, &tlb, &textent));
    bool any = false;
    MPI_Aint lo = 0, hi = 0;
    for (int j = 0; j < k; j++)
        widen(extent, tlb, textent, tuna_counts_d(blocks, j), tuna_counts_n(blocks, j), &any, &lo,
              &hi);
    *bytes = any ? (size_t)(hi - lo) : 0;
    *lo_out = lo;
    return MPI_SUCCESS;
}

int tuna_plan_span_run(MPI_Datatype type, long long n, size_t *bytes, MPI_Aint *lo_out)
{
    MPI_Aint lb, extent, tlb, textent;
    TUNA_MPI_CHECK(PMPI_Type_get_extent(type, &lb, &extent));
    TUNA_MPI_CHECK(PMPI_Type_get_true_extent(type, &tlb, &textent));
    bool any = false;
    MPI_Aint lo = 0, hi = 0;
    widen(extent, tlb, textent, 0, n, &any, &lo, &hi);
    *bytes = any ? (size_t)(hi - lo) : 0;
    *lo_out = lo;
    return MPI_SUCCESS;
}

void tuna_plan_fill_key(struct tuna_plan_s *p, const long long *sig, int nsig)
{
    tuna_wisdom_key_init(&p->key, p->coll, p->ctx, sig, nsig);
}

/* TUNA_PLAN_BUDGET: seconds the measure may spend timing (default 1). */
static int plan_budget(double *seconds)
{
    const char *s = getenv("TUNA_PLAN_BUDGET");
    *seconds = 1.0;
    if (!s || !*s)
        return MPI_SUCCESS;
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v >= 0) || !isfinite(v))
        return tuna_error_set(MPI_ERR_ARG,
                              "TUNA_PLAN_BUDGET='%s': expected a number of seconds >= 0", s);
    *seconds = v;
    return MPI_SUCCESS;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

#define MIN_REPS 5
#define MAX_REPS 201
#define STABLE_REPS 3 /* every candidate within 1% of itself: enough */

/* A sample is a burst of back-to-back starts (at least BURST_SECONDS of them, at most
 * MAX_BURST), timed as one and divided: applications repeat the exchange, and a rank that
 * finishes early begins the next one while the others finish, which single starts between
 * barriers never show (on a shared core the two orders can rank candidates differently).
 * Under SimGrid SMPI times repeat exactly and every start costs simulator wall time: one. */
#define BURST_SECONDS 200e-6
#ifdef SMPI_SHARED_MALLOC
#define MAX_BURST 1
#else
#define MAX_BURST 8
#endif

/* One timed sample of the current choice: k back-to-back starts, the maximum over ranks of
 * their time / k, and whether one failed on any rank (one allreduce carries both, so every
 * rank sees the same). */
static int timed_start(struct tuna_plan_s *p, int k, double *t, bool *failed)
{
    MPI_Comm comm = p->ctx->comm;
    TUNA_MPI_CHECK(PMPI_Barrier(comm));
    double t0 = PMPI_Wtime();
    int rc = MPI_SUCCESS;
    for (int j = 0; j < k && rc == MPI_SUCCESS; j++)
        rc = p->start(p);
    double v[2] = {(PMPI_Wtime() - t0) / k, rc != MPI_SUCCESS};
    tuna_error_clear(); /* a candidate's failure is not the plan's */
    TUNA_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, comm));
    *t = v[0];
    *failed = v[1] != 0;
    return MPI_SUCCESS;
}

/* Times the candidates in rounds (each round starts every live candidate once, so drift of
 * the machine hits all alike): a warm-up round, then rounds until the budget is spent (at
 * least MIN_REPS), every candidate repeats within 1% (a simulator, a quiet machine), or
 * MAX_REPS. med[i]: candidate i's median, negative if it failed on some rank. Every rank
 * sees the same times, so every rank stops after the same round. */
static int time_candidates(struct tuna_plan_s *p, const tuna_choice *cand, int n,
                           double budget, double *med)
{
    double *t = tuna_calloc((size_t)n * MAX_REPS, sizeof *t);
    bool *dead = tuna_calloc((size_t)n, sizeof *dead);
    if (!t || !dead) {
        free(t);
        free(dead);
        return tuna_error_set(MPI_ERR_NO_MEM, "plan measure: no memory");
    }
    int burst[TUNA_PLAN_MAX_CANDIDATES];
    double spent = 0;
    int rc = MPI_SUCCESS, reps = 0;
    for (int round = -1; round < MAX_REPS && rc == MPI_SUCCESS; round++) {
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
            if (dead[i])
                continue;
            p->choose(p, &cand[i]);
            double ti = 0;
            bool failed = true;
            rc = timed_start(p, round < 0 ? 1 : burst[i], &ti, &failed);
            spent += ti * (round < 0 ? 1 : burst[i]);
            dead[i] = failed;
            if (round >= 0)
                t[(size_t)i * MAX_REPS + round] = ti;
            else /* the warm-up's time (agreed) sizes the bursts */
                burst[i] = ti * MAX_BURST <= BURST_SECONDS ? MAX_BURST
                           : ti >= BURST_SECONDS      ? 1
                                                      : (int)ceil(BURST_SECONDS / ti);
        }
        if (round < 0)
            continue;
        reps = round + 1;
        if (spent >= budget && (reps >= MIN_REPS || spent >= 2 * budget))
            break;
        bool stable = reps >= STABLE_REPS;
        for (int i = 0; i < n && stable; i++) {
            const double *ti = t + (size_t)i * MAX_REPS;
            double lo = ti[0], hi = ti[0];
            for (int r = 1; r < reps; r++)
                lo = ti[r] < lo ? ti[r] : lo, hi = ti[r] > hi ? ti[r] : hi;
            stable = dead[i] || hi - lo <= 0.01 * lo;
        }
        if (stable)
            break;
    }
    for (int i = 0; i < n; i++) {
        double *ti = t + (size_t)i * MAX_REPS;
        qsort(ti, (size_t)reps, sizeof *ti, cmp_double);
        med[i] = dead[i] || reps == 0 ? -1
                 : reps % 2   ? ti[reps / 2]
                              : 0.5 * (ti[reps / 2 - 1] + ti[reps / 2]);
    }
    free(t);
    free(dead);
    return rc;
}

static void log_candidate(const struct tuna_plan_s *p, const tuna_choice *c, double measured)
{
    if (tuna_verbosity() < 1 || p->ctx->rank != 0)
        return;
    const tuna_options o = tuna_plan_options_of(p->coll, c);
    char opts[160] = "?";
    tuna_options_format(&o, opts, sizeof opts);
    if (measured < 0)
        tuna_log(1, "plan measure: %s failed, not a candidate", opts);
    else
        tuna_log(1, "plan measure: %s %.3g us (model %.3g us)", opts, measured * 1e6,
                 c->predicted * 1e6);
}

/* Whether a plan that runs c starts locally: a row with a step form, not the library's own
 * call (which completes in the start, docs/nonblocking.md). */
static bool local_start(const struct tuna_plan_s *p, const tuna_choice *c)
{
    switch (p->coll) {
    case TUNA_ALLTOALLV:
        return tuna_a2av_table[c->algorithm].step != NULL;
    case TUNA_ALLTOALL:
        return tuna_a2a_table[c->algorithm].step != NULL;
    case TUNA_ALLGATHER:
        return tuna_ag_table[c->algorithm].step != NULL;
    case TUNA_ALLREDUCE:
        return tuna_ar_table[c->algorithm].step != NULL;
    default:
        return false;
    }
}

/* The model's best choice whose starts are local, where the model's best is not. */
static bool best_local(const struct tuna_plan_s *p, const tuna_select_input *in, tuna_choice *c)
{
    if (p->coll == TUNA_ALLTOALLV)
        return tuna_a2av_select_steps(in, c);
    tuna_choice cand[32];
    int n = 0;
    if (tuna_select_candidates(tuna_registry_of(p->coll), in, cand, 32, &n) != MPI_SUCCESS)
        return false;
    for (int i = 0; i < n; i++) /* vendor first, then by predicted time */
        if (local_start(p, &cand[i])) {
            *c = cand[i];
            return true;
        }
    return false;
}

static int measure(struct tuna_plan_s *p, const tuna_select_input *in, double budget,
                   tuna_choice *best, double *best_time)
{
    tuna_choice cand[TUNA_PLAN_MAX_CANDIDATES];
    int n = 0;
    const tuna_registry *reg = tuna_registry_of(p->coll);
    /* vendor and the rows the model puts within 4x of its best */
    int rc = tuna_select_candidates_within(reg, in, 4.0, cand, TUNA_PLAN_MAX_CANDIDATES, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Only rows whose starts are local (docs/nonblocking.md); the model's best of them when
     * none is within the factor. */
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (local_start(p, &cand[i]))
            cand[kept++] = cand[i];
    n = kept;
    if (n == 0 && best_local(p, in, &cand[0]))
        n = 1;
    /* Time against a private receive buffer: the user's is not written during init. */
    p->private_recv = tuna_calloc(1, p->private_bytes ? p->private_bytes : 1);
    if (!p->private_recv)
        return tuna_error_set(MPI_ERR_NO_MEM, "plan measure: no memory for the receive buffer");
    p->redirect(p, (char *)((uintptr_t)p->private_recv - (uintptr_t)p->private_offset));
    double med[TUNA_PLAN_MAX_CANDIDATES];
    rc = time_candidates(p, cand, n, budget, med);
    best->algorithm = -1;
    int ntried = 0;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        const double t = med[i];
        log_candidate(p, &cand[i], t);
        if (ntried < TUNA_PLAN_MAX_TRIED) {
            p->info.tried[ntried].algorithm = cand[i].algorithm;
            memcpy(p->info.tried[ntried].params, cand[i].param, sizeof cand[i].param);
            p->info.tried[ntried].predicted = cand[i].predicted;
            p->info.tried[ntried].measured = t;
        }
        ntried++;
        if (t >= 0 && (best->algorithm < 0 || t < *best_time)) {
            *best = cand[i];
            *best_time = t;
        }
    }
    p->info.ntried = ntried;
    p->redirect(p, NULL);
    free(p->private_recv);
    p->private_recv = NULL;
    if (rc == MPI_SUCCESS && best->algorithm < 0)
        rc = tuna_error_set(MPI_ERR_OTHER, "plan measure: every candidate failed");
    return rc;
}

int tuna_plan_decide(struct tuna_plan_s *p, const tuna_select_input *in, unsigned flags)
{
    int rc = tuna_select_agree(p->ctx); /* profiles and tables the same everywhere */
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_choice c;
    if (!(flags & TUNA_PLAN_MEASURE)) {
        const tuna_registry *reg = tuna_registry_of(p->coll);
        rc = p->coll == TUNA_ALLTOALLV ? tuna_select_alltoallv(reg, in, &c)
                                       : tuna_select_collective(reg, in, &c);
        if (rc != MPI_SUCCESS)
            return rc;
        /* The model's best among the rows whose starts are local. */
        if (!local_start(p, &c))
            (void)best_local(p, in, &c);
        tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_ESTIMATE);
        p->choose(p, &c);
        return MPI_SUCCESS;
    }
    /* Agreed: the budget (the smallest; a bad TUNA_PLAN_BUDGET anywhere fails everywhere),
     * and wisdom, used only if every rank found the same entry. */
    double budget;
    int brc = plan_budget(&budget);
    double b[2] = {brc != MPI_SUCCESS, -budget};
    TUNA_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, b, 2, MPI_DOUBLE, MPI_MAX, p->ctx->comm));
    if (brc != MPI_SUCCESS)
        return brc;
    if (b[0] != 0)
        return tuna_error_set(MPI_ERR_ARG, "TUNA_PLAN_BUDGET is invalid on another rank");
    budget = -b[1];
    double found_time = 0;
    const bool found = tuna_wisdom_find(&p->key, &c, &found_time);
    long long h = 0; /* 0: not found; else a hash of the entry, never 0 */
    if (found) {
        unsigned long long u = 1469598103934665603ULL ^ (unsigned long long)c.algorithm;
        for (int i = 0; i < TUNA_MAX_PARAMS; i++)
            u = (u ^ (unsigned long long)c.param[i]) * 1099511628211ULL;
        h = (long long)(u >> 2) | 1;
    }
    long long hh[2] = {h, -h};
    TUNA_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, hh, 2, MPI_LONG_LONG, MPI_MAX, p->ctx->comm));
    if (found && hh[0] == h && -hh[1] == h && local_start(p, &c)) {
        tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_WISDOM);
        p->info.measured = found_time;
        p->choose(p, &c);
        return MPI_SUCCESS;
    }
    double t = 0;
    rc = measure(p, in, budget, &c, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_plan_set_info_choice(p, &c, TUNA_PLAN_SOURCE_MEASURE);
    p->info.measured = t;
    p->choose(p, &c);
    tuna_wisdom_add(&p->key, &c, t);
    return MPI_SUCCESS;
}
