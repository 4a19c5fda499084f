/*
 * Unit tests of tuna-bench's size distributions and sweep specifications:
 * ranges, means and shapes where testable, determinism with a seed, the FFT
 * cases' exact zero patterns, and the file readers on real matrices.
 *
 * Usage: test_distributions [DATA_DIR]   (DATA_DIR holds ml_4.txt, ml_8.txt, bcsstk01.mtx)
 */
#include "distributions.h"
#include "specs.h"
#include "unit_check.h"

#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bench_dist dist(const char *text)
{
    bench_dist d;
    char err[256];
    if (bench_dist_parse(text, &d, err, sizeof err) != 0) {
        fprintf(stderr, "parse '%s' failed: %s\n", text, err);
        exit(1);
    }
    return d;
}

static long *gen(const char *text, int P, long S, uint64_t seed)
{
    bench_dist d = dist(text);
    long *m = malloc((size_t)P * P * sizeof *m);
    char err[256];
    if (!m || bench_dist_generate(&d, P, S, seed, m, err, sizeof err) != 0) {
        fprintf(stderr, "generate '%s' failed: %s\n", text, err);
        exit(1);
    }
    return m;
}

static void stats(const long *m, size_t n, double *mean, long *lo, long *hi, size_t *zeros)
{
    double s = 0;
    *lo = m[0];
    *hi = m[0];
    *zeros = 0;
    for (size_t i = 0; i < n; i++) {
        s += (double)m[i];
        if (m[i] < *lo)
            *lo = m[i];
        if (m[i] > *hi)
            *hi = m[i];
        *zeros += m[i] == 0;
    }
    *mean = s / (double)n;
}

static void test_determinism(void)
{
    const char *kinds[] = {"uniform", "normal", "powerlaw", "sparse:zero=0.3", "fft-n1", "fft-n2"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        long *a = gen(kinds[k], 37, 1000, 42), *b = gen(kinds[k], 37, 1000, 42);
        CHECK(memcmp(a, b, 37 * 37 * sizeof *a) == 0, "%s not deterministic", kinds[k]);
        free(a);
        free(b);
    }
    const char *random[] = {"uniform", "normal", "powerlaw", "sparse:zero=0.3"};
    for (size_t k = 0; k < sizeof random / sizeof random[0]; k++) {
        long *a = gen(random[k], 37, 1000, 42), *b = gen(random[k], 37, 1000, 43);
        CHECK(memcmp(a, b, 37 * 37 * sizeof *a) != 0, "%s ignores the seed", random[k]);
        free(a);
        free(b);
    }
}

static void test_uniform(void)
{
    int P = 200;
    long S = 1000;
    long *m = gen("uniform", P, S, 7);
    double mean;
    long lo, hi;
    size_t zeros;
    stats(m, (size_t)P * P, &mean, &lo, &hi, &zeros);
    CHECK(lo >= 0 && hi <= S, "range [%ld, %ld]", lo, hi);
    CHECK(lo == 0 && hi == S, "both ends reached: [%ld, %ld]", lo, hi);
    /* mean S/2, standard error ~ 289/200 = 1.4 */
    CHECK(fabs(mean - S / 2.0) < 10, "mean %.2f", mean);
    /* Each decile holds ~10%. */
    size_t dec[10] = {0};
    for (size_t i = 0; i < (size_t)P * P; i++)
        dec[m[i] * 10 / (S + 1)]++;
    for (int k = 0; k < 10; k++)
        CHECK(fabs((double)dec[k] / (P * P) - 0.1) < 0.01, "decile %d: %zu", k, dec[k]);
    free(m);
    long *z = gen("uniform", 8, 0, 7);
    for (int i = 0; i < 64; i++)
        CHECK(z[i] == 0, "S=0 gives %ld", z[i]);
    free(z);
}

