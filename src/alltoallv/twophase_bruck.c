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
 * metadata announces a larger one. The data exchange is blocking and sends
 * from the packed send buffer, so no send reads the regions when they grow
 * (realloc, then the live regions move to the new stride).
 *
 * Temporary memory: (P - K - 1)*m for the passing-through blocks (K =
 * ceil(log2 P); slots 1, 2, 4, ... go straight to the receive buffer; m = the
 * largest block this rank holds between rounds), plus one send and one
 * receive buffer as large as the largest round's real data of this rank,
 * plus 16*floor(P/2) bytes of sizes. With blocks of at most B bytes that is
 * at most (P - K - 1 + 2*floor(P/2))*B + 16*floor(P/2).
 */
#include "alltoallv.h"

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

/*
 * Sizes on the wire: the n words packed in place into w bytes each (little-endian), w the
 * narrowest of 0, 1, 2, 4, 8 that holds the largest; returns w. Word k only moves down to
 * bytes [k*w, (k+1)*w), below or on its own, so nothing unread is overwritten.
 */
static int sizes_pack(uint64_t *v, int n)
{
    uint64_t max = 0;
    for (int k = 0; k < n; k++)
        max = v[k] > max ? v[k] : max;
    int w = max == 0 ? 0 : max <= UINT8_MAX ? 1 : max <= UINT16_MAX ? 2
          : max <= UINT32_MAX ? 4 : 8;
    unsigned char *o = (unsigned char *)v;
    for (int k = 0; k < n && w > 0; k++) {
        uint64_t x = v[k];
        for (int b = 0; b < w; b++)
            o[(size_t)k * w + b] = (unsigned char)(x >> (8 * b));
    }
    return w;
}

/* The inverse, in place, highest word first (its bytes lie at or below its own word). */
static void sizes_unpack(uint64_t *v, int n, int w)
{
    const unsigned char *in = (const unsigned char *)v;
    for (int k = n - 1; k >= 0; k--) {
        uint64_t x = 0;
        for (int b = 0; b < w; b++)
            x |= (uint64_t)in[(size_t)k * w + b] << (8 * b);
        v[k] = x;
    }
}

