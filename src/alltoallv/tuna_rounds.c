/*
 * TuNA's rounds: the radix-r, two-phase, logarithmic non-uniform all-to-all
 * of TuNA over an arbitrary group of ranks, with blocks made of sub-blocks
 * (one for flat TuNA, one per node for the intra-node phase of hierarchical
 * TuNA). See tuna_rounds.h for the interface and docs/algorithms.md for the
 * algorithm, its round count and its memory.
 *
 * Block index i (1 <= i < n) is the distance from a block's source to its
 * destination; it never changes while the block travels (the Bruck rotation
 * becomes an index mapping). Written in base r with w digits, round (x, z)
 * moves every block whose digit x is z by distance z*r^x. Digits are done in
 * increasing order, so at rank p block i:
 *   - starts in the send buffer (first hop: the digits below x are all 0),
 *   - ends in the receive buffer (last hop: the digits above x are all 0),
 *   - otherwise waits in temporary slot i-1-dx*(r-1)-dz between hops, where
 *     dz is i's highest non-zero digit and dx its position (this numbers the
 *     blocks with at least two non-zero digits 0..n-(K+1)-1).
 * A "middle" hop (non-zero digits both below and above x) sends slot i and
 * receives the next block i into the same slot in the same round; such
 * blocks are copied to a staging area first, so no buffer is ever written
 * while a send from it is pending.
 *
 * Each round first exchanges the sizes of the blocks it moves (metadata),
 * then their data, as one message gathered from and scattered to the blocks'
 * places with an hindexed datatype (no packing copies). When every size is
 * known to all members beforehand (sizes_known: a uniform all-to-all), the
 * metadata is skipped: a batch decodes nothing and posts its data at once.
 */
#include "tuna_rounds.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Regions above this size are split so hindexed block lengths fit an int. */
#define REGION_CHUNK ((size_t)1 << 30)

/* ------------------------------------------------------------ message regions */

void tuna_regions_add(tuna_regions *m, const void *p, size_t len)
{
    if (len == 0)
        return;
    char *c = (char *)p;
    m->total += len;
    if (m->n > 0 && m->ptr[m->n - 1] + m->len[m->n - 1] == c) {
        m->len[m->n - 1] += len;
        return;
    }
    /* Callers size the list for the worst case (one region per sub-block). */
    m->ptr[m->n] = c;
    m->len[m->n] = len;
    m->n++;
}

static int regions_post(const tuna_transport *tp, const tuna_regions *m, int peer, int tag,
                        MPI_Comm comm, MPI_Request *req, bool send)
{
    *req = MPI_REQUEST_NULL;
    if (m->total == 0)
        return MPI_SUCCESS;
    if (m->n == 1 && m->len[0] <= (size_t)INT_MAX) {
        int rc = send ? tuna_tp_isend(tp, m->ptr[0], m->len[0], peer, tag, comm, req)
                      : tuna_tp_irecv(tp, m->ptr[0], m->len[0], peer, tag, comm, req);
        return rc == MPI_SUCCESS ? rc
                                 : tuna_error_set(rc, "tuna: MPI_%s of %zu bytes failed",
                                                  send ? "Isend" : "Irecv", m->len[0]);
    }
    size_t cnt = 0;
    for (int i = 0; i < m->n; i++)
        cnt += (m->len[i] + REGION_CHUNK - 1) / REGION_CHUNK;
    if (cnt > (size_t)INT_MAX)
        return tuna_error_set(MPI_ERR_COUNT, "tuna: message of %zu regions is too long", cnt);
    int *bl = tuna_malloc(sizeof(int) * cnt);
    MPI_Aint *disp = tuna_malloc(sizeof(MPI_Aint) * cnt);
    int rc = bl && disp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    size_t k = 0;
    for (int i = 0; i < m->n && rc == MPI_SUCCESS; i++)
        for (size_t off = 0; off < m->len[i]; off += REGION_CHUNK, k++) {
            size_t l = m->len[i] - off;
            bl[k] = (int)(l < REGION_CHUNK ? l : REGION_CHUNK);
            rc = PMPI_Get_address(m->ptr[i] + off, &disp[k]);
        }
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_create_hindexed((int)cnt, bl, disp, MPI_BYTE, &t);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&t);
    if (rc == MPI_SUCCESS)
        rc = send ? tuna_tp_isend_typed(tp, MPI_BOTTOM, 1, t, peer, tag, comm, req)
                  : tuna_tp_irecv_typed(tp, MPI_BOTTOM, 1, t, peer, tag, comm, req);
    /* Freeing a datatype in use by a pending operation is allowed: it lives on until done. */
    if (t != MPI_DATATYPE_NULL)
        PMPI_Type_free(&t);
    free(bl);
    free(disp);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_NO_MEM)
        rc = tuna_error_set(rc, "tuna: posting a %zu-region message failed", cnt);
    return rc;
}

int tuna_regions_isend(const tuna_transport *tp, const tuna_regions *m, int peer, int tag,
                       MPI_Comm comm, MPI_Request *req)
{
    return regions_post(tp, m, peer, tag, comm, req, true);
}

