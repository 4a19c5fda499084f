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
 * is reached going up, except from the upper half where the wrap-around is taken).
 */
static void route_add(const tuna_profile *m, long src, long dst, float w, float *load)
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
                if (up) { /* the link of the current node, upwards */
                    load[link_index(D, cur, j, 1)] += w;
                    long next = (c + 1) % s;
                    cur += (next - c) * stride;
                    c = next;
                } else { /* the link of the next node down, downwards */
                    long next = (c + s - 1) % s;
                    cur += (next - c) * stride;
                    c = next;
                    load[link_index(D, cur, j, 0)] += w;
                }
            }
        }
        stride *= s;
    }
}

double tuna_model_net_load(const tuna_profile *m, int P, int Q, int N, long d0, long d1,
                           long step)
{
    if (m->torus_ndims == 0 || N <= 1 || Q < 1 || P != (long)N * Q || step < 1 || d1 < d0)
        return 0;
    long T = 1;
    for (int j = 0; j < m->torus_ndims; j++)
        T *= m->torus_dims[j];
    if (N > T) /* more nodes than the torus the profile describes: not modelled */
        return 0;
    double w[TUNA_TORUS_MAX_NODES];
    float load[TUNA_TORUS_MAX_LINKS]; /* float: a model's precision, half the stack */
    memset(w, 0, sizeof(double) * (size_t)N);
    /* A rank at local index l sends distance e = qQ + r to node shift q + (l + r >= Q). */
    for (long d = d0; d <= d1; d += step) {
        long e = d % P;
        long q = e / Q, r = e % Q;
        w[q % N] += (double)(Q - r) / Q;
        w[(q + 1) % N] += (double)r / Q;
    }
    w[0] = 0; /* same node */
    double total = 0;
    for (int k = 1; k < N; k++)
        total += w[k];
    if (total <= 0)
        return 0;
    memset(load, 0, sizeof(float) * (size_t)(2 * m->torus_ndims * T));
    for (int k = 1; k < N; k++)
        if (w[k] > 0)
            for (long n = 0; n < N; n++)
                route_add(m, n, (n + k) % N, (float)(w[k] / total), load);
    double worst = 0;
    for (long i = 0; i < 2 * m->torus_ndims * T; i++)
        if (load[i] > worst)
            worst = load[i];
    return worst;
}
