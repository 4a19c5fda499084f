/*
 * tuna-tc: transitive closure by semi-naive evaluation on hash-partitioned relations.
 *
 *   path(x, y) :- edge(x, y).
 *   path(x, z) :- path(x, y), edge(y, z).
 *
 * edge(y, z) lives on the owner of y and path(x, y) on the owner of y (owner = a hash of the
 * node modulo P), so the join of the new paths (delta) with the edges is local. Each iteration
 * joins delta with edge, shuffles the produced (x, z) to the owner of z with tuna_alltoallv,
 * inserts them into that rank's path hash set, and keeps the ones that were new as the next
 * delta. The fixed point is reached when no rank produces anything.
 *
 * Every rank reads (or generates) the whole edge list and keeps its part; small graphs are
 * also closed serially (BFS from every node) on every rank and compared tuple by tuple.
 * Exit code 1 on a wrong answer.
 */
#define _POSIX_C_SOURCE 200809L
#include "app_common.h"
#include "cli.h"
#include "mtx.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GRAPHS 16
#define MAX_NODES 0x7fffffffUL /* node ids fit 31 bits, so a tuple key is never all-ones */

static int me = 0, P = 1;
static MPI_Comm comm_app = MPI_COMM_NULL; /* every collective of the application */

/* ------------------------------------------------------------ command line */

typedef struct tc_args {
    char algorithms[4096];
    const char *graphs[MAX_GRAPHS];
    int ngraphs;
    int repeat;
    long check_max;
    unsigned long long seed;
    const char *json_path;
    const char *run_name;
    int quiet, help;
} tc_args;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: mpiexec -n P tuna-tc [options]\n"
            "Transitive closure by semi-naive evaluation; one tuna_alltoallv shuffle per\n"
            "iteration. Checks its answers and times each algorithm.\n\n"
            "  -a, --algorithms LIST  tuna option strings, comma-separated (default\n"
            "                         vendor,linear,tuna); 'vendor' = the MPI library's\n"
            "                         MPI_Alltoallv; e.g. vendor,tuna:radix=2,block=4,coalesced\n"
            "  -g, --graph SPEC       (repeatable) the input graph (default chain:64):\n"
            "                         FILE.mtx          Matrix Market coordinate file (row ->\n"
            "                                           column; symmetric files both ways)\n"
            "                         FILE              edge list: 'src dst' per line, 0-based,\n"
            "                                           '#' or '%%' comments\n"
            "                         chain:N           0 -> 1 -> ... -> N-1\n"
            "                         grid:RxC          right and down edges of an R x C grid\n"
            "                         tree:N            random recursive tree (seeded), edges\n"
            "                                           parent -> child\n"
            "                         rmat:S[:E]        R-MAT, 2^S nodes, E*2^S edges (default\n"
            "                                           E=4), a,b,c,d = .57,.19,.19,.05 (seeded)\n"
            "  -n, --repeat N         closures per algorithm, interleaved (default 1)\n"
            "      --check-max N      compare with a serial closure (BFS from every node) when\n"
            "                         the graph has at most N nodes (default 2048; 0 = never)\n"
            "      --seed N           seed of the generators (default 1)\n"
            "  -j, --json FILE        JSON lines, one per graph and algorithm\n"
            "      --run-name NAME    name of the run in the JSON\n"
            "  -q, --quiet            no table on stdout\n"
            "  -h, --help             this help\n"
            "Exit code: 0 = all answers right, 1 = a wrong answer, 2 = bad input or error.\n");
}

