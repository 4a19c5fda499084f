/*
 * Cost model of the alltoallv algorithms: predicted time from rounds, messages
 * and bytes per round under a LogGP-style profile (docs/tuning.md has the
 * formulas; each function below names the one it implements).
 */
#include "tuna_select.h"

#include <math.h>
#include <string.h>

/* Algorithms the model knows, identified by table name (table order may change). */
enum model_alg {
    M_SPREADOUT, M_SCATTERED, M_LINEAR, M_PAIRWISE, M_XOR, M_MULTIPAIR, M_WAITANY, M_TESTANY,
    M_BRUCK, M_PADDED_BRUCK, M_TWOPHASE_BRUCK, M_TUNA, M_COALESCED, M_STAGGERED, M_NONE
};

static enum model_alg model_of(int alg)
{
    static const char *const names[M_NONE] = {
        "spreadout", "scattered", "linear", "pairwise", "xor", "multipair", "multipair-waitany",
        "multipair-testany", "bruck", "padded-bruck", "twophase-bruck", "tuna", "coalesced",
        "staggered"};
    if (alg < 0 || alg >= tuna_a2av_table_len)
        return M_NONE;
    for (int i = 0; i < M_NONE; i++)
        if (strcmp(tuna_a2av_table[alg].info.name, names[i]) == 0)
            return (enum model_alg)i;
    return M_NONE;
}

/* Per-evaluation constants. */
typedef struct model {
    const tuna_profile *m;
    tuna_model_layout l;
    double B;         /* global maximum block */
    double a;         /* bytes per destination of the rank that sends most: total_max / P */
    double am;        /* mean bytes per destination (the mean block): a node's ranks on average */
    double nz;        /* fraction of non-empty blocks (linear algorithms skip empty ones) */
} model;

tuna_model_layout tuna_model_layout_of(const tuna_select_input *in)
{
    tuna_model_layout l = {.P = in->P, .N = in->N < 1 ? 1 : in->N, .Qeq = in->Q > 0 ? in->Q : 0};
    l.Q = in->Q > 0 ? in->Q : (in->P + l.N - 1) / l.N;
    if (l.Q < 1)
        l.Q = 1;
    return l;
}

/* Fraction of ranks whose peer at distance d (consecutive placement) is on another node. */
double tuna_model_cross(const tuna_model_layout *l, long d)
{
    if (l->N <= 1 || l->P <= 1)
        return 0;
    long e = d % l->P;
    if (l->P - e < e)
        e = l->P - e;
    return e >= l->Q ? 1.0 : (double)e / l->Q;
}

static double cross_fraction(const model *x, long d)
{
    return tuna_model_cross(&x->l, d);
}

/*
 * One phase: every rank posts m messages carrying `bytes` bytes (`node_bytes` on average), a
 * fraction phi of them to other nodes, then waits for all of them. With W the transfers'
 * bound, max(m*g, intra bytes / bw_intra, inter bytes of one rank / bw_inter, inter bytes
 * of the node / (nics * bw_inter), the busiest link's bytes / bw_link) and o1 = o/m:
 *   eager (mean message <= eager_limit, receives posted first):
 *       T = max(m*o, L + o1 + max((m-1)*o1/2, W))
 *   otherwise: T = L + m*o/2 + max(m*o/2, W)
 * with L, o, g of the inter-node level as soon as anything crosses nodes.
 */
