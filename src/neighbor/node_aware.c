/*
 * node_aware: locality-aware neighborhood exchange (node-aware parallel communication, Bienz,
 * Gropp and Olson; MPI Advance's locality-aware persistent neighbor all-to-all). A message
 * for a rank on another node travels in three hops: to a leader of the sender's node (a
 * gather inside the node), in one message per node pair to a leader of the receiver's node,
 * and from there to its receiver (a scatter inside the node). Where many edges join the same
 * two nodes, each pair of nodes exchanges one message instead of one per edge.
 *
 * Parameters: `leaders` (k): the first min(k, node size) ranks of a node (ascending ranks)
 * share its node pairs: pair (A, B) leaves A through A's leader B mod k_A and enters B through
 * B's leader A mod k_B. `max`: edges of more bytes go directly, as do edges inside a node
 * (sender and receiver classify an edge alike: its bytes are the same on both sides).
 *
 * Stages (each a step of the engine):
 *   0-1 the pattern: every rank tells each leader of its node how many edges it routes
 *       through it (one message per rank and leader, fixed size), then which (peer, bytes);
 *   2   the leaders lay out their messages from those lists alone: the message of pair
 *       (A, B) holds its pieces ordered by (sender, receiver, order among that pair's edges),
 *       which both ends of the pair derive from their own lists;
 *   3   pack and send the pieces to the leaders, post the direct edges and the receives;
 *   4   (leaders) copy the gathered pieces into the node-pair messages and send them;
 *   5   (leaders) copy the received node-pair pieces into each receiver's message, send;
 *   6   unpack into the receive buffer.
 * A blocking or nonblocking call runs all of them; a persistent one runs 0-2 at init and
 * 3-6 at each start. Rounds: 2 of metadata inside nodes, then 3 data hops (2 inside nodes).
 * Temporary memory: the pieces' bytes at most three times on a leader, twice elsewhere.
 */
#include "neighbor.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct nbr_msg {
    int peer;
    size_t off, bytes;  /* in the arena */
} nbr_msg;

typedef struct nbr_seg {
    size_t from, to, bytes;  /* a copy inside the arena */
} nbr_seg;

typedef struct nbr_piece {
    int edge;           /* index in this rank's side */
    size_t off;         /* in the arena */
} nbr_piece;

struct tuna_nbr_agg {
    int k, t;                  /* leaders on this node; this rank's leader index or -1 */
    int nlocal, *local;        /* this node's ranks, ascending (inside members) */
    int nnodes;
    int *node_start, *members; /* ranks of node X: members[node_start[X] .. node_start[X+1]) */
    /* the pattern's metadata */
    long long *head_send, *head_recv;          /* 2 per leader / per local rank */
    long long *list_send, *list_recv;          /* (peer, bytes) pairs */
    size_t *list_send_off, *list_recv_off;     /* k + 1 / nlocal + 1, in pairs */
    /* the data messages and copies, offsets into one arena */
    char *arena;
    size_t arena_bytes;
    nbr_msg *gsend, *grecv, *isend, *irecv, *ssend, *srecv;
    int ngsend, ngrecv, nisend, nirecv, nssend, nsrecv;
    nbr_seg *lcopy, *rcopy;
    int nlcopy, nrcopy;
    nbr_piece *pack, *unpack;
    int npack, nunpack;
    int *dir_out, *dir_in;
    int ndir_out, ndir_in;
    MPI_Request *ireq;         /* the node-pair receives (waited for in stage 4) */
};

void tuna_nbr_agg_free(struct tuna_nbr_agg *g)
{
    if (!g)
        return;
    void *p[] = {g->node_start, g->members, g->head_send, g->head_recv, g->list_send,
                 g->list_recv, g->list_send_off, g->list_recv_off, g->arena, g->gsend, g->grecv,
                 g->isend, g->irecv, g->ssend, g->srecv, g->lcopy, g->rcopy, g->pack, g->unpack,
                 g->dir_out, g->dir_in, g->ireq};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        free(p[i]);
    free(g);
}