static int parse_args(int argc, char **argv, tc_args *a, char *err, size_t errlen)
{
    enum { O_CHECK = 256, O_SEED, O_RUNNAME };
    static const struct option longopts[] = {{"algorithms", required_argument, 0, 'a'},
                                             {"graph", required_argument, 0, 'g'},
                                             {"repeat", required_argument, 0, 'n'},
                                             {"check-max", required_argument, 0, O_CHECK},
                                             {"seed", required_argument, 0, O_SEED},
                                             {"json", required_argument, 0, 'j'},
                                             {"run-name", required_argument, 0, O_RUNNAME},
                                             {"quiet", no_argument, 0, 'q'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    strcpy(a->algorithms, "vendor,linear,tuna");
    a->repeat = 1;
    a->check_max = 2048;
    a->seed = 1;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":a:g:n:j:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (strlen(optarg) >= sizeof a->algorithms) {
                snprintf(err, errlen, "--algorithms too long");
                return -1;
            }
            strcpy(a->algorithms, optarg);
            break;
        case 'g':
            if (a->ngraphs == MAX_GRAPHS) {
                snprintf(err, errlen, "too many --graph options (at most %d)", MAX_GRAPHS);
                return -1;
            }
            a->graphs[a->ngraphs++] = optarg;
            break;
        case 'n':
            if (cli_int("--repeat", optarg, 1, 100000, &a->repeat, err, errlen))
                return -1;
            break;
        case O_CHECK:
            if (cli_long("--check-max", optarg, 0, LONG_MAX, &a->check_max, err, errlen))
                return -1;
            break;
        case O_SEED:
            if (cli_seed(optarg, &a->seed, err, errlen))
                return -1;
            break;
        case 'j':
            a->json_path = optarg;
            break;
        case O_RUNNAME:
            a->run_name = optarg;
            break;
        case 'q':
            a->quiet = 1;
            break;
        case 'h':
            a->help = 1;
            break;
        default:
            return cli_getopt_error(c, argv, err, errlen);
        }
    }
    if (cli_no_positional(argc, argv, err, errlen))
        return -1;
    if (a->ngraphs == 0)
        a->graphs[a->ngraphs++] = "chain:64";
    return 0;
}

/* ------------------------------------------------------------ graphs */

typedef struct graph {
    uint32_t n; /* nodes 0 .. n-1 */
    size_t m;   /* edges (duplicates removed) */
    uint64_t *edges; /* (src << 32) | dst, sorted */
    size_t cap;
} graph;

static int graph_add(graph *g, uint64_t s, uint64_t d)
{
    if (g->m == g->cap) {
        size_t nc = g->cap ? 2 * g->cap : 1024;
        uint64_t *e = realloc(g->edges, nc * sizeof *e);
        if (!e)
            return -1;
        g->edges = e, g->cap = nc;
    }
    g->edges[g->m++] = (s << 32) | d;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void graph_finish(graph *g)
{
    if (g->m)
        qsort(g->edges, g->m, sizeof *g->edges, cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < g->m; i++)
        if (k == 0 || g->edges[i] != g->edges[k - 1])
            g->edges[k++] = g->edges[i];
    g->m = k;
}

static int parse_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out,
                       const char **rest)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*s))
        return -1;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || v < lo || v > hi)
        return -1;
    *out = v;
    *rest = end;
    return 0;
}

