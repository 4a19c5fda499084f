/*
 * tuna's device kernels (CUDA; built where CMake finds the CUDA toolkit, TUNA_CUDA): the
 * permutation of permuted recursive multiplying, reductions of every predefined op on
 * every C type tuna's allreduce reduces, and pack/unpack of strided blocks. Each runs
 * asynchronously on `stream` (a cudaStream_t; NULL: the default stream) and returns a
 * cudaError_t (0: launched). Pointers are device memory. docs/gpu.md: they are tested
 * against host code on a GPU (the gpu label). libtuna-cuda exports them; libtuna's CUDA
 * transports load it at run time and reduce with tuna_dev_reduce (src/transport/cuda_kernels.c).
 */
#ifndef TUNA_DEVICE_H
#define TUNA_DEVICE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types: the C types of MPI's predefined integer and floating types. */
typedef enum tuna_dev_type {
    TUNA_DEV_INT8, TUNA_DEV_UINT8, TUNA_DEV_INT16, TUNA_DEV_UINT16, TUNA_DEV_INT32,
    TUNA_DEV_UINT32, TUNA_DEV_INT64, TUNA_DEV_UINT64, TUNA_DEV_FLOAT, TUNA_DEV_DOUBLE,
    TUNA_DEV_TYPE_COUNT
} tuna_dev_type;

/* MPI's predefined ops but MPI_MAXLOC, MPI_MINLOC and MPI_REPLACE / MPI_NO_OP. The
 * logical and bitwise ops take the integer types only (MPI's rule). */
typedef enum tuna_dev_op {
    TUNA_DEV_SUM, TUNA_DEV_PROD, TUNA_DEV_MAX, TUNA_DEV_MIN, TUNA_DEV_LAND, TUNA_DEV_LOR,
    TUNA_DEV_LXOR, TUNA_DEV_BAND, TUNA_DEV_BOR, TUNA_DEV_BXOR, TUNA_DEV_OP_COUNT
} tuna_dev_op;

/* Whether the kernels reduce `op` on `type`. */
int tuna_dev_reduce_supported(tuna_dev_type type, tuna_dev_op op);
/* Bytes of one element of `type`. */
size_t tuna_dev_type_size(tuna_dev_type type);

/* inout[i] = in[i] op inout[i] for i < count (MPI_Reduce_local's order). An unsupported
 * type and op: cudaErrorInvalidValue, nothing launched. */
int tuna_dev_reduce(void *inout, const void *in, size_t count, tuna_dev_type type,
                    tuna_dev_op op, void *stream);

/* out block p = in block src[p], p < n, blocks of `block` bytes; src (device memory) a
 * permutation of [0, n) (out and in do not overlap). For permuted recursive multiplying,
 * src[r] = tuna_map_permuted_slot(..., r) (index_maps.h) puts the blocks in rank order. */
int tuna_dev_permute_blocks(void *out, const void *in, size_t block, int n, const int *src,
                            void *stream);

/* Pack: nblocks blocks of blocklen bytes, stride bytes apart in `in`, to contiguous `out`;
 * unpack: the reverse. */
int tuna_dev_pack(void *out, const void *in, size_t nblocks, size_t blocklen, size_t stride,
                  void *stream);
int tuna_dev_unpack(void *out, const void *in, size_t nblocks, size_t blocklen, size_t stride,
                    void *stream);

#ifdef __cplusplus
}
#endif

#endif /* TUNA_DEVICE_H */