/* ------------------------------------------------------------------ the pattern */

static int node_of(const tuna_nbr_op *o, int r)
{
    return o->c->ctx->node_of[r];
}

/* Edge i of a side goes through a leader: on another node, not empty, at most `max` bytes. */
static bool gathered(const tuna_nbr_op *o, const tuna_nbr_side *s, size_t tsize, int i)
{
    const int peer = s->peer[i];
    const size_t b = tuna_nbr_bytes(s, tsize, i);
    return peer != MPI_PROC_NULL && b > 0 && b <= (size_t)tuna_param_get(o->info, o->param, "max") &&
           node_of(o, peer) != o->c->ctx->node_id;
}

static bool direct(const tuna_nbr_op *o, const tuna_nbr_side *s, size_t tsize, int i)
{
    return s->peer[i] != MPI_PROC_NULL && s->count[i] > 0 && !gathered(o, s, tsize, i);
}

/* Leader index on a node of `size` ranks for traffic with node `other`. */
static int leader_of(long k, int size, int other)
{
    const int kk = k < size ? (int)k : size;
    return other % kk;
}

/* Edge i of the send side (send) or of the receive side is gathered through leader t. */
static bool via_leader(const tuna_nbr_op *o, const struct tuna_nbr_agg *g, bool send, int i,
                       int t)
{
    const tuna_nbr_call *c = o->c;
    const tuna_nbr_side *s = send ? &c->out : &c->in;
    return gathered(o, s, send ? c->ssize : c->rsize, i) &&
           leader_of(g->k, g->nlocal, node_of(o, s->peer[i])) == t;
}

static int nodes_make(tuna_nbr_op *o, struct tuna_nbr_agg *g)
{
    const tuna_ctx *ctx = o->c->ctx;
    const int P = ctx->size;
    g->nnodes = ctx->nnodes;
    g->node_start = calloc((size_t)g->nnodes + 1, sizeof *g->node_start);
    g->members = malloc((size_t)P * sizeof *g->members);
    if (!g->node_start || !g->members)
        return MPI_ERR_NO_MEM;
    for (int r = 0; r < P; r++)
        g->node_start[ctx->node_of[r] + 1]++;
    for (int x = 0; x < g->nnodes; x++)
        g->node_start[x + 1] += g->node_start[x];
    int *fill = malloc((size_t)g->nnodes * sizeof *fill);
    if (!fill)
        return MPI_ERR_NO_MEM;
    for (int x = 0; x < g->nnodes; x++)
        fill[x] = g->node_start[x];
    for (int r = 0; r < P; r++) /* ascending ranks within each node */
        g->members[fill[ctx->node_of[r]]++] = r;
    free(fill);
    const int me = ctx->node_id;
    g->nlocal = g->node_start[me + 1] - g->node_start[me];
    g->local = g->members + g->node_start[me];
    const long k = tuna_param_get(o->info, o->param, "leaders");
    g->k = (int)(k < g->nlocal ? k : g->nlocal);
    g->t = -1;
    for (int l = 0; l < g->k; l++)
        if (g->local[l] == ctx->rank)
            g->t = l;
    return MPI_SUCCESS;
}

static int node_size(const struct tuna_nbr_agg *g, int x)
{
    return g->node_start[x + 1] - g->node_start[x];
}

static int node_rank(const struct tuna_nbr_agg *g, int x, int l)
{
    return g->members[g->node_start[x] + l];
}

/* Stage 0: this rank's lists per leader (its gathered out-edges, then its gathered in-edges,
 * each as (peer, bytes) in the topology's order) and their lengths. */