static double phase_time(const tuna_profile *prof, const tuna_model_layout *lay, double m,
                         double bytes, double node_bytes, double phi, long d0, long d1,
                         long step, bool receives_first)
{
    if (m <= 0)
        return 0;
    const int Q = lay->Q;
    double net = phi > 0 ? tuna_model_net_load(prof, lay->P, lay->Qeq, lay->N, d0, d1, step) : 0;
    const tuna_level_profile *I = &prof->intra, *E = &prof->inter;
    double L = phi > 0 ? E->latency : I->latency;
    double o = m * (phi * E->overhead + (1 - phi) * I->overhead);
    double g = m * (phi * E->gap + (1 - phi) * I->gap);
    /* The rank with the most off-node traffic: at least one message's worth. */
    double phi_worst = phi > 0 ? fmin(1.0, phi + 1.0 / m) : 0;
    double w = g;
    w = fmax(w, bytes * (1 - phi) / I->bandwidth);
    w = fmax(w, bytes * phi_worst / E->bandwidth);
    /* Node-level limits: the Q ranks' off-node bytes, each rank sending node_bytes. */
    w = fmax(w, node_bytes * phi * Q / (prof->nics_per_node * E->bandwidth));
    if (net > 0 && prof->net_link_bandwidth > 0) /* the busiest link of the network */
        w = fmax(w, node_bytes * phi * Q * net / prof->net_link_bandwidth);
    /* An eager message leaves when its send overhead is paid and is completed when it has
     * arrived: the transfers start after the first send (half of o1) and overlap the rest;
     * the last receive's half follows them; the CPU's m*o bounds it all. */
    if (receives_first && bytes <= m * prof->eager_limit) {
        double o1 = o / m;
        return fmax(o, L + o1 + fmax((o - o1) / 2, w));
    }
    /* Rendezvous, or receives posted only after an earlier phase (eager messages then wait
     * unexpected): the send half of o overlaps the transfers, the rest does not (fitted to
     * SMPI, docs/tuning.md). */
    return L + o / 2 + fmax(o / 2, w);
}

double tuna_model_phase(const tuna_profile *prof, const tuna_model_layout *lay, double m,
                        double bytes, double node_bytes, double phi, long d0, long d1, long step)
{
    return phase_time(prof, lay, m, bytes, node_bytes, phi, d0, d1, step, true);
}

/* A phase whose messages go to rank distances d0, d0 + step, ..., d1 (the network term);
 * `bytes` of the busiest rank, `nbytes` of a rank on average (the node-level limits). */
static double phase(const model *x, double m, double bytes, double nbytes, double phi, long d0,
                    long d1, long step)
{
    return phase_time(x->m, &x->l, m, bytes, nbytes, phi, d0, d1, step, true);
}

/* The same for a TuNA round's two phases: the engine posts a round's data sends before its
 * metadata has arrived and its data receives after, so neither phase overlaps as an eager
 * exchange with its receives posted first does. */
static double tuna_round_phase(const model *x, double m, double bytes, double nbytes,
                               double phi, long d0, long d1, long step)
{
    return phase_time(x->m, &x->l, m, bytes, nbytes, phi, d0, d1, step, false);
}

/* Bytes of a round in which each rank sends m of its blocks: the round ends with its slowest
 * pair, so one maximum block replaces one average block. */
static double round_bytes(const model *x, double m)
{
    if (m <= 0)
        return 0;
    return fmin(m * x->B, m * x->a + (x->B - x->a));
}

/* Mean cross fraction over distances d0..d1. */
static double cross_range(const model *x, long d0, long d1)
{
    if (x->l.N <= 1 || d1 < d0)
        return 0;
    double s = 0;
    for (long d = d0; d <= d1; d++)
        s += cross_fraction(x, d);
    return s / (double)(d1 - d0 + 1);
}

/* Linear exchange in batches of `b` peers, each batch completed before the next
 * (scattered, multipair; b = P-1: spreadout, linear). */
static double batched_linear(const model *x, long b)
{
    const long n = x->l.P - 1;
    if (n <= 0)
        return 0;
    if (b >= n) /* one phase: the busiest rank's total, no extra straggler block */
        return phase(x, n * x->nz, n * x->a, n * x->am, cross_range(x, 1, n), 1, n, 1);
    double t = 0;
    for (long d0 = 1; d0 <= n; d0 += b) {
        long d1 = d0 + b - 1 < n ? d0 + b - 1 : n;
        double m = (double)(d1 - d0 + 1);
        t += phase(x, m * x->nz, round_bytes(x, m), m * x->am, cross_range(x, d0, d1), d0, d1,
                   1);
    }
    return t;
}

