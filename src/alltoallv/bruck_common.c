/*
 * Helpers shared by the radix-2 Bruck family (bruck.c, padded_bruck.c,
 * twophase_bruck.c): round geometry, padding blocks to the global maximum
 * block size B and scanning the real bytes back out, the explicit rotations
 * of the classic algorithm, and the memcpy-packed rounds of padded slots as
 * steps with the operation state they keep (bruck_common.h).
 *
 * Slot i of a rank's working set holds the block that travels distance i:
 * before the rounds it is the block for rank me+i, after them the block from
 * rank me-i. Round k sends every slot whose index has bit k set to me+2^k and
 * receives the same slots from me-2^k, so after ceil(log2 P) rounds each block
 * has moved exactly i ranks (the binary digits of i).
 */
#include "bruck_common.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int tuna_bruck_rounds(int P)
{
    int k = 0;
    while ((1LL << k) < (long long)P)
        k++;
    return k;
}

/*
 * Slots i in [1, P) with bit k set, ascending. There are at most P/2 of them:
 * with P = q*2^(k+1) + m, the count is q*2^k + max(0, m - 2^k) <= P/2.
 */
int tuna_bruck_round_slots(int P, int k, int *idx)
{
    int n = 0;
    long long step = 1LL << k;
    for (long long base = step; base < P; base += 2 * step)
        for (long long i = base; i < base + step && i < P; i++)
            idx[n++] = (int)i;
    return n;
}

int tuna_bruck_padded_size(size_t nslots, size_t B, size_t *bytes)
{
    if (B != 0 && nslots > SIZE_MAX / B)
        return tuna_error_set(MPI_ERR_NO_MEM,
                              "Bruck: %zu padded blocks of %zu bytes do not fit in memory",
                              nslots, B);
    *bytes = nslots * B;
    return MPI_SUCCESS;
}

/*
 * Padding: slot i of w (P slots of B bytes) gets the real bytes of the send
 * block for rank (i + shift) mod P, then zeros, so no uninitialised byte is
 * ever sent. shift = 0 keeps the user's order (classic Bruck rotates after);
 * shift = me folds the rotation into the copy (padded Bruck).
 */
void tuna_bruck_pad(const tuna_transport *tp, const tuna_bytes_view *v, int P, int shift, size_t B,
                    char *w)
{
    for (int i = 0; i < P; i++) {
        int j = tuna_bruck_rank(i, shift, P);
        size_t n = v->sbytes[j] < B ? v->sbytes[j] : B; /* B is the global maximum */
        char *slot = w + (size_t)i * B;
        if (n)
            tuna_tp_copy(tp, slot, v->sbase + v->soff[j], n);
        memset(slot + n, 0, B - n);
    }
}

/*
 * Scan-out: the block from rank s is slot s (relative = false, after an
 * explicit inverse rotation) or slot (me - s) mod P (relative = true). Slot i
 * lives in the upper half of w (slot P + i) when upper && upper[i]. Only the
 * receive block's own bytes are copied: MPI requires matching type
 * signatures, so recvcounts tell the real size.
 */
void tuna_bruck_scan_out(const tuna_transport *tp, const tuna_bytes_view *v, int P, int me,
                         bool relative, size_t B, const char *w, const unsigned char *upper)
{
    for (int s = 0; s < P; s++) {
        size_t n = v->rbytes[s] < B ? v->rbytes[s] : B;
        if (!n)
            continue;
        int i = relative ? tuna_bruck_rank(me, -(long long)s, P) : s;
        size_t slot = upper && upper[i] ? (size_t)P + (size_t)i : (size_t)i;
        tuna_tp_copy(tp, v->rbase + v->roff[s], w + slot * B, n);
    }
}

/* Classic Bruck's explicit rotations of P padded slots. */
void tuna_bruck_rotate(const tuna_transport *tp, const char *in, char *out, int P, int me, size_t B,
                       bool inverse)
{
    for (int i = 0; i < P; i++) {
        int from = inverse ? tuna_bruck_rank(me, -(long long)i, P) : tuna_bruck_rank(me, i, P);
        tuna_tp_copy(tp, out + (size_t)i * B, in + (size_t)from * B, B);
    }
}

static void state_free(tuna_a2av_op *o)
{
    tuna_bruck_op *s = o->state;
    MPI_Datatype *types[3] = {&s->blk, &s->st, &s->rt};
    for (int t = 0; t < 3; t++)
        if (*types[t] != MPI_DATATYPE_NULL)
            PMPI_Type_free(types[t]);
    TUNA_FREE_ALL(s->w, s->rot, s->upper, s->sbuf, s->rbuf, s->disp);
    tuna_a2av_state_release(o, &s->v);
}

static int op_open(tuna_a2av_op *o, tuna_bruck_op **out)
{
    const tuna_a2av_args *a = o->a;
    /* The round's slot indices live in the state: one allocation for both. */
    tuna_bruck_op *s = tuna_calloc(1, sizeof *s + sizeof(int) * (size_t)(a->size / 2));
    if (!s)
        return MPI_ERR_NO_MEM;
    s->blk = s->st = s->rt = MPI_DATATYPE_NULL;
    s->B = a->max_block_bytes;
    s->K = tuna_bruck_rounds(a->size);
    s->k = -1;
    int rc = tuna_a2av_state_attach(o, s, state_free, &s->tm, &s->v);
    if (rc == MPI_SUCCESS)
        *out = s;
    return rc;
}

