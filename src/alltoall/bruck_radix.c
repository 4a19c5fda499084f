/*
 * bruck-radix (uniform all-to-all only): the classic Bruck all-to-all (Bruck, Ho, Kipnis,
 * Upfal, Weathersby, "Efficient algorithms for all-to-all communications in multiport
 * message-passing systems", IEEE TPDS 8(11), 1997) generalised to radix r in [2, P], as
 * MPICH's k_brucks: every block is B bytes on every rank, so the slots are fixed-size and
 * no sizes travel.
 *   1. local rotation: slot i <- the block for rank me+i (P slots of B bytes);
 *   2. for each digit position x (place w = r^x < P) and each digit value d in 1..r-1 with
 *      d*w < P, one round: the slots whose index has digit x equal to d are packed into one
 *      message (memcpy), sent to me + d*w, and the same slots received from me - d*w are
 *      copied back in place. Slot i keeps its index while its block travels, so after the
 *      rounds the block in slot i has moved i ranks: it is the one from rank me-i;
 *   3. inverse rotation: the block from rank s is slot (me - s) mod P, copied to the
 *      receive buffer.
 * One round per step. Rounds: sum over x of #{d in 1..r-1 : d*r^x < P}, at most
 * (r-1) ceil(log_r P); r = P is a pairwise exchange of single blocks. Temporary memory:
 * P*B (the slots) + 2*n*B (a round's packed blocks out and in, n the largest round's slot
 * count, about P/r). The packing is what TuNA's zero-copy rounds avoid: the row is there to
 * compare them (issue 36). Derived datatypes go through the byte view.
 */
#include "uniform_rows.h"

#include <stdlib.h>
#include <string.h>

typedef struct radix_state {
    tuna_bytes_view v;
    tuna_timer tm;
    size_t B;                /* every block's bytes */
    long long w;             /* place value of the round in flight: r^x */
    int r, d;                /* radix; digit value of the round in flight */
    int n;                   /* slots of the round in flight */
    int rounds;
    char *slots, *out, *in;  /* P slots; a round's packed blocks out and in */
    size_t temp;             /* bytes of the three buffers */
    int idx[];               /* the slots of the round in flight */
} radix_state;

static void radix_state_free(tuna_a2av_op *o)
{
    radix_state *s = o->state;
    TUNA_FREE_ALL(s->slots, s->out, s->in);
    tuna_a2av_state_release(o, &s->v);
}

/* The last step: the view closed (unpacked if rc is MPI_SUCCESS), the state freed. */
static int radix_close(tuna_a2av_op *o, int rc)
{
    radix_state *s = o->state;
    return tuna_a2av_view_done(o, &s->v, rc);
}

/* The next round after (w, d), or the first one when w == 0; false when none is left. */
static bool round_next(int P, int r, long long *w, int *d)
{
    if (*w == 0) {
        *w = 1;
        *d = 1;
    } else if (++*d == r || *d * *w >= P) {
        *w *= r;
        *d = 1;
    }
    return *w < P;
}

/* Post round (w, d): its slots packed into one message, exchanged with me +- d*w. */
static int radix_post(tuna_a2av_op *o, radix_state *s)
{
    const tuna_a2av_args *a = o->a;
    const int P = a->size, me = a->rank;
    const size_t B = s->B;
    s->n = tuna_radix_digit_members(P, s->w, s->r, s->d, s->idx);
    for (int j = 0; j < s->n; j++)
        tuna_tp_copy(o->a->tp, s->out + (size_t)j * B, s->slots + (size_t)s->idx[j] * B, B);
    tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
    const long long dist = s->d * s->w;
    const size_t bytes = (size_t)s->n * B;
    const int tag = TUNA_TAG_BRUCK_RADIX + a->tag_shift;
    int n = 0;
    int rc = tuna_posted(tuna_tp_irecv(o->a->tp, s->in, bytes, tuna_bruck_rank(me, -dist, P), tag,
                                       a->ctx->comm, &o->pair[0]),
                         &n);
    if (rc == MPI_SUCCESS)
        rc = tuna_posted(tuna_tp_isend(o->a->tp, s->out, bytes, tuna_bruck_rank(me, dist, P), tag,
                                       a->ctx->comm, &o->pair[1]),
                         &n);
    s->rounds++;
    return tuna_a2av_step_wait(o, o->pair, n, rc);
}

/* Phase 3 and the end: the block from rank s is slot (me - s) mod P. */
static int radix_finish(tuna_a2av_op *o, radix_state *s)
{
    const tuna_a2av_args *a = o->a;
    const int P = a->size, me = a->rank;
    int rc = MPI_SUCCESS;
    for (int src = 0; src < P; src++) {
        size_t cap = s->v.rbytes[src], n = cap < s->B ? cap : s->B;
        if (cap < s->B) /* MPI's type-signature rule broken: report, never write past */
            rc = tuna_error_set(MPI_ERR_TRUNCATE,
                                "bruck-radix: rank %d receives %zu bytes from rank %d but its "
                                "recvcount allows %zu",
                                me, s->B, src, cap);
        if (n)
            tuna_tp_copy(o->a->tp, s->v.rbase + s->v.roff[src],
                         s->slots + (size_t)tuna_bruck_rank(me, -(long long)src, P) * s->B, n);
    }
    tuna_timer_stop(&s->tm, TUNA_PHASE_REARRANGE);
    tuna_stats_temp(s->temp);
    tuna_stats_rounds(s->rounds);
    return radix_close(o, rc);
}

