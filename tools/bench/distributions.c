/* Block-size distributions of tuna-bench (see distributions.h). */
#define _POSIX_C_SOURCE 200809L
#include "distributions.h"
#include "mtx.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[DIST_KIND_COUNT] = {
    "uniform", "normal", "powerlaw", "sparse", "fft-n1", "fft-n2", "matrix", "spmv"};

const char *bench_dist_name(bench_dist_kind kind)
{
    return (int)kind >= 0 && kind < DIST_KIND_COUNT ? kind_names[kind] : "?";
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ------------------------------------------------------------ random numbers */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* Counter-based: the k-th draw for block (i, j), independent of generation order. */
double bench_rand01(uint64_t seed, uint64_t i, uint64_t j, uint64_t k)
{
    uint64_t h = mix64(seed + 0x9E3779B97F4A7C15ULL);
    h = mix64(h ^ (i * 0xD1B54A32D192ED03ULL));
    h = mix64(h ^ (j * 0x8CB92BA72F3D8DD7ULL));
    h = mix64(h ^ (k * 0xABC98388FB8FAC03ULL));
    return (double)(h >> 11) / 9007199254740992.0; /* 2^53 */
}

/* ------------------------------------------------------------ parsing */

static int parse_double(const char *tok, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(tok, &end);
    if (errno || end == tok || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int bench_dist_parse(const char *text, bench_dist *d, char *err, size_t errlen)
{
    bench_dist o;
    memset(&o, 0, sizeof o);
    o.mean = 0.5;
    o.sd = 0.25;
    o.exponent = 1.5;
    o.zero = 0.9;
    o.shortfrac = 0.5;
    o.scale = 1.0;
    if (!text || !*text)
        return fail(err, errlen, "empty distribution");
    const char *colon = strchr(text, ':');
    size_t nlen = colon ? (size_t)(colon - text) : strlen(text);
    int kind = -1;
    for (int k = 0; k < DIST_KIND_COUNT; k++)
        if (strlen(kind_names[k]) == nlen && strncmp(kind_names[k], text, nlen) == 0)
            kind = k;
    if (kind < 0)
        return fail(err, errlen,
                    "unknown distribution '%.*s' (known: uniform, normal, powerlaw, sparse, "
                    "fft-n1, fft-n2, matrix:FILE, spmv:FILE)",
                    (int)nlen, text);
    o.kind = (bench_dist_kind)kind;
    int from_file = o.kind == DIST_MATRIX || o.kind == DIST_SPMV;
    if (colon) {
        char buf[2048];
        if (strlen(colon + 1) >= sizeof buf)
            return fail(err, errlen, "distribution text too long: '%s'", text);
        strcpy(buf, colon + 1);
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(tok, '=');
            if (!eq) {
                if (!from_file || o.path[0])
                    return fail(err, errlen, "parameter '%s' of '%s' is not key=value", tok,
                                text);
                if (strlen(tok) >= sizeof o.path)
                    return fail(err, errlen, "file name too long in '%s'", text);
                strcpy(o.path, tok);
                continue;
            }
            *eq = '\0';
            const char *key = tok, *val = eq + 1;
            if (from_file && strcmp(key, "file") == 0) {
                if (o.path[0] || strlen(val) >= sizeof o.path || !*val)
                    return fail(err, errlen, "bad or repeated file in '%s'", text);
                strcpy(o.path, val);
                continue;
            }
            double v;
            if (parse_double(val, &v) != 0)
                return fail(err, errlen, "malformed value '%s' for '%s' in '%s'", val, key, text);
            double *slot = NULL;
            double lo = 0, hi = HUGE_VAL;
            int open_lo = 0;
            if (o.kind == DIST_NORMAL && strcmp(key, "mean") == 0)
                slot = &o.mean;
            else if (o.kind == DIST_NORMAL && strcmp(key, "sd") == 0)
                slot = &o.sd;
            else if (o.kind == DIST_POWERLAW && strcmp(key, "exponent") == 0)
                slot = &o.exponent, open_lo = 1;
            else if (o.kind == DIST_SPARSE && strcmp(key, "zero") == 0)
                slot = &o.zero, hi = 1;
            else if (o.kind == DIST_FFT_N2 && strcmp(key, "short") == 0)
                slot = &o.shortfrac, hi = 1;
            else if (from_file && strcmp(key, "scale") == 0)
                slot = &o.scale, open_lo = 1;
            if (!slot)
                return fail(err, errlen, "unknown parameter '%s' for distribution '%s'", key,
                            kind_names[o.kind]);
            if (v < lo || v > hi || (open_lo && v <= lo))
                return fail(err, errlen, "out-of-range value %s for '%s' in '%s'", val, key,
                            text);
            *slot = v;
            if (slot == &o.scale)
                o.scale_given = 1;
        }
    }
    if (from_file && !o.path[0])
        return fail(err, errlen, "distribution '%s' needs a file: %s:FILE", kind_names[o.kind],
                    kind_names[o.kind]);
    int n = 0;
    switch (o.kind) {
    case DIST_NORMAL:
        n = snprintf(o.spec, sizeof o.spec, "normal:mean=%g,sd=%g", o.mean, o.sd);
        break;
    case DIST_POWERLAW:
        n = snprintf(o.spec, sizeof o.spec, "powerlaw:exponent=%g", o.exponent);
        break;
    case DIST_SPARSE:
        n = snprintf(o.spec, sizeof o.spec, "sparse:zero=%g", o.zero);
        break;
    case DIST_FFT_N2:
        n = snprintf(o.spec, sizeof o.spec, "fft-n2:short=%g", o.shortfrac);
        break;
    case DIST_MATRIX:
    case DIST_SPMV:
        n = snprintf(o.spec, sizeof o.spec, "%s:file=%s,scale=%g", kind_names[o.kind], o.path,
                     o.scale);
        break;
    default:
        n = snprintf(o.spec, sizeof o.spec, "%s", kind_names[o.kind]);
        break;
    }
    if (n < 0 || (size_t)n >= sizeof o.spec)
        return fail(err, errlen, "distribution text too long: '%s'", text);
    *d = o;
    return 0;
}

int bench_dist_uses_size(const bench_dist *d)
{
    return d->kind != DIST_MATRIX && d->kind != DIST_SPMV;
}

/* ------------------------------------------------------------ synthetic kinds */

static double normal_draw(uint64_t seed, uint64_t i, uint64_t j, uint64_t k)
{
    /* Box-Muller; 1 - u keeps the logarithm's argument in (0, 1]. */
    double u1 = 1.0 - bench_rand01(seed, i, j, 2 * k);
    double u2 = bench_rand01(seed, i, j, 2 * k + 1);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Bounded Pareto on [1, S+1) with density ~ x^-a, floored to [1, S]. */
static long powerlaw_draw(double u, long S, double a)
{
    double hi = (double)S + 1.0;
    double x;
    if (fabs(a - 1.0) < 1e-12)
        x = exp(u * log(hi));
    else {
        double b = 1.0 - a;
        x = pow(1.0 + u * (pow(hi, b) - 1.0), 1.0 / b);
    }
    long v = (long)floor(x);
    return v < 1 ? 1 : v > S ? S : v;
}

/* The sparse kind's ordering key of block (i, j): bench_rand01(seed, i, j, 1) times 2^53. */
static uint64_t sparse_key(uint64_t seed, uint64_t i, uint64_t j)
{
    return (uint64_t)(bench_rand01(seed, i, j, 1) * 9007199254740992.0);
}

/* Blocks of rows [lo, hi) whose (key, index) is below (key, index); sorted rows make it log P. */
typedef struct sparse_rows {
    uint64_t *key; /* per row, ascending */
    uint64_t *idx; /* block index i*P + j, in the same order */
    int lo, hi, P;
} sparse_rows;

static int pair_less(uint64_t k1, uint64_t i1, uint64_t k2, uint64_t i2)
{
    return k1 < k2 || (k1 == k2 && i1 < i2);
}

static long long sparse_count_below(const sparse_rows *r, uint64_t key, uint64_t idx)
{
    long long c = 0;
    for (int row = 0; row < r->hi - r->lo; row++) {
        const uint64_t *k = r->key + (size_t)row * r->P, *x = r->idx + (size_t)row * r->P;
        int a = 0, b = r->P; /* first position not below (key, idx) */
        while (a < b) {
            int m = a + (b - a) / 2;
            if (pair_less(k[m], x[m], key, idx))
                a = m + 1;
            else
                b = m;
        }
        c += a;
    }
    return c;
}

typedef struct keyed {
    uint64_t key, index;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int bench_dist_prepare(const bench_dist *d, int P, uint64_t seed, int row_lo, int row_hi,
                       bench_dist_sum_fn sum, void *ctx, bench_dist_cut *cut, char *err,
                       size_t errlen)
{
    cut->key = 0;
    cut->index = 0;
    if (d->kind != DIST_SPARSE)
        return 0;
    /* Every caller takes part in every sum, whatever fails locally, so none waits forever. */
    int rows = row_hi - row_lo;
    size_t m = rows > 0 ? (size_t)rows * (size_t)P : 0;
    keyed *tmp = m ? malloc(m * sizeof *tmp) : NULL;
    sparse_rows r = {m ? malloc(m * sizeof(uint64_t)) : NULL,
                     m ? malloc(m * sizeof(uint64_t)) : NULL, row_lo, row_hi, P};
    long long bad = m && !(tmp && r.key && r.idx);
    if (sum(bad, ctx) != 0) {
        free(tmp), free(r.key), free(r.idx);
        return fail(err, errlen, "out of memory for the sparse distribution's keys");
    }
    for (int row = 0; row < rows; row++) {
        keyed *t = tmp + (size_t)row * P;
        uint64_t i = (uint64_t)(row_lo + row);
        for (int j = 0; j < P; j++) {
            t[j].key = sparse_key(seed, i, (uint64_t)j);
            t[j].index = i * (uint64_t)P + (uint64_t)j;
        }
        qsort(t, (size_t)P, sizeof *t, keyed_cmp);
        for (int j = 0; j < P; j++) {
            r.key[(size_t)row * P + j] = t[j].key;
            r.idx[(size_t)row * P + j] = t[j].index;
        }
    }
    free(tmp);
    /*
     * Exactly nzero = round(zero * P^2) empty blocks: those ranked below nzero in
     * (key, index) order, i.e. below the nzero-th smallest pair, found by bisection
     * on the key, then on the index among equal keys (counts summed over callers).
     */
    uint64_t n = (uint64_t)P * (uint64_t)P;
    long long nzero = llround(d->zero * (double)n);
    if ((uint64_t)nzero >= n) {
        cut->key = UINT64_MAX; /* above every key: all empty */
    } else if (nzero > 0) {
        uint64_t lo = 0, hi = (uint64_t)1 << 53; /* smallest key with count(key <= it) > nzero */
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (sum(sparse_count_below(&r, mid + 1, 0), ctx) > nzero)
                hi = mid;
            else
                lo = mid + 1;
        }
        cut->key = lo;
        long long below = sum(sparse_count_below(&r, lo, 0), ctx);
        if (below < nzero) { /* ties on the key: the index decides */
            uint64_t a = 0, b = n - 1;
            while (a < b) {
                uint64_t mid = a + (b - a) / 2;
                if (sum(sparse_count_below(&r, lo, mid + 1), ctx) > nzero)
                    b = mid;
                else
                    a = mid + 1;
            }
            cut->index = a;
        }
    }
    free(r.key), free(r.idx);
    return 0;
}

long bench_dist_block(const bench_dist *d, int P, long S, uint64_t seed,
                      const bench_dist_cut *cut, int i, int j)
{
    uint64_t ui = (uint64_t)i, uj = (uint64_t)j;
    switch (d->kind) {
    case DIST_UNIFORM: {
        long v = (long)(bench_rand01(seed, ui, uj, 0) * (double)(S + 1));
        return v > S ? S : v;
    }
    case DIST_NORMAL:
        /* Redraw negatives (truncation at 0); give up to 0 after 64 tries. */
        for (uint64_t k = 0; k < 64; k++) {
            double x = d->mean * (double)S + d->sd * (double)S * normal_draw(seed, ui, uj, k);
            if (x >= 0) {
                long v = lround(x);
                return v < 0 ? 0 : v;
            }
        }
        return 0;
    case DIST_POWERLAW:
        return S == 0 ? 0 : powerlaw_draw(bench_rand01(seed, ui, uj, 0), S, d->exponent);
    case DIST_SPARSE: {
        if (S == 0 || pair_less(sparse_key(seed, ui, uj), ui * (uint64_t)P + uj, cut->key,
                                cut->index))
            return 0;
        long v = 1 + (long)(bench_rand01(seed, ui, uj, 0) * (double)S);
        return v > S ? S : v;
    }
    case DIST_FFT_N1: {
        long senders = (5L * P + 7) / 8;      /* ceil(0.625 P) */
        long receivers = (25L * P + 31) / 32; /* ceil(0.78125 P) */
        return (i < senders && j < receivers) ? S : 0;
    }
    case DIST_FFT_N2: {
        double w = (i == P - 1 ? d->shortfrac : 1.0) * (j == P - 1 ? d->shortfrac : 1.0);
        return (long)llround((double)S * w);
    }
    default:
        return 0;
    }
}

static long long sum_alone(long long local, void *ctx)
{
    (void)ctx;
    return local;
}

int bench_dist_generate(const bench_dist *d, int P, long S, uint64_t seed, long *out, char *err,
                        size_t errlen)
{
    if (P < 1)
        return fail(err, errlen, "P must be >= 1");
    if (S < 0)
        return fail(err, errlen, "size S must be >= 0");
    if (!bench_dist_uses_size(d))
        return fail(err, errlen, "distribution '%s' is read from a file, not generated",
                    bench_dist_name(d->kind));
    bench_dist_cut cut;
    if (bench_dist_prepare(d, P, seed, 0, P, sum_alone, NULL, &cut, err, errlen) != 0)
        return -1;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            out[(size_t)i * P + j] = bench_dist_block(d, P, S, seed, &cut, i, j);
    return 0;
}

/* ------------------------------------------------------------ files */

static char *slurp(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (len + 1 < cap)
            break;
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb) {
            free(buf);
            buf = NULL;
        } else
            buf = nb;
    }
    int rerr = ferror(f);
    fclose(f);
    if (!buf) {
        fail(err, errlen, "out of memory reading '%s'", path);
        return NULL;
    }
    if (rerr) {
        free(buf);
        fail(err, errlen, "read error on '%s'", path);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* Scale a count, keeping non-zero counts non-zero. */
static int scaled(double v, double scale, long *out)
{
    if (!(v >= 0) || !isfinite(v))
        return -1;
    double s = v * scale;
    if (s > 9.0e15)
        return -1;
    long r = (long)llround(s);
    if (v > 0 && r < 1)
        r = 1;
    *out = r;
    return 0;
}

/* Rows of numbers separated by blanks, commas or semicolons. */
static int read_rows(const bench_dist *d, char *text, int P, long *out, char *err, size_t errlen)
{
    int row = 0, line_no = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        line_no++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        int col = 0;
        char *p = line;
        for (;;) {
            while (*p && (isspace((unsigned char)*p) || *p == ',' || *p == ';'))
                p++;
            if (!*p)
                break;
            char *end;
            errno = 0;
            double v = strtod(p, &end);
            if (end == p || errno)
                return fail(err, errlen, "%s: line %d: not a number at '%.20s'", d->path,
                            line_no, p);
            if (*end && !isspace((unsigned char)*end) && *end != ',' && *end != ';')
                return fail(err, errlen, "%s: line %d: not a number at '%.20s'", d->path,
                            line_no, p);
            if (row >= P || col >= P)
                return fail(err, errlen,
                            "%s: more than %d %s: the matrix must be P x P with P = %d (the "
                            "number of ranks)",
                            d->path, P, row >= P ? "rows" : "columns", P);
            long c;
            if (scaled(v, d->scale, &c) != 0)
                return fail(err, errlen, "%s: line %d: count %.20s is negative or too large",
                            d->path, line_no, p);
            out[(size_t)row * P + col] = c;
            col++;
            p = end;
        }
        if (col == 0)
            continue;
        if (col != P)
            return fail(err, errlen, "%s: line %d has %d columns, expected P = %d", d->path,
                        line_no, col, P);
        row++;
    }
    if (row != P)
        return fail(err, errlen, "%s has %d rows, expected P = %d (run with that many ranks)",
                    d->path, row, P);
    return 0;
}

typedef struct mm_entry {
    long r, c; /* zero-based */
    double v;
} mm_entry;

/* The entries of a Matrix Market file, collected by the shared reader's callbacks. */
typedef struct mm_entries {
    long rows, cols;
    mm_entry *e;
    size_t n, cap;
} mm_entries;

static int mm_header(const tuna_mtx_header *h, void *ctx, char *err, size_t errlen)
{
    mm_entries *m = ctx;
    if (h->rows > (uint64_t)LONG_MAX / 2 || h->cols > (uint64_t)LONG_MAX / 2)
        return fail(err, errlen, "%" PRIu64 " x %" PRIu64 " is too large", h->rows, h->cols);
    m->rows = (long)h->rows;
    m->cols = (long)h->cols;
    m->cap = (size_t)h->stored * (h->symmetry == TUNA_MTX_GENERAL ? 1 : 2) + 1;
    if (!(m->e = malloc(m->cap * sizeof *m->e)))
        return fail(err, errlen, "out of memory for %" PRIu64 " entries", h->stored);
    return 0;
}

static int mm_entry_add(uint64_t row, uint64_t col, double value, void *ctx, char *err,
                        size_t errlen)
{
    mm_entries *m = ctx;
    if (m->n == m->cap) /* not reached: the header announced the count */
        return fail(err, errlen, "more entries than announced");
    m->e[m->n++] = (mm_entry){(long)row, (long)col, value};
    return 0;
}

/* A Matrix Market file's text through the shared reader (tools/common/mtx.h). */
static int read_mm(const bench_dist *d, char *text, mm_entries *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    FILE *f = fmemopen(text, strlen(text), "r");
    if (!f)
        return fail(err, errlen, "%s: cannot read: %s", d->path, strerror(errno));
    tuna_mtx_reader r = {mm_header, mm_entry_add, m};
    int rc = tuna_mtx_read(f, d->path, &r, err, errlen);
    fclose(f);
    if (rc) {
        free(m->e);
        m->e = NULL;
    }
    return rc;
}

static int pair_cmp(const void *a, const void *b)
{
    const long *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Owner of index r when n indices are split in P contiguous blocks floor(k n / P). */
static long block_owner(long r, long n, int P)
{
    return (long)(((long long)(r + 1) * P - 1) / n);
}

int bench_dist_read(const bench_dist *d, int P, long *out, char *err, size_t errlen)
{
    if (d->kind != DIST_MATRIX && d->kind != DIST_SPMV)
        return fail(err, errlen, "distribution '%s' is not read from a file",
                    bench_dist_name(d->kind));
    if (P < 1)
        return fail(err, errlen, "P must be >= 1");
    char *text = slurp(d->path, err, errlen);
    if (!text)
        return -1;
    size_t n = (size_t)P * (size_t)P;
    memset(out, 0, n * sizeof *out);
    int is_mm = tuna_mtx_is_matrix_market(text);
    int rc = 0;
    if (!is_mm) {
        if (d->kind == DIST_SPMV)
            rc = fail(err, errlen, "%s: spmv needs a Matrix Market file", d->path);
        else
            rc = read_rows(d, text, P, out, err, errlen);
        free(text);
        return rc;
    }
    mm_entries mm;
    rc = read_mm(d, text, &mm, err, errlen);
    free(text);
    if (rc)
        return rc;
    long m = mm.rows, ncol = mm.cols;
    mm_entry *e = mm.e;
    size_t ne = mm.n;
    if (d->kind == DIST_MATRIX) {
        if (m != P || ncol != P) {
            free(e);
            return fail(err, errlen,
                        "%s is %ld x %ld, a count matrix must be P x P with P = %d (use spmv: "
                        "for a sparse matrix's communication pattern)",
                        d->path, m, ncol, P);
        }
        double *acc = calloc(n, sizeof *acc);
        if (!acc) {
            free(e);
            return fail(err, errlen, "out of memory");
        }
        for (size_t k = 0; k < ne; k++) {
            if (e[k].v < 0) {
                long r = e[k].r + 1, c = e[k].c + 1;
                free(acc);
                free(e);
                return fail(err, errlen, "%s: negative count at (%ld, %ld)", d->path, r, c);
            }
            acc[(size_t)e[k].r * P + (size_t)e[k].c] += e[k].v;
        }
        for (size_t b = 0; b < n && rc == 0; b++)
            if (scaled(acc[b], d->scale, &out[b]) != 0)
                rc = fail(err, errlen, "%s: count too large at block %zu", d->path, b);
        free(acc);
        free(e);
        return rc;
    }
    /* spmv: rank i (owner of row r) needs x[c] from the owner of c; count distinct (i, c). */
    if (P > m || P > ncol) {
        free(e);
        return fail(err, errlen, "%s is %ld x %ld: too small to split over P = %d ranks",
                    d->path, m, ncol, P);
    }
    long *pairs = malloc((ne + 1) * 2 * sizeof *pairs);
    if (!pairs) {
        free(e);
        return fail(err, errlen, "out of memory");
    }
    for (size_t k = 0; k < ne; k++) {
        pairs[2 * k] = block_owner(e[k].r, m, P);
        pairs[2 * k + 1] = e[k].c;
    }
    free(e);
    qsort(pairs, ne, 2 * sizeof *pairs, pair_cmp);
    long *cnt = calloc(n, sizeof *cnt);
    if (!cnt) {
        free(pairs);
        return fail(err, errlen, "out of memory");
    }
    for (size_t k = 0; k < ne; k++) {
        if (k > 0 && pairs[2 * k] == pairs[2 * k - 2] && pairs[2 * k + 1] == pairs[2 * k - 1])
            continue;
        long needer = pairs[2 * k], owner = block_owner(pairs[2 * k + 1], ncol, P);
        cnt[(size_t)owner * P + (size_t)needer]++;
    }
    free(pairs);
    for (size_t b = 0; b < n && rc == 0; b++)
        if (scaled((double)cnt[b], d->scale, &out[b]) != 0)
            rc = fail(err, errlen, "%s: count too large at block %zu", d->path, b);
    free(cnt);
    return rc;
}