static int generate(const char *spec, unsigned long long seed, graph *g, char *err,
                    size_t errlen)
{
    unsigned long a, b;
    const char *rest;
    int oom = 0;
    if (strncmp(spec, "chain:", 6) == 0) {
        if (parse_ulong(spec + 6, 1, 1UL << 26, &a, &rest) || *rest)
            goto bad;
        g->n = (uint32_t)a;
        for (unsigned long i = 0; i + 1 < a && !oom; i++)
            oom = graph_add(g, i, i + 1);
    } else if (strncmp(spec, "grid:", 5) == 0) {
        if (parse_ulong(spec + 5, 1, 1UL << 13, &a, &rest) || *rest != 'x' ||
            parse_ulong(rest + 1, 1, 1UL << 13, &b, &rest) || *rest)
            goto bad;
        g->n = (uint32_t)(a * b);
        for (unsigned long r = 0; r < a && !oom; r++)
            for (unsigned long c = 0; c < b && !oom; c++) {
                if (c + 1 < b)
                    oom = graph_add(g, r * b + c, r * b + c + 1);
                if (r + 1 < a && !oom)
                    oom = graph_add(g, r * b + c, (r + 1) * b + c);
            }
    } else if (strncmp(spec, "tree:", 5) == 0) {
        if (parse_ulong(spec + 5, 1, 1UL << 26, &a, &rest) || *rest)
            goto bad;
        g->n = (uint32_t)a;
        for (unsigned long i = 1; i < a && !oom; i++) {
            unsigned long parent = (unsigned long)(app_rand01(seed, i) * (double)i);
            oom = graph_add(g, parent < i ? parent : i - 1, i);
        }
    } else if (strncmp(spec, "rmat:", 5) == 0) {
        if (parse_ulong(spec + 5, 1, 26, &a, &rest))
            goto bad;
        b = 4;
        if (*rest == ':' && parse_ulong(rest + 1, 1, 64, &b, &rest))
            goto bad;
        if (*rest)
            goto bad;
        g->n = (uint32_t)(1UL << a);
        unsigned long m = b << a;
        for (unsigned long e = 0; e < m && !oom; e++) {
            uint64_t s = 0, d = 0;
            for (unsigned long l = 0; l < a; l++) {
                double u = app_rand01(seed, e * 64 + l);
                /* quadrants a = .57 (0,0), b = .19 (0,1), c = .19 (1,0), d = .05 (1,1) */
                int sb = u >= 0.76, db = (u >= 0.57 && u < 0.76) || u >= 0.95;
                s = 2 * s + (uint64_t)sb;
                d = 2 * d + (uint64_t)db;
            }
            oom = graph_add(g, s, d);
        }
    } else
        return 1; /* not a generator */
    if (oom) {
        snprintf(err, errlen, "%s: out of memory", spec);
        return -1;
    }
    return 0;
bad:
    snprintf(err, errlen,
             "--graph '%s': expected chain:N, grid:RxC, tree:N or rmat:S[:E] with N <= 2^26, "
             "R, C <= 8192, S <= 26, E in [1, 64]",
             spec);
    return -1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Matrix Market coordinate files (tools/common/mtx.h's rules): entry (i, j) is the edge
 * i-1 -> j-1, a symmetric file's entries both ways; values are ignored. */
static int mtx_header(const tuna_mtx_header *h, void *ctx, char *err, size_t errlen)
{
    graph *g = ctx;
    if (h->rows > MAX_NODES || h->cols > MAX_NODES) {
        snprintf(err, errlen, "%" PRIu64 " x %" PRIu64 " is too large (node ids below 2^31)",
                 h->rows, h->cols);
        return -1;
    }
    g->n = (uint32_t)(h->rows > h->cols ? h->rows : h->cols);
    return 0;
}

static int mtx_edge(uint64_t row, uint64_t col, double value, void *ctx, char *err,
                    size_t errlen)
{
    (void)value;
    if (graph_add(ctx, row, col)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static int read_mtx(FILE *f, const char *path, graph *g, char *err, size_t errlen)
{
    tuna_mtx_reader r = {mtx_header, mtx_edge, g};
    return tuna_mtx_read(f, path, &r, err, errlen);
}

static int read_edgelist(FILE *f, const char *path, graph *g, char *err, size_t errlen)
{
    char line[1024];
    unsigned long maxid = 0, lineno = 0;
    int any = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        const char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '%' || *p == '\n' || *p == '\r' || *p == '\0')
            continue;
        unsigned long s, d;
        const char *rest;
        if (parse_ulong(p, 0, MAX_NODES - 1, &s, &rest) || !isspace((unsigned char)*rest)) {
            snprintf(err, errlen, "%s:%lu: expected 'src dst' (0-based ids < 2^31)", path,
                     lineno);
            return -1;
        }
        rest += strspn(rest, " \t");
        if (parse_ulong(rest, 0, MAX_NODES - 1, &d, &rest) ||
            rest[strspn(rest, " \t\r\n")] != '\0') {
            snprintf(err, errlen, "%s:%lu: expected 'src dst' (0-based ids < 2^31)", path,
                     lineno);
            return -1;
        }
        if (graph_add(g, s, d)) {
            snprintf(err, errlen, "%s: out of memory", path);
            return -1;
        }
        maxid = s > maxid ? s : maxid;
        maxid = d > maxid ? d : maxid;
        any = 1;
    }
    g->n = any ? (uint32_t)(maxid + 1) : 0;
    return 0;
}

static int load_graph(const char *spec, unsigned long long seed, graph *g, char *err,
                      size_t errlen)
{
    memset(g, 0, sizeof *g);
    int rc = generate(spec, seed, g, err, errlen);
    if (rc <= 0) {
        if (rc == 0)
            graph_finish(g);
        return rc;
    }
    const char *path = strncmp(spec, "file:", 5) == 0 ? spec + 5 : spec;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "--graph '%s': not a generator, and cannot open the file: %s", spec,
                 strerror(errno));
        return -1;
    }
    rc = ends_with(path, ".mtx") ? read_mtx(f, path, g, err, errlen)
                                 : read_edgelist(f, path, g, err, errlen);
    fclose(f);
    if (rc == 0)
        graph_finish(g);
    return rc;
}

