/*
 * auto (issue 8): every rank makes the same choice, also when each rank's own
 * counts would suggest a different one; the chosen algorithm delivers the same
 * bytes as PMPI_Alltoallv; profile and tuning-table files are validated.
 *
 *   test_auto                       agreement + correctness + file validation
 *   test_auto --expect-error        TUNA_PROFILE / TUNA_TUNING is bad: every rank must
 *                                   get MPI_ERR_ARG naming the variable, none may hang
 *   test_auto --expect-table OPTS   TUNA_TUNING has an entry for the uniform 1 KiB case
 *                                   (and tests/data/tuning_auto_p4.json's allgather and
 *                                   allreduce entries decide those collectives):
 *                                   auto must run OPTS and report auto_source = 2
 *   test_auto --expect-vendor       TUNA_PROFILE's vendor_alltoallv makes vendor's model
 *                                   best: auto must run vendor (auto_source = 1, the model's
 *                                   time) and still deliver PMPI_Alltoallv's bytes
 *   test_auto --expect-no-vendor    TUNA_PROFILE's vendor_call_overhead prices the library's
 *                                   own call above every tuna algorithm: auto must never run
 *                                   vendor (the same profile without it: --expect-vendor)
 *   test_auto --expect-reuse        TUNA_ARGCHECK=local: each choice must be the model's for
 *                                   the last agreed statistics (reduced here independently),
 *                                   or this call's on the first call, every
 *                                   TUNA_AUTO_PERIOD-th, and when that choice needs them
 *   test_auto --expect-window       the model's choice (learning off) at P = 256 never keeps
 *                                   more than TUNA_WINDOW_REQUESTS requests in flight per
 *                                   rank where a candidate within them is priced within
 *                                   TUNA_WINDOW_TOLERANCE; the rows' in-flight counts;
 *                                   between agreements a candidate costs exactly the
 *                                   allreduce it adds (the statistics-needing rows) or nothing
 */
#include "tuna_select.h"

#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The alltoallv registry: the rows auto chooses among. */
#define A2AV tuna_registry_of(TUNA_ALLTOALLV)

static int P, me, failures, cases;
static bool reuse_mode; /* --expect-reuse: auto_source 3 and 4 are valid */

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "FAIL rank %d: ", me);                                             \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb93fe51a85d9ULL;
    return x ^ (x >> 33);
}

/*
 * Count patterns that differ wildly between ranks: what a rank sees locally
 * (its own maximum, total, zeros) says "tiny and sparse" on some ranks and
 * "huge and dense" on others.
 */
enum { PAT_ONE_HEAVY, PAT_RANK_SCALED, PAT_SPARSE_SOME, PAT_POWER, PAT_UNIFORM_1K, PAT_TINY,
       PAT_N };
static const char *pat_names[PAT_N] = {"one-heavy-rank", "rank-scaled", "sparse-on-odd-ranks",
                                       "power-law-per-rank", "uniform-1KiB", "tiny"};

static int count_of(int pat, int src, int dst, int seed)
{
    uint64_t h = mix64(((uint64_t)seed << 40) ^ ((uint64_t)src << 20) ^ (uint64_t)dst);
    switch (pat) {
    case PAT_ONE_HEAVY: return src == seed % P ? 16384 + (int)(h % 4096) : (int)(h % 3);
    case PAT_RANK_SCALED: return (int)(h % (1u + (unsigned)(1 << (src % 15))));
    case PAT_SPARSE_SOME: return src % 2 ? (h % 10 == 0 ? 3000 : 0) : 1 + (int)(h % 8);
    case PAT_POWER: {
        int e = (int)(h % 17);
        return (src + dst) % 3 ? (int)((h >> 8) % 2) : (1 << e) / (1 + src % 4);
    }
    case PAT_UNIFORM_1K: return 1024;
    default: return 1 + (int)(h % 4);
    }
}

static unsigned char payload(int src, int dst, int i)
{
    return (unsigned char)(src * 31 + dst * 7 + i * 13 + 1);
}

/* Run auto once on a pattern; check bytes against PMPI and the choice against all ranks. */
static void run_pattern(int pat, int seed, const tuna_options *opt, tuna_stats *out)
{
    int *sc = malloc(sizeof(int) * 4 * (size_t)P);
    int *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    size_t st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = count_of(pat, me, j, seed);
        rc[j] = count_of(pat, j, me, seed);
        sd[j] = (int)st;
        rd[j] = (int)rt;
        st += (size_t)sc[j];
        rt += (size_t)rc[j];
    }
    unsigned char *sb = malloc(st + 1), *rb = malloc(rt + 1), *ref = malloc(rt + 1);
    for (int j = 0; j < P; j++)
        for (int i = 0; i < sc[j]; i++)
            sb[sd[j] + i] = payload(me, j, i);
    memset(rb, 0xA5, rt + 1);
    memset(ref, 0x5A, rt + 1);
    PMPI_Alltoallv(sb, sc, sd, MPI_BYTE, ref, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
    tuna_stats_enable(1);
    int err = tuna_alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, MPI_COMM_WORLD, opt);
    *out = *tuna_stats_last();
    CHECK(err == MPI_SUCCESS, "%s seed %d: error %s", pat_names[pat], seed,
          tuna_error_string(err));
    CHECK(memcmp(rb, ref, rt) == 0, "%s seed %d: received bytes differ from PMPI_Alltoallv",
          pat_names[pat], seed);
    CHECK(rb[rt] == 0xA5, "%s seed %d: write past the receive buffer", pat_names[pat], seed);

    /* Gather (algorithm, params, predicted) from every rank: all must be equal. */
    double mine[2 + TUNA_MAX_PARAMS + 1];
    mine[0] = out->algorithm;
    mine[1] = out->auto_source;
    for (int i = 0; i < TUNA_MAX_PARAMS; i++)
        mine[2 + i] = (double)out->params[i];
    mine[2 + TUNA_MAX_PARAMS] = out->predicted;
    const int n = 3 + TUNA_MAX_PARAMS;
    double *all = malloc(sizeof(double) * (size_t)n * (size_t)P);
    MPI_Allgather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int r = 1; r < P; r++)
        CHECK(memcmp(all, all + (size_t)r * n, sizeof(double) * (size_t)n) == 0,
              "%s seed %d: rank %d chose algorithm %g (params %g,%g) but rank 0 chose %g "
              "(params %g,%g)",
              pat_names[pat], seed, r, all[(size_t)r * n], all[(size_t)r * n + 2],
              all[(size_t)r * n + 3], all[0], all[2], all[3]);
    CHECK(out->auto_source >= 1 && out->auto_source <= (reuse_mode ? 4 : 2),
          "%s: auto_source = %d", pat_names[pat], out->auto_source);
    const tuna_algorithm_info *info = tuna_algorithm_get(TUNA_ALLTOALLV, out->algorithm);
    tuna_options vm; /* vendor is a model candidate when something models it */
    bool vendor_ok = out->auto_source == 2 ||
                     tuna_select_vendor_model(P, &vm) != TUNA_VENDOR_MODEL_NONE;
    CHECK(info && strcmp(info->name, "auto") != 0 &&
              (strcmp(info->name, "vendor") != 0 || vendor_ok),
          "%s: auto ran '%s'", pat_names[pat], info ? info->name : "?");
    cases++;
    free(all);
    free(sb);
    free(rb);
    free(ref);
    free(sc);
}

