/*
 * twophase-bruck: radix-2 Bruck for non-uniform blocks, without padding
 * (Fan et al., "Optimizing the Bruck algorithm for non-uniform all-to-all
 * communication", HPDC 2022). Each of the ceil(log2 P) rounds has two phases:
 *   1. metadata: the byte sizes of the slots about to be sent (those whose
 *      index has bit k set) go to me+2^k, the matching sizes come from me-2^k;
 *   2. data: exactly those bytes, packed into one message, are exchanged.
 * There are no explicit rotations: slot i starts as the block for me+i, read
 * from the user's send buffer in place, and a slot received in the round of
 * its highest set bit is the block from me-i, copied straight to the receive
 * buffer. Only slots with two or more set bits pass through this rank; each
 * of them owns one region of a temporary buffer, reused from round to round:
 * a slot's region is read when the slot is packed, before the receive that
 * refills it is posted.
 *
 * No global maximum block size is needed: the regions have one stride, the
 * largest block this rank has held in one so far, raised when a round's
 * metadata announces a larger one. A round's data exchange completes before
 * the next round's sizes arrive, and it sends from the packed send buffer, so
 * no send reads the regions when they grow (realloc, then the live regions
 * move to the new stride).
 *
 * Steps: two per round, the sizes (an Irecv and an Isend, in the metadata format
 * of TuNA: sizes_wire.h) and the data.
 *
 * Temporary memory: (P - K - 1)*m for the passing-through blocks (K =
 * ceil(log2 P); slots 1, 2, 4, ... go straight to the receive buffer; m = the
 * largest block this rank holds between rounds), plus one send and one
 * receive buffer as large as the largest round's real data of this rank,
 * plus 16*floor(P/2) + 2 bytes of sizes. With blocks of at most B bytes that
 * is at most (P - K - 1 + 2*floor(P/2))*B + 16*floor(P/2) + 2.
 */
#include "alltoallv.h"
#include "sizes_wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Grow-only buffer: the round buffers keep their contents only within a round. */
static int reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return MPI_SUCCESS;
    free(*buf);
    *buf = tuna_malloc(need);
    *cap = *buf ? need : 0;
    return *buf ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* The operation between its steps (o->state). */
typedef struct twophase_op {
    tuna_bytes_view v;
    tuna_timer tm;
    const char **ptr;         /* where slot i's data is */
    size_t *len;              /* and how many bytes */
    long long *tslot;         /* slot i's region in tmp, or -1 */
    unsigned char *in_tmp;    /* slot i's data is in its region */
    uint64_t *meta;           /* the round's sizes: out (encoded in place), then in */
    unsigned char *wire_in;   /* the sizes in as they arrive (in meta's allocation) */
    char *tmp, *sbuf, *rbuf;  /* regions; a round's data out and in */
    size_t ntemp, stride, scap, rcap, out;
    int k, K, n;              /* the round, the rounds, its slots */
    int err;                  /* a receive-side error: reported after all rounds, so no peer
                                 hangs */
    MPI_Status st[2];         /* the size exchange's: the receive's length bounds the decode */
    int idx[];                /* the slots of round k (at most P/2) */
} twophase_op;

static void state_free(tuna_a2av_op *o)
{
    twophase_op *s = o->state;
    TUNA_FREE_ALL(s->ptr, s->len, s->tslot, s->meta, s->in_tmp, s->tmp, s->sbuf, s->rbuf);
    tuna_a2av_state_release(o, &s->v);
}

/* The last step: the view closed (unpacked if rc is MPI_SUCCESS), the state freed. */
static int close_op(tuna_a2av_op *o, int rc)
{
    twophase_op *s = o->state;
    return tuna_a2av_view_done(o, &s->v, rc);
}

