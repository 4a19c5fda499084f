/*
 * The network term of the cost model (docs/tuning.md, "Network"): on a torus routed
 * dimension by dimension, the busiest directed link of a phase limits it, not the NICs.
 * The job's nodes are numbered along the torus (node ids 0..N-1, first dimension fastest),
 * ranks are placed consecutively, Q per node.
 */
#include "tuna_select.h"

#include <string.h>

/* Directed link (node, dim, direction) -> index into the load table. */
static long link_index(int D, long node, int dim, int up)
{
    return ((node * D) + dim) * 2 + up;
}

/*
 * Add `w` to every directed link on the route src -> dst: dimension by dimension, each
 * the shorter way round, with the same tie rule as SimGrid's TorusZone (a half-way target
 * is reached going up, except from the upper half where the wrap-around is taken). Loads
 * only grow, so the busiest link is tracked on the way (*worst).
 */
static void route_add(const tuna_profile *m, long src, long dst, float w, float *load,
                      float *worst)
{
    const int D = m->torus_ndims;
    long stride = 1, cur = src;
    for (int j = 0; j < D; j++) {
        const long s = m->torus_dims[j];
        const long mc = (src / stride) % s, tc = (dst / stride) % s;
        if (mc != tc) {
            const bool up = (tc > mc && tc <= mc + s / 2) ||
                            (mc > s / 2 && (mc + s / 2) % s >= tc);
            long c = mc;
            while (c != tc) {
                long i;
                if (up) { /* the link of the current node, upwards */
                    i = link_index(D, cur, j, 1);
                    long next = (c + 1) % s;
                    cur += (next - c) * stride;
                    c = next;
                } else { /* the link of the next node down, downwards */
                    long next = (c + s - 1) % s;
                    cur += (next - c) * stride;
                    c = next;
                    i = link_index(D, cur, j, 0);
                }
                load[i] += w;
                if (load[i] > *worst)
                    *worst = load[i];
            }
        }
        stride *= s;
    }
}

/* Nodes of the torus, 0 without one. */
static long torus_nodes(const tuna_profile *m)
{
    long T = m->torus_ndims > 0;
    for (int j = 0; j < m->torus_ndims; j++)
        T *= m->torus_dims[j];
    return T;
}

/* The busiest link's load when the nodes k in [1, N) with w[k] > 0 each send w[k] to the
 * node k on (every node n to n + k mod N). */
static double exact_load(const tuna_profile *m, int N, const double *w)
{
    float load[TUNA_TORUS_MAX_LINKS]; /* float: a model's precision, half the stack */
    memset(load, 0, sizeof(float) * (size_t)(2 * m->torus_ndims * torus_nodes(m)));
    float worst = 0;
    for (int k = 1; k < N; k++)
        if (w[k] > 0)
            for (long n = 0; n < N; n++)
                route_add(m, n, (n + k) % N, (float)w[k], load, &worst);
    return worst;
}

/*
 * Per thread, for the last (torus, N): the busiest link's load of each single node shift k
 * (every node sends one unit to the node k on). A phase of one or two shifts (a rank
 * distance: pairwise, xor, Bruck rounds; most batches) is bounded by the weighted sum of
 * these, so auto's hundreds of candidates do not walk N routes per phase.
 */
typedef struct torus_key {
    int ndims;
    int dims[TUNA_TORUS_MAX_DIMS];
} torus_key;

static bool same_torus(const torus_key *k, const tuna_profile *m)
{
    return k->ndims == m->torus_ndims &&
           memcmp(k->dims, m->torus_dims, sizeof(int) * (size_t)m->torus_ndims) == 0;
}

static void set_torus(torus_key *k, const tuna_profile *m)
{
    k->ndims = m->torus_ndims;
    memcpy(k->dims, m->torus_dims, sizeof(int) * (size_t)m->torus_ndims);
}

static _Thread_local struct {
    torus_key torus;
    int N;
    float shift_max[TUNA_TORUS_MAX_NODES];
} shift_cache;

static const float *shift_max(const tuna_profile *m, int N)
{
    if (!same_torus(&shift_cache.torus, m) || shift_cache.N != N) {
        double w[TUNA_TORUS_MAX_NODES] = {0};
        for (int k = 1; k < N; k++) {
            w[k] = 1;
            shift_cache.shift_max[k] = (float)exact_load(m, N, w);
            w[k] = 0;
        }
        set_torus(&shift_cache.torus, m);
        shift_cache.N = N;
    }
    return shift_cache.shift_max;
}

/*
 * Exact loads depend on the distances and the layout only, not on the sizes, so they are
 * kept per thread across choices (direct-mapped, NET_CACHE entries, for the last torus and
 * P, Q, N): a choice with new size statistics re-evaluates the model but walks no routes
 * again.
 */
#define NET_CACHE_BITS 10
#define NET_CACHE (1 << NET_CACHE_BITS)
static _Thread_local struct {
    torus_key torus;
    int P, Q, N;
    struct { long d0, d1, step; double load; } e[NET_CACHE];
} net_cache;

