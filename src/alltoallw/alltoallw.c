/*
 * tuna_alltoallw: MPI_Alltoallw's all-to-all, a datatype per peer, served by the alltoallv
 * rows (docs/algorithms-alltoall.md, "Alltoallw"). Two ways, decided by each rank alone from
 * its own arguments (both send the same bytes, so ranks may differ):
 *   - one type per side: every send type the same, every receive type the same, and every
 *     nonempty block's byte displacement a multiple of its type's extent: the call is an
 *     alltoallv of that type (displacements divided by the extent), no copy;
 *   - otherwise every block is packed to bytes (MPI_Pack; a block's packed bytes must be its
 *     type signature's bytes, as on every homogeneous system: checked), the bytes exchanged by
 *     the alltoallv row on MPI_BYTE, and unpacked into place. Two buffers of this rank's
 *     total send and receive bytes for the call.
 * Which of these a rank took cannot change what the peers receive: the bytes on the wire are
 * the blocks' type signatures either way. "vendor" is the library's own MPI_Alltoallw.
 */
#include "alltoallw.h"
#include "memkind.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

int tuna_w_check_side(const char *what, const tuna_w_side *s, int P)
{
    if (P > 0 && (!s->counts || !s->displs || !s->types))
        return tuna_error_set(MPI_ERR_ARG, "tuna_alltoallw: %s counts, displacements or types "
                              "are NULL", what);
    for (int j = 0; j < P; j++) {
        if (s->counts[j] < 0)
            return tuna_error_set(MPI_ERR_COUNT, "tuna_alltoallw: %scounts[%d] = %d is negative",
                                  what, j, s->counts[j]);
        if (s->types[j] == MPI_DATATYPE_NULL)
            return tuna_error_set(MPI_ERR_TYPE, "tuna_alltoallw: %stypes[%d] is "
                                  "MPI_DATATYPE_NULL", what, j);
        MPI_Count size = 0;
        if (PMPI_Type_size_x(s->types[j], &size) != MPI_SUCCESS || size < 0)
            return tuna_error_set(MPI_ERR_TYPE, "tuna_alltoallw: %stypes[%d] is not a valid "
                                  "datatype", what, j);
        /* MPI_BOTTOM (NULL) is valid where the displacement or the type holds the absolute
         * address; a block at NULL itself with a type that starts at 0 is not. */
        MPI_Aint tlb = 0, textent = 0;
        if (s->counts[j] > 0 && size > 0 && !s->buf && s->displs[j] == 0 &&
            PMPI_Type_get_true_extent(s->types[j], &tlb, &textent) == MPI_SUCCESS && tlb == 0)
            return tuna_error_set(MPI_ERR_BUFFER, "tuna_alltoallw: %s buffer is NULL with "
                                  "data for peer %d", what, j);
    }
    return MPI_SUCCESS;
}

/* If every block of the side has one type whose extent divides every nonempty block's
 * displacement: that type, the counts, and the displacements in extents (zero for empty
 * blocks). */
static bool one_type(const tuna_w_side *s, int P, MPI_Datatype *type, MPI_Count *counts,
                     MPI_Aint *displs)
{
    if (P == 0)
        return false;
    MPI_Aint lb, extent;
    if (PMPI_Type_get_extent(s->types[0], &lb, &extent) != MPI_SUCCESS || extent <= 0)
        return false;
    for (int j = 0; j < P; j++) {
        if (s->types[j] != s->types[0])
            return false;
        counts[j] = s->counts[j];
        displs[j] = 0;
        if (s->counts[j] == 0)
            continue;
        if (s->displs[j] % extent != 0)
            return false;
        displs[j] = s->displs[j] / extent;
    }
    *type = s->types[0];
    return true;
}

/* Each block's signature bytes and their offsets in a packed buffer; false when the total
 * does not fit size_t (it cannot be allocated). */
