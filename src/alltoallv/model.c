/*
 * Cost models and auto's candidate grids of the alltoallv algorithms, named by the rows of
 * table.c: predicted time from rounds, messages and bytes per round under a LogGP-style
 * profile (docs/tuning.md has the formulas; each function below names the one it
 * implements), built on the selector's phase model (src/select/model_phase.c).
 */
#include "alltoallv.h"

#include <math.h>

/* Per-evaluation constants. */
typedef struct model {
    const tuna_profile *m;
    tuna_model_layout l;
    double B;         /* global maximum block */
    double a;         /* bytes per destination of the rank that sends most: total_max / P */
    double am;        /* mean bytes per destination (the mean block): a node's ranks on average */
    double nz;        /* fraction of non-empty blocks (linear algorithms skip empty ones) */
} model;

static double cross_fraction(const model *x, long d)
{
    return tuna_model_cross(&x->l, d);
}

/* A phase whose messages go to rank distances d0, d0 + step, ..., d1 (the network term);
 * `bytes` of the busiest rank, `nbytes` of a rank on average (the node-level limits). */
static double phase(const model *x, double m, double bytes, double nbytes, double phi, long d0,
                    long d1, long step)
{
    return tuna_model_phase(x->m, &x->l, m, bytes, nbytes, phi, d0, d1, step);
}

/* The same for a TuNA round's two phases: the rounds post a round's data sends before its
 * metadata has arrived and its data receives after, so neither phase overlaps as an eager
 * exchange with its receives posted first does. */
static double tuna_round_phase(const model *x, double m, double bytes, double nbytes,
                               double phi, long d0, long d1, long step)
{
    return tuna_model_phase_posted_late(x->m, &x->l, m, bytes, nbytes, phi, d0, d1, step);
}

/* Bytes of a round in which each rank sends m of its blocks: the round ends with its slowest
 * pair, so one maximum block replaces one average block. */
static double round_bytes(const model *x, double m)
{
    if (m <= 0)
        return 0;
    return fmin(m * x->B, m * x->a + (x->B - x->a));
}

/* The same when `late` of its receives are completed only after the others
 * (tuna_model_phase_late). */
static double phase_late(const model *x, double m, double late, double bytes, double nbytes,
                         double phi, long d0, long d1, long step)
{
    return tuna_model_phase_late(x->m, &x->l, m, late, bytes, nbytes, phi, d0, d1, step);
}

/*
 * Receives of m that the engine's wait completes only after its first chunk of TUNA_WAIT_CHUNK
 * requests: `first` receives are in that chunk (TUNA_WAIT_CHUNK / 2 where receives and sends
 * alternate, TUNA_WAIT_CHUNK where all receives go first). When the first chunk holds
 * off-node receives that end with a shared link, the later ones' overheads follow it.
 */