int tuna_regions_irecv(const tuna_transport *tp, const tuna_regions *m, int peer, int tag,
                       MPI_Comm comm, MPI_Request *req)
{
    return regions_post(tp, m, peer, tag, comm, req, false);
}

/* ------------------------------------------------------------ schedule */

void tuna_rounds_schedule_of(int n, int radix, int batch, tuna_rounds_schedule *s)
{
    memset(s, 0, sizeof *s);
    int r = radix < 2 ? 2 : radix;
    if (n >= 2 && r > n)
        r = n;
    int b = batch < 1 ? 1 : batch > r - 1 ? r - 1 : batch;
    s->r = r;
    s->batch = b;
    if (n <= 1)
        return;
    for (long long pw = 1; pw < n; pw *= r)
        s->w++;
    long long px = 1;
    for (int x = 0; x < s->w; x++, px *= r) {
        long long pnext = px * r;
        for (int z0 = 1; z0 < r && z0 * px < n; z0 += b) {
            int staged = 0;
            for (int z = z0; z < z0 + b && z < r && z * px < n; z++) {
                s->K++;
                /* Middle hops: i = a*pnext + z*px + c with a >= 1 and c >= 1. */
                for (long long base = (long long)z * px + pnext; base < n; base += pnext)
                    for (long long i = base + 1; i < base + px && i < n; i++)
                        staged++;
            }
            if (staged > s->staged)
                s->staged = staged;
        }
    }
    s->slots = n - 1 - s->K;
}

/* Temporary slot of a block with at least two non-zero digits (the paper's mapping). */
static int slot_of(int i, int r)
{
    int dx = 0, dz = i;
    while (dz >= r) {
        dz /= r;
        dx++;
    }
    return i - 1 - dx * (r - 1) - dz;
}

/* ------------------------------------------------------------ kept buffers */

/*
 * Kept buffer `slot` of c resized to `bytes` (0 frees it). Its contents survive
 * when `keep` and when shrinking (realloc, usually in place); a growth without
 * `keep` frees the old buffer before allocating the new one, so both never
 * coexist. A shrink that fails keeps the larger buffer (no error).
 */
