/*
 * The choice of `auto`: TUNA_PROFILE / TUNA_TUNING loaded once per process,
 * candidates enumerated by each registry row's grid and ranked by its cost model,
 * results memoised per thread, and a once-per-communicator check that every rank
 * holds the same profile and table. The rows come from the caller's registry: no
 * algorithm is known here by name.
 */
#include "tuna_select.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ process-wide state */

static struct {
    int rc;                 /* load result, repeated on every call */
    char msg[512];          /* its message */
    tuna_profile profile;
    bool profile_builtin;   /* no TUNA_PROFILE: learning may raise its per-message overhead */
    tuna_tuning tuning[TUNA_COLLECTIVE_COUNT]; /* per collective */
    tuna_mpi_library library; /* from MPI_Get_library_version: the built-in vendor model */
    int auto_period, auto_period_max; /* TUNA_AUTO_PERIOD */
    bool learn;                       /* TUNA_AUTO_LEARN */
    int learn_calls;                  /* TUNA_AUTO_LEARN_BUDGET */
    double learn_seconds;
    double learn_message_cost;        /* TUNA_LEARN_MESSAGE_COST; < 0: measure it */
    unsigned long long checksum;
} sel;

static void mix(unsigned long long *h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) /* FNV-1a */
        *h = (*h ^ c[i]) * 1099511628211ULL;
}

/* TUNA_AUTO_LEARN (0 or 1), TUNA_AUTO_LEARN_BUDGET (CALLS[:SECONDS]) and
 * TUNA_LEARN_MESSAGE_COST (seconds); errors in sel.rc. */
static void load_learn_settings(void)
{
    sel.learn = true;
    sel.learn_calls = TUNA_LEARN_CALLS_DEFAULT;
    sel.learn_seconds = TUNA_LEARN_SECONDS_DEFAULT;
    sel.learn_message_cost = -1;
    const char *on = getenv("TUNA_AUTO_LEARN"), *budget = getenv("TUNA_AUTO_LEARN_BUDGET"),
               *cost = getenv("TUNA_LEARN_MESSAGE_COST");
    if (sel.rc != MPI_SUCCESS)
        return;
    if (cost && *cost) {
        char *end;
        const double c = strtod(cost, &end);
        if (*end || !(c >= 0) || c > 1) {
            snprintf(sel.msg, sizeof sel.msg,
                     "TUNA_LEARN_MESSAGE_COST='%s': expected seconds per message, 0 to 1",
                     cost);
            sel.rc = MPI_ERR_ARG;
            return;
        }
        sel.learn_message_cost = c;
    }
    if (on && *on) {
        if (strcmp(on, "0") != 0 && strcmp(on, "1") != 0) {
            snprintf(sel.msg, sizeof sel.msg, "TUNA_AUTO_LEARN='%s': expected 0 or 1", on);
            sel.rc = MPI_ERR_ARG;
            return;
        }
        sel.learn = on[0] == '1';
    }
    if (budget && *budget) {
        char *end;
        long calls = strtol(budget, &end, 10);
        double secs = sel.learn_seconds;
        if (*end == ':') {
            const char *ss = end + 1;
            secs = strtod(ss, &end);
            if (end == ss)
                secs = -1;
        }
        if (*end || calls < 1 || calls > 1000000 || !(secs > 0) || secs > 1e6) {
            snprintf(sel.msg, sizeof sel.msg,
                     "TUNA_AUTO_LEARN_BUDGET='%s': expected CALLS[:SECONDS], 1 <= CALLS <= "
                     "1000000 and 0 < SECONDS <= 1e6",
                     budget);
            sel.rc = MPI_ERR_ARG;
            return;
        }
        sel.learn_calls = (int)calls;
        sel.learn_seconds = secs;
    }
}

