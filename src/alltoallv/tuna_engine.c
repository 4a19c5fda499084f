/*
 * The TuNA engine: the radix-r, two-phase, logarithmic non-uniform all-to-all
 * of TuNA over an arbitrary group of ranks, with blocks made of sub-blocks
 * (one for flat TuNA, one per node for the intra-node phase of hierarchical
 * TuNA). See tuna_engine.h for the interface and docs/algorithms.md for the
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
 * places with an hindexed datatype (no packing copies).
 */
#include "tuna_engine.h"

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

static int regions_post(const tuna_regions *m, int peer, int tag, MPI_Comm comm,
                        MPI_Request *req, bool send)
{
    *req = MPI_REQUEST_NULL;
    if (m->total == 0)
        return MPI_SUCCESS;
    if (m->n == 1 && m->len[0] <= (size_t)INT_MAX) {
        int rc = send ? MPI_Isend(m->ptr[0], (int)m->len[0], MPI_BYTE, peer, tag, comm, req)
                      : MPI_Irecv(m->ptr[0], (int)m->len[0], MPI_BYTE, peer, tag, comm, req);
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
            rc = MPI_Get_address(m->ptr[i] + off, &disp[k]);
        }
    MPI_Datatype t = MPI_DATATYPE_NULL;
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_create_hindexed((int)cnt, bl, disp, MPI_BYTE, &t);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&t);
    if (rc == MPI_SUCCESS)
        rc = send ? MPI_Isend(MPI_BOTTOM, 1, t, peer, tag, comm, req)
                  : MPI_Irecv(MPI_BOTTOM, 1, t, peer, tag, comm, req);
    /* Freeing a datatype in use by a pending operation is allowed: it lives on until done. */
    if (t != MPI_DATATYPE_NULL)
        MPI_Type_free(&t);
    free(bl);
    free(disp);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_NO_MEM)
        rc = tuna_error_set(rc, "tuna: posting a %zu-region message failed", cnt);
    return rc;
}

int tuna_regions_isend(const tuna_regions *m, int peer, int tag, MPI_Comm comm, MPI_Request *req)
{
    return regions_post(m, peer, tag, comm, req, true);
}

int tuna_regions_irecv(const tuna_regions *m, int peer, int tag, MPI_Comm comm, MPI_Request *req)
{
    return regions_post(m, peer, tag, comm, req, false);
}

/* ------------------------------------------------------------ schedule */

/* Blocks of round (x, z): i in [1, n) whose digit x (place value px) is z, ascending. */
static int round_blocks(int n, long long px, int r, int z, int *out)
{
    long long pnext = px * r;
    int cnt = 0;
    for (long long base = (long long)z * px; base < n; base += pnext)
        for (long long i = base; i < base + px && i < n; i++)
            if (out)
                out[cnt++] = (int)i;
            else
                cnt++;
    return cnt;
}

void tuna_schedule_of(int n, int radix, int batch, tuna_schedule *s)
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

/* ------------------------------------------------------------ the exchange */

typedef struct engine_state {
    const tuna_engine *e;
    tuna_schedule s;
    size_t slot_bytes;
    char *temp, *staging;
    size_t *slot_sizes;          /* [slot*nsub + k] */
    int *blk;                    /* block indices of the current batch, by round */
    int *start;                  /* [q]: first entry of round q in blk; [nb]: end */
    uint64_t *meta_send, *meta_recv;
    char **rptr;                 /* region pools: per round, blocks*nsub entries */
    size_t *rlen;
    tuna_regions *sreg, *rreg;
    MPI_Request *req;
    char *discard;               /* truncated blocks land here (error path only) */
    size_t discard_len;
} engine_state;

static int member(const tuna_engine *e, int j)
{
    return e->members ? e->members[j] : j;
}

static void state_free(engine_state *st)
{
    free(st->temp);
    free(st->slot_sizes);
    free(st->blk);
    free(st->meta_send);
    free(st->rptr);
    free(st->rlen);
    free(st->sreg);
    free(st->req);
    free(st->discard);
}

