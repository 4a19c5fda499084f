/*
 * tuna's GPU kernels (src/device/, docs/gpu.md) as libtuna's CUDA transports call them:
 * libtuna-cuda, built where CUDA is and installed next to libtuna, opened at run time on the
 * first reduction on device memory, so libtuna itself never links CUDA. Where it cannot be
 * opened (not built, no runtime) the transports reduce on the host as before.
 */
#ifndef TUNA_CUDA_KERNELS_H
#define TUNA_CUDA_KERNELS_H

#include <mpi.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct tuna_cuda_kernels {
    /* inout = in op inout, count elements of (type, op) codes from tuna_cuda_kernel_codes,
     * on stream (a cudaStream_t), asynchronously: tuna_dev_reduce (src/device/tuna_device.h). */
    int (*reduce)(void *inout, const void *in, size_t count, int type, int op, void *stream);
} tuna_cuda_kernels;

/* The kernels, or NULL where libtuna-cuda cannot be opened (tried once per process).
 * TUNA_CUDA_KERNELS: a path to open instead, or 0: none. */
const tuna_cuda_kernels *tuna_cuda_kernels_get(void);

/* Whether the kernels reduce (type, op), MPI's predefined ones they cover; their codes. */
bool tuna_cuda_kernel_codes(MPI_Datatype type, MPI_Op op, int *dev_type, int *dev_op);

#endif /* TUNA_CUDA_KERNELS_H */