static double cached_exact_load(const tuna_profile *m, int P, int Q, int N, long d0, long d1,
                                long step, const double *w)
{
    if (!same_torus(&net_cache.torus, m) || net_cache.P != P || net_cache.Q != Q ||
        net_cache.N != N) {
        memset(&net_cache, 0, sizeof net_cache); /* step 0: an empty entry */
        set_torus(&net_cache.torus, m);
        net_cache.P = P, net_cache.Q = Q, net_cache.N = N;
    }
    /* Multiplicative hashing, top bits: distances are often multiples of Q or powers of r. */
    unsigned long long h = (unsigned long long)d0 * 0x9E3779B97F4A7C15ULL;
    h = (h ^ (unsigned long long)d1) * 0xBF58476D1CE4E5B9ULL;
    h = (h ^ (unsigned long long)step) * 0x94D049BB133111EBULL;
    size_t slot = (size_t)(h >> (64 - NET_CACHE_BITS));
    if (net_cache.e[slot].step == step && net_cache.e[slot].d0 == d0 &&
        net_cache.e[slot].d1 == d1)
        return net_cache.e[slot].load;
    double load = exact_load(m, N, w);
    net_cache.e[slot].d0 = d0, net_cache.e[slot].d1 = d1, net_cache.e[slot].step = step;
    net_cache.e[slot].load = load;
    return load;
}

/* Node-shift weights live in a zeroed per-thread array of which only the touched entries
 * are visited and cleared: a phase of one rank distance costs O(1), not O(N). */
static _Thread_local double shift_w[TUNA_TORUS_MAX_NODES];
static _Thread_local int shift_touched[TUNA_TORUS_MAX_NODES];

static double phase_load(const tuna_profile *m, int P, int Q, int N, long d0, long d1,
                         long step);

/* The last phase per thread: staggered's batches and the hierarchical size exchanges
 * repeat the same distances many times over. */
static _Thread_local struct {
    torus_key torus;
    int P, Q, N;
    long d0, d1, step;
    double load;
} last_phase;

double tuna_model_net_load(const tuna_profile *m, int P, int Q, int N, long d0, long d1,
                           long step)
{
    if (m->torus_ndims == 0 || N <= 1 || Q < 1 || P != (long)N * Q || step < 1 || d1 < d0)
        return 0;
    if (N > torus_nodes(m)) /* more nodes than the torus the profile describes: not modelled */
        return 0;
    if (same_torus(&last_phase.torus, m) && last_phase.P == P && last_phase.Q == Q &&
        last_phase.N == N && last_phase.d0 == d0 && last_phase.d1 == d1 &&
        last_phase.step == step)
        return last_phase.load;
    double load = phase_load(m, P, Q, N, d0, d1, step);
    set_torus(&last_phase.torus, m);
    last_phase.P = P, last_phase.Q = Q, last_phase.N = N;
    last_phase.d0 = d0, last_phase.d1 = d1, last_phase.step = step;
    last_phase.load = load;
    return load;
}

/* tuna_model_net_load() without the last-phase memo. */
static double phase_load(const tuna_profile *m, int P, int Q, int N, long d0, long d1,
                         long step)
{
    double *w = shift_w;
    int *touched = shift_touched, nt = 0;
    /* A rank at local index l sends distance e = qQ + r to node shift q + (l + r >= Q). */
    for (long d = d0; d <= d1; d += step) {
        long e = d % P;
        long q = e / Q, r = e % Q;
        long k[2] = {q % N, (q + 1) % N};
        double v[2] = {(double)(Q - r) / Q, (double)r / Q};
        for (int i = 0; i < 2; i++)
            if (k[i] != 0 && v[i] > 0) { /* shift 0: the same node */
                if (w[k[i]] == 0)
                    touched[nt++] = (int)k[i];
                w[k[i]] += v[i];
            }
    }
    double total = 0, load = 0;
    for (int i = 0; i < nt; i++)
        total += w[touched[i]];
    if (total > 0) {
        for (int i = 0; i < nt; i++)
            w[touched[i]] /= total;
        /* The exact walk costs nt * N routes: it is kept for phases that spread over many
         * nodes (linear exchanges, large batches), where summing single-shift maxima would
         * overstate the busiest link most, on jobs of up to 128 nodes. Otherwise the
         * single-shift maxima, weighted (exact when they share the busiest link, else above). */
        bool exact = nt > 2 && N <= 128 && (N <= 32 || 4 * nt >= N);
        if (!exact) {
            const float *sm = shift_max(m, N);
            for (int i = 0; i < nt; i++)
                load += w[touched[i]] * sm[touched[i]];
        } else {
            load = cached_exact_load(m, P, Q, N, d0, d1, step, w);
        }
    }
    for (int i = 0; i < nt; i++)
        w[touched[i]] = 0;
    return load;
}