static double late_receives(double m, double first)
{
    return fmax(0.0, m - first);
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
 * (scattered, multipair; b = P-1: spreadout, linear); `first` receives of a batch are in
 * the wait's first chunk (late_receives). */
static double batched_linear(const model *x, long b, double first)
{
    const long n = x->l.P - 1;
    if (n <= 0)
        return 0;
    if (b >= n) /* one phase: the busiest rank's total, no extra straggler block */
        return phase_late(x, n * x->nz, late_receives(n * x->nz, first), n * x->a, n * x->am,
                          cross_range(x, 1, n), 1, n, 1);
    double t = 0;
    for (long d0 = 1; d0 <= n; d0 += b) {
        long d1 = d0 + b - 1 < n ? d0 + b - 1 : n;
        double m = (double)(d1 - d0 + 1);
        t += phase_late(x, m * x->nz, late_receives(m * x->nz, first), round_bytes(x, m),
                        m * x->am, cross_range(x, d0, d1), d0, d1, 1);
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
    /* A message posted when another completes starts a turn later: on a link-bound exchange
     * each turn after the first adds its latency (SMPI, two-node torus, 1 KiB: stride 1 took
     * 103 us where the whole exchange at once takes 82) */
    return fmax(full + (turns - 1) * L,
                turns * L + n * x->nz * (phi * x->m->inter.overhead +
                                         (1 - phi) * x->m->intra.overhead));
}

/*
 * Bytes of a size announcement for n blocks of at most B bytes: a header byte, then each size
 * in the narrowest of 0, 1, 2, 4, 8 bytes that holds B (tuna_sizes_encode, sizes_wire.c).
 */
static double meta_bytes(double n, double B)
{
    const double width = B <= 0 ? 0 : B < 256 ? 1 : B < 65536 ? 2 : B < 4294967296.0 ? 4 : 8;
    return 1 + n * width;
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
            t += phase(x, 1, meta_bytes(n, x->B), meta_bytes(n, x->B), phi, w, w, 1) +
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
 * metadata phase (meta_bytes of `nsub` sizes per block) and a data phase (the blocks' bytes,
 * one message per round), plus two derived datatypes per round. Blocks average a bytes, at
 * most B bytes; a block is made of nsub sub-blocks (the hierarchical rounds: one per node)
 * whose sizes are announced each, in the width that holds the global maximum block.
 * sizes_known (a uniform all-to-all): the rounds send no metadata, only the data phases.
 */
static double tuna_rounds(const model *x, long P, long r, long b, double a, double am, double B,
                          long nsub, bool intra_only, bool sizes_known)
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
            const double meta = msgs * meta_bytes(blocks * (double)nsub / msgs, x->B);
            /* The data sends are posted after the metadata sends and before the metadata
             * wait: their send overheads (half of o) run while the metadata travels. Taken
             * where the latency is one figure, within a node; across nodes the profile's L
             * is the network's average route, longer than most rounds' (2-3 hops on the
             * Polaris-like P = 64 against L's 3), and the overlap would then favour larger
             * batches wrongly (tuna r = 3, 2 rounds in flight, over r = 2: 20.1 against
             * 18.1 us there; docs/simulation.md). */
            const double data_sends =
                msgs * (phi * m->inter.overhead + (1 - phi) * m->intra.overhead) / 2;
            const double overlap = intra_only ? fmin(m->intra.latency, data_sends) : 0;
            if (sizes_known) /* no metadata, nothing for the data sends to overlap */
                t += tuna_round_phase(x, msgs, bytes, blocks * am, phi, z0 * w, z1 * w, w) +
                     2 * bytes / m->copy_bandwidth;
            else
                t += tuna_round_phase(x, msgs, meta, meta, phi, z0 * w, z1 * w, w) +
                     tuna_round_phase(x, msgs, bytes, blocks * am, phi, z0 * w, z1 * w, w) -
                     overlap + 2 * bytes / m->copy_bandwidth;
        }
        if (w > (P - 1) / r)
            break;
        w *= r;
    }
    return t;
}

/* Hierarchical TuNA: intra-node TuNA on blocks of N sub-blocks, then the inter-node phase
 * (sizes_known: neither phase sends sizes). */
static double hierarchical(const model *x, long r, long b, bool coalesced, bool sizes_known)
{
    const tuna_profile *m = x->m;
    if (x->l.N <= 1) /* one node: the intra-node rounds alone, all rounds of a digit together */
        return tuna_rounds(x, x->l.P, r, r - 1, x->a, x->am, x->B, 1, true, sizes_known);
    const long Q = x->l.Q, N = x->l.N;
    if (r > Q)
        r = Q;
    double a_sub = N * x->a, B_sub = N * x->a + (x->B - x->a);
    double t = Q > 1 ? tuna_rounds(x, Q, r < 2 ? 2 : r, Q, a_sub, N * x->am, B_sub, N, true,
                                   sizes_known)
                     : 0;
    /* sizes, one message to the same local rank of every other node: Q blocks of at most B */
    double sizes = (N - 1) * meta_bytes((double)Q, x->B);
    if (!sizes_known)
        t += phase_late(x, (double)(N - 1), late_receives(N - 1, TUNA_WAIT_CHUNK), sizes, sizes,
                        1.0, Q, (N - 1) * Q, Q);
    long msgs = coalesced ? N - 1 : (N - 1) * Q;
    double per_msg = coalesced ? Q * x->a : x->a, per_msg_mean = coalesced ? Q * x->am : x->am;
    long blocks_per_msg = coalesced ? Q : 1;
    if (b > msgs)
        b = msgs;
    for (long k = 0; k < msgs; k += b) {
        double mm = (double)(k + b <= msgs ? b : msgs - k);
        /* coalesced visits node distances k+1.., staggered spreads each batch over them all */
        long n0 = coalesced ? k + 1 : 1, n1 = coalesced ? k + (long)mm : N - 1;
        /* a batch posts all its receives, then its sends */
        t += phase_late(x, mm, late_receives(mm, TUNA_WAIT_CHUNK), mm * per_msg + (x->B - x->a),
                        mm * per_msg_mean, 1.0, n0 * Q, n1 * Q, Q) +
             2 * mm * per_msg / m->copy_bandwidth;
        t += mm * 2 * (m->datatype_overhead + blocks_per_msg * m->datatype_block);
    }
    return t;
}

