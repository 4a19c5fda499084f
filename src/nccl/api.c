/*
 * The NCCL path's entry points (include/tuna_nccl.h, docs/nccl.md): argument checks, the
 * row (by the name of the MPI table's row that `opt` chose), the transport, the run.
 */
#include "../../include/tuna_nccl.h"
#include "nccl_rows.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tuna_nccl_row alltoallv_rows[] = {
    {"linear", NULL, tuna_nccl_a2av_linear},
    {"pairwise", NULL, tuna_nccl_a2av_pairwise},
    {"tuna", "radix", tuna_nccl_a2av_tuna},
    {"coalesced", NULL, tuna_nccl_a2av_coalesced},
};
static const tuna_nccl_row alltoall_rows[] = {
    {"linear", NULL, tuna_nccl_a2av_linear},
    {"pairwise", NULL, tuna_nccl_a2av_pairwise},
    {"tuna", "radix", tuna_nccl_a2av_tuna},
    {"coalesced", NULL, tuna_nccl_a2av_coalesced},
    {"vendor", NULL, tuna_nccl_a2a_vendor},
};
/* allgather's and allreduce's rows: the same six on each one's functions (pre: ag, ar). */
#define FOLDED_ROWS(pre)                                                                           \
    {"ring", NULL, tuna_nccl_##pre##_ring},                                                        \
    {"kring", "k", tuna_nccl_##pre##_kring},                                                       \
    {"recursive-doubling", NULL, tuna_nccl_##pre##_recursive_doubling},                            \
    {"recmul", "k", tuna_nccl_##pre##_recmul},                                                     \
    {"recmul-permuted", "k", tuna_nccl_##pre##_recmul_permuted},                                   \
    {"vendor", NULL, tuna_nccl_##pre##_vendor}
static const tuna_nccl_row allgather_rows[] = {FOLDED_ROWS(ag)};
static const tuna_nccl_row allreduce_rows[] = {FOLDED_ROWS(ar)};
#define NROWS(t) (int)(sizeof t / sizeof t[0])

static const char *coll_name(tuna_collective c)
{
    return c == TUNA_ALLTOALLV ? "tuna_nccl_alltoallv"
         : c == TUNA_ALLTOALL  ? "tuna_nccl_alltoall"
         : c == TUNA_ALLGATHER ? "tuna_nccl_allgather"
                               : "tuna_nccl_allreduce";
}

/* The rows of a collective on the NCCL path (the first is the default). */
static const tuna_nccl_row *rows_of(tuna_collective c, int *n)
{
    switch (c) {
    case TUNA_ALLTOALLV:
        *n = NROWS(alltoallv_rows);
        return alltoallv_rows;
    case TUNA_ALLTOALL:
        *n = NROWS(alltoall_rows);
        return alltoall_rows;
    case TUNA_ALLGATHER:
        *n = NROWS(allgather_rows);
        return allgather_rows;
    case TUNA_ALLREDUCE:
        *n = NROWS(allreduce_rows);
        return allreduce_rows;
    default:
        *n = 0;
        return NULL;
    }
}

/* The row `opt` names, its parameter resolved for P into a->k. */
static int choose(tuna_collective c, const tuna_options *opt, int P, const tuna_nccl_row **row,
                  tuna_nccl_args *a)
{
    int n;
    const tuna_nccl_row *rows = rows_of(c, &n);
    char list[256] = "";
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 rows[i].name);
    if (n == 0)
        return tuna_error_set(MPI_ERR_ARG, "%s: no algorithm runs on the NCCL path yet "
                                           "(docs/nccl.md)", coll_name(c));
    a->k = 1;
    if (!opt) {
        *row = &rows[0];
        return MPI_SUCCESS;
    }
    if (opt->collective != c)
        return tuna_error_set(MPI_ERR_ARG, "%s: the options are for another collective "
                                           "(parse them for this one)", coll_name(c));
    const tuna_algorithm_info *info = tuna_algorithm_get(c, opt->algorithm);
    if (!info)
        return tuna_error_set(MPI_ERR_ARG, "%s: options with no algorithm", coll_name(c));
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i].name, info->name) != 0)
            continue;
        *row = &rows[i];
        for (int p = 0; p < info->nparams; p++) {
            if (!rows[i].param || strcmp(info->params[p].name, rows[i].param) != 0) {
                if (opt->set & (1u << p))
                    return tuna_error_set(MPI_ERR_ARG, "%s: parameter '%s' of '%s' is not "
                                          "supported on the NCCL path (docs/nccl.md)",
                                          coll_name(c), info->params[p].name, info->name);
                continue;
            }
            long v = (opt->set & (1u << p)) ? opt->value[p] : info->params[p].defval;
            if (v == TUNA_PARAM_P)
                v = P;
            else if (v == TUNA_PARAM_SQRTP)
                v = (long)ceil(sqrt((double)P));
            a->k = v < 2 ? 2 : v > P ? (P < 2 ? 2 : P) : v;
        }
        return MPI_SUCCESS;
    }
    return tuna_error_set(MPI_ERR_ARG, "%s: algorithm '%s' is not supported on the NCCL path "
                                       "(supported: %s; docs/nccl.md)", coll_name(c), info->name,
                          list);
}

/* Bytes of one element; 0 for a type NCCL does not have. */
size_t tuna_nccl_type_bytes(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

/* The call's start (its error cleared) and the checks every call makes; fills a->tp's transport
 * t, on the call's stream. */
static int start(tuna_collective c, ncclComm_t comm, ncclDataType_t type, cudaStream_t stream,
                 tuna_nccl_tp *t, tuna_nccl_args *a)
{
    tuna_error_clear();
    if (!comm)
        return tuna_error_set(MPI_ERR_COMM, "%s: comm is NULL", coll_name(c));
    if (tuna_nccl_type_bytes(type) == 0)
        return tuna_error_set(MPI_ERR_TYPE, "%s: datatype %d is not an NCCL type", coll_name(c),
                              (int)type);
    int rc = tuna_nccl_tp_open(t, comm, stream);
    if (rc != MPI_SUCCESS)
        return rc;
    memset(a, 0, sizeof *a);
    a->tp = &t->table;
    a->t = t;
    a->rank = t->rank;
    a->size = t->size;
    a->esize = tuna_nccl_type_bytes(type);
    return MPI_SUCCESS;
}

_Thread_local bool tuna_nccl_posted;

static int run(const tuna_nccl_row *row, tuna_nccl_tp *t, tuna_nccl_args *a)
{
    tuna_nccl_posted = true; /* past the checks: a failure now is not the drop-in's to hand on */
    int rc = row->run(a);
    int end = tuna_nccl_tp_close(t);
    return rc != MPI_SUCCESS ? rc : end;
}

_Thread_local const char *tuna_nccl_auto_ran;

/* The row `opt` names, run. `auto` first picks one (auto.c) for the size class of `bytes`
 * (alltoallv: of the largest block of any rank, agreed here); while it learns, the call is
 * timed with CUDA events. */
static int choose_and_run(tuna_collective c, const tuna_options *opt, size_t bytes,
                          tuna_nccl_tp *t, tuna_nccl_args *a)
{
    const tuna_nccl_row *row = NULL;
    tuna_nccl_auto_step step = {0};
    tuna_nccl_auto_ran = NULL;
    if (opt && opt->collective == c) {
        const tuna_algorithm_info *info = tuna_algorithm_get(c, opt->algorithm);
        if (info && !strcmp(info->name, "auto")) {
            if (c == TUNA_ALLTOALLV) {
                double largest = 0;
                for (int i = 0; i < a->size; i++) {
                    const size_t s = a->scounts[i] > a->rcounts[i] ? a->scounts[i] : a->rcounts[i];
                    if ((double)s * (double)a->esize > largest)
                        largest = (double)s * (double)a->esize;
                }
                tuna_nccl_posted = true; /* an NCCL collective is posted from here on */
                int rc = tuna_nccl_auto_agree_max(&largest, 1, t);
                if (rc != MPI_SUCCESS)
                    return rc;
                bytes = (size_t)largest;
            }
            int rc = tuna_nccl_auto_begin(c, t->comm, bytes, &step);
            if (rc != MPI_SUCCESS)
                return rc;
            opt = step.opt;
            tuna_nccl_auto_ran = tuna_nccl_auto_name(&step);
        }
    }
    int rc = choose(c, opt, a->size, &row, a);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!step.learning)
        return run(row, t, a);
    cudaEvent_t e[2] = {NULL, NULL};
    cudaError_t ce = cudaEventCreateWithFlags(&e[0], cudaEventDefault);
    if (ce == cudaSuccess)
        ce = cudaEventCreateWithFlags(&e[1], cudaEventDefault);
    if (ce == cudaSuccess)
        ce = cudaEventRecord(e[0], t->stream);
    if (ce != cudaSuccess) {
        for (int i = 0; i < 2; i++)
            if (e[i])
                cudaEventDestroy(e[i]);
        return tuna_nccl_cuda_failed(ce, "auto: cudaEventCreate/Record");
    }
    rc = run(row, t, a);
    float ms = 0;
    ce = cudaEventRecord(e[1], t->stream);
    if (ce == cudaSuccess)
        ce = cudaEventSynchronize(e[1]);
    if (ce == cudaSuccess)
        ce = cudaEventElapsedTime(&ms, e[0], e[1]);
    cudaEventDestroy(e[0]);
    cudaEventDestroy(e[1]);
    if (rc == MPI_SUCCESS && ce != cudaSuccess)
        rc = tuna_nccl_cuda_failed(ce, "auto: timing a candidate");
    if (rc != MPI_SUCCESS)
        return rc;
    rc = tuna_nccl_auto_end(&step, (double)ms * 1e-3, t);
    /* run closed the transport; the agreement's wait may have made its event again */
    const int end = tuna_nccl_tp_close(t);
    return rc != MPI_SUCCESS ? rc : end;
}

static int a2av(tuna_collective c, const void *sendbuf, const size_t *sendcounts,
                const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                const size_t *rdispls, ncclDataType_t type, ncclComm_t comm, cudaStream_t stream,
                const tuna_options *opt)
{
    tuna_nccl_tp t;
    tuna_nccl_args a = {0};
    int rc = start(c, comm, type, stream, &t, &a);
    if (rc != MPI_SUCCESS)
        return rc;
    const char *name = coll_name(c);
    if (!sendcounts || !sdispls || !recvcounts || !rdispls)
        return tuna_error_set(MPI_ERR_ARG, "%s: a count or displacement array is NULL", name);
    const size_t limit = SIZE_MAX / a.esize;
    size_t sent = 0, received = 0;
    for (int i = 0; i < a.size; i++) {
        if (sendcounts[i] > limit || sdispls[i] > limit - sendcounts[i] ||
            recvcounts[i] > limit || rdispls[i] > limit - recvcounts[i])
            return tuna_error_set(MPI_ERR_COUNT, "%s: the block of rank %d does not fit in "
                                                 "size_t bytes", name, i);
        sent |= sendcounts[i];
        received |= recvcounts[i];
    }
    if ((sent && !sendbuf) || (received && !recvbuf))
        return tuna_error_set(MPI_ERR_BUFFER, "%s: a NULL buffer with nonzero counts", name);
    if (sendbuf && sendbuf == recvbuf)
        return tuna_error_set(MPI_ERR_BUFFER, "%s: sendbuf is recvbuf (no in-place form)", name);
    a.sbuf = sendbuf;
    a.rbuf = recvbuf;
    a.scounts = sendcounts;
    a.sdispls = sdispls;
    a.rcounts = recvcounts;
    a.rdispls = rdispls;
    a.uniform = c == TUNA_ALLTOALL;
    return choose_and_run(c, opt, sendcounts[0] * a.esize, &t, &a);
}

int tuna_nccl_alltoallv(const void *sendbuf, const size_t sendcounts[], const size_t sdispls[],
                        void *recvbuf, const size_t recvcounts[], const size_t rdispls[],
                        ncclDataType_t type, ncclComm_t comm, cudaStream_t stream,
                        const tuna_options *opt)
{
    return a2av(TUNA_ALLTOALLV, sendbuf, sendcounts, sdispls, recvbuf, recvcounts, rdispls, type,
                comm, stream, opt);
}

int tuna_nccl_alltoall(const void *sendbuf, void *recvbuf, size_t count, ncclDataType_t type,
                       ncclComm_t comm, cudaStream_t stream, const tuna_options *opt)
{
    tuna_error_clear();
    int P = 0;
    if (comm && ncclCommCount(comm, &P) != ncclSuccess)
        return tuna_error_set(MPI_ERR_COMM, "tuna_nccl_alltoall: ncclCommCount failed");
    if (comm && count > SIZE_MAX / (P > 0 ? (size_t)P : 1))
        return tuna_error_set(MPI_ERR_COUNT, "tuna_nccl_alltoall: count %zu x %d ranks does "
                                             "not fit in size_t", count, P);
    /* Uniform counts through the alltoallv rows (P = 0: a NULL comm, refused there). */
    size_t *arr = tuna_malloc(2 * (size_t)(P > 0 ? P : 1) * sizeof *arr);
    if (!arr)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_nccl_alltoall: no memory for %d ranks", P);
    size_t *counts = arr, *displs = arr + P;
    for (int i = 0; i < P; i++) {
        counts[i] = count;
        displs[i] = (size_t)i * count;
    }
    int rc = a2av(TUNA_ALLTOALL, sendbuf, counts, displs, recvbuf, counts, displs, type, comm,
                  stream, opt);
    free(arr);
    return rc;
}

/* The MPI type and op of the transport's reduce; MPI_DATATYPE_NULL / MPI_OP_NULL where the
 * device kernels (src/device/reduce.cu) have none. */
static MPI_Datatype reduce_type(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: return MPI_INT8_T;
    case ncclUint8: return MPI_UINT8_T;
    case ncclInt32: return MPI_INT32_T;
    case ncclUint32: return MPI_UINT32_T;
    case ncclInt64: return MPI_INT64_T;
    case ncclUint64: return MPI_UINT64_T;
    case ncclFloat32: return MPI_FLOAT;
    case ncclFloat64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

static MPI_Op reduce_op(ncclRedOp_t op)
{
    switch (op) {
    case ncclSum: return MPI_SUM;
    case ncclProd: return MPI_PROD;
    case ncclMax: return MPI_MAX;
    case ncclMin: return MPI_MIN;
    default: return MPI_OP_NULL;
    }
}

/* allgather (count: sendcount) and allreduce (with op): their checks, then the row. */
static int folded(tuna_collective c, const void *sendbuf, void *recvbuf, size_t count,
                  ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
                  const tuna_options *opt)
{
    tuna_nccl_tp t;
    tuna_nccl_args a = {0};
    int rc = start(c, comm, type, stream, &t, &a);
    if (rc != MPI_SUCCESS)
        return rc;
    const char *fn = coll_name(c);
    size_t bytes;
    if (c == TUNA_ALLREDUCE) {
        a.mtype = reduce_type(type);
        a.mop = reduce_op(op);
        a.ntype = type;
        a.nop = op;
        if (a.mtype == MPI_DATATYPE_NULL)
            return tuna_error_set(MPI_ERR_TYPE, "%s: no reduction on datatype %d (half, "
                                                "bfloat16 and fp8 are not supported)",
                                  fn, (int)type);
        if (a.mop == MPI_OP_NULL)
            return tuna_error_set(MPI_ERR_OP, "%s: op %d is not supported (sum, prod, max, min)",
                                  fn, (int)op);
        if (count > SIZE_MAX / a.esize / 2)
            return tuna_error_set(MPI_ERR_COUNT, "%s: %zu elements do not fit in size_t bytes",
                                  fn, count);
        a.count = count;
        bytes = count * a.esize;
    } else {
        if (count > SIZE_MAX / a.esize / (size_t)a.size)
            return tuna_error_set(MPI_ERR_COUNT, "%s: %zu elements x %d ranks do not fit in "
                                                 "size_t bytes", fn, count, a.size);
        bytes = a.block = count * a.esize;
    }
    if (count && (!sendbuf || !recvbuf))
        return tuna_error_set(MPI_ERR_BUFFER, "%s: a NULL buffer with nonzero count", fn);
    a.sbuf = sendbuf;
    a.rbuf = recvbuf;
    return choose_and_run(c, opt, bytes, &t, &a);
}

int tuna_nccl_allgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                        ncclDataType_t type, ncclComm_t comm, cudaStream_t stream,
                        const tuna_options *opt)
{
    return folded(TUNA_ALLGATHER, sendbuf, recvbuf, sendcount, type, ncclSum, comm, stream, opt);
}

int tuna_nccl_allreduce(const void *sendbuf, void *recvbuf, size_t count, ncclDataType_t type,
                        ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
                        const tuna_options *opt)
{
    return folded(TUNA_ALLREDUCE, sendbuf, recvbuf, count, type, op, comm, stream, opt);
}
