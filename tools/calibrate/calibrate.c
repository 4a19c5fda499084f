/*
 * tuna-calibrate: measures the machine profile of auto's cost model
 * (docs/tuning.md) and writes it as JSON for TUNA_PROFILE.
 *
 *   mpiexec -n P tuna-calibrate -o profile.json
 *
 * Needs at least 2 ranks on one node for the intra-node level and 2 nodes
 * (physical, or logical with TUNA_RANKS_PER_NODE=Q) for the inter-node level;
 * a level that cannot be measured keeps the built-in values and says so in
 * "measured". Per level: ping-pong of 1 byte (latency + overhead), posting
 * cost of Isend/Irecv (overhead), a stream of small messages (gap), ping-pong
 * of large messages (bandwidth); across nodes also all ranks of node 0
 * streaming to node 1 at once (NICs per node). Locally: memcpy bandwidth and
 * the cost of a derived datatype.
 */
#include "tuna_select.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, P;

typedef struct cal_args {
    const char *out;
    int iters;
    long big;
    int nics;   /* > 0: given on the command line instead of measured */
} cal_args;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One-way time of `bytes` between ranks a and b (half a round trip), median of iters. */
static double pingpong(MPI_Comm comm, int a, int b, long bytes, int iters, char *buf)
{
    double *t = malloc(sizeof(double) * (size_t)iters);
    for (int k = -2; k < iters; k++) { /* two warm-up exchanges */
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        if (me == a) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, b, 1, comm);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, b, 1, comm, MPI_STATUS_IGNORE);
        } else if (me == b) {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, a, 1, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, a, 1, comm);
        }
        if (k >= 0)
            t[k] = (MPI_Wtime() - t0) / 2;
    }
    double r = median(t, iters);
    MPI_Bcast(&r, 1, MPI_DOUBLE, a, comm);
    free(t);
    return r;
}

/*
 * `senders` send n small messages each to their partners at once. Returns
 * (via *post) the sender's CPU time per posted Isend/Irecv pair and the time
 * per message of the whole stream (the gap, when the posting is cheaper).
 */
#define STREAM_N 256
static double stream(MPI_Comm comm, const int *from, const int *to, int pairs, long bytes,
                     int iters, char *buf, double *post)
{
    MPI_Request req[STREAM_N];
    double *t = malloc(sizeof(double) * (size_t)iters), *tp = malloc(sizeof(double) * (size_t)iters);
    int role = 0, peer = -1;
    for (int i = 0; i < pairs; i++) {
        if (me == from[i])
            role = 1, peer = to[i];
        if (me == to[i])
            role = 2, peer = from[i];
    }
    for (int k = -1; k < iters; k++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime(), t1 = t0;
        if (role == 2) {
            for (int i = 0; i < STREAM_N; i++)
                MPI_Irecv(buf + (size_t)i * (size_t)bytes, (int)bytes, MPI_BYTE, peer, 2, comm,
                          &req[i]);
            MPI_Send(NULL, 0, MPI_BYTE, peer, 3, comm); /* receives are posted */
            MPI_Waitall(STREAM_N, req, MPI_STATUSES_IGNORE);
        } else if (role == 1) {
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 3, comm, MPI_STATUS_IGNORE);
            t0 = MPI_Wtime();
            for (int i = 0; i < STREAM_N; i++)
                MPI_Isend(buf + (size_t)i * (size_t)bytes, (int)bytes, MPI_BYTE, peer, 2, comm,
                          &req[i]);
            t1 = MPI_Wtime();
            MPI_Waitall(STREAM_N, req, MPI_STATUSES_IGNORE);
        }
        double mine[2] = {role == 1 ? (MPI_Wtime() - t0) / STREAM_N : 0,
                          role == 1 ? (t1 - t0) / STREAM_N : 0}, all[2];
        MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, comm);
        if (k >= 0) {
            t[k] = all[0];
            tp[k] = all[1];
        }
    }
    double r = median(t, iters);
    *post = median(tp, iters);
    free(t);
    free(tp);
    return r;
}

