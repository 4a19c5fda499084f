/*
 * Every message tag tuna uses, in one place.
 *
 * tuna's messages travel on the private duplicate of the user's communicator (tuna_ctx.comm),
 * so they never meet the application's. Calls on one communicator complete in order and MPI
 * does not let messages between a pair overtake each other, so a tag only has to tell apart
 * the message kinds of one call that could meet at the same receiver (TuNA's metadata and
 * data, a fold-in and a fold-out). Tags are nevertheless distinct per algorithm and kind, so
 * a stray message (a hang under a debugger, an MPI_ERR_TRUNCATE) names its sender.
 *
 * Ranges: 1xx alltoallv, 2xx allgather, 3xx allreduce, 4xx the selector, below 100 the
 * preload library's own communicators. A new algorithm whose messages are of one kind may reuse the tag of the
 * algorithm it varies (docs/contributing.md); one with kinds of its own adds them here.
 */
#ifndef TUNA_TAGS_H
#define TUNA_TAGS_H

enum tuna_tag {
    /* preload (src/preload/requests.c): zero-byte completion message of a persistent proxy
     * request, on the preload's own communicator */
    TUNA_TAG_PRELOAD_PROXY = 1,

    /* alltoallv, linear algorithms: one message per peer, one kind */
    TUNA_TAG_SPREADOUT = 101,
    TUNA_TAG_SCATTERED = 102,
    TUNA_TAG_LINEAR = 103,
    TUNA_TAG_PAIRWISE = 104,
    TUNA_TAG_XOR = 105,
    TUNA_TAG_MULTIPAIR = 106,
    TUNA_TAG_MULTIPAIR_WAITANY = 107,
    TUNA_TAG_MULTIPAIR_TESTANY = 108,

    /* alltoallv, radix-2 Bruck family */
    TUNA_TAG_BRUCK = 120,
    TUNA_TAG_PADDED_BRUCK = 121,
    TUNA_TAG_TWOPHASE_META = 122,  /* twophase-bruck: block sizes of a round */
    TUNA_TAG_TWOPHASE_DATA = 123,  /* twophase-bruck: the round's bytes */
    TUNA_TAG_BRUCK_RADIX = 124,    /* bruck-radix (uniform all-to-all only): a round's packed
                                    * blocks */

    /* alltoallv, TuNA (tuna.c) and hierarchical TuNA (coalesced.c, staggered.c) */
    TUNA_TAG_TUNA_META = 140,      /* a round's block sizes */
    TUNA_TAG_TUNA_DATA = 141,      /* a round's data */
    TUNA_TAG_HIER_META = 142,      /* intra-node engine: sizes */
    TUNA_TAG_HIER_DATA = 143,      /* intra-node engine: data */
    TUNA_TAG_INTER_META = 144,     /* inter-node phase: sub-block sizes */
    TUNA_TAG_INTER_DATA = 145,     /* inter-node phase: data */
    TUNA_TAG_MESH = 146,           /* mesh (uniform all-to-all only): a phase's blocks for one
                                    * peer */

    /* allgather */
    TUNA_TAG_AG_RING = 201,
    TUNA_TAG_AG_KRING_INTER = 202,
    TUNA_TAG_AG_KRING_INTRA = 203,
    TUNA_TAG_AG_FOLD_IN = 204,     /* recmul family: a member's block to its leader */
    TUNA_TAG_AG_FOLD_OUT = 205,    /* recmul family: the result back to the members */
    TUNA_TAG_AG_RECMUL = 206,
    TUNA_TAG_AG_RECMUL_PERMUTED = 207,

    /* allreduce */
    TUNA_TAG_AR_RING_RS = 301,     /* ring reduce-scatter */
    TUNA_TAG_AR_RING_AG = 302,     /* ring allgather */
    TUNA_TAG_AR_KRING_INTRA_RS = 303,
    TUNA_TAG_AR_KRING_INTER_RS = 304,
    TUNA_TAG_AR_KRING_INTER_AG = 305,
    TUNA_TAG_AR_KRING_INTRA_AG = 306,
    TUNA_TAG_AR_FOLD_IN = 307,
    TUNA_TAG_AR_FOLD_OUT = 308,
    TUNA_TAG_AR_RECMUL = 309,
    TUNA_TAG_AR_SELF_COPY = 310,   /* a derived-type copy through the rank itself */
    TUNA_TAG_AR_PERMUTED_RS = 311,
    TUNA_TAG_AR_PERMUTED_AG = 312,

    /* selector (src/select/learn.c): a rank's messages to itself that time its per-message
     * cost */
    TUNA_TAG_LEARN_PROBE = 401,

    /* neighborhood all-to-all (src/neighbor/) */
    TUNA_TAG_NBR_LINEAR = 411,     /* one message per edge */
    TUNA_TAG_NBR_HEAD = 412,       /* node_aware: how many edges a rank routes via a leader */
    TUNA_TAG_NBR_LIST = 413,       /* node_aware: those edges (peer, bytes) */
    TUNA_TAG_NBR_GATHER = 414,     /* node_aware: a rank's pieces to its node's leader */
    TUNA_TAG_NBR_INTER = 415,      /* node_aware: one message per node pair */
    TUNA_TAG_NBR_SCATTER = 416,    /* node_aware: a receiving leader's pieces to a rank */
    TUNA_TAG_NBR_DIRECT = 417,     /* node_aware: edges within a node, or too large to gather */
    TUNA_TAG_NBR_TUNA_META = 418,  /* tuna: a round's block sizes (not in a plan's starts) */
    TUNA_TAG_NBR_TUNA_DATA = 419,  /* tuna: a round's data */
    TUNA_TAG_NBR_LINEAR_UP = 420,  /* linear by direction: the messages sent in a Cartesian
                                      dimension's + direction */
};

#endif /* TUNA_TAGS_H */
