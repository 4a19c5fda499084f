/*
 * What the allgather and allreduce families share: the k-ring group rule, rank folding for
 * recursive multiplying when P is not a power of k, the in-place block permutation, and
 * auto's grid over their one parameter, k.
 */
#ifndef TUNA_RING_RECMUL_H
#define TUNA_RING_RECMUL_H

#include "../select/tuna_select.h"

/* Largest divisor of P that is <= k (at least 1): the k-ring group size rule. */
int tuna_coll_kring_group(int P, long k);

/*
 * Folding for recursive multiplying when P is not a power of k: Q = k^m is the
 * largest power of k not above P; the P ranks form Q groups of consecutive
 * ranks, the first P % Q groups one rank larger (P / Q + 1 ranks, at most k),
 * and the last rank of each group is its leader. Leaders run the m rounds on
 * group indices; the others send their data to the leader first and get the
 * result back at the end.
 */
typedef struct tuna_fold {
    int P, k;
    int Q, m;         /* Q = k^m groups, m rounds among the leaders */
    int base, rem;    /* group sizes: base + 1 for the first rem groups, then base */
    int group;        /* this rank's group */
    int first, last;  /* ranks of this rank's group; last is the leader */
} tuna_fold;

void tuna_fold_init(tuna_fold *f, int P, int k, int rank);
/* First rank of group g (g == Q gives P). */
int tuna_fold_start(const tuna_fold *f, int g);
/* Group of a rank. */
int tuna_fold_group_of(const tuna_fold *f, int rank);
/* Base-k digit reversal of g over m digits (an involution on [0, k^m)). */
int tuna_fold_reverse(const tuna_fold *f, int g);

/*
 * In-place block permutation: afterwards slot p holds the block that was in
 * slot src[p], for every p in [0, n) (src must be a permutation). Follows the
 * cycles of the permutation, moving every block exactly once, with one block
 * of temporary memory and n bytes of marks (never a second full-size buffer).
 */
int tuna_permute_blocks_inplace(char *buf, size_t block, int n, const int *src);

/* auto's candidates of a row whose one parameter is the radix or group size "k": the radix
 * grid over [2, P] (tuna_grid_fn). */
void tuna_grid_k(const tuna_select_input *in, const tuna_algorithm_info *info,
                 tuna_candidates *out);

/*
 * auto's hand-over (tuna_registry.library_runs): whether the MPI library this process runs on
 * runs recursive doubling for short messages, as MPICH and Open MPI's coll/tuned do, and
 * recursive doubling (rd_time) is as good as the model's best choice (best_time). The
 * families add their size rules.
 */
bool tuna_library_runs_recursive_doubling(double rd_time, double best_time);

#endif /* TUNA_RING_RECMUL_H */