/* The selector's input for a pattern: statistics reduced here, not by the library. */
static tuna_select_input global_input(int pat, int seed)
{
    long long mx[2] = {0, 0}, sum[2] = {0, 0}; /* max block, max total; zeros, bytes */
    for (int j = 0; j < P; j++) {
        long long b = count_of(pat, me, j, seed);
        mx[0] = b > mx[0] ? b : mx[0];
        mx[1] += b;
        sum[0] += b == 0;
        sum[1] += b;
    }
    MPI_Allreduce(MPI_IN_PLACE, mx, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    tuna_ctx *ctx;
    tuna_ctx_get(MPI_COMM_WORLD, "test_auto", &ctx);
    double blocks = (double)P * P;
    return tuna_select_input_a2av(ctx, (double)mx[0], (double)sum[1] / blocks, (double)mx[1],
                                  (double)sum[0] / blocks, false);
}

static bool same_choice(const tuna_stats *s, const tuna_choice *c)
{
    return s->algorithm == c->algorithm && memcmp(s->params, c->param, sizeof c->param) == 0;
}

/*
 * auto agrees on the statistics on its first call, then after TUNA_AUTO_PERIOD = K[:M] calls,
 * the period doubling (up to M) while the agreed choice stays the same and going back to K
 * when it changes; in between it runs the last agreement's choice unless that choice needs
 * the statistics itself (then it agrees at once). The same rule, replayed here on statistics
 * reduced by the test, must predict every choice and its source.
 */
static void expect_reuse(const tuna_options *opt)
{
    int first, longest;
    tuna_select_auto_period(&first, &longest);
    int reused = 0, agreed = 0, countdown = 0, period = first, doubled = 0;
    bool valid = false;
    tuna_choice last = {.algorithm = -1};
    for (int round = 0; round < 2; round++)
        for (int pat = 0; pat < PAT_N; pat++)
            for (int seed = 0; seed < 3; seed++) {
                tuna_select_input in = global_input(pat, seed);
                tuna_choice want;
                tuna_stats s;
                CHECK(tuna_select_alltoallv(A2AV, &in, &want) == MPI_SUCCESS, "select");
                bool reuse = valid && countdown > 0;
                if (reuse) {
                    countdown--;
                    reuse = !(tuna_registry_row(A2AV, last.algorithm)->needs &
                              TUNA_NEEDS_GLOBAL_STATS);
                }
                run_pattern(pat, seed, round ? NULL : opt, &s); /* NULL: the default, auto */
                const tuna_choice *w = reuse ? &last : &want;
                CHECK(same_choice(&s, w) && s.auto_source == (reuse ? 3 : 1),
                      "%s seed %d: ran %s (%ld,%ld) source %d, want %s (%ld,%ld) source %d",
                      pat_names[pat], seed, tuna_algorithm_get(TUNA_ALLTOALLV, s.algorithm)->name,
                      s.params[0], s.params[1], s.auto_source,
                      tuna_algorithm_get(TUNA_ALLTOALLV, w->algorithm)->name, w->param[0],
                      w->param[1], reuse ? 3 : 1);
                if (reuse) {
                    reused++;
                    continue;
                }
                agreed++;
                tuna_select_input pending = in;
                pending.agree_pending = true; /* statistics-needing choices cost more */
                tuna_choice next;
                CHECK(tuna_select_alltoallv(A2AV, &pending, &next) == MPI_SUCCESS, "select");
                bool same = valid && next.algorithm == last.algorithm &&
                            memcmp(next.param, last.param, sizeof next.param) == 0;
                if (same && period < longest)
                    doubled++;
                period = same ? (period > longest / 2 ? longest : 2 * period) : first;
                countdown = period - 1;
                last = next;
                valid = true;
            }
    /* Both paths must have run, or this test checked only one of them. */
    CHECK(reused > 0 && agreed > 1, "reused choices %d, agreed choices %d", reused, agreed);
    /* tuna_pattern_changed(): the next call agrees (source 1) whatever the period says. */
    if (countdown > 0) {
        tuna_stats s;
        CHECK(tuna_pattern_changed(MPI_COMM_WORLD) == MPI_SUCCESS, "tuna_pattern_changed");
        run_pattern(0, 0, opt, &s);
        CHECK(s.auto_source == 1, "after tuna_pattern_changed: source %d, want 1 (agreed)",
              s.auto_source);
    } else {
        CHECK(false, "the replay ended on an agreement: tuna_pattern_changed untested");
    }
    if (me == 0)
        printf("P=%d, TUNA_AUTO_PERIOD=%d:%d: %d choices from the last agreed statistics, %d "
               "agreed, %d doublings\n",
               P, first, longest, reused, agreed, doubled);
}

/* ------------------------------------------------------------ the window */

/* Requests in flight per rank of option string `opts` at P = 256 on 8 nodes of 32 (Q = 0:
 * unequal nodes), as each algorithm's file posts them. */
static void check_inflight(const char *opts, int Q, long want)
{
    tuna_options o;
    CHECK(tuna_options_parse(opts, TUNA_ALLTOALLV, &o) == MPI_SUCCESS, "parse %s", opts);
    tuna_select_input in = {.P = 256, .Q = Q, .N = 8, .max_block = 1024, .mean_block = 1024,
                            .total_max = 256 * 1024};
    long param[TUNA_MAX_PARAMS];
    tuna_params_resolve(&tuna_registry_row(A2AV, o.algorithm)->info, o.value, in.P, param);
    long got = tuna_select_inflight(A2AV, &in, o.algorithm, param);
    CHECK(got == want, "%s (Q = %d): %ld requests in flight, want %ld", opts, Q, got, want);
}

/* The candidates the model weighed: the cheapest of all and of those within the window. */
typedef struct ranked {
    double best, best_windowed;
} ranked;

static void rank_candidate(void *arg, int alg, const long *param, double t, long inflight)
{
    (void)alg;
    (void)param;
    ranked *r = arg;
    if (r->best < 0 || t < r->best)
        r->best = t;
    if (inflight <= TUNA_WINDOW_REQUESTS && (r->best_windowed < 0 || t < r->best_windowed))
        r->best_windowed = t;
}

/* Every candidate's price, in the order the model weighs them. */
typedef struct priced {
    int n, alg[4096];
    double t[4096];
} priced;

static void keep_price(void *arg, int alg, const long *param, double t, long inflight)
{
    (void)param;
    (void)inflight;
    priced *p = arg;
    if (p->n < 4096) {
        p->alg[p->n] = alg;
        p->t[p->n++] = t;
    }
}

/*
 * Between agreements the model charges a candidate exactly what the call adds: the
 * statistics' allreduce for the rows that need it (tuna_select_agreement_time), nothing for
 * the others, so the reuse choice falls back from a statistics-needing row only where its
 * allreduce costs more than the gap.
 */
static void reuse_price_checks(void)
{
    static priced agreed, reused;
    const int Ps[] = {8, 64, 256};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
        for (double S = 16; S <= 16384; S *= 32) {
            tuna_select_input in = {.P = Ps[i], .Q = Ps[i] / 2 < 32 ? Ps[i] / 2 : 32,
                                    .max_block = S, .mean_block = S / 2,
                                    .total_max = S / 2 * Ps[i], .zero_fraction = 0.1};
            in.N = in.P / in.Q;
            agreed.n = reused.n = 0;
            tuna_select_each_alltoallv_candidate(A2AV, &in, keep_price, &agreed);
            in.agree_pending = true;
            tuna_select_each_alltoallv_candidate(A2AV, &in, keep_price, &reused);
            const double allreduce = tuna_select_agreement_time(&in);
            CHECK(agreed.n == reused.n && agreed.n > 0 && allreduce > 0,
                  "P=%d S=%g: %d candidates agreed, %d reused, allreduce %g s", in.P, S,
                  agreed.n, reused.n, allreduce);
            for (int k = 0; k < agreed.n && k < reused.n; k++) {
                const bool needs = tuna_registry_row(A2AV, agreed.alg[k])->needs &
                                   TUNA_NEEDS_GLOBAL_STATS;
                const double extra = reused.t[k] - agreed.t[k];
                CHECK(reused.alg[k] == agreed.alg[k] &&
                          fabs(extra - (needs ? allreduce : 0)) <= 1e-12,
                      "P=%d S=%g: %s costs %g s more between agreements, want %g", in.P, S,
                      tuna_registry_row(A2AV, agreed.alg[k])->info.name, extra,
                      needs ? allreduce : 0);
            }
        }
}

/*
 * --expect-window: every modelled row says how many requests it keeps in flight (checked by
 * hand against its source), and at P = 256 the model's choice (uniform and skewed blocks,
 * 16 B - 64 KiB, dense and half empty, one node, 8 nodes and unequal nodes, agreed and
 * pending statistics) keeps at most TUNA_WINDOW_REQUESTS in flight wherever a candidate
 * that does is priced within TUNA_WINDOW_TOLERANCE of the cheapest, and then is the
 * cheapest such one.
 */
static void expect_window(void)
{
    for (int alg = 0; alg < A2AV->n; alg++) {
        const tuna_algorithm *row = tuna_registry_row(A2AV, alg);
        CHECK(!row->cost || row->inflight, "%s: a cost model but no in-flight count",
              row->info.name);
    }
    check_inflight("spreadout", 32, 510);
    check_inflight("linear", 32, 510);
    check_inflight("scattered:block=32", 32, 64);
    check_inflight("scattered:block=P", 32, 510);
    check_inflight("multipair:stride=8", 32, 16);
    check_inflight("multipair-waitany:stride=255", 32, 510);
    check_inflight("multipair-testany:stride=64", 32, 128);
    check_inflight("pairwise", 32, 2);
    check_inflight("xor", 32, 2);
    check_inflight("bruck", 32, 2);
    check_inflight("padded-bruck:datatype=1", 32, 2);
    check_inflight("twophase-bruck", 32, 2);
    check_inflight("tuna:radix=16,block=15", 32, 45);      /* 15 sizes each way + 15 data */
    check_inflight("tuna:radix=16,block=4", 32, 12);
    check_inflight("tuna:radix=2,block=P", 32, 3);         /* block clamps to r - 1 */
    check_inflight("coalesced:radix=4,block=7", 32, 14);   /* 7 nodes' sizes each way */
    check_inflight("coalesced:radix=32,block=1", 32, 93);  /* 31 intra-node rounds */
    check_inflight("staggered:radix=4,block=64", 32, 128); /* a batch of 64 each way */
    check_inflight("coalesced:radix=4,block=2", 0, 6);     /* flat tuna:radix=4,block=2 */
    tuna_options vm; /* vendor: what models it */
    if (tuna_select_vendor_model(256, &vm) != TUNA_VENDOR_MODEL_NONE) {
        const long none[TUNA_MAX_PARAMS] = {0}, *vp = vm.value;
        tuna_select_input in = {.P = 256, .Q = 32, .N = 8};
        long vparam[TUNA_MAX_PARAMS];
        tuna_params_resolve(&tuna_registry_row(A2AV, vm.algorithm)->info, vp, 256, vparam);
        CHECK(tuna_select_inflight(A2AV, &in, tuna_registry_find_kind(A2AV, TUNA_ROW_VENDOR),
                                   none) ==
                  tuna_select_inflight(A2AV, &in, vm.algorithm, vparam),
              "vendor's in-flight count is not its model's");
    }

    int choices = 0, windowed = 0, beyond = 0;
    const int Qs[] = {256, 32, 0};
    for (size_t q = 0; q < sizeof Qs / sizeof *Qs; q++)
        for (double S = 16; S <= 65536; S *= 4)
            for (int skew = 0; skew < 2; skew++)
                for (int half = 0; half < 2; half++)
                    for (int pending = 0; pending < 2; pending++) {
                        const int P = 256, Q = Qs[q], N = Q ? P / Q : 8;
                        const double mean = (skew ? S / 16 : S) * (half ? 0.5 : 1);
                        tuna_select_input in = {.P = P, .Q = Q, .N = N, .max_block = S,
                                                .mean_block = mean,
                                                .total_max = skew ? S * P / 4 : S * P,
                                                .zero_fraction = half ? 0.5 : 0,
                                                .agree_pending = pending};
                        ranked r = {-1, -1};
                        tuna_select_each_alltoallv_candidate(A2AV, &in, rank_candidate, &r);
                        tuna_choice c;
                        CHECK(tuna_select_alltoallv(A2AV, &in, &c) == MPI_SUCCESS, "select");
                        const long flight = tuna_select_inflight(A2AV, &in, c.algorithm,
                                                                 c.param);
                        const bool close = r.best_windowed >= 0 &&
                                           r.best_windowed <=
                                               r.best * (1 + TUNA_WINDOW_TOLERANCE);
                        const char *name = tuna_registry_row(A2AV, c.algorithm)->info.name;
                        CHECK(flight <= TUNA_WINDOW_REQUESTS || !close,
                              "Q=%d S=%g skew %d half %d pending %d: %s (%ld, %ld) keeps %ld "
                              "requests in flight where one within %d is priced %.4g us "
                              "against %.4g",
                              Q, S, skew, half, pending, name, c.param[0], c.param[1], flight,
                              TUNA_WINDOW_REQUESTS, r.best_windowed * 1e6, r.best * 1e6);
                        const double want = close ? r.best_windowed : r.best;
                        /* (the model's ties, within 1e-12, keep the earlier candidate) */
                        CHECK(fabs(c.predicted - want) <= 1e-9 * want &&
                                  (!c.windowed || close),
                              "Q=%d S=%g skew %d half %d pending %d: %s predicted %.6g us, "
                              "cheapest %.6g, cheapest within the window %.6g (windowed %d)",
                              Q, S, skew, half, pending, name, c.predicted * 1e6, r.best * 1e6,
                              r.best_windowed * 1e6, c.windowed);
                        choices++;
                        windowed += c.windowed;
                        beyond += flight > TUNA_WINDOW_REQUESTS;
                    }
    /* The built-in profile's 1 KiB uniform choice at P = 256 was every pair in flight. */
    CHECK(windowed > 0, "the window changed none of %d choices: the rule is untested", choices);
    printf("P=256: %d model choices, %d moved into the window of %d requests, %d beyond it "
           "(nothing within %.0f%%)\n",
           choices, windowed, TUNA_WINDOW_REQUESTS, beyond, 100 * TUNA_WINDOW_TOLERANCE);
    cases += choices;
    reuse_price_checks();
}

/* ------------------------------------------------------------ file validation (rank 0) */

static const char *write_tmp(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "/tmp/tuna_test_auto_%d_%s.json", (int)getpid(), name);
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    fputs(text, f);
    fclose(f);
    return path;
}

