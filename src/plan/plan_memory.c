/*
 * Plans on buffers that are not host memory (src/core/memkind.h), whatever the row: the init
 * makes a vendor plan (its starts run the library's own call, and the planner times nothing),
 * whose starts name the reason in the statistics.
 */
#include "plan.h"

#include "memkind.h"

/* The reason of this thread's init in progress (NULL: none). */
static _Thread_local const char *pending;
static _Thread_local bool pending_device;
static _Thread_local tuna_options vendor_options;

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
    /* Rows that serve device memory do so in blocking and nonblocking calls only
     * (src/core/memory_route.c):
     * a plan on device buffers is the library's. */
    const tuna_algorithm *row = tuna_registry_row(reg, (*opt)->algorithm);
    const int vendor = tuna_registry_find_kind(reg, TUNA_ROW_VENDOR);
    pending_device = true;
    if ((*opt)->algorithm != vendor)
        pending = ((row->memory | TUNA_MEMORY_HOST) & kinds) != kinds
                      ? tuna_memory_reason(kinds)
                  : (kinds & TUNA_MEMORY_HOST)
                      ? "host and device buffers in one call: the algorithm serves device memory "
                        "in blocking and nonblocking calls only (docs/gpu.md)"
                      : "device buffers: the algorithm serves them in blocking and nonblocking "
                        "calls only (docs/gpu.md)";
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
