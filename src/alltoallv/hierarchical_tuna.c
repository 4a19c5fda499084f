/*
 * Hierarchical TuNA: the part shared by coalesced.c and staggered.c.
 *
 * Ranks are numbered node-major (virtual rank = node*Q + local rank), so any
 * placement with Q ranks on each of N nodes works. Intra-node phase: the N
 * nodes run concurrent Q x Q TuNA exchanges (the "implicit" groups: plain
 * point-to-point on the private communicator, peers mapped through
 * vrank_to_rank, no communicator split). The block that local rank l sends
 * to local rank g is made of N sub-blocks: l's blocks for local rank g of
 * every node. Sub-blocks for this node land in the receive buffer; the
 * others wait in the rounds' landing area (kept[TUNA_KEEP_HIER_STAGE]),
 * sized from the intra-node metadata as they are announced, so that
 * afterwards local rank g holds everything its node sends to local rank g of
 * every other node. Inter-node phase: a metadata exchange with the peer of
 * the same local rank on every other node (Q sizes each), then the data, in
 * the pattern of coalesced.c or staggered.c. A uniform all-to-all (a->uniform)
 * sends no metadata in either phase: every sub-block's size is known.
 *
 * Temporary memory, no global maximum needed (all from sizes this rank is
 * told before the data arrives): the intra-node rounds' (Q-(K_Q+1))*m + S,
 * with m its largest block (N sub-blocks) held between hops and S its largest
 * staging of a batch (tuna_rounds.c), plus the landing area: exactly the
 * (N-1)(Q-1) sub-blocks this rank forwards to other nodes, at most
 * (N-1)(Q-1) times the largest of them. A discard buffer of the truncated
 * sizes comes on top on the error path. The rounds' buffers and the landing
 * area are kept on the communicator, trimmed at the end of each call to what
 * it used.
 */
#include "tuna_rounds.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct hier_mem {
    const char **sp;     /* after the call's state (hier_state), in its allocation */
    char **rp;
    size_t *sb, *cap, *got, *off;
    int *members, *peers;
    char **ptrs;
    size_t *bytes;
    uint64_t *meta;
    unsigned char *wire; /* the sizes encoded (tuna_sizes_encode): out, then in */
    MPI_Request *req;
    char *discard;
    size_t discard_len;
} hier_mem;

/* Between its steps a call keeps this (o->state), with sp after it: one allocation where a
 * blocking call once had its sp array. o->i: where the call is (enum below). */
typedef struct hier_state {
    tuna_timer tm;
    tuna_bytes_view v;
    hier_mem m;
    tuna_rounds e;
    tuna_rounds_state st;
    tuna_hier h;
    const char *name;
    tuna_hier_inter_fn *inter;
    int rc_trunc;        /* a truncation, reported once the exchange is over */
} hier_state;

enum { HIER_START, HIER_ROUNDS, HIER_META, HIER_INTER };

/* Free the index arrays (again is harmless). */
static void hier_mem_free(hier_mem *m)
{
    free(m->rp);
    free(m->sb);
    free(m->members);
    free(m->ptrs);
    free(m->bytes);
    free(m->meta);
    free(m->wire);
    free(m->req);
    free(m->discard);
    const char **sp = m->sp;
    *m = (hier_mem){.sp = sp};
}

static void hier_state_free(tuna_a2av_op *o)
{
    hier_state *s = o->state;
    tuna_rounds_state_free(&s->st);
    hier_mem_free(&s->m);
    free(s->h.pool);
    tuna_a2av_state_release(o, &s->v);
}

