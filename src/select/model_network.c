/*
 * The network term of the cost model (docs/model.md, "Network"): the busiest directed link
 * of a phase limits it, not the NICs, on a torus routed dimension by dimension or a dragonfly
 * routed minimally, each as SimGrid 3.32 routes them (TorusZone, DragonflyZone). The job's
 * nodes are the network's first N (node ids 0..N-1), ranks are placed consecutively, Q per
 * node.
 */
#include "tuna_select.h"

#include <string.h>

/* Add `w` to link i (the busiest link is tracked on the way). */
static void add_load(float *load, long i, float w, float *worst)
{
    load[i] += w;
    if (load[i] > *worst)
        *worst = load[i];
}

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
static void torus_route_add(const tuna_profile *m, long src, long dst, float w, float *load,
                            float *worst)
{
    const int D = m->net_ndims;
    long stride = 1, cur = src;
    for (int j = 0; j < D; j++) {
        const long s = m->net_dims[j];
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
                add_load(load, i, w, worst);
            }
        }
        stride *= s;
    }
}

/*
 * A dragonfly's directed links, as SimGrid's DragonflyZone builds them (G groups of C chassis
 * of R routers, n nodes per router; router r = (g C + c) R + b): node n's link to its router
 * (index n) and back (T + n); router r's green link to blade b of its chassis (2T + r R + b),
 * black link to chassis c of its group (2T + RT R + r C + c) and its one blue link (2T + RT
 * (R + C) + r), RT routers. A link of k parallel cables carries w / k.
 */
enum { DF_G, DF_GL, DF_C, DF_CL, DF_R, DF_RL, DF_N };

/*
 * SimGrid's minimal route src -> dst (DragonflyZone::get_local_route, step by step, including
 * its shortcuts: the router it continues from after a hop is the one the code names, even
 * where that is not the far end of the link taken). false: a route SimGrid would take
 * through a router that does not exist (a target group >= R); not modelled.
 */
static bool dragonfly_route_add(const tuna_profile *m, long src, long dst, float w, float *load,
                                float *worst)
{
    const int *d = m->net_dims;
    const long C = d[DF_C], R = d[DF_R], n = d[DF_N], CR = C * R;
    const long RT = d[DF_G] * CR, T = RT * n;
    const long green = 2 * T, black = green + RT * R, blue = black + RT * C;
    const long me = src / n, target = dst / n;
    const long tg = target / CR, tc = (target / R) % C, tb = target % R;
    const long mg = me / CR, mc = (me / R) % C;
    add_load(load, src, w, worst); /* node -> router */
    long cur = me;
    if (target != me) {
        if (tg != mg) {
            if (tg >= R || mg >= CR)
                return false;
            if (cur % R != tg) { /* to the router of our chassis with blade = target group */
                add_load(load, green + cur * R + tg, w / (float)d[DF_RL], worst);
                cur = mg * CR + mc * R + tg;
            }
            if ((cur / R) % C != 0) { /* to the first chassis of our group */
                add_load(load, black + cur * C + 0, w / (float)d[DF_CL], worst);
                cur = mg * CR + tg;
            }
            add_load(load, blue + cur, w / (float)d[DF_GL], worst); /* the optical hop */
            cur = tg * CR + mg;
        }
        if (cur % R != tb) {
            add_load(load, green + cur * R + tb, w / (float)d[DF_RL], worst);
            cur = tg * CR + tb;
        }
        if ((cur / R) % C != tc)
            add_load(load, black + cur * C + tc, w / (float)d[DF_CL], worst);
    }
    add_load(load, T + dst, w, worst); /* router -> node */
    return true;
}

/* Nodes of the network, 0 without one. */
static long net_nodes(const tuna_profile *m)
{
    if (m->net_topology == TUNA_NET_DRAGONFLY) {
        const int *d = m->net_dims;
        return (long)d[DF_G] * d[DF_C] * d[DF_R] * d[DF_N];
    }
    long T = m->net_ndims > 0;
    for (int j = 0; j < m->net_ndims; j++)
        T *= m->net_dims[j];
    return T;
}

/* Directed links of the network (the size of its load table). */
static long net_links(const tuna_profile *m)
{
    if (m->net_topology == TUNA_NET_DRAGONFLY) {
        const int *d = m->net_dims;
        const long RT = (long)d[DF_G] * d[DF_C] * d[DF_R];
        return 2 * RT * d[DF_N] + RT * (d[DF_R] + d[DF_C] + 1);
    }
    return 2 * m->net_ndims * net_nodes(m);
}

/* The busiest link's load when the nodes k in [1, N) with w[k] > 0 each send w[k] to the
 * node k on (every node n to n + k mod N); 0 if a route is not modelled. */