int tuna_a2av_twophase_bruck(const tuna_a2av_args *a)
{
    int P = a->size, me = a->rank, K = tuna_bruck_rounds(P), half = P / 2;
    MPI_Comm comm = a->ctx->comm;
    tuna_timer tm;
    tuna_timer_start(&tm);
    tuna_bytes_view v;
    int rc = tuna_bytes_view_open(a, &v);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Own block: never leaves this rank (the core checked it fits). */
    size_t own = v.sbytes[me] < v.rbytes[me] ? v.sbytes[me] : v.rbytes[me];
    if (own)
        memcpy(v.rbase + v.roff[me], v.sbase + v.soff[me], own);
    if (P == 1) /* nothing else to move; every rank sees the same P */
        return tuna_bytes_view_close(a, &v, MPI_SUCCESS);

    /* Passing-through slots: slot i's region at tmp + tslot[i]*stride, grown on demand. */
    size_t ntemp = (size_t)(P - K - 1), stride = 0;
    char *tmp = NULL;
    const char **ptr = tuna_malloc(sizeof(char *) * (size_t)P); /* where slot i's data is */
    size_t *len = tuna_malloc(sizeof(size_t) * (size_t)P);      /* and how many bytes */
    long long *tslot = tuna_malloc(sizeof(long long) * (size_t)P); /* region in tmp, or -1 */
    int *idx = tuna_malloc(sizeof(int) * (size_t)half);
    uint64_t *meta = tuna_malloc(sizeof(uint64_t) * 2 * (size_t)half);
    unsigned char *in_tmp = tuna_malloc((size_t)P); /* slot i's data is in its region */
    char *sbuf = NULL, *rbuf = NULL;
    size_t scap = 0, rcap = 0;
    if (!ptr || !len || !tslot || !idx || !meta || !in_tmp) {
        rc = MPI_ERR_NO_MEM;
        goto done;
    }
    memset(in_tmp, 0, (size_t)P);
    long long t = 0;
    for (int i = 1; i < P; i++) {
        int j = tuna_bruck_rank(me, i, P);
        len[i] = v.sbytes[j];
        ptr[i] = len[i] ? v.sbase + v.soff[j] : NULL;
        tslot[i] = (i & (i - 1)) ? t++ : -1; /* powers of two are delivered directly */
    }
    tuna_timer_stop(&tm, TUNA_PHASE_PREPARE);

    int err = MPI_SUCCESS; /* a receive-side error: reported after all rounds, so no peer hangs */
    MPI_Status st;
    for (int k = 0; k < K && rc == MPI_SUCCESS; k++) {
        long long d = 1LL << k;
        int dst = tuna_bruck_rank(me, d, P), src = tuna_bruck_rank(me, -d, P);
        int n = tuna_bruck_round_slots(P, k, idx);
        size_t out = 0, in = 0;
        for (int j = 0; j < n; j++) {
            meta[j] = (uint64_t)len[idx[j]];
            out += len[idx[j]];
        }
        /* The sizes go in the narrowest of 0, 1, 2, 4, 8 bytes each that holds the largest,
         * packed in place; the receiver learns the width from the message's length. */
        int wout = sizes_pack(meta, n);
        int got = 0;
        if ((rc = MPI_Sendrecv(meta, wout * n, MPI_BYTE, dst, TUNA_TAG_TWOPHASE_META, meta + half,
                               8 * n, MPI_BYTE, src, TUNA_TAG_TWOPHASE_META, comm, &st)) !=
                MPI_SUCCESS ||
            (rc = MPI_Get_count(&st, MPI_BYTE, &got)) != MPI_SUCCESS) {
            rc = tuna_error_set(rc, "twophase-bruck: size exchange of round %d "
                                               "failed", k);
            break;
        }
        if (got % n != 0 || (got / n != 0 && got / n != 1 && got / n != 2 && got / n != 4 &&
                             got / n != 8)) {
            rc = tuna_error_set(MPI_ERR_INTERN, "twophase-bruck: %d bytes of sizes for %d slots",
                                got, n);
            break;
        }
        sizes_unpack(meta + half, n, got / n);
        for (int j = 0; j < n; j++)
            in += (size_t)meta[half + j];
        tuna_timer_stop(&tm, TUNA_PHASE_METADATA);

        if ((rc = reserve(&sbuf, &scap, out)) != MPI_SUCCESS ||
            (rc = reserve(&rbuf, &rcap, in)) != MPI_SUCCESS)
            break;
        size_t off = 0, need = 0;
        for (int j = 0; j < n; j++) {
            if (len[idx[j]])
                memcpy(sbuf + off, ptr[idx[j]], len[idx[j]]);
            off += len[idx[j]];
            in_tmp[idx[j]] = 0; /* packed: its region is free until the slot comes back */
            if ((idx[j] >> (k + 1)) != 0 && (size_t)meta[half + j] > need)
                need = (size_t)meta[half + j]; /* stays here after this round */
        }
        /* Regions too small for a block announced this round: raise the stride now. */
        if (need > stride) {
            if (need > SIZE_MAX / ntemp) {
                rc = tuna_error_set(MPI_ERR_NO_MEM, "twophase-bruck: %zu regions of %zu bytes "
                                    "overflow", ntemp, need);
                break;
            }
            char *grown = tuna_realloc(tmp, ntemp * need);
            if (!grown) {
                rc = tuna_error_set(MPI_ERR_NO_MEM, "twophase-bruck: out of memory for %zu "
                                    "regions of %zu bytes", ntemp, need);
                break;
            }
            tmp = grown;
            /* Highest region first, so no region is overwritten before it moved. */
            for (int i = P - 1; i >= 1; i--)
                if (in_tmp[i]) {
                    if (len[i])
                        memmove(tmp + (size_t)tslot[i] * need, tmp + (size_t)tslot[i] * stride,
                                len[i]);
                    ptr[i] = tmp + (size_t)tslot[i] * need;
                }
            stride = need;
        }
        tuna_timer_stop(&tm, TUNA_PHASE_COPY);
        rc = tuna_bruck_exchange_bytes(rbuf, in, src, sbuf, out, dst, TUNA_TAG_TWOPHASE_DATA, comm);
        tuna_timer_stop(&tm, TUNA_PHASE_DATA);
        if (rc != MPI_SUCCESS)
            break;

        off = 0;
        for (int j = 0; j < n; j++) {
            int i = idx[j];
            size_t got = (size_t)meta[half + j], keep = got;
            if ((i >> (k + 1)) == 0) {
                /* Highest bit of i is k: this is the block from me-i, delivered now. */
                int from = tuna_bruck_rank(me, -(long long)i, P);
                if (got > v.rbytes[from]) {
                    keep = v.rbytes[from];
                    if (err == MPI_SUCCESS)
                        err = tuna_error_set(MPI_ERR_TRUNCATE,
                                             "twophase-bruck: rank %d receives %zu bytes from "
                                             "rank %d but recvcounts[%d] holds %zu",
                                             me, got, from, from, v.rbytes[from]);
                }
                if (keep)
                    memcpy(v.rbase + v.roff[from], rbuf + off, keep);
            } else {
                char *region = keep ? tmp + (size_t)tslot[i] * stride : NULL;
                if (keep)
                    memcpy(region, rbuf + off, keep);
                ptr[i] = region;
                len[i] = keep;
                in_tmp[i] = 1;
            }
            off += got;
        }
        tuna_timer_stop(&tm, TUNA_PHASE_COPY);
    }
    if (rc == MPI_SUCCESS)
        rc = err;
    tuna_stats_temp(ntemp * stride + scap + rcap + sizeof(uint64_t) * 2 * (size_t)half);
    tuna_stats_rounds(K);
done:
    free(ptr);
    free(len);
    free(tslot);
    free(idx);
    free(meta);
    free(in_tmp);
    free(tmp);
    free(sbuf);
    free(rbuf);
    return tuna_bytes_view_close(a, &v, rc);
}