/* Inter-node metadata, its posts: send the out sizes, receive the in sizes. */
static int inter_meta_post(tuna_a2av_op *o, hier_state *s)
{
    tuna_hier *h = &s->h;
    hier_mem *m = &s->m;
    const int Q = h->Q, nd = h->N - 1, tag = TUNA_TAG_INTER_META + h->a->tag_shift;
    MPI_Comm comm = h->a->ctx->comm;
    uint64_t *out = m->meta;
    const size_t wb = TUNA_SIZES_BYTES(Q);
    unsigned char *wout = m->wire, *win = m->wire + (size_t)nd * wb;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < 2 * nd; i++) /* entries not posted stay null */
        m->req[i] = MPI_REQUEST_NULL;
    for (int d = 1; d <= nd && rc == MPI_SUCCESS; d++)
        if ((rc = tuna_tp_irecv(h->a->tp, win + (size_t)(d - 1) * wb, wb, h->from_rank[d - 1], tag,
                                comm, &m->req[2 * (d - 1)])) != MPI_SUCCESS)
            m->req[2 * (d - 1)] = MPI_REQUEST_NULL;
    for (int d = 1; d <= nd && rc == MPI_SUCCESS; d++) {
        for (int l = 0; l < Q; l++)
            out[(size_t)(d - 1) * Q + l] = h->out_bytes[(size_t)(d - 1) * Q + l];
        size_t len = tuna_sizes_encode(out + (size_t)(d - 1) * Q, (size_t)Q,
                                       wout + (size_t)(d - 1) * wb);
        if ((rc = tuna_tp_isend(h->a->tp, wout + (size_t)(d - 1) * wb, len, h->to_rank[d - 1], tag,
                                comm, &m->req[2 * (d - 1) + 1])) != MPI_SUCCESS)
            m->req[2 * (d - 1) + 1] = MPI_REQUEST_NULL;
    }
    /* A failed post still completes what was posted: m->wire is freed afterwards. */
    return tuna_a2av_step_wait(o, m->req, 2 * nd, rc);
}

/* The in sizes in[(d-1)*Q + l] are known: place the in blocks. */
static int inter_place(hier_state *s, const uint64_t *in)
{
    tuna_hier *h = &s->h;
    hier_mem *m = &s->m;
    const tuna_bytes_view *v = &s->v;
    const int Q = h->Q, nd = h->N - 1;
    const int *v2r = h->a->ctx->vrank_to_rank;
    /* Truncated blocks are received into a discard buffer of exactly their sizes. */
    size_t trunc_bytes = 0;
    for (int d = 1; d <= nd; d++)
        for (int l = 0; l < Q; l++) {
            int src = v2r[((h->node - d + h->N) % h->N) * Q + l];
            size_t bytes = (size_t)in[(size_t)(d - 1) * Q + l];
            trunc_bytes += bytes > v->rbytes[src] ? bytes : 0;
        }
    if (trunc_bytes && !(m->discard = tuna_malloc(trunc_bytes)))
        return MPI_ERR_NO_MEM;
    m->discard_len = trunc_bytes;
    int rc_trunc = MPI_SUCCESS;
    size_t used = 0;
    for (int d = 1; d <= nd; d++)
        for (int l = 0; l < Q; l++) {
            size_t idx = (size_t)(d - 1) * Q + l, bytes = (size_t)in[idx];
            int src = v2r[((h->node - d + h->N) % h->N) * Q + l];
            h->in_bytes[idx] = bytes;
            h->in_ptr[idx] = NULL;
            if (bytes > v->rbytes[src]) {
                rc_trunc = tuna_error_set(MPI_ERR_TRUNCATE,
                                          "%s: rank %d receives %zu bytes from rank %d but its "
                                          "recvcounts allow %zu",
                                          s->name, h->a->rank, bytes, src, v->rbytes[src]);
                h->in_ptr[idx] = m->discard + used;
                used += bytes;
            } else if (bytes) {
                h->in_ptr[idx] = v->rbase + v->roff[src];
            }
        }
    return rc_trunc;
}

/* Inter-node metadata arrived: learn the in sizes, place the in blocks. */
static int inter_meta_place(hier_state *s)
{
    hier_mem *m = &s->m;
    const int Q = s->h.Q, nd = s->h.N - 1;
    uint64_t *in = m->meta + (size_t)nd * Q;
    const size_t wb = TUNA_SIZES_BYTES(Q);
    unsigned char *win = m->wire + (size_t)nd * wb;
    int rc = MPI_SUCCESS;
    for (int d = 1; d <= nd && rc == MPI_SUCCESS; d++)
        rc = tuna_sizes_decode(win + (size_t)(d - 1) * wb, wb, (size_t)Q,
                               in + (size_t)(d - 1) * Q, "tuna");
    return rc != MPI_SUCCESS ? rc : inter_place(s, in);
}