static void test_normal(void)
{
    int P = 200;
    long S = 10000;
    long *m = gen("normal:mean=0.5,sd=0.1", P, S, 9);
    size_t n = (size_t)P * P;
    double mean, var = 0;
    long lo, hi;
    size_t zeros;
    stats(m, n, &mean, &lo, &hi, &zeros);
    for (size_t i = 0; i < n; i++)
        var += (m[i] - mean) * (m[i] - mean);
    double sd = sqrt(var / (double)n);
    CHECK(fabs(mean - 5000) < 20, "mean %.1f", mean);
    CHECK(fabs(sd - 1000) < 30, "sd %.1f", sd);
    CHECK(lo >= 0, "negative %ld", lo);
    free(m);
    /* Mean 0: truncation at zero keeps everything >= 0 with the half-normal's mean sd*sqrt(2/pi). */
    m = gen("normal:mean=0,sd=0.25", P, S, 9);
    stats(m, n, &mean, &lo, &hi, &zeros);
    CHECK(lo >= 0, "negative %ld", lo);
    CHECK(fabs(mean - 2500 * sqrt(2 / 3.14159265358979323846)) < 40, "half-normal mean %.1f", mean);
    free(m);
}

/* Expected mean of floor(X), X bounded Pareto on [1, S+1) with density ~ x^-a. */
static double powerlaw_mean(long S, double a)
{
    double hi = S + 1.0, b = 1.0 - a, mean = 0;
    for (long k = 1; k <= S; k++) {
        double F0 = (pow((double)k, b) - 1) / (pow(hi, b) - 1);
        double F1 = (pow((double)(k + 1), b) - 1) / (pow(hi, b) - 1);
        mean += k * (F1 - F0);
    }
    return mean;
}

static void test_powerlaw(void)
{
    int P = 200;
    long S = 4096;
    size_t n = (size_t)P * P;
    long *m = gen("powerlaw:exponent=1.5", P, S, 11);
    double mean;
    long lo, hi;
    size_t zeros;
    stats(m, n, &mean, &lo, &hi, &zeros);
    CHECK(lo >= 1 && hi <= S, "range [%ld, %ld]", lo, hi);
    double want = powerlaw_mean(S, 1.5);
    CHECK(fabs(mean - want) / want < 0.05, "mean %.1f, expected %.1f", mean, want);
    /* Heavy head: P(X < 2) = (1 - 2^-0.5) / (1 - 4097^-0.5) ~ 0.297 */
    size_t ones = 0, small = 0;
    for (size_t i = 0; i < n; i++) {
        ones += m[i] == 1;
        small += m[i] <= 64;
    }
    double f1 = (1 - pow(2, -0.5)) / (1 - pow(4097, -0.5));
    CHECK(fabs((double)ones / n - f1) < 0.01, "P(X=1) %.3f, expected %.3f", (double)ones / n, f1);
    CHECK(small > n / 2, "most blocks small: %zu of %zu <= 64", small, n);
    free(m);
    /* A larger exponent gives smaller blocks. */
    long *m2 = gen("powerlaw:exponent=2.5", P, S, 11);
    double mean2;
    stats(m2, n, &mean2, &lo, &hi, &zeros);
    CHECK(mean2 < mean, "exponent 2.5 mean %.1f not below 1.5's %.1f", mean2, mean);
    free(m2);
}

static void test_sparse(void)
{
    int P = 50;
    long S = 100;
    size_t n = (size_t)P * P;
    long *m = gen("sparse:zero=0.9", P, S, 5);
    double mean;
    long lo, hi;
    size_t zeros;
    stats(m, n, &mean, &lo, &hi, &zeros);
    CHECK(zeros == 2250, "zeros %zu, expected exactly 2250", zeros);
    CHECK(hi <= S, "max %ld", hi);
    for (size_t i = 0; i < n; i++)
        CHECK(m[i] == 0 || (m[i] >= 1 && m[i] <= S), "block %zu = %ld", i, m[i]);
    free(m);
    m = gen("sparse:zero=0", P, S, 5);
    stats(m, n, &mean, &lo, &hi, &zeros);
    CHECK(zeros == 0 && lo >= 1, "zero=0: %zu zeros", zeros);
    free(m);
    m = gen("sparse:zero=1", P, S, 5);
    stats(m, n, &mean, &lo, &hi, &zeros);
    CHECK(zeros == n, "zero=1: %zu zeros", zeros);
    free(m);
}

