/*
 * The index maps of permuted recursive multiplying, written once for the host (the
 * allgather and allreduce rows, src/allgather_allreduce/shared.c) and the device (the
 * permutation kernel, src/device/permute.cu): plain C that nvcc also compiles as
 * __host__ __device__ code. tests/test_index_maps.c checks them on the CPU against an
 * independent computation.
 *
 * Folding (tuna_fold, allgather_allreduce/shared.h): P ranks in Q = k^m groups of consecutive ranks, the
 * first rem = P % Q groups base + 1 = P / Q + 1 ranks large, the others base. The permuted
 * layout keeps the groups in base-k digit-reversed order: group g's blocks start at slot
 * poff[rev(g)], where poff[q] sums the sizes of the groups rev(0), ..., rev(q - 1).
 */
#ifndef TUNA_INDEX_MAPS_H
#define TUNA_INDEX_MAPS_H

#if defined(__CUDACC__)
#define TUNA_HD __host__ __device__
#else
#define TUNA_HD
#endif

/* First rank of group g (g == Q gives P). */
static inline TUNA_HD int tuna_map_fold_start(int base, int rem, int g)
{
    return g * base + (g < rem ? g : rem);
}

/* Group of rank r. */
static inline TUNA_HD int tuna_map_fold_group(int base, int rem, int r)
{
    const int big = rem * (base + 1);
    return r < big ? r / (base + 1) : rem + (r - big) / base;
}

/* Base-k digit reversal of g over m digits (an involution on [0, k^m)). */
static inline TUNA_HD int tuna_map_reverse(int k, int m, int g)
{
    int r = 0;
    for (int i = 0; i < m; i++) {
        r = r * k + g % k;
        g /= k;
    }
    return r;
}

/* poff[0 .. Q]: the first slot of the group at digit-reversed position q (poff[Q] = P). */
static inline TUNA_HD void tuna_map_permuted_offsets(int k, int m, int Q, int base, int rem,
                                                     int *poff)
{
    poff[0] = 0;
    for (int q = 0; q < Q; q++) {
        const int g = tuna_map_reverse(k, m, q);
        poff[q + 1] = poff[q] + (g < rem ? base + 1 : base);
    }
}

/* The slot of rank r's block in the permuted layout. */
static inline TUNA_HD int tuna_map_permuted_slot(int k, int m, int base, int rem,
                                                 const int *poff, int r)
{
    const int g = tuna_map_fold_group(base, rem, r);
    return poff[tuna_map_reverse(k, m, g)] + r - tuna_map_fold_start(base, rem, g);
}

#endif /* TUNA_INDEX_MAPS_H */
