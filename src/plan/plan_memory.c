/*
 * Plans on buffers that are not host memory (src/core/memkind.h): an alltoallv, allgather or
 * allreduce plan whose row stages them (src/core/memory_route.c decides, as for the blocking
 * call) keeps its row and runs it through a staging transport of its own (plan_alltoallv.c,
 * plan_collectives.c); every other init makes
 * a vendor plan (its starts run the library's own call, and the planner times nothing),
 * whose starts name the reason in the statistics.
 */
#include "plan.h"

#include "memkind.h"

/* The reason of this thread's init in progress (NULL: none). */
static _Thread_local const char *pending;
static _Thread_local bool pending_device;
static _Thread_local tuna_options vendor_options;

/* The kinds of the init's buffers (0: host memory, or options the init reports: nothing to
 * do here); the pending reason cleared first. */
static unsigned kinds_of(tuna_collective coll, const void *sendbuf, const void *recvbuf,
                         const tuna_options *opt)
{
    pending = NULL;
    pending_device = false;
    const unsigned kinds = tuna_memory_kinds(sendbuf, recvbuf);
    if (kinds == TUNA_MEMORY_HOST || !opt || opt->collective != coll || opt->algorithm < 0 ||
        opt->algorithm >= tuna_registry_of(coll)->n)
        return 0;
    return kinds;
}

/* A vendor plan for device buffers, with `why` (none where vendor was asked). */
static void to_vendor(tuna_collective coll, const tuna_options **opt, const char *why)
{
    const int vendor = tuna_registry_find_kind(tuna_registry_of(coll), TUNA_ROW_VENDOR);
    pending_device = true;
    if ((*opt)->algorithm != vendor)
        pending = why;
    vendor_options = (tuna_options){.collective = coll, .algorithm = vendor};
    *opt = &vendor_options;
}

void tuna_memory_plan_options_a2av(const void *sendbuf, MPI_Datatype sendtype,
                                   const void *recvbuf, MPI_Datatype recvtype,
                                   const tuna_options **opt, bool *staged)
{
    *staged = false;
    const unsigned kinds = kinds_of(TUNA_ALLTOALLV, sendbuf, recvbuf, *opt);
    if (!kinds)
        return;
    if (tuna_memory_a2av_stages(*opt, kinds, sendbuf, sendtype, recvtype))
        *staged = true;
    else
        to_vendor(TUNA_ALLTOALLV, opt, tuna_memory_a2av_reason(*opt, kinds));
}

void tuna_memory_plan_options_coll(tuna_collective coll, const void *sendbuf,
                                   MPI_Datatype sendtype, const void *recvbuf,
                                   MPI_Datatype recvtype, MPI_Op op, const tuna_options **opt,
                                   bool *staged)
{
    *staged = false;
    const unsigned kinds = kinds_of(coll, sendbuf, recvbuf, *opt);
    if (!kinds)
        return;
    if (tuna_memory_coll_stages(coll, *opt, kinds, sendbuf, sendtype, recvtype, op))
        *staged = true;
    else
        to_vendor(coll, opt, tuna_memory_coll_reason(coll, *opt, kinds));
}

/* alltoall's plans on device buffers are the library's. */
void tuna_memory_plan_options(tuna_collective coll, const void *sendbuf, const void *recvbuf,
                              const tuna_options **opt)
{
    const unsigned kinds = kinds_of(coll, sendbuf, recvbuf, *opt);
    if (kinds)
        to_vendor(coll, opt, tuna_memory_reason(kinds));
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
