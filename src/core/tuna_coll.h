/*
 * Internal interfaces of the allgather and allreduce families: normalised
 * argument structs, algorithm tables, and helpers shared by both (rank
 * folding for non-powers of k, the in-place block permutation, byte types).
 */
#ifndef TUNA_COLL_H
#define TUNA_COLL_H

#include "tuna_internal.h"

/* ------------------------------------------------------------------ shared helpers */

/* Resolve a table parameter against the communicator size: P / sqrtP, then clamp. */
long tuna_coll_resolve_param(const tuna_param_info *p, long v, int P);

/* Committed datatype of `bytes` raw bytes (any size, also above INT_MAX). */
int tuna_coll_bytes_type(size_t bytes, MPI_Datatype *out);

/*
 * TUNA_ARGCHECK=collective for allgather / allreduce: one allreduce of this rank's check
 * outcome (local_rc) and of n <= 4 values every rank must hold alike (same[i], named
 * names[i]). Returns local_rc where it failed, else MPI_ERR_ARG on every rank when another
 * rank failed or a value differs (with its range), else MPI_SUCCESS; no data has moved.
 */
int tuna_coll_agree_args(tuna_ctx *ctx, const char *coll, int local_rc, const long long *same,
                         const char *const *names, int n);

/* The blocking calls' local argument checks (dispatch.c), for the plans' init. */
int tuna_ag_check_args(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                       const void *recvbuf, int recvcount, MPI_Datatype recvtype, int me,
                       size_t *bytes);
int tuna_ar_check_args(const void *sendbuf, const void *recvbuf, int count, MPI_Datatype type,
                       MPI_Op op, int me, int *tsize);

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

/*
 * Layout left by recmul-permuted allgather before its final permutation:
 * slot_of[r] is the block slot holding rank r's block. Exposed for the tests.
 */
int tuna_ag_permuted_layout(int P, int k, int *slot_of);

/* ------------------------------------------------------------------ allgather */

/*
 * Normalised allgather: the result is built as P blocks of `block` raw bytes
 * in `buf` (block j at buf + j * block), which is the caller's receive buffer
 * for contiguous receive types and a packed copy otherwise. On entry this
 * rank's own block is already in place; algorithms fill the others.
 */
typedef struct tuna_ag_args {
    char *buf;
    size_t block;
    tuna_ctx *ctx;
    int rank, size;
    long param[TUNA_MAX_PARAMS];
} tuna_ag_args;

typedef int (*tuna_ag_fn)(const tuna_ag_args *a);

typedef struct tuna_ag_algorithm {
    tuna_algorithm_info info;
    tuna_ag_fn run; /* NULL for vendor and auto: decided before normalisation */
    bool is_auto;   /* auto: the dispatcher picks a row (tuna_ag_auto_choose) */
} tuna_ag_algorithm;

extern const tuna_ag_algorithm tuna_ag_table[];
extern const int tuna_ag_table_len;