static int lists_make(tuna_nbr_op *o, struct tuna_nbr_agg *g)
{
    const tuna_nbr_call *c = o->c;
    g->head_send = calloc(2 * (size_t)g->k, sizeof *g->head_send);
    g->list_send_off = calloc((size_t)g->k + 1, sizeof *g->list_send_off);
    g->list_send = malloc(2 * ((size_t)c->out.n + (size_t)c->in.n + 1) * sizeof *g->list_send);
    if (!g->head_send || !g->list_send_off || !g->list_send)
        return MPI_ERR_NO_MEM;
    size_t n = 0;
    for (int t = 0; t < g->k; t++) {
        g->list_send_off[t] = n;
        for (int in = 0; in < 2; in++) { /* out-edges, then in-edges */
            const tuna_nbr_side *s = in ? &c->in : &c->out;
            for (int i = 0; i < s->n; i++)
                if (via_leader(o, g, !in, i, t)) {
                    g->list_send[2 * n] = s->peer[i];
                    g->list_send[2 * n + 1] =
                        (long long)tuna_nbr_bytes(s, in ? c->rsize : c->ssize, i);
                    n++;
                    g->head_send[2 * t + in]++;
                }
        }
    }
    g->list_send_off[g->k] = n;
    return MPI_SUCCESS;
}

/* A piece of a node-pair message: its sender, receiver, order and where it is. */
typedef struct pair_piece {
    int s, d, order;
    size_t bytes, at;  /* at: offset in the gathered / scattered buffer it comes from / goes to */
} pair_piece;