static void load_files(void)
{
    tuna_profile_builtin(&sel.profile);
    const char *pf = getenv("TUNA_PROFILE");
    const char *tf = getenv("TUNA_TUNING");
    int rc = MPI_SUCCESS;
    const char *var = "TUNA_PROFILE";
    if (pf && *pf)
        rc = tuna_profile_load(pf, &sel.profile);
    sel.profile_builtin = !(pf && *pf);
    if (rc == MPI_SUCCESS && tf && *tf) {
        var = "TUNA_TUNING";
        for (int c = 0; c < TUNA_COLLECTIVE_COUNT && rc == MPI_SUCCESS; c++)
            rc = tuna_tuning_load(tf, (tuna_collective)c, &sel.tuning[c]);
    }
    if (rc != MPI_SUCCESS) {
        snprintf(sel.msg, sizeof sel.msg, "%s: %s", var, tuna_error_string(rc));
        sel.rc = rc;
    }
    const char *ps = getenv("TUNA_AUTO_PERIOD");
    sel.auto_period = TUNA_AUTO_PERIOD_DEFAULT;
    sel.auto_period_max = TUNA_AUTO_PERIOD_MAX_DEFAULT;
    if (ps && *ps && sel.rc == MPI_SUCCESS) {
        char *end;
        long k = strtol(ps, &end, 10), m = k;
        if (*end == ':') {
            const char *ms = end + 1;
            m = strtol(ms, &end, 10);
            if (end == ms)
                m = -1;
        }
        if (*end || k < 1 || k > 1000000 || m < k || m > 1000000) {
            snprintf(sel.msg, sizeof sel.msg,
                     "TUNA_AUTO_PERIOD='%s': expected K or K:M, integers with 1 <= K <= M <= "
                     "1000000",
                     ps);
            sel.rc = MPI_ERR_ARG;
        } else {
            sel.auto_period = (int)k;
            sel.auto_period_max = (int)m;
        }
    }
    load_learn_settings();
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen = 0;
    version[0] = '\0';
    if (PMPI_Get_library_version(version, &vlen) == MPI_SUCCESS)
        sel.library = tuna_mpi_library_detect(version);
    /* The built-in call_overhead is CPU time, which SMPI does not charge (tuna sim runs with
     * smpi/simulate-computation:no): under SMPI tuna's algorithms cost only their messages. */
    if (sel.library == TUNA_MPILIB_SMPI && !(pf && *pf)) {
        sel.profile.call_overhead = 0;
        sel.profile.datatype_overhead = 0; /* building a datatype is CPU time too */
        sel.profile.datatype_block = 0;
    }
    /* The library's own call path, as measured for the built-in profile; a file says its own. */
    if (!(pf && *pf))
        sel.profile.vendor_call_overhead = tuna_vendor_call_overhead_guess(sel.library);
    unsigned long long h = 1469598103934665603ULL;
    const tuna_profile *p = &sel.profile;
    double v[] = {p->intra.latency, p->intra.overhead, p->intra.gap, p->intra.bandwidth,
                  p->inter.latency, p->inter.overhead, p->inter.gap, p->inter.bandwidth,
                  (double)p->nics_per_node, p->copy_bandwidth, p->datatype_overhead,
                  p->datatype_block, p->eager_limit, p->has_agreement, p->agreement_per_round,
                  p->agreement_per_rank, p->call_overhead, p->vendor_call_overhead};
    mix(&h, v, sizeof v);
    int net[2 + TUNA_NET_MAX_SHAPE] = {(int)p->net_topology, p->net_ndims};
    for (int j = 0; j < p->net_ndims; j++)
        net[2 + j] = p->net_dims[j];
    mix(&h, net, sizeof net);
    mix(&h, &p->net_link_bandwidth, sizeof p->net_link_bandwidth);
    /* What models vendor: the profile's algorithm, or the library the built-in guess uses. */
    int vm[2 + TUNA_MAX_PARAMS] = {p->has_vendor_alltoallv ? p->vendor_alltoallv.algorithm : -1,
                                   p->has_vendor_alltoallv ? -1 : (int)sel.library};
    for (int i = 0; p->has_vendor_alltoallv && i < TUNA_MAX_PARAMS; i++)
        vm[2 + i] = (int)p->vendor_alltoallv.value[i];
    mix(&h, vm, sizeof vm);
    for (int c = 0; c < TUNA_COLLECTIVE_COUNT; c++)
        mix(&h, &sel.tuning[c].digest, sizeof sel.tuning[c].digest);
    mix(&h, &sel.profile_builtin, sizeof sel.profile_builtin);
    mix(&h, &sel.auto_period, sizeof sel.auto_period);
    mix(&h, &sel.auto_period_max, sizeof sel.auto_period_max);
    mix(&h, &sel.rc, sizeof sel.rc);
    sel.checksum = h >> 2; /* positive as a long long */
}

/* Threads calling auto concurrently for the first time load the files once. */
static pthread_once_t load_once_flag = PTHREAD_ONCE_INIT;

static void load_once(void)
{
    pthread_once(&load_once_flag, load_files);
}

/* The load error, replacing any message recorded since (it names the file and the cause). */
static int load_error(void)
{
    tuna_error_clear();
    return tuna_error_set(sel.rc, "%s", sel.msg);
}

const tuna_profile *tuna_select_profile_for(const tuna_select_input *in, tuna_profile *buf)
{
    load_once();
    if (!sel.profile_builtin || in->message_cost <= 0)
        return &sel.profile;
    *buf = sel.profile;
    buf->intra.overhead = fmax(buf->intra.overhead, in->message_cost);
    buf->inter.overhead = fmax(buf->inter.overhead, in->message_cost);
    return buf;
}