/* Bandwidth of `pairs` concurrent streams of `big` bytes, aggregate bytes per second. */
static double concurrent_bw(MPI_Comm comm, const int *from, const int *to, int pairs, long big,
                            int iters, char *buf)
{
    double *t = malloc(sizeof(double) * (size_t)iters);
    for (int k = -1; k < iters; k++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (int i = 0; i < pairs; i++) {
            if (me == from[i])
                MPI_Send(buf, (int)big, MPI_BYTE, to[i], 4, comm);
            if (me == to[i])
                MPI_Recv(buf, (int)big, MPI_BYTE, from[i], 4, comm, MPI_STATUS_IGNORE);
        }
        double mine = MPI_Wtime() - t0, all;
        MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (k >= 0)
            t[k] = all;
    }
    double r = (double)big * pairs / median(t, iters);
    free(t);
    return r;
}

/* Measure one level between ranks a and b; fills l and a JSON record of the raw figures. */
static json_t *measure_level(MPI_Comm comm, int a, int b, const cal_args *ca, char *buf,
                             tuna_level_profile *l)
{
    double small = pingpong(comm, a, b, 1, ca->iters, buf);
    double large = pingpong(comm, a, b, ca->big, ca->iters, buf);
    double post = 0;
    double per_msg = stream(comm, &a, &b, 1, 8, ca->iters, buf, &post);
    l->overhead = post;
    l->latency = small > post ? small - post : 0;
    l->gap = per_msg > post ? per_msg - post : 0;
    double wire = large - small;
    l->bandwidth = wire > 0 ? (double)ca->big / wire : (double)ca->big / large;
    return json_pack("{s:i,s:i,s:f,s:f,s:I,s:f,s:f}", "rank_a", a, "rank_b", b,
                     "pingpong_1B_oneway", small, "pingpong_big_oneway", large, "big_bytes",
                     (json_int_t)ca->big, "stream_8B_per_message", per_msg,
                     "isend_post_per_message", post);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpiexec -n P tuna-calibrate [options]\n"
            "Measures auto's machine profile (docs/tuning.md) and writes it as JSON.\n"
            "  -o, --output FILE   write the profile to FILE (default: stdout)\n"
            "  -n, --iters N       repetitions per measurement, median taken (default 20)\n"
            "  -b, --bytes N       message size of the bandwidth tests (default 4194304)\n"
            "      --nics N        NICs per node (default: measured with concurrent streams)\n"
            "  -h, --help          this text\n"
            "Node membership: MPI_COMM_TYPE_SHARED, or TUNA_RANKS_PER_NODE=Q logical nodes.\n");
}

/* Median time of tuna's statistics agreement (tuna_agree: one small allreduce) over all
 * ranks, each sample the slowest rank's. */
static double agreement_time(tuna_ctx *ctx, int iters)
{
    double *t = malloc(sizeof(double) * (size_t)iters);
    long long v[TUNA_AGREE_N] = {0};
    for (int k = -2; k < iters; k++) { /* two warm-up rounds */
        MPI_Barrier(ctx->comm);
        double t0 = MPI_Wtime();
        tuna_agree(ctx, v);
        double dt = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
        if (k >= 0 && t)
            t[k] = dt;
    }
    double m = t ? median(t, iters) : 0;
    free(t);
    return m;
}