static const char *good_levels =
    "\"intra\": {\"latency\": 1e-6, \"overhead\": 1e-7, \"gap\": 0, \"bandwidth\": 1e10}, "
    "\"inter\": {\"latency\": 2e-6, \"overhead\": 2e-7, \"gap\": 1e-7, \"bandwidth\": 1e10}";

static void check_profile(const char *name, const char *text, bool ok, const char *needle)
{
    char buf[2048];
    snprintf(buf, sizeof buf, text, good_levels);
    const char *path = write_tmp(name, buf);
    tuna_profile p;
    tuna_error_clear();
    int rc = tuna_profile_load(path, &p);
    CHECK((rc == MPI_SUCCESS) == ok, "profile case %s: rc %d (%s)", name, rc,
          rc ? tuna_error_string(rc) : "success");
    if (!ok && rc != MPI_SUCCESS && needle)
        CHECK(strstr(tuna_error_string(rc), needle) != NULL,
              "profile case %s: message '%s' does not mention '%s'", name,
              tuna_error_string(rc), needle);
    remove(path);
}

static void check_tuning(const char *name, const char *text, bool ok, const char *needle)
{
    const char *path = write_tmp(name, text);
    tuna_tuning t = {0};
    tuna_error_clear();
    int rc = tuna_tuning_load(path, TUNA_ALLTOALLV, &t);
    CHECK((rc == MPI_SUCCESS) == ok, "tuning case %s: rc %d (%s)", name, rc,
          rc ? tuna_error_string(rc) : "success");
    if (!ok && rc != MPI_SUCCESS && needle)
        CHECK(strstr(tuna_error_string(rc), needle) != NULL,
              "tuning case %s: message '%s' does not mention '%s'", name,
              tuna_error_string(rc), needle);
    if (rc == MPI_SUCCESS)
        tuna_tuning_free(&t);
    remove(path);
}