int tuna_select_profile(const tuna_profile **out)
{
    load_once();
    if (sel.rc != MPI_SUCCESS)
        return load_error();
    *out = &sel.profile;
    return MPI_SUCCESS;
}

bool tuna_select_learn_on(void)
{
    load_once();
    return sel.learn;
}

double tuna_select_learn_message_cost(void)
{
    load_once();
    return sel.learn_message_cost;
}

void tuna_select_learn_settings(int *rounds, int *calls, double *seconds)
{
    load_once();
    *rounds = TUNA_LEARN_ROUNDS;
    *calls = sel.learn_calls;
    *seconds = sel.learn_seconds;
}

void tuna_select_auto_period(int *first, int *longest)
{
    load_once();
    *first = sel.auto_period;
    *longest = sel.auto_period_max;
}

tuna_mpi_library tuna_select_library(void)
{
    load_once();
    return sel.library;
}

int tuna_select_vendor_model(int P, tuna_options *opt)
{
    load_once();
    if (sel.profile.has_vendor_alltoallv) {
        *opt = sel.profile.vendor_alltoallv;
        return TUNA_VENDOR_MODEL_PROFILE;
    }
    return tuna_vendor_alltoallv_guess(sel.library, P, opt) != TUNA_VENDOR_GUESS_NONE
               ? TUNA_VENDOR_MODEL_BUILTIN
               : TUNA_VENDOR_MODEL_NONE;
}

/* The row and parameters the library's MPI_Alltoallv is modelled as; false: unmodelled. */
static bool vendor_modelled_as(const tuna_registry *reg, const tuna_select_input *in,
                               tuna_choice *as)
{
    tuna_options o;
    if (tuna_select_vendor_model(in->P, &o) == TUNA_VENDOR_MODEL_NONE)
        return false;
    as->algorithm = o.algorithm;
    tuna_params_resolve(&tuna_registry_row(reg, o.algorithm)->info, o.value, in->P, as->param);
    return true;
}

/* Model time of vendor: that of the algorithm modelling it (a row of reg, the alltoallv
 * registry), parameters resolved at P; negative when nothing models it. */
static double vendor_time(const tuna_registry *reg, const tuna_select_input *in)
{
    tuna_choice as;
    if (!vendor_modelled_as(reg, in, &as))
        return -1;
    tuna_profile buf;
    double t = tuna_model_cost(reg, tuna_select_profile_for(in, &buf), in, as.algorithm, as.param);
    return t >= 0 ? t + sel.profile.vendor_call_overhead : t;
}

double tuna_model_cost(const tuna_registry *reg, const tuna_profile *m,
                       const tuna_select_input *in, int alg, const long *param)
{
    if (alg < 0 || alg >= reg->n)
        return -1;
    const tuna_algorithm *row = tuna_registry_row(reg, alg);
    return row->cost ? row->cost(m, in, &row->info, param) : -1;
}

/* The model's time of choice c under profile m (vendor: the row the library's call is
 * modelled as, alltoallv; the vendor row's own model otherwise); < 0 when unmodelled. */
static double choice_cost(const tuna_registry *reg, const tuna_profile *m,
                          const tuna_select_input *in, const tuna_choice *c)
{
    tuna_choice as = *c;
    if (tuna_registry_row(reg, c->algorithm)->kind == TUNA_ROW_VENDOR &&
        reg->coll == TUNA_ALLTOALLV && !vendor_modelled_as(reg, in, &as))
        return -1;
    return tuna_model_cost(reg, m, in, as.algorithm, as.param);
}

double tuna_select_messages(const tuna_registry *reg, const tuna_select_input *in,
                            const tuna_choice *c)
{
    load_once();
    /* The model's sensitivity to the per-message overhead o, with o so large (1 ms) that it
     * is every phase's bound: the messages that pay o one after the other on a rank. */
    const double d = 1e-3;
    tuna_profile buf;
    const tuna_profile *base = tuna_select_profile_for(in, &buf);
    tuna_profile big = *base;
    big.intra.overhead += d;
    big.inter.overhead += d;
    const double t0 = choice_cost(reg, base, in, c), t1 = choice_cost(reg, &big, in, c);
    return t0 < 0 || t1 < t0 ? 0 : (t1 - t0) / d;
}

/* ------------------------------------------------------------ agreement per communicator */

void tuna_select_agree_values(long long v[TUNA_SELECT_AGREE_N])
{
    load_once();
    /* max of (failed, h, -h): everyone loaded fine and equal iff failed = 0, max h = min h */
    v[0] = sel.rc != MPI_SUCCESS;
    v[1] = (long long)sel.checksum;
    v[2] = -(long long)sel.checksum;
}

