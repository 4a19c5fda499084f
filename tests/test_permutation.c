/*
 * Unit test of the in-place block permutation (tuna_permute_blocks_inplace)
 * and of the digit-reversed layout that recmul-permuted allgather leaves
 * behind (tuna_ag_permuted_layout), against out-of-place references built
 * independently here, for many (P, k) and random permutations.
 * No MPI communication: runs as a plain process.
 */
#include "allgather.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static unsigned char pattern(int blockid, size_t byte)
{
    return (unsigned char)(blockid * 131 + byte * 7 + 1);
}

/* Fill slot s with the bytes of block id[s]. */
static void fill(char *buf, size_t block, int n, const int *id)
{
    for (int s = 0; s < n; s++)
        for (size_t b = 0; b < block; b++)
            buf[(size_t)s * block + b] = (char)pattern(id[s], b);
}

/* Permute with src[] in place and compare with the out-of-place reference. */
static void check_permutation(int n, size_t block, const int *src, const char *what, int P,
                              int k)
{
    char *buf = malloc((size_t)n * block + 1), *ref = malloc((size_t)n * block + 1);
    int *id = malloc(sizeof(int) * ((size_t)n + 1));
    for (int s = 0; s < n; s++)
        id[s] = s * 3 + 1; /* block contents unrelated to slot numbers */
    fill(buf, block, n, id);
    for (int p = 0; p < n; p++)
        memcpy(ref + (size_t)p * block, buf + (size_t)src[p] * block, block);
    int rc = tuna_permute_blocks_inplace(&tuna_transport_mpi_host, buf, block, n, src);
    if (rc != MPI_SUCCESS || memcmp(buf, ref, (size_t)n * block) != 0) {
        fprintf(stderr, "FAIL %s: n=%d block=%zu P=%d k=%d rc=%d\n", what, n, block, P, k, rc);
        failures++;
    }
    free(buf);
    free(ref);
    free(id);
}

/* Independent reference of the digit-reversed layout (see recmul_permuted.c). */
static void reference_layout(int P, int k, int *slot_of)
{
    int Q = 1, m = 0;
    while ((long long)Q * k <= P) {
        Q *= k;
        m++;
    }
    int *start = malloc(sizeof(int) * ((size_t)Q + 1));
    for (int g = 0; g <= Q; g++)
        start[g] = g * (P / Q) + (g < P % Q ? g : P % Q);
    int next = 0;
    for (int q = 0; q < Q; q++) {
        /* Group at reversed position q: the digits of q read backwards. */
        int g = 0, x = q;
        for (int i = 0; i < m; i++) {
            g = g * k + x % k;
            x /= k;
        }
        for (int r = start[g]; r < start[g + 1]; r++)
            slot_of[r] = next++;
    }
    free(start);
}

int main(void)
{
    long cases = 0;
    /* Random permutations, including identity and single cycles. */
    for (int n = 0; n <= 130; n++) {
        int *src = malloc(sizeof(int) * ((size_t)n + 1));
        for (int t = 0; t < 4; t++) {
            for (int i = 0; i < n; i++)
                src[i] = i;
            if (t == 1 && n > 1) /* one long cycle */
                for (int i = 0; i < n; i++)
                    src[i] = (i + 1) % n;
            if (t >= 2)
                for (int i = n - 1; i > 0; i--) {
                    int j = (int)(rng() % (uint64_t)(i + 1));
                    int x = src[i];
                    src[i] = src[j];
                    src[j] = x;
                }
            size_t blocks[] = {1, 3, 8, 17};
            for (int b = 0; b < 4; b++, cases++)
                check_permutation(n, blocks[b], src, "random permutation", 0, 0);
        }
        free(src);
    }
    /* The recmul-permuted layout for many (P, k): a permutation equal to the reference,
     * and the in-place permutation puts every rank's block at its slot. */
    for (int P = 1; P <= 300; P++) {
        int ks[] = {2, 3, 4, 5, 7, 8, 16, P};
        for (int ki = 0; ki < 8; ki++) {
            int k = ks[ki];
            if (k > P || k < 2)
                continue;
            int *slot_of = malloc(sizeof(int) * (size_t)P), *ref = malloc(sizeof(int) * (size_t)P);
            char *seen = calloc((size_t)P, 1);
            if (tuna_ag_permuted_layout(P, k, slot_of) != MPI_SUCCESS) {
                fprintf(stderr, "FAIL layout P=%d k=%d: error\n", P, k);
                failures++;
            }
            reference_layout(P, k, ref);
            for (int r = 0; r < P; r++) {
                if (slot_of[r] < 0 || slot_of[r] >= P || seen[slot_of[r]]++ ||
                    slot_of[r] != ref[r]) {
                    fprintf(stderr, "FAIL layout P=%d k=%d: rank %d at slot %d, expected %d\n",
                            P, k, r, slot_of[r], ref[r]);
                    failures++;
                    break;
                }
            }
            check_permutation(P, 5, slot_of, "permuted layout", P, k);
            cases += 2;
            free(slot_of);
            free(ref);
            free(seen);
        }
    }
    printf("test_permutation: %ld cases, %d failures\n", cases, failures);
    return failures != 0;
}