static void file_validation(void)
{
    tuna_profile p;
    CHECK(tuna_profile_load("/nonexistent/tuna_profile.json", &p) == MPI_ERR_ARG,
          "missing profile file accepted");
    check_profile("good", "{\"tuna_profile\": 1, \"name\": \"t\", %s, \"nics_per_node\": 2}",
                  true, NULL);
    check_profile("syntax", "{\"tuna_profile\": 1, %s", false, "line");
    check_profile("empty", "", false, NULL);
    check_profile("array", "[1, 2] %s", false, NULL);
    check_profile("version", "{\"tuna_profile\": 2, %s}", false, "tuna_profile");
    check_profile("typo", "{\"tuna_profile\": 1, %s, \"nic_per_node\": 2}", false,
                  "nic_per_node");
    check_profile("nics0", "{\"tuna_profile\": 1, %s, \"nics_per_node\": 0}", false,
                  "nics_per_node");
    check_profile("missing-level", "{\"tuna_profile\": 1, \"intra\": {\"latency\": 1e-6, "
                                   "\"overhead\": 0, \"gap\": 0, \"bandwidth\": 1e9}}",
                  false, "inter");
    check_profile("neg-bw", "{\"tuna_profile\": 1, \"intra\": {\"latency\": 1e-6, "
                            "\"overhead\": 0, \"gap\": 0, \"bandwidth\": -1}, "
                            "\"inter\": {\"latency\": 1e-6, \"overhead\": 0, \"gap\": 0, "
                            "\"bandwidth\": 1e9}}",
                  false, "bandwidth");
    check_profile("zero-bw", "{\"tuna_profile\": 1, \"intra\": {\"latency\": 1e-6, "
                             "\"overhead\": 0, \"gap\": 0, \"bandwidth\": 0}, "
                             "\"inter\": {\"latency\": 1e-6, \"overhead\": 0, \"gap\": 0, "
                             "\"bandwidth\": 1e9}}",
                  false, "bandwidth");
    check_profile("eager-good", "{\"tuna_profile\": 1, %s, \"eager_limit\": 65536}", true,
                  NULL);
    check_profile("eager-negative", "{\"tuna_profile\": 1, %s, \"eager_limit\": -1}", false,
                  "eager_limit");
    check_profile("eager-string", "{\"tuna_profile\": 1, %s, \"eager_limit\": \"64K\"}",
                  false, "eager_limit");
    check_profile("string", "{\"tuna_profile\": 1, %s, \"copy_bandwidth\": \"fast\"}", false,
                  "copy_bandwidth");
    check_profile("dup", "{\"tuna_profile\": 1, %s, \"name\": \"a\", \"name\": \"b\"}", false,
                  NULL);
    /* vendor_alltoallv: a tuna alltoallv option string (not vendor or auto). */
    check_profile("vendor-good", "{\"tuna_profile\": 1, %s, \"vendor_alltoallv\": "
                                 "\"scattered:block=32\"}",
                  true, NULL);
    check_profile("vendor-symbolic", "{\"tuna_profile\": 1, %s, \"vendor_alltoallv\": "
                                     "\"tuna:radix=sqrtP\"}",
                  true, NULL);
    check_profile("vendor-bad-alg", "{\"tuna_profile\": 1, %s, \"vendor_alltoallv\": "
                                    "\"nosuch\"}",
                  false, "nosuch");
    check_profile("vendor-bad-alg-key", "{\"tuna_profile\": 1, %s, \"vendor_alltoallv\": "
                                        "\"nosuch\"}",
                  false, "vendor_alltoallv");
    check_profile("vendor-bad-param", "{\"tuna_profile\": 1, %s, \"vendor_alltoallv\": "
                                      "\"scattered:block=0\"}",
                  false, "block");
    check_profile("vendor-unknown-param", "{\"tuna_profile\": 1, %s, \"vendor_alltoallv\": "
                                          "\"scattered:radix=4\"}",
                  false, "radix");
    check_profile("vendor-self", "{\"tuna_profile\": 1, %s, \"vendor_alltoallv\": "
                                 "\"vendor\"}",
                  false, "vendor_alltoallv");
    check_profile("vendor-auto", "{\"tuna_profile\": 1, %s, \"vendor_alltoallv\": \"auto\"}",
                  false, "vendor_alltoallv");
    check_profile("agreement-good", "{\"tuna_profile\": 1, %s, \"agreement\": "
                                    "{\"per_round\": 2e-6, \"per_rank\": 1e-7}}",
                  true, NULL);
    check_profile("agreement-negative", "{\"tuna_profile\": 1, %s, \"agreement\": "
                                        "{\"per_round\": -1, \"per_rank\": 0}}",
                  false, "agreement.per_round");
    check_profile("agreement-missing", "{\"tuna_profile\": 1, %s, \"agreement\": "
                                       "{\"per_round\": 1e-6}}",
                  false, "agreement.per_rank");
    check_profile("agreement-typo", "{\"tuna_profile\": 1, %s, \"agreement\": "
                                    "{\"per_round\": 1e-6, \"per_rank\": 0, \"rounds\": 3}}",
                  false, "agreement.rounds");
    check_profile("agreement-number", "{\"tuna_profile\": 1, %s, \"agreement\": 3}", false,
                  "agreement");
    check_profile("vendor-number", "{\"tuna_profile\": 1, %s, \"vendor_alltoallv\": 3}",
                  false, "vendor_alltoallv");
    /* network: a torus of at most TUNA_NET_MAX_NODES nodes, TUNA_TORUS_MAX_DIMS dims. */
    check_profile("network-good", "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": "
                                  "\"torus\", \"dims\": [8, 8, 8], \"link_bandwidth\": 6.8e9}}",
                  true, NULL);
    check_profile("network-topology", "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": "
                                      "\"mesh\", \"dims\": [8], \"link_bandwidth\": 1e9}}",
                  false, "network.topology");
    check_profile("network-dims-empty", "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": "
                                        "\"torus\", \"dims\": [], \"link_bandwidth\": 1e9}}",
                  false, "network.dims");
    check_profile("network-dims-zero", "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": "
                                       "\"torus\", \"dims\": [4, 0], \"link_bandwidth\": 1e9}}",
                  false, "network.dims");
    check_profile("network-dims-float", "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": "
                                        "\"torus\", \"dims\": [4.5], \"link_bandwidth\": 1e9}}",
                  false, "network.dims");
    check_profile("network-too-big", "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": "
                                     "\"torus\", \"dims\": [16, 16, 16], \"link_bandwidth\": 1e9}}",
                  false, "at most");
    check_profile("network-too-many-dims",
                  "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": \"torus\", "
                  "\"dims\": [2, 2, 2, 2, 2, 2, 2], \"link_bandwidth\": 1e9}}",
                  false, "network.dims");
    check_profile("network-no-bw", "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": "
                                   "\"torus\", \"dims\": [8]}}",
                  false, "network.link_bandwidth");
    check_profile("network-zero-bw", "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": "
                                     "\"torus\", \"dims\": [8], \"link_bandwidth\": 0}}",
                  false, "network.link_bandwidth");
    check_profile("network-typo", "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": "
                                  "\"torus\", \"dim\": [8], \"link_bandwidth\": 1e9}}",
                  false, "network.dim");
    check_profile("network-array", "{\"tuna_profile\": 1, %s, \"network\": [8, 8]}", false,
                  "network");
    /* network: a dragonfly (SimGrid's G,GL;C,CL;R,RL;n as named arrays). */
#define DF_PROFILE(body) "{\"tuna_profile\": 1, %s, \"network\": {\"topology\": \"dragonfly\", " body "}}"
    check_profile("dragonfly-good",
                  DF_PROFILE("\"groups\": [8, 2], \"chassis\": [2, 2], \"routers\": [4, 1], "
                             "\"nodes_per_router\": 8, \"link_bandwidth\": 5e10"),
                  true, NULL);
    check_profile("dragonfly-no-routers",
                  DF_PROFILE("\"groups\": [8, 2], \"chassis\": [2, 2], "
                             "\"nodes_per_router\": 8, \"link_bandwidth\": 5e10"),
                  false, "network.routers");
    check_profile("dragonfly-one-number",
                  DF_PROFILE("\"groups\": [8], \"chassis\": [2, 2], \"routers\": [4, 1], "
                             "\"nodes_per_router\": 8, \"link_bandwidth\": 5e10"),
                  false, "network.groups");
    check_profile("dragonfly-zero-links",
                  DF_PROFILE("\"groups\": [8, 2], \"chassis\": [2, 0], \"routers\": [4, 1], "
                             "\"nodes_per_router\": 8, \"link_bandwidth\": 5e10"),
                  false, "network.chassis");
    check_profile("dragonfly-too-big",
                  DF_PROFILE("\"groups\": [16, 2], \"chassis\": [2, 2], \"routers\": [4, 1], "
                             "\"nodes_per_router\": 16, \"link_bandwidth\": 5e10"),
                  false, "at most");
    check_profile("dragonfly-torus-key",
                  DF_PROFILE("\"dims\": [8], \"groups\": [8, 2], \"chassis\": [2, 2], "
                             "\"routers\": [4, 1], \"nodes_per_router\": 8, "
                             "\"link_bandwidth\": 5e10"),
                  false, "network.dims");
    check_profile("dragonfly-no-nodes",
                  DF_PROFILE("\"groups\": [8, 2], \"chassis\": [2, 2], \"routers\": [4, 1], "
                             "\"link_bandwidth\": 5e10"),
                  false, "network.nodes_per_router");
#undef DF_PROFILE
    {
        char buf[1024];
        snprintf(buf, sizeof buf,
                 "{\"tuna_profile\": 1, %s, \"vendor_alltoallv\": \"scattered:block=4\"}",
                 good_levels);
        const char *path = write_tmp("vendor-value", buf);
        tuna_profile vp;
        tuna_options want;
        tuna_options_parse("scattered:block=4", TUNA_ALLTOALLV, &want);
        CHECK(tuna_profile_load(path, &vp) == MPI_SUCCESS && vp.has_vendor_alltoallv &&
                  vp.vendor_alltoallv.algorithm == want.algorithm &&
                  vp.vendor_alltoallv.value[0] == 4,
              "vendor_alltoallv not stored");
        remove(path);
        check_profile("vendor-absent", "{\"tuna_profile\": 1, %s}", true, NULL);
    }
    /* The built-in guesses (docs/tuning.md): library strings and their algorithms. */
    {
        tuna_options o;
        char txt[64];
        CHECK(tuna_mpi_library_detect("Open MPI v4.1.4, package: Debian OpenMPI") ==
                      TUNA_MPILIB_OPENMPI &&
                  tuna_mpi_library_detect("MPICH Version:\t4.0.2\nMPICH Release") ==
                      TUNA_MPILIB_MPICH &&
                  tuna_mpi_library_detect("SMPI Version 3.32. Copyright") == TUNA_MPILIB_SMPI &&
                  tuna_mpi_library_detect("Intel(R) MPI Library 2021") == TUNA_MPILIB_UNKNOWN &&
                  tuna_mpi_library_detect(NULL) == TUNA_MPILIB_UNKNOWN,
              "library detection");
        CHECK(tuna_vendor_alltoallv_guess(TUNA_MPILIB_UNKNOWN, 8, &o) == TUNA_VENDOR_GUESS_NONE,
              "unknown library guessed");
        struct { tuna_mpi_library lib; int P; int how; const char *alg; } g[] = {
            {TUNA_MPILIB_OPENMPI, 2, TUNA_VENDOR_GUESS_BY_P, "pairwise"},
            {TUNA_MPILIB_OPENMPI, 8, TUNA_VENDOR_GUESS_BY_P, "linear"},
            {TUNA_MPILIB_OPENMPI, 64, TUNA_VENDOR_GUESS_BY_P, "pairwise"},
            {TUNA_MPILIB_OPENMPI, 1024, TUNA_VENDOR_GUESS_BY_P, "linear"},
            {TUNA_MPILIB_MPICH, 64, TUNA_VENDOR_GUESS_FIXED, "scattered:block=32"},
            {TUNA_MPILIB_SMPI, 64, TUNA_VENDOR_GUESS_FIXED, "linear"},
        };
        for (size_t i = 0; i < sizeof g / sizeof *g; i++) {
            int how = tuna_vendor_alltoallv_guess(g[i].lib, g[i].P, &o);
            txt[0] = '\0';
            tuna_options_format(&o, txt, sizeof txt);
            CHECK(how == g[i].how && strcmp(txt, g[i].alg) == 0,
                  "guess for %s at P=%d: %d '%s', want '%s'", tuna_mpi_library_name(g[i].lib),
                  g[i].P, how, txt, g[i].alg);
        }
    }

    const char *head = "{\"tuna_tuning\": 1, \"collective\": \"alltoallv\", \"entries\": [";
    char buf[1024];
#define TUNING(name, entries, ok, needle)                                                      \
    do {                                                                                       \
        snprintf(buf, sizeof buf, "%s%s]}", head, entries);                                    \
        check_tuning(name, buf, ok, needle);                                                   \
    } while (0)
    TUNING("good", "{\"P\": 4, \"ranks_per_node\": 4, \"size_bucket\": 10, "
                   "\"sparsity_bucket\": 0, \"options\": \"tuna:radix=2\", \"time\": 1e-5}",
           true, NULL);
    TUNING("empty", "", true, NULL);
    TUNING("bad-alg", "{\"P\": 4, \"ranks_per_node\": 4, \"size_bucket\": 10, "
                      "\"sparsity_bucket\": 0, \"options\": \"nosuch\"}",
           false, "nosuch");
    TUNING("bad-param", "{\"P\": 4, \"ranks_per_node\": 4, \"size_bucket\": 10, "
                        "\"sparsity_bucket\": 0, \"options\": \"tuna:radix=1\"}",
           false, "radix");
    TUNING("auto", "{\"P\": 4, \"ranks_per_node\": 4, \"size_bucket\": 10, "
                   "\"sparsity_bucket\": 0, \"options\": \"auto\"}",
           false, "auto");
    TUNING("bucket", "{\"P\": 4, \"ranks_per_node\": 4, \"size_bucket\": 10, "
                     "\"sparsity_bucket\": 4, \"options\": \"xor\"}",
           false, "sparsity_bucket");
    TUNING("missing", "{\"P\": 4, \"size_bucket\": 10, \"sparsity_bucket\": 0, "
                      "\"options\": \"xor\"}",
           false, "ranks_per_node");
    TUNING("unknown-key", "{\"P\": 4, \"ranks_per_node\": 4, \"size_bucket\": 10, "
                          "\"sparsity_bucket\": 0, \"options\": \"xor\", \"colour\": 1}",
           false, "colour");
    TUNING("repeat", "{\"P\": 4, \"ranks_per_node\": 4, \"size_bucket\": 10, "
                     "\"sparsity_bucket\": 0, \"options\": \"xor\"}, {\"P\": 4, "
                     "\"ranks_per_node\": 4, \"size_bucket\": 10, \"sparsity_bucket\": 0, "
                     "\"options\": \"pairwise\"}",
           false, "repeats");
    TUNING("not-object", "3", false, "entries[0]");
    check_tuning("other-collective",
                 "{\"tuna_tuning\": 1, \"collective\": \"allreduce\", \"entries\": []}", false,
                 "collective");
    check_tuning("no-entries", "{\"tuna_tuning\": 1}", false, "entries");

    /* Version 2: ranges, first match, allgather / allreduce entries (docs/tuning.md). */
    check_tuning("v1-entry-collective",
                 "{\"tuna_tuning\": 1, \"entries\": [{\"collective\": \"allgather\", \"P\": 4, "
                 "\"ranks_per_node\": 4, \"size_bucket\": 10, \"sparsity_bucket\": 0, "
                 "\"options\": \"ring\"}]}",
                 false, "version 2");
    check_tuning("v2-reversed-range",
                 "{\"tuna_tuning\": 2, \"entries\": [{\"P\": [8, 4], \"ranks_per_node\": 4, "
                 "\"size_bucket\": 10, \"sparsity_bucket\": 0, \"options\": \"xor\"}]}",
                 false, "entries[0].P");
    check_tuning("v2-shadowed",
                 "{\"tuna_tuning\": 2, \"entries\": [{\"P\": [1, null], \"ranks_per_node\": "
                 "[0, null], \"size_bucket\": [0, 20], \"sparsity_bucket\": [0, 3], \"options\": "
                 "\"xor\"}, {\"P\": 64, \"ranks_per_node\": 32, \"size_bucket\": 10, "
                 "\"sparsity_bucket\": 0, \"options\": \"linear\"}]}",
                 false, "never used");
    check_tuning("v2-allgather-options",
                 "{\"tuna_tuning\": 2, \"entries\": [{\"collective\": \"allgather\", \"P\": 4, "
                 "\"ranks_per_node\": 4, \"size_bucket\": 10, \"options\": \"tuna:radix=2\"}]}",
                 false, "allgather");
    {
        const char *text =
            "{\"tuna_tuning\": 2, \"entries\": ["
            "{\"P\": [60, 64], \"ranks_per_node\": [0, null], \"size_bucket\": 10, "
            "\"sparsity_bucket\": [0, 3], \"options\": \"xor\"},"
            "{\"P\": [1, null], \"ranks_per_node\": [0, null], \"size_bucket\": [0, null], "
            "\"sparsity_bucket\": [0, 3], \"options\": \"pairwise\"},"
            "{\"collective\": \"allgather\", \"P\": 64, \"ranks_per_node\": 32, "
            "\"size_bucket\": [4, 8], \"options\": \"kring:k=4\"},"
            "{\"collective\": \"allreduce\", \"P\": [2, 128], \"ranks_per_node\": [0, null], "
            "\"size_bucket\": [0, null], \"options\": \"recmul:k=4\"}]}";
        const char *path = write_tmp("v2-ranges", text);
        tuna_tuning a2a = {0}, ag = {0}, ar = {0};
        int rc = tuna_tuning_load(path, TUNA_ALLTOALLV, &a2a) |
                 tuna_tuning_load(path, TUNA_ALLGATHER, &ag) |
                 tuna_tuning_load(path, TUNA_ALLREDUCE, &ar);
        CHECK(rc == MPI_SUCCESS && a2a.n == 2 && ag.n == 1 && ar.n == 1,
              "v2 table: rc %d, %d / %d / %d entries", rc, a2a.n, ag.n, ar.n);
        if (rc == MPI_SUCCESS) {
            /* a P = 64 key reaches P = 63 through its range; the catch-all comes second */
            const tuna_tuning_entry *e63 = tuna_tuning_find(&a2a, 63, 32, 10, 2);
            const tuna_tuning_entry *e65 = tuna_tuning_find(&a2a, 65, 32, 10, 2);
            const tuna_tuning_entry *small = tuna_tuning_find(&a2a, 63, 32, 4, 0);
            CHECK(e63 == &a2a.entries[0] && e65 == &a2a.entries[1] &&
                      small == &a2a.entries[1],
                  "first match: P=63 -> %td, P=65 -> %td, size bucket 4 -> %td",
                  e63 ? e63 - a2a.entries : -1, e65 ? e65 - a2a.entries : -1,
                  small ? small - a2a.entries : -1);
            CHECK(tuna_tuning_find(&ag, 64, 32, 6, 0) && !tuna_tuning_find(&ag, 64, 16, 6, 0) &&
                      !tuna_tuning_find(&ag, 64, 32, 9, 0) &&
                      ag.entries[0].opt.algorithm == tuna_algorithm_find(TUNA_ALLGATHER, "kring"),
                  "allgather entry: exact Q, size range [4, 8]");
            CHECK(tuna_tuning_find(&ar, 128, 7, 30, 0) && !tuna_tuning_find(&ar, 129, 7, 30, 0),
                  "allreduce entry: P range [2, 128]");
            CHECK(a2a.digest != ag.digest, "tables of different entries have one digest");
        }
        tuna_tuning_free(&a2a);
        tuna_tuning_free(&ag);
        tuna_tuning_free(&ar);
        remove(path);
    }
    check_tuning("syntax", "{\"tuna_tuning\": 1, \"entries\": [", false, "line");

    /* Buckets: the documented rule. */
    CHECK(tuna_select_size_bucket(0) == 0 && tuna_select_size_bucket(1) == 0 &&
              tuna_select_size_bucket(2) == 1 && tuna_select_size_bucket(1024) == 10 &&
              tuna_select_size_bucket(1025) == 11,
          "size buckets");
    CHECK(tuna_select_sparsity_bucket(0) == 0 && tuna_select_sparsity_bucket(0.25) == 1 &&
              tuna_select_sparsity_bucket(0.99) == 3 && tuna_select_sparsity_bucket(1) == 3,
          "sparsity buckets");
}