/* ------------------------------------------------------------ hash set of tuples */

#define EMPTY_KEY UINT64_MAX

typedef struct u64set {
    uint64_t *keys;
    size_t cap, count; /* cap: a power of two */
} u64set;

static int set_init(u64set *s, size_t hint)
{
    s->cap = 1024;
    while (s->cap < 2 * hint)
        s->cap *= 2;
    s->count = 0;
    s->keys = malloc(s->cap * sizeof *s->keys);
    if (!s->keys)
        return -1;
    memset(s->keys, 0xff, s->cap * sizeof *s->keys);
    return 0;
}

/* 1 if key was new, 0 if present, -1 out of memory. Load factor kept <= 1/2. */
static int set_insert(u64set *s, uint64_t key)
{
    if (2 * (s->count + 1) > s->cap) {
        u64set t;
        t.cap = 2 * s->cap, t.count = 0;
        t.keys = malloc(t.cap * sizeof *t.keys);
        if (!t.keys)
            return -1;
        memset(t.keys, 0xff, t.cap * sizeof *t.keys);
        for (size_t i = 0; i < s->cap; i++)
            if (s->keys[i] != EMPTY_KEY)
                set_insert(&t, s->keys[i]);
        free(s->keys);
        *s = t;
    }
    size_t mask = s->cap - 1, i = (size_t)app_mix64(key) & mask;
    while (s->keys[i] != EMPTY_KEY) {
        if (s->keys[i] == key)
            return 0;
        i = (i + 1) & mask;
    }
    s->keys[i] = key;
    s->count++;
    return 1;
}

/* ------------------------------------------------------------ distributed closure */

static int owner(uint32_t v)
{
    return (int)(app_mix64(0x7475u ^ (uint64_t)v) % (uint64_t)P);
}

typedef struct vec {
    uint64_t *v;
    size_t n, cap;
} vec;

static int vec_push(vec *a, uint64_t x)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 1024;
        uint64_t *t = realloc(a->v, nc * sizeof *t);
        if (!t)
            return -1;
        a->v = t, a->cap = nc;
    }
    a->v[a->n++] = x;
    return 0;
}

typedef struct tc_result {
    int ok;
    char error[512];
    long long iterations, tuples, produced;
    uint64_t checksum;
    double total, a2a, counts, join, dedup; /* this rank's seconds, summed over repeats */
    u64set path;                            /* last run's local path relation */
} tc_result;

/* CSR of the edges owned here (by source): local_off has n+1 entries. */
typedef struct local_edges {
    size_t *off;
    uint32_t *adj;
} local_edges;

static int local_edges_make(const graph *g, local_edges *le)
{
    le->off = calloc((size_t)g->n + 1, sizeof *le->off);
    size_t mine = 0;
    for (size_t i = 0; i < g->m; i++)
        mine += owner((uint32_t)(g->edges[i] >> 32)) == me;
    le->adj = malloc((mine ? mine : 1) * sizeof *le->adj);
    if (!le->off || !le->adj)
        return -1;
    /* edges are sorted by source: a single pass fills the CSR */
    size_t k = 0;
    for (size_t i = 0; i < g->m; i++) {
        uint32_t s = (uint32_t)(g->edges[i] >> 32);
        if (owner(s) == me) {
            le->adj[k++] = (uint32_t)g->edges[i];
            le->off[s + 1]++;
        }
    }
    for (uint32_t v = 0; v < g->n; v++)
        le->off[v + 1] += le->off[v];
    return 0;
}