void tuna_select_agree_judge(tuna_ctx *ctx, const long long v[TUNA_SELECT_AGREE_N])
{
    ctx->select_status = 1 + (v[0] ? 1 : v[1] != -v[2] ? 2 : 0);
}

int tuna_select_agree(tuna_ctx *ctx)
{
    load_once();
    if (ctx->select_status == 0) {
        long long v[TUNA_SELECT_AGREE_N];
        tuna_select_agree_values(v);
        TUNA_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, v, TUNA_SELECT_AGREE_N, MPI_LONG_LONG,
                                      MPI_MAX, ctx->comm));
        tuna_select_agree_judge(ctx, v);
    }
    int status = ctx->select_status - 1;
    if (sel.rc != MPI_SUCCESS)
        return load_error();
    if (status == 1)
        return tuna_error_set(MPI_ERR_ARG, "auto: TUNA_PROFILE, TUNA_TUNING or TUNA_AUTO_PERIOD "
                                           "failed to load on another rank (run with "
                                           "TUNA_VERBOSE=1 there)");
    if (status == 2)
        return tuna_error_set(MPI_ERR_ARG, "auto: the ranks loaded different TUNA_PROFILE / "
                                           "TUNA_TUNING contents or TUNA_AUTO_PERIOD values; "
                                           "every rank must see the same");
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ candidates */

int tuna_grid_radix(long U, long *v)
{
    int n = 0;
    for (long r = 2; r <= U && r <= 8; r++)
        v[n++] = r;
    for (long r = 10; r < U; r = (long)ceil(r * 1.25))
        v[n++] = r;
    long s = (long)ceil(sqrt((double)U));
    if (s > 8 && s < U)
        v[n++] = s;
    if (U > 8)
        v[n++] = U;
    return n;
}

int tuna_grid_pow2(long U, long *v)
{
    int n = 0;
    if (U < 1)
        U = 1;
    for (long b = 1; b < U; b *= 2)
        v[n++] = b;
    v[n++] = U;
    return n;
}

void tuna_candidates_of(tuna_candidates *c, const tuna_algorithm_info *info, const char *name,
                        const long *v, int n)
{
    long param[TUNA_MAX_PARAMS] = {0};
    for (int i = 0; i < n; i++) {
        tuna_param_set(info, param, name, v[i]);
        tuna_candidate(c, param);
    }
}

void tuna_grid_every_value(const tuna_select_input *in, const tuna_algorithm_info *info,
                           tuna_candidates *out)
{
    const tuna_param_info *p = &info->params[0];
    long hi = p->max == TUNA_PARAM_P ? in->P : p->max, param[TUNA_MAX_PARAMS] = {0};
    for (long x = p->min; x <= hi && x < p->min + TUNA_GRID_MAX; x++) {
        param[0] = x;
        tuna_candidate(out, param);
    }
}

/*
 * One row's candidates, priced: the row's cost, plus the statistics agreement for rows that
 * need it where the statistics are not agreed (`agree`), plus tuna's own work per call where
 * vendor competes (`overhead`: alltoallv; 0 elsewhere). Each goes to `visit` when set (auto's
 * alltoallv choice, which also weighs requests in flight), else into *best if strictly better.
 */
struct tuna_candidates {
    const tuna_registry *reg;
    const tuna_select_input *in;
    const tuna_profile *prof; /* tuna_select_profile_for(in) */
    int alg;
    double agree, overhead;
    tuna_choice *best;
    tuna_candidate_visit_fn visit;
    void *arg;
};

/* Candidate `alg` with model time t (negative: not a candidate); true if it became best. */
static bool consider_time(const tuna_registry *reg, int alg, const long *param, double t,
                          tuna_choice *best)
{
    if (t < 0)
        return false;
    /* Strictly better only: ties keep the earlier table row and smaller parameters. */
    if (best->algorithm < 0 || t < best->predicted * (1 - 1e-12)) {
        best->algorithm = alg;
        memset(best->param, 0, sizeof best->param);
        for (int i = 0; i < tuna_registry_row(reg, alg)->info.nparams; i++)
            best->param[i] = param[i];
        best->predicted = t;
        return true;
    }
    return false;
}

long tuna_select_inflight(const tuna_registry *reg, const tuna_select_input *in, int alg,
                          const long *param)
{
    const tuna_algorithm *row = tuna_registry_row(reg, alg);
    if (row->kind == TUNA_ROW_VENDOR) { /* the library runs what models it */
        tuna_options o;
        if (tuna_select_vendor_model(in->P, &o) == TUNA_VENDOR_MODEL_NONE)
            return LONG_MAX;
        long vparam[TUNA_MAX_PARAMS];
        tuna_params_resolve(&tuna_registry_row(reg, o.algorithm)->info, o.value, in->P, vparam);
        return tuna_select_inflight(reg, in, o.algorithm, vparam);
    }
    return row->inflight ? row->inflight(in, &row->info, param) : LONG_MAX;
}