/* One network-load case: P ranks, Q per node, N nodes, distances d0..d1 by step, and the
 * busiest link's load counted by hand. */
typedef struct net_case {
    int P, Q, N;
    long d0, d1, step;
    double want;
} net_case;

/* Every case of `c` against tuna_model_net_load() on `prof`, within abs + rel * want. */
static void check_net_loads(const tuna_profile *prof, const char *label, const net_case *c,
                            size_t n, double abs_tol, double rel_tol)
{
    for (size_t i = 0; i < n; i++) {
        double got = tuna_model_net_load(prof, c[i].P, c[i].Q, c[i].N, c[i].d0, c[i].d1,
                                         c[i].step);
        CHECK(fabs(got - c[i].want) < abs_tol + rel_tol * c[i].want,
              "%s load case %zu (P=%d N=%d d=%ld..%ld/%ld): %g, want %g", label, i, c[i].P,
              c[i].N, c[i].d0, c[i].d1, c[i].step, got, c[i].want);
    }
}

/*
 * The network term against link loads counted by hand (SimGrid's dimension-order routing,
 * each dimension the shorter way, nodes 0..N-1 first dimension fastest).
 */
static void network_checks(void)
{
    tuna_profile t;
    tuna_profile_builtin(&t);
    CHECK(tuna_model_net_load(&t, 64, 32, 2, 1, 63, 1) == 0, "no torus, yet a network term");
    t.net_topology = TUNA_NET_TORUS;
    t.net_ndims = 3;
    t.net_dims[0] = t.net_dims[1] = t.net_dims[2] = 8;
    t.net_link_bandwidth = 1e9;
    const net_case c[] = {
        /* two nodes: every off-node byte of node 0 crosses the one link 0 -> 1 */
        {64, 32, 2, 1, 63, 1, 1.0},
        {64, 32, 2, 32, 32, 1, 1.0},
        /* distance 16 of 32 per node: half the ranks cross, all on the same link */
        {64, 32, 2, 16, 16, 1, 1.0},
        /* a full ring of 8, shift by one node: each up-link carries one node's traffic */
        {256, 32, 8, 32, 32, 1, 1.0},
        /* shift by 3 nodes: each up-link is on 3 routes */
        {256, 32, 8, 96, 96, 1, 3.0},
        /* shift by 4 (half-way): nodes 0-3 and 5-7 go up, node 4 down; the up-links of
         * nodes 0..3 are on 4 routes, those of 4..7 on 3 */
        {256, 32, 8, 128, 128, 1, 4.0},
        /* all 7 node shifts equally (ranks sending to the same local rank everywhere): shifts
         * 1-4 go up, 5-7 down; the up-link 0 -> 1 is on 1 + 2 + 3 + 4 routes (shift 4: from
         * nodes 0, 5, 6, 7), the down-links on 1 + 2 + 3 (+ 1 for node 4's shift 4) */
        {256, 32, 8, 32, 224, 32, 10.0 / 7},
        /* 16 nodes = two rings of 8 in x, stacked in y: shift by 8 = one hop in y */
        {512, 32, 16, 256, 256, 1, 1.0},
        /* nothing off-node */
        {64, 32, 2, 64, 64, 1, 0.0},
        /* unequal nodes (P != N Q): not modelled */
        {60, 32, 2, 1, 59, 1, 0.0},
        /* more nodes than the torus has: not modelled */
        {1026, 1, 1026, 1, 1, 1, 0.0},
    };
    check_net_loads(&t, "torus", c, sizeof c / sizeof *c, 1e-6, 0);
    /* A Polaris-like dragonfly (SimGrid "8,2;2,2;4,1;8": 8 nodes per router, 4 routers per
     * chassis joined by 1 green link each, 2 chassis per group joined by 2 black links per
     * blade, 8 groups with 2 blue links per pair), loads in units of one node's off-node
     * bytes over one cable. */
    tuna_profile df;
    tuna_profile_builtin(&df);
    df.net_topology = TUNA_NET_DRAGONFLY;
    df.net_ndims = 7;
    const int shape[7] = {8, 2, 2, 2, 4, 1, 8};
    memcpy(df.net_dims, shape, sizeof shape);
    df.net_link_bandwidth = 5e10;
    const net_case g[] = {
        /* 8 nodes on one router: only the node links, each carrying its node's bytes */
        {256, 32, 8, 1, 255, 1, 1.0},
        /* 16 nodes, shift by 8 nodes: router 0's 8 nodes all cross its green link to blade 1 */
        {512, 32, 16, 256, 256, 1, 8.0},
        /* 32 nodes (one chassis), every node shift equally: 8 nodes x 8 targets behind each
         * green link, each shift 1/31 of the bytes */
        {1024, 32, 32, 32, 992, 32, 64.0 / 31},
        /* 64 nodes (two chassis), shift by 32: the same blade of the other chassis, 8 nodes
         * on each black link of 2 cables */
        {2048, 32, 64, 1024, 1024, 1, 4.0},
        /* 128 nodes (two groups), shift by 64: all 64 nodes of a group on its one blue link
         * to the other group (2 cables) */
        {4096, 32, 128, 2048, 2048, 1, 32.0},
        /* 1024 nodes at one rank each need groups 8..15: more than the dragonfly has */
        {1024, 1, 1024, 1, 1, 1, 0.0},
    };
    check_net_loads(&df, "dragonfly", g, sizeof g / sizeof *g, 1e-9, 1e-5);
    /* The phase: node 0's 32 ranks send 1 MB each over the one link at 1 GB/s: 32 ms. */
    const tuna_model_layout two_nodes = {.P = 64, .Q = 32, .Qeq = 32, .N = 2};
    double ph = tuna_model_phase(&t, &two_nodes, 1, 1e6, 1e6, 1.0, 32, 32, 1);
    CHECK(fabs(ph - 32e-3) < 1e-3, "phase with the network term: %g s, want about 0.032", ph);
}