/* vendor: MPI_Allgather's own implementation (PMPI), any communicator. */
int tuna_ag_vendor(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int tuna_ag_ring(const tuna_ag_args *a);
int tuna_ag_kring(const tuna_ag_args *a);
int tuna_ag_recursive_doubling(const tuna_ag_args *a);
int tuna_ag_recmul(const tuna_ag_args *a);
int tuna_ag_recmul_permuted(const tuna_ag_args *a);
/* auto's choice for blocks of `block` bytes (and the statistics record of it); a choice
 * whose row has no run function is the library's own MPI_Allgather. */
struct tuna_choice;
int tuna_ag_auto_choose(tuna_ctx *ctx, size_t block, struct tuna_choice *c);
/* Recursive multiplying engine with radix k (recursive doubling is k = 2). */
int tuna_ag_recmul_run(const tuna_ag_args *a, int k);
/* Folding steps of the recmul family (see tuna_fold): a non-leader sends its block to
 * its leader and receives everything else back; a leader collects its members' blocks
 * into their slots before the rounds and sends them the result afterwards. */
int tuna_ag_fold_member(const tuna_ag_args *a, const tuna_fold *f);
int tuna_ag_fold_in(const tuna_ag_args *a, const tuna_fold *f);
int tuna_ag_fold_out(const tuna_ag_args *a, const tuna_fold *f);

/* ------------------------------------------------------------------ allreduce */

/*
 * Normalised allreduce: `rbuf` holds this rank's input on entry (the core
 * copies sendbuf there unless MPI_IN_PLACE) and must hold the result on exit.
 * Element i is at rbuf + i * extent, with the user's datatype.
 */
typedef struct tuna_ar_args {
    char *rbuf;
    int count;
    MPI_Datatype type;
    MPI_Aint extent, true_lb, true_extent;
    MPI_Op op;
    bool commute;               /* MPI_Op_commutative */
    bool contig;                /* elements are extent == size contiguous bytes */
    tuna_ctx *ctx;
    int rank, size;
    long param[TUNA_MAX_PARAMS];
} tuna_ar_args;

typedef int (*tuna_ar_fn)(const tuna_ar_args *a);

typedef struct tuna_ar_algorithm {
    tuna_algorithm_info info;
    tuna_ar_fn run; /* NULL for vendor and auto: decided before normalisation */
    bool is_auto;   /* auto: the dispatcher picks a row (tuna_ar_auto_choose) */
} tuna_ar_algorithm;

extern const tuna_ar_algorithm tuna_ar_table[];
extern const int tuna_ar_table_len;

/* vendor: MPI_Allreduce's own implementation (PMPI), any communicator. */
int tuna_ar_vendor(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm);
int tuna_ar_ring(const tuna_ar_args *a);
int tuna_ar_kring(const tuna_ar_args *a);
int tuna_ar_recursive_doubling(const tuna_ar_args *a);
int tuna_ar_recmul(const tuna_ar_args *a);
int tuna_ar_recmul_permuted(const tuna_ar_args *a);
/* auto's choice for a vector of `bytes` (and the statistics record of it); a choice whose
 * row has no run function is the library's own MPI_Allreduce. */
struct tuna_choice;
int tuna_ar_auto_choose(tuna_ctx *ctx, double bytes, bool commute, struct tuna_choice *c);
/* Recursive multiplying engine with radix k (recursive doubling is k = 2). */
int tuna_ar_recmul_run(const tuna_ar_args *a, int k);
/* Folding steps of the recmul family (see tuna_fold): a member sends its vector to its
 * leader and receives the result; a leader reduces its members' vectors into rbuf in
 * rank order (receiving up to ntmp at a time into tmp[0..ntmp-1], n elements each)
 * before the rounds and sends them the result afterwards. */
int tuna_ar_fold_member(const tuna_ar_args *a, const tuna_fold *f);
int tuna_ar_fold_in(const tuna_ar_args *a, const tuna_fold *f, char *const *tmp, int ntmp);
int tuna_ar_fold_out(const tuna_ar_args *a, const tuna_fold *f);

/* Temporary buffer for n elements of the type; *mem is what to free(). NULL on failure. */
char *tuna_ar_tmp(const tuna_ar_args *a, int n, void **mem);
/* Address of element i of buffer base. */
static inline char *tuna_ar_elem(const tuna_ar_args *a, char *base, MPI_Aint i)
{
    return base + i * a->extent;
}
/* inout = in op inout over n elements (MPI_Reduce_local's operand order). */
int tuna_ar_reduce(const tuna_ar_args *a, const void *in, void *inout, int n);
/* Copy n elements between buffers of the type (non-overlapping). */
int tuna_ar_copy(const tuna_ar_args *a, const void *src, void *dst, int n);

/*
 * Ring building blocks over m members (member i's left neighbour is rank
 * left, right neighbour is rank right) and m segments, segment s being
 * elements [off[s], off[s] + cnt[s]) of rbuf. Reduce-scatter: afterwards
 * member `me` holds segment (me + 1) % m reduced over the ring (commutative
 * ops only). Allgather: starting from that, every member holds all segments.
 * tmp holds at least max(cnt) elements.
 */
int tuna_ar_ring_reduce_scatter(const tuna_ar_args *a, int m, int me, int left, int right,
                                const MPI_Aint *off, const int *cnt, char *tmp, int tag);
int tuna_ar_ring_allgather(const tuna_ar_args *a, int m, int me, int left, int right,
                           const MPI_Aint *off, const int *cnt, int tag);

#endif /* TUNA_COLL_H */
