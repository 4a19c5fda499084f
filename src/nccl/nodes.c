/*
 * The nodes of an NCCL communicator (its NVLink domains, for the hierarchical rows): Q ranks
 * per node when the ranks are numbered node by node and every node holds Q of them, else 0.
 * TUNA_RANKS_PER_NODE=Q (read once per process) makes logical nodes of Q consecutive ranks
 * (as on the MPI path);
 * otherwise the ranks share a hash of their host names once per communicator (NCCL's own
 * allgather of 8 bytes each and a host wait), kept for its later calls. Every rank gets the
 * same answer: the same names, the same rule.
 */
#define _DEFAULT_SOURCE
#include "nccl_rows.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct comm_nodes {
    ncclComm_t comm;
    int Q;
    struct comm_nodes *next;
} comm_nodes;

static comm_nodes *known;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t host_hash(void)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h;
}

/* Q from the ranks' hashes: node-major and equal, else 0. */
static int nodes_of(const uint64_t *h, int P)
{
    int Q = 1;
    while (Q < P && h[Q] == h[0])
        Q++;
    if (P % Q)
        return 0;
    for (int r = 0; r < P; r++) {
        if (h[r] != h[r - r % Q])
            return 0; /* a node's ranks are not consecutive */
        if (r % Q == 0 && r >= Q && h[r] == h[r - Q])
            return 0; /* a node larger than the first */
    }
    return Q;
}

/* TUNA_RANKS_PER_NODE, read once per process (0: unset). */
static long ranks_per_node;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void env_read(void)
{
    const char *env = getenv("TUNA_RANKS_PER_NODE");
    if (env && *env) {
        const long q = strtol(env, NULL, 10);
        ranks_per_node = q > 0 ? q : -1; /* -1: set, not a size: no nodes */
    }
}

int tuna_nccl_nodes(tuna_nccl_tp *t, int *Q)
{
    pthread_once(&env_once, env_read);
    if (ranks_per_node) {
        const long q = ranks_per_node;
        *Q = q > 0 && t->size % q == 0 ? (int)q : 0;
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&lock);
    const comm_nodes *k = known;
    while (k && k->comm != t->comm)
        k = k->next;
    pthread_mutex_unlock(&lock);
    if (k) {
        *Q = k->Q;
        return MPI_SUCCESS;
    }
    const int P = t->size;
    uint64_t *h = tuna_malloc((size_t)P * sizeof *h), *dev = NULL;
    if (!h)
        return tuna_error_set(MPI_ERR_NO_MEM, "NCCL nodes: no memory for %d ranks", P);
    h[t->rank] = host_hash();
    int rc = tuna_nccl_tp_alloc(t, (size_t)P * sizeof *dev, (void **)&dev);
    if (rc == MPI_SUCCESS) {
        tuna_nccl_tp_to_device(t, dev + t->rank, h + t->rank, sizeof *h);
        ncclResult_t r = pncclAllGather(dev + t->rank, dev, sizeof *h, ncclUint8, t->comm,
                                        t->stream);
        if (r != ncclSuccess)
            rc = tuna_nccl_failed(r, "ncclAllGather (the nodes)");
        else {
            tuna_nccl_tp_to_host(t, h, dev, (size_t)P * sizeof *h);
            rc = tuna_nccl_tp_wait(t);
        }
        tuna_nccl_tp_free(t, dev);
    }
    comm_nodes *n = rc == MPI_SUCCESS ? malloc(sizeof *n) : NULL;
    if (n) {
        *Q = n->Q = nodes_of(h, P);
        n->comm = t->comm;
        pthread_mutex_lock(&lock);
        n->next = known;
        known = n;
        pthread_mutex_unlock(&lock);
    } else if (rc == MPI_SUCCESS) {
        *Q = nodes_of(h, P); /* not kept: asked again next time */
    }
    free(h);
    return rc;
}