static int cmp_piece(const void *x, const void *y)
{
    const pair_piece *a = x, *b = y;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

/* Arena space: n bytes at the end. */
static size_t take(size_t *top, size_t n)
{
    size_t at = *top;
    *top += n;
    return at;
}

/* The edges of one side (send: the out-edges) through leader t as the pieces of one message
 * at *top in the arena: the pieces appended to pc[*npc], the message, where there is one, to
 * m[*nm]. */
static void leader_message(const tuna_nbr_op *o, const struct tuna_nbr_agg *g, bool send, int t,
                           size_t *top, nbr_piece *pc, int *npc, nbr_msg *m, int *nm)
{
    const tuna_nbr_call *c = o->c;
    const tuna_nbr_side *s = send ? &c->out : &c->in;
    size_t bytes = 0;
    for (int i = 0; i < s->n; i++)
        if (via_leader(o, g, send, i, t)) {
            pc[(*npc)++] = (nbr_piece){i, *top + bytes};
            bytes += tuna_nbr_bytes(s, send ? c->ssize : c->rsize, i);
        }
    if (bytes)
        m[(*nm)++] = (nbr_msg){g->local[t], take(top, bytes), bytes};
}

/* Stage 2: every message and copy of the data stages, from the lists. */
static int pattern_make(tuna_nbr_op *o, struct tuna_nbr_agg *g)
{
    const tuna_nbr_call *c = o->c;
    const tuna_ctx *ctx = c->ctx;
    const int mynode = ctx->node_id;
    size_t top = 0;
    const size_t nl = (size_t)g->nlocal;
    g->gsend = calloc((size_t)g->k, sizeof *g->gsend);
    g->srecv = calloc((size_t)g->k, sizeof *g->srecv);
    g->pack = calloc((size_t)c->out.n + 1, sizeof *g->pack);
    g->unpack = calloc((size_t)c->in.n + 1, sizeof *g->unpack);
    g->dir_out = calloc((size_t)c->out.n + 1, sizeof *g->dir_out);
    g->dir_in = calloc((size_t)c->in.n + 1, sizeof *g->dir_in);
    if (!g->gsend || !g->srecv || !g->pack || !g->unpack || !g->dir_out || !g->dir_in)
        return MPI_ERR_NO_MEM;
    /* This rank as a sender: one gathered message per leader, pieces in list order; as a
     * receiver: one scattered message per leader, pieces in list order. */
    for (int t = 0; t < g->k; t++) {
        leader_message(o, g, true, t, &top, g->pack, &g->npack, g->gsend, &g->ngsend);
        leader_message(o, g, false, t, &top, g->unpack, &g->nunpack, g->srecv, &g->nsrecv);
    }
    for (int i = 0; i < c->out.n; i++)
        if (direct(o, &c->out, c->ssize, i))
            g->dir_out[g->ndir_out++] = i;
    for (int j = 0; j < c->in.n; j++)
        if (direct(o, &c->in, c->rsize, j))
            g->dir_in[g->ndir_in++] = j;
    if (g->t < 0) {
        g->arena_bytes = top;
        return MPI_SUCCESS;
    }

    /* This rank as a leader. Gathered messages: one per local rank with out-pieces here. */
    g->grecv = calloc(nl, sizeof *g->grecv);
    g->ssend = calloc(nl, sizeof *g->ssend);
    g->isend = calloc((size_t)g->nnodes, sizeof *g->isend);
    g->irecv = calloc((size_t)g->nnodes, sizeof *g->irecv);
    g->ireq = calloc((size_t)g->nnodes + 1, sizeof *g->ireq);
    size_t nout = 0, nin = 0; /* pieces through this leader, both ways */
    for (size_t l = 0; l < nl; l++) {
        nout += (size_t)g->head_recv[2 * l];
        nin += (size_t)g->head_recv[2 * l + 1];
    }
    pair_piece *po = calloc(nout + 1, sizeof *po), *pi = calloc(nin + 1, sizeof *pi);
    g->lcopy = calloc(nout + 1, sizeof *g->lcopy);
    g->rcopy = calloc(nin + 1, sizeof *g->rcopy);
    if (!g->grecv || !g->ssend || !g->isend || !g->irecv || !g->ireq || !po || !pi ||
        !g->lcopy || !g->rcopy) {
        free(po);
        free(pi);
        return MPI_ERR_NO_MEM;
    }
    size_t npo = 0, npi = 0;
    for (size_t l = 0; l < nl; l++) {
        const long long *e = g->list_recv + 2 * g->list_recv_off[l];
        const size_t no = (size_t)g->head_recv[2 * l], ni = (size_t)g->head_recv[2 * l + 1];
        size_t gb = 0, sb = 0;
        const int r = g->local[l];
        for (size_t q = 0; q < no; q++) {
            const int d = (int)e[2 * q];
            int order = 0; /* among r's earlier pieces to d */
            for (size_t q2 = 0; q2 < q; q2++)
                order += (int)e[2 * q2] == d;
            po[npo++] = (pair_piece){r, d, order, (size_t)e[2 * q + 1], top + gb};
            gb += (size_t)e[2 * q + 1];
        }
        if (gb)
            g->grecv[g->ngrecv++] = (nbr_msg){r, take(&top, gb), gb};
        for (size_t q = no; q < no + ni; q++) {
            const int s = (int)e[2 * q];
            int order = 0;
            for (size_t q2 = no; q2 < q; q2++)
                order += (int)e[2 * q2] == s;
            pi[npi++] = (pair_piece){s, r, order, (size_t)e[2 * q + 1], top + sb};
            sb += (size_t)e[2 * q + 1];
        }
        if (sb)
            g->ssend[g->nssend++] = (nbr_msg){r, take(&top, sb), sb};
    }
    /* Node-pair messages: out to each node this leader serves, in to it from each. */
    qsort(po, npo, sizeof *po, cmp_piece);
    qsort(pi, npi, sizeof *pi, cmp_piece);
    for (int x = 0; x < g->nnodes; x++) {
        if (x == mynode || leader_of(g->k, g->nlocal, x) != g->t)
            continue;
        const int partner = node_rank(g, x, leader_of(tuna_param_get(o->info, o->param, "leaders"), node_size(g, x), mynode));
        size_t ob = 0, ib = 0;
        for (size_t q = 0; q < npo; q++)
            if (node_of(o, po[q].d) == x)
                ob += po[q].bytes;
        for (size_t q = 0; q < npi; q++)
            if (node_of(o, pi[q].s) == x)
                ib += pi[q].bytes;
        if (ob) {
            size_t at = take(&top, ob);
            g->isend[g->nisend++] = (nbr_msg){partner, at, ob};
            for (size_t q = 0; q < npo; q++)
                if (node_of(o, po[q].d) == x) {
                    g->lcopy[g->nlcopy++] = (nbr_seg){po[q].at, at, po[q].bytes};
                    at += po[q].bytes;
                }
        }
        if (ib) {
            size_t at = take(&top, ib);
            g->irecv[g->nirecv++] = (nbr_msg){partner, at, ib};
            for (size_t q = 0; q < npi; q++)
                if (node_of(o, pi[q].s) == x) {
                    g->rcopy[g->nrcopy++] = (nbr_seg){at, pi[q].at, pi[q].bytes};
                    at += pi[q].bytes;
                }
        }
    }
    free(po);
    free(pi);
    g->arena_bytes = top;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ the steps */

static int post_msgs(tuna_nbr_op *o, bool send, const nbr_msg *m, int n, int tag,
                     MPI_Request *req, int *nreq)
{
    const tuna_nbr_call *c = o->c;
    for (int q = 0; q < n; q++) {
        char *at = o->agg->arena + m[q].off;
        int rc = send ? tuna_tp_isend(c->tp, at, m[q].bytes, m[q].peer, tag, c->comm,
                                      &req[*nreq])
                      : tuna_tp_irecv(c->tp, at, m[q].bytes, m[q].peer, tag, c->comm,
                                      &req[*nreq]);
        if (rc != MPI_SUCCESS)
            return rc;
        (*nreq)++;
    }
    return MPI_SUCCESS;
}

/* The pattern's (peer, bytes) pairs between this rank and its node's leaders, then stage
 * `next`'s wait: from each local rank (where this rank leads, g->t >= 0) the pairs at
 * rbuf + 2 roff[l], to each leader the pairs at sbuf + 2 soff[t] (offsets in pairs, NULL: one
 * pair each); an empty list posts nothing. */
static int pairs_post(tuna_nbr_op *o, long long *rbuf, const size_t *roff,
                      const long long *sbuf, const size_t *soff, int tag, const char *what,
                      int next)
{
    const struct tuna_nbr_agg *g = o->agg;
    const tuna_nbr_call *c = o->c;
    int rc = MPI_SUCCESS, n = 0;
    for (int l = 0; g->t >= 0 && l < g->nlocal && rc == MPI_SUCCESS; l++) {
        const size_t at = roff ? roff[l] : (size_t)l, pairs = roff ? roff[l + 1] - at : 1;
        if (pairs && (rc = tuna_tp_irecv(c->tp, rbuf + 2 * at, 2 * pairs * sizeof(long long),
                                         g->local[l], tag, c->comm, &o->req[n])) == MPI_SUCCESS)
            n++;
    }
    for (int t = 0; t < g->k && rc == MPI_SUCCESS; t++) {
        const size_t at = soff ? soff[t] : (size_t)t, pairs = soff ? soff[t + 1] - at : 1;
        if (pairs && (rc = tuna_tp_isend(c->tp, sbuf + 2 * at, 2 * pairs * sizeof(long long),
                                         g->local[t], tag, c->comm, &o->req[n])) == MPI_SUCCESS)
            n++;
    }
    if (rc != MPI_SUCCESS)
        rc = tuna_error_set(rc, "neighbor node_aware: posting the pattern's %s failed", what);
    o->stage = next;
    return tuna_op_step_wait(&o->op, o->req, n, rc);
}

/* Stage 0: the lists made, their lengths exchanged with the node's leaders. */
static int stage_heads(tuna_nbr_op *o)
{
    struct tuna_nbr_agg *g = o->agg;
    int rc = nodes_make(o, g);
    if (rc == MPI_SUCCESS)
        rc = lists_make(o, g);
    if (rc == MPI_SUCCESS && g->t >= 0 &&
        !(g->head_recv = calloc(2 * (size_t)g->nlocal, sizeof *g->head_recv)))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = tuna_nbr_reserve(o, g->nlocal + g->k);
    if (rc != MPI_SUCCESS)
        return tuna_op_step_done(&o->op, tuna_error_set(rc, "neighbor node_aware: no memory "
                                                            "for the pattern"));
    return pairs_post(o, g->head_recv, NULL, g->head_send, NULL,
                      TUNA_TAG_NBR_HEAD + o->c->tag_shift, "lengths", 1);
}

/* Stage 1: the lists themselves. */
static int stage_lists(tuna_nbr_op *o)
{
    struct tuna_nbr_agg *g = o->agg;
    const tuna_nbr_call *c = o->c;
    int rc = MPI_SUCCESS;
    if (g->t >= 0) {
        g->list_recv_off = calloc((size_t)g->nlocal + 1, sizeof *g->list_recv_off);
        if (!g->list_recv_off)
            rc = MPI_ERR_NO_MEM;
        for (int l = 0; rc == MPI_SUCCESS && l < g->nlocal; l++) {
            const long long pairs = g->head_recv[2 * l] + g->head_recv[2 * l + 1];
            if (g->head_recv[2 * l] < 0 || g->head_recv[2 * l + 1] < 0 ||
                pairs > (long long)INT_MAX / 2)
                rc = tuna_error_set(MPI_ERR_INTERN, "neighbor node_aware: rank %d sent a "
                                    "bad list length", g->local[l]);
            else
                g->list_recv_off[l + 1] = g->list_recv_off[l] + (size_t)pairs;
        }
        if (rc == MPI_SUCCESS &&
            !(g->list_recv = malloc(2 * (g->list_recv_off[g->nlocal] + 1) *
                                    sizeof *g->list_recv)))
            rc = MPI_ERR_NO_MEM;
    }
    if (rc != MPI_SUCCESS)
        return tuna_op_step_done(&o->op, tuna_error_set(rc, "neighbor node_aware: the "
                                                            "pattern's lists"));
    return pairs_post(o, g->list_recv, g->list_recv_off, g->list_send, g->list_send_off,
                      TUNA_TAG_NBR_LIST + c->tag_shift, "lists", 2);
}

/* Stage 3: the pieces packed and on their way; direct edges and every receive posted. The
 * step waits for the pieces this leader gathers. */
static int stage_send(tuna_nbr_op *o)
{
    struct tuna_nbr_agg *g = o->agg;
    const tuna_nbr_call *c = o->c;
    int rc = tuna_nbr_reserve(o, g->ngrecv + g->ngsend + g->nsrecv + g->ndir_out + g->ndir_in +
                                     g->nisend + g->nssend);
    if (rc != MPI_SUCCESS)
        return tuna_op_step_done(&o->op, rc);
    for (int q = 0; q < g->npack && rc == MPI_SUCCESS; q++)
        rc = tuna_nbr_pack_edge(c, g->pack[q].edge, g->arena + g->pack[q].off);
    int n = 0;
    o->npend = 0;
    const int shift = c->tag_shift;
    if (rc == MPI_SUCCESS)
        rc = post_msgs(o, false, g->grecv, g->ngrecv, TUNA_TAG_NBR_GATHER + shift, o->req, &n);
    if (rc == MPI_SUCCESS)
        rc = post_msgs(o, false, g->srecv, g->nsrecv, TUNA_TAG_NBR_SCATTER + shift, o->pend,
                       &o->npend);
    int ni = 0;
    if (rc == MPI_SUCCESS)
        rc = post_msgs(o, false, g->irecv, g->nirecv, TUNA_TAG_NBR_INTER + shift, g->ireq, &ni);
    for (int q = 0; q < g->ndir_in && rc == MPI_SUCCESS; q++) {
        const int j = g->dir_in[q];
        rc = tuna_nbr_post_edge(c, false, j, TUNA_TAG_NBR_DIRECT + shift, &o->pend[o->npend]);
        o->npend += rc == MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS)
        rc = post_msgs(o, true, g->gsend, g->ngsend, TUNA_TAG_NBR_GATHER + shift, o->pend,
                       &o->npend);
    for (int q = 0; q < g->ndir_out && rc == MPI_SUCCESS; q++) {
        const int i = g->dir_out[q];
        rc = tuna_nbr_post_edge(c, true, i, TUNA_TAG_NBR_DIRECT + shift, &o->pend[o->npend]);
        o->npend += rc == MPI_SUCCESS;
    }
    /* the node-pair receives join the final wait if they were not waited for (a failure) */
    for (int q = ni; q < g->nirecv; q++)
        g->ireq[q] = MPI_REQUEST_NULL;
    if (rc != MPI_SUCCESS)
        rc = tuna_error_set(rc, "neighbor node_aware: posting the data failed");
    o->stage = 4;
    return tuna_op_step_wait(&o->op, o->req, n, rc);
}

static void copy_segs(tuna_nbr_op *o, const nbr_seg *s, int n)
{
    char *a = o->agg->arena;
    for (int q = 0; q < n; q++)
        tuna_tp_copy(o->c->tp, a + s[q].to, a + s[q].from, s[q].bytes);
}

int tuna_nbr_node_aware_step(tuna_op *op, int wait_rc)
{
    tuna_nbr_op *o = (tuna_nbr_op *)op;
    struct tuna_nbr_agg *g = o->agg;
    const int shift = o->c->tag_shift;
    int rc;
    switch (o->stage) {
    case 0:
        if (!g && !(g = o->agg = calloc(1, sizeof *g)))
            return tuna_op_step_done(op, tuna_error_set(MPI_ERR_NO_MEM, "neighbor node_aware: "
                                                                        "no memory"));
        return stage_heads(o);
    case 1:
        if ((rc = tuna_op_step_record(op, wait_rc, "neighbor node_aware: the pattern's lengths "
                                                   "failed")) != MPI_SUCCESS)
            return tuna_op_step_done(op, rc);
        return stage_lists(o);
    case 2:
        if ((rc = tuna_op_step_record(op, wait_rc, "neighbor node_aware: the pattern's lists "
                                                   "failed")) != MPI_SUCCESS)
            return tuna_op_step_done(op, rc);
        rc = pattern_make(o, g);
        if (rc == MPI_SUCCESS && g->arena_bytes && !(g->arena = malloc(g->arena_bytes)))
            rc = MPI_ERR_NO_MEM;
        if (rc != MPI_SUCCESS)
            return tuna_op_step_done(op, tuna_error_set(rc, "neighbor node_aware: no memory "
                                                            "for the pattern"));
        o->data_stage = 3;
        if (o->pattern_only)
            return tuna_op_step_done(op, MPI_SUCCESS);
        o->stage = 3;
        /* fall through */
    case 3:
        return stage_send(o);
    case 4: /* the gathered pieces are here: the node-pair messages */
        tuna_op_step_record(op, wait_rc, "neighbor node_aware: gathering within the node "
                                         "failed");
        copy_segs(o, g->lcopy, g->nlcopy);
        rc = post_msgs(o, true, g->isend, g->nisend, TUNA_TAG_NBR_INTER + shift, o->pend,
                       &o->npend);
        if (rc != MPI_SUCCESS)
            rc = tuna_error_set(rc, "neighbor node_aware: posting a node-pair message failed");
        o->stage = 5;
        return tuna_op_step_wait(op, g->ireq ? g->ireq : o->req, g->nirecv, rc);
    case 5: /* the node-pair messages are here: each receiver's message */
        tuna_op_step_record(op, wait_rc, "neighbor node_aware: a node-pair message failed");
        copy_segs(o, g->rcopy, g->nrcopy);
        rc = post_msgs(o, true, g->ssend, g->nssend, TUNA_TAG_NBR_SCATTER + shift, o->pend,
                       &o->npend);
        if (rc != MPI_SUCCESS)
            rc = tuna_error_set(rc, "neighbor node_aware: posting a scatter failed");
        o->stage = 6;
        return tuna_op_step_wait(op, o->pend, o->npend, rc);
    default: /* 6: everything arrived */
        rc = tuna_op_step_record(op, wait_rc, "neighbor node_aware: a message failed");
        for (int q = 0; q < g->nunpack && o->op.comm_rc == MPI_SUCCESS; q++)
            if ((rc = tuna_nbr_unpack_edge(o->c, g->unpack[q].edge,
                                           g->arena + g->unpack[q].off)) != MPI_SUCCESS)
                o->op.comm_rc = rc;
        return tuna_op_step_done(op, o->op.comm_rc);
    }
}