/* After the rounds, or a failure that ends them (the receive-side error comes after). */
static int finish(tuna_a2av_op *o, int rc)
{
    twophase_op *s = o->state;
    if (rc == MPI_SUCCESS)
        rc = s->err;
    tuna_stats_temp(s->ntemp * s->stride + s->scap + s->rcap +
                    2 * TUNA_SIZES_BYTES(o->a->size / 2));
    tuna_stats_rounds(s->K);
    return close_op(o, rc);
}

/* Round k's first phase: its slots' sizes to me+2^k, theirs from me-2^k (once
 * MPI_Sendrecv's pair). */
static int post_sizes(tuna_a2av_op *o)
{
    const tuna_a2av_args *a = o->a;
    twophase_op *s = o->state;
    int P = a->size, me = a->rank, k = s->k;
    long long d = 1LL << k;
    int n = s->n = tuna_bruck_round_slots(P, k, s->idx);
    s->out = 0;
    for (int j = 0; j < n; j++) {
        s->meta[j] = (uint64_t)s->len[s->idx[j]];
        s->out += s->len[s->idx[j]];
    }
    /* Encoded in place (meta's first TUNA_SIZES_BYTES(P/2) bytes have the room). */
    const size_t wout = tuna_sizes_encode(s->meta, (size_t)n, (unsigned char *)s->meta);
    int tag = TUNA_TAG_TWOPHASE_META + a->tag_shift, posted = 0;
    int prc = tuna_posted(tuna_tp_irecv(a->tp, s->wire_in, TUNA_SIZES_BYTES(n),
                                        tuna_bruck_rank(me, -d, P), tag, a->ctx->comm, &o->pair[0]),
                          &posted);
    if (prc == MPI_SUCCESS)
        prc = tuna_posted(tuna_tp_isend(a->tp, s->meta, wout, tuna_bruck_rank(me, d, P), tag,
                                        a->ctx->comm, &o->pair[1]),
                          &posted);
    if (prc != MPI_SUCCESS)
        prc = tuna_error_set(prc, "twophase-bruck: size exchange of round %d failed", k);
    o->i = 1;
    tuna_a2av_step_wait(o, o->pair, posted, prc);
    o->op.status = s->st;
    return TUNA_STEP_WAIT;
}

