/*
 * auto for a persistent neighborhood all-to-all (the plan's init: collective): node-aware at
 * its defaults, tuna at radix 2-16 or the library's call, by a LogGP estimate over the pattern
 * agreed by every rank (allreduces of E, the edges node-aware would gather, of B, their bytes,
 * of the node pairs' bitmap, nnodes^2 bits, whose count is M, the node-pair messages, above
 * 2048 nodes each rank's distinct destination nodes summed, an upper bound of M; and the
 * busiest rank's live edges 2D and bytes 2Bb, out and in). P ranks on N nodes of Q, k leaders
 * per node, the profile's levels (o, g, L, G = 1/bandwidth) and its nics_per_node (c), each
 * NIC taken to inject one message per g_inter:
 *   linear      L_inter + max(rank: (E/P)(o+g)_inter + (B/P) G_inter,
 *                             node: (E/N) g_inter / c + (B/N) G_inter / c,
 *                             busiest rank: D (o+g)_inter + Bb G_inter)
 *   node-aware  L_inter + 2 L_intra + 2 Q (o+g)_intra + B/(N k) (2 G_intra + 3/copy)
 *               + max(leader: M/(N k) (o+g)_inter + B/(N k) G_inter,
 *                     node: (M/N) g_inter / c + (B/N) G_inter / c)
 *   tuna (r)    w L_inter + min(K, D) (o+g)_inter + h Bb G_inter + (h + 2) Bb / copy
 * (a leader hears from up to Q ranks of its node and sends to as many, copies its share twice;
 * the node pairs replace the edges at the NICs; tuna's K rounds in w digits each send one
 * message, a block goes h = w(r-1)/r hops on average). The cheapest wins; one node, or no
 * live edge, is the library's call (the same linear exchange). Not learned.
 */
#include "neighbor.h"
#include "../alltoallv/tuna_rounds.h"
#include "../select/tuna_select.h"

#include <stdlib.h>

#define BITMAP_NODES_MAX 2048

/* tuna's replayed rounds at radix r for the busiest rank (D edges, Bb bytes each way): one
 * message per round, w digits of latency, each block forwarded h = w(r-1)/r times on average
 * and copied h + 2 times (packing, slots, unpacking). */
static double tuna_estimate(const tuna_profile *m, int P, int r, double D, double Bb)
{
    tuna_rounds_schedule s;
    tuna_rounds_schedule_of(P, r, P, &s);
    const tuna_level_profile *out = &m->inter;
    const double K = s.K < D ? s.K : D; /* no more messages than edges */
    const double h = (double)s.w * (r - 1) / r;
    return s.w * out->latency + K * (out->overhead + out->gap) + h * Bb / out->bandwidth +
           (h + 2) * Bb / m->copy_bandwidth;
}

