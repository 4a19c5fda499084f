/*
 * Plans on buffers that are not host memory (src/core/memkind.h): an alltoallv plan whose row
 * stages them (src/core/memory_route.c decides, as for the blocking call) keeps its row and
 * runs it through a staging transport of its own (plan_alltoallv.c); every other init makes
 * a vendor plan (its starts run the library's own call, and the planner times nothing),
 * whose starts name the reason in the statistics.
 */
#include "plan.h"

#include "memkind.h"

/* The reason of this thread's init in progress (NULL: none). */
static _Thread_local const char *pending;
static _Thread_local bool pending_device;
static _Thread_local tuna_options vendor_options;

void tuna_memory_plan_options_a2av(const void *sendbuf, MPI_Datatype sendtype,
                                   const void *recvbuf, MPI_Datatype recvtype,
                                   const tuna_options **opt, bool *staged)
{
    pending = NULL;
    pending_device = false;
    *staged = false;
    const unsigned kinds = tuna_memory_kinds(sendbuf, recvbuf);
    if (kinds == TUNA_MEMORY_HOST || !*opt)
        return;
    const tuna_registry *reg = tuna_registry_of(TUNA_ALLTOALLV);
    if ((*opt)->collective != TUNA_ALLTOALLV || (*opt)->algorithm < 0 ||
        (*opt)->algorithm >= reg->n)
        return; /* the init reports the options */
    if (tuna_memory_a2av_stages(*opt, kinds, sendbuf, sendtype, recvtype)) {
        *staged = true;
        return;
    }
    const int vendor = tuna_registry_find_kind(reg, TUNA_ROW_VENDOR);
    pending_device = true;
    if ((*opt)->algorithm != vendor)
        pending = tuna_memory_a2av_reason(*opt, kinds);
    vendor_options = (tuna_options){.collective = TUNA_ALLTOALLV, .algorithm = vendor};
    *opt = &vendor_options;
}

void tuna_memory_plan_options(tuna_collective coll, const void *sendbuf, const void *recvbuf,
                              const tuna_options **opt)
{
    pending = NULL;
    pending_device = false;
    const unsigned kinds = tuna_memory_kinds(sendbuf, recvbuf);
    if (kinds == TUNA_MEMORY_HOST || !*opt)
        return;
    const tuna_registry *reg = tuna_registry_of(coll);
    if ((*opt)->collective != coll || (*opt)->algorithm < 0 || (*opt)->algorithm >= reg->n)
        return; /* the init reports the options */
    /* Only alltoallv's plans stage device memory (tuna_memory_plan_options_a2av): a plan of
     * these collectives on device buffers is the library's. */
    const int vendor = tuna_registry_find_kind(reg, TUNA_ROW_VENDOR);
    pending_device = true;
    if ((*opt)->algorithm != vendor)
        pending = tuna_memory_reason(kinds);
    vendor_options = (tuna_options){.collective = coll, .algorithm = vendor};
    *opt = &vendor_options;
}

int tuna_memory_plan_done(struct tuna_plan_s *p, int rc)
{
    const char *why = pending;
    const bool device = pending_device;
    pending = NULL;
    pending_device = false;
    if (rc != MPI_SUCCESS || !p || !device)
        return rc;
    if (p->fallback) /* vendor replaced by tuna's linear exchange (no _c call): not here */
        return tuna_error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                              "device buffers with large counts need the MPI library's own "
                              "large-count call, which it does not have (docs/gpu.md)");
    if (why) {
        p->fallback = why;
        p->fallback_algorithm = p->info.algorithm;
    }
    return rc;
}
