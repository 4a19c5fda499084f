/*
 * The transport seam (issue 50): how an algorithm moves data. Algorithms post sends and
 * receives of byte regions (or, on a transport that takes them, of MPI datatypes), make
 * local copies and reductions, and complete what they posted, all through a transport;
 * no algorithm file calls MPI point-to-point, MPI_Reduce_local or memcpy itself
 * (tests/check_transport_seam.sh keeps it so).
 *
 * Design:
 *   - A transport is a const table of functions; the operation holds a pointer to one
 *     (tuna_op.tp for the engine's completions, the family's argument record's tp for the
 *     algorithm's posts and copies: both point at the same transport). A transport that needs
 *     per-operation state (a CUDA stream and event) is a larger struct whose first member is
 *     the table, one per operation, so `tp` is also the operation's handle.
 *   - Completion handles are MPI_Request slots the step owns (the engine's op->req): MPI's
 *     own for the MPI transport. A stream transport posts a step's operations as one group on
 *     its stream, leaves MPI_REQUEST_NULL in the slots of the operations it carried, and
 *     completes the group on the event it records when the engine first asks (settle / any):
 *     the engine asks only after the step returned, so the group is closed by then.
 *   - `isend_typed` and friends are set only on a transport that takes MPI datatypes (NULL
 *     otherwise: tuna_tp_takes_datatypes is false and the rows that send derived datatypes,
 *     TuNA's engine, mesh, padded Bruck and k-ring, must hand it packed bytes).
 *   - MPI on host memory (mpi_host.c) is the first transport and today's behaviour: the same
 *     MPI calls with the same arguments in the same order as before the seam. Its calls are
 *     taken directly, inlined here, when `tp` is it (a pointer compare): the per-call budget
 *     (3% of tuna's own instructions, docs/results/local.md) has no room for an indirect call
 *     per message. Every other transport goes through its table.
 * "Adding a transport" in docs/contributing.md names every file a new one touches.
 */
#ifndef TUNA_TRANSPORT_H
#define TUNA_TRANSPORT_H

#include <mpi.h>

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct tuna_transport tuna_transport;

struct tuna_transport {
    const char *name;
    /* Post a send / receive of `bytes` bytes at buf to / from peer (tag, comm); its
     * completion in *req. Any size, including above INT_MAX. */
    int (*isend)(const tuna_transport *tp, const void *buf, size_t bytes, int peer, int tag,
                 MPI_Comm comm, MPI_Request *req);
    int (*irecv)(const tuna_transport *tp, void *buf, size_t bytes, int peer, int tag,
                 MPI_Comm comm, MPI_Request *req);
    /* The same with count elements of an MPI datatype: NULL on a transport that does not
     * take datatypes. sendrecv_typed is the blocking exchange of the two-rank paths. */
    int (*isend_typed)(const tuna_transport *tp, const void *buf, int count, MPI_Datatype type,
                       int peer, int tag, MPI_Comm comm, MPI_Request *req);
    int (*irecv_typed)(const tuna_transport *tp, void *buf, int count, MPI_Datatype type, int peer,
                       int tag, MPI_Comm comm, MPI_Request *req);
    int (*sendrecv_typed)(const tuna_transport *tp, const void *sbuf, int scount,
                          MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                          MPI_Datatype rtype, int source, int rtag, MPI_Comm comm);
    /* Local data movement: copy (regions apart), move (regions may overlap). */
    void (*copy)(const tuna_transport *tp, void *dst, const void *src, size_t bytes);
    void (*move)(const tuna_transport *tp, void *dst, const void *src, size_t bytes);
    /* inout = in op inout over count elements (MPI_Reduce_local's operands and order). */
    int (*reduce)(const tuna_transport *tp, const void *in, void *inout, int count,
                  MPI_Datatype type, MPI_Op op);
    /* Completion of req[0..n): all of them (block, or *flag = 0 while one is pending; the
     * statuses in status[] unless NULL; on a failure every request is completed and the
     * failed one's own code returned: src/transport/mpi_host.c); one of them (*index, or
     * MPI_UNDEFINED with *flag set when none is active); every non-null one, errors
     * ignored (a failed step's clean-up). */
    int (*settle)(const tuna_transport *tp, int n, MPI_Request *req, MPI_Status *status, bool block,
                  int *flag);
    int (*any)(const tuna_transport *tp, int n, MPI_Request *req, int *index, bool block,
               int *flag);
    void (*complete)(const tuna_transport *tp, int n, MPI_Request *req);
    /* Cancel a posted receive whose peer will not send (the allocation-failure policy,
     * docs/testing.md); free a completed request the library kept (Open MPI keeps a failed
     * one). */
    void (*cancel)(const tuna_transport *tp, MPI_Request *req);
    void (*release)(const tuna_transport *tp, MPI_Request *req);
};

/* MPI on host memory: src/transport/mpi_host.c. (NCCL on a CUDA stream, one per call:
 * src/transport/nccl.h, built only into libtuna-nccl; docs/nccl.md.) */
extern const tuna_transport tuna_transport_mpi_host;

/* The MPI host transport's calls that are not one MPI call (inlined below); post_large: a
 * send (send) or receive of more than INT_MAX bytes. */
int tuna_mpi_host_post_large(bool send, void *buf, size_t bytes, int peer, int tag,
                             MPI_Comm comm, MPI_Request *req);
int tuna_mpi_host_settle(int n, MPI_Request *req, MPI_Status *status, bool block, int *flag);
int tuna_mpi_host_any(int n, MPI_Request *req, int *index, bool block, int *flag);
void tuna_mpi_host_complete(int n, MPI_Request *req);