int tuna_nbr_auto_choose(const tuna_nbr_call *c, int *algorithm, long param[TUNA_MAX_PARAMS])
{
    const tuna_ctx *ctx = c->ctx;
    const int vendor = tuna_registry_find_kind(&tuna_nbr_registry, TUNA_ROW_VENDOR);
    const int na = tuna_algorithm_find(TUNA_NEIGHBOR_ALLTOALLV, "node-aware");
    *algorithm = vendor;
    if (ctx->nnodes < 2)
        return MPI_SUCCESS;
    tuna_options def;
    int rc = tuna_options_parse("node-aware", TUNA_NEIGHBOR_ALLTOALLV, &def);
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_algorithm_info *info = &tuna_nbr_table[na].desc.info;
    long p[TUNA_MAX_PARAMS] = {0};
    tuna_params_resolve(info, def.value, ctx->size, p);
    const size_t max = (size_t)tuna_param_get(info, p, "max");
    const int N = ctx->nnodes, mine = ctx->node_id;
    const bool bitmap = N <= BITMAP_NODES_MAX;
    const size_t nbytes = bitmap ? ((size_t)N * (size_t)N + 7) / 8 : 0;
    unsigned char *bits = calloc(nbytes + 1, 1), *seen = calloc((size_t)N, 1);
    if (!bits || !seen) {
        free(bits);
        free(seen);
        return tuna_error_set(MPI_ERR_NO_MEM, "neighbor auto: no memory");
    }
    long long v[3] = {0, 0, 0}; /* gathered edges, distinct destination nodes, bytes */
    for (int i = 0; i < c->out.n; i++) {
        const int d = c->out.peer[i];
        const size_t b = tuna_nbr_bytes(&c->out, c->ssize, i);
        if (d == MPI_PROC_NULL || b == 0 || b > max || ctx->node_of[d] == mine)
            continue;
        const int x = ctx->node_of[d];
        v[0]++;
        v[2] += (long long)b;
        v[1] += !seen[x];
        seen[x] = 1;
        if (bitmap) {
            const size_t bit = (size_t)mine * (size_t)N + (size_t)x;
            bits[bit / 8] |= (unsigned char)(1u << (bit % 8));
        }
    }
    free(seen);
    long long busy[2] = {0, 0}; /* the busiest rank's edges and bytes, out and in */
    for (int i = 0; i < c->out.n; i++)
        if (c->out.peer[i] != MPI_PROC_NULL && c->out.count[i] > 0) {
            busy[0]++;
            busy[1] += (long long)tuna_nbr_bytes(&c->out, c->ssize, i);
        }
    for (int j = 0; j < c->in.n; j++)
        if (c->in.peer[j] != MPI_PROC_NULL && c->in.count[j] > 0) {
            busy[0]++;
            busy[1] += (long long)tuna_nbr_bytes(&c->in, c->rsize, j);
        }
    rc = PMPI_Allreduce(MPI_IN_PLACE, busy, 2, MPI_LONG_LONG, MPI_MAX, ctx->comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_SUM, ctx->comm);
    if (rc == MPI_SUCCESS && bitmap)
        rc = PMPI_Allreduce(MPI_IN_PLACE, bits, (int)nbytes, MPI_BYTE, MPI_BOR, ctx->comm);
    if (rc != MPI_SUCCESS) {
        free(bits);
        return tuna_error_set(rc, "neighbor auto: the pattern's agreement failed");
    }
    long long pairs = v[1];
    if (bitmap) {
        pairs = 0;
        for (size_t i = 0; i < nbytes; i++)
            pairs += __builtin_popcount(bits[i]);
    }
    free(bits);
    const tuna_profile *m = NULL;
    if (busy[0] == 0 || tuna_select_profile(&m) != MPI_SUCCESS || !m)
        return MPI_SUCCESS;
    const double P = ctx->size, E = (double)v[0], B = (double)v[2], M = (double)pairs;
    const double Q = P / N, k = (double)tuna_param_get(info, p, "leaders") < Q
                                    ? (double)tuna_param_get(info, p, "leaders")
                                    : Q;
    const tuna_level_profile *in = &m->intra, *out = &m->inter;
    const double nics = m->nics_per_node > 0 ? m->nics_per_node : 1;
    const double rank_lin = E / P * (out->overhead + out->gap) + B / P / out->bandwidth;
    const double node_lin = E / N * out->gap / nics + B / N / out->bandwidth / nics;
    /* the busiest rank posts all its edges, each priced as between nodes */
    const double D = (double)busy[0] / 2, Bb = (double)busy[1] / 2;
    const double busy_lin = D * (out->overhead + out->gap) + Bb / out->bandwidth;
    const double lin = rank_lin > node_lin ? rank_lin : node_lin;
    const double linear = out->latency + (lin > busy_lin ? lin : busy_lin);
    const double leader = M / (N * k) * (out->overhead + out->gap) + B / (N * k) / out->bandwidth;
    const double node_na = M / N * out->gap / nics + B / N / out->bandwidth / nics;
    const double aware = out->latency + 2 * in->latency + 2 * Q * (in->overhead + in->gap) +
                         B / (N * k) * (2 / in->bandwidth + 3 / m->copy_bandwidth) +
                         (leader > node_na ? leader : node_na);
    double best = linear;
    if (pairs > 0 && aware < best) {
        best = aware;
        *algorithm = na;
        for (int i = 0; i < TUNA_MAX_PARAMS; i++)
            param[i] = p[i];
    }
    const int tu = tuna_algorithm_find(TUNA_NEIGHBOR_ALLTOALLV, "tuna");
    const tuna_algorithm_info *tinfo = &tuna_nbr_table[tu].desc.info;
    double tbest = 0;
    int tr = 0;
    for (int r = 2; r <= 16 && r <= ctx->size; r *= 2) {
        const double t = tuna_estimate(m, ctx->size, r, D, Bb);
        if (tr == 0 || t < tbest) {
            tbest = t;
            tr = r;
        }
    }
    tuna_log(1, "auto (neighbor_alltoallv plan): %.0f edges to gather, %.0f B, %.0f node pairs "
                "on %d nodes, the busiest rank %.0f edges and %.0f B each way: linear %.3g us, "
                "node-aware %.3g us, tuna radix %d %.3g us",
             E, B, M, N, D, Bb, 1e6 * linear, 1e6 * aware, tr, 1e6 * tbest);
    if (tr && tbest < best) {
        *algorithm = tu;
        for (int i = 0; i < TUNA_MAX_PARAMS; i++)
            param[i] = 0;
        tuna_param_set(tinfo, param, "radix", tr); /* its one parameter */
    }
    return MPI_SUCCESS;
}