/* One closure with one algorithm. Collective; on error every rank returns -1. */
static int closure(const graph *g, const local_edges *le, const app_algorithm *alg,
                   tc_result *r)
{
    int *cnt = calloc(4 * (size_t)P, sizeof *cnt);
    size_t *pos = calloc((size_t)P, sizeof *pos);
    vec delta = {0}, next = {0};
    uint64_t *sbuf = NULL, *rbuf = NULL;
    size_t scap = 0, rcap = 0;
    if (r->path.keys)
        free(r->path.keys);
    memset(&r->path, 0, sizeof r->path);
    int fail = !cnt || !pos || set_init(&r->path, g->m / (size_t)P + 1);
    /* path := edge (on the owner of the destination); delta := path */
    for (size_t i = 0; i < g->m && !fail; i++)
        if (owner((uint32_t)g->edges[i]) == me)
            fail = set_insert(&r->path, g->edges[i]) < 0 || vec_push(&delta, g->edges[i]);
    int *scnt = cnt, *sdsp = cnt + P, *rcnt = cnt + 2 * P, *rdsp = cnt + 3 * P;
    long long iterations = 0, produced_all = 0;
    double t_a2a = 0, t_counts = 0, t_join = 0, t_dedup = 0;
    MPI_Barrier(comm_app);
    double t_start = app_now();
    for (;;) {
        /* join, counting pass: one tuple (x, z) per delta (x, y) and edge (y, z) */
        double t0 = app_now(), c0 = app_cpu_now();
        long long produced = 0;
        if (!fail) {
            memset(scnt, 0, (size_t)P * sizeof *scnt);
            for (size_t i = 0; i < delta.n; i++) {
                uint32_t y = (uint32_t)delta.v[i];
                for (size_t k = le->off[y]; k < le->off[y + 1]; k++) {
                    int o = owner(le->adj[k]);
                    if (scnt[o] == INT_MAX)
                        fail = 1; /* tuna_alltoallv counts are int */
                    else
                        scnt[o]++;
                }
            }
            for (int p = 0; p < P; p++)
                produced += scnt[p];
            if (produced > INT_MAX)
                fail = 1;
        }
        app_charge(c0);
        t_join += app_now() - t0;
        /* produced tuples and failures, summed: stop at the fixed point or on any failure */
        long long agree[2] = {produced, fail}, sum[2];
        MPI_Allreduce(agree, sum, 2, MPI_LONG_LONG, MPI_SUM, comm_app);
        if (sum[1]) {
            snprintf(r->error, sizeof r->error,
                     "out of memory, or more than INT_MAX tuples for one rank in one iteration");
            fail = 1;
            break;
        }
        if (sum[0] == 0)
            break;
        iterations++;
        produced_all += sum[0];
        /* join, filling pass: tuples grouped by destination rank */
        t0 = app_now(), c0 = app_cpu_now();
        if ((size_t)produced > scap) {
            free(sbuf);
            scap = (size_t)produced;
            sbuf = malloc(scap * sizeof *sbuf);
        }
        fail = !sbuf && produced > 0;
        sdsp[0] = 0;
        for (int p = 1; p < P; p++)
            sdsp[p] = sdsp[p - 1] + scnt[p - 1];
        for (int p = 0; p < P; p++)
            pos[p] = (size_t)sdsp[p];
        for (size_t i = 0; i < delta.n && !fail; i++) {
            uint64_t x = delta.v[i] >> 32;
            uint32_t y = (uint32_t)delta.v[i];
            for (size_t k = le->off[y]; k < le->off[y + 1]; k++) {
                uint32_t z = le->adj[k];
                sbuf[pos[owner(z)]++] = (x << 32) | z;
            }
        }
        app_charge(c0);
        t_join += app_now() - t0;
        /* shuffle: counts with tuna_alltoall (its default, TUNA_ALLTOALL or auto), tuples with
         * tuna_alltoallv */
        t0 = app_now();
        if (tuna_alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, comm_app, NULL) != MPI_SUCCESS)
            fail = 1; /* every rank sees the same arguments: the failure is agreed below */
        long long rtotal = 0;
        for (int p = 0; p < P; p++) {
            rdsp[p] = (int)(rtotal < INT_MAX ? rtotal : INT_MAX);
            rtotal += rcnt[p];
        }
        if (rtotal > INT_MAX)
            fail = 1;
        else if ((size_t)rtotal > rcap) {
            free(rbuf);
            rcap = (size_t)rtotal;
            rbuf = malloc(rcap * sizeof *rbuf);
            fail = fail || !rbuf;
        }
        int anyfail;
        MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, comm_app);
        double t1 = app_now();
        t_counts += t1 - t0;
        if (anyfail) {
            snprintf(r->error, sizeof r->error,
                     "out of memory, or more than INT_MAX tuples for one rank in one iteration");
            fail = 1;
            break;
        }
        int rc = tuna_alltoallv(sbuf, scnt, sdsp, MPI_UINT64_T, rbuf, rcnt, rdsp, MPI_UINT64_T,
                                comm_app, &alg->opt);
        t_a2a += app_now() - t1;
        if (rc != MPI_SUCCESS) {
            snprintf(r->error, sizeof r->error, "tuna_alltoallv (%s): %s", alg->name,
                     tuna_error_string(rc));
            fail = 1;
        }
        /* deduplicate: new tuples become the next delta */
        t0 = app_now(), c0 = app_cpu_now();
        next.n = 0;
        for (long long i = 0; i < rtotal && !fail; i++) {
            int isnew = set_insert(&r->path, rbuf[i]);
            if (isnew < 0 || (isnew && vec_push(&next, rbuf[i])))
                fail = 1;
        }
        vec t = delta;
        delta = next;
        next = t;
        app_charge(c0);
        t_dedup += app_now() - t0;
    }
    double t_total = app_now() - t_start;
    free(cnt), free(pos), free(sbuf), free(rbuf), free(delta.v), free(next.v);
    int anyfail;
    MPI_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, comm_app);
    if (anyfail) {
        if (!r->error[0])
            snprintf(r->error, sizeof r->error, "failed on another rank");
        return -1;
    }
    long long tuples = (long long)r->path.count;
    uint64_t sum = 0;
    for (size_t i = 0; i < r->path.cap; i++)
        if (r->path.keys[i] != EMPTY_KEY)
            sum += app_mix64(r->path.keys[i]);
    MPI_Allreduce(MPI_IN_PLACE, &tuples, 1, MPI_LONG_LONG, MPI_SUM, comm_app);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, comm_app);
    r->iterations = iterations;
    r->tuples = tuples;
    r->produced = produced_all;
    r->checksum = sum;
    r->total += t_total, r->a2a += t_a2a, r->counts += t_counts;
    r->join += t_join, r->dedup += t_dedup;
    return 0;
}