/* The phase's two protocols, hand-computed on one node (L = 1 us, o = 0.2 us a message,
 * 1 GB/s, no gap): eager max(m o, L + W + o), rendezvous L + m o / 2 + max(m o / 2, W); W
 * counts a 16-byte envelope per message (SMPI's; 100 messages: 1.6 us). */
static void phase_protocol_checks(void)
{
    tuna_profile p;
    tuna_profile_builtin(&p);
    p.intra = (tuna_level_profile){1e-6, 2e-7, 0, 1e9};
    const tuna_model_layout one_node = {.P = 64, .Q = 64, .Qeq = 64, .N = 1};
    static const struct {
        double eager_limit, m, bytes, want;
    } c[] = {
        {0, 100, 100, 21e-6},        /* rendezvous, overhead-bound: 1 + 10 + 10 (W = 0.1) */
        {0, 100, 4e4, 52.6e-6},      /* rendezvous, bandwidth-bound: 1 + 10 + 41.6 */
        {1e4, 100, 100, 20e-6},      /* eager, overhead-bound: 100 x 0.2 */
        {1e4, 100, 4e4, 42.8e-6},    /* eager, bandwidth-bound: 1 + 41.6 + 0.2 */
        {1e4, 1, 4096, 5.312e-6},    /* one eager message: 1 + 4.112 + 0.2 */
        {1e4, 10, 100, 2.1e-6},      /* eager, 10 small ones: 1 + 0.2 + 9 x 0.1 (> m o = 2) */
        {100, 100, 4e4, 52.6e-6},    /* 400-byte messages above the limit: rendezvous */
        {400, 100, 4e4, 42.8e-6},    /* at the limit: eager */
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        p.eager_limit = c[i].eager_limit;
        double t = tuna_model_phase(&p, &one_node, c[i].m, c[i].bytes, c[i].bytes, 0, 1, 1, 1);
        CHECK(fabs(t - c[i].want) < 1e-12, "phase case %zu (eager limit %g, %g messages, %g "
              "bytes): %.6g s, want %.6g", i, c[i].eager_limit, c[i].m, c[i].bytes, t,
              c[i].want);
    }
    /* Off-node and bound by the NIC all messages share (two nodes of 32, one NIC of 1 GB/s,
     * no network): with 9 of the 10 receives completed only after the others, their receive
     * halves (0.1 us each) follow the transfer: 1 + 0.2 + 32 x 10160 B / 1 GB/s + 0.9. */
    tuna_profile_builtin(&p);
    p.inter = (tuna_level_profile){1e-6, 2e-7, 0, 1e9};
    p.intra.gap = 0;
    p.nics_per_node = 1;
    p.net_ndims = 0;
    p.eager_limit = 1e4;
    const tuna_model_layout two = {.P = 64, .Q = 32, .Qeq = 32, .N = 2};
    double late = tuna_model_phase_late(&p, &two, 10, 9, 1e4, 1e4, 1.0, 32, 32, 1);
    CHECK(fabs(late - 327.22e-6) < 1e-12, "eager phase with 9 late receives: %.6g s, want "
          "327.22e-6", late);
    double none = tuna_model_phase(&p, &two, 10, 1e4, 1e4, 1.0, 32, 32, 1);
    CHECK(fabs(none - 326.32e-6) < 1e-12, "eager phase: %.6g s, want 326.32e-6", none);
    /* Whole algorithms (64 ranks on 2 nodes, 1 KiB blocks): the eager limit speeds up the
     * exchanges whose receives are posted first, never TuNA's rounds (posted late). */
    tuna_select_input in = {.P = 64, .Q = 32, .N = 2, .max_block = 1024, .mean_block = 1024,
                            .total_max = 64 * 1024};
    const char *algs[] = {"spreadout", "tuna:radix=4,block=3", "scattered:block=4"};
    for (int k = 0; k < 3; k++) {
        tuna_options opt;
        CHECK(tuna_options_parse(algs[k], TUNA_ALLTOALLV, &opt) == MPI_SUCCESS, "%s", algs[k]);
        tuna_profile_builtin(&p);
        double rdv = tuna_model_cost(A2AV, &p, &in, opt.algorithm, opt.value);
        p.eager_limit = 65536;
        double eager = tuna_model_cost(A2AV, &p, &in, opt.algorithm, opt.value);
        CHECK(k == 1 ? eager == rdv : eager < rdv, "%s: %g s eager, %g s rendezvous", algs[k],
              eager, rdv);
    }
}