static int state_alloc(engine_state *st)
{
    const tuna_engine *e = st->e;
    int n = e->n, nsub = e->nsub, b = st->s.batch;
    size_t per = (size_t)(n - 1) * (size_t)nsub; /* entries of one batch, worst case */
    if (e->max_sub > SIZE_MAX / (size_t)nsub)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna: temporary slot size overflows");
    st->slot_bytes = (size_t)nsub * e->max_sub;
    size_t nbuf = (size_t)st->s.slots + (size_t)st->s.staged;
    if (nbuf && st->slot_bytes > SIZE_MAX / nbuf)
        return tuna_error_set(MPI_ERR_NO_MEM,
                              "tuna: temporary buffer of %zu blocks of %zu bytes overflows", nbuf,
                              st->slot_bytes);
    if (nbuf) {
        st->temp = tuna_malloc(nbuf * st->slot_bytes);
        if (!st->temp)
            return MPI_ERR_NO_MEM;
        st->staging = st->temp + (size_t)st->s.slots * st->slot_bytes;
    }
    st->slot_sizes = calloc((size_t)st->s.slots * (size_t)nsub + 1, sizeof(size_t));
    st->blk = tuna_malloc(sizeof(int) * ((size_t)n + (size_t)b + 1));
    st->meta_send = tuna_malloc(sizeof(uint64_t) * 2 * per);
    st->rptr = tuna_malloc(sizeof(char *) * 2 * per);
    st->rlen = tuna_malloc(sizeof(size_t) * 2 * per);
    st->sreg = tuna_malloc(sizeof(tuna_regions) * 2 * (size_t)b);
    st->req = tuna_malloc(sizeof(MPI_Request) * 4 * (size_t)b);
    if (!st->slot_sizes || !st->blk || !st->meta_send || !st->rptr || !st->rlen || !st->sreg ||
        !st->req)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna: out of memory for the round state");
    st->start = st->blk + n;
    st->meta_recv = st->meta_send + per;
    st->rreg = st->sreg + b;
    return MPI_SUCCESS;
}

/* Point the region lists of round q at their slices of the pools. */
static void regions_slice(engine_state *st, int q)
{
    size_t per = (size_t)(st->e->n - 1) * (size_t)st->e->nsub;
    size_t off = (size_t)st->start[q] * (size_t)st->e->nsub;
    int cap = (st->start[q + 1] - st->start[q]) * st->e->nsub;
    st->sreg[q] = (tuna_regions){0, cap, st->rptr + off, st->rlen + off, 0};
    st->rreg[q] = (tuna_regions){0, cap, st->rptr + per + off, st->rlen + per + off, 0};
}

