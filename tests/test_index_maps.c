/*
 * The index maps of permuted recursive multiplying (src/device/index_maps.h), which the
 * host rows and the device permutation kernel share, against an independent computation:
 * the fold by walking the groups one rank at a time, the digit reversal by writing the
 * digits out and reading them back reversed, and the permuted layout by sorting the groups
 * on their reversed index and laying them out in that order. Every P in [1, 300] with every
 * k in [2, 12] and k = P, P + 1. No MPI. Exit 0 when all agree.
 */
#include "index_maps.h"

#include <stdio.h>
#include <stdlib.h>

static int failures;

static void check(int ok, const char *what, int P, int k, int i)
{
    if (!ok && failures++ < 20)
        printf("FAILED: %s (P = %d, k = %d, index %d)\n", what, P, k, i);
}

/* Digit reversal through an explicit digit string. */
static int reverse_ref(int k, int m, int g)
{
    int digits[40];
    for (int i = 0; i < m; i++) {
        digits[i] = g % k; /* least significant first */
        g /= k;
    }
    int r = 0;
    for (int i = 0; i < m; i++) /* read back most significant first: the reversal */
        r = r * k + digits[i];
    return r;
}

typedef struct {
    int key, group;
} pair;

static int by_key(const void *a, const void *b)
{
    return ((const pair *)a)->key - ((const pair *)b)->key;
}

static void one(int P, int k)
{
    /* Q = k^m: the largest power of k not above P (repeated multiplication from 1). */
    int Q = 1, m = 0;
    while ((long long)Q * k <= P) {
        Q *= k;
        m++;
    }
    const int base = P / Q, rem = P % Q;
    int *size = malloc(sizeof(int) * (size_t)Q), *group = malloc(sizeof(int) * (size_t)P),
        *start = malloc(sizeof(int) * ((size_t)Q + 1)), *poff = malloc(sizeof(int) * ((size_t)Q + 1)),
        *slot = malloc(sizeof(int) * (size_t)P), *seen = calloc((size_t)P, sizeof(int));
    pair *order = malloc(sizeof(pair) * (size_t)Q);
    /* groups of consecutive ranks: Q sizes summing to P, the larger ones first, differing by 1 */
    for (int g = 0; g < Q; g++)
        size[g] = base + (g < rem);
    int r = 0;
    for (int g = 0; g < Q; g++) {
        start[g] = r;
        for (int i = 0; i < size[g]; i++)
            group[r++] = g;
    }
    start[Q] = r;
    check(r == P, "group sizes sum to P", P, k, 0);
    for (int g = 0; g <= Q; g++)
        check(tuna_map_fold_start(base, rem, g) == start[g], "fold start", P, k, g);
    for (int x = 0; x < P; x++)
        check(tuna_map_fold_group(base, rem, x) == group[x], "fold group", P, k, x);
    for (int g = 0; g < Q; g++) {
        const int rv = tuna_map_reverse(k, m, g);
        check(rv == reverse_ref(k, m, g), "digit reversal", P, k, g);
        check(tuna_map_reverse(k, m, rv) == g, "digit reversal is an involution", P, k, g);
        order[g] = (pair){reverse_ref(k, m, g), g};
    }
    /* the permuted layout: groups in the order of their reversed index, each contiguous */
    qsort(order, (size_t)Q, sizeof *order, by_key);
    int s = 0;
    for (int q = 0; q < Q; q++) {
        const int g = order[q].group;
        for (int i = 0; i < size[g]; i++)
            slot[start[g] + i] = s++;
    }
    tuna_map_permuted_offsets(k, m, Q, base, rem, poff);
    check(poff[Q] == P, "the offsets end at P", P, k, Q);
    for (int x = 0; x < P; x++) {
        const int got = tuna_map_permuted_slot(k, m, base, rem, poff, x);
        check(got == slot[x], "permuted slot", P, k, x);
        if (got >= 0 && got < P)
            seen[got]++;
    }
    for (int x = 0; x < P; x++)
        check(seen[x] == 1, "the slots are a permutation", P, k, x);
    free(size);
    free(group);
    free(start);
    free(poff);
    free(slot);
    free(seen);
    free(order);
}

int main(void)
{
    int cases = 0;
    for (int P = 1; P <= 300; P++) {
        for (int k = 2; k <= 12; k++, cases++)
            one(P, k);
        if (P > 12) {
            one(P, P);
            one(P, P + 1);
            cases += 2;
        }
    }
    printf("index maps: %d cases, %s\n", cases, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