static double exact_load(const tuna_profile *m, int N, const double *w)
{
    float load[TUNA_NET_MAX_LINKS]; /* float: a model's precision, half the stack */
    memset(load, 0, sizeof(float) * (size_t)net_links(m));
    float worst = 0;
    const bool dragonfly = m->net_topology == TUNA_NET_DRAGONFLY;
    for (int k = 1; k < N; k++)
        if (w[k] > 0)
            for (long n = 0; n < N; n++) {
                if (!dragonfly)
                    torus_route_add(m, n, (n + k) % N, (float)w[k], load, &worst);
                else if (!dragonfly_route_add(m, n, (n + k) % N, (float)w[k], load, &worst))
                    return 0;
            }
    return worst;
}

/*
 * Per thread, for the last (network, N): the busiest link's load of each single node shift k
 * (every node sends one unit to the node k on). A phase of one or two shifts (a rank
 * distance: pairwise, xor, Bruck rounds; most batches) is bounded by the weighted sum of
 * these, so auto's hundreds of candidates do not walk N routes per phase.
 */
typedef struct net_key {
    int topology, ndims;
    int dims[TUNA_NET_MAX_SHAPE];
} net_key;

static bool same_net(const net_key *k, const tuna_profile *m)
{
    return k->topology == (int)m->net_topology && k->ndims == m->net_ndims &&
           memcmp(k->dims, m->net_dims, sizeof(int) * (size_t)m->net_ndims) == 0;
}

static void set_net(net_key *k, const tuna_profile *m)
{
    k->topology = (int)m->net_topology;
    k->ndims = m->net_ndims;
    memcpy(k->dims, m->net_dims, sizeof(int) * (size_t)m->net_ndims);
}

static _Thread_local struct {
    net_key net;
    int N;
    float shift_max[TUNA_NET_MAX_NODES];
} shift_cache;

static const float *shift_max(const tuna_profile *m, int N)
{
    if (!same_net(&shift_cache.net, m) || shift_cache.N != N) {
        double w[TUNA_NET_MAX_NODES] = {0};
        for (int k = 1; k < N; k++) {
            w[k] = 1;
            shift_cache.shift_max[k] = (float)exact_load(m, N, w);
            w[k] = 0;
        }
        set_net(&shift_cache.net, m);
        shift_cache.N = N;
    }
    return shift_cache.shift_max;
}

/*
 * Exact loads depend on the distances and the layout only, not on the sizes, so they are
 * kept per thread across choices (direct-mapped, NET_CACHE entries, for the last network and
 * P, Q, N): a choice with new size statistics re-evaluates the model but walks no routes
 * again.
 */
#define NET_CACHE_BITS 10
#define NET_CACHE (1 << NET_CACHE_BITS)
static _Thread_local struct {
    net_key net;
    int P, Q, N;
    struct { long d0, d1, step; double load; } e[NET_CACHE];
} net_cache;

static double cached_exact_load(const tuna_profile *m, int P, int Q, int N, long d0, long d1,
                                long step, const double *w)
{
    if (!same_net(&net_cache.net, m) || net_cache.P != P || net_cache.Q != Q ||
        net_cache.N != N) {
        memset(&net_cache, 0, sizeof net_cache); /* step 0: an empty entry */
        set_net(&net_cache.net, m);
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
static _Thread_local double shift_w[TUNA_NET_MAX_NODES];
static _Thread_local int shift_touched[TUNA_NET_MAX_NODES];

static double phase_load(const tuna_profile *m, int P, int Q, int N, long d0, long d1,
                         long step);

/* The last phase per thread: staggered's batches and the hierarchical size exchanges
 * repeat the same distances many times over. */
static _Thread_local struct {
    net_key net;
    int P, Q, N;
    long d0, d1, step;
    double load;
} last_phase;

double tuna_model_net_load(const tuna_profile *m, int P, int Q, int N, long d0, long d1,
                           long step)
{
    if (m->net_topology == TUNA_NET_NONE || N <= 1 || Q < 1 || P != (long)N * Q || step < 1 ||
        d1 < d0)
        return 0;
    if (N > net_nodes(m)) /* more nodes than the network the profile describes: not modelled */
        return 0;
    if (same_net(&last_phase.net, m) && last_phase.P == P && last_phase.Q == Q &&
        last_phase.N == N && last_phase.d0 == d0 && last_phase.d1 == d1 &&
        last_phase.step == step)
        return last_phase.load;
    double load = phase_load(m, P, Q, N, d0, d1, step);
    set_net(&last_phase.net, m);
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