/*
 * Serial check: the closure by BFS from every node over the whole edge list (independent of
 * the distributed code), compared with this rank's part. Collective; returns 1 if every rank's
 * part is exactly the serial closure's tuples owned there, 0 if not, -1 out of memory.
 */
static int serial_check(const graph *g, const u64set *path)
{
    size_t n = g->n, words = (n + 63) / 64;
    size_t *off = calloc(n + 1, sizeof *off);
    uint32_t *queue = malloc((n ? n : 1) * sizeof *queue);
    uint64_t *reach = calloc(n * words + 1, sizeof *reach);
    int status = off && queue && reach ? 1 : -1;
    if (status == 1) {
        for (size_t i = 0; i < g->m; i++)
            off[(g->edges[i] >> 32) + 1]++;
        for (size_t v = 0; v < n; v++)
            off[v + 1] += off[v];
        size_t expected = 0;
        for (size_t s = 0; s < n; s++) {
            uint64_t *row = reach + s * words;
            size_t head = 0, tail = 0;
            /* nodes reachable by paths of length >= 1: start from s's successors */
            for (size_t k = off[s]; k < off[s + 1]; k++) {
                uint32_t t = (uint32_t)g->edges[k];
                if (!(row[t / 64] >> (t % 64) & 1)) {
                    row[t / 64] |= 1ULL << (t % 64);
                    queue[tail++] = t;
                }
            }
            while (head < tail) {
                uint32_t u = queue[head++];
                for (size_t k = off[u]; k < off[u + 1]; k++) {
                    uint32_t t = (uint32_t)g->edges[k];
                    if (!(row[t / 64] >> (t % 64) & 1)) {
                        row[t / 64] |= 1ULL << (t % 64);
                        queue[tail++] = t;
                    }
                }
            }
            for (size_t q = 0; q < tail; q++)
                expected += owner(queue[q]) == me;
        }
        /* path is a set: all its tuples in the closure, owned here, and as many as expected */
        size_t found = 0;
        for (size_t i = 0; i < path->cap && status == 1; i++) {
            uint64_t key = path->keys[i];
            if (key == EMPTY_KEY)
                continue;
            uint64_t x = key >> 32, z = key & 0xffffffffu;
            if (x >= n || z >= n || owner((uint32_t)z) != me ||
                !(reach[x * words + z / 64] >> (z % 64) & 1))
                status = 0;
            found++;
        }
        if (status == 1 && found != expected)
            status = 0;
    }
    free(off), free(queue), free(reach);
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, comm_app);
    return status;
}