/* One batch: rounds (x, z0..z0+nb-1), all in flight together. */
static int run_batch(engine_state *st, int x, long long px, int z0, int nb, tuna_timer *tm)
{
    const tuna_engine *e = st->e;
    const int n = e->n, me = e->me, nsub = e->nsub, r = st->s.r;
    const long long pnext = px * r;
    MPI_Request *mreq = st->req, *dreq = st->req + 2 * nb;
    int rc = MPI_SUCCESS;

    st->start[0] = 0;
    for (int q = 0; q < nb; q++)
        st->start[q + 1] = st->start[q] + round_blocks(n, px, r, z0 + q, st->blk + st->start[q]);

    /* Phase 1: metadata (sizes of the blocks each round moves). */
    for (int q = 0; q < nb && rc == MPI_SUCCESS; q++) {
        int dist = (int)((z0 + q) * px), from = (me - dist + n) % n;
        int cnt = (st->start[q + 1] - st->start[q]) * nsub;
        rc = MPI_Irecv(st->meta_recv + (size_t)st->start[q] * nsub, cnt, MPI_UINT64_T,
                       member(e, from), e->tag_meta, e->comm, &mreq[2 * q]);
    }
    for (int q = 0; q < nb && rc == MPI_SUCCESS; q++) {
        int dist = (int)((z0 + q) * px), to = (me + dist) % n;
        uint64_t *meta = st->meta_send + (size_t)st->start[q] * nsub;
        for (int t = st->start[q]; t < st->start[q + 1]; t++) {
            int i = st->blk[t];
            for (int k = 0; k < nsub; k++)
                *meta++ = i % px == 0 ? e->send_bytes[(size_t)((me + i) % n) * nsub + k]
                                      : st->slot_sizes[(size_t)slot_of(i, r) * nsub + k];
        }
        int cnt = (st->start[q + 1] - st->start[q]) * nsub;
        rc = MPI_Isend(st->meta_send + (size_t)st->start[q] * nsub, cnt, MPI_UINT64_T,
                       member(e, to), e->tag_meta, e->comm, &mreq[2 * q + 1]);
    }
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "tuna: posting the metadata of round (%d, %d) failed", x, z0);
    tuna_timer_stop(tm, TUNA_PHASE_METADATA);

    /* Phase 2a: data sends, while the metadata travels. Middle hops go via staging. */
    int staged = 0;
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
            size_t slot = (size_t)slot_of(i, r), tot = 0;
            for (int k = 0; k < nsub; k++)
                tot += st->slot_sizes[slot * nsub + k];
            const char *src = st->temp + slot * st->slot_bytes;
            if (i >= pnext && tot > 0) { /* middle hop: the slot is refilled this round */
                char *dst = st->staging + (size_t)staged++ * st->slot_bytes;
                memcpy(dst, src, tot);
                src = dst;
            }
            tuna_regions_add(m, src, tot);
        }
    }
    tuna_timer_stop(tm, TUNA_PHASE_COPY);
    for (int q = 0; q < nb && rc == MPI_SUCCESS; q++) {
        int dist = (int)((z0 + q) * px), to = (me + dist) % n;
        rc = tuna_regions_isend(&st->sreg[q], member(e, to), e->tag_data, e->comm, &dreq[2 * q]);
    }
    if (rc != MPI_SUCCESS)
        return rc;

    if (MPI_Waitall(2 * nb, mreq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        return tuna_error_set(MPI_ERR_OTHER, "tuna: metadata exchange failed");
    tuna_timer_stop(tm, TUNA_PHASE_METADATA);

    /* Truncated final blocks (received size above the capacity) need discard space. */
    size_t ntrunc = 0;
    for (int q = 0; q < nb; q++)
        for (int t = st->start[q]; t < st->start[q + 1]; t++) {
            int i = st->blk[t];
            if (i >= pnext)
                continue;
            size_t j = (size_t)((me - i + n) % n) * nsub;
            for (int k = 0; k < nsub; k++)
                ntrunc += st->meta_recv[(size_t)t * nsub + k] > e->recv_cap[j + k];
        }
    if (ntrunc * e->max_sub > st->discard_len) {
        free(st->discard);
        st->discard_len = 0;
        st->discard = tuna_malloc(ntrunc * e->max_sub);
        if (!st->discard)
            return MPI_ERR_NO_MEM;
        st->discard_len = ntrunc * e->max_sub;
    }

    /* Phase 2b: data receives, into the receive buffer (last hop) or a slot. */
    size_t trunc_used = 0;
    int rc_trunc = MPI_SUCCESS;
    for (int q = 0; q < nb; q++) {
        int dist = (int)((z0 + q) * px), from = (me - dist + n) % n;
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
                    if (bytes > e->recv_cap[j + k]) {
                        rc_trunc = tuna_error_set(
                            MPI_ERR_TRUNCATE,
                            "tuna: rank %d receives %zu bytes from rank %d but its recvcounts "
                            "allow %zu",
                            member(e, me), bytes, member(e, src), e->recv_cap[j + k]);
                        tuna_regions_add(m, st->discard + trunc_used++ * e->max_sub, bytes);
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
            tuna_regions_add(m, st->temp + slot * st->slot_bytes, tot);
        }
        /* A truncation is reported after the exchange, so peers never wait on us. */
        int prc = tuna_regions_irecv(m, member(e, from), e->tag_data, e->comm, &dreq[2 * q + 1]);
        if (prc != MPI_SUCCESS)
            return prc;
    }
    if (MPI_Waitall(2 * nb, dreq, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        return tuna_error_set(MPI_ERR_OTHER, "tuna: data exchange failed");
    tuna_timer_stop(tm, TUNA_PHASE_DATA);
    return rc_trunc;
}

int tuna_engine_run(const tuna_engine *e, tuna_timer *tm, size_t *temp_bytes)
{
    if (temp_bytes)
        *temp_bytes = 0;
    if (e->recv_got)
        memset(e->recv_got, 0, sizeof(size_t) * (size_t)e->n * (size_t)e->nsub);
    if (e->n <= 1 || e->max_sub == 0 || e->nsub == 0)
        return MPI_SUCCESS; /* nothing moves: every block is empty (agreed globally) */
    engine_state st = {0};
    st.e = e;
    tuna_schedule_of(e->n, e->radix, e->batch, &st.s);
    int rc = state_alloc(&st);
    if (rc == MPI_SUCCESS && temp_bytes)
        *temp_bytes = ((size_t)st.s.slots + (size_t)st.s.staged) * st.slot_bytes;
    tuna_timer_stop(tm, TUNA_PHASE_PREPARE);
    const int r = st.s.r, b = st.s.batch;
    int rc_trunc = MPI_SUCCESS;
    long long px = 1;
    for (int x = 0; x < st.s.w && rc == MPI_SUCCESS; x++, px *= r)
        for (int z0 = 1; z0 < r && z0 * px < e->n && rc == MPI_SUCCESS; z0 += b) {
            int nb = 0;
            while (nb < b && z0 + nb < r && (z0 + nb) * px < e->n)
                nb++;
            rc = run_batch(&st, x, px, z0, nb, tm);
            if (rc == MPI_ERR_TRUNCATE) { /* keep going: the peers need our messages */
                rc_trunc = rc;
                rc = MPI_SUCCESS;
            }
        }
    if (rc == MPI_SUCCESS)
        tuna_stats_rounds(st.s.K);
    state_free(&st);
    return rc != MPI_SUCCESS ? rc : rc_trunc;
}