/* The sparse kind's former whole-matrix rule: sort all blocks by (key, index), empty the first. */
static int keyed_ref_cmp(const void *a, const void *b)
{
    const double *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

static void test_sparse_blockwise(void)
{
    /* bench_dist_block (per block, what each rank computes) equals the sorted reference. */
    const double zeros[] = {0, 0.3, 0.5, 0.9, 1};
    for (int P = 1; P <= 37; P += 12)
        for (int z = 0; z < 5; z++)
            for (uint64_t seed = 1; seed <= 3; seed++) {
                char text[64];
                snprintf(text, sizeof text, "sparse:zero=%g", zeros[z]);
                long S = 100;
                size_t n = (size_t)P * P;
                long *m = gen(text, P, S, seed);
                double *k = malloc(2 * n * sizeof *k);
                for (size_t b = 0; b < n; b++) {
                    k[2 * b] = bench_rand01(seed, b / (size_t)P, b % (size_t)P, 1);
                    k[2 * b + 1] = (double)b;
                }
                qsort(k, n, 2 * sizeof *k, keyed_ref_cmp);
                size_t nzero = (size_t)llround(zeros[z] * (double)n), bad = 0;
                for (size_t r = 0; r < n; r++) {
                    size_t b = (size_t)k[2 * r + 1];
                    long v = 0;
                    if (r >= nzero) {
                        v = 1 + (long)(bench_rand01(seed, b / (size_t)P, b % (size_t)P, 0) *
                                       (double)S);
                        v = v > S ? S : v;
                    }
                    bad += m[b] != v;
                }
                CHECK(bad == 0, "%s P=%d seed=%llu: %zu blocks differ from the reference", text,
                      P, (unsigned long long)seed, bad);
                free(k);
                free(m);
            }
}

static void test_fft(void)
{
    /* N1 at P = 32: ranks 0..19 (0.625 P) send S to peers 0..24 (0.78125 P), others nothing. */
    int P = 32;
    long S = 640;
    long *m = gen("fft-n1", P, S, 1);
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            long want = (i < 20 && j < 25) ? S : 0;
            CHECK(m[i * P + j] == want, "N1 P=32 (%d,%d) = %ld, want %ld", i, j, m[i * P + j],
                  want);
        }
    free(m);
    /* P = 10: ceil(6.25) = 7 senders, ceil(7.8125) = 8 receivers. */
    P = 10;
    m = gen("fft-n1", P, S, 1);
    size_t nz = 0;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            CHECK((m[i * P + j] != 0) == (i < 7 && j < 8), "N1 P=10 (%d,%d) = %ld", i, j,
                  m[i * P + j]);
            nz += m[i * P + j] != 0;
        }
    CHECK(nz == 56, "N1 P=10 non-zero %zu", nz);
    free(m);
    /* N2: everything S except the short last rank's row and column; no zeros. */
    P = 16;
    m = gen("fft-n2:short=0.25", P, S, 1);
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            long want = S;
            if (i == P - 1 && j == P - 1)
                want = 40;
            else if (i == P - 1 || j == P - 1)
                want = 160;
            CHECK(m[i * P + j] == want, "N2 (%d,%d) = %ld, want %ld", i, j, m[i * P + j], want);
        }
    free(m);
}