/*
 * The statistics as the formulas use them; false when nothing moves (P = 1 or every block
 * empty: every algorithm costs 0).
 */
static bool model_of(model *x, const tuna_profile *m, const tuna_select_input *in)
{
    *x = (model){.m = m, .l = tuna_model_layout_of(in), .B = in->max_block};
    x->a = in->total_max / (double)in->P;
    if (x->a > x->B)
        x->a = x->B;
    x->am = in->mean_block < x->a ? in->mean_block : x->a;
    x->nz = 1.0 - in->zero_fraction;
    return in->P > 1 && in->max_block > 0;
}

/* ---- cost models (tuna_cost_fn), one per row or group of rows in table.c ---- */

/* All peers in one phase, receives and sends alternating (spreadout). */
double tuna_a2av_cost_one_phase(const tuna_profile *m, const tuna_select_input *in,
                                const tuna_algorithm_info *info, const long *param)
{
    (void)info;
    (void)param;
    model x;
    return model_of(&x, m, in) ? batched_linear(&x, in->P - 1, TUNA_WAIT_CHUNK / 2) : 0;
}

/* All peers in one phase, every receive posted before the sends (linear). */
double tuna_a2av_cost_receives_first(const tuna_profile *m, const tuna_select_input *in,
                                     const tuna_algorithm_info *info, const long *param)
{
    (void)info;
    (void)param;
    model x;
    return model_of(&x, m, in) ? batched_linear(&x, in->P - 1, TUNA_WAIT_CHUNK) : 0;
}

/* Batches of peers as many as the row's one parameter says (scattered's block, multipair's
 * stride). */
double tuna_a2av_cost_batches(const tuna_profile *m, const tuna_select_input *in,
                              const tuna_algorithm_info *info, const long *param)
{
    model x;
    return model_of(&x, m, in) ? batched_linear(&x, tuna_param_get(info, param,
                                                                   info->params[0].name),
                                                TUNA_WAIT_CHUNK / 2)
                               : 0;
}

/* One peer per step (pairwise, xor). */
double tuna_a2av_cost_stepwise(const tuna_profile *m, const tuna_select_input *in,
                               const tuna_algorithm_info *info, const long *param)
{
    (void)info;
    (void)param;
    model x;
    return model_of(&x, m, in) ? stepwise(&x) : 0;
}

/* A window of `stride` messages each way (multipair-waitany, multipair-testany). */
double tuna_a2av_cost_window(const tuna_profile *m, const tuna_select_input *in,
                             const tuna_algorithm_info *info, const long *param)
{
    model x;
    return model_of(&x, m, in) ? window(&x, tuna_param_get(info, param, "stride")) : 0;
}

/* Classic Bruck: padding, two rotations, scan-out: 4 P B; packing each round: 2 n_k B. */
double tuna_a2av_cost_bruck(const tuna_profile *m, const tuna_select_input *in,
                            const tuna_algorithm_info *info, const long *param)
{
    (void)info;
    (void)param;
    model x;
    if (!model_of(&x, m, in))
        return 0;
    double moved, t = bruck_rounds(&x, false, &moved);
    return t + (4.0 * in->P * x.B + 2.0 * moved * x.B) / m->copy_bandwidth;
}

/* Padded Bruck: rotations folded away; with `datatype` = 1 the MPI library packs. */
double tuna_a2av_cost_padded_bruck(const tuna_profile *m, const tuna_select_input *in,
                                   const tuna_algorithm_info *info, const long *param)
{
    model x;
    if (!model_of(&x, m, in))
        return 0;
    const long P = in->P;
    const double cb = m->copy_bandwidth;
    double moved, t = bruck_rounds(&x, false, &moved);
    if (tuna_param_get(info, param, "datatype") == 1) /* the MPI library packs them itself */
        return t + (2.0 * P * x.B + 2.0 * moved * x.B) / cb +
               2.0 * ceil(log2((double)P)) * m->datatype_overhead +
               2.0 * moved * m->datatype_block;
    return t + (2.0 * P * x.B + 2.0 * moved * x.B) / cb;
}

