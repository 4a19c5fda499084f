/*
 * A stand-in for libtuna-cuda (src/device/, built as libtuna-cuda.so in its own test
 * directory; TUNA_CUDA_KERNELS names it): its reduction as the CUDA transports call it, on a
 * machine without a GPU. The operands are brought to host memory with the runtime's copies
 * (the stand-in runtime, tests/support/mock_cudart.c, loaded by the test), reduced with
 * MPI_Reduce_local and copied back, so device memory is still touched only by the runtime.
 * mock_tuna_cuda_calls(): the reductions it ran (a test checks the kernel path was taken).
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "../../src/device/tuna_device.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static long calls;

long mock_tuna_cuda_calls(void);
long mock_tuna_cuda_calls(void)
{
    return calls;
}

static MPI_Datatype mpi_type(int t)
{
    switch (t) {
    case TUNA_DEV_INT8: return MPI_INT8_T;
    case TUNA_DEV_UINT8: return MPI_UINT8_T;
    case TUNA_DEV_INT16: return MPI_INT16_T;
    case TUNA_DEV_UINT16: return MPI_UINT16_T;
    case TUNA_DEV_INT32: return MPI_INT32_T;
    case TUNA_DEV_UINT32: return MPI_UINT32_T;
    case TUNA_DEV_INT64: return MPI_INT64_T;
    case TUNA_DEV_UINT64: return MPI_UINT64_T;
    case TUNA_DEV_FLOAT: return MPI_FLOAT;
    case TUNA_DEV_DOUBLE: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

static MPI_Op mpi_op(int o)
{
    const MPI_Op ops[TUNA_DEV_OP_COUNT] = {MPI_SUM,  MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
                                           MPI_LOR,  MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    return o >= 0 && o < TUNA_DEV_OP_COUNT ? ops[o] : MPI_OP_NULL;
}

size_t tuna_dev_type_size(tuna_dev_type type)
{
    const int sizes[TUNA_DEV_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    return type < TUNA_DEV_TYPE_COUNT ? (size_t)sizes[type] : 0;
}

int tuna_dev_reduce(void *inout, const void *in, size_t count, tuna_dev_type type,
                    tuna_dev_op op, void *stream)
{
    int (*copy)(void *, const void *, size_t, int, void *);
    void *p = dlsym(RTLD_DEFAULT, "cudaMemcpyAsync");
    const MPI_Datatype t = mpi_type((int)type);
    const MPI_Op o = mpi_op((int)op);
    if (!p || t == MPI_DATATYPE_NULL || o == MPI_OP_NULL || count > INT_MAX)
        return 1; /* cudaErrorInvalidValue */
    memcpy(&copy, &p, sizeof p);
    const size_t bytes = count * tuna_dev_type_size(type);
    char *a = malloc(bytes + 1), *b = malloc(bytes + 1);
    int e = a && b ? 0 : 2;
    if (!e && bytes)
        e = copy(a, in, bytes, 4, stream);
    if (!e && bytes)
        e = copy(b, inout, bytes, 4, stream);
    if (!e && PMPI_Reduce_local(a, b, (int)count, t, o) != MPI_SUCCESS)
        e = 1;
    if (!e && bytes)
        e = copy(inout, b, bytes, 4, stream);
    free(a);
    free(b);
    calls += !e;
    return e;
}