/* ------------------------------------------------------------ one graph */

static json_t *record_json(const tc_args *a, const tuna_run_meta *run, const char *spec,
                           const graph *g, const app_algorithm *alg, const tc_result *r,
                           int verified, int checked)
{
    json_t *params = json_object();
    const tuna_algorithm_info *info = tuna_algorithm_get(TUNA_ALLTOALLV, alg->opt.algorithm);
    for (int p = 0; p < info->nparams; p++)
        if (alg->opt.set & (1u << p))
            json_object_set_new(params, info->params[p].name, json_integer(alg->opt.value[p]));
    char sum[32];
    snprintf(sum, sizeof sum, "%016llx", (unsigned long long)r->checksum);
    json_t *rec = json_pack("{s:s,s:s,s:I,s:I,s:s,s:s,s:o,s:I,s:i}", "app", "tc", "graph", spec,
                            "nodes", (json_int_t)g->n, "edges", (json_int_t)g->m, "algorithm",
                            info->name, "options", alg->name, "params", params, "seed",
                            (json_int_t)a->seed, "repeat", a->repeat);
    json_object_set_new(rec, "status", json_string(r->ok ? "ok" : "error"));
    if (!r->ok)
        json_object_set_new(rec, "error", json_string(r->error));
    json_object_set_new(rec, "verified", json_boolean(verified));
    json_object_set_new(rec, "serial_checked", json_boolean(checked));
    json_object_set_new(rec, "iterations", json_integer(r->iterations));
    json_object_set_new(rec, "tuples", json_integer(r->tuples));
    json_object_set_new(rec, "produced", json_integer(r->produced));
    json_object_set_new(rec, "bytes_shuffled", json_integer(8 * r->produced));
    json_object_set_new(rec, "checksum", json_string(sum));
    const char *keys[5] = {"total", "alltoallv", "counts", "join", "dedup"};
    double vals[5] = {r->total, r->a2a, r->counts, r->join, r->dedup};
    json_t *t = json_object();
    for (int k = 0; k < 5; k++)
        json_object_set_new(t, keys[k],
                            app_minmax_json(app_minmax_over_ranks(vals[k] / a->repeat,
                                                                  comm_app)));
    json_object_set_new(rec, "time", t); /* seconds per closure, over ranks */
    json_object_set_new(rec, "machine", tuna_run_meta_machine_json(run, run->rpn_env));
    json_object_set_new(rec, "run", tuna_run_meta_run_json(run));
    json_object_set_new(rec, "ranks_per_node_env", json_integer(run->rpn_env));
    return rec;
}

