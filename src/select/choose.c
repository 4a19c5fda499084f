/*
 * The choice of `auto`: TUNA_PROFILE / TUNA_TUNING loaded once per process,
 * candidates enumerated over each parameter's useful range and ranked by the
 * cost model, results memoised per thread, and a once-per-communicator check
 * that every rank holds the same profile and table.
 */
#include "tuna_coll.h"
#include "tuna_select.h"

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
    tuna_tuning tuning[TUNA_ALLREDUCE + 1]; /* per collective */
    tuna_mpi_library library; /* from MPI_Get_library_version: the built-in vendor model */
    int auto_period, auto_period_max; /* TUNA_AUTO_PERIOD */
    unsigned long long checksum;
} sel;

static void mix(unsigned long long *h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) /* FNV-1a */
        *h = (*h ^ c[i]) * 1099511628211ULL;
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
    if (rc == MPI_SUCCESS && tf && *tf) {
        var = "TUNA_TUNING";
        for (int c = TUNA_ALLTOALLV; c <= TUNA_ALLREDUCE && rc == MPI_SUCCESS; c++)
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
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen = 0;
    version[0] = '\0';
    if (MPI_Get_library_version(version, &vlen) == MPI_SUCCESS)
        sel.library = tuna_mpi_library_detect(version);
    /* The built-in call_overhead is CPU time, which SMPI does not charge (tuna sim runs with
     * smpi/simulate-computation:no): under SMPI tuna's algorithms cost only their messages. */
    if (sel.library == TUNA_MPILIB_SMPI && !(pf && *pf))
        sel.profile.call_overhead = 0;
    unsigned long long h = 1469598103934665603ULL;
    const tuna_profile *p = &sel.profile;
    double v[] = {p->intra.latency, p->intra.overhead, p->intra.gap, p->intra.bandwidth,
                  p->inter.latency, p->inter.overhead, p->inter.gap, p->inter.bandwidth,
                  (double)p->nics_per_node, p->copy_bandwidth, p->datatype_overhead,
                  p->datatype_block, p->eager_limit, p->has_agreement, p->agreement_per_round,
                  p->agreement_per_rank, p->call_overhead};
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
    for (int c = TUNA_ALLTOALLV; c <= TUNA_ALLREDUCE; c++)
        mix(&h, &sel.tuning[c].digest, sizeof sel.tuning[c].digest);
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

int tuna_select_profile(const tuna_profile **out)
{
    load_once();
    if (sel.rc != MPI_SUCCESS)
        return load_error();
    *out = &sel.profile;
    return MPI_SUCCESS;
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

/* Model time of vendor: that of the algorithm modelling it, parameters resolved at P;
 * negative when nothing models it. */
static double vendor_time(const tuna_select_input *in)
{
    tuna_options o;
    if (tuna_select_vendor_model(in->P, &o) == TUNA_VENDOR_MODEL_NONE)
        return -1;
    const tuna_algorithm_info *info = &tuna_a2av_table[o.algorithm].info;
    long param[TUNA_MAX_PARAMS] = {0};
    for (int i = 0; i < info->nparams; i++)
        param[i] = tuna_coll_resolve_param(&info->params[i], o.value[i], in->P);
    return tuna_model_alltoallv(&sel.profile, in, o.algorithm, param);
}

/* ------------------------------------------------------------ agreement per communicator */

int tuna_select_agree(tuna_ctx *ctx)
{
    load_once();
    if (ctx->select_status == 0) {
        /* max of (failed, h, -h): everyone loaded fine and equal iff failed = 0, max h = min h */
        long long v[3] = {sel.rc != MPI_SUCCESS, (long long)sel.checksum,
                          -(long long)sel.checksum};
        TUNA_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MAX, ctx->comm));
        ctx->select_status = 1 + (v[0] ? 1 : v[1] != -v[2] ? 2 : 0);
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

/* Radix grid over [2, U]: every value up to 8, then steps of about 25%, plus sqrt U and U. */
static int radix_grid(long U, long *v)
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

/* Powers of two below U, plus U. */
static int pow2_grid(long U, long *v)
{
    int n = 0;
    if (U < 1)
        U = 1;
    for (long b = 1; b < U; b *= 2)
        v[n++] = b;
    v[n++] = U;
    return n;
}

#define GRID_MAX 128

/* Values of parameter `pi` of algorithm `alg` worth evaluating (given param 0 = p0). */
static int grid(const tuna_select_input *in, int alg, int pi, long p0, long *v)
{
    const tuna_algorithm_info *info = &tuna_a2av_table[alg].info;
    const char *name = info->name, *key = info->params[pi].name;
    const long P = in->P;
    const bool hier = strcmp(name, "coalesced") == 0 || strcmp(name, "staggered") == 0;
    const bool nodes = hier && in->Q > 0 && in->N > 1;
    if (strcmp(key, "radix") == 0)
        return radix_grid(nodes ? (in->Q < 2 ? 2 : in->Q) : P < 2 ? 2 : P, v);
    if (strcmp(key, "block") == 0 && strcmp(name, "tuna") == 0)
        return pow2_grid(p0 - 1, v);
    if (strcmp(key, "block") == 0 && hier && !nodes)
        return in->Q <= 0 ? pow2_grid(p0 - 1, v) : (v[0] = 1, 1); /* unused by the engine */
    if (strcmp(key, "block") == 0 && strcmp(name, "coalesced") == 0)
        return pow2_grid(in->N - 1, v);
    if (strcmp(key, "block") == 0 && strcmp(name, "staggered") == 0)
        return pow2_grid((long)(in->N - 1) * in->Q, v);
    if (strcmp(key, "block") == 0 || strcmp(key, "stride") == 0)
        return pow2_grid(P - 1, v);
    /* Any other parameter with a small fixed range (padded-bruck's datatype): all values. */
    const tuna_param_info *p = &info->params[pi];
    long hi = p->max == TUNA_PARAM_P ? P : p->max;
    int n = 0;
    for (long x = p->min; x <= hi && n < GRID_MAX; x++)
        v[n++] = x;
    return n;
}

static bool is_vendor(int alg)
{
    return tuna_a2av_table[alg].run == tuna_a2av_vendor;
}

/* Candidate `alg` with model time t (negative: not a candidate). */
static void consider_time(int alg, const long *param, double t, tuna_choice *best)
{
    if (t < 0)
        return;
    /* Strictly better only: ties keep the earlier table row and smaller parameters. */
    if (best->algorithm < 0 || t < best->predicted * (1 - 1e-12)) {
        best->algorithm = alg;
        memset(best->param, 0, sizeof best->param);
        for (int i = 0; i < tuna_a2av_table[alg].info.nparams; i++)
            best->param[i] = param[i];
        best->predicted = t;
    }
}

/* One allreduce of the TUNA_AGREE_N statistics: the profile's measured "agreement", else
 * recursive doubling (what MPI libraries run for small allreduces). */
static double agreement_time(const tuna_select_input *in)
{
    const tuna_profile *p = &sel.profile;
    if (p->has_agreement)
        return p->agreement_per_round * ceil(log2((double)(in->P > 1 ? in->P : 1))) +
               p->agreement_per_rank * (double)(in->P - 1);
    int rd = tuna_algorithm_find(TUNA_ALLREDUCE, "recursive-doubling");
    const long none[TUNA_MAX_PARAMS] = {0};
    double t = tuna_model_allreduce(&sel.profile, in, (double)(TUNA_AGREE_N * sizeof(long long)),
                                    true, rd, none);
    return t > 0 ? t : 0;
}

/* agree: what an algorithm that needs the statistics pays on top (0 when they are agreed). */
static void consider(const tuna_select_input *in, int alg, const long *param, double agree,
                     tuna_choice *best)
{
    double t = tuna_model_alltoallv(&sel.profile, in, alg, param);
    if (t >= 0 && tuna_a2av_table[alg].needs_global_stats)
        t += agree;
    if (t >= 0) /* vendor's call has no tuna work on top */
        t += sel.profile.call_overhead;
    consider_time(alg, param, t, best);
}

/* Row `alg` (a tuna algorithm) over its parameter grid, into best (kept if strictly better). */
static void row_best(const tuna_select_input *in, int alg, double agree, tuna_choice *best)
{
    const tuna_algorithm_info *info = &tuna_a2av_table[alg].info;
    long param[TUNA_MAX_PARAMS] = {0}, v0[GRID_MAX], v1[GRID_MAX];
    if (info->nparams == 0) {
        consider(in, alg, param, agree, best);
        return;
    }
    int n0 = grid(in, alg, 0, 0, v0);
    for (int i = 0; i < n0; i++) {
        param[0] = v0[i];
        if (info->nparams == 1) {
            consider(in, alg, param, agree, best);
            continue;
        }
        int n1 = grid(in, alg, 1, v0[i], v1);
        for (int k = 0; k < n1; k++) {
            param[1] = v1[k];
            consider(in, alg, param, agree, best);
        }
    }
}

static void model_choice(const tuna_select_input *in, tuna_choice *best)
{
    best->algorithm = -1;
    best->predicted = 0;
    best->from_table = false;
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
    const double agree = in->agree_pending ? agreement_time(in) : 0; /* once, not per candidate */
    for (int alg = 0; alg < tuna_a2av_table_len; alg++) {
        if (alg == vendor_model)
            for (int v = 0; v < tuna_a2av_table_len; v++)
                if (is_vendor(v))
                    consider_time(v, none, vendor_time(in), best);
        if (!is_vendor(alg))
            row_best(in, alg, agree, best);
    }
}

/* ------------------------------------------------------------ the choice */

static bool same_input(const tuna_select_input *a, const tuna_select_input *b)
{
    return a->P == b->P && a->Q == b->Q && a->N == b->N && a->max_block == b->max_block &&
           a->mean_block == b->mean_block && a->total_max == b->total_max &&
           a->zero_fraction == b->zero_fraction && a->agree_pending == b->agree_pending;
}

#define MEMO 8
static _Thread_local struct {
    tuna_select_input in;
    tuna_choice out;
    bool used;
} memo[MEMO];
static _Thread_local int memo_next;

int tuna_select_alltoallv(const tuna_select_input *in, tuna_choice *out)
{
    load_once();
    if (sel.rc != MPI_SUCCESS)
        return load_error();
    for (int i = 0; i < MEMO; i++)
        if (memo[i].used && same_input(&memo[i].in, in)) {
            *out = memo[i].out;
            return MPI_SUCCESS;
        }
    tuna_choice c = {.algorithm = -1};
    const tuna_tuning_entry *e =
        tuna_tuning_find(&sel.tuning[TUNA_ALLTOALLV], in->P, in->Q,
                         tuna_select_size_bucket(in->max_block),
                         tuna_select_sparsity_bucket(in->zero_fraction));
    if (e) {
        const tuna_algorithm_info *info = &tuna_a2av_table[e->opt.algorithm].info;
        c.algorithm = e->opt.algorithm;
        for (int i = 0; i < info->nparams; i++)
            c.param[i] = tuna_coll_resolve_param(&info->params[i], e->opt.value[i], in->P);
        c.predicted = is_vendor(c.algorithm)
                          ? vendor_time(in)
                          : tuna_model_alltoallv(&sel.profile, in, c.algorithm, c.param);
        if (c.predicted < 0) /* vendor without a model */
            c.predicted = 0;
        c.from_table = true;
    } else {
        model_choice(in, &c);
    }
    if (c.algorithm < 0)
        return tuna_error_set(MPI_ERR_INTERN, "auto: no candidate algorithm");
    memo[memo_next].in = *in;
    memo[memo_next].out = c;
    memo[memo_next].used = true;
    memo_next = (memo_next + 1) % MEMO;
    *out = c;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ allgather / allreduce */

static _Thread_local struct {
    tuna_collective coll;
    tuna_select_input in;
    double bytes;
    bool commute;
    tuna_choice out;
    bool used;
} coll_memo[MEMO];
static _Thread_local int coll_memo_next;

static double coll_cost(tuna_collective coll, const tuna_select_input *in, double bytes,
                        bool commute, int alg, const long *param)
{
    return coll == TUNA_ALLGATHER
               ? tuna_model_allgather(&sel.profile, in, bytes, alg, param)
               : tuna_model_allreduce(&sel.profile, in, bytes, commute, alg, param);
}

/* Row `alg` of allgather / allreduce over its k grid, into best (kept if strictly better). */
static void coll_row_best(tuna_collective coll, const tuna_select_input *in, double bytes,
                          bool commute, int alg, tuna_choice *best)
{
    const tuna_algorithm_info *info = tuna_algorithm_get(coll, alg);
    long param[TUNA_MAX_PARAMS] = {0}, v[GRID_MAX];
    int nv = 1;
    v[0] = 0;
    if (info->nparams == 1) /* k: the radix grid over [2, P] */
        nv = radix_grid(in->P < 2 ? 2 : in->P, v);
    for (int i = 0; i < nv; i++) {
        param[0] = v[i];
        double t = coll_cost(coll, in, bytes, commute, alg, param);
        if (t < 0)
            continue;
        if (best->algorithm < 0 || t < best->predicted * (1 - 1e-12)) {
            best->algorithm = alg;
            memset(best->param, 0, sizeof best->param);
            for (int p = 0; p < info->nparams; p++)
                best->param[p] = param[p];
            best->predicted = t;
        }
    }
}

void tuna_select_record(const tuna_choice *c)
{
    tuna_stats_current.algorithm = c->algorithm;
    memcpy(tuna_stats_current.params, c->param, sizeof tuna_stats_current.params);
    tuna_stats_current.predicted = c->predicted;
    tuna_stats_current.auto_source = c->from_table ? 2 : 1;
}

/*
 * Whether the MPI library itself runs the model's choice: recursive doubling on short
 * vectors, as MPICH does (MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE = 2048 bytes; allgather: short
 * totals, MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE = 80 KiB, on a power-of-two communicator, Bruck
 * otherwise) and Open MPI's coll/tuned does for such sizes. Then the library's own call is
 * the same exchange with less work around it (measured: tuna's recursive doubling 0.64x the
 * library's at 16 B, P = 2), so auto hands it over. Other libraries (SMPI): never.
 */
static bool vendor_runs_it(tuna_collective coll, const tuna_select_input *in, double bytes,
                           bool commute, const tuna_choice *best)
{
    if (sel.library != TUNA_MPILIB_OPENMPI && sel.library != TUNA_MPILIB_MPICH)
        return false;
    /* recursive doubling as good as the best (ties: P = 2, where every row is one step) */
    const long k[TUNA_MAX_PARAMS] = {0};
    double t = coll_cost(coll, in, bytes, commute,
                         tuna_algorithm_find(coll, "recursive-doubling"), k);
    if (t < 0 || t > best->predicted * (1 + 1e-9))
        return false;
    if (coll == TUNA_ALLREDUCE)
        return bytes <= 2048;
    const bool pow2 = in->P > 0 && (in->P & (in->P - 1)) == 0;
    return pow2 && bytes * in->P <= 81920;
}

int tuna_select_collective(tuna_collective coll, const tuna_select_input *in, double bytes,
                           bool commute, tuna_choice *out)
{
    load_once();
    if (sel.rc != MPI_SUCCESS)
        return load_error();
    if (coll != TUNA_ALLGATHER && coll != TUNA_ALLREDUCE)
        return tuna_error_set(MPI_ERR_INTERN, "auto: collective %d has no model", (int)coll);
    for (int i = 0; i < MEMO; i++)
        if (coll_memo[i].used && coll_memo[i].coll == coll && coll_memo[i].bytes == bytes &&
            coll_memo[i].commute == commute && same_input(&coll_memo[i].in, in)) {
            *out = coll_memo[i].out;
            return MPI_SUCCESS;
        }
    tuna_choice best = {.algorithm = -1};
    /* Their inputs are dense: sparsity bucket 0; the size is the block / vector. */
    const tuna_tuning_entry *e = tuna_tuning_find(&sel.tuning[coll], in->P, in->Q,
                                                  tuna_select_size_bucket(bytes), 0);
    if (e) {
        const tuna_algorithm_info *info = tuna_algorithm_get(coll, e->opt.algorithm);
        best.algorithm = e->opt.algorithm;
        for (int i = 0; i < info->nparams; i++)
            best.param[i] = tuna_coll_resolve_param(&info->params[i], e->opt.value[i], in->P);
        double t = coll_cost(coll, in, bytes, commute, best.algorithm, best.param);
        best.predicted = t > 0 ? t : 0; /* vendor has no model */
        best.from_table = true;
    } else {
        const int n = tuna_algorithm_count(coll);
        for (int alg = 0; alg < n; alg++)
            coll_row_best(coll, in, bytes, commute, alg, &best);
        if (best.algorithm < 0)
            return tuna_error_set(MPI_ERR_INTERN, "auto: no candidate algorithm");
        if (vendor_runs_it(coll, in, bytes, commute, &best))
            best.algorithm = tuna_algorithm_find(coll, "vendor"); /* same time, lower constant */
    }
    coll_memo[coll_memo_next].coll = coll;
    coll_memo[coll_memo_next].in = *in;
    coll_memo[coll_memo_next].bytes = bytes;
    coll_memo[coll_memo_next].commute = commute;
    coll_memo[coll_memo_next].out = best;
    coll_memo[coll_memo_next].used = true;
    coll_memo_next = (coll_memo_next + 1) % MEMO;
    *out = best;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ the planner's candidates */

static bool is_auto_row(tuna_collective coll, int alg)
{
    return coll == TUNA_ALLTOALLV ? tuna_a2av_table[alg].run == tuna_a2av_auto
                                  : strcmp(tuna_algorithm_get(coll, alg)->name, "auto") == 0;
}

static bool is_vendor_row(tuna_collective coll, int alg)
{
    return coll == TUNA_ALLTOALLV ? is_vendor(alg)
                                  : strcmp(tuna_algorithm_get(coll, alg)->name, "vendor") == 0;
}

static int by_prediction(const void *x, const void *y)
{
    const tuna_choice *a = x, *b = y;
    if (a->predicted != b->predicted)
        return a->predicted < b->predicted ? -1 : 1;
    return a->algorithm - b->algorithm; /* ties: table order, as the model's choice */
}

int tuna_select_candidates(tuna_collective coll, const tuna_select_input *in, double bytes,
                           bool commute, tuna_choice *out, int max, int *count)
{
    *count = 0;
    load_once();
    if (sel.rc != MPI_SUCCESS)
        return load_error();
    const int n = tuna_algorithm_count(coll);
    tuna_choice *all = tuna_calloc((size_t)n, sizeof *all);
    if (!all)
        return tuna_error_set(MPI_ERR_NO_MEM, "planner: no memory");
    int m = 0;
    tuna_choice vendor = {.algorithm = -1};
    for (int alg = 0; alg < n; alg++) {
        if (is_auto_row(coll, alg))
            continue;
        tuna_choice best = {.algorithm = -1};
        if (is_vendor_row(coll, alg)) {
            /* Always a candidate: unmodelled, it is timed anyway (predicted 0). */
            double t = coll == TUNA_ALLTOALLV ? vendor_time(in)
                                              : coll_cost(coll, in, bytes, commute, alg,
                                                          (long[TUNA_MAX_PARAMS]){0});
            vendor = (tuna_choice){.algorithm = alg, .predicted = t > 0 ? t : 0};
            continue;
        }
        if (coll == TUNA_ALLTOALLV)
            row_best(in, alg, 0, &best);
        else
            coll_row_best(coll, in, bytes, commute, alg, &best);
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