static inline bool tuna_tp_is_mpi_host(const tuna_transport *tp)
{
    return tp == &tuna_transport_mpi_host;
}

/* Whether tp takes MPI datatypes (else the caller packs into bytes). */
static inline bool tuna_tp_takes_datatypes(const tuna_transport *tp)
{
    return tp->isend_typed != NULL;
}

/* Errors: MPI's codes, with tuna's message for the post that failed (tuna_error_set). */
int tuna_tp_failed(int rc, const char *what, size_t bytes);

/* tuna_tp_isend (send: buf is only read) and tuna_tp_irecv, one path: inlined into each with
 * send a constant, so each keeps its own branch and the host transport's post is one MPI
 * call. */
static inline __attribute__((always_inline)) int
tuna_tp_post_bytes(const tuna_transport *tp, bool send, void *buf, size_t bytes, int peer,
                   int tag, MPI_Comm comm, MPI_Request *req)
{
    if (!tuna_tp_is_mpi_host(tp))
        return send ? tp->isend(tp, buf, bytes, peer, tag, comm, req)
                    : tp->irecv(tp, buf, bytes, peer, tag, comm, req);
    if (bytes > (size_t)INT_MAX)
        return tuna_mpi_host_post_large(send, buf, bytes, peer, tag, comm, req);
    int rc = send ? PMPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, comm, req)
                  : PMPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, comm, req);
    return rc == MPI_SUCCESS ? rc : tuna_tp_failed(rc, send ? "MPI_Isend" : "MPI_Irecv", bytes);
}

static inline int tuna_tp_isend(const tuna_transport *tp, const void *buf, size_t bytes, int peer,
                                int tag, MPI_Comm comm, MPI_Request *req)
{
    return tuna_tp_post_bytes(tp, true, (void *)buf, bytes, peer, tag, comm, req);
}

static inline int tuna_tp_irecv(const tuna_transport *tp, void *buf, size_t bytes, int peer,
                                int tag, MPI_Comm comm, MPI_Request *req)
{
    return tuna_tp_post_bytes(tp, false, buf, bytes, peer, tag, comm, req);
}

/* The typed calls return MPI's code as it is: each caller words its own message. */
static inline int tuna_tp_isend_typed(const tuna_transport *tp, const void *buf, int count,
                                      MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                                      MPI_Request *req)
{
    if (!tuna_tp_is_mpi_host(tp))
        return tp->isend_typed(tp, buf, count, type, peer, tag, comm, req);
    return PMPI_Isend(buf, count, type, peer, tag, comm, req);
}

static inline int tuna_tp_irecv_typed(const tuna_transport *tp, void *buf, int count,
                                      MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                                      MPI_Request *req)
{
    if (!tuna_tp_is_mpi_host(tp))
        return tp->irecv_typed(tp, buf, count, type, peer, tag, comm, req);
    return PMPI_Irecv(buf, count, type, peer, tag, comm, req);
}

static inline int tuna_tp_sendrecv_typed(const tuna_transport *tp, const void *sbuf, int scount,
                                         MPI_Datatype stype, int dest, int stag, void *rbuf,
                                         int rcount, MPI_Datatype rtype, int source, int rtag,
                                         MPI_Comm comm)
{
    if (!tuna_tp_is_mpi_host(tp))
        return tp->sendrecv_typed(tp, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source,
                                  rtag, comm);
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                        MPI_STATUS_IGNORE);
}

static inline void tuna_tp_copy(const tuna_transport *tp, void *dst, const void *src, size_t bytes)
{
    if (tuna_tp_is_mpi_host(tp))
        memcpy(dst, src, bytes);
    else
        tp->copy(tp, dst, src, bytes);
}

static inline void tuna_tp_move(const tuna_transport *tp, void *dst, const void *src, size_t bytes)
{
    if (tuna_tp_is_mpi_host(tp))
        memmove(dst, src, bytes);
    else
        tp->move(tp, dst, src, bytes);
}

static inline int tuna_tp_reduce(const tuna_transport *tp, const void *in, void *inout, int count,
                                 MPI_Datatype type, MPI_Op op)
{
    if (!tuna_tp_is_mpi_host(tp))
        return tp->reduce(tp, in, inout, count, type, op);
    return PMPI_Reduce_local(in, inout, count, type, op);
}

static inline int tuna_tp_settle(const tuna_transport *tp, int n, MPI_Request *req,
                                 MPI_Status *status, bool block, int *flag)
{
    if (!tuna_tp_is_mpi_host(tp))
        return tp->settle(tp, n, req, status, block, flag);
    return tuna_mpi_host_settle(n, req, status, block, flag);
}

static inline int tuna_tp_any(const tuna_transport *tp, int n, MPI_Request *req, int *index,
                              bool block, int *flag)
{
    if (!tuna_tp_is_mpi_host(tp))
        return tp->any(tp, n, req, index, block, flag);
    return tuna_mpi_host_any(n, req, index, block, flag);
}

static inline void tuna_tp_complete(const tuna_transport *tp, int n, MPI_Request *req)
{
    if (tuna_tp_is_mpi_host(tp))
        tuna_mpi_host_complete(n, req);
    else
        tp->complete(tp, n, req);
}

static inline void tuna_tp_cancel(const tuna_transport *tp, MPI_Request *req)
{
    if (tuna_tp_is_mpi_host(tp))
        PMPI_Cancel(req);
    else
        tp->cancel(tp, req);
}

static inline void tuna_tp_release(const tuna_transport *tp, MPI_Request *req)
{
    if (tuna_tp_is_mpi_host(tp))
        PMPI_Request_free(req);
    else
        tp->release(tp, req);
}

#endif /* TUNA_TRANSPORT_H */
