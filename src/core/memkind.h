/*
 * Memory kinds (docs/gpu.md): whether a call's buffers are host memory, which tuna's rows
 * read and write with host code, or memory host code must not touch (CUDA device memory,
 * and managed memory, treated alike). A call whose buffers are not all host memory goes to
 * the MPI library's own call unless the row asked for declares their kinds
 * (tuna_algorithm.memory, tuna_registry.h: alltoallv's rows that post only byte regions,
 * blocking, nonblocking and plans, through the staging transport, src/transport/cuda_staged.c;
 * auto too where the MPI is not CUDA-aware).
 *
 * The question goes to CUDA's driver (libcuda.so.1) only in a process that has loaded it:
 * tuna never loads or initialises it (dlopen with RTLD_NOLOAD). Without a device pointer
 * there is no driver, and a process without one pays a load and a compare per call: the
 * last shared object seen loaded (pinned) is watched for a successor; only when one appears
 * does tuna look for the driver again.
 */
#ifndef TUNA_MEMKIND_H
#define TUNA_MEMKIND_H

#include "tuna_internal.h"

#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>

/* The memory kinds of a call's buffers (bits). Managed memory counts as device memory. */
enum {
    TUNA_MEMORY_HOST = 1u << 0,
    TUNA_MEMORY_DEVICE = 1u << 1,
};

/* memkind.c's state: the driver's query once found; the last loaded object seen (NULL: look
 * on every call, where no object could be pinned). */
extern atomic_bool tuna_memkind_driver;
extern struct link_map *_Atomic tuna_memkind_tail;

/* The kinds of sendbuf and recvbuf (slow path: the driver's answer). */
unsigned tuna_memory_kinds_query(const void *sendbuf, const void *recvbuf);

/* The common case of tuna_memory_kinds (below) alone: true where every buffer is host memory
 * because no driver is loaded (false: ask tuna_memory_kinds). No call, so an entry that
 * only checks and then jumps needs no frame of its own on this path. */
static inline bool tuna_memory_surely_host(void)
{
#if defined(SMPI_SHARED_MALLOC) /* SimGrid SMPI: simulated ranks, no device (nor its cost) */
    return true;
#else
    if (!atomic_load_explicit(&tuna_memkind_driver, memory_order_acquire)) {
        struct link_map *t = atomic_load_explicit(&tuna_memkind_tail, memory_order_acquire);
        if (t && !__atomic_load_n(&t->l_next, __ATOMIC_ACQUIRE))
            return true;
    }
    return false;
#endif
}

/*
 * The kinds of a call's buffers: TUNA_MEMORY_HOST alone where the driver is not loaded (the
 * common case, inline). MPI_IN_PLACE and NULL (MPI_BOTTOM, or no data) are not asked about:
 * NULL-relative buffers keep tuna's rules for them.
 */
static inline unsigned tuna_memory_kinds(const void *sendbuf, const void *recvbuf)
{
    if (tuna_memory_surely_host())
        return TUNA_MEMORY_HOST;
    return tuna_memory_kinds_query(sendbuf, recvbuf);
}

/* Why a call with buffers of `kinds` is not tuna's (the statistics' fallback). */
const char *tuna_memory_reason(unsigned kinds);

/* The signatures the hand-over and the drop-in's entries below share, one per call. */
typedef int tuna_alltoallv_entry(bool large, const void *sendbuf, const void *sendcounts,
                                 const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                                 const void *recvcounts, const void *rdispls,
                                 MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt);
typedef int tuna_alltoall_entry(bool large, const void *sendbuf, MPI_Count sendcount,
                                MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt);
typedef int tuna_allgather_entry(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, const tuna_options *opt);
typedef int tuna_allreduce_entry(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                 const tuna_options *opt);
/* The nonblocking forms: the same arguments, then the request. */
typedef int tuna_ialltoallv_entry(bool large, const void *sendbuf, const void *sendcounts,
                                  const void *sdispls, MPI_Datatype sendtype, void *recvbuf,
                                  const void *recvcounts, const void *rdispls,
                                  MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                                  tuna_request *req);
typedef int tuna_ialltoall_entry(bool large, const void *sendbuf, MPI_Count sendcount,
                                 MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype recvtype, MPI_Comm comm, const tuna_options *opt,
                                 tuna_request *req);
typedef int tuna_iallgather_entry(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, const tuna_options *opt, tuna_request *req);
typedef int tuna_iallreduce_entry(const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                  const tuna_options *opt, tuna_request *req);

/*
 * The public entries' hand-over (memory_route.c). Each returns -1 where the call's buffers
 * are host memory or the row asked for serves their kinds (tuna's path goes on), else the
 * outcome of the library's own call, with tuna_stats_last() naming the vendor row and the
 * reason. Large counts (large: MPI_Count counts, MPI_Aint displacements) need the library's
 * _c call: MPI_ERR_UNSUPPORTED_OPERATION where it has none. Nonblocking: the library's
 * nonblocking call inside a tuna request (*req).
 */
