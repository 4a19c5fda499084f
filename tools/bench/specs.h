/*
 * Sweep specifications of tuna-bench's command line: lists of sizes and of
 * parameter values. Pure C, unit-tested with the distributions.
 */
#ifndef TUNA_BENCH_SPECS_H
#define TUNA_BENCH_SPECS_H

#include <stddef.h>

/* A growable sorted set of distinct longs. */
typedef struct long_list {
    long *v;
    int n, cap;
} long_list;

void long_list_free(long_list *l);
/* Insert keeping the list sorted and distinct; returns 0 or -1 (no memory). */
int long_list_add(long_list *l, long x);

/*
 * Sizes: "N", a list "16,64,1K", a geometric range "16:16384:x2" (factor),
 * an arithmetic range "0:1024:+128" (step) or "A:B" (step 1). Suffixes K, M, G
 * multiply by 1024, 1024^2, 1024^3. Values must be >= 0. Returns 0 or -1 with
 * a message in err.
 */
int spec_sizes(const char *text, long_list *out, char *err, size_t errlen);

/*
 * Parameter values for a parameter with range [lo, hi] at communicator size P
 * (hi already resolved: P when the table says "P"). Accepts the forms of
 * spec_sizes plus "all" (every value in [lo, hi]), "powers" (lo, the powers of
 * two in between, and hi), "default" (defval) and the symbols "P" and "sqrtP"
 * (= ceil(sqrt(P))) wherever a number goes. The library's rule: a value below
 * lo or above cap (INT_MAX where the range ends at P, else hi) is an error;
 * one in (hi, cap] is clamped to hi; then duplicates removed.
 */
int spec_params(const char *text, long lo, long hi, long cap, long defval, int P, long_list *out,
                char *err, size_t errlen);

/* ceil(sqrt(P)) in integers. */
long spec_ceil_sqrt(long P);

#endif /* TUNA_BENCH_SPECS_H */