static int parse(int argc, char **argv, cal_args *a)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"iters", required_argument, 0, 'n'},
                                         {"bytes", required_argument, 0, 'b'},
                                         {"nics", required_argument, 0, 'N'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "o:n:b:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': a->out = optarg; break;
        case 'n':
            a->iters = (int)strtol(optarg, &end, 10);
            if (*end || a->iters < 1 || a->iters > 100000) {
                fprintf(stderr, "tuna-calibrate: --iters must be an integer in [1, 100000]\n");
                return 2;
            }
            break;
        case 'b':
            a->big = strtol(optarg, &end, 10);
            if (*end || a->big < 1024 || a->big > (1L << 30)) {
                fprintf(stderr, "tuna-calibrate: --bytes must be in [1024, 2^30]\n");
                return 2;
            }
            break;
        case 'N':
            a->nics = (int)strtol(optarg, &end, 10);
            if (*end || a->nics < 1 || a->nics > 1024) {
                fprintf(stderr, "tuna-calibrate: --nics must be in [1, 1024]\n");
                return 2;
            }
            break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tuna-calibrate: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    cal_args ca = {.out = NULL, .iters = 20, .big = 4L << 20, .nics = 0};
    int prc = parse(argc, argv, &ca);
    if (prc) {
        MPI_Finalize();
        return prc == 1 ? 0 : 2;
    }
    tuna_ctx *ctx;
    if (tuna_ctx_get(MPI_COMM_WORLD, "tuna-calibrate", &ctx) != MPI_SUCCESS) {
        if (me == 0)
            fprintf(stderr, "tuna-calibrate: %s\n", tuna_error_string(MPI_ERR_OTHER));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm comm = ctx->comm;
    size_t bufsz = (size_t)ca.big > (size_t)STREAM_N * 8 ? (size_t)ca.big : STREAM_N * 8;
    char *buf = calloc(1, bufsz);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 1);

    tuna_profile p;
    tuna_profile_builtin(&p);
    json_t *measured = json_pack("{s:i,s:i,s:i,s:i}", "P", P, "nodes", ctx->nnodes,
                                 "ranks_per_node", ctx->ranks_per_node, "iters", ca.iters);
    /* Intra-node pair: rank 0 and the next rank of its node. Inter: rank 0 and node 1's first. */
    int intra_peer = -1, inter_peer = -1;
    for (int r = 1; r < P; r++) {
        if (intra_peer < 0 && ctx->node_of[r] == ctx->node_of[0])
            intra_peer = r;
        if (inter_peer < 0 && ctx->node_of[r] != ctx->node_of[0])
            inter_peer = r;
    }
    if (intra_peer > 0)
        json_object_set_new(measured, "intra",
                            measure_level(comm, 0, intra_peer, &ca, buf, &p.intra));
    else
        json_object_set_new(measured, "intra",
                            json_string("not measured (one rank per node): built-in values"));
    if (inter_peer > 0) {
        json_object_set_new(measured, "inter",
                            measure_level(comm, 0, inter_peer, &ca, buf, &p.inter));
        /* NICs: every rank of node 0 streams to a distinct rank of another node at once. */
        int *from = malloc(sizeof(int) * (size_t)P), *to = malloc(sizeof(int) * (size_t)P);
        int pairs = 0;
        int other = ctx->node_of[inter_peer];
        int *used = calloc((size_t)P, sizeof(int));
        for (int r = 0; r < P; r++) {
            if (ctx->node_of[r] != ctx->node_of[0])
                continue;
            for (int s = 0; s < P; s++)
                if (ctx->node_of[s] == other && !used[s]) {
                    used[s] = 1;
                    from[pairs] = r;
                    to[pairs++] = s;
                    break;
                }
        }
        double agg = concurrent_bw(comm, from, to, pairs, ca.big, ca.iters, buf);
        double ratio = agg / p.inter.bandwidth;
        int nics = ca.nics > 0 ? ca.nics : (int)(ratio + 0.5);
        if (nics < 1)
            nics = 1;
        if (nics > pairs)
            nics = pairs;
        p.nics_per_node = nics;
        json_object_set_new(measured, "concurrent_pairs", json_integer(pairs));
        json_object_set_new(measured, "concurrent_bandwidth", json_real(agg));
        json_object_set_new(measured, "nics_source",
                            json_string(ca.nics > 0 ? "--nics" : "concurrent/single bandwidth"));
        free(from);
        free(to);
        free(used);
    } else {
        json_object_set_new(measured, "inter",
                            json_string("not measured (one node): built-in values; use "
                                        "TUNA_RANKS_PER_NODE or run on 2+ nodes"));
        if (ca.nics > 0)
            p.nics_per_node = ca.nics;
    }

    /* The statistics agreement, as the log2 P rounds MPI libraries take for it. */
    double agree = P > 1 ? agreement_time(ctx, ca.iters) : 0;
    double agree_round = P > 1 ? agree / ceil(log2((double)P)) : 0;
    json_object_set_new(measured, "agreement_allreduce", json_real(agree));

    /* Local costs on rank 0: memcpy bandwidth and a derived datatype's life cycle. */
    if (me == 0) {
        char *dst = malloc(bufsz);
        double best = 1e30;
        for (int k = 0; k < ca.iters && dst; k++) {
            double t0 = MPI_Wtime();
            memcpy(dst, buf, bufsz);
            double t = MPI_Wtime() - t0;
            if (t < best)
                best = t;
            buf[k % bufsz] = dst[(k * 7) % bufsz]; /* keep the copy observable */
        }
        if (dst && best > 0)
            p.copy_bandwidth = (double)bufsz / best;
        free(dst);
        enum { NB = 1024 };
        MPI_Aint *disp = malloc(sizeof(MPI_Aint) * NB);
        for (int i = 0; i < NB; i++)
            disp[i] = (MPI_Aint)i * 16;
        double t1 = 1e30, tn = 1e30;
        for (int k = 0; k < ca.iters; k++)
            for (int n = 1; n <= NB; n += NB - 1) {
                MPI_Datatype dt;
                double t0 = MPI_Wtime();
                MPI_Type_create_hindexed_block(n, 8, disp, MPI_BYTE, &dt);
                MPI_Type_commit(&dt);
                MPI_Type_free(&dt);
                double t = MPI_Wtime() - t0;
                if (n == 1 && t < t1)
                    t1 = t;
                if (n == NB && t < tn)
                    tn = t;
            }
        free(disp);
        p.datatype_overhead = t1;
        p.datatype_block = tn > t1 ? (tn - t1) / (NB - 1) : 0;
    }
    int rc = 0;
    if (me == 0) {
        char host[MPI_MAX_PROCESSOR_NAME];
        int hl;
        MPI_Get_processor_name(host, &hl);
        char name[64];
        snprintf(name, sizeof name, "calibrated on %.40s", host);
        json_object_set_new(measured, "host", json_string(host));
        /* vendor_alltoallv: the built-in guess for this MPI library, written when it does not
         * depend on P (Open MPI's does: auto applies that rule per call instead). */
        char version[MPI_MAX_LIBRARY_VERSION_STRING] = "", vendor[96] = "";
        int vlen = 0;
        MPI_Get_library_version(version, &vlen);
        version[strcspn(version, "\n")] = '\0';
        json_object_set_new(measured, "mpi_library", json_string(version));
        tuna_mpi_library lib = tuna_mpi_library_detect(version);
        tuna_options vo;
        int how = tuna_vendor_alltoallv_guess(lib, P, &vo);
        if (how == TUNA_VENDOR_GUESS_FIXED &&
            tuna_options_format(&vo, vendor, sizeof vendor) != MPI_SUCCESS)
            vendor[0] = '\0';
        json_object_set_new(
            measured, "vendor_alltoallv",
            json_string(how == TUNA_VENDOR_GUESS_FIXED
                            ? "built-in guess for this MPI library (docs/tuning.md)"
                        : how == TUNA_VENDOR_GUESS_BY_P
                            ? "not written: this library chooses by communicator size; auto "
                              "applies its built-in rule per call"
                            : "not written: unknown MPI library, vendor is not a candidate of "
                              "auto unless you add the key"));
        json_t *root = json_pack(
            "{s:i,s:s,s:{s:f,s:f,s:f,s:f},s:{s:f,s:f,s:f,s:f},s:i,s:f,s:f,s:f,s:o}",
            "tuna_profile", 1, "name", name, "intra", "latency", p.intra.latency, "overhead",
            p.intra.overhead, "gap", p.intra.gap, "bandwidth", p.intra.bandwidth, "inter",
            "latency", p.inter.latency, "overhead", p.inter.overhead, "gap", p.inter.gap,
            "bandwidth", p.inter.bandwidth, "nics_per_node", p.nics_per_node, "copy_bandwidth",
            p.copy_bandwidth, "datatype_overhead", p.datatype_overhead, "datatype_block",
            p.datatype_block, "measured", measured);
        measured = NULL;
        if (root && vendor[0])
            json_object_set_new(root, "vendor_alltoallv", json_string(vendor));
        if (root && P > 1)
            json_object_set_new(root, "agreement",
                                json_pack("{s:f,s:f}", "per_round", agree_round, "per_rank", 0.0));
        if (!root)
            rc = 1;
        else if (ca.out) {
            if (json_dump_file(root, ca.out, JSON_INDENT(2) | JSON_SORT_KEYS) != 0) {
                fprintf(stderr, "tuna-calibrate: cannot write %s\n", ca.out);
                rc = 1;
            } else
                fprintf(stderr, "tuna-calibrate: profile written to %s\n", ca.out);
        } else {
            json_dumpf(root, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
            fputc('\n', stdout);
        }
        json_decref(root);
    }
    json_decref(measured);
    free(buf);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