void tuna_candidate(tuna_candidates *c, const long *param)
{
    const tuna_algorithm *row = tuna_registry_row(c->reg, c->alg);
    double t = row->cost(c->prof, c->in, &row->info, param);
    if (t >= 0 && (row->needs & TUNA_NEEDS_GLOBAL_STATS))
        t += c->agree;
    if (t >= 0) /* vendor's call has no tuna work on top */
        t += c->overhead;
    if (!c->visit)
        consider_time(c->reg, c->alg, param, t, c->best);
    else if (t >= 0)
        c->visit(c->arg, c->alg, param, t, tuna_select_inflight(c->reg, c->in, c->alg, param));
}

/* Row `alg` (a modelled algorithm) over its grid, into best (kept if strictly better) or to
 * visit. */
static void row_candidates(const tuna_registry *reg, const tuna_select_input *in, int alg,
                           double agree, double overhead, tuna_choice *best,
                           tuna_candidate_visit_fn visit, void *arg)
{
    const tuna_algorithm *row = tuna_registry_row(reg, alg);
    if (!row->cost)
        return;
    tuna_profile buf;
    tuna_candidates c = {.reg = reg, .in = in, .prof = tuna_select_profile_for(in, &buf),
                         .alg = alg, .agree = agree, .overhead = overhead, .best = best,
                         .visit = visit, .arg = arg};
    const long none[TUNA_MAX_PARAMS] = {0};
    if (row->grid)
        row->grid(in, &row->info, &c);
    else
        tuna_candidate(&c, none);
}

static void row_best(const tuna_registry *reg, const tuna_select_input *in, int alg,
                     double agree, double overhead, tuna_choice *best)
{
    row_candidates(reg, in, alg, agree, overhead, best, NULL, NULL);
}

double tuna_select_agreement_time(const tuna_select_input *in)
{
    load_once();
    const tuna_profile *p = &sel.profile;
    if (p->has_agreement)
        return p->agreement_per_round * ceil(log2((double)(in->P > 1 ? in->P : 1))) +
               p->agreement_per_rank * (double)(in->P - 1);
    if (in->P <= 1)
        return 0;
    const tuna_model_layout l = tuna_model_layout_of(in);
    double t = tuna_model_recmul(p, &l, 2, (double)(TUNA_AGREE_N * sizeof(long long)), false);
    return t > 0 ? t : 0;
}

void tuna_select_each_alltoallv_candidate(const tuna_registry *reg, const tuna_select_input *in,
                                          tuna_candidate_visit_fn visit, void *arg)
{
    load_once();
    /* vendor is considered just before the algorithm that models it, so it wins ties against
     * that algorithm (the library runs it without tuna's per-call work: buffer normalisation,
     * request arrays, stats) but not against an earlier row it merely ties: `spreadout` beats
     * a vendor modelled as rank-ordered `linear` (same model time, but every rank sending to
     * the same receivers first costs 3-16% at medium sizes in SMPI; docs/tuning.md). */
    const long none[TUNA_MAX_PARAMS] = {0};
    tuna_options vo; /* the modelling row is a tuna algorithm, never vendor or auto (profile.c,
                        vendor_model.c), so the loop below always reaches it */
    const int vendor_model = tuna_select_vendor_model(in->P, &vo) == TUNA_VENDOR_MODEL_NONE
                                 ? -1 /* nothing models vendor: not a candidate */
                                 : vo.algorithm;
    /* once, not per candidate */
    const double agree = in->agree_pending ? tuna_select_agreement_time(in) : 0;
    for (int alg = 0; alg < reg->n; alg++) {
        if (alg == vendor_model)
            for (int v = 0; v < reg->n; v++)
                if (tuna_registry_row(reg, v)->kind == TUNA_ROW_VENDOR) {
                    const double t = vendor_time(reg, in);
                    if (t >= 0)
                        visit(arg, v, none, t, tuna_select_inflight(reg, in, v, none));
                }
        /* At P = 2 a row with a two-rank path pays none of tuna's per-call set-up
         * (docs/results/local.md, "Fixed cost per call"). */
        const tuna_algorithm *row = tuna_registry_row(reg, alg);
        if (row->kind != TUNA_ROW_VENDOR)
            row_candidates(reg, in, alg, agree,
                           in->P == 2 && row->pair_tag ? 0 : sel.profile.call_overhead, NULL,
                           visit, arg);
    }
}

/* The model's best candidate, and the best of those within the window. */
typedef struct window_fold {
    const tuna_registry *reg;
    tuna_choice best, windowed;
    long best_inflight;
} window_fold;

