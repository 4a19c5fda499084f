/*
 * tuna's device kernels (src/device/, tuna_device.h) byte for byte against host code
 * written here: every reduction (each supported op x type, and the unsupported pairs
 * refused), the permutation of permuted recursive multiplying (its slots from the shared
 * index maps, the moves computed here), pack and unpack of strided blocks; odd sizes and
 * misaligned offsets, sentinel bytes around every result. Label gpu: exit 77 (skipped)
 * without a CUDA device.
 */
#include "gpu_common.h"
#include "index_maps.h"
#include "tuna_device.h"

#include <stdint.h>
#include <string.h>

#define MARGIN 64
#define SENT 0x5A

static int failures;

static void fail(const char *what, long a, long b, long c)
{
    if (failures++ < 30)
        printf("FAILED: %s (%ld, %ld, %ld)\n", what, a, b, c);
}

/* Device room of `bytes` at byte offset `off`, sentinel-filled with margins: *base to free. */
static unsigned char *dev_room(size_t bytes, size_t off, void **base)
{
    GPU_CHECK(cudaMalloc(base, bytes + off + 2 * MARGIN));
    GPU_CHECK(cudaMemset(*base, SENT, bytes + off + 2 * MARGIN));
    return (unsigned char *)*base + MARGIN + off;
}

/* The whole device room back, compared with the expected bytes and the sentinels. */
static void check_room(void *base, size_t bytes, size_t off, const unsigned char *want,
                       const char *what, long a, long b)
{
    const size_t all = bytes + off + 2 * MARGIN;
    unsigned char *h = malloc(all);
    GPU_CHECK(cudaMemcpy(h, base, all, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < all; i++) {
        const int inside = i >= MARGIN + off && i < MARGIN + off + bytes;
        if (inside ? h[i] != want[i - MARGIN - off] : h[i] != SENT) {
            fail(what, a, b, (long)i);
            break;
        }
    }
    free(h);
}

/* ---------------------------------------------------------------- reductions, host side */

#define HOST_OP(T, op, a, b, out)                                                              \
    switch (op) {                                                                               \
    case TUNA_DEV_SUM: out = (T)(a + b); break;                                                 \
    case TUNA_DEV_PROD: out = (T)(a * b); break;                                                \
    case TUNA_DEV_MAX: out = a > b ? a : b; break;                                              \
    case TUNA_DEV_MIN: out = a < b ? a : b; break;                                              \
    default: out = a; break;                                                                    \
    }
#define HOST_INT_OP(T, op, a, b, out)                                                          \
    switch (op) {                                                                               \
    case TUNA_DEV_LAND: out = (T)(a && b); break;                                               \
    case TUNA_DEV_LOR: out = (T)(a || b); break;                                                \
    case TUNA_DEV_LXOR: out = (T)(!a != !b); break;                                             \
    case TUNA_DEV_BAND: out = (T)(a & b); break;                                                \
    case TUNA_DEV_BOR: out = (T)(a | b); break;                                                 \
    case TUNA_DEV_BXOR: out = (T)(a ^ b); break;                                                \
    default: HOST_OP(T, op, a, b, out)                                                          \
    }

/* Integer + and * computed in the unsigned type (wrapping, as MPI libraries do). */
#define HOST_INT(T, U)                                                                         \
    for (size_t i = 0; i < n; i++) {                                                            \
        T a, b, out;                                                                            \
        memcpy(&a, in + i * sizeof(T), sizeof(T));                                              \
        memcpy(&b, inout + i * sizeof(T), sizeof(T));                                           \
        if (op == TUNA_DEV_SUM)                                                                 \
            out = (T)(U)((U)a + (U)b);                                                          \
        else if (op == TUNA_DEV_PROD)                                                           \
            out = (T)(U)((U)a * (U)b);                                                          \
        else                                                                                    \
            HOST_INT_OP(T, op, a, b, out)                                                       \
        memcpy(inout + i * sizeof(T), &out, sizeof(T));                                         \
    }
#define HOST_FLOAT(T)                                                                          \
    for (size_t i = 0; i < n; i++) {                                                            \
        T a, b, out;                                                                            \
        memcpy(&a, in + i * sizeof(T), sizeof(T));                                              \
        memcpy(&b, inout + i * sizeof(T), sizeof(T));                                           \
        HOST_OP(T, op, a, b, out)                                                               \
        memcpy(inout + i * sizeof(T), &out, sizeof(T));                                         \
    }

static void host_reduce(unsigned char *inout, const unsigned char *in, size_t n,
                        tuna_dev_type t, tuna_dev_op op)
{
    switch (t) {
    case TUNA_DEV_INT8: HOST_INT(int8_t, uint8_t) break;
    case TUNA_DEV_UINT8: HOST_INT(uint8_t, uint8_t) break;
    case TUNA_DEV_INT16: HOST_INT(int16_t, uint16_t) break;
    case TUNA_DEV_UINT16: HOST_INT(uint16_t, uint16_t) break;
    case TUNA_DEV_INT32: HOST_INT(int32_t, uint32_t) break;
    case TUNA_DEV_UINT32: HOST_INT(uint32_t, uint32_t) break;
    case TUNA_DEV_INT64: HOST_INT(int64_t, uint64_t) break;
    case TUNA_DEV_UINT64: HOST_INT(uint64_t, uint64_t) break;
    case TUNA_DEV_FLOAT: HOST_FLOAT(float) break;
    default: HOST_FLOAT(double) break;
    }
}

/* Values: integers from a generator (zeros included, for the logical ops); floating values
 * small integers and halves, so that + and * are exact in any order. */
static void fill_values(unsigned char *p, size_t n, tuna_dev_type t, unsigned seed)
{
    const size_t sz = tuna_dev_type_size(t);
    uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (t == TUNA_DEV_FLOAT) {
            float v = (float)((int)(x % 9) - 4) / 2.0f;
            memcpy(p + i * sz, &v, sz);
        } else if (t == TUNA_DEV_DOUBLE) {
            double v = (double)((int)(x % 9) - 4) / 2.0;
            memcpy(p + i * sz, &v, sz);
        } else {
            uint64_t v = x % 5 == 0 ? 0 : x;
            memcpy(p + i * sz, &v, sz); /* little-endian: the low bytes */
        }
    }
}

