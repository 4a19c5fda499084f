/*
 * The uniform all-to-all (MPI_Alltoall): its registry and auto. Every row but vendor and
 * auto is a step form on alltoallv's operation (src/alltoallv/alltoallv.h): the front end
 * (alltoall.c) describes the P equal blocks as alltoallv arguments with a->uniform set, so
 * the alltoallv rows run unchanged and the uniform-only rows (and TuNA's engine) know every
 * block's size without a message. docs/algorithms-alltoall.md.
 */
#ifndef TUNA_ALLTOALL_H
#define TUNA_ALLTOALL_H

#include "../alltoallv/alltoallv.h"

extern const tuna_a2av_algorithm tuna_a2a_table[];
extern const tuna_registry tuna_a2a_registry;

/* auto: the model's choice for blocks of `block` bytes (every rank's, MPI's rule: no
 * agreement), the tuning table's where it has one, learning around it (blocking calls:
 * *learning is then the class to time, tuna_learn_after); learning NULL: the model's choice
 * alone (nonblocking and persistent starts). Needs tuna_select_agree() done on ctx. */
int tuna_a2a_auto_choose(tuna_ctx *ctx, size_t block, tuna_choice *c,
                         tuna_learn_class **learning);
/* Whether the MPI library's own MPI_Alltoall runs the model's choice at these sizes (then
 * auto calls it: the same exchange without tuna's work around it). */
bool tuna_a2a_library_runs(const tuna_profile *m, const tuna_select_input *in, double best_time);

/*
 * The front end's pieces that the nonblocking calls and plans share (alltoall.c).
 *
 * Local argument checks of MPI_Alltoall's arguments (fn names the call in messages); on
 * success *block is the bytes of one block (send and receive sides agree: MPI's rule).
 */
int tuna_a2a_check_args(const char *fn, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, const void *recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, int P, int me, size_t *block);
/* Bytes of the room tuna_a2a_prepare() needs for the counts and displacements of P blocks. */
size_t tuna_a2a_counts_bytes(int P);
/*
 * a (ctx, scr, rank, size set) described as alltoallv's arguments for the P blocks of
 * checked arguments: the counts in `counts` (tuna_a2a_counts_bytes(P) bytes), the byte
 * displacements in disp (2P), a->uniform and the statistics of `block`-byte blocks. In place,
 * *copy (and *copy_counts for a non-contiguous receive type) are allocated and packed from
 * the receive blocks (tuna_a2av_prepare); the caller frees them once the exchange is over
 * (and packs *copy again before each later exchange).
 */
int tuna_a2a_prepare(tuna_a2av_args *a, const void *sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, size_t block, void *counts, MPI_Aint *disp,
                     char **copy, int **copy_counts);

#endif /* TUNA_ALLTOALL_H */