static void test_parse_errors(void)
{
    bench_dist d;
    char err[256];
    CHECK(bench_dist_parse("gaussian", &d, err, sizeof err) != 0 && strstr(err, "gaussian"),
          "unknown kind: %s", err);
    CHECK(bench_dist_parse("normal:sd=abc", &d, err, sizeof err) != 0 && strstr(err, "abc"),
          "bad value: %s", err);
    CHECK(bench_dist_parse("sparse:zero=1.5", &d, err, sizeof err) != 0, "zero > 1 accepted");
    CHECK(bench_dist_parse("powerlaw:exponent=0", &d, err, sizeof err) != 0, "exponent 0");
    CHECK(bench_dist_parse("uniform:foo=1", &d, err, sizeof err) != 0 && strstr(err, "foo"),
          "unknown key: %s", err);
    CHECK(bench_dist_parse("matrix", &d, err, sizeof err) != 0, "matrix without a file");
    CHECK(bench_dist_parse("matrix:a.txt,scale=0.5", &d, err, sizeof err) == 0 &&
              strcmp(d.path, "a.txt") == 0 && d.scale == 0.5,
          "matrix with scale");
}

static void test_files(const char *dir)
{
    char path[2048], err[512];
    bench_dist d;
    long m[64 * 64];
    /* ml_4.txt: the recorded 4 x 4 byte matrix, zero diagonal. */
    snprintf(path, sizeof path, "matrix:%s/ml_4.txt", dir);
    d = dist(path);
    CHECK(bench_dist_read(&d, 4, m, err, sizeof err) == 0, "ml_4: %s", err);
    CHECK(m[1] == 78273536 && m[4] == 64735232 && m[15] == 0 && m[14] == 104841216,
          "ml_4 values %ld %ld %ld %ld", m[1], m[4], m[15], m[14]);
    CHECK(bench_dist_read(&d, 8, m, err, sizeof err) != 0 && strstr(err, "P = 8"),
          "ml_4 read as P=8: %s", err);
    snprintf(path, sizeof path, "matrix:%s/ml_8.txt,scale=1e-4", dir);
    d = dist(path);
    CHECK(bench_dist_read(&d, 8, m, err, sizeof err) == 0, "ml_8: %s", err);
    CHECK(m[1] == 7827 && m[0] == 0, "ml_8 scaled %ld %ld", m[1], m[0]);
    snprintf(path, sizeof path, "matrix:%s/ml_8.txt,scale=1e-12", dir);
    d = dist(path);
    CHECK(bench_dist_read(&d, 8, m, err, sizeof err) == 0, "ml_8 tiny: %s", err);
    for (int i = 0; i < 64; i++)
        CHECK(m[i] == (i % 9 == 0 ? 0 : 1), "scaling keeps the zero pattern: %d -> %ld", i, m[i]);

    /* bcsstk01 (48 x 48 symmetric, 224 stored entries): the SpMV pattern over 4 ranks. */
    snprintf(path, sizeof path, "spmv:%s/bcsstk01.mtx", dir);
    d = dist(path);
    CHECK(bench_dist_read(&d, 4, m, err, sizeof err) == 0, "bcsstk01: %s", err);
    long sum = 0;
    for (int i = 0; i < 16; i++) {
        CHECK(m[i] >= 0 && m[i] <= 12, "spmv block %d = %ld exceeds the 12 owned entries", i,
              m[i]);
        sum += m[i];
    }
    CHECK(m[0] == 12 && m[5] == 12 && m[10] == 12 && m[15] == 12,
          "every rank needs all its own 12 entries (non-zero diagonal): %ld %ld %ld %ld", m[0],
          m[5], m[10], m[15]);
    CHECK(sum > 48, "some remote entries are needed: total %ld", sum);
    /* A P x P Matrix Market count matrix. */
    const char *tmp = "test_distributions_counts.mtx";
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL, "cannot write %s", tmp);
    if (f) {
        fprintf(f, "%%%%MatrixMarket matrix coordinate integer general\n%% comment\n3 3 3\n"
                   "1 2 10\n3 1 7\n2 2 5\n");
        fclose(f);
        snprintf(path, sizeof path, "matrix:%s", tmp);
        d = dist(path);
        CHECK(bench_dist_read(&d, 3, m, err, sizeof err) == 0, "mm counts: %s", err);
        long want[9] = {0, 10, 0, 0, 5, 0, 7, 0, 0};
        CHECK(memcmp(m, want, sizeof want) == 0, "mm counts values");
        CHECK(bench_dist_read(&d, 4, m, err, sizeof err) != 0 && strstr(err, "3 x 3"),
              "mm wrong P: %s", err);
        remove(tmp);
    }
    d = dist("matrix:/nonexistent/file.txt");
    CHECK(bench_dist_read(&d, 4, m, err, sizeof err) != 0 && strstr(err, "cannot open"),
          "missing file: %s", err);
}

