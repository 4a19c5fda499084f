/*
 * Cost models, candidate grids and in-flight counts of the uniform all-to-all's own rows
 * (uniform_rows.h): every block is B = max_block bytes (the mean equals the maximum) and no
 * size travels. The TuNA rows reuse the alltoallv models with the metadata terms left out
 * (src/alltoallv/model.c, sizes_known); bruck-radix is priced here on the selector's phase
 * model, in the LogGP style of the alltoallv Bruck rows (docs/tuning.md).
 */
#include "uniform_rows.h"

#include <math.h>

/* The radix an algorithm runs with: clamped to [2, P] as bruck_radix.c does. */
static long radix_of(long radix, long P)
{
    return radix < 2 ? 2 : radix > P ? (P < 2 ? 2 : P) : radix;
}

/* Number of i in [0, P) whose base-r digit of place w equals d (d >= 1: i = 0 is not one). */
static double digit_count(long P, long r, long long w, long d)
{
    long long cyc = w * r;
    long long full = (long long)P / cyc * w;
    long long rest = (long long)P % cyc - (long long)d * w;
    rest = rest < 0 ? 0 : rest > w ? w : rest;
    return (double)(full + rest);
}

/*
 * bruck-radix: per round (w = r^x, d) one message of n = digit_count blocks of B bytes to
 * the rank at distance d*w, packed and unpacked (2 n B copied), waited before the next; the
 * rotation and the inverse rotation copy P B each.
 */
double tuna_a2a_cost_bruck_radix(const tuna_profile *m, const tuna_select_input *in,
                                 const tuna_algorithm_info *info, const long *param)
{
    const long P = in->P;
    const double B = in->max_block;
    if (P <= 1 || B <= 0)
        return 0;
    const long r = radix_of(tuna_param_get(info, param, "radix"), P);
    const tuna_model_layout l = tuna_model_layout_of(in);
    double t = 2.0 * (double)P * B / m->copy_bandwidth;
    for (long long w = 1; w < P; w *= r)
        for (long d = 1; d < r && d * w < P; d++) {
            const long dist = (long)(d * w);
            const double n = digit_count(P, r, w, d), bytes = n * B;
            t += tuna_model_phase(m, &l, 1, bytes, bytes, tuna_model_cross(&l, dist), dist, dist,
                                  1) +
                 2.0 * bytes / m->copy_bandwidth;
        }
    return t;
}

/*
 * The fraction of phase j's (rank, peer) pairs on different nodes: the peers of a rank are
 * the d ranks of its "line" {lo + v w + hi w d : v < d}, nodes of Q consecutive ranks. A line
 * inside a node (Q a multiple of w d) crosses nothing; one whose members are w >= Q apart,
 * w a multiple of Q, crosses everywhere; else the lines are counted (O(P)).
 */
static double mesh_cross(const tuna_model_layout *l, long long w, long d)
{
    if (l->N <= 1 || l->P <= 1)
        return 0;
    const long long Q = l->Q, W = w * d;
    if (Q % W == 0)
        return 0;
    if (w % Q == 0)
        return 1;
    double same = 0; /* ordered pairs on one node */
    for (long long hi = 0; hi < l->P; hi += W)
        for (long long lo = hi; lo < hi + w; lo++)
            for (long v = 0, run = 0; v < d; v++) { /* members ascending: nodes in runs */
                const bool next_same = v + 1 < d && (lo + v * w) / Q == (lo + (v + 1) * w) / Q;
                run++;
                if (!next_same) {
                    same += (double)run * (double)(run - 1);
                    run = 0;
                }
            }
    return 1.0 - same / ((double)l->P * (double)(d - 1));
}

/*
 * mesh: per phase j (place w = d_0 ... d_{j-1}) the d_j - 1 exchanges of n = P/d_j blocks in
 * flight together to the ranks at distances w .. (d_j - 1) w, every receive posted before the
 * sends (late: those beyond the wait's first chunk); the own n blocks copied; where a
 * message is not one run (P/(w d_j) > 1 runs of w blocks) the phase's two types built and
 * the library's gather and scatter of it (one copy each side, dt_block per run), as for
 * TuNA's hindexed messages.
 */
double tuna_a2a_cost_mesh(const tuna_profile *m, const tuna_select_input *in,
                          const tuna_algorithm_info *info, const long *param)
{
    const long P = in->P;
    const double B = in->max_block;
    if (P <= 1 || B <= 0)
        return 0;
    int d[TUNA_A2A_MESH_MAX_DIMS];
    const int k = tuna_a2a_mesh_shape(P, tuna_param_get(info, param, "dims"), d);
    const tuna_model_layout l = tuna_model_layout_of(in);
    double t = 0;
    long long w = 1;
    for (int j = 0; j < k; w *= d[j++]) {
        const double msgs = d[j] - 1, n = (double)(P / d[j]), bytes = msgs * n * B;
        const double runs = (double)(P / (w * d[j]));
        t += tuna_model_phase_late(m, &l, msgs, fmax(0.0, msgs - TUNA_WAIT_CHUNK), bytes, bytes,
                                   mesh_cross(&l, w, d[j]), (long)w, (long)(msgs * w), (long)w) +
             n * B / m->copy_bandwidth;
        if (runs > 1)
            t += 2 * m->datatype_overhead + 2 * bytes / m->copy_bandwidth +
                 2 * msgs * runs * m->datatype_block;
    }
    return t;
}

/* radix over [2, P] (tuna_grid_radix: small values, then powers of two, and P). */
void tuna_a2a_grid_bruck_radix(const tuna_select_input *in, const tuna_algorithm_info *info,
                               tuna_candidates *out)
{
    long r[TUNA_GRID_MAX];
    tuna_candidates_of(out, info, "radix", r, tuna_grid_radix(in->P < 2 ? 2 : in->P, r));
}

/* dims over [2, min(6, prime factors of P)]: one dimension is the linear exchange, which the
 * linear rows price and auto hands to the library (none for prime P); each dimension more
 * adds a phase's latency and about P*B bytes per rank to save messages, so six bounds it. */
void tuna_a2a_grid_mesh(const tuna_select_input *in, const tuna_algorithm_info *info,
                        tuna_candidates *out)
{
    long param[TUNA_MAX_PARAMS] = {0};
    const int most = tuna_a2a_mesh_max_dims(in->P);
    for (int k = 2; k <= most && k <= 6; k++) {
        tuna_param_set(info, param, "dims", k);
        tuna_candidate(out, param);
    }
}

long tuna_a2a_inflight_mesh(const tuna_select_input *in, const tuna_algorithm_info *info,
                            const long *param)
{
    int d[TUNA_A2A_MESH_MAX_DIMS];
    const int k = tuna_a2a_mesh_shape(in->P, tuna_param_get(info, param, "dims"), d);
    long most = 0;
    for (int j = 0; j < k; j++)
        most = d[j] - 1 > most ? d[j] - 1 : most;
    return 2 * most;
}

long tuna_a2a_inflight_bruck_radix(const tuna_select_input *in, const tuna_algorithm_info *info,
                                   const long *param)
{
    (void)info;
    (void)param;
    return in->P > 1 ? 2 : 0;
}

/* TuNA, coalesced and staggered with known sizes: their data rounds alone (tuna_rounds in
 * src/alltoallv/model.c). */
TUNA_A2AV_TUNA_PRICES(tuna_a2a, true)