tuna_alltoallv_entry tuna_memory_alltoallv;
tuna_alltoall_entry tuna_memory_alltoall;
tuna_allgather_entry tuna_memory_allgather;
tuna_allreduce_entry tuna_memory_allreduce;
/* A nonblocking call on device memory that memory_route.c leaves to tuna: its options, but
 * for auto (where the MPI is not CUDA-aware) a fixed row that stages them (alltoallv
 * scattered, allgather and allreduce ring; docs/device-rows.md). */
const tuna_options *tuna_memory_nb_row(tuna_collective coll, const tuna_options *opt);
tuna_ialltoallv_entry tuna_memory_ialltoallv;
tuna_ialltoall_entry tuna_memory_ialltoall;
tuna_iallgather_entry tuna_memory_iallgather;
tuna_iallreduce_entry tuna_memory_iallreduce;

/*
 * The drop-in's entries (src/preload/): the public calls for buffers the drop-in's own check
 * found to be host memory (it hands every other call to the library itself), so a call asks
 * about its buffers once, not twice. Large counts (large): the _c forms, as above.
 */
tuna_alltoallv_entry tuna_alltoallv_host;
tuna_ialltoallv_entry tuna_ialltoallv_host;
tuna_alltoall_entry tuna_alltoall_host;
tuna_ialltoall_entry tuna_ialltoall_host;
tuna_allgather_entry tuna_allgather_host;
tuna_iallgather_entry tuna_iallgather_host;
tuna_allreduce_entry tuna_allreduce_host;
tuna_iallreduce_entry tuna_iallreduce_host;

/*
 * Whether the MPI library takes device memory itself (CUDA-aware): TUNA_CUDA_AWARE=1 or 0,
 * else MPIX_Query_cuda_support() where the MPI's headers declare it, else assumed so (the
 * library's call, as before). Decided once per process; *source (may be NULL): which.
 */
bool tuna_memory_mpi_cuda_aware(const char **source);

/*
 * alltoallv's staged path (memory_route.c): whether the row of opt serves buffers of `kinds`
 * through the staging transport in a call of these arguments (contiguous types, not in
 * place, CUDA's runtime usable; auto: the MPI not CUDA-aware), and, where it does not, why
 * (the statistics' fallback). For plans and blocking calls.
 */
bool tuna_memory_a2av_stages(const tuna_options *opt, unsigned kinds, const void *sendbuf,
                             MPI_Datatype sendtype, MPI_Datatype recvtype);
const char *tuna_memory_a2av_reason(const tuna_options *opt, unsigned kinds);
/* The same for allgather (op MPI_OP_NULL; contiguous types) and allreduce (sendtype = recvtype:
 * its type, predefined without gaps; a predefined op); MPI_IN_PLACE served. */
bool tuna_memory_coll_stages(tuna_collective coll, const tuna_options *opt, unsigned kinds,
                             const void *sendbuf, MPI_Datatype sendtype, MPI_Datatype recvtype,
                             MPI_Op op);
const char *tuna_memory_coll_reason(tuna_collective coll, const tuna_options *opt,
                                    unsigned kinds);

/*
 * Plans (src/plan/plan_memory.c): *opt (already the collective's default where the caller
 * gave NULL) is replaced by the vendor row's options where the buffers are not host memory
 * and the row asked for does not serve them; the reason waits (per thread) for
 * tuna_memory_plan_done, which the init's end calls with the plan made (or NULL): the plan's
 * starts then name the reason in the statistics. A vendor plan that would run tuna's linear
 * exchange (large counts, no _c call in the library) fails there with
 * MPI_ERR_UNSUPPORTED_OPERATION. alltoallv's form (_a2av) and allgather's and allreduce's
 * (_coll) keep a row that stages the buffers (*staged true: the plan makes its own staging
 * transport).
 */
void tuna_memory_plan_options(tuna_collective coll, const void *sendbuf, const void *recvbuf,
                              const tuna_options **opt);
void tuna_memory_plan_options_a2av(const void *sendbuf, MPI_Datatype sendtype,
                                   const void *recvbuf, MPI_Datatype recvtype,
                                   const tuna_options **opt, bool *staged);
/* allgather's and allreduce's (op: allreduce's; sendtype = recvtype there). */
void tuna_memory_plan_options_coll(tuna_collective coll, const void *sendbuf,
                                   MPI_Datatype sendtype, const void *recvbuf,
                                   MPI_Datatype recvtype, MPI_Op op, const tuna_options **opt,
                                   bool *staged);
struct tuna_plan_s;
int tuna_memory_plan_done(struct tuna_plan_s *p, int rc);

#endif /* TUNA_MEMKIND_H */
