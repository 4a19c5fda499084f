/*
 * auto for a persistent neighborhood all-to-all (the plan's init: collective). node-aware
 * replaces the edges between two nodes by one message per node pair and adds two hops inside
 * the nodes, whose cost grows with the bytes; so it is chosen where the small edges (those it
 * gathers, at most `max` bytes) outnumber the node pairs they join at least twice over, over
 * all ranks: E >= 2 M, with E the gathered edges and M the node pairs with at least one. One
 * allreduce of E and of the node pairs' bitmap (nnodes^2 bits; above 2048 nodes each rank's
 * count of distinct destination nodes, an upper bound of M). Otherwise the library's call,
 * the same linear exchange as tuna's linear. Not modelled by the profile yet, not learned.
 */
#include "neighbor.h"

#include <stdlib.h>

#define BITMAP_NODES_MAX 2048

int tuna_nbr_auto_choose(const tuna_nbr_call *c, int *algorithm, long param[TUNA_MAX_PARAMS])
{
    const tuna_ctx *ctx = c->ctx;
    const int vendor = tuna_registry_find_kind(&tuna_nbr_registry, TUNA_ROW_VENDOR);
    const int na = tuna_algorithm_find(TUNA_NEIGHBOR_ALLTOALLV, "node-aware");
    *algorithm = vendor;
    if (ctx->nnodes < 2)
        return MPI_SUCCESS;
    tuna_options def;
    int rc = tuna_options_parse("node-aware", TUNA_NEIGHBOR_ALLTOALLV, &def);
    if (rc != MPI_SUCCESS)
        return rc;
    const tuna_algorithm_info *info = &tuna_nbr_table[na].desc.info;
    long p[TUNA_MAX_PARAMS] = {0};
    tuna_params_resolve(info, def.value, ctx->size, p);
    const size_t max = (size_t)tuna_param_get(info, p, "max");
    const int N = ctx->nnodes, mine = ctx->node_id;
    const bool bitmap = N <= BITMAP_NODES_MAX;
    const size_t nbytes = bitmap ? ((size_t)N * (size_t)N + 7) / 8 : 0;
    unsigned char *bits = calloc(nbytes + 1, 1), *seen = calloc((size_t)N, 1);
    if (!bits || !seen) {
        free(bits);
        free(seen);
        return tuna_error_set(MPI_ERR_NO_MEM, "neighbor auto: no memory");
    }
    long long v[2] = {0, 0}; /* gathered edges; distinct destination nodes (no bitmap) */
    for (int i = 0; i < c->out.n; i++) {
        const int d = c->out.peer[i];
        const size_t b = tuna_nbr_bytes(&c->out, c->ssize, i);
        if (d == MPI_PROC_NULL || b == 0 || b > max || ctx->node_of[d] == mine)
            continue;
        const int x = ctx->node_of[d];
        v[0]++;
        v[1] += !seen[x];
        seen[x] = 1;
        if (bitmap) {
            const size_t bit = (size_t)mine * (size_t)N + (size_t)x;
            bits[bit / 8] |= (unsigned char)(1u << (bit % 8));
        }
    }
    free(seen);
    rc = PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_LONG_LONG, MPI_SUM, ctx->comm);
    if (rc == MPI_SUCCESS && bitmap)
        rc = PMPI_Allreduce(MPI_IN_PLACE, bits, (int)nbytes, MPI_BYTE, MPI_BOR, ctx->comm);
    if (rc != MPI_SUCCESS) {
        free(bits);
        return tuna_error_set(rc, "neighbor auto: the pattern's agreement failed");
    }
    long long pairs = v[1];
    if (bitmap) {
        pairs = 0;
        for (size_t i = 0; i < nbytes; i++)
            pairs += __builtin_popcount(bits[i]);
    }
    free(bits);
    if (pairs > 0 && v[0] >= 2 * pairs) {
        *algorithm = na;
        for (int i = 0; i < TUNA_MAX_PARAMS; i++)
            param[i] = p[i];
    }
    return MPI_SUCCESS;
}
