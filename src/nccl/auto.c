/*
 * auto on the NCCL path (docs/nccl.md, "auto"): allgather, allreduce and alltoall, whose
 * sizes every rank knows alike (the count is the same argument everywhere), and alltoallv,
 * whose size class comes from the largest block of any rank (agreed by one small NCCL
 * allreduce per call, a host wait: tuna_nccl_auto_agree_max). No machine
 * profile for GPUs has been measured, so auto learns by timing instead of predicting: per
 * communicator, collective and size class (bytes rounded down to a power of two) its first
 * calls run each candidate twice, NCCL's own among them, timed with CUDA events on the call's
 * stream (the host waits for the stream at the end of such a call); the call that times the
 * last one agrees on the slowest rank's best times (NCCL's own allreduce, max, on the same
 * stream) and every later call of that class runs the fastest. Every rank makes the same
 * calls in the same order (NCCL's rule), so every rank is at the same learning step and
 * settles on the same row.
 */
#include "nccl_rows.h"

#include <pthread.h>
#include <stdlib.h>

#define REPS 2 /* timings per candidate: the best of them */

static const char *const ag_candidates[] = {"vendor",     "ring",       "kring:k=2",
                                            "kring:k=4",  "recmul:k=2", "recmul:k=4",
                                            "recmul-permuted:k=4"};
static const char *const a2a_candidates[] = {"vendor",       "linear",       "pairwise",
                                             "tuna:radix=2", "tuna:radix=4", "coalesced"};
static const char *const a2av_candidates[] = {"linear",       "pairwise",     "tuna:radix=2",
                                              "tuna:radix=4", "tuna:radix=8", "coalesced"};
#define NAG ((int)(sizeof ag_candidates / sizeof *ag_candidates))
#define NA2A ((int)(sizeof a2a_candidates / sizeof *a2a_candidates))
#define NA2AV ((int)(sizeof a2av_candidates / sizeof *a2av_candidates))
#define MAXC (NAG > NA2A ? NAG : NA2A)

/* [allgather, allreduce, alltoall, alltoallv][candidate] */
static tuna_options parsed[4][MAXC];
static const char *const *const names[4] = {ag_candidates, ag_candidates, a2a_candidates,
                                            a2av_candidates};
static const int ncand[4] = {NAG, NAG, NA2A, NA2AV};
static int parse_rc = MPI_SUCCESS;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int slot_of(tuna_collective c)
{
    return c == TUNA_ALLGATHER ? 0 : c == TUNA_ALLREDUCE ? 1 : c == TUNA_ALLTOALL ? 2 : 3;
}

static void parse_candidates(void)
{
    const tuna_collective colls[4] = {TUNA_ALLGATHER, TUNA_ALLREDUCE, TUNA_ALLTOALL,
                                      TUNA_ALLTOALLV};
    for (int s = 0; s < 4; s++)
        for (int i = 0; i < ncand[s]; i++) {
            int rc = tuna_options_parse(names[s][i], colls[s], &parsed[s][i]);
            if (rc != MPI_SUCCESS)
                parse_rc = rc;
        }
}

typedef struct auto_class {
    ncclComm_t comm;
    int coll, bucket;
    int calls;           /* learning calls so far */
    double best[MAXC];   /* this rank's best seconds per candidate */
    int choice;          /* the settled candidate, -1 while learning */
    struct auto_class *next;
} auto_class;

static auto_class *classes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int bucket_of(size_t bytes)
{
    int b = 0;
    while (bytes >>= 1)
        b++;
    return b;
}

static auto_class *class_of(ncclComm_t comm, tuna_collective c, size_t bytes)
{
    const int coll = slot_of(c), bucket = bucket_of(bytes);
    pthread_mutex_lock(&lock);
    auto_class *k = classes;
    while (k && !(k->comm == comm && k->coll == coll && k->bucket == bucket))
        k = k->next;
    if (!k && (k = calloc(1, sizeof *k))) {
        *k = (auto_class){.comm = comm, .coll = coll, .bucket = bucket, .choice = -1,
                          .next = classes};
        classes = k;
    }
    pthread_mutex_unlock(&lock);
    return k;
}

int tuna_nccl_auto_begin(tuna_collective c, ncclComm_t comm, size_t bytes,
                         tuna_nccl_auto_step *step)
{
    pthread_once(&once, parse_candidates);
    if (parse_rc != MPI_SUCCESS)
        return tuna_error_set(MPI_ERR_INTERN, "NCCL auto: a candidate does not parse");
    auto_class *k = class_of(comm, c, bytes);
    if (!k)
        return tuna_error_set(MPI_ERR_NO_MEM, "NCCL auto: no memory for its state");
    const int n = ncand[k->coll];
    step->cls = k;
    step->learning = k->choice < 0;
    step->candidate = step->learning ? k->calls % n : k->choice;
    step->opt = &parsed[k->coll][step->candidate];
    return MPI_SUCCESS;
}

const char *tuna_nccl_auto_name(const tuna_nccl_auto_step *step)
{
    const auto_class *k = step->cls;
    return names[k->coll][step->candidate];
}

int tuna_nccl_auto_agree_max(double *v, int n, tuna_nccl_tp *t)
{
    /* The transport's stream-ordered temporary and copies (as nodes.c): no device-wide
     * cudaMalloc/cudaFree on alltoallv's per-call agreement; the allreduce is posted even
     * after a failed copy (kept, returned by the wait), so the peers' is matched. */
    const size_t bytes = (size_t)n * sizeof *v;
    double *dev = NULL;
    int rc = tuna_nccl_tp_alloc(t, bytes, (void **)&dev);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_nccl_tp_to_device(t, dev, v, bytes);
    const ncclResult_t r = pncclAllReduce(dev, dev, (size_t)n, ncclFloat64, ncclMax, t->comm,
                                          t->stream);
    if (r != ncclSuccess) {
        rc = tuna_nccl_failed(r, "ncclAllReduce (auto's agreement)");
    } else {
        tuna_nccl_tp_to_host(t, v, dev, bytes);
        rc = tuna_nccl_tp_wait(t);
    }
    tuna_nccl_tp_free(t, dev);
    return rc;
}

int tuna_nccl_auto_end(tuna_nccl_auto_step *step, double seconds, tuna_nccl_tp *t)
{
    auto_class *k = step->cls;
    if (!step->learning)
        return MPI_SUCCESS;
    const int n = ncand[k->coll];
    if (k->calls < n || seconds < k->best[step->candidate])
        k->best[step->candidate] = seconds;
    if (++k->calls < REPS * n)
        return MPI_SUCCESS;
    int rc = tuna_nccl_auto_agree_max(k->best, n, t);
    if (rc != MPI_SUCCESS)
        return rc;
    int best = 0;
    for (int i = 1; i < n; i++)
        if (k->best[i] < k->best[best])
            best = i;
    k->choice = best;
    return MPI_SUCCESS;
}