static void fold_candidate(void *arg, int alg, const long *param, double t, long inflight)
{
    window_fold *f = arg;
    if (consider_time(f->reg, alg, param, t, &f->best))
        f->best_inflight = inflight;
    if (inflight <= TUNA_WINDOW_REQUESTS)
        consider_time(f->reg, alg, param, t, &f->windowed);
}

/*
 * The cheapest candidate, unless it keeps more than TUNA_WINDOW_REQUESTS requests in flight
 * per rank and a candidate within that window is priced within TUNA_WINDOW_TOLERANCE of it:
 * then the best such one. Thousands of pending requests per rank are what the model knows
 * least about (matching queues, incast, the simulator's solver: docs/results/learning.md,
 * "Without learning"), and a few percent is below the model's accuracy.
 */
static void model_choice(const tuna_registry *reg, const tuna_select_input *in,
                         tuna_choice *best)
{
    window_fold f = {.reg = reg, .best = {.algorithm = -1}, .windowed = {.algorithm = -1}};
    tuna_select_each_alltoallv_candidate(reg, in, fold_candidate, &f);
    *best = f.best;
    if (f.best.algorithm >= 0 && f.best_inflight > TUNA_WINDOW_REQUESTS &&
        f.windowed.algorithm >= 0 &&
        f.windowed.predicted <= f.best.predicted * (1 + TUNA_WINDOW_TOLERANCE)) {
        *best = f.windowed;
        best->windowed = true;
    }
    best->from_table = false;
}

/* ------------------------------------------------------------ the choice */

static bool same_input(const tuna_select_input *a, const tuna_select_input *b)
{
    return a->P == b->P && a->Q == b->Q && a->N == b->N && a->max_block == b->max_block &&
           a->mean_block == b->mean_block && a->total_max == b->total_max &&
           a->zero_fraction == b->zero_fraction && a->agree_pending == b->agree_pending &&
           a->bytes == b->bytes && a->commute == b->commute;
}

/* The last MEMO choices of this thread, per collective (one collective's calls do not
 * push another's out). */
#define MEMO 8
typedef struct memo_entry {
    const tuna_registry *reg;
    tuna_select_input in;
    tuna_choice out;
} memo_entry;
static _Thread_local memo_entry memo[TUNA_COLLECTIVE_COUNT][MEMO];
static _Thread_local int memo_next[TUNA_COLLECTIVE_COUNT];

static bool memo_find(const tuna_registry *reg, const tuna_select_input *in, tuna_choice *out)
{
    const memo_entry *m = memo[reg->coll];
    for (int i = 0; i < MEMO; i++)
        if (m[i].reg == reg && same_input(&m[i].in, in)) {
            *out = m[i].out;
            return true;
        }
    return false;
}

static void memo_keep(const tuna_registry *reg, const tuna_select_input *in,
                      const tuna_choice *c)
{
    int *next = &memo_next[reg->coll];
    memo[reg->coll][*next] = (memo_entry){.reg = reg, .in = *in, .out = *c};
    *next = (*next + 1) % MEMO;
}

/* auto's choice from tuning-table entry e: its row, its parameters resolved at P and the
 * model's time of them (price_vendor: vendor at the time of the row modelling it, as
 * alltoallv's model prices it; 0 where nothing models the row). */
static tuna_choice table_choice(const tuna_registry *reg, const tuna_select_input *in,
                                const tuna_tuning_entry *e, bool price_vendor)
{
    const tuna_algorithm *row = tuna_registry_row(reg, e->opt.algorithm);
    tuna_choice c = {.algorithm = e->opt.algorithm, .from_table = true};
    tuna_params_resolve(&row->info, e->opt.value, in->P, c.param);
    tuna_profile buf;
    c.predicted = price_vendor && row->kind == TUNA_ROW_VENDOR
                      ? vendor_time(reg, in)
                      : tuna_model_cost(reg, tuna_select_profile_for(in, &buf), in, c.algorithm,
                                        c.param);
    if (c.predicted < 0) /* vendor without a model */
        c.predicted = 0;
    return c;
}

/* A choice of a collective's (c starts with algorithm -1): the tuning table's entry, else
 * the model's. */
typedef void choose_fn(const tuna_registry *reg, const tuna_select_input *in, tuna_choice *c);

/* The selector's files loaded, then choose's choice for in, remembered (memo_keep). */
static int choose_memoized(const tuna_registry *reg, const tuna_select_input *in,
                           tuna_choice *out, choose_fn *choose)
{
    load_once();
    if (sel.rc != MPI_SUCCESS)
        return load_error();
    if (memo_find(reg, in, out))
        return MPI_SUCCESS;
    tuna_choice c = {.algorithm = -1};
    choose(reg, in, &c);
    if (c.algorithm < 0)
        return tuna_error_set(MPI_ERR_INTERN, "auto: no candidate algorithm");
    memo_keep(reg, in, &c);
    *out = c;
    return MPI_SUCCESS;
}