/* Round k's second phase, once its sizes are in: the data, exactly those bytes. */
static int post_data(tuna_a2av_op *o, int wait_rc)
{
    const tuna_a2av_args *a = o->a;
    twophase_op *s = o->state;
    int P = a->size, me = a->rank, k = s->k, n = s->n, got = 0, rc;
    long long d = 1LL << k;
    if ((rc = o->op.post_rc) != MPI_SUCCESS)
        return finish(o, rc);
    if (wait_rc != MPI_SUCCESS || (rc = PMPI_Get_count(&s->st[0], MPI_BYTE, &got)) != MPI_SUCCESS)
        return finish(o, tuna_error_set(wait_rc != MPI_SUCCESS ? wait_rc : rc,
                                        "twophase-bruck: size exchange of round %d failed", k));
    /* The sizes out were sent (the exchange is complete): the sizes in take their place. */
    uint64_t *meta = s->meta;
    if ((rc = tuna_sizes_decode(s->wire_in, got > 0 ? (size_t)got : 0, (size_t)n, meta,
                                "twophase-bruck")) != MPI_SUCCESS)
        return finish(o, rc);
    size_t in = 0;
    for (int j = 0; j < n; j++)
        in += (size_t)meta[j];
    tuna_timer_stop(&s->tm, TUNA_PHASE_METADATA);

    if ((rc = reserve(&s->sbuf, &s->scap, s->out)) != MPI_SUCCESS ||
        (rc = reserve(&s->rbuf, &s->rcap, in)) != MPI_SUCCESS)
        return finish(o, rc);
    size_t off = 0, need = 0;
    for (int j = 0; j < n; j++) {
        int i = s->idx[j];
        if (s->len[i])
            tuna_tp_copy(a->tp, s->sbuf + off, s->ptr[i], s->len[i]);
        off += s->len[i];
        s->in_tmp[i] = 0; /* packed: its region is free until the slot comes back */
        if ((i >> (k + 1)) != 0 && (size_t)meta[j] > need)
            need = (size_t)meta[j]; /* stays here after this round */
    }
    /* Regions too small for a block announced this round: raise the stride now. */
    if (need > s->stride) {
        if (need > SIZE_MAX / s->ntemp)
            return finish(o, tuna_error_set(MPI_ERR_NO_MEM, "twophase-bruck: %zu regions of "
                                            "%zu bytes overflow", s->ntemp, need));
        char *grown = tuna_realloc(s->tmp, s->ntemp * need);
        if (!grown)
            return finish(o, tuna_error_set(MPI_ERR_NO_MEM, "twophase-bruck: out of memory "
                                            "for %zu regions of %zu bytes", s->ntemp, need));
        s->tmp = grown;
        /* Highest region first, so no region is overwritten before it moved. */
        for (int i = P - 1; i >= 1; i--)
            if (s->in_tmp[i]) {
                if (s->len[i])
                    tuna_tp_move(a->tp, s->tmp + (size_t)s->tslot[i] * need,
                                 s->tmp + (size_t)s->tslot[i] * s->stride, s->len[i]);
                s->ptr[i] = s->tmp + (size_t)s->tslot[i] * need;
            }
        s->stride = need;
    }
    tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
    /* Receive from me-2^k while sending to me+2^k (once MPI_Sendrecv's pair). */
    int tag = TUNA_TAG_TWOPHASE_DATA + a->tag_shift, prc = MPI_SUCCESS;
    o->pair[0] = o->pair[1] = MPI_REQUEST_NULL;
    if (in && (prc = tuna_tp_irecv(a->tp, s->rbuf, in, tuna_bruck_rank(me, -d, P), tag,
                                   a->ctx->comm, &o->pair[0])) != MPI_SUCCESS)
        o->pair[0] = MPI_REQUEST_NULL;
    if (prc == MPI_SUCCESS && s->out &&
        (prc = tuna_tp_isend(a->tp, s->sbuf, s->out, tuna_bruck_rank(me, d, P), tag, a->ctx->comm,
                             &o->pair[1])) != MPI_SUCCESS)
        o->pair[1] = MPI_REQUEST_NULL;
    o->i = 2;
    return tuna_a2av_step_wait(o, o->pair, 2, prc);
}

/* Round k's data is in: the blocks delivered now to the receive buffer, the others to
 * their regions; then the next round. */
static int take_data(tuna_a2av_op *o, int wait_rc)
{
    const tuna_a2av_args *a = o->a;
    twophase_op *s = o->state;
    int P = a->size, me = a->rank, k = s->k;
    int rc = tuna_a2av_step_outcome(o, wait_rc, "Bruck: MPI_Waitall of a round failed");
    tuna_timer_stop(&s->tm, TUNA_PHASE_DATA);
    if (rc != MPI_SUCCESS)
        return finish(o, rc);
    const tuna_bytes_view *v = &s->v;
    size_t off = 0;
    for (int j = 0; j < s->n; j++) {
        int i = s->idx[j];
        size_t got = (size_t)s->meta[j], keep = got;
        if ((i >> (k + 1)) == 0) {
            /* Highest bit of i is k: this is the block from me-i, delivered now. */
            int from = tuna_bruck_rank(me, -(long long)i, P);
            if (got > v->rbytes[from]) {
                keep = v->rbytes[from];
                if (s->err == MPI_SUCCESS)
                    s->err = tuna_error_set(MPI_ERR_TRUNCATE,
                                            "twophase-bruck: rank %d receives %zu bytes from "
                                            "rank %d but recvcounts[%d] holds %zu",
                                            me, got, from, from, v->rbytes[from]);
            }
            if (keep)
                tuna_tp_copy(a->tp, v->rbase + v->roff[from], s->rbuf + off, keep);
        } else {
            char *region = keep ? s->tmp + (size_t)s->tslot[i] * s->stride : NULL;
            if (keep)
                tuna_tp_copy(a->tp, region, s->rbuf + off, keep);
            s->ptr[i] = region;
            s->len[i] = keep;
            s->in_tmp[i] = 1;
        }
        off += got;
    }
    tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
    if (++s->k == s->K)
        return finish(o, MPI_SUCCESS);
    return post_sizes(o);
}

