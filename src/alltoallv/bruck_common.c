/*
 * Helpers shared by the radix-2 Bruck family (bruck.c, padded_bruck.c,
 * twophase_bruck.c): round geometry, padding blocks to the global maximum
 * block size B and scanning the real bytes back out, the explicit rotations
 * of the classic algorithm, and the memcpy-packed exchange of padded slots.
 *
 * Slot i of a rank's working set holds the block that travels distance i:
 * before the rounds it is the block for rank me+i, after them the block from
 * rank me-i. Round k sends every slot whose index has bit k set to me+2^k and
 * receives the same slots from me-2^k, so after ceil(log2 P) rounds each block
 * has moved exactly i ranks (the binary digits of i).
 */
#include "alltoallv.h"

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
void tuna_bruck_pad(const tuna_bytes_view *v, int P, int shift, size_t B, char *w)
{
    for (int i = 0; i < P; i++) {
        int j = tuna_bruck_rank(i, shift, P);
        size_t n = v->sbytes[j] < B ? v->sbytes[j] : B; /* B is the global maximum */
        char *slot = w + (size_t)i * B;
        if (n)
            memcpy(slot, v->sbase + v->soff[j], n);
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
void tuna_bruck_scan_out(const tuna_bytes_view *v, int P, int me, bool relative, size_t B,
                         const char *w, const unsigned char *upper)
{
    for (int s = 0; s < P; s++) {
        size_t n = v->rbytes[s] < B ? v->rbytes[s] : B;
        if (!n)
            continue;
        int i = relative ? tuna_bruck_rank(me, -(long long)s, P) : s;
        size_t slot = upper && upper[i] ? (size_t)P + (size_t)i : (size_t)i;
        memcpy(v->rbase + v->roff[s], w + slot * B, n);
    }
}

/* Classic Bruck's explicit rotations of P padded slots. */
void tuna_bruck_rotate(const char *in, char *out, int P, int me, size_t B, bool inverse)
{
    for (int i = 0; i < P; i++) {
        int from = inverse ? tuna_bruck_rank(me, -(long long)i, P) : tuna_bruck_rank(me, i, P);
        memcpy(out + (size_t)i * B, in + (size_t)from * B, B);
    }
}

/* One round: receive rbytes from src while sending sbytes to dst (either may be 0). */
int tuna_bruck_exchange_bytes(void *rbuf, size_t rbytes, int src, const void *sbuf,
                              size_t sbytes, int dst, int tag, MPI_Comm comm)
{
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int rc = rbytes ? tuna_irecv_bytes(rbuf, rbytes, src, tag, comm, &req[0]) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS && sbytes)
        rc = tuna_isend_bytes(sbuf, sbytes, dst, tag, comm, &req[1]);
    if (rc != MPI_SUCCESS) {
        if (req[0] != MPI_REQUEST_NULL) {
            PMPI_Cancel(&req[0]);
            PMPI_Wait(&req[0], MPI_STATUS_IGNORE);
        }
        return rc;
    }
    int wrc = tuna_waitall(2, req);
    if (wrc != MPI_SUCCESS)
        return tuna_error_set(wrc, "Bruck: MPI_Waitall of a round failed");
    return MPI_SUCCESS;
}

/*
 * The ceil(log2 P) rounds over P padded slots in w: each round packs its
 * slots into one contiguous message (memcpy), exchanges it, and copies the
 * received slots back in place. Temporary memory: two buffers of P/2 slots.
 */
int tuna_bruck_padded_rounds_packed(const tuna_a2av_args *a, char *w, size_t B, int tag,
                                    tuna_timer *tm, size_t *temp_bytes)
{
    int P = a->size, me = a->rank, K = tuna_bruck_rounds(P), half = P / 2;
    *temp_bytes = 0;
    if (K == 0 || B == 0)
        return MPI_SUCCESS;
    size_t pack_bytes = 0; /* set unless an error returns first */
    int rc = tuna_bruck_padded_size((size_t)half, B, &pack_bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    int *idx = tuna_malloc(sizeof(int) * (size_t)half);
    char *sbuf = idx ? tuna_malloc(pack_bytes) : NULL;
    char *rbuf = sbuf ? tuna_malloc(pack_bytes) : NULL;
    if (!rbuf) {
        free(idx);
        free(sbuf);
        return MPI_ERR_NO_MEM;
    }
    *temp_bytes = 2 * pack_bytes;
    for (int k = 0; k < K && rc == MPI_SUCCESS; k++) {
        long long d = 1LL << k;
        int n = tuna_bruck_round_slots(P, k, idx);
        for (int j = 0; j < n; j++)
            memcpy(sbuf + (size_t)j * B, w + (size_t)idx[j] * B, B);
        tuna_timer_stop(tm, TUNA_PHASE_COPY);
        rc = tuna_bruck_exchange_bytes(rbuf, (size_t)n * B, tuna_bruck_rank(me, -d, P), sbuf, (size_t)n * B,
                            tuna_bruck_rank(me, d, P), tag, a->ctx->comm);
        tuna_timer_stop(tm, TUNA_PHASE_DATA);
        if (rc != MPI_SUCCESS)
            break;
        for (int j = 0; j < n; j++)
            memcpy(w + (size_t)idx[j] * B, rbuf + (size_t)j * B, B);
        tuna_timer_stop(tm, TUNA_PHASE_COPY);
    }
    free(idx);
    free(sbuf);
    free(rbuf);
    return rc;
}

/* A datatype of exactly `bytes` contiguous bytes (extent `bytes`), also beyond INT_MAX. */
int tuna_bruck_block_type(size_t bytes, MPI_Datatype *type)
{
    if (bytes <= (size_t)INT_MAX) {
        TUNA_MPI_CHECK(MPI_Type_contiguous((int)bytes, MPI_BYTE, type));
        return MPI_SUCCESS;
    }
    const size_t chunk = (size_t)1 << 30;
    MPI_Datatype gib;
    TUNA_MPI_CHECK(MPI_Type_contiguous((int)chunk, MPI_BYTE, &gib));
    int lens[2] = {(int)(bytes / chunk), (int)(bytes % chunk)};
    MPI_Aint disps[2] = {0, (MPI_Aint)(bytes / chunk * chunk)};
    MPI_Datatype types[2] = {gib, MPI_BYTE};
    int rc = MPI_Type_create_struct(2, lens, disps, types, type);
    MPI_Type_free(&gib);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "Bruck: a datatype for %zu-byte blocks failed", bytes);
    return MPI_SUCCESS;
}
