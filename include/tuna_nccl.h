/*
 * tuna_nccl.h - tuna's collectives over NCCL (docs/nccl.md).
 *
 * Installed where CMake found CUDA and NCCL (TUNA_NCCL). Link with -ltuna-nccl, NCCL and
 * libcudart (in tuna's build tree: tuna::tuna_nccl); libtuna-nccl holds the whole of libtuna
 * too (tuna.h: options, tuna_error_string).
 *
 * Like NCCL's own collectives, each call enqueues its work on `stream` and returns: the
 * buffers are device memory, read and written when the stream gets there, and must stay
 * valid until then (alltoallv's `tuna` row alone also waits for the stream inside the call,
 * once per round that forwards blocks: their sizes). Every rank of `comm` makes the same
 * calls in the same order with the same algorithm. Counts and displacements are host arrays,
 * in elements of `type`.
 *
 * `opt`: NULL for the NCCL path's default (alltoallv / alltoall: linear; allgather and
 * allreduce: ring), or options parsed with tuna_options_parse() for the matching collective
 * (TUNA_ALLTOALLV, TUNA_ALLTOALL, TUNA_ALLGATHER, TUNA_ALLREDUCE); "vendor" is NCCL's own call. Only the rows listed in docs/nccl.md run on
 * the NCCL path; any other is refused with MPI_ERR_ARG and a message naming the rows that do.
 *
 * Returns an MPI error code (MPI_SUCCESS on success); tuna_error_string() names the cause. A
 * failed NCCL or CUDA call is MPI_ERR_OTHER with NCCL's or CUDA's words.
 */
#ifndef TUNA_NCCL_H
#define TUNA_NCCL_H

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stddef.h>

#include "tuna.h"

#ifdef __cplusplus
extern "C" {
#endif
#if defined(TUNA_BUILDING) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Non-uniform all-to-all: sendcounts[j] elements at sendbuf + sdispls[j] go to rank j, which
 * receives them at its recvbuf + rdispls[i] (recvcounts[i] elements). No in-place form. */
int tuna_nccl_alltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                        void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                        ncclDataType_t type, ncclComm_t comm, cudaStream_t stream,
                        const tuna_options *opt);

/* All-to-all of `count` elements per pair (ncclAlltoAll's arguments). */
int tuna_nccl_alltoall(const void *sendbuf, void *recvbuf, size_t count, ncclDataType_t type,
                       ncclComm_t comm, cudaStream_t stream, const tuna_options *opt);

/* Allgather of `sendcount` elements per rank (ncclAllGather's arguments; in place when
 * sendbuf == recvbuf + rank * sendcount elements). */
int tuna_nccl_allgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                        ncclDataType_t type, ncclComm_t comm, cudaStream_t stream,
                        const tuna_options *opt);

/* Allreduce of `count` elements (ncclAllReduce's arguments; in place when sendbuf ==
 * recvbuf): ncclSum, ncclProd, ncclMax, ncclMin on the 8-, 32- and 64-bit integers, float and
 * double (tuna's device kernels; not ncclAvg, half, bfloat16, fp8). */
int tuna_nccl_allreduce(const void *sendbuf, void *recvbuf, size_t count, ncclDataType_t type,
                        ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
                        const tuna_options *opt);

#if defined(TUNA_BUILDING) && defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif /* TUNA_NCCL_H */