/* A uniform all-to-all: every in block has the known size, no metadata to wait for. */
static int inter_known_place(hier_state *s)
{
    const int Q = s->h.Q, nd = s->h.N - 1;
    uint64_t *in = s->m.meta + (size_t)nd * Q;
    for (size_t i = 0; i < (size_t)nd * Q; i++)
        in[i] = s->e.known_bytes;
    return inter_place(s, in);
}

/* The call's end: the index arrays go now, the view unpacks. */
static int hier_finish(tuna_a2av_op *o, hier_state *s, int rc)
{
    hier_mem_free(&s->m);
    rc = tuna_bytes_view_close(o->a, &s->v, rc != MPI_SUCCESS ? rc : s->rc_trunc);
    tuna_timer_stop(&s->tm, TUNA_PHASE_REARRANGE);
    return tuna_a2av_step_done(o, rc);
}

/* The inter-node exchange's steps, then the end. */
static int hier_inter(tuna_a2av_op *o, hier_state *s, int wait_rc)
{
    tuna_hier *h = &s->h;
    /* After a batch (h->pos > 0) its outcome: a failed one ends the exchange (complete: its
     * requests all finished). */
    if (h->pos > 0)
        h->rc = o->op.post_rc != MPI_SUCCESS ? o->op.post_rc
                : wait_rc == MPI_SUCCESS
                    ? MPI_SUCCESS
                    : tuna_error_set(wait_rc, "%s: inter-node exchange failed", s->name);
    if (h->rc == MPI_SUCCESS && s->inter(o, h) == TUNA_STEP_WAIT)
        return TUNA_STEP_WAIT;
    tuna_stats_rounds(s->h.rounds);
    tuna_timer_stop(&s->tm, TUNA_PHASE_INTER);
    return hier_finish(o, s, s->h.rc);
}

/* The in blocks are placed (rc: how that went): the inter-node data exchange. */
static int hier_inter_begin(tuna_a2av_op *o, hier_state *s, int rc)
{
    tuna_stats_temp(o->a->scr->kept_len[TUNA_KEEP_HIER_STAGE] + s->m.discard_len);
    if (rc == MPI_ERR_TRUNCATE) {
        s->rc_trunc = rc;
        rc = MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS) {
        o->i = HIER_INTER;
        s->h.block = (int)tuna_a2av_param(o->a, "block");
        return hier_inter(o, s, MPI_SUCCESS);
    }
    tuna_stats_rounds(0);
    tuna_timer_stop(&s->tm, TUNA_PHASE_INTER);
    return hier_finish(o, s, rc);
}

/* The inter-node metadata completed. */
static int hier_meta_done(tuna_a2av_op *o, hier_state *s, int wait_rc)
{
    int rc = o->op.post_rc != MPI_SUCCESS ? o->op.post_rc : wait_rc;
    rc = rc != MPI_SUCCESS
             ? tuna_error_set(rc, "%s: inter-node metadata exchange failed", s->name)
             : inter_meta_place(s);
    return hier_inter_begin(o, s, rc);
}

/* The intra-node rounds are over: the inter-node phase, with the same local rank g on every
 * other node. */