int tuna_bruck_op_close(tuna_a2av_op *o, int rc)
{
    tuna_bruck_op *s = o->state;
    return tuna_a2av_view_done(o, &s->v, rc);
}

/* Every block of every rank is empty: the view opened and closed (its copies), no exchange. */
static int empty(tuna_a2av_op *o)
{
    tuna_bytes_view v;
    int rc = tuna_bytes_view_open(o->a, &v);
    return tuna_a2av_step_done(o, rc != MPI_SUCCESS ? rc
                                                    : tuna_bytes_view_close(o->a, &v, rc));
}

bool tuna_bruck_op_begin(tuna_a2av_op *o, tuna_bruck_op **out, int *step)
{
    o->i = 1;
    if (o->a->max_block_bytes == 0) {
        *step = empty(o);
        return false;
    }
    int rc = op_open(o, out);
    if (rc != MPI_SUCCESS) {
        *step = tuna_a2av_step_done(o, rc);
        return false;
    }
    return true;
}

int tuna_bruck_packed_rounds(tuna_a2av_op *o, int wait_rc, int *rc)
{
    const tuna_a2av_args *a = o->a;
    tuna_bruck_op *s = o->state;
    int P = a->size, me = a->rank;
    size_t B = s->B;
    if (s->k < 0) {
        *rc = MPI_SUCCESS;
        if (s->K == 0 || B == 0)
            return TUNA_STEP_DONE;
        size_t pack_bytes = 0;
        if ((*rc = tuna_bruck_padded_size((size_t)(P / 2), B, &pack_bytes)) != MPI_SUCCESS)
            return TUNA_STEP_DONE;
        s->sbuf = tuna_malloc(pack_bytes);
        s->rbuf = s->sbuf ? tuna_malloc(pack_bytes) : NULL;
        if (!s->rbuf) {
            *rc = MPI_ERR_NO_MEM;
            return TUNA_STEP_DONE;
        }
        s->round_temp = 2 * pack_bytes;
        s->k = 0;
    } else {
        /* Round k is over: its slots back in place. */
        *rc = tuna_a2av_step_outcome(o, wait_rc, "Bruck: MPI_Waitall of a round failed");
        tuna_timer_stop(&s->tm, TUNA_PHASE_DATA);
        if (*rc != MPI_SUCCESS)
            return TUNA_STEP_DONE;
        for (int j = 0; j < s->n; j++)
            tuna_tp_copy(a->tp, s->set + (size_t)s->idx[j] * B, s->rbuf + (size_t)j * B, B);
        tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
        if (++s->k == s->K)
            return TUNA_STEP_DONE;
    }
    long long d = 1LL << s->k;
    s->n = tuna_bruck_round_slots(P, s->k, s->idx);
    for (int j = 0; j < s->n; j++)
        tuna_tp_copy(a->tp, s->sbuf + (size_t)j * B, s->set + (size_t)s->idx[j] * B, B);
    tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
    /* Receive from me-2^k while sending to me+2^k (MPI_Sendrecv's pair, as posts). */
    size_t bytes = (size_t)s->n * B;
    int tag = s->tag + a->tag_shift, n = 0;
    int prc = tuna_posted(tuna_tp_irecv(a->tp, s->rbuf, bytes, tuna_bruck_rank(me, -d, P), tag,
                                        a->ctx->comm, &o->pair[0]),
                          &n);
    if (prc == MPI_SUCCESS)
        prc = tuna_posted(tuna_tp_isend(a->tp, s->sbuf, bytes, tuna_bruck_rank(me, d, P), tag,
                                        a->ctx->comm, &o->pair[1]),
                          &n);
    return tuna_a2av_step_wait(o, o->pair, n, prc);
}

/* A datatype of exactly `bytes` contiguous bytes (extent `bytes`), also beyond INT_MAX. */
int tuna_bruck_block_type(size_t bytes, MPI_Datatype *type)
{
    if (bytes <= (size_t)INT_MAX) {
        TUNA_MPI_CHECK(PMPI_Type_contiguous((int)bytes, MPI_BYTE, type));
        return MPI_SUCCESS;
    }
    const size_t chunk = (size_t)1 << 30;
    MPI_Datatype gib;
    TUNA_MPI_CHECK(PMPI_Type_contiguous((int)chunk, MPI_BYTE, &gib));
    int lens[2] = {(int)(bytes / chunk), (int)(bytes % chunk)};
    MPI_Aint disps[2] = {0, (MPI_Aint)(bytes / chunk * chunk)};
    MPI_Datatype types[2] = {gib, MPI_BYTE};
    int rc = PMPI_Type_create_struct(2, lens, disps, types, type);
    PMPI_Type_free(&gib);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "Bruck: a datatype for %zu-byte blocks failed", bytes);
    return MPI_SUCCESS;
}