static void test_reductions(void)
{
    static const size_t counts[] = {1, 3, 17, 1000, 65537};
    static const size_t offsets[] = {0, 1, 3}; /* in elements: misaligned for vectors */
    int pairs = 0;
    for (int t = 0; t < TUNA_DEV_TYPE_COUNT; t++)
        for (int op = 0; op < TUNA_DEV_OP_COUNT; op++) {
            if (!tuna_dev_reduce_supported((tuna_dev_type)t, (tuna_dev_op)op)) {
                void *d = NULL;
                GPU_CHECK(cudaMalloc(&d, 64));
                if (tuna_dev_reduce(d, d, 4, (tuna_dev_type)t, (tuna_dev_op)op, NULL) == 0)
                    fail("an unsupported type and op was accepted", t, op, 0);
                cudaFree(d);
                continue;
            }
            pairs++;
            const size_t sz = tuna_dev_type_size((tuna_dev_type)t);
            for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
                for (size_t oi = 0; oi < sizeof offsets / sizeof *offsets; oi++) {
                    const size_t n = counts[ci], bytes = n * sz, off = offsets[oi] * sz;
                    unsigned char *a = malloc(bytes), *b = malloc(bytes);
                    fill_values(a, n, (tuna_dev_type)t, (unsigned)(ci * 7 + oi));
                    fill_values(b, n, (tuna_dev_type)t, (unsigned)(ci * 7 + oi + 100));
                    void *ba, *bb;
                    unsigned char *da = dev_room(bytes, off, &ba), *db = dev_room(bytes, off, &bb);
                    GPU_CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
                    GPU_CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
                    GPU_CHECK(tuna_dev_reduce(db, da, n, (tuna_dev_type)t, (tuna_dev_op)op, NULL));
                    GPU_CHECK(cudaDeviceSynchronize());
                    host_reduce(b, a, n, (tuna_dev_type)t, (tuna_dev_op)op);
                    check_room(bb, bytes, off, b, "reduction (type, op, byte)", t, op);
                    check_room(ba, bytes, off, a, "reduction's input changed (type, op, byte)", t,
                               op);
                    cudaFree(ba);
                    cudaFree(bb);
                    free(a);
                    free(b);
                }
        }
    printf("reductions: %d op x type pairs\n", pairs);
}

/* ---------------------------------------------------------------- permutation */