/* The model is a pure function: same input, same choice; every candidate has a finite cost. */
static void model_checks(void)
{
    const tuna_profile *prof;
    CHECK(tuna_select_profile(&prof) == MPI_SUCCESS, "profile");
    int Ps[] = {1, 2, 3, 7, 64, 100, 256, 1024};
    int Qs[] = {1, 2, 4, 32, 0};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
        for (size_t q = 0; q < sizeof Qs / sizeof *Qs; q++)
            for (double S = 0; S <= 65536; S = S ? S * 16 : 1) {
                int Q = Qs[q] > Ps[i] ? Ps[i] : Qs[q];
                int N = Q ? Ps[i] / Q : 3;
                if (Q && Ps[i] % Q)
                    continue;
                tuna_select_input in = {.P = Ps[i], .Q = Q, .N = N, .max_block = S,
                                        .mean_block = S / 2, .total_max = S / 2 * Ps[i],
                                        .zero_fraction = 0.1};
                tuna_choice a, b;
                CHECK(tuna_select_alltoallv(A2AV, &in, &a) == MPI_SUCCESS, "select");
                CHECK(tuna_select_alltoallv(A2AV, &in, &b) == MPI_SUCCESS, "select");
                CHECK(a.algorithm == b.algorithm && a.param[0] == b.param[0] &&
                          a.param[1] == b.param[1],
                      "P=%d: two evaluations differ", Ps[i]);
                CHECK(a.predicted >= 0 && a.predicted < 1e6, "P=%d Q=%d S=%g: predicted %g",
                      Ps[i], Q, S, a.predicted);
                for (int alg = 0; alg < A2AV->n; alg++) {
                    long prm[TUNA_MAX_PARAMS] = {2, 1, 0, 0};
                    double t = tuna_model_cost(A2AV, prof, &in, alg, prm);
                    const char *nm = tuna_registry_row(A2AV, alg)->info.name;
                    bool modelled = strcmp(nm, "vendor") != 0 && strcmp(nm, "auto") != 0;
                    CHECK(modelled ? t >= 0 && t < 1e6 : t < 0, "%s P=%d: cost %g", nm, Ps[i],
                          t);
                }
            }
}

