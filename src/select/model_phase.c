/*
 * The model's building blocks shared by every collective's cost model (docs/tuning.md): where
 * the ranks are, which peers are off-node, and the time of one phase of messages under a
 * LogGP-style profile. The algorithms' models live with their families (src/<coll>/model.c).
 */
#include "tuna_select.h"

#include <math.h>

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

/*
 * One phase: every rank posts m messages carrying `bytes` bytes (`node_bytes` on average), a
 * fraction phi of them to other nodes, then waits for all of them. W is the transfers'
 * bound: the largest of m*g, intra bytes / bw_intra, Ws and Wnet, where Ws = max(inter bytes
 * of one rank / bw_inter, inter bytes of the node / (nics * bw_inter)) is what all of a
 * rank's off-node messages share (on two nodes also the one route between them) and Wnet
 * the busiest link's bytes / bw_link. With o1 = o/m and `late` the receives the rank
 * completes only after all others (0 but for tuna_model_phase_late):
 * and W' = max(m*g, intra, Wnet, Ws + late*o_inter/2):
 *   eager (mean message <= eager_limit, receives posted first):
 *       T = max(m*o, L + o1 + max((m-1)*o1/2, W'))
 *   otherwise: T = L + m*o/2 + max(m*o/2, W')
 * with L, o, g of the inter-node level as soon as anything crosses nodes.
 */
/* Bytes a message carries besides its payload: SMPI adds 16 (tag, source, communicator) to
 * every message it simulates (smpi_request.cpp, payload_size_); an MPI library's eager header
 * is of that order. 16-byte blocks sent one per message move 2x their payload. */
#define TUNA_MODEL_ENVELOPE 16.0

static double phase_time(const tuna_profile *prof, const tuna_model_layout *lay, double m,
                         double late, double bytes, double node_bytes, double phi, long d0,
                         long d1, long step, bool receives_first)
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
    const bool eager = receives_first && bytes <= m * prof->eager_limit;
    bytes += m * TUNA_MODEL_ENVELOPE;
    node_bytes += m * TUNA_MODEL_ENVELOPE;
    double w = fmax(g, bytes * (1 - phi) / I->bandwidth);
    /* Off-node bounds that all of a rank's off-node messages share: its own injection and
     * its node's NICs, and on two nodes the one route between them. */
    double wshared = fmax(bytes * phi_worst / E->bandwidth,
                          node_bytes * phi * Q / (prof->nics_per_node * E->bandwidth));
    double wnet = 0;
    if (net > 0 && prof->net_link_bandwidth > 0) /* the busiest link of the network */
        wnet = node_bytes * phi * Q * net / prof->net_link_bandwidth;
    if (lay->N == 2) {
        wshared = fmax(wshared, wnet);
        wnet = 0;
    }
    /* An eager message leaves when its send overhead is paid and is completed when it has
     * arrived: the transfers start after the first send (half of o1) and overlap the rest;
     * the last receive's half follows them; the CPU's m*o bounds it all. Off-node messages
     * bound by a resource they all share end with it; `late` receives are completed only
     * after them (the wait's later chunks), so their receive halves (SMPI charges `or`
     * as a receive is completed) follow its end one by one (docs/results/simulation-gap.md,
     * "Pricing
     * the hierarchical algorithms after the metadata change"). */
    double tail = phi > 0 ? fmin(late, m) * E->overhead / 2 : 0;
    w = fmax(fmax(w, wnet), wshared + tail);
    if (eager) {
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
    return phase_time(prof, lay, m, 0, bytes, node_bytes, phi, d0, d1, step, true);
}

double tuna_model_phase_late(const tuna_profile *prof, const tuna_model_layout *lay, double m,
                             double late, double bytes, double node_bytes, double phi, long d0,
                             long d1, long step)
{
    return phase_time(prof, lay, m, late, bytes, node_bytes, phi, d0, d1, step, true);
}

double tuna_model_phase_posted_late(const tuna_profile *prof, const tuna_model_layout *lay,
                                    double m, double bytes, double node_bytes, double phi,
                                    long d0, long d1, long step)
{
    return phase_time(prof, lay, m, 0, bytes, node_bytes, phi, d0, d1, step, false);
}

double tuna_model_phase_even(const tuna_profile *m, const tuna_model_layout *l, double msgs,
                             double bytes, double phi, long d0, long d1, long step)
{
    return phase_time(m, l, msgs, 0, bytes, bytes, phi, d0, d1, step, true);
}
