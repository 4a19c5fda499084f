/*
 * tuna: the neighborhood exchange in TuNA's radix-r logarithmic rounds (src/alltoallv/
 * tuna_rounds.c, the engine of the non-uniform all-to-all) over the whole communicator. A
 * rank's edges to one peer are packed into one block, in the topology's order (so repeated
 * edges keep theirs); the blocks travel in at most ceil(log_r P)(r-1) rounds, forwarded by
 * intermediate ranks, and are unpacked on arrival. Where a rank has many small edges (a sparse
 * solver's halo on many ranks) it sends a few aggregated messages instead of one per edge, at
 * the price of forwarding bytes: a row for small edges.
 *
 * Each round of a blocking or nonblocking call sends the sizes of the blocks it moves, then
 * their data. A persistent plan runs the rounds once at init and records the sizes every round
 * received (the pattern cannot change between starts); each start replays them: no metadata
 * messages, and a round with nothing to move posts nothing. Init reads no user buffer and
 * writes none (its exchange moves zeros between the row's own buffers).
 *
 * Parameter: radix r in [2, P] (default 4; r = P is one round, a linear exchange of the
 * packed blocks). Temporary memory: the packed blocks (every edge's bytes, both ways) and
 * TuNA's slots for the blocks a rank forwards.
 */
#include "neighbor.h"
#include "../alltoallv/tuna_rounds.h"

#include <stdlib.h>
#include <string.h>

struct tuna_nbr_rounds {
    char *spack, *rpack;        /* the blocks, packed by peer in ascending rank order */
    size_t *soff, *roff;        /* [edge]: its bytes' offset in spack / rpack */
    const char **sp;            /* [peer]: its block, or NULL when empty */
    char **rp;
    size_t *sbytes, *rbytes;    /* [peer]: the block's bytes */
    tuna_scratch scr;           /* TuNA's slots, kept across starts */
    tuna_timer tm;
    tuna_rounds e;
    tuna_rounds_state st;
    tuna_sizes_log log;         /* a plan's recorded sizes */
    bool self_over;             /* the own block is larger than its receive: truncated */
};

void tuna_nbr_rounds_free(struct tuna_nbr_rounds *t)
{
    if (!t)
        return;
    tuna_rounds_state_free(&t->st);
    tuna_scratch_free(&t->scr);
    void *p[] = {t->spack, t->rpack, t->soff, t->roff, t->sp, t->rp, t->sbytes, t->rbytes,
                 t->log.v};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        free(p[i]);
    free(t);
}

static bool edge_live(const tuna_nbr_side *s, int i)
{
    return s->peer[i] != MPI_PROC_NULL && s->count[i] > 0;
}

/* One side's blocks: bytes per peer, each edge's offset in the packed buffer. */
static int side_layout(const tuna_nbr_side *s, size_t tsize, int P, size_t *bytes, size_t *off,
                       char **pack)
{
    for (int i = 0; i < s->n; i++)
        if (edge_live(s, i))
            bytes[s->peer[i]] += tuna_nbr_bytes(s, tsize, i);
    size_t *fill = malloc(((size_t)P + 1) * sizeof *fill);
    if (!fill)
        return MPI_ERR_NO_MEM;
    size_t total = 0;
    for (int p = 0; p < P; p++) {
        fill[p] = total;
        total += bytes[p];
    }
    for (int i = 0; i < s->n; i++)
        if (edge_live(s, i)) {
            off[i] = fill[s->peer[i]];
            fill[s->peer[i]] += tuna_nbr_bytes(s, tsize, i);
        }
    free(fill);
    /* calloc: a plan's recording exchange sends these zeros, never the caller's data */
    *pack = calloc(total + 1, 1);
    return *pack ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int layout_make(tuna_nbr_op *o)
{
    const tuna_nbr_call *c = o->c;
    const int P = c->ctx->size;
    struct tuna_nbr_rounds *t = o->rounds = calloc(1, sizeof *t);
    if (!t)
        return MPI_ERR_NO_MEM;
    t->soff = calloc((size_t)c->out.n + 1, sizeof *t->soff);
    t->roff = calloc((size_t)c->in.n + 1, sizeof *t->roff);
    t->sp = calloc((size_t)P, sizeof *t->sp);
    t->rp = calloc((size_t)P, sizeof *t->rp);
    t->sbytes = calloc((size_t)P, sizeof *t->sbytes);
    t->rbytes = calloc((size_t)P, sizeof *t->rbytes);
    if (!t->soff || !t->roff || !t->sp || !t->rp || !t->sbytes || !t->rbytes)
        return MPI_ERR_NO_MEM;
    int rc = side_layout(&c->out, c->ssize, P, t->sbytes, t->soff, &t->spack);
    if (rc == MPI_SUCCESS)
        rc = side_layout(&c->in, c->rsize, P, t->rbytes, t->roff, &t->rpack);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t so = 0, ro = 0;
    for (int p = 0; p < P; p++) {
        t->sp[p] = t->sbytes[p] ? t->spack + so : NULL;
        t->rp[p] = t->rbytes[p] ? t->rpack + ro : NULL;
        so += t->sbytes[p];
        ro += t->rbytes[p];
    }
    return MPI_SUCCESS;
}

/* Every live edge of one side between the call's buffer and the packed one: the send side
 * packed (send), else the receive side unpacked. */
static int move_edges(tuna_nbr_op *o, bool send)
{
    const tuna_nbr_call *c = o->c;
    struct tuna_nbr_rounds *t = o->rounds;
    const tuna_nbr_side *s = send ? &c->out : &c->in;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < s->n && rc == MPI_SUCCESS; i++)
        if (edge_live(s, i))
            rc = send ? tuna_nbr_pack_edge(c, i, t->spack + t->soff[i])
                      : tuna_nbr_unpack_edge(c, i, t->rpack + t->roff[i]);
    return rc;
}

