/*
 * The padded radix-2 Bruck rows as steps (bruck.c, padded_bruck.c; the helpers in
 * bruck_common.c): what an operation keeps between its rounds.
 */
#ifndef TUNA_BRUCK_COMMON_H
#define TUNA_BRUCK_COMMON_H

#include "alltoallv.h"

/* A padded Bruck operation between its steps, at o->state (freed by its last step, or by
 * o->state_free). */
typedef struct tuna_bruck_op {
    tuna_bytes_view v;
    tuna_timer tm;
    size_t B, wbytes;        /* padded block size; bytes of the padded set(s) */
    size_t round_temp;       /* the packed rounds' two buffers */
    char *w, *rot;           /* the padded set; classic Bruck's rotated copy */
    char *set;               /* the one the rounds move */
    unsigned char *upper;    /* padded-bruck datatype=1: slot i is in the upper half */
    char *sbuf, *rbuf;       /* packed rounds: a round's slots out and in */
    MPI_Aint *disp;          /* datatype rounds: the slots' offsets, out and in */
    MPI_Datatype blk, st, rt;
    int k, K, n;             /* the round in flight (-1: none yet), the rounds, its slots */
    int tag;
    int idx[];               /* the slots of round k (at most P/2) */
} tuna_bruck_op;

/* The first step's opening (o->i = 1): the state on o (o->state, o->state_free) with its
 * byte view open at *out (returns true); else the operation ended, with nothing to exchange
 * (every block of every rank empty: a global fact) or the open's failure, and *step is what
 * the step returns (false). */
bool tuna_bruck_op_begin(tuna_a2av_op *o, tuna_bruck_op **out, int *step);
/* The last step: the view closed (unpacked if rc is MPI_SUCCESS), the state freed; returns
 * TUNA_STEP_DONE with the outcome. */
int tuna_bruck_op_close(tuna_a2av_op *o, int rc);
/*
 * The ceil(log2 P) rounds over s->set, each packing its slots into one message (memcpy),
 * exchanging it with an Irecv and an Isend and copying the received slots back in place;
 * called first with s->k = -1 and then with each round's wait outcome. Returns
 * TUNA_STEP_WAIT (a round posted) or TUNA_STEP_DONE, the rounds' outcome in *rc.
 * Temporary memory: two buffers of P/2 slots.
 */
int tuna_bruck_packed_rounds(tuna_a2av_op *o, int wait_rc, int *rc);

#endif /* TUNA_BRUCK_COMMON_H */