/* One exchange per step, P-1 steps (pairwise, xor). */
static double stepwise(const model *x)
{
    double t = 0;
    for (long d = 1; d < x->l.P; d++)
        t += phase(x, x->nz, round_bytes(x, 1), x->am, cross_fraction(x, d), d, d, 1);
    return t;
}

/* Sliding window of `s` messages each way: latency is exposed once per window turn only. */
static double window(const model *x, long s)
{
    const long n = x->l.P - 1;
    if (n <= 0)
        return 0;
    double phi = cross_range(x, 1, n);
    double full = phase(x, n * x->nz, n * x->a, n * x->am, phi, 1, n, 1);
    double L = phi > 0 ? x->m->inter.latency : x->m->intra.latency;
    double turns = ceil((double)n / (double)(s < 1 ? 1 : s));
    return fmax(full, turns * L + n * x->nz * (phi * x->m->inter.overhead +
                                               (1 - phi) * x->m->intra.overhead));
}

/* Number of i in [0, P) whose base-r digit x (weight w = r^x) equals z. */
static double digit_count(long P, long r, long w, long z)
{
    long long cyc = (long long)w * r;
    long long full = (long long)P / cyc * w;
    long long rest = (long long)P % cyc - (long long)z * w;
    if (rest < 0)
        rest = 0;
    if (rest > w)
        rest = w;
    return (double)(full + rest);
}

/* Radix-2 Bruck rounds: K rounds of one message; bytes per slot `slot_bytes` (B if padded). */
static double bruck_rounds(const model *x, bool twophase, double *slots_moved)
{
    double t = 0, moved = 0;
    for (long w = 1; w < x->l.P; w *= 2) {
        double n = digit_count(x->l.P, 2, w, 1);
        double phi = cross_fraction(x, w);
        moved += n;
        if (twophase)
            t += phase(x, 1, 8 * n, 8 * n, phi, w, w, 1) +
                 phase(x, 1, round_bytes(x, n), n * x->am, phi, w, w, 1) +
                 2 * n * x->a / x->m->copy_bandwidth;
        else
            t += phase(x, 1, n * x->B, n * x->B, phi, w, w, 1);
    }
    *slots_moved = moved;
    return t;
}

/*
 * TuNA over P ranks with radix r and `b` rounds of a digit in flight: per batch a
 * metadata phase (8 bytes per block) and a data phase (the blocks' bytes, one message per
 * round), plus two derived datatypes per round. Blocks average a bytes, at most B bytes.
 */
static double tuna_rounds(const model *x, long P, long r, long b, double a, double am, double B,
                          bool intra_only)
{
    if (r > P)
        r = P;
    if (r < 2)
        r = 2;
    if (b > r - 1)
        b = r - 1;
    if (b < 1)
        b = 1;
    const tuna_profile *m = x->m;
    double t = 0;
    for (long w = 1; w < P;) {
        for (long z0 = 1; z0 < r && z0 * w < P; z0 += b) {
            double msgs = 0, blocks = 0, phi = 0;
            long z1 = z0;
            for (long z = z0; z < z0 + b && z < r && z * w < P; z++) {
                z1 = z;
                double n = digit_count(P, r, w, z);
                msgs += 1;
                blocks += n;
                phi += intra_only ? 0 : cross_fraction(x, z * w);
                t += 2 * (m->datatype_overhead + n * m->datatype_block);
            }
            phi /= msgs;
            double bytes = fmin(blocks * B, blocks * a + (B - a));
            /* hindexed data: the library gathers and scatters it (one copy each side) */
            t += tuna_round_phase(x, msgs, 8 * blocks, 8 * blocks, phi, z0 * w, z1 * w, w) +
                 tuna_round_phase(x, msgs, bytes, blocks * am, phi, z0 * w, z1 * w, w) +
                 2 * bytes / m->copy_bandwidth;
        }
        if (w > (P - 1) / r)
            break;
        w *= r;
    }
    return t;
}