/*
 * --expect-table: tests/data/tuning_auto_p4.json's allgather entry (P in [3, 8], size buckets
 * 9-11) and allreduce entry (P = 4, bucket 10) decide auto there, the model elsewhere; the
 * results equal the library's.
 */
static void collective_table_checks(void)
{
    tuna_stats_enable(1);
    const struct {
        tuna_collective coll;
        int count; /* doubles */
        const char *want; /* NULL: the model decides */
    } cases[] = {{TUNA_ALLGATHER, 128, "kring"},      {TUNA_ALLGATHER, 2, NULL},
                 {TUNA_ALLREDUCE, 128, P == 4 ? "recmul" : NULL}, {TUNA_ALLREDUCE, 2, NULL}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int n = cases[c].count, total = cases[c].coll == TUNA_ALLGATHER ? n * P : n;
        double *in = malloc(sizeof(double) * (size_t)n);
        double *got = malloc(sizeof(double) * (size_t)total);
        double *ref = malloc(sizeof(double) * (size_t)total);
        for (int i = 0; i < n; i++)
            in[i] = me * 1000 + i;
        int rc;
        if (cases[c].coll == TUNA_ALLGATHER) {
            rc = tuna_allgather(in, n, MPI_DOUBLE, got, n, MPI_DOUBLE, MPI_COMM_WORLD, NULL);
            PMPI_Allgather(in, n, MPI_DOUBLE, ref, n, MPI_DOUBLE, MPI_COMM_WORLD);
        } else {
            rc = tuna_allreduce(in, got, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, NULL);
            PMPI_Allreduce(in, ref, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        const tuna_stats *s = tuna_stats_last();
        const tuna_algorithm_info *info = tuna_algorithm_get(cases[c].coll, s->algorithm);
        CHECK(rc == MPI_SUCCESS && memcmp(got, ref, sizeof(double) * (size_t)total) == 0,
              "collective case %zu: rc %d or result differs from the library's", c, rc);
        if (cases[c].want)
            CHECK(s->auto_source == 2 && info && strcmp(info->name, cases[c].want) == 0 &&
                      s->params[0] == 3,
                  "collective case %zu: table entry %s:k=3 not used (source %d, %s:k=%ld)", c,
                  cases[c].want, s->auto_source, info ? info->name : "?", s->params[0]);
        else
            CHECK(s->auto_source == 1, "collective case %zu: model expected, source %d", c,
                  s->auto_source);
        free(in);
        free(got);
        free(ref);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    tuna_options opt;
    if (tuna_options_parse("auto", TUNA_ALLTOALLV, &opt) != MPI_SUCCESS) {
        fprintf(stderr, "cannot parse 'auto'\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    tuna_stats s;
    if (argc > 1 && strcmp(argv[1], "--expect-error") == 0) {
        /* Bad TUNA_PROFILE / TUNA_TUNING: an error everywhere, no hang, twice. */
        for (int k = 0; k < 2; k++) {
            int *cnt = malloc(sizeof(int) * (size_t)P), *dsp = malloc(sizeof(int) * (size_t)P);
            for (int j = 0; j < P; j++)
                cnt[j] = 1, dsp[j] = j;
            char *sb = malloc((size_t)P), *rb = malloc((size_t)P);
            memset(sb, 1, (size_t)P);
            int err = tuna_alltoallv(sb, cnt, dsp, MPI_BYTE, rb, cnt, dsp, MPI_BYTE,
                                     MPI_COMM_WORLD, &opt);
            CHECK(err == MPI_ERR_ARG, "expected MPI_ERR_ARG, got %d", err);
            CHECK(strstr(tuna_error_string(err), "TUNA_") != NULL,
                  "message '%s' does not name the variable", tuna_error_string(err));
            if (me == 0 && k == 0)
                printf("expected error: %s\n", tuna_error_string(err));
            free(cnt);
            free(dsp);
            free(sb);
            free(rb);
        }
    } else if (argc > 2 && strcmp(argv[1], "--expect-table") == 0) {
        tuna_options want;
        if (tuna_options_parse(argv[2], TUNA_ALLTOALLV, &want) != MPI_SUCCESS) {
            fprintf(stderr, "bad --expect-table options '%s'\n", argv[2]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        run_pattern(PAT_UNIFORM_1K, 0, &opt, &s);
        CHECK(s.auto_source == 2 && s.algorithm == want.algorithm, "table entry not used: "
              "source %d, algorithm %d, want %d", s.auto_source, s.algorithm, want.algorithm);
        run_pattern(PAT_ONE_HEAVY, 1, &opt, &s); /* other buckets: the model */
        CHECK(s.auto_source == 1, "model expected outside the table, source %d",
              s.auto_source);
        collective_table_checks();
    } else if (argc > 1 && strcmp(argv[1], "--expect-vendor") == 0) {
        tuna_options vm;
        CHECK(tuna_select_vendor_model(P, &vm) == TUNA_VENDOR_MODEL_PROFILE,
              "TUNA_PROFILE has no vendor_alltoallv");
        /* Between agreements (TUNA_AUTO_PERIOD > 1) the choice is reused (source 3): such a
         * call is PMPI_Alltoallv on the user's arguments, checked against it byte for byte. */
        int first, longest, reused = 0;
        tuna_select_auto_period(&first, &longest);
        reuse_mode = first > 1;
        for (int pat = 0; pat < PAT_N; pat++)
            for (int seed = 0; seed < 2; seed++) {
                run_pattern(pat, seed, &opt, &s); /* bytes checked against PMPI there */
                const tuna_algorithm_info *info =
                    tuna_algorithm_get(TUNA_ALLTOALLV, s.algorithm);
                CHECK(info && strcmp(info->name, "vendor") == 0 &&
                          (s.auto_source == 1 || (reuse_mode && s.auto_source == 3)) &&
                          s.predicted > 0,
                      "%s: auto ran '%s' (source %d, predicted %g), want vendor from the model",
                      pat_names[pat], info ? info->name : "?", s.auto_source, s.predicted);
                reused += s.auto_source == 3;
                run_pattern(pat, seed, NULL, &s); /* the default is auto: the same */
                reused += s.auto_source == 3;
            }
        CHECK(!reuse_mode || reused > 0, "TUNA_AUTO_PERIOD=%d but no call reused the choice",
              first);
    } else if (argc > 1 && strcmp(argv[1], "--expect-no-vendor") == 0) {
        for (int pat = 0; pat < PAT_N; pat++)
            for (int seed = 0; seed < 2; seed++) {
                run_pattern(pat, seed, &opt, &s); /* bytes checked against PMPI there */
                const tuna_algorithm_info *info =
                    tuna_algorithm_get(TUNA_ALLTOALLV, s.algorithm);
                CHECK(info && strcmp(info->name, "vendor") != 0 && s.auto_source == 1,
                      "%s: auto ran '%s' (source %d): the library's call overhead was ignored",
                      pat_names[pat], info ? info->name : "?", s.auto_source);
            }
    } else if (argc > 1 && strcmp(argv[1], "--expect-window") == 0) {
        if (me == 0)
            expect_window(); /* pure: the model alone */
    } else if (argc > 1 && strcmp(argv[1], "--expect-reuse") == 0) {
        reuse_mode = true;
        expect_reuse(&opt);
    } else {
        if (me == 0) {
            file_validation();
            network_checks();
            phase_protocol_checks();
        }
        model_checks();
        for (int pat = 0; pat < PAT_N; pat++)
            for (int seed = 0; seed < 4; seed++) {
                run_pattern(pat, seed, &opt, &s);
                run_pattern(pat, seed, NULL, &s); /* the built-in default is auto */
                if (me == 0 && seed == 0)
                    printf("P=%d %-20s -> %s (%ld, %ld), predicted %.3g us\n", P,
                           pat_names[pat], tuna_algorithm_get(TUNA_ALLTOALLV, s.algorithm)->name,
                           s.params[0], s.params[1], s.predicted * 1e6);
            }
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_auto: P=%d %d cases, %d failures\n", P, cases, total);
    MPI_Finalize();
    return total != 0;
}
