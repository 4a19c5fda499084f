/*
 * Helpers of the allgather and allreduce front ends: their context, raw-byte datatypes and
 * the TUNA_ARGCHECK=collective agreement on their arguments.
 */
#include "tuna_internal.h"

#include <limits.h>

int tuna_coll_context(MPI_Comm comm, const char *algorithm, tuna_ctx **ctx, bool *collective)
{
    int rc = tuna_ctx_get(comm, algorithm, ctx);
    /* After the context: its creation agrees on TUNA_ARGCHECK, so a rank with a bad value
     * does not leave the others waiting there. */
    return rc != MPI_SUCCESS ? rc : tuna_argcheck_collective(collective);
}

int tuna_coll_bytes_type(size_t bytes, MPI_Datatype *out)
{
    if (bytes <= (size_t)INT_MAX) {
        TUNA_MPI_CHECK(PMPI_Type_contiguous((int)bytes, MPI_BYTE, out));
        TUNA_MPI_CHECK(PMPI_Type_commit(out));
        return MPI_SUCCESS;
    }
    /* Whole chunks plus a remainder, so no int count overflows (committed). */
    int n;
    bool made;
    return tuna_message_type((MPI_Count)bytes, MPI_BYTE, 1, &n, out, &made);
}

/* max of (failed, v, -v): a value is the same everywhere iff max v = min v */
static int agree_fill(const char *coll, int local_rc, const long long *same, int n,
                      long long *v)
{
    if (n > TUNA_COLL_AGREE_MAX)
        return tuna_error_set(MPI_ERR_INTERN, "tuna_%s: %d values to agree on, at most %d", coll,
                              n, TUNA_COLL_AGREE_MAX);
    v[0] = local_rc != MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        v[1 + 2 * i] = same[i];
        v[2 + 2 * i] = -same[i];
    }
    return MPI_SUCCESS;
}

int tuna_coll_agree_args_judge(const char *coll, int local_rc, const long long *v,
                               const char *const *names, int n)
{
    if (local_rc != MPI_SUCCESS)
        return local_rc;
    if (v[0])
        return tuna_error_set(MPI_ERR_ARG,
                              "tuna_%s: invalid arguments on another rank; no data moved", coll);
    for (int i = 0; i < n; i++)
        if (v[1 + 2 * i] != -v[2 + 2 * i])
            return tuna_error_set(MPI_ERR_ARG,
                                  "tuna_%s: %s differs across ranks (%lld to %lld); no data "
                                  "moved",
                                  coll, names[i], -v[2 + 2 * i], v[1 + 2 * i]);
    return MPI_SUCCESS;
}

int tuna_coll_agree_args(tuna_ctx *ctx, const char *coll, int local_rc, const long long *same,
                         const char *const *names, int n)
{
    long long v[1 + 2 * TUNA_COLL_AGREE_MAX];
    int rc = agree_fill(coll, local_rc, same, n, v);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Allreduce(MPI_IN_PLACE, v, 1 + 2 * n, MPI_LONG_LONG, MPI_MAX, ctx->comm);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "tuna_%s: agreement allreduce failed", coll);
    return tuna_coll_agree_args_judge(coll, local_rc, v, names, n);
}

int tuna_coll_agree_args_start(tuna_ctx *ctx, const char *coll, int local_rc,
                               const long long *same, int n, long long *v, MPI_Request *req)
{
    int rc = agree_fill(coll, local_rc, same, n, v);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Iallreduce(MPI_IN_PLACE, v, 1 + 2 * n, MPI_LONG_LONG, MPI_MAX, ctx->comm, req);
    if (rc != MPI_SUCCESS)
        return tuna_error_set(rc, "tuna_%s: agreement MPI_Iallreduce failed", coll);
    return MPI_SUCCESS;
}