/* The first step: checks, the view, the buffers, phase 1, the first round. */
static int radix_begin(tuna_a2av_op *o)
{
    const tuna_a2av_args *a = o->a;
    const int P = a->size, me = a->rank;
    if (!a->uniform)
        return tuna_a2av_step_done(
            o, tuna_error_set(MPI_ERR_INTERN, "bruck-radix: runs a uniform all-to-all only "
                                              "(tuna_alltoall), not an alltoallv"));
    const long radix = tuna_a2av_param(a, "radix");
    const int r = radix < 2 ? 2 : radix > P ? (P < 2 ? 2 : P) : (int)radix;
    /* The largest round sizes the index array and the packed buffers. */
    int nmax = 0;
    long long w = 0;
    int d = 0;
    while (round_next(P, r, &w, &d)) {
        int n = tuna_radix_digit_members(P, w, r, d, NULL);
        nmax = n > nmax ? n : nmax;
    }
    radix_state *s = tuna_calloc(1, sizeof *s + sizeof(int) * (size_t)nmax);
    if (!s)
        return tuna_a2av_step_done(
            o, tuna_error_set(MPI_ERR_NO_MEM, "bruck-radix: out of memory for its state"));
    int rc = tuna_a2av_state_attach(o, s, radix_state_free, &s->tm, &s->v);
    if (rc != MPI_SUCCESS)
        return tuna_a2av_step_done(o, rc);
    s->B = (size_t)tuna_scount(a, 0) * a->ssize;
    s->r = r;
    for (int j = 0; j < P; j++)
        if (s->v.sbytes[j] != s->B)
            return radix_close(o, tuna_error_set(MPI_ERR_INTERN,
                                                 "bruck-radix: send block %d has %zu bytes, "
                                                 "not the uniform %zu",
                                                 j, s->v.sbytes[j], s->B));
    size_t slot_bytes = 0, pack_bytes = 0;
    if ((rc = tuna_bruck_padded_size((size_t)P, s->B, &slot_bytes)) != MPI_SUCCESS ||
        (rc = tuna_bruck_padded_size((size_t)nmax, s->B, &pack_bytes)) != MPI_SUCCESS)
        return radix_close(o, rc);
    /* Empty blocks: no slot to fill, nothing to send (every rank knows it: B is uniform). */
    if (slot_bytes == 0)
        return radix_finish(o, s);
    s->slots = tuna_malloc(slot_bytes);
    s->out = s->slots && pack_bytes ? tuna_malloc(pack_bytes) : NULL;
    s->in = s->out ? tuna_malloc(pack_bytes) : NULL;
    if (!s->slots || (pack_bytes && !s->in))
        return radix_close(o, tuna_error_set(MPI_ERR_NO_MEM,
                                             "bruck-radix: out of memory for %zu bytes of slots "
                                             "and 2 x %zu of packed blocks",
                                             slot_bytes, pack_bytes));
    s->temp = slot_bytes + 2 * pack_bytes;
    tuna_timer_stop(&s->tm, TUNA_PHASE_PREPARE);
    for (int i = 0; i < P; i++) { /* phase 1: the rotation */
        int j = tuna_bruck_rank(me, i, P);
        tuna_tp_copy(o->a->tp, s->slots + (size_t)i * s->B, s->v.sbase + s->v.soff[j], s->B);
    }
    tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
    if (!round_next(P, r, &s->w, &s->d)) /* P = 1 */
        return radix_finish(o, s);
    return radix_post(o, s);
}

/* o->i: 0 before the first step, then 1 (the rounds; state at o->state). */
int tuna_a2a_bruck_radix_step(tuna_a2av_op *o, int wait_rc)
{
    if (o->i == 0) {
        o->i = 1;
        return radix_begin(o);
    }
    radix_state *s = o->state;
    int rc = tuna_a2av_step_outcome(o, wait_rc, "bruck-radix: a round's exchange failed");
    tuna_timer_stop(&s->tm, TUNA_PHASE_DATA);
    if (rc != MPI_SUCCESS)
        return radix_close(o, rc);
    for (int j = 0; j < s->n; j++) /* the round's blocks back into their slots */
        tuna_tp_copy(o->a->tp, s->slots + (size_t)s->idx[j] * s->B, s->in + (size_t)j * s->B, s->B);
    tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
    if (!round_next(o->a->size, s->r, &s->w, &s->d))
        return radix_finish(o, s);
    return radix_post(o, s);
}