static int hier_rounds_done(tuna_a2av_op *o, hier_state *s)
{
    const tuna_a2av_args *a = o->a;
    tuna_hier *h = &s->h;
    hier_mem *m = &s->m;
    const int Q = h->Q, N = h->N, node = h->node, g = h->local;
    const int *v2r = a->ctx->vrank_to_rank;
    tuna_stats_temp(s->st.temp_bytes); /* the landing area included */
    int rc = s->st.rc;
    const char *land = a->scr->kept[TUNA_KEEP_HIER_STAGE];
    if (rc == MPI_ERR_TRUNCATE) { /* finish the exchange, report at the end */
        s->rc_trunc = rc;
        rc = MPI_SUCCESS;
    }
    for (int d = 1; d < N; d++) {
        int k = (node + d) % N;
        h->to_rank[d - 1] = v2r[k * Q + g];
        h->from_rank[d - 1] = v2r[((node - d + N) % N) * Q + g];
        for (int l = 0; l < Q; l++) {
            size_t idx = (size_t)(d - 1) * Q + l, sub = (size_t)l * N + k;
            /* Own blocks go from the send buffer; the others landed above. */
            h->out_bytes[idx] = l == g ? m->sb[sub] : m->got[sub];
            h->out_ptr[idx] = l == g              ? (char *)m->sp[sub]
                              : h->out_bytes[idx] ? (char *)land + m->off[sub]
                                                  : NULL;
        }
    }
    if (rc == MPI_SUCCESS && N > 1 && s->e.sizes_known)
        return hier_inter_begin(o, s, inter_known_place(s));
    if (rc == MPI_SUCCESS && N > 1) {
        o->i = HIER_META;
        return inter_meta_post(o, s);
    }
    return hier_finish(o, s, rc);
}

/* The first step: the view, the index arrays, the own block, the rounds' first posts. */
static int hier_begin(tuna_a2av_op *o, const char *name, tuna_hier_inter_fn *inter)
{
    const tuna_a2av_args *a = o->a;
    tuna_ctx *c = a->ctx;
    const int P = a->size, me = a->rank;
    const long radix = tuna_a2av_param(a, "radix");
    const int Q = c->ranks_per_node, N = c->nnodes;
    const int *v2r = c->vrank_to_rank;
    const int vme = c->rank_to_vrank[me], node = vme / Q, g = vme % Q;
    hier_state *s = tuna_calloc(1, sizeof *s + sizeof(char *) * (size_t)P);
    if (!s)
        return tuna_a2av_step_done(
            o, tuna_error_set(MPI_ERR_NO_MEM, "%s: out of memory for the index arrays", name));
    s->name = name;
    s->inter = inter;
    int rc = tuna_a2av_state_attach(o, s, hier_state_free, &s->tm, &s->v);
    if (rc != MPI_SUCCESS)
        return tuna_a2av_step_done(o, rc);
    tuna_bytes_view *v = &s->v;

    hier_mem *m = &s->m;
    size_t nio = (size_t)(N - 1) * (size_t)Q;
    m->sp = (const char **)(s + 1);
    m->rp = tuna_malloc(sizeof(char *) * (size_t)P);
    m->sb = tuna_malloc(sizeof(size_t) * 4 * (size_t)P);
    m->members = tuna_malloc(sizeof(int) * ((size_t)Q + 2 * (size_t)N));
    m->ptrs = tuna_malloc(sizeof(char *) * (2 * nio + 1));
    m->bytes = tuna_malloc(sizeof(size_t) * (2 * nio + 1));
    m->meta = tuna_malloc(sizeof(uint64_t) * (2 * nio + 1));
    m->wire = tuna_malloc(2 * (size_t)(N - 1) * TUNA_SIZES_BYTES(Q) + 1);
    m->req = tuna_malloc(sizeof(MPI_Request) * (2 * (size_t)N + 1));
    if (!m->rp || !m->sb || !m->members || !m->ptrs || !m->bytes || !m->meta || !m->wire ||
        !m->req)
        return hier_finish(
            o, s, tuna_error_set(MPI_ERR_NO_MEM, "%s: out of memory for the index arrays", name));
    m->cap = m->sb + P;
    m->got = m->sb + 2 * (size_t)P;
    m->off = m->sb + 3 * (size_t)P;
    m->peers = m->members + Q;

    /* Intra-node blocks: sub-block (j, k) goes from here to local rank j of node k. */
    for (int j = 0; j < Q; j++) {
        m->members[j] = v2r[node * Q + j];
        for (int k = 0; k < N; k++) {
            size_t idx = (size_t)j * N + k;
            int dst = v2r[k * Q + j], src = v2r[node * Q + j];
            m->sb[idx] = v->sbytes[dst];
            m->sp[idx] = m->sb[idx] ? v->sbase + v->soff[dst] : NULL;
            if (j == g) { /* the own block does not travel in this phase */
                m->rp[idx] = NULL;
                m->cap[idx] = 0;
            } else if (k == node) { /* for this rank: the receive buffer */
                m->cap[idx] = v->rbytes[src];
                m->rp[idx] = m->cap[idx] ? v->rbase + v->roff[src] : NULL;
            } else { /* for local rank g of node k: landing area, forwarded later */
                m->cap[idx] = TUNA_RECV_LAND;
                m->rp[idx] = NULL;
            }
        }
    }
    s->e = (tuna_rounds){.comm = c->comm,
                         .tp = a->tp,
                         .scr = a->scr,
                         .n = Q,
                         .me = g,
                         .members = m->members,
                         .nsub = N,
                         .radix = (int)(radix < Q ? radix : Q),
                         .batch = Q, /* all rounds of a digit in flight (clamped to r-1) */
                         .tag_meta = TUNA_TAG_HIER_META + a->tag_shift,
                         .tag_data = TUNA_TAG_HIER_DATA + a->tag_shift,
                         .send_ptr = m->sp,
                         .send_bytes = m->sb,
                         .recv_ptr = m->rp,
                         .recv_cap = m->cap,
                         .recv_got = m->got,
                         .land_keep = TUNA_KEEP_HIER_STAGE,
                         .land_off = m->off,
                         /* A uniform all-to-all: every sub-block's size is known. */
                         .sizes_known = a->uniform,
                         .known_bytes = a->uniform ? (size_t)tuna_scount(a, 0) * a->ssize : 0};
    s->h = (tuna_hier){.a = a, .Q = Q, .N = N, .node = node, .local = g};
    s->h.to_rank = m->peers;
    s->h.from_rank = m->peers + N;
    s->h.out_ptr = m->ptrs;
    s->h.in_ptr = m->ptrs + nio;
    s->h.out_bytes = m->bytes;
    s->h.in_bytes = m->bytes + nio;
    tuna_timer_stop(&s->tm, TUNA_PHASE_PREPARE);
    /* The own block: sbytes[me] <= rbytes[me] was checked by the front end (front.c). */
    if (v->sbytes[me])
        tuna_tp_copy(a->tp, v->rbase + v->roff[me], v->sbase + v->soff[me], v->sbytes[me]);
    tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
    MPI_Request *req;
    int n;
    o->i = HIER_ROUNDS;
    if (tuna_rounds_start(&s->st, &s->e, &s->tm, &req, &n) == TUNA_STEP_WAIT)
        return tuna_a2av_step_wait(o, req, n, MPI_SUCCESS);
    return hier_rounds_done(o, s);
}