static void choose_alltoallv(const tuna_registry *reg, const tuna_select_input *in,
                             tuna_choice *c)
{
    const tuna_tuning_entry *e =
        tuna_tuning_find(&sel.tuning[TUNA_ALLTOALLV], in->P, in->Q,
                         tuna_select_size_bucket(in->max_block),
                         tuna_select_sparsity_bucket(in->zero_fraction));
    if (e)
        *c = table_choice(reg, in, e, true);
    else
        model_choice(reg, in, c);
}

int tuna_select_alltoallv(const tuna_registry *reg, const tuna_select_input *in,
                          tuna_choice *out)
{
    return choose_memoized(reg, in, out, choose_alltoallv);
}

/* ------------------------------------------------------------ allgather / allreduce */

void tuna_select_record(const tuna_choice *c)
{
    tuna_stats_current.algorithm = c->algorithm;
    memcpy(tuna_stats_current.params, c->param, sizeof tuna_stats_current.params);
    tuna_stats_current.predicted = c->predicted;
    tuna_stats_current.auto_source = c->from_table ? 2 : 1;
}

static void choose_dense(const tuna_registry *reg, const tuna_select_input *in,
                         tuna_choice *best)
{
    /* Their inputs are dense: sparsity bucket 0; the size is the block / vector. */
    const tuna_tuning_entry *e = tuna_tuning_find(&sel.tuning[reg->coll], in->P, in->Q,
                                                  tuna_select_size_bucket(in->bytes), 0);
    if (e) {
        *best = table_choice(reg, in, e, false);
        return;
    }
    for (int alg = 0; alg < reg->n; alg++)
        row_best(reg, in, alg, 0, 0, best);
    if (best->algorithm < 0)
        return; /* no candidate: an error */
    /* the library runs the same exchange with a lower constant: its own call */
    tuna_profile buf;
    if (reg->library_runs &&
        reg->library_runs(tuna_select_profile_for(in, &buf), in, best->predicted))
        best->algorithm = tuna_registry_find_kind(reg, TUNA_ROW_VENDOR);
}

int tuna_select_collective(const tuna_registry *reg, const tuna_select_input *in,
                           tuna_choice *out)
{
    return choose_memoized(reg, in, out, choose_dense);
}