static int run_graph(const tc_args *a, const tuna_run_meta *run, const char *spec,
                     const app_algorithm *algs, int nalg, FILE *json)
{
    char err[1024] = "";
    graph g;
    int rc = load_graph(spec, a->seed, &g, err, sizeof err);
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, comm_app);
    if (rc) {
        if (me == 0)
            fprintf(stderr, "tuna-tc: %s\n", err[0] ? err : "cannot load the graph");
        free(g.edges);
        return 2;
    }
    local_edges le = {0};
    tc_result *res = calloc((size_t)nalg, sizeof *res);
    int ok = res && local_edges_make(&g, &le) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm_app);
    if (!ok) {
        if (me == 0)
            fprintf(stderr, "tuna-tc: %s: out of memory\n", spec);
        free(g.edges), free(le.off), free(le.adj), free(res);
        return 2;
    }
    for (int k = 0; k < nalg; k++)
        res[k].ok = 1;
    for (int rep = 0; rep < a->repeat; rep++)
        for (int k = 0; k < nalg; k++)
            if (res[k].ok && closure(&g, &le, &algs[k], &res[k]))
                res[k].ok = 0;
    int checked = g.n <= (unsigned long)a->check_max;
    int status = 0;
    if (me == 0 && !a->quiet)
        printf("\n== tc %s  %u nodes  %zu edges  P=%d\n%-28s %6s %10s %10s %10s %10s %10s %5s\n",
               spec, g.n, g.m, P, "algorithm", "iters", "tuples", "total_ms", "max_ms",
               "a2a_ms", "a2a_max", "ok");
    for (int k = 0; k < nalg; k++) {
        tc_result *r = &res[k];
        int verified = 0;
        if (r->ok) {
            /* same answer as the first algorithm, and as the serial closure when checked */
            verified = r->tuples == res[0].tuples && r->checksum == res[0].checksum &&
                       r->iterations == res[0].iterations;
            if (checked) {
                int s = serial_check(&g, &r->path);
                if (s < 0) {
                    snprintf(r->error, sizeof r->error, "serial check: out of memory");
                    r->ok = 0;
                    status = 2;
                }
                verified = verified && s == 1;
            }
            if (r->ok && !verified && status == 0)
                status = 1;
        } else
            status = 2;
        app_minmax tot = app_minmax_over_ranks(r->total / a->repeat, comm_app);
        app_minmax a2a = app_minmax_over_ranks(r->a2a / a->repeat, comm_app);
        if (me == 0 && !a->quiet) {
            if (!r->ok)
                printf("%-28s error: %s\n", algs[k].name, r->error);
            else
                printf("%-28s %6lld %10lld %10.3f %10.3f %10.3f %10.3f %5s\n", algs[k].name,
                       r->iterations, r->tuples, 1e3 * tot.mean, 1e3 * tot.max, 1e3 * a2a.mean,
                       1e3 * a2a.max, verified ? (checked ? "yes" : "same") : "WRONG");
        }
        json_t *rec = record_json(a, run, spec, &g, &algs[k], r, verified, checked);
        if (me == 0 && json)
            app_json_line(json, rec);
        else
            json_decref(rec);
    }
    if (me == 0 && !a->quiet)
        fflush(stdout);
    for (int k = 0; k < nalg; k++)
        free(res[k].path.keys);
    free(res), free(le.off), free(le.adj), free(g.edges);
    return status;
}

/* ------------------------------------------------------------ main */

static int fail_all(const char *msg)
{
    if (me == 0) {
        fprintf(stderr, "tuna-tc: %s\n", msg);
        fflush(stderr);
    }
    if (comm_app != MPI_COMM_NULL)
        MPI_Comm_free(&comm_app);
    MPI_Finalize();
    return me == 0 ? 2 : 0;
}

int main(int argc, char **argv)
{
    tc_args a;
    char err[1024] = "";
    int prc = parse_args(argc, argv, &a, err, sizeof err);
    if (prc == 0 && a.help) {
        if (app_env_rank_zero())
            usage(stdout);
        return 0;
    }
    if (prc != 0) {
        if (!app_env_rank_zero())
            return 0; /* rank 0 reports and fails the job */
        fprintf(stderr, "tuna-tc: %s\n", err);
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    /* tuna caches its context on the communicator: a duplicate, freed before MPI_Finalize,
     * keeps that teardown out of MPI_Finalize (SimGrid SMPI aborts on it). */
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_app);
    app_algorithm *algs = NULL;
    int nalg = 0;
    if (app_parse_algorithms(a.algorithms, 0, &algs, &nalg, err, sizeof err))
        return fail_all(err);
    tuna_run_meta run;
    tuna_run_meta_init(&run, "tc", a.run_name, argc, argv);
    FILE *json = NULL;
    int jok = 1;
    if (me == 0 && a.json_path && !(json = fopen(a.json_path, "w")))
        jok = 0;
    MPI_Bcast(&jok, 1, MPI_INT, 0, comm_app);
    if (!jok) {
        free(algs);
        snprintf(err, sizeof err, "cannot open --json file '%s'", a.json_path);
        return fail_all(err);
    }
    if (me == 0 && !a.quiet)
        printf("tuna-tc: %s, P=%d, %d closure(s) per algorithm; times per closure, mean / max "
               "over ranks; ok: yes = equals the serial closure, same = equals the first "
               "algorithm's\n",
               run.library, P, a.repeat);
    int status = 0;
    for (int i = 0; i < a.ngraphs; i++) {
        int s = run_graph(&a, &run, a.graphs[i], algs, nalg, json);
        if (s > status)
            status = s;
    }
    if (json)
        fclose(json);
    free(algs);
    MPI_Comm_free(&comm_app);
    MPI_Finalize();
    return me == 0 ? status : 0;
}