static void test_permutation(void)
{
    static const int ns[] = {1, 2, 5, 9, 17, 64, 100};
    static const size_t blocks[] = {1, 3, 16, 100, 4100};
    static const size_t offsets[] = {0, 1, 8};
    for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
        for (int k = 2; k <= 4; k++) {
            const int P = ns[ni];
            int Q = 1, m = 0;
            while ((long long)Q * k <= P) {
                Q *= k;
                m++;
            }
            int *poff = malloc(sizeof(int) * ((size_t)Q + 1)), *src = malloc(sizeof(int) * (size_t)P);
            tuna_map_permuted_offsets(k, m, Q, P / Q, P % Q, poff);
            for (int r = 0; r < P; r++)
                src[r] = tuna_map_permuted_slot(k, m, P / Q, P % Q, poff, r);
            int *dsrc;
            GPU_CHECK(cudaMalloc((void **)&dsrc, sizeof(int) * (size_t)P));
            GPU_CHECK(cudaMemcpy(dsrc, src, sizeof(int) * (size_t)P, cudaMemcpyHostToDevice));
            for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; bi++)
                for (size_t oi = 0; oi < sizeof offsets / sizeof *offsets; oi++) {
                    const size_t B = blocks[bi], bytes = B * (size_t)P, off = offsets[oi];
                    unsigned char *in = malloc(bytes), *want = malloc(bytes);
                    for (size_t i = 0; i < bytes; i++)
                        in[i] = (unsigned char)(i * 131 + i / 7);
                    for (int p = 0; p < P; p++) /* slot p of out = block src[p] of in */
                        memcpy(want + (size_t)p * B, in + (size_t)src[p] * B, B);
                    void *bi_, *bo;
                    unsigned char *din = dev_room(bytes, off, &bi_), *dout = dev_room(bytes, off + 3, &bo);
                    GPU_CHECK(cudaMemcpy(din, in, bytes, cudaMemcpyHostToDevice));
                    GPU_CHECK(tuna_dev_permute_blocks(dout, din, B, P, dsrc, NULL));
                    GPU_CHECK(cudaDeviceSynchronize());
                    check_room(bo, bytes, off + 3, want, "permutation (P, block)", P, (long)B);
                    check_room(bi_, bytes, off, in, "permutation's input changed (P, block)", P,
                               (long)B);
                    cudaFree(bi_);
                    cudaFree(bo);
                    free(in);
                    free(want);
                }
            cudaFree(dsrc);
            free(poff);
            free(src);
        }
    printf("permutation: done\n");
}

/* ---------------------------------------------------------------- pack / unpack */

static void test_pack(void)
{
    static const size_t nblocks[] = {1, 7, 100};
    static const size_t lens[] = {1, 3, 16, 100};
    static const size_t gaps[] = {0, 1, 13, 16};
    static const size_t offsets[] = {0, 1, 4};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 4; b++)
            for (size_t c = 0; c < 4; c++)
                for (size_t d = 0; d < 3; d++) {
                    const size_t nb = nblocks[a], len = lens[b], stride = len + gaps[c],
                                 off = offsets[d], sbytes = stride * (nb - 1) + len,
                                 pbytes = nb * len;
                    unsigned char *strided = malloc(sbytes), *packed = malloc(pbytes),
                                  *unpacked = malloc(sbytes);
                    for (size_t i = 0; i < sbytes; i++)
                        strided[i] = (unsigned char)(i * 37 + 11);
                    memset(unpacked, SENT, sbytes); /* the gaps keep the sentinel */
                    for (size_t j = 0; j < nb; j++) {
                        memcpy(packed + j * len, strided + j * stride, len);
                        memcpy(unpacked + j * stride, strided + j * stride, len);
                    }
                    void *bs, *bp, *bu;
                    unsigned char *ds = dev_room(sbytes, off, &bs), *dp = dev_room(pbytes, off + 1, &bp),
                                  *du = dev_room(sbytes, off, &bu);
                    GPU_CHECK(cudaMemcpy(ds, strided, sbytes, cudaMemcpyHostToDevice));
                    GPU_CHECK(tuna_dev_pack(dp, ds, nb, len, stride, NULL));
                    GPU_CHECK(tuna_dev_unpack(du, dp, nb, len, stride, NULL));
                    GPU_CHECK(cudaDeviceSynchronize());
                    check_room(bp, pbytes, off + 1, packed, "pack (blocks, length)", (long)nb,
                               (long)len);
                    check_room(bu, sbytes, off, unpacked, "unpack (blocks, length)", (long)nb,
                               (long)len);
                    cudaFree(bs);
                    cudaFree(bp);
                    cudaFree(bu);
                    free(strided);
                    free(packed);
                    free(unpacked);
                }
    printf("pack / unpack: done\n");
}

int main(void)
{
    gpu_require_device("device_kernels");
    test_reductions();
    test_permutation();
    test_pack();
    printf("device kernels: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