static void test_specs(void)
{
    long_list l = {0};
    char err[256];
    CHECK(spec_sizes("16:16384:x2", &l, err, sizeof err) == 0 && l.n == 11 && l.v[0] == 16 &&
              l.v[10] == 16384,
          "geometric sizes n=%d", l.n);
    long_list_free(&l);
    CHECK(spec_sizes("1K,16,4k,16", &l, err, sizeof err) == 0 && l.n == 3 && l.v[0] == 16 &&
              l.v[1] == 1024 && l.v[2] == 4096,
          "list sizes");
    long_list_free(&l);
    CHECK(spec_sizes("0:100:+50", &l, err, sizeof err) == 0 && l.n == 3 && l.v[2] == 100,
          "arithmetic sizes");
    long_list_free(&l);
    CHECK(spec_sizes("16:8", &l, err, sizeof err) != 0, "empty range accepted");
    CHECK(spec_sizes("abc", &l, err, sizeof err) != 0 && strstr(err, "abc"), "bad size: %s", err);
    CHECK(spec_sizes("1:9:x1", &l, err, sizeof err) != 0, "factor 1 accepted");
    long_list_free(&l);
    CHECK(spec_params("2:P", 2, 16, INT_MAX, 4, 16, &l, err, sizeof err) == 0 && l.n == 15, "2:P at 16");
    long_list_free(&l);
    CHECK(spec_params("powers", 2, 12, INT_MAX, 4, 12, &l, err, sizeof err) == 0 && l.n == 4 &&
              l.v[0] == 2 && l.v[1] == 4 && l.v[2] == 8 && l.v[3] == 12,
          "powers at P=12: n=%d", l.n);
    long_list_free(&l);
    CHECK(spec_params("3,sqrtP,100", 2, 10, INT_MAX, 4, 10, &l, err, sizeof err) == 0 &&
              l.n == 3 && l.v[0] == 3 && l.v[1] == 4 && l.v[2] == 10,
          "clamping to P and sqrtP");
    long_list_free(&l);
    /* The library's rule: below the minimum, or beyond any communicator, is an error. */
    CHECK(spec_params("1,4", 2, 10, INT_MAX, 4, 10, &l, err, sizeof err) != 0 &&
              strstr(err, "value 1"),
          "radix 1 accepted: %s", err);
    long_list_free(&l);
    CHECK(spec_params("99999999999", 2, 10, INT_MAX, 4, 10, &l, err, sizeof err) != 0,
          "radix beyond INT_MAX accepted");
    long_list_free(&l);
    CHECK(spec_params("2", 0, 1, 1, 0, 10, &l, err, sizeof err) != 0,
          "a fixed maximum exceeded was accepted");
    long_list_free(&l);
    CHECK(spec_params("default", 1, 8, INT_MAX, 8, 8, &l, err, sizeof err) == 0 && l.n == 1 &&
              l.v[0] == 8,
          "default");
    long_list_free(&l);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/data";
    test_determinism();
    test_uniform();
    test_normal();
    test_powerlaw();
    test_sparse();
    test_sparse_blockwise();
    test_fft();
    test_parse_errors();
    test_files(dir);
    test_specs();
    printf("test_distributions: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
