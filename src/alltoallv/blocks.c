/* Block-level helpers shared by the alltoallv algorithms. */
#include "alltoallv.h"

#include <stdlib.h>
#include <string.h>

/* A transport that takes no datatypes (the staging transport, src/transport/cuda_staged.c)
 * is given contiguous types only (src/core/memory_route.c): a block is its bytes. */
int tuna_a2av_isend_block(const tuna_a2av_args *a, int peer, int tag, MPI_Request *req)
{
    if (!tuna_tp_takes_datatypes(a->tp))
        return tuna_tp_isend(a->tp, tuna_sblock(a, peer), (size_t)tuna_scount(a, peer) * a->ssize,
                             peer, tag + a->tag_shift, a->ctx->comm, req);
    if (a->scounts) /* int counts: the common case, no conversion */
        TUNA_MPI_CHECK(tuna_tp_isend_typed(a->tp, tuna_sblock(a, peer), a->scounts[peer], a->stype,
                                           peer, tag + a->tag_shift, a->ctx->comm, req));
    else
        return tuna_a2av_send_large(a, peer, tag, req);
    return MPI_SUCCESS;
}

int tuna_a2av_irecv_block(const tuna_a2av_args *a, int peer, int tag, MPI_Request *req)
{
    if (!tuna_tp_takes_datatypes(a->tp))
        return tuna_tp_irecv(a->tp, tuna_rblock(a, peer), (size_t)tuna_rcount(a, peer) * a->rsize,
                             peer, tag + a->tag_shift, a->ctx->comm, req);
    if (a->rcounts) {
        TUNA_MPI_CHECK(tuna_tp_irecv_typed(a->tp, tuna_rblock(a, peer), a->rcounts[peer], a->rtype,
                                           peer, tag + a->tag_shift, a->ctx->comm, req));
        return MPI_SUCCESS;
    }
    int n;
    bool made;
    MPI_Datatype t;
    int rc = tuna_message_type(a->rcounts_l[peer], a->rtype, a->rext, &n, &t, &made);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = tuna_tp_irecv_typed(a->tp, tuna_rblock(a, peer), n, t, peer, tag + a->tag_shift,
                             a->ctx->comm, req);
    if (made)
        PMPI_Type_free(&t); /* the pending receive keeps what it needs */
    return rc == MPI_SUCCESS ? rc : tuna_error_set(rc, "MPI_Irecv of block %d failed", peer);
}

int tuna_a2av_send_large(const tuna_a2av_args *a, int peer, int tag, MPI_Request *req)
{
    int n;
    bool made;
    MPI_Datatype t;
    int rc = tuna_message_type(tuna_scount(a, peer), a->stype, a->sext, &n, &t, &made);
    if (rc != MPI_SUCCESS)
        return rc;
    tag += a->tag_shift;
    rc = tuna_tp_isend_typed(a->tp, tuna_sblock(a, peer), n, t, peer, tag, a->ctx->comm, req);
    if (made)
        PMPI_Type_free(&t);
    return rc == MPI_SUCCESS ? rc : tuna_error_set(rc, "sending block %d failed", peer);
}

int tuna_a2av_copy_self(const tuna_a2av_args *a)
{
    int me = a->rank;
    size_t bytes = (size_t)tuna_scount(a, me) * a->ssize;
    if (bytes == 0)
        return MPI_SUCCESS;
    if (a->scontig && a->rcontig) {
        tuna_tp_copy(a->tp, tuna_rblock(a, me), tuna_sblock(a, me), bytes);
        return MPI_SUCCESS;
    }
    if (a->scontig) /* unpack straight from the send block */
        return tuna_unpack_block(tuna_sblock(a, me), tuna_rblock(a, me), tuna_rcount(a, me),
                                 a->rtype, a->rext, a->rsize, a->ctx->comm);
    if (a->rcontig)
        return tuna_pack_block(tuna_sblock(a, me), tuna_scount(a, me), a->stype, a->sext,
                               a->ssize, tuna_rblock(a, me), a->ctx->comm);
    char *tmp = tuna_malloc(bytes);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    int rc = tuna_pack_block(tuna_sblock(a, me), tuna_scount(a, me), a->stype, a->sext,
                             a->ssize, tmp, a->ctx->comm);
    if (rc == MPI_SUCCESS)
        rc = tuna_unpack_block(tmp, tuna_rblock(a, me), tuna_rcount(a, me), a->rtype, a->rext,
                               a->rsize, a->ctx->comm);
    free(tmp);
    return rc;
}