static bool packed_layout(const tuna_w_side *s, int P, MPI_Count *bytes, MPI_Aint *offs,
                          size_t *total)
{
    size_t t = 0;
    for (int j = 0; j < P; j++) {
        MPI_Count size = 0;
        PMPI_Type_size_x(s->types[j], &size);   /* checked valid by tuna_w_check_side */
        bytes[j] = (MPI_Count)s->counts[j] * size;
        offs[j] = (MPI_Aint)t;
        if ((size_t)bytes[j] > SIZE_MAX - t || (uintmax_t)(t + (size_t)bytes[j]) > INTPTR_MAX)
            return false;
        t += (size_t)bytes[j];
    }
    *total = t;
    return true;
}

/* Pack (pack) every block of the side into `packed`, or unpack `packed` into it. */
static int pack_side(bool pack, const tuna_w_side *s, int P, const MPI_Count *bytes,
                     const MPI_Aint *offs, char *packed, MPI_Comm comm)
{
    for (int j = 0; j < P; j++) {
        if (!bytes[j])
            continue;
        MPI_Aint lb, extent;
        TUNA_MPI_CHECK(PMPI_Type_get_extent(s->types[j], &lb, &extent));
        const size_t size = (size_t)(bytes[j] / s->counts[j]);
        char *at = (char *)s->buf + s->displs[j];
        int rc = pack ? tuna_pack_block(at, s->counts[j], s->types[j], extent, size,
                                        packed + offs[j], comm)
                      : tuna_unpack_block(packed + offs[j], at, s->counts[j], s->types[j],
                                          extent, size, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int tuna_w_begin(const char *who, const void *sendbuf, const int sendcounts[],
                 const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                 const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm, const tuna_options **opt, tuna_options *def, bool *library,
                 tuna_w_call *c)
{
    *library = false;
    *c = (tuna_w_call){0};
    if (!*opt) {
        int rc = tuna_options_default(TUNA_ALLTOALLV, def);
        if (rc != MPI_SUCCESS)
            return rc;
        *opt = def;
    } else if ((*opt)->collective != TUNA_ALLTOALLV) {
        return tuna_error_set(MPI_ERR_ARG, "%s: the options are not alltoallv's (alltoallw "
                              "runs the alltoallv rows)", who);
    }
    if (comm == MPI_COMM_NULL)
        return tuna_error_set(MPI_ERR_COMM, "%s: MPI_COMM_NULL", who);
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return tuna_error_set(MPI_ERR_COMM, "%s: not a valid communicator", who);
    /* vendor, and memory no row serves (docs/gpu.md): the library's own. */
    if ((*opt)->algorithm == tuna_algorithm_find(TUNA_ALLTOALLV, "vendor") ||
        (!inter && tuna_memory_kinds(sendbuf, recvbuf) != TUNA_MEMORY_HOST)) {
        *library = true;
        return MPI_SUCCESS;
    }
    if (inter)
        return tuna_error_set(MPI_ERR_COMM, "%s: an intercommunicator takes only vendor", who);
    TUNA_MPI_CHECK(PMPI_Comm_size(comm, &c->P));
    c->inplace = sendbuf == MPI_IN_PLACE;
    c->rcv = (tuna_w_side){recvbuf, recvcounts, rdispls, recvtypes};
    c->snd = c->inplace ? c->rcv : (tuna_w_side){sendbuf, sendcounts, sdispls, sendtypes};
    int rc = tuna_w_check_side("recv", &c->rcv, c->P);
    if (rc == MPI_SUCCESS && !c->inplace)
        rc = tuna_w_check_side("send", &c->snd, c->P);
    /* auto, checked arguments: the library's own too, except in place and at one rank. The
     * packed way's copies cost more than the alltoallv rows gained wherever it was measured
     * (docs/results/alltoallw.md: 3-8x slower blocking, 1.2-1.8x as a plan, one node), and the
     * choice must be the same on every rank without an agreement (MPI_IN_PLACE is every
     * rank's or none's). In place, and one rank, stay tuna's: MPICH 4.0.2's in-place
     * alltoallw with derived types and Open MPI 4.1.4's at one rank are wrong. A named row
     * runs tuna's way. */
    if (rc == MPI_SUCCESS && (*opt)->algorithm == tuna_algorithm_find(TUNA_ALLTOALLV, "auto") &&
        c->P > 1 && !c->inplace)
        *library = true;
    return rc;
}

int tuna_w_layout(tuna_w_call *c)
{
    const int P = c->P;
    c->n = tuna_malloc(sizeof *c->n * (size_t)P * 2);
    c->d = tuna_malloc(sizeof *c->d * (size_t)P * 2);
    if (!c->n || !c->d)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallw: no memory for %d peers", P);
    c->st = c->rt = MPI_DATATYPE_NULL;
    /* MPI_BOTTOM-relative blocks are packed (tuna_pack_block addresses them absolutely). */
    if (c->rcv.buf && (c->inplace || c->snd.buf) &&
        one_type(&c->rcv, P, &c->rt, c->n + P, c->d + P) &&
        (c->inplace || one_type(&c->snd, P, &c->st, c->n, c->d)))
        return MPI_SUCCESS;
    /* The packed way: each block's signature bytes at its offset in one buffer per side. */
    c->packed = true;
    size_t stotal = 0, rtotal = 0;
    if (!packed_layout(&c->snd, P, c->n, c->d, &stotal) ||
        !packed_layout(&c->rcv, P, c->n + P, c->d + P, &rtotal))
        return tuna_error_set(MPI_ERR_COUNT, "tuna_alltoallw: this rank's bytes exceed memory");
    /* One byte at least: malloc(0) may answer NULL. */
    c->spack = tuna_malloc(stotal ? stotal : 1);
    c->rpack = tuna_malloc(rtotal ? rtotal : 1);
    if (!c->spack || !c->rpack)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallw: no memory to pack %zu + %zu "
                              "bytes", stotal, rtotal);
    return MPI_SUCCESS;
}

int tuna_w_pack(const tuna_w_call *c, MPI_Comm comm)
{
    return c->packed ? pack_side(true, &c->snd, c->P, c->n, c->d, c->spack, comm) : MPI_SUCCESS;
}

int tuna_w_prepare(tuna_w_call *c, MPI_Comm comm)
{
    int rc = tuna_w_layout(c);
    return rc == MPI_SUCCESS ? tuna_w_pack(c, comm) : rc;
}

int tuna_w_exchange_c(const tuna_w_call *c, MPI_Comm comm, const tuna_options *opt,
                      tuna_request *req)
{
    const int P = c->P;
    const void *sb = c->packed ? c->spack : c->inplace ? MPI_IN_PLACE : c->snd.buf;
    const bool noside = !c->packed && c->inplace; /* MPI_IN_PLACE: no send arguments */
    void *rb = c->packed ? c->rpack : (void *)c->rcv.buf; /* the caller's recvbuf */
    MPI_Datatype st = c->packed ? MPI_BYTE : c->st, rt = c->packed ? MPI_BYTE : c->rt;
    if (req)
        return tuna_ialltoallv_c(sb, noside ? NULL : c->n, noside ? NULL : c->d, st, rb,
                                 c->n + P, c->d + P, rt, comm, opt, req);
    return tuna_alltoallv_c(sb, noside ? NULL : c->n, noside ? NULL : c->d, st, rb, c->n + P,
                            c->d + P, rt, comm, opt);
}

int tuna_w_finish(const tuna_w_call *c, MPI_Comm comm)
{
    return c->packed ? pack_side(false, &c->rcv, c->P, c->n + c->P, c->d + c->P, c->rpack, comm)
                     : MPI_SUCCESS;
}

void tuna_w_free(tuna_w_call *c)
{
    free(c->rpack);
    free(c->spack);
    free(c->d);
    free(c->n);
    c->rpack = c->spack = NULL;
    c->d = NULL;
    c->n = NULL;
}

int tuna_alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   const tuna_options *opt)
{
    tuna_error_clear();
    tuna_options def;
    bool library;
    tuna_w_call c;
    int rc = tuna_w_begin("tuna_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                          recvcounts, rdispls, recvtypes, comm, &opt, &def, &library, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (library)
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                              rdispls, recvtypes, comm);
    rc = tuna_w_prepare(&c, comm);
    if (rc == MPI_SUCCESS)
        rc = tuna_w_exchange_c(&c, comm, opt, NULL);
    if (rc == MPI_SUCCESS)
        rc = tuna_w_finish(&c, comm);
    tuna_w_free(&c);
    return rc;
}