static int kept_resize(tuna_scratch *c, int slot, size_t bytes, bool keep)
{
    if (bytes == c->kept_len[slot])
        return MPI_SUCCESS;
    if (bytes == 0) {
        free(c->kept[slot]);
        c->kept[slot] = NULL;
        c->kept_len[slot] = 0;
        return MPI_SUCCESS;
    }
    void *p;
    if (bytes < c->kept_len[slot]) {
        if (!(p = tuna_realloc_try(c->kept[slot], bytes)))
            return MPI_SUCCESS;
    } else if (keep) {
        p = tuna_realloc(c->kept[slot], bytes);
        if (!p)
            return tuna_error_set(MPI_ERR_NO_MEM, "tuna: out of memory growing a %zu-byte "
                                                  "buffer to %zu bytes", c->kept_len[slot], bytes);
    } else {
        free(c->kept[slot]);
        c->kept[slot] = NULL;
        c->kept_len[slot] = 0;
        if (!(p = tuna_malloc(bytes)))
            return MPI_ERR_NO_MEM;
    }
    c->kept[slot] = p;
    c->kept_len[slot] = bytes;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ the exchange */

/*
 * Memory. No rank knows the global largest block, so every buffer is sized from
 * sizes this rank knows: its own slots' sizes, and each round's metadata, which
 * arrives before the data it describes.
 *   - Slots: one arena (kept[TUNA_KEEP_ROUNDS_TEMP]), slot t at t*stride. When
 *     a batch's metadata announces a block larger than the stride, the stride
 *     becomes that size and the live slots move along. This batch's data sends
 *     (posted before the metadata wait) may still read the old arena (last hops
 *     leave from their slots): then the slots are copied to a new arena and the
 *     old one is freed after the batch's data Waitall; otherwise realloc.
 *   - Staging (kept[TUNA_KEEP_ROUNDS_STAGING]): the middle-hop blocks of a
 *     batch, packed; grown at the start of a batch, when no send is pending.
 *   - Discard: the truncated sizes actually announced (error path only).
 *   - Landing area (kept[land_keep]): grown (realloc) after a batch's metadata;
 *     nothing reads it before the exchange ends, so moving it is safe.
 * Peak, with m the largest block held in a slot and S the largest staging of a
 * batch: slots*m + S (+ landed bytes), plus the old arena (< slots*m) while
 * a growth waits for sends from it. Kept buffers are trimmed to what the call
 * used when it ends, so a call that follows one with larger blocks starts with
 * (and counts) that call's buffers.
 */
typedef tuna_rounds_state rounds_state; /* tuna_rounds.h: it lives in the caller's operation */

static int member(const tuna_rounds *e, int j)
{
    return e->members ? e->members[j] : j;
}

static size_t slot_total(const rounds_state *st, size_t slot)
{
    size_t tot = 0;
    for (int k = 0; k < st->e->nsub; k++)
        tot += st->slot_sizes[slot * (size_t)st->e->nsub + k];
    return tot;
}

static void note_peak(rounds_state *st)
{
    size_t cur = st->c->kept_len[TUNA_KEEP_ROUNDS_TEMP] + st->old_len +
                 st->c->kept_len[TUNA_KEEP_ROUNDS_STAGING] + st->discard_len;
    if (st->e->land_keep >= 0)
        cur += st->c->kept_len[st->e->land_keep];
    if (cur > st->peak)
        st->peak = cur;
}

/* Everything st allocated (the kept buffers stay with their owner); again is harmless. */
void tuna_rounds_state_free(rounds_state *st)
{
    TUNA_FREE_ALL(st->old_temp, st->slot_sizes, st->blk, st->meta_send, st->wire_send, st->rptr,
                  st->rlen, st->sreg, st->req, st->discard, st->drain);
    st->old_temp = st->discard = st->drain = NULL;
    st->old_len = st->discard_len = 0;
    st->slot_sizes = NULL;
    st->blk = st->start = NULL;
    st->meta_send = st->meta_recv = NULL;
    st->wire_send = st->wire_recv = NULL;
    st->rptr = NULL;
    st->rlen = NULL;
    st->sreg = st->rreg = NULL;
    st->req = NULL;
}

static int state_alloc(rounds_state *st)
{
    const tuna_rounds *e = st->e;
    int n = e->n, nsub = e->nsub, b = st->s.batch;
    size_t per = (size_t)(n - 1) * (size_t)nsub; /* entries of one batch, worst case */
    st->slot_sizes = tuna_calloc((size_t)st->s.slots * (size_t)nsub + 1, sizeof(size_t));
    st->blk = tuna_malloc(sizeof(int) * ((size_t)n + (size_t)b + 1));
    st->meta_send = tuna_malloc(sizeof(uint64_t) * 2 * per);
    /* Known sizes travel nowhere: no wire buffers. */
    st->wire_send = e->sizes_known ? NULL : tuna_malloc(2 * (8 * per + (size_t)b));
    st->rptr = tuna_malloc(sizeof(char *) * 2 * per);
    st->rlen = tuna_malloc(sizeof(size_t) * 2 * per);
    st->sreg = tuna_malloc(sizeof(tuna_regions) * 2 * (size_t)b);
    st->req = tuna_malloc(sizeof(MPI_Request) * 4 * (size_t)b);
    if (!st->slot_sizes || !st->blk || !st->meta_send || (!st->wire_send && !e->sizes_known) ||
        !st->rptr || !st->rlen || !st->sreg || !st->req)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna: out of memory for the round state");
    st->start = st->blk + n;
    st->meta_recv = st->meta_send + per;
    st->wire_recv = st->wire_send ? st->wire_send + 8 * per + (size_t)b : NULL;
    st->rreg = st->sreg + b;
    /* The arena and staging of the previous call are reused: slot t at t*stride. */
    tuna_scratch *c = st->c;
    st->temp = c->kept[TUNA_KEEP_ROUNDS_TEMP];
    st->stride = st->s.slots ? c->kept_len[TUNA_KEEP_ROUNDS_TEMP] / (size_t)st->s.slots : 0;
    note_peak(st);
    return MPI_SUCCESS;
}

/*
 * Raise the slot stride to `need`, moving the live slots. `pending`: sends of
 * this batch read the current arena, which must then outlive them.
 */
static int arena_grow(rounds_state *st, size_t need, bool pending)
{
    tuna_scratch *c = st->c;
    const size_t slots = (size_t)st->s.slots;
    if (need > SIZE_MAX / slots)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna: %zu temporary slots of %zu bytes overflow",
                              slots, need);
    size_t bytes = slots * need;
    bool live = false;
    for (size_t t = 0; t < slots && !live; t++)
        live = slot_total(st, t) > 0;
    if (pending) {
        char *fresh = tuna_malloc(bytes);
        if (!fresh)
            return MPI_ERR_NO_MEM;
        for (size_t t = 0; t < slots; t++) {
            size_t tot = slot_total(st, t);
            if (tot)
                tuna_tp_copy(st->e->tp, fresh + t * need, st->temp + t * st->stride, tot);
        }
        st->old_temp = c->kept[TUNA_KEEP_ROUNDS_TEMP];
        st->old_len = c->kept_len[TUNA_KEEP_ROUNDS_TEMP];
        c->kept[TUNA_KEEP_ROUNDS_TEMP] = fresh;
        c->kept_len[TUNA_KEEP_ROUNDS_TEMP] = bytes;
    } else {
        int rc = kept_resize(c, TUNA_KEEP_ROUNDS_TEMP, bytes, live);
        if (rc != MPI_SUCCESS) {
            st->temp = c->kept[TUNA_KEEP_ROUNDS_TEMP]; /* a failed growth may have freed it */
            return rc;
        }
        /* Spread the slots to the new stride, highest first: no unmoved slot is overwritten. */
        char *p = c->kept[TUNA_KEEP_ROUNDS_TEMP];
        for (size_t t = slots; live && t-- > 0;) {
            size_t tot = slot_total(st, t);
            if (tot)
                tuna_tp_move(st->e->tp, p + t * need, p + t * st->stride, tot);
        }
    }
    st->temp = c->kept[TUNA_KEEP_ROUNDS_TEMP];
    st->stride = need;
    return MPI_SUCCESS;
}

