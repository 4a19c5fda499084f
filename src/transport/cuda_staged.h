/*
 * The staging transport (cuda_staged.c; docs/gpu.md): byte regions in device memory over an
 * MPI that is not CUDA-aware. A send's region is copied device-to-host into pinned bounce
 * memory (cudaMemcpyAsync on the state's stream, then synchronised) and sent from
 * there; a receive lands in bounce memory and is copied host-to-device when the engine
 * completes it; local copies are device-to-device copies. Host code never reads or writes
 * the device regions: only CUDA's copies do. No MPI datatypes (isend_typed is NULL).
 * Over a CUDA-aware MPI (tuna_memory_mpi_cuda_aware) it posts the device regions to MPI as
 * they are instead ("direct"), and bounces nothing.
 * Reductions: both operands copied into pinned memory, MPI_Reduce_local there (host code on
 * pinned host memory), the result copied back (predefined types and ops: memory_route.c).
 *
 * CUDA's runtime (libcudart) is loaded at run time on the first call with device buffers
 * that a device-capable row serves, so one libtuna serves machines with and without CUDA.
 */
#ifndef TUNA_CUDA_STAGED_H
#define TUNA_CUDA_STAGED_H

#include "../core/tuna_internal.h"
#include "transport.h"

#include <stdbool.h>
#include <stddef.h>

struct tuna_staged;

/* Whether CUDA's runtime could be loaded, has every entry the transport calls and sees a
 * device (tried once per process). */
bool tuna_staged_available(void);

/* ctx's staging transport (its stream and bounce memory, made on first use and kept for
 * the communicator's life, like its scratch): *tp, or an error (no runtime, no stream). */
int tuna_staged_get(tuna_ctx *ctx, const tuna_transport **tp);

/* The first local copy or move that failed since the last time asked (the table's copy
 * returns nothing): its code, else MPI_SUCCESS. The front end asks after each call, so a
 * failed device copy is the call's error, never silent. */
int tuna_staged_result(const tuna_transport *tp);

/* A staging state of its own (a nonblocking operation's, like its scratch, or a plan's, kept
 * from init to free): *s and its transport *tp, or an error; tuna_staged_free frees it. */
int tuna_staged_open(struct tuna_staged **s, const tuna_transport **tp);

/* Free a staging state (a context's, an operation's, a plan's; NULL: nothing). */
void tuna_staged_free(struct tuna_staged *s);

#endif /* TUNA_CUDA_STAGED_H */
