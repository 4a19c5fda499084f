/*
 * TuNA's rounds and the hierarchical TuNA driver, shared by tuna.c,
 * coalesced.c and staggered.c (implemented in tuna_rounds.c and
 * hierarchical_tuna.c).
 */
#ifndef TUNA_ROUNDS_H
#define TUNA_ROUNDS_H

#include "alltoallv.h"
#include "sizes_wire.h"
#include "tuna_keep.h"

#include <stdint.h>

/* ------------------------------------------------------------ message regions */

/*
 * A message made of raw-byte regions, sent or received in one MPI call: one
 * region goes out as MPI_BYTE, several as an hindexed datatype on MPI_BOTTOM
 * (zero copy), regions above 1 GiB are split so every length fits an int.
 */
typedef struct tuna_regions {
    int n, cap;          /* regions used, room in ptr/len (caller-provided storage) */
    char **ptr;
    size_t *len;
    size_t total;        /* bytes */
} tuna_regions;

/*
 * Append a region (merged with the previous one when adjacent; empty ones are
 * dropped). The caller sizes the storage for the worst case, one per call.
 */
void tuna_regions_add(tuna_regions *m, const void *p, size_t len);
/* Post the message; *req stays MPI_REQUEST_NULL when it is empty. */
int tuna_regions_isend(const tuna_transport *tp, const tuna_regions *m, int peer, int tag,
                       MPI_Comm comm, MPI_Request *req);
int tuna_regions_irecv(const tuna_transport *tp, const tuna_regions *m, int peer, int tag,
                       MPI_Comm comm, MPI_Request *req);

/* ------------------------------------------------------------ TuNA's rounds */

/* recv_cap of a sub-block that has no place of its own: it goes to the landing area. */
#define TUNA_RECV_LAND SIZE_MAX

/*
 * TuNA over a group of n ranks of `comm` (group index -> rank through
 * `members`, identity when NULL). Group member `me` sends to every member j a
 * block made of `nsub` sub-blocks: sub-block (j, k) is send_ptr[j*nsub+k],
 * send_bytes[j*nsub+k] bytes. The block of member j arrives, for good, at
 * recv_ptr[j*nsub+k] with capacity recv_cap[j*nsub+k]; the received sizes are
 * written to recv_got[j*nsub+k] if recv_got is not NULL. A received size above
 * its capacity is discarded and reported as MPI_ERR_TRUNCATE after the
 * exchange has completed (so no rank hangs). The block to itself (j = me) is
 * the caller's business.
 *
 * A sub-block whose recv_cap is TUNA_RECV_LAND (any size) is appended, in
 * arrival order, to the landing area scr->kept[land_keep] (grown as the
 * metadata announces such sub-blocks, trimmed to the bytes landed at the end);
 * its offset there goes to land_off[j*nsub+k] and its size to recv_got (both
 * required then). land_keep = -1: no landing area.
 *
 * Every member must pass the same n, nsub, radix and batch. No global size is
 * needed: each round's metadata tells a rank what it is about to receive.
 *
 * sizes_known (a uniform all-to-all): every sub-block of every member is known_bytes
 * bytes and every member knows it, so no metadata is sent at all: each batch takes its
 * sizes from known_bytes and goes straight to its data (one wait per batch, not two).
 * Every member must pass the same sizes_known and known_bytes (zero-initialised: sizes
 * unknown, the metadata rounds).
 */
/* A persistent exchange's received block sizes, batch by batch in the schedule's order
 * (tuna_rounds.sizes_log). */
typedef struct tuna_sizes_log {
    uint64_t *v;
    size_t n, cap;
} tuna_sizes_log;

typedef struct tuna_rounds {
    MPI_Comm comm;
    const tuna_transport *tp;
    tuna_scratch *scr;   /* owner of the kept buffers (TUNA_KEEP_ROUNDS_*) */
    int n, me;
    const int *members;
    int nsub;
    int radix;           /* clamped to [2, n] */
    int batch;           /* rounds of one digit in flight together; clamped to [1, radix-1] */
    int tag_meta, tag_data;
    const char *const *send_ptr;
    const size_t *send_bytes;
    char *const *recv_ptr;
    const size_t *recv_cap;
    size_t *recv_got;
    int land_keep;       /* kept[] index of the landing area, or -1 */
    size_t *land_off;
    bool sizes_known;    /* every sub-block is known_bytes bytes: no metadata messages */
    size_t known_bytes;
    /* An exchange repeated with the same sizes (a persistent neighborhood plan): one with
     * metadata records what each batch received (sizes_record), the later ones replay it
     * (sizes_known with sizes_log: the log's sizes instead of known_bytes, no metadata).
     * Every member records and replays alike. NULL: no log. */
    tuna_sizes_log *sizes_log;
    bool sizes_record;
} tuna_rounds;

/* Shape of a TuNA schedule: digits, rounds, temporary slots, staging slots. */
typedef struct tuna_rounds_schedule {
    int r, batch, w;     /* radix, in-flight rounds per digit, digits */
    int K;               /* rounds */
    int slots;           /* n - (K+1): blocks that need a temporary slot */
    int staged;          /* H: largest number of middle-hop blocks in one batch */
} tuna_rounds_schedule;

void tuna_rounds_schedule_of(int n, int radix, int batch, tuna_rounds_schedule *s);

/*
 * The exchange as steps (src/core/op.h), its state in the caller's operation: the memory
 * notes in tuna_rounds.c; the fields are the rounds' own.
 */
