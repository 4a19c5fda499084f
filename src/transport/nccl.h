/*
 * The NCCL transport (docs/nccl.md): tuna's transport seam (transport.h) over ncclSend and
 * ncclRecv on the caller's stream. One per call: the struct's first member is the table, so a
 * `const tuna_transport *` to it is the call's handle.
 *
 *   - Posts (isend, irecv) open a group (ncclGroupStart) when none is open and join it; a
 *     step's posts are one group, closed (ncclGroupEnd) when the row calls settle / any.
 *     Every post takes one slot, zero-byte ones too (those are not given to NCCL: both
 *     sides know the size is zero); a group that reaches `group_limit` slots (even) is closed
 *     and a new one opened. So a step's groups split at the same slot positions on every rank,
 *     and between slot pairs. Rows post a step as pairs, "receive from a, send to b", such
 *     that the partner's matching receive or send is in its pair of the same index (send to
 *     r+d next to receive from r-d: rank r+d's pair d receives from r): then a split never
 *     leaves a send and its receive in groups of different index, which on NCCL (one kernel
 *     per group, in stream order) deadlocks. An odd split would: pair d's receive in group
 *     g on one rank, its partner's send in group g+1. A list of receives alone (a leader's
 *     fold-in) may split anywhere: its senders wait on nothing else.
 *   - Completion is stream order: after settle, every later post, copy and reduction on the
 *     stream sees the step's data; nothing waits on the host. The request slots are left
 *     MPI_REQUEST_NULL. tuna_nccl_tp_wait records the event after the last group and waits
 *     for it on the host (the rows that need data on the host, and failures).
 *   - copy: cudaMemcpyAsync device to device on the stream; move (regions that overlap) is
 *     not supported (an error recorded); reduce: tuna's device kernels (src/device/) on the
 *     stream, or, in the stand-in build for tests (TUNA_NCCL_HOST_REDUCE), MPI_Reduce_local
 *     on the stand-in's host memory.
 *   - Errors of the calls that return none (copy, move) are kept in `error` and returned by
 *     the next settle; the first error's message is tuna's (tuna_error_string).
 * No MPI datatypes (isend_typed and friends are NULL), no cancel: a post cannot be withdrawn
 * from a group, so the rows post nothing they might not complete.
 */
#ifndef TUNA_TRANSPORT_NCCL_H
#define TUNA_TRANSPORT_NCCL_H

#include "transport.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

/* The default slots per group: NCCL's limit on operations in one group (2048, LLNL/Aluminum#75).
 * TUNA_NCCL_GROUP_LIMIT overrides it (tests split with small limits). */
#define TUNA_NCCL_GROUP_LIMIT_DEFAULT 2048

typedef struct tuna_nccl_tp {
    tuna_transport table; /* first: the handle */
    ncclComm_t comm;
    cudaStream_t stream;
    cudaEvent_t event; /* created on the first tuna_nccl_tp_wait */
    int rank, size;
    size_t group_limit; /* slots per group, >= 2 */
    size_t open;        /* slots in the open group; 0: none open */
    int error;          /* the first error of copy / move, returned by the next settle */
    long groups;        /* groups closed (ncclGroupEnd calls), for the tests */
    long slots;         /* slots posted */
} tuna_nccl_tp;

/* Fill *t for a call on comm and stream (rank and size from NCCL). MPI error codes. */
int tuna_nccl_tp_open(tuna_nccl_tp *t, ncclComm_t comm, cudaStream_t stream);
/* Close the open group (stream order) and return the first error kept. */
int tuna_nccl_tp_flush(tuna_nccl_tp *t);
/* Flush, record the event and wait for it on the host. */
int tuna_nccl_tp_wait(tuna_nccl_tp *t);
/* Flush and free what open created (the event); returns the first error. */
int tuna_nccl_tp_close(tuna_nccl_tp *t);

/* Device memory for a row's temporaries, stream-ordered (cudaMallocAsync / cudaFreeAsync
 * on the call's stream): freed after the work posted before the free. MPI error codes. */
int tuna_nccl_tp_alloc(tuna_nccl_tp *t, size_t bytes, void **p);
void tuna_nccl_tp_free(tuna_nccl_tp *t, void *p);

/* Copies between the host and device memory on the stream (cudaMemcpyAsync): the host side
 * of a device-to-host copy is valid after tuna_nccl_tp_wait; errors kept as copy's. */
void tuna_nccl_tp_to_device(tuna_nccl_tp *t, void *dst, const void *src, size_t bytes);
void tuna_nccl_tp_to_host(tuna_nccl_tp *t, void *dst, const void *src, size_t bytes);

/* The slots per group from TUNA_NCCL_GROUP_LIMIT (>= 2, rounded down to even) or the default. */
size_t tuna_nccl_group_limit(void);

/* tuna's error for a failed NCCL / CUDA call (MPI_ERR_OTHER with NCCL's / CUDA's words). */
int tuna_nccl_failed(ncclResult_t rc, const char *call);
/* The NCCL result of this thread's last failed NCCL call (tuna_nccl_failed), for the drop-in
 * (src/nccl/dropin.c), which clears it before each call. */
extern _Thread_local ncclResult_t tuna_nccl_last_result;
int tuna_nccl_cuda_failed(cudaError_t rc, const char *call);

#endif /* TUNA_TRANSPORT_NCCL_H */