/* Hierarchical TuNA: intra-node TuNA on blocks of N sub-blocks, then the inter-node phase. */
static double hierarchical(const model *x, long r, long b, bool coalesced)
{
    const tuna_profile *m = x->m;
    if (x->l.N <= 1) /* one node: the intra-node engine alone, all rounds of a digit together */
        return tuna_rounds(x, x->l.P, r, r - 1, x->a, x->am, x->B, true);
    const long Q = x->l.Q, N = x->l.N;
    if (r > Q)
        r = Q;
    double a_sub = N * x->a, B_sub = N * x->a + (x->B - x->a);
    double t = Q > 1 ? tuna_rounds(x, Q, r < 2 ? 2 : r, Q, a_sub, N * x->am, B_sub, true) : 0;
    /* sizes, one message to the same local rank of every other node */
    double sizes = 8.0 * Q * (N - 1);
    t += phase(x, (double)(N - 1), sizes, sizes, 1.0, Q, (N - 1) * Q, Q);
    long msgs = coalesced ? N - 1 : (N - 1) * Q;
    double per_msg = coalesced ? Q * x->a : x->a, per_msg_mean = coalesced ? Q * x->am : x->am;
    long blocks_per_msg = coalesced ? Q : 1;
    if (b > msgs)
        b = msgs;
    for (long k = 0; k < msgs; k += b) {
        double mm = (double)(k + b <= msgs ? b : msgs - k);
        /* coalesced visits node distances k+1.., staggered spreads each batch over them all */
        long n0 = coalesced ? k + 1 : 1, n1 = coalesced ? k + (long)mm : N - 1;
        t += phase(x, mm, mm * per_msg + (x->B - x->a), mm * per_msg_mean, 1.0, n0 * Q, n1 * Q,
                   Q) +
             2 * mm * per_msg / m->copy_bandwidth;
        t += mm * 2 * (m->datatype_overhead + blocks_per_msg * m->datatype_block);
    }
    return t;
}

double tuna_model_alltoallv(const tuna_profile *m, const tuna_select_input *in, int alg,
                            const long *param)
{
    enum model_alg k = model_of(alg);
    if (k == M_NONE)
        return -1;
    model x = {.m = m, .l = tuna_model_layout_of(in), .B = in->max_block};
    x.a = in->total_max / (double)in->P;
    if (x.a > x.B)
        x.a = x.B;
    x.am = in->mean_block < x.a ? in->mean_block : x.a;
    x.nz = 1.0 - in->zero_fraction;
    if (in->P <= 1 || in->max_block <= 0)
        return 0;
    const double cb = m->copy_bandwidth;
    const long P = in->P;
    double moved;
    switch (k) {
    case M_SPREADOUT:
    case M_LINEAR: return batched_linear(&x, P - 1);
    case M_SCATTERED:
    case M_MULTIPAIR: return batched_linear(&x, param[0]);
    case M_PAIRWISE:
    case M_XOR: return stepwise(&x);
    case M_WAITANY:
    case M_TESTANY: return window(&x, param[0]);
    case M_BRUCK: {
        /* padding, two rotations, scan-out: 4 P B; packing each round: 2 n_k B */
        double t = bruck_rounds(&x, false, &moved);
        return t + (4.0 * P * x.B + 2.0 * moved * x.B) / cb;
    }
    case M_PADDED_BRUCK: {
        double t = bruck_rounds(&x, false, &moved);
        if (param[0] == 1) /* derived datatypes: the MPI library packs them itself */
            return t + (2.0 * P * x.B + 2.0 * moved * x.B) / cb +
                   2.0 * ceil(log2((double)P)) * m->datatype_overhead +
                   2.0 * moved * m->datatype_block;
        return t + (2.0 * P * x.B + 2.0 * moved * x.B) / cb;
    }
    case M_TWOPHASE_BRUCK: return bruck_rounds(&x, true, &moved);
    case M_TUNA: return tuna_rounds(&x, P, param[0], param[1], x.a, x.am, x.B, false);
    case M_COALESCED:
    case M_STAGGERED:
        if (in->Q <= 0) /* unequal nodes: the algorithm runs flat tuna with the same radix */
            return tuna_rounds(&x, P, param[0], param[1], x.a, x.am, x.B, false);
        return hierarchical(&x, param[0], param[1], k == M_COALESCED);
    case M_NONE: break;
    }
    return -1;
}