int tuna_bytes_view_open(const tuna_a2av_args *a, tuna_bytes_view *v)
{
    int P = a->size;
    memset(v, 0, sizeof *v);
    v->sbytes = tuna_malloc(sizeof(size_t) * 2 * (size_t)P);
    v->soff_own = tuna_malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    if (!v->sbytes || !v->soff_own) {
        free(v->sbytes);
        free(v->soff_own);
        return MPI_ERR_NO_MEM;
    }
    v->rbytes = v->sbytes + P;
    v->roff_own = v->soff_own + P;
    size_t stot = 0, rtot = 0;
    for (int j = 0; j < P; j++) {
        v->sbytes[j] = (size_t)tuna_scount(a, j) * a->ssize;
        v->rbytes[j] = (size_t)tuna_rcount(a, j) * a->rsize;
        v->soff_own[j] = (MPI_Aint)stot;
        v->roff_own[j] = (MPI_Aint)rtot;
        stot += v->sbytes[j];
        rtot += v->rbytes[j];
    }
    if (a->scontig) {
        v->sbase = a->sbuf;
        v->soff = a->sdisp;
    } else {
        v->spack = tuna_malloc(stot);
        if (!v->spack)
            return tuna_bytes_view_close(a, v, MPI_ERR_NO_MEM);
        for (int j = 0; j < P; j++) {
            int rc = tuna_pack_block(tuna_sblock(a, j), tuna_scount(a, j), a->stype, a->sext,
                                     a->ssize, (char *)v->spack + v->soff_own[j], a->ctx->comm);
            if (rc != MPI_SUCCESS)
                return tuna_bytes_view_close(a, v, rc);
        }
        v->sbase = v->spack;
        v->soff = v->soff_own;
    }
    if (a->rcontig) {
        v->rbase = a->rbuf;
        v->roff = a->rdisp;
    } else {
        v->rpack = tuna_malloc(rtot);
        if (!v->rpack)
            return tuna_bytes_view_close(a, v, MPI_ERR_NO_MEM);
        v->rbase = v->rpack;
        v->roff = v->roff_own;
    }
    return MPI_SUCCESS;
}

int tuna_bytes_view_close(const tuna_a2av_args *a, tuna_bytes_view *v, int rc)
{
    if (rc == MPI_SUCCESS && v->rpack) {
        for (int j = 0; j < a->size && rc == MPI_SUCCESS; j++)
            rc = tuna_unpack_block((char *)v->rpack + v->roff_own[j], tuna_rblock(a, j),
                                   tuna_rcount(a, j), a->rtype, a->rext, a->rsize, a->ctx->comm);
    }
    free(v->spack);
    free(v->rpack);
    free(v->sbytes);
    free(v->soff_own);
    memset(v, 0, sizeof *v);
    return rc;
}

int tuna_a2av_post_pair(const tuna_a2av_args *a, int src, int dst, int tag, MPI_Request *reqs,
                        int *n)
{
    int rc = MPI_SUCCESS;
    if (tuna_a2av_recvs(a, src) && (rc = tuna_a2av_irecv_block(a, src, tag, &reqs[*n])) == 0)
        (*n)++;
    if (rc == MPI_SUCCESS && tuna_a2av_sends(a, dst) &&
        (rc = tuna_a2av_isend_block(a, dst, tag, &reqs[*n])) == 0)
        (*n)++;
    return rc;
}