int tuna_select_collective_memory(const tuna_registry *reg, const tuna_select_input *in,
                                  unsigned memory, int fallback, tuna_choice *out)
{
    load_once();
    if (sel.rc != MPI_SUCCESS)
        return load_error();
    /* the model only: the tuning table and the hand-over may name rows outside the set */
    tuna_choice best = {.algorithm = -1};
    for (int alg = 0; alg < reg->n; alg++) {
        const tuna_algorithm *row = tuna_registry_row(reg, alg);
        if (row->kind == TUNA_ROW_ALGORITHM && (row->memory & memory) == memory)
            row_best(reg, in, alg, 0, 0, &best);
    }
    *out = best.algorithm >= 0 ? best : (tuna_choice){.algorithm = fallback};
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ the planner's candidates */

static int by_prediction(const void *x, const void *y)
{
    const tuna_choice *a = x, *b = y;
    if (a->predicted != b->predicted)
        return a->predicted < b->predicted ? -1 : 1;
    return a->algorithm - b->algorithm; /* ties: table order, as the model's choice */
}

/* Per alltoallv row: its model-best parameters, and its best within auto's window. */
typedef struct row_bests {
    const tuna_registry *reg;
    tuna_choice *any, *windowed; /* by row */
} row_bests;

static void keep_row_bests(void *arg, int alg, const long *param, double t, long inflight)
{
    row_bests *b = arg;
    consider_time(b->reg, alg, param, t, &b->any[alg]);
    if (inflight <= TUNA_WINDOW_REQUESTS)
        consider_time(b->reg, alg, param, t, &b->windowed[alg]);
}

int tuna_select_candidates(const tuna_registry *reg, const tuna_select_input *in,
                           tuna_choice *out, int max, int *count)
{
    *count = 0;
    load_once();
    if (sel.rc != MPI_SUCCESS)
        return load_error();
    /* alltoallv: vendor modelled by a tuna row (the profile's vendor_alltoallv), and tuna's
     * per-call work charged against it, as in tuna_select_alltoallv() */
    const bool a2av = reg->coll == TUNA_ALLTOALLV;
    const int n = reg->n;
    tuna_choice *all = tuna_calloc((size_t)n * 3, sizeof *all);
    if (!all)
        return tuna_error_set(MPI_ERR_NO_MEM, "planner: no memory");
    /* alltoallv: a row is timed with its best parameters within auto's window where it has
     * any (multipair-waitany:stride=255 at P = 256, every exchange in flight at once, is
     * what SimGrid 3.32 crashes on), else with its best. */
    row_bests rb = {reg, all + n, all + 2 * (size_t)n};
    for (int alg = 0; alg < n; alg++)
        rb.any[alg].algorithm = rb.windowed[alg].algorithm = -1;
    if (a2av)
        tuna_select_each_alltoallv_candidate(reg, in, keep_row_bests, &rb);
    int m = 0;
    tuna_choice vendor = {.algorithm = -1};
    for (int alg = 0; alg < n; alg++) {
        const tuna_algorithm *row = tuna_registry_row(reg, alg);
        if (row->kind == TUNA_ROW_AUTO)
            continue;
        tuna_choice best = {.algorithm = -1};
        if (row->kind == TUNA_ROW_VENDOR) {
            /* Always a candidate: unmodelled, it is timed anyway (predicted 0). */
            tuna_profile buf;
            double t = a2av ? vendor_time(reg, in)
                            : tuna_model_cost(reg, tuna_select_profile_for(in, &buf), in, alg,
                                              (long[TUNA_MAX_PARAMS]){0});
            vendor = (tuna_choice){.algorithm = alg, .predicted = t > 0 ? t : 0};
            continue;
        }
        if (a2av)
            best = rb.windowed[alg].algorithm >= 0 ? rb.windowed[alg] : rb.any[alg];
        else
            row_best(reg, in, alg, 0, 0, &best);
        if (best.algorithm >= 0)
            all[m++] = best;
    }
    qsort(all, (size_t)m, sizeof *all, by_prediction);
    int k = 0;
    if (vendor.algorithm >= 0 && k < max)
        out[k++] = vendor;
    for (int i = 0; i < m && k < max; i++)
        out[k++] = all[i];
    free(all);
    *count = k;
    return MPI_SUCCESS;
}

int tuna_select_candidates_within(const tuna_registry *reg, const tuna_select_input *in,
                                  double factor, tuna_choice *out, int max, int *count)
{
    *count = 0;
    tuna_choice *all = tuna_calloc((size_t)reg->n, sizeof *all);
    if (!all)
        return tuna_error_set(MPI_ERR_NO_MEM, "auto: no memory for the candidates");
    int n = 0;
    int rc = tuna_select_candidates(reg, in, all, reg->n, &n);
    if (rc != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    /* vendor (first when it is a candidate) always stays: it is what the caller would run */
    const bool has_vendor = n > 0 && tuna_registry_row(reg, all[0].algorithm)->kind ==
                                         TUNA_ROW_VENDOR;
    double model_best = -1;
    for (int i = has_vendor ? 1 : 0; i < n; i++)
        if (model_best < 0 || all[i].predicted < model_best)
            model_best = all[i].predicted;
    int m = 0;
    for (int i = 0; i < n; i++) {
#ifdef SMPI_SHARED_MALLOC
        /* Under SimGrid SMPI a polling loop of MPI_Testany costs minutes of wall time per
         * exchange at P = 64 (each poll is a simulator call that rarely moves time): the
         * polling rows are not timed there. */
        if (tuna_registry_row(reg, all[i].algorithm)->needs & TUNA_NEEDS_POLLING)
            continue;
#endif
        if ((has_vendor && i == 0) || all[i].predicted <= factor * model_best)
            all[m++] = all[i];
    }
    /* Which make the cut of max: vendor, then each family's best (where the model misjudges a
     * machine it misjudges a family: the logarithmic and hierarchical rows' latencies, the
     * linear ones' incast), then the rest by model time; kept in model order. */
    bool *take = tuna_calloc((size_t)(m ? m : 1), sizeof *take);
    if (!take) {
        free(all);
        return tuna_error_set(MPI_ERR_NO_MEM, "auto: no memory for the candidates");
    }
    int k = 0;
    for (int i = 0; i < m && k < max; i++) {
        bool first_of_family = true;
        for (int j = 0; j < i; j++)
            if (strcmp(tuna_registry_row(reg, all[j].algorithm)->family,
                       tuna_registry_row(reg, all[i].algorithm)->family) == 0)
                first_of_family = false;
        if (first_of_family) {
            take[i] = true;
            k++;
        }
    }
    for (int i = 0; i < m && k < max; i++)
        if (!take[i]) {
            take[i] = true;
            k++;
        }
    for (int i = 0; i < m; i++)
        if (take[i])
            out[(*count)++] = all[i];
    free(take);
    free(all);
    return MPI_SUCCESS;
}
