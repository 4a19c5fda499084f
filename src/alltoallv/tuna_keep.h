/*
 * Owners of the communicator context's kept[] buffers (tuna_ctx.kept: kept across calls,
 * freed with the context). One list, so no two algorithms use the same index.
 */
#ifndef TUNA_KEEP_H
#define TUNA_KEEP_H

#include "alltoallv.h"

enum {
    TUNA_KEEP_ROUNDS_TEMP = 0,    /* tuna_rounds.c: the temporary slots (the arena) */
    TUNA_KEEP_ROUNDS_STAGING = 1, /* tuna_rounds.c: copies of the middle-hop blocks */
    TUNA_KEEP_HIER_STAGE = 2,     /* hierarchical_tuna.c: sub-blocks bound for other nodes */
    TUNA_KEEP_USED = 3            /* first free index */
};

_Static_assert(TUNA_KEEP_USED <= (int)(sizeof(((tuna_scratch *)0)->kept) / sizeof(void *)),
               "more kept buffers than tuna_scratch.kept holds");

#endif /* TUNA_KEEP_H */
