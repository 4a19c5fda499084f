/*
 * A repeated call's shortest path (tuna_internal.h, tuna_repeat_keep / tuna_repeat_matches;
 * docs/tuning.md, "The library's call, at once"): once auto has settled on the MPI library's
 * own call for a call's size, a call repeating the last such call's arguments goes to the
 * library before tuna's call set-up. Only predefined types and ops are kept: MPI never frees
 * them, so a handle that compares equal still means the same type or op (a freed derived
 * type's handle may come back as another type).
 */
#include "tuna_internal.h"
#include "tuna_registry.h"

static bool predefined_type(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    return t != MPI_DATATYPE_NULL &&
           PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
           combiner == MPI_COMBINER_NAMED;
}

/* MPI has no call that tells a predefined op from a user's: the list of MPI 4.0, 5.9.2. */
static bool predefined_op(MPI_Op op)
{
    static const MPI_Op ops[] = {MPI_MAX,  MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,
                                 MPI_BAND, MPI_LOR,  MPI_BOR,  MPI_LXOR,   MPI_BXOR,
                                 MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (op == ops[i])
            return true;
    return false;
}

void tuna_repeat_keep(tuna_ctx *ctx, tuna_collective coll, const tuna_options *given,
                      const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
                      MPI_Count rcount, MPI_Datatype rtype, MPI_Op op)
{
    struct tuna_library_repeat *r = &ctx->library_repeat[coll];
    const bool inplace = sendbuf == MPI_IN_PLACE;
    if (rcount <= 0 || !predefined_type(rtype) || (!inplace && !predefined_type(stype)) ||
        (op != MPI_OP_NULL && !predefined_op(op))) {
        r->valid = false;
        return;
    }
    /* Options NULL mean auto once a call with them got here (the defaults never change
     * after they are loaded); options given are compared with the auto row per call. */
    const bool null_is_auto = r->null_is_auto || !given;
    *r = (struct tuna_library_repeat){
        .valid = true,
        .inplace = inplace,
        .null_is_auto = null_is_auto,
        .auto_row = tuna_registry_find_kind(tuna_registry_of(coll), TUNA_ROW_AUTO),
        .stype = inplace ? MPI_DATATYPE_NULL : stype,
        .rtype = rtype,
        .scount = inplace ? 0 : scount,
        .rcount = rcount,
        .op = op,
    };
}