int tuna_hier_step(tuna_a2av_op *o, int wait_rc, const char *name, tuna_hier_inter_fn *inter)
{
    const tuna_a2av_args *a = o->a;
    if (a->ctx->ranks_per_node == 0) { /* every step of the call: flat TuNA's */
        if (o->i == 0) {
            if (a->rank == 0)
                tuna_log(1,
                         "%s: the %d nodes do not all have the same number of ranks (P = %d); "
                         "falling back to flat tuna:radix=%ld",
                         name, a->ctx->nnodes, a->size, tuna_a2av_param(a, "radix"));
            /* Statistics name what ran, and why (in the registry of the call: a uniform
             * all-to-all is tuna_alltoall's). */
            tuna_stats_current.algorithm =
                tuna_algorithm_find(a->uniform ? TUNA_ALLTOALL : TUNA_ALLTOALLV, "tuna");
            tuna_stats_current.fallback = "the nodes hold different numbers of ranks";
        }
        return tuna_a2av_tuna_step(o, wait_rc);
    }
    hier_state *s = o->state;
    MPI_Request *req;
    int n;
    switch (o->i) {
    case HIER_START:
        return hier_begin(o, name, inter);
    case HIER_ROUNDS:
        if (tuna_rounds_step(&s->st, wait_rc, &req, &n) == TUNA_STEP_WAIT)
            return tuna_a2av_step_wait(o, req, n, MPI_SUCCESS);
        return hier_rounds_done(o, s);
    case HIER_META:
        return hier_meta_done(o, s, wait_rc);
    default:
        return hier_inter(o, s, wait_rc);
    }
}
