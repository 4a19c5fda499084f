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
#include "tuna.h"
#include "memkind.h"
#include "tuna_internal.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* One side of the call: counts, byte displacements, a type per peer. */
typedef struct w_side {
    const void *buf;
    const int *counts, *displs;
    const MPI_Datatype *types;
} w_side;

/* This side's arguments are valid for P peers (this rank's own errors, as MPI reports). */
static int check_side(const char *what, const w_side *s, int P)
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
        if (s->counts[j] > 0 && size > 0 && !s->buf)
            return tuna_error_set(MPI_ERR_BUFFER, "tuna_alltoallw: %s buffer is NULL with "
                                  "data for peer %d", what, j);
    }
    return MPI_SUCCESS;
}

/* If every block of the side has one type whose extent divides every nonempty block's
 * displacement: that type, the counts, and the displacements in extents (zero for empty
 * blocks). */
static bool one_type(const w_side *s, int P, MPI_Datatype *type, MPI_Count *counts,
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
static bool packed_layout(const w_side *s, int P, MPI_Count *bytes, MPI_Aint *offs,
                          size_t *total)
{
    size_t t = 0;
    for (int j = 0; j < P; j++) {
        MPI_Count size = 0;
        PMPI_Type_size_x(s->types[j], &size);   /* checked valid by check_side */
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
static int pack_side(bool pack, const w_side *s, int P, const MPI_Count *bytes,
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

/* The packed way: this rank's blocks as bytes through the alltoallv row `opt`. */
static int alltoallw_packed(const w_side *snd, const w_side *rcv, int P, MPI_Comm comm,
                            const tuna_options *opt)
{
    int rc = MPI_ERR_NO_MEM;
    MPI_Count *sb = tuna_malloc(sizeof *sb * (size_t)P * 2);
    MPI_Aint *so = tuna_malloc(sizeof *so * (size_t)P * 2);
    char *spack = NULL, *rpack = NULL;
    size_t stotal = 0, rtotal = 0;
    if (!sb || !so) {
        rc = tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallw: no memory for %d peers' layout", P);
        goto out;
    }
    MPI_Count *rb = sb + P;
    MPI_Aint *ro = so + P;
    if (!packed_layout(snd, P, sb, so, &stotal) || !packed_layout(rcv, P, rb, ro, &rtotal)) {
        rc = tuna_error_set(MPI_ERR_COUNT, "tuna_alltoallw: this rank's bytes exceed memory");
        goto out;
    }
    /* One byte at least: malloc(0) may answer NULL. */
    spack = tuna_malloc(stotal ? stotal : 1);
    rpack = tuna_malloc(rtotal ? rtotal : 1);
    if (!spack || !rpack) {
        rc = tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallw: no memory to pack %zu + %zu bytes",
                            stotal, rtotal);
        goto out;
    }
    if ((rc = pack_side(true, snd, P, sb, so, spack, comm)) != MPI_SUCCESS)
        goto out;
    rc = tuna_alltoallv_c(spack, sb, so, MPI_BYTE, rpack, rb, ro, MPI_BYTE, comm, opt);
    if (rc == MPI_SUCCESS)
        rc = pack_side(false, rcv, P, rb, ro, rpack, comm);
out:
    free(rpack);
    free(spack);
    free(so);
    free(sb);
    return rc;
}

int tuna_alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   const tuna_options *opt)
{
    tuna_error_clear();
    tuna_options def;
    if (!opt) {
        int rc = tuna_options_default(TUNA_ALLTOALLV, &def);
        if (rc != MPI_SUCCESS)
            return rc;
        opt = &def;
    } else if (opt->collective != TUNA_ALLTOALLV) {
        return tuna_error_set(MPI_ERR_ARG, "tuna_alltoallw: the options are not alltoallv's "
                              "(alltoallw runs the alltoallv rows)");
    }
    if (comm == MPI_COMM_NULL)
        return tuna_error_set(MPI_ERR_COMM, "tuna_alltoallw: MPI_COMM_NULL");
    int inter = 0, P = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return tuna_error_set(MPI_ERR_COMM, "tuna_alltoallw: not a valid communicator");
    if (opt->algorithm == tuna_algorithm_find(TUNA_ALLTOALLV, "vendor"))
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                              rdispls, recvtypes, comm);
    if (inter)
        return tuna_error_set(MPI_ERR_COMM, "tuna_alltoallw: an intercommunicator takes only "
                              "vendor");
    /* No row serves memory host code must not touch (docs/gpu.md): the library's own. */
    if (tuna_memory_kinds(sendbuf, recvbuf) != TUNA_MEMORY_HOST)
        return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                              rdispls, recvtypes, comm);
    TUNA_MPI_CHECK(PMPI_Comm_size(comm, &P));

    const bool inplace = sendbuf == MPI_IN_PLACE;
    const w_side rcv = {recvbuf, recvcounts, rdispls, recvtypes};
    const w_side snd = inplace ? rcv : (w_side){sendbuf, sendcounts, sdispls, sendtypes};
    int rc = check_side("recv", &rcv, P);
    if (rc == MPI_SUCCESS && !inplace)
        rc = check_side("send", &snd, P);
    if (rc != MPI_SUCCESS)
        return rc;

    /* Both ways call tuna_alltoallv_c: ranks that take different ways then take the same
     * path through it (auto's agreements and reuse count the same calls on every rank). */
    MPI_Count *n = tuna_malloc(sizeof *n * (size_t)P * 2);
    MPI_Aint *d = tuna_malloc(sizeof *d * (size_t)P * 2);
    if (!n || !d) {
        free(n);
        free(d);
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_alltoallw: no memory for %d peers", P);
    }
    MPI_Datatype st = MPI_DATATYPE_NULL, rt = MPI_DATATYPE_NULL;
    if (one_type(&rcv, P, &rt, n + P, d + P) && (inplace || one_type(&snd, P, &st, n, d))) {
        /* In place the send side is the receive side: MPI_IN_PLACE as the alltoallv's. */
        rc = tuna_alltoallv_c(inplace ? MPI_IN_PLACE : sendbuf, inplace ? NULL : n,
                              inplace ? NULL : d, st, recvbuf, n + P, d + P, rt, comm, opt);
        free(n);
        free(d);
        return rc;
    }
    free(n);
    free(d);
    return alltoallw_packed(&snd, &rcv, P, comm, opt);
}