/* The rounds posted: `replay` with the plan's recorded sizes (no metadata), else with their
 * metadata (recorded when this is a plan's init). The own block is copied here. */
static int rounds_begin(tuna_nbr_op *o, bool replay)
{
    const tuna_nbr_call *c = o->c;
    struct tuna_nbr_rounds *t = o->rounds;
    const int me = c->ctx->rank;
    /* An own block larger than its receive is this rank's error (MPI_ERR_TRUNCATE), reported
     * when the rounds are over: the peers' rounds need this rank's part of them. */
    t->self_over = t->sbytes[me] > t->rbytes[me];
    const size_t own = t->self_over ? t->rbytes[me] : t->sbytes[me];
    if (own)
        tuna_tp_copy(c->tp, t->rp[me], t->sp[me], own);
    tuna_rounds_state_free(&t->st);
    memset(&t->st, 0, sizeof t->st);
    t->e = (tuna_rounds){.comm = c->comm,
                         .tp = c->tp,
                         .scr = &t->scr,
                         .n = c->ctx->size,
                         .me = me,
                         .nsub = 1,
                         .radix = (int)tuna_param_get(o->info, o->param, "radix"),
                         .batch = c->ctx->size,
                         .tag_meta = TUNA_TAG_NBR_TUNA_META + c->tag_shift,
                         .tag_data = TUNA_TAG_NBR_TUNA_DATA + c->tag_shift,
                         .send_ptr = t->sp,
                         .send_bytes = t->sbytes,
                         .recv_ptr = t->rp,
                         .recv_cap = t->rbytes,
                         .land_keep = -1,
                         .sizes_known = replay,
                         .sizes_log = replay || o->pattern_only ? &t->log : NULL,
                         .sizes_record = o->pattern_only};
    if (o->pattern_only)
        t->log.n = 0;
    tuna_timer_start(&t->tm);
    MPI_Request *req;
    int n;
    o->stage = 1;
    if (tuna_rounds_start(&t->st, &t->e, &t->tm, &req, &n) == TUNA_STEP_WAIT)
        return tuna_op_step_wait(&o->op, req, n, MPI_SUCCESS);
    return -1; /* done at once: the caller finishes */
}

/* The rounds are over: a plan's init keeps the recorded sizes; a call unpacks (the other
 * edges too when the own block was truncated, as MPI delivers them). */
static int rounds_finish(tuna_nbr_op *o)
{
    struct tuna_nbr_rounds *t = o->rounds;
    int rc = t->st.rc;
    tuna_rounds_state_free(&t->st);
    if (rc == MPI_SUCCESS && !o->pattern_only)
        rc = move_edges(o, false);
    if (rc == MPI_SUCCESS && t->self_over) {
        const int me = o->c->ctx->rank;
        rc = tuna_error_set(MPI_ERR_TRUNCATE, "neighbor tuna: rank %d sends itself %zu bytes "
                            "and receives %zu", me, t->sbytes[me], t->rbytes[me]);
    }
    if (rc == MPI_SUCCESS && o->pattern_only)
        o->data_stage = 2;
    return tuna_op_step_done(&o->op, rc);
}

/*
 * Stages: 0 the layout (first step of a call or of a plan's init), then the rounds with
 * metadata; 1 the rounds in flight; 2 a plan's start: pack, the rounds replayed.
 */
int tuna_nbr_tuna_step(tuna_op *op, int wait_rc)
{
    tuna_nbr_op *o = (tuna_nbr_op *)op;
    int rc;
    switch (o->stage) {
    case 0:
        if (!o->rounds && (rc = layout_make(o)) != MPI_SUCCESS)
            return tuna_op_step_done(op, tuna_error_set(rc, "neighbor tuna: no memory for the "
                                                            "packed blocks"));
        if (!o->pattern_only && (rc = move_edges(o, true)) != MPI_SUCCESS)
            return tuna_op_step_done(op, rc);
        rc = rounds_begin(o, false);
        break;
    case 2:
        if ((rc = move_edges(o, true)) != MPI_SUCCESS)
            return tuna_op_step_done(op, rc);
        rc = rounds_begin(o, true);
        break;
    default: { /* 1 */
        MPI_Request *req;
        int n;
        if (tuna_rounds_step(&o->rounds->st, wait_rc, &req, &n) == TUNA_STEP_WAIT)
            return tuna_op_step_wait(op, req, n, MPI_SUCCESS);
        rc = -1;
    }
    }
    return rc == -1 ? rounds_finish(o) : rc;
}