typedef struct tuna_rounds_state {
    const tuna_rounds *e;        /* the caller's, alive until the exchange ends */
    tuna_scratch *c;             /* owner of the kept buffers */
    tuna_timer *tm;              /* the caller's phase timer */
    tuna_rounds_schedule s;
    char *temp;                  /* the arena: kept[TUNA_KEEP_ROUNDS_TEMP] */
    size_t stride;               /* bytes per slot */
    char *old_temp;              /* previous arena, while this batch's sends read it */
    size_t old_len;
    size_t held;                 /* largest block held in a slot during this call */
    size_t staged_max;           /* largest staging need of a batch */
    size_t land_used;            /* bytes landed so far */
    size_t peak;                 /* largest sum of the buffers above held at once */
    size_t *slot_sizes;          /* [slot*nsub + k]; 0 once the block has left */
    int *blk;                    /* block indices of the current batch, by round */
    int *start;                  /* [q]: first entry of round q in blk; [nb]: end */
    uint64_t *meta_send, *meta_recv;
    unsigned char *wire_send, *wire_recv; /* the same sizes encoded (tuna_sizes_encode) */
    char **rptr;                 /* region pools: per round, blocks*nsub entries */
    size_t *rlen;
    tuna_regions *sreg, *rreg;
    MPI_Request *req;
    char *discard;               /* truncated blocks land here (error path only) */
    size_t discard_len;
    /* Where the schedule is between steps: the batch of rounds (x, z0..z0+nb-1). */
    int phase;
    int x, z0, nb;
    long long px;
    size_t log_at, log_next;     /* the current / next batch's first size in e->sizes_log */
    int rc;                      /* the current batch's error (then it settles) */
    int rc_trunc;                /* a truncation, reported once the exchange is over */
    int rc_batch_trunc;          /* the current batch's truncation */
    bool meta_posted, arena_sends;
    int sends_posted;
    int drain_q;                 /* settling: the next round whose data is drained */
    char *drain;
    MPI_Request drain_req;
    size_t temp_bytes;           /* at the end: the peak of temporary memory (0 on failure) */
} tuna_rounds_state;

/*
 * Start the exchange in st (zeroed by the caller; e and tm stay alive until it ends): the
 * first step, which only posts. Returns TUNA_STEP_WAIT with the requests to complete in
 * *req[0 .. *nreq), or TUNA_STEP_DONE with the outcome in st->rc and st->temp_bytes the
 * peak of the temporary memory the rounds held (see tuna_rounds.c for the bound):
 *   slots * m + S (+ the landing area), where m is the largest block (all its
 *   sub-blocks) this member holds in a temporary slot and S the largest total of the
 *   middle-hop blocks it stages in one batch. The buffers are kept on scr between calls
 *   and trimmed at the end of each call to what it used.
 * tuna_rounds_step continues after those requests completed (wait_rc: the wait's
 * outcome), with the same answers. tuna_rounds_state_free releases what st holds (any
 * time no request of it is pending; again is harmless).
 */
int tuna_rounds_start(tuna_rounds_state *st, const tuna_rounds *e, tuna_timer *tm,
                      MPI_Request **req, int *nreq);
int tuna_rounds_step(tuna_rounds_state *st, int wait_rc, MPI_Request **req, int *nreq);
void tuna_rounds_state_free(tuna_rounds_state *st);

/* ------------------------------------------------------------ hierarchical TuNA */

/*
 * State of a hierarchical call after the intra-node phase, for the inter-node
 * exchange of coalesced.c / staggered.c. Node-major virtual ranks: node n,
 * local rank g, Q ranks per node, N nodes. For distance d in [1, N-1] and
 * local rank l in [0, Q): out_* describe the sub-block that goes from this
 * rank to node (n+d) mod N (the one local rank l of this node sends to local
 * rank g there), in_* the sub-block from local rank l of node (n-d) mod N
 * (its final place, or a discard buffer on a size mismatch). Index (d-1)*Q+l.
 */
typedef struct tuna_hier {
    const tuna_a2av_args *a;
    int Q, N, node, local;
    int *to_rank, *from_rank;   /* [d-1]: peer rank (same local rank) at distance d */
    char **out_ptr;
    size_t *out_bytes;
    char **in_ptr;
    size_t *in_bytes;
    /* The inter-node exchange's own, between its steps. */
    int block;                  /* parameter "block" (the inter function clamps it) */
    int pos;                    /* batches posted (0: its first step) */
    int rounds;                 /* inter-node rounds so far (statistics) */
    int rc;                     /* its outcome, once done */
    MPI_Request *req;           /* from a->scr */
    void *pool;                 /* its own allocation, if any (freed with the call) */
} tuna_hier;

/*
 * One step of the inter-node exchange (coalesced.c, staggered.c), called first with
 * h->pos = 0, then each time the requests it posted (tuna_a2av_step_wait on o) completed
 * without error (the caller records that wait's outcome in h->rc: a failed batch ends the
 * exchange). Returns TUNA_STEP_WAIT, or TUNA_STEP_DONE with its outcome in h->rc and its
 * rounds in h->rounds.
 */
typedef int tuna_hier_inter_fn(tuna_a2av_op *o, tuna_hier *h);

/*
 * Hierarchical TuNA as steps: radix = parameter "radix" (clamped to [2, Q]), inter-node
 * batch = parameter "block" (clamped to [1, inter_max] by the inter function). Unequal
 * nodes fall back to flat TuNA with a logged reason.
 */
int tuna_hier_step(tuna_a2av_op *o, int wait_rc, const char *name, tuna_hier_inter_fn *inter);

#endif /* TUNA_ROUNDS_H */