/* Byte offset of round q's encoded sizes in wire_send / wire_recv. */
static size_t wire_off(const rounds_state *st, int q)
{
    return TUNA_SIZES_BYTES((size_t)st->start[q] * (size_t)st->e->nsub) - 1 + (size_t)q;
}

/* Write the batch's sizes at `at` of the log (again for the same batch: the same entries). */
static int log_write(tuna_sizes_log *log, size_t at, const uint64_t *v, size_t cnt)
{
    if (at + cnt > log->cap) {
        size_t cap = log->cap ? log->cap : 64;
        while (cap < at + cnt)
            cap *= 2;
        uint64_t *grown = realloc(log->v, cap * sizeof *grown);
        if (!grown)
            return tuna_error_set(MPI_ERR_NO_MEM, "tuna: no memory for the recorded sizes");
        log->v = grown;
        log->cap = cap;
    }
    for (size_t t = 0; t < cnt; t++) /* host metadata, not a transport's data */
        log->v[at + t] = v[t];
    if (at + cnt > log->n)
        log->n = at + cnt;
    return MPI_SUCCESS;
}

/* The batch's received sizes, decoded into meta_recv (known sizes: filled in, from the log
 * when there is one; a recording exchange logs what it decoded). */
static int meta_unpack(rounds_state *st, int nb)
{
    const tuna_rounds *e = st->e;
    const size_t all = (size_t)st->start[nb] * (size_t)e->nsub;
    if (e->sizes_known && e->sizes_log) {
        if (st->log_at + all > e->sizes_log->n)
            return tuna_error_set(MPI_ERR_INTERN, "tuna: the recorded sizes end before the "
                                                  "schedule does");
        for (size_t t = 0; t < all; t++)
            st->meta_recv[t] = e->sizes_log->v[st->log_at + t];
        return MPI_SUCCESS;
    }
    if (e->sizes_known) {
        for (size_t t = 0; t < all; t++)
            st->meta_recv[t] = e->known_bytes;
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    for (int q = 0; q < nb && rc == MPI_SUCCESS; q++) {
        size_t cnt = (size_t)(st->start[q + 1] - st->start[q]) * (size_t)e->nsub;
        rc = tuna_sizes_decode(st->wire_recv + wire_off(st, q), TUNA_SIZES_BYTES(cnt), cnt,
                               st->meta_recv + (size_t)st->start[q] * (size_t)e->nsub,
                               "tuna");
    }
    if (rc == MPI_SUCCESS && e->sizes_record && e->sizes_log)
        rc = log_write(e->sizes_log, st->log_at, st->meta_recv, all);
    return rc;
}

/* Point the region lists of round q at their slices of the pools. */
static void regions_slice(rounds_state *st, int q)
{
    size_t per = (size_t)(st->e->n - 1) * (size_t)st->e->nsub;
    size_t off = (size_t)st->start[q] * (size_t)st->e->nsub;
    int cap = (st->start[q + 1] - st->start[q]) * st->e->nsub;
    st->sreg[q] = (tuna_regions){0, cap, st->rptr + off, st->rlen + off, 0};
    st->rreg[q] = (tuna_regions){0, cap, st->rptr + per + off, st->rlen + per + off, 0};
}


/* ------------------------------------------------------------ the exchange as steps */

/* Where the schedule is between two steps (rounds_state.phase). */
enum {
    ENG_BATCH,        /* post the next batch: metadata, then the data sends */
    ENG_META,         /* its metadata arrived: room, then the data receives */
    ENG_DATA,         /* its data arrived */
    ENG_SETTLE_META,  /* a failed batch settles: its metadata completed */
    ENG_SETTLE_DRAIN, /* ... a drained message arrived (or the draining starts) */
    ENG_SETTLE_DATA,  /* ... its data completed */
    ENG_END,          /* the schedule is over, or stopped on an error */
};

/* Wait for r[0..n), then resume at `phase`. */
static int rounds_wait(rounds_state *st, int phase, MPI_Request *r, int n, MPI_Request **req,
                       int *nreq)
{
    st->phase = phase;
    *req = r;
    *nreq = n;
    return TUNA_STEP_WAIT;
}

/* The next batch of rounds (x, z0..z0+nb-1) into st (first: the schedule's first); false
 * when the schedule is over. Digits in increasing order, `batch` rounds of one at a time. */
static bool batch_next(rounds_state *st, bool first)
{
    const int r = st->s.r, b = st->s.batch, n = st->e->n;
    if (first) {
        st->x = 0;
        st->px = 1;
        st->z0 = 1;
    } else {
        st->z0 += b;
    }
    while (st->x < st->s.w && !(st->z0 < r && st->z0 * st->px < n)) {
        st->x++;
        st->px *= r;
        st->z0 = 1;
    }
    if (st->x >= st->s.w)
        return false;
    int nb = 0;
    while (nb < b && st->z0 + nb < r && (st->z0 + nb) * st->px < n)
        nb++;
    st->nb = nb;
    return true;
}

/* A batch is over with outcome rc: a truncation is kept for the end (the peers need our
 * messages, so the schedule goes on), another error stops it. */
static void batch_end(rounds_state *st, int rc)
{
    if (rc == MPI_ERR_TRUNCATE) {
        st->rc_trunc = rc;
        rc = MPI_SUCCESS;
    }
    st->rc = rc;
    st->phase = rc == MPI_SUCCESS && batch_next(st, false) ? ENG_BATCH : ENG_END;
}

static void settle_meta(rounds_state *st, int wait_rc);
static int settle_drain(rounds_state *st, MPI_Request **req, int *nreq);
static int batch_recv(rounds_state *st, int wait_rc, MPI_Request **req, int *nreq);

/*
 * A batch that stops on an error (an allocation failure, say) settles before it ends:
 * no request may stay pending once the state and the arena are freed (sends read them,
 * receives write them), and no message of this call may stay in flight on the private
 * communicator, where a later call would match it. So: the metadata completes (all of it is
 * posted before the batch's first allocation), and the data messages the peers sent this
 * batch are taken in. Which ones they sent follows the failure policy of docs/testing.md: a
 * failure that hits every member at the same point of the schedule (the allocation test
 * hook on every rank, rank-symmetric sizes) leaves each member with the same rounds' sends
 * posted, `sends_posted` of them, and data receives posted only once all sends were. The
 * receives of those rounds not posted yet go into a drain buffer, one at a time: a receive
 * shorter than its message is no way out (Open MPI's rendezvous then leaves the sender
 * pending and writes past the short buffer). If the drain buffer cannot be had either,
 * those messages stay unreceived and their senders wait (a second failure while recovering
 * from the first; docs/testing.md). Steps: the metadata's wait (none with known sizes), one
 * wait per drained message, the data's wait; then the batch ends with rc.
 */
static int settle_start(rounds_state *st, int rc, MPI_Request **req, int *nreq)
{
    const int nb = st->nb;
    MPI_Request *mreq = st->req;
    st->rc = rc;
    if (st->e->sizes_known) { /* no metadata to complete: straight to the draining */
        settle_meta(st, MPI_SUCCESS);
        return settle_drain(st, req, nreq);
    }
    if (!st->meta_posted) /* an MPI error while posting: no peer is sure to match the receives */
        for (int q = 0; q < nb; q++)
            if (mreq[2 * q] != MPI_REQUEST_NULL)
                tuna_tp_cancel(st->e->tp, &mreq[2 * q]);
    return rounds_wait(st, ENG_SETTLE_META, mreq, 2 * nb, req, nreq);
}

/* Bytes round q of the batch brings, from its decoded metadata. */
static size_t round_bytes(const rounds_state *st, int q)
{
    const int nsub = st->e->nsub;
    size_t tot = 0;
    for (size_t t = (size_t)st->start[q] * nsub; t < (size_t)st->start[q + 1] * nsub; t++)
        tot += (size_t)st->meta_recv[t];
    return tot;
}

static void settle_meta(rounds_state *st, int wait_rc)
{
    const int nb = st->nb;
    MPI_Request *dreq = st->req + 2 * nb;
    bool meta_ok = wait_rc == MPI_SUCCESS && st->meta_posted && meta_unpack(st, nb) == MPI_SUCCESS;
    size_t drain_len = 0;
    for (int q = 0; q < st->sends_posted && meta_ok; q++) {
        size_t tot = round_bytes(st, q);
        if (dreq[2 * q + 1] == MPI_REQUEST_NULL && tot > drain_len)
            drain_len = tot;
    }
    st->drain = drain_len ? tuna_malloc(drain_len) : NULL;
    st->drain_q = 0;
    st->phase = ENG_SETTLE_DRAIN;
}

static int settle_drain(rounds_state *st, MPI_Request **req, int *nreq)
{
    const tuna_rounds *e = st->e;
    const int n = e->n, me = e->me, nb = st->nb;
    MPI_Request *dreq = st->req + 2 * nb;
    for (int q = st->drain_q; q < st->sends_posted && st->drain; q++) {
        size_t tot = round_bytes(st, q);
        int from = (me - (int)((st->z0 + q) * st->px) + n) % n;
        st->drain_req = MPI_REQUEST_NULL;
        if (dreq[2 * q + 1] == MPI_REQUEST_NULL && tot &&
            tuna_tp_irecv(e->tp, st->drain, tot, member(e, from), e->tag_data, e->comm,
                          &st->drain_req) == MPI_SUCCESS) {
            st->drain_q = q + 1;
            return rounds_wait(st, ENG_SETTLE_DRAIN, &st->drain_req, 1, req, nreq);
        }
    }
    return rounds_wait(st, ENG_SETTLE_DATA, dreq, 2 * nb, req, nreq);
}

/* A batch's first step: rounds (x, z0..z0+nb-1), all in flight together; their metadata,
 * then their data sends, while the metadata travels. */
static int batch_post(rounds_state *st, MPI_Request **req, int *nreq)
{
    const tuna_rounds *e = st->e;
    tuna_scratch *c = st->c;
    const int n = e->n, me = e->me, nsub = e->nsub, r = st->s.r;
    const int x = st->x, z0 = st->z0, nb = st->nb;
    const long long px = st->px, pnext = px * r;
    MPI_Request *mreq = st->req, *dreq = st->req + 2 * nb;
    int rc = MPI_SUCCESS;
    st->sends_posted = 0;
    st->meta_posted = false;
    st->rc_batch_trunc = MPI_SUCCESS;
    for (int q = 0; q < 4 * nb; q++)
        st->req[q] = MPI_REQUEST_NULL;

    st->start[0] = 0;
    for (int q = 0; q < nb; q++)
        st->start[q + 1] = st->start[q] + tuna_radix_digit_members(n, px, r, z0 + q, st->blk + st->start[q]);
    st->log_at = st->log_next;
    st->log_next += (size_t)st->start[nb] * (size_t)nsub;

    /* Staging for this batch's middle hops: no send is pending between batches. */
    size_t stage_need = 0;
    for (int t = 0; t < st->start[nb]; t++) {
        int i = st->blk[t];
        if (i % px != 0 && i >= pnext)
            stage_need += slot_total(st, (size_t)slot_of(i, r));
    }
    if (stage_need > st->staged_max)
        st->staged_max = stage_need;
    if (stage_need > c->kept_len[TUNA_KEEP_ROUNDS_STAGING]) {
        rc = kept_resize(c, TUNA_KEEP_ROUNDS_STAGING, stage_need, false);
        if (rc != MPI_SUCCESS) { /* nothing of the batch is posted */
            batch_end(st, rc);
            return TUNA_STEP_DONE;
        }
        note_peak(st);
    }
    char *staging = c->kept[TUNA_KEEP_ROUNDS_STAGING];

    /* Phase 1: metadata (sizes of the blocks each round moves), unless every member knows
     * them. */
    for (int q = 0; q < nb && rc == MPI_SUCCESS && !e->sizes_known; q++) {
        int dist = (int)((z0 + q) * px), from = (me - dist + n) % n;
        int cnt = (st->start[q + 1] - st->start[q]) * nsub;
        rc = tuna_tp_irecv(e->tp, st->wire_recv + wire_off(st, q), TUNA_SIZES_BYTES(cnt),
                           member(e, from), e->tag_meta, e->comm, &mreq[2 * q]);
    }
    for (int q = 0; q < nb && rc == MPI_SUCCESS && !e->sizes_known; q++) {
        int dist = (int)((z0 + q) * px), to = (me + dist) % n;
        uint64_t *meta = st->meta_send + (size_t)st->start[q] * nsub;
        for (int t = st->start[q]; t < st->start[q + 1]; t++) {
            int i = st->blk[t];
            for (int k = 0; k < nsub; k++)
                *meta++ = i % px == 0 ? e->send_bytes[(size_t)((me + i) % n) * nsub + k]
                                      : st->slot_sizes[(size_t)slot_of(i, r) * nsub + k];
        }
        int cnt = (st->start[q + 1] - st->start[q]) * nsub;
        size_t len = tuna_sizes_encode(st->meta_send + (size_t)st->start[q] * nsub, (size_t)cnt,
                                       st->wire_send + wire_off(st, q));
        rc = tuna_tp_isend(e->tp, st->wire_send + wire_off(st, q), len, member(e, to), e->tag_meta,
                           e->comm, &mreq[2 * q + 1]);
    }
    if (rc != MPI_SUCCESS)
        return settle_start(
            st, tuna_error_set(rc, "tuna: posting the metadata of round (%d, %d) failed", x, z0),
            req, nreq);
    st->meta_posted = true;
    if (!e->sizes_known)
        tuna_timer_stop(st->tm, TUNA_PHASE_METADATA);

    /* Phase 2a: data sends, while the metadata travels. Middle hops go via staging. */
    size_t staged = 0;
    st->arena_sends = false; /* a send reads the arena until this batch's data wait */
    for (int q = 0; q < nb; q++)
        regions_slice(st, q);
    for (int q = 0; q < nb; q++) {
        tuna_regions *m = &st->sreg[q];
        for (int t = st->start[q]; t < st->start[q + 1]; t++) {
            int i = st->blk[t];
            if (i % px == 0) { /* first hop: straight from the send buffer */
                size_t j = (size_t)((me + i) % n) * nsub;
                for (int k = 0; k < nsub; k++)
                    tuna_regions_add(m, e->send_ptr[j + k], e->send_bytes[j + k]);
                continue;
            }
            size_t slot = (size_t)slot_of(i, r), tot = slot_total(st, slot);
            const char *src = tot ? st->temp + slot * st->stride : NULL; /* no arena yet: NULL */
            if (i >= pnext && tot > 0) { /* middle hop: the slot is refilled this round */
                tuna_tp_copy(e->tp, staging + staged, src, tot);
                src = staging + staged;
                staged += tot;
            } else if (tot > 0) {
                st->arena_sends = true;
            }
            tuna_regions_add(m, src, tot);
            /* The block has left the slot: a growth need not carry it along. */
            memset(st->slot_sizes + slot * nsub, 0, sizeof(size_t) * (size_t)nsub);
        }
    }
    tuna_timer_stop(st->tm, TUNA_PHASE_COPY);
    for (int q = 0; q < nb && rc == MPI_SUCCESS; q++) {
        int dist = (int)((z0 + q) * px), to = (me + dist) % n;
        rc = tuna_regions_isend(e->tp, &st->sreg[q], member(e, to), e->tag_data, e->comm,
                                &dreq[2 * q]);
        if (rc == MPI_SUCCESS)
            st->sends_posted++;
    }
    if (rc != MPI_SUCCESS)
        return settle_start(st, rc, req, nreq);
    if (e->sizes_known) /* nothing to wait for before the receives */
        return batch_recv(st, MPI_SUCCESS, req, nreq);
    return rounds_wait(st, ENG_META, mreq, 2 * nb, req, nreq);
}

/* The batch's metadata arrived: room for what it announced, then the data receives. */
static int batch_recv(rounds_state *st, int wait_rc, MPI_Request **req, int *nreq)
{
    const tuna_rounds *e = st->e;
    tuna_scratch *c = st->c;
    const int n = e->n, me = e->me, nsub = e->nsub, r = st->s.r, nb = st->nb;
    const long long px = st->px, pnext = px * r;
    MPI_Request *dreq = st->req + 2 * nb;
    int rc;
    if (wait_rc != MPI_SUCCESS)
        return settle_start(st, tuna_error_set(wait_rc, "tuna: metadata exchange failed"), req,
                            nreq);
    if ((rc = meta_unpack(st, nb)) != MPI_SUCCESS)
        return settle_start(st, rc, req, nreq);
    if (!e->sizes_known)
        tuna_timer_stop(st->tm, TUNA_PHASE_METADATA);

    /* Room for what the metadata announced: slots, discarded and landed sub-blocks. */
    size_t slot_need = 0, trunc_bytes = 0, land_bytes = 0;
    for (int t = 0; t < st->start[nb]; t++) {
        int i = st->blk[t];
        const uint64_t *sz = st->meta_recv + (size_t)t * nsub;
        if (i >= pnext) {
            size_t tot = 0;
            for (int k = 0; k < nsub; k++)
                tot += (size_t)sz[k];
            slot_need = tot > slot_need ? tot : slot_need;
            continue;
        }
        size_t j = (size_t)((me - i + n) % n) * nsub;
        for (int k = 0; k < nsub; k++) {
            if (e->recv_cap[j + k] == TUNA_RECV_LAND)
                land_bytes += (size_t)sz[k];
            else if (sz[k] > e->recv_cap[j + k])
                trunc_bytes += (size_t)sz[k];
        }
    }
    if (slot_need > st->held)
        st->held = slot_need;
    if (slot_need > st->stride &&
        (rc = arena_grow(st, slot_need, st->arena_sends)) != MPI_SUCCESS)
        return settle_start(st, rc, req, nreq);
    if (trunc_bytes > st->discard_len) {
        free(st->discard); /* the receives into it completed with the previous batch */
        st->discard_len = 0;
        if (!(st->discard = tuna_malloc(trunc_bytes)))
            return settle_start(st, MPI_ERR_NO_MEM, req, nreq);
        st->discard_len = trunc_bytes;
    }
    if (e->land_keep >= 0 && st->land_used + land_bytes > c->kept_len[e->land_keep] &&
        (rc = kept_resize(c, e->land_keep, st->land_used + land_bytes, true)) != MPI_SUCCESS)
        return settle_start(st, rc, req, nreq);
    note_peak(st);
    char *land = e->land_keep >= 0 ? c->kept[e->land_keep] : NULL;

    /* Phase 2b: data receives, into the receive buffer (last hop) or a slot. */
    size_t trunc_used = 0;
    for (int q = 0; q < nb; q++) {
        int dist = (int)((st->z0 + q) * px), from = (me - dist + n) % n;
        tuna_regions *m = &st->rreg[q];
        for (int t = st->start[q]; t < st->start[q + 1]; t++) {
            int i = st->blk[t];
            const uint64_t *sz = st->meta_recv + (size_t)t * nsub;
            if (i < pnext) { /* last hop: block from member me - i */
                int src = (me - i + n) % n;
                size_t j = (size_t)src * nsub;
                for (int k = 0; k < nsub; k++) {
                    size_t bytes = (size_t)sz[k];
                    if (e->recv_got)
                        e->recv_got[j + k] = bytes;
                    if (e->recv_cap[j + k] == TUNA_RECV_LAND) {
                        e->land_off[j + k] = st->land_used;
                        if (bytes) /* the area may not exist yet (NULL + 0 is undefined) */
                            tuna_regions_add(m, land + st->land_used, bytes);
                        st->land_used += bytes;
                    } else if (bytes > e->recv_cap[j + k]) {
                        st->rc_batch_trunc = tuna_error_set(
                            MPI_ERR_TRUNCATE,
                            "tuna: rank %d receives %zu bytes from rank %d but its recvcounts "
                            "allow %zu",
                            member(e, me), bytes, member(e, src), e->recv_cap[j + k]);
                        tuna_regions_add(m, st->discard + trunc_used, bytes);
                        trunc_used += bytes;
                    } else {
                        tuna_regions_add(m, e->recv_ptr[j + k], bytes);
                    }
                }
                continue;
            }
            size_t slot = (size_t)slot_of(i, r), tot = 0;
            for (int k = 0; k < nsub; k++) {
                st->slot_sizes[slot * nsub + k] = (size_t)sz[k];
                tot += (size_t)sz[k];
            }
            if (tot)
                tuna_regions_add(m, st->temp + slot * st->stride, tot);
        }
        /* A truncation is reported after the exchange, so peers never wait on us. */
        if ((rc = tuna_regions_irecv(e->tp, m, member(e, from), e->tag_data, e->comm,
                                     &dreq[2 * q + 1])) != MPI_SUCCESS)
            return settle_start(st, rc, req, nreq);
    }
    return rounds_wait(st, ENG_DATA, dreq, 2 * nb, req, nreq);
}

/* The batch's data arrived. */
static void batch_data(rounds_state *st, int wait_rc)
{
    if (wait_rc != MPI_SUCCESS) {
        batch_end(st, tuna_error_set(wait_rc, "tuna: data exchange failed"));
        return;
    }
    free(st->old_temp); /* no send reads the previous arena any more */
    st->old_temp = NULL;
    st->old_len = 0;
    tuna_timer_stop(st->tm, TUNA_PHASE_DATA);
    batch_end(st, st->rc_batch_trunc);
}

/*
 * End of a call: the kept buffers shrink to what this call used (the arena to
 * slots*held), so a communicator keeps at most one call's temporary memory.
 */
static int trim_kept(const tuna_rounds *e, tuna_scratch *c, size_t arena, size_t staging,
                     size_t landed)
{
    int rc = kept_resize(c, TUNA_KEEP_ROUNDS_TEMP, arena, false);
    int rc2 = kept_resize(c, TUNA_KEEP_ROUNDS_STAGING, staging, false);
    int rc3 = e->land_keep >= 0 ? kept_resize(c, e->land_keep, landed, true) : MPI_SUCCESS;
    return rc != MPI_SUCCESS ? rc : rc2 != MPI_SUCCESS ? rc2 : rc3;
}

/* The schedule is over (or stopped): trim, free, the outcome into st->rc. */
static int rounds_end(rounds_state *st)
{
    int rc = st->rc;
    if (rc == MPI_SUCCESS) {
        tuna_stats_rounds(st->s.K);
        st->temp_bytes = st->peak;
        /* held <= stride, and slots*stride did not overflow. */
        rc = trim_kept(st->e, st->c, (size_t)st->s.slots * st->held, st->staged_max,
                       st->land_used);
    }
    tuna_rounds_state_free(st);
    st->rc = rc != MPI_SUCCESS ? rc : st->rc_trunc;
    return TUNA_STEP_DONE;
}

int tuna_rounds_step(rounds_state *st, int wait_rc, MPI_Request **req, int *nreq)
{
    for (;;) {
        /* Each case posts and waits, or moves on to the next phase at once. */
        switch (st->phase) {
        case ENG_BATCH:
            if (batch_post(st, req, nreq) == TUNA_STEP_WAIT)
                return TUNA_STEP_WAIT;
            break;
        case ENG_META:
            return batch_recv(st, wait_rc, req, nreq);
        case ENG_DATA:
            batch_data(st, wait_rc);
            break;
        case ENG_SETTLE_META:
            settle_meta(st, wait_rc);
            break;
        case ENG_SETTLE_DRAIN:
            return settle_drain(st, req, nreq);
        case ENG_SETTLE_DATA:
            free(st->drain);
            st->drain = NULL;
            batch_end(st, st->rc);
            break;
        default:
            return rounds_end(st);
        }
        wait_rc = MPI_SUCCESS;
    }
}

int tuna_rounds_start(rounds_state *st, const tuna_rounds *e, tuna_timer *tm, MPI_Request **req,
                      int *nreq)
{
    st->e = e;
    st->c = e->scr;
    st->tm = tm;
    st->temp_bytes = 0;
    st->rc = st->rc_trunc = MPI_SUCCESS;
    if (e->recv_got)
        memset(e->recv_got, 0, sizeof(size_t) * (size_t)e->n * (size_t)e->nsub);
    if (e->land_off)
        memset(e->land_off, 0, sizeof(size_t) * (size_t)e->n * (size_t)e->nsub);
    /* n and nsub are the same on every member: ending here leaves no peer waiting. */
    if (e->n <= 1 || e->nsub == 0) {
        st->rc = trim_kept(e, e->scr, 0, 0, 0);
        return TUNA_STEP_DONE;
    }
    tuna_rounds_schedule_of(e->n, e->radix, e->batch, &st->s);
    /* Buffers this schedule never uses are released before the peak is counted. */
    tuna_scratch *c = st->c;
    int rc = trim_kept(e, c, st->s.slots ? c->kept_len[TUNA_KEEP_ROUNDS_TEMP] : 0,
                       st->s.staged ? c->kept_len[TUNA_KEEP_ROUNDS_STAGING] : 0,
                       e->land_keep >= 0 ? c->kept_len[e->land_keep] : 0);
    if (rc == MPI_SUCCESS)
        rc = state_alloc(st);
    tuna_timer_stop(tm, TUNA_PHASE_PREPARE);
    st->rc = rc;
    st->phase = rc == MPI_SUCCESS && batch_next(st, true) ? ENG_BATCH : ENG_END;
    return tuna_rounds_step(st, MPI_SUCCESS, req, nreq);
}