/* The first step: the own block, the slots, round 0's sizes. */
static int begin(tuna_a2av_op *o)
{
    const tuna_a2av_args *a = o->a;
    int P = a->size, me = a->rank, half = P / 2, rc;
    tuna_timer tm;
    tuna_timer_start(&tm);
    if (P == 1) { /* only the own block; every rank sees the same P */
        tuna_bytes_view v;
        if ((rc = tuna_bytes_view_open(a, &v)) != MPI_SUCCESS)
            return tuna_a2av_step_done(o, rc);
        size_t own = v.sbytes[0] < v.rbytes[0] ? v.sbytes[0] : v.rbytes[0];
        if (own)
            tuna_tp_copy(a->tp, v.rbase + v.roff[0], v.sbase + v.soff[0], own);
        return tuna_a2av_step_done(o, tuna_bytes_view_close(a, &v, MPI_SUCCESS));
    }
    /* The round's slot indices live in the state: one allocation for both. */
    twophase_op *s = tuna_calloc(1, sizeof *s + sizeof(int) * (size_t)half);
    if (!s)
        return tuna_a2av_step_done(o, MPI_ERR_NO_MEM);
    s->tm = tm;
    if ((rc = tuna_bytes_view_open(a, &s->v)) != MPI_SUCCESS) {
        free(s);
        return tuna_a2av_step_done(o, rc);
    }
    o->state = s;
    o->state_free = state_free;
    const tuna_bytes_view *v = &s->v;
    /* Own block: never leaves this rank (the front end checked it fits). */
    size_t own = v->sbytes[me] < v->rbytes[me] ? v->sbytes[me] : v->rbytes[me];
    if (own)
        tuna_tp_copy(a->tp, v->rbase + v->roff[me], v->sbase + v->soff[me], own);
    /* Passing-through slots: slot i's region at tmp + tslot[i]*stride, grown on demand. */
    s->K = tuna_bruck_rounds(P);
    s->ntemp = (size_t)(P - s->K - 1);
    s->ptr = tuna_malloc(sizeof(char *) * (size_t)P);
    s->len = tuna_malloc(sizeof(size_t) * (size_t)P);
    s->tslot = tuna_malloc(sizeof(long long) * (size_t)P);
    /* Sizes out (as words, then encoded over them), then the sizes in as they arrive. */
    s->meta = tuna_malloc(2 * TUNA_SIZES_BYTES(half));
    s->wire_in = s->meta ? (unsigned char *)s->meta + TUNA_SIZES_BYTES(half) : NULL;
    s->in_tmp = tuna_malloc((size_t)P);
    if (!s->ptr || !s->len || !s->tslot || !s->meta || !s->in_tmp)
        return close_op(o, MPI_ERR_NO_MEM);
    memset(s->in_tmp, 0, (size_t)P);
    long long t = 0;
    for (int i = 1; i < P; i++) {
        int j = tuna_bruck_rank(me, i, P);
        s->len[i] = v->sbytes[j];
        s->ptr[i] = s->len[i] ? v->sbase + v->soff[j] : NULL;
        s->tslot[i] = (i & (i - 1)) ? t++ : -1; /* powers of two are delivered directly */
    }
    tuna_timer_stop(&s->tm, TUNA_PHASE_PREPARE);
    return post_sizes(o);
}

int tuna_a2av_twophase_bruck_step(tuna_a2av_op *o, int wait_rc)
{
    switch (o->i) {
    case 0:
        return begin(o);
    case 1: /* round k's sizes are in */
        return post_data(o, wait_rc);
    default: /* its data */
        return take_data(o, wait_rc);
    }
}