double tuna_a2av_cost_twophase_bruck(const tuna_profile *m, const tuna_select_input *in,
                                     const tuna_algorithm_info *info, const long *param)
{
    (void)info;
    (void)param;
    model x;
    double moved;
    return model_of(&x, m, in) ? bruck_rounds(&x, true, &moved) : 0;
}

double tuna_a2av_model_tuna(const tuna_profile *m, const tuna_select_input *in, long radix,
                            long block, bool sizes_known)
{
    model x;
    if (!model_of(&x, m, in))
        return 0;
    return tuna_rounds(&x, in->P, radix, block, x.a, x.am, x.B, 1, false, sizes_known);
}

/* Hierarchical TuNA; unequal nodes: the algorithm runs flat tuna with the same radix. */
double tuna_a2av_model_hierarchical(const tuna_profile *m, const tuna_select_input *in,
                                    long radix, long block, bool coalesced, bool sizes_known)
{
    model x;
    if (!model_of(&x, m, in))
        return 0;
    if (in->Q <= 0)
        return tuna_rounds(&x, in->P, radix, block, x.a, x.am, x.B, 1, false, sizes_known);
    return hierarchical(&x, radix, block, coalesced, sizes_known);
}

/* tuna, coalesced and staggered: their cost and inflight functions (alltoallv.h). */
TUNA_A2AV_TUNA_PRICES(tuna_a2av, false)

/* ---- auto's candidate grids (tuna_grid_fn) ---- */

/* One parameter `name` over powers of two below P, plus P - 1. */
static void grid_pow2_below_P(const tuna_select_input *in, const tuna_algorithm_info *info,
                              tuna_candidates *out, const char *name)
{
    long v[TUNA_GRID_MAX];
    tuna_candidates_of(out, info, name, v, tuna_grid_pow2(in->P - 1, v));
}

/* The row's one parameter (scattered's block, multipair's stride) likewise. */
void tuna_a2av_grid_batch(const tuna_select_input *in, const tuna_algorithm_info *info,
                          tuna_candidates *out)
{
    grid_pow2_below_P(in, info, out, info->params[0].name);
}

/* radix over [2, P], then block (digits' rounds in flight) over powers of two below it. */
void tuna_a2av_grid_tuna(const tuna_select_input *in, const tuna_algorithm_info *info,
                         tuna_candidates *out)
{
    long r[TUNA_GRID_MAX], b[TUNA_GRID_MAX], param[TUNA_MAX_PARAMS] = {0};
    int nr = tuna_grid_radix(in->P < 2 ? 2 : in->P, r);
    for (int i = 0; i < nr; i++) {
        tuna_param_set(info, param, "radix", r[i]);
        int nb = tuna_grid_pow2(r[i] - 1, b);
        for (int k = 0; k < nb; k++) {
            tuna_param_set(info, param, "block", b[k]);
            tuna_candidate(out, param);
        }
    }
}

/*
 * Hierarchical TuNA: radix over [2, Q] on equal nodes (over [2, P] otherwise); block over
 * the inter-node batches (`batches`: N - 1 nodes for coalesced, (N - 1) Q messages for
 * staggered). On one node block is unused by the rounds (1 only); on unequal nodes the flat
 * tuna fallback reads it as tuna's block.
 */
static void grid_hierarchical(const tuna_select_input *in, const tuna_algorithm_info *info,
                              tuna_candidates *out, long batches)
{
    const bool nodes = in->Q > 0 && in->N > 1;
    long r[TUNA_GRID_MAX], b[TUNA_GRID_MAX], param[TUNA_MAX_PARAMS] = {0};
    int nr = tuna_grid_radix(nodes ? (in->Q < 2 ? 2 : in->Q) : in->P < 2 ? 2 : in->P, r);
    for (int i = 0; i < nr; i++) {
        tuna_param_set(info, param, "radix", r[i]);
        int nb = nodes ? tuna_grid_pow2(batches, b)
                 : in->Q <= 0 ? tuna_grid_pow2(r[i] - 1, b)
                              : (b[0] = 1, 1);
        for (int k = 0; k < nb; k++) {
            tuna_param_set(info, param, "block", b[k]);
            tuna_candidate(out, param);
        }
    }
}

void tuna_a2av_grid_coalesced(const tuna_select_input *in, const tuna_algorithm_info *info,
                              tuna_candidates *out)
{
    grid_hierarchical(in, info, out, in->N - 1);
}

void tuna_a2av_grid_staggered(const tuna_select_input *in, const tuna_algorithm_info *info,
                              tuna_candidates *out)
{
    grid_hierarchical(in, info, out, (long)(in->N - 1) * in->Q);
}

/* ---- requests in flight per rank (tuna_inflight_fn): what each algorithm's file posts ---- */

/* Every peer at once: P-1 receives and P-1 sends before one wait (spreadout, linear). */
long tuna_a2av_inflight_all_peers(const tuna_select_input *in, const tuna_algorithm_info *info,
                                  const long *param)
{
    (void)info;
    (void)param;
    return 2L * (in->P - 1);
}

/* One receive and one send at a time (pairwise, xor; each Bruck round, two-phase Bruck's
 * sizes and data one after the other). */
long tuna_a2av_inflight_one_peer(const tuna_select_input *in, const tuna_algorithm_info *info,
                                 const long *param)
{
    (void)info;
    (void)param;
    return in->P > 1 ? 2 : 0;
}

/* `name` peers' receives and sends at once, at most P-1 peers: a batch (scattered's block,
 * multipair's stride) or a sliding window (multipair-waitany/testany's stride). */
static long pairs_inflight(const tuna_select_input *in, const tuna_algorithm_info *info,
                           const long *param, const char *name)
{
    const long peers = tuna_param_get(info, param, name), n = in->P - 1L;
    return 2 * (peers < n ? peers : n);
}

/* The row's one parameter's peers (scattered's block, multipair's and its windows' stride). */
long tuna_a2av_inflight_batch(const tuna_select_input *in, const tuna_algorithm_info *info,
                              const long *param)
{
    return pairs_inflight(in, info, param, info->params[0].name);
}

/*
 * A TuNA batch of b rounds among n ranks: b size receives, b size sends and b data sends are
 * pending together (the data sends go out before the sizes are waited for; tuna_rounds.c,
 * run_batch), then the b data receives with the b sends. The rounds clamp r to [2, n] and
 * b to [1, r-1] (tuna_rounds_schedule_of).
 */
static long tuna_batch_inflight(long n, long radix, long block, bool sizes_known)
{
    if (n < 2)
        return 0;
    const long r = radix < 2 ? 2 : radix > n ? n : radix;
    const long b = block < 1 ? 1 : block > r - 1 ? r - 1 : block;
    return sizes_known ? 2 * b : 3 * b; /* known sizes: b data receives with the b sends */
}

long tuna_a2av_model_inflight_tuna(const tuna_select_input *in, long radix, long block,
                                   bool sizes_known)
{
    return tuna_batch_inflight(in->P, radix, block, sizes_known);
}

/*
 * Hierarchical TuNA (hierarchical_tuna.c), the largest of its phases: the intra-node rounds
 * over Q ranks with every round of a digit in flight, the sizes exchanged with the N-1 other
 * nodes all at once, and the inter-node batches of `block` messages each way (at most
 * `messages`: N-1 for coalesced, (N-1)Q for staggered). Unequal nodes run flat tuna.
 * sizes_known: no size messages in either phase.
 */
long tuna_a2av_model_inflight_hierarchical(const tuna_select_input *in, long r, long b,
                                           bool coalesced, bool sizes_known)
{
    const long messages = coalesced ? in->N - 1L : (in->N - 1L) * in->Q;
    if (in->Q <= 0)
        return tuna_batch_inflight(in->P, r, b, sizes_known);
    const long intra = tuna_batch_inflight(in->Q, r, in->Q, sizes_known);
    const long sizes = sizes_known ? 0 : 2L * (in->N - 1);
    const long data = 2 * (b < 1 ? 1 : b < messages ? b : messages);
    const long most = intra > sizes ? intra : sizes;
    return messages > 0 && data > most ? data : most;
}

