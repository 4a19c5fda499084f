/*
 * Deterministic test data shared by the strict tests (test_alltoallv.c, test_plans.c): a
 * 64-bit mixer and a counter-based uniform double, so every rank can generate any rank's
 * payload and sizes without communication; the count distributions and buffer layouts.
 */
#ifndef TUNA_TEST_DATA_H
#define TUNA_TEST_DATA_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* Uniform double in [0,1) from a counter. */
static inline double unif(uint64_t seed, uint64_t i, uint64_t j)
{
    return (double)(mix(seed * 0x9E3779B97F4A7C15ULL + i * 1000003ULL + j) >> 11) /
           9007199254740992.0;
}

/* Count distributions (test_alltoallv runs the first D_CONST of them) and layouts. */
enum { D_UNIFORM, D_ZERO, D_HOT, D_SPARSE, D_POWER, D_CONST, D_COUNT };
static const char *const dist_names[D_COUNT] = {"uniform",  "zero",      "hot-sender",
                                                "sparse90", "power-law", "constant"};
enum { L_PACKED, L_GAPPED, L_REVERSED, L_OVERLAP, L_COUNT };
static const char *const layout_names[L_COUNT] = {"packed", "gapped", "reversed",
                                                  "overlap-reads"};

/* Send count (in send-type units) from i to j of `nranks`; the same on every rank. */
static inline int count_of(int dist, int i, int j, int S, uint64_t seed, int even, int nranks)
{
    double u = unif(seed, (uint64_t)i, (uint64_t)j);
    int c;
    switch (dist) {
    case D_UNIFORM: c = (int)(u * (S + 1)); break;
    case D_ZERO: c = 0; break;
    case D_HOT: c = i == (int)(seed % (uint64_t)nranks) ? S : (i == j ? 1 : 0); break;
    case D_SPARSE: c = unif(seed ^ 77, (uint64_t)i, (uint64_t)j) < 0.9 ? 0 : 1 + (int)(u * S); break;
    case D_CONST: c = S; break;
    default: c = (int)(S * pow(u, 4.0)); break; /* power-law: most small, few large */
    }
    if (even && (c & 1))
        c++; /* int->pair needs an even number of ints */
    return c;
}

/* Displacements (type units) of counts c[0..nranks-1] in `layout`, from `base`; returns the
 * span (overlap-reads: every block at base, MPI allows overlapping reads). */
static inline size_t make_displs(int nranks, const int *c, int *d, int layout, long long base)
{
    long long pos = base;
    if (layout == L_REVERSED) {
        for (int j = nranks - 1; j >= 0; j--) {
            d[j] = (int)pos;
            pos += c[j] + (j % 3); /* small gaps too */
        }
    } else if (layout == L_OVERLAP) {
        int maxc = 0;
        for (int j = 0; j < nranks; j++) {
            d[j] = (int)pos;
            if (c[j] > maxc)
                maxc = c[j];
        }
        pos += maxc;
    } else {
        for (int j = 0; j < nranks; j++) {
            d[j] = (int)pos;
            pos += c[j] + (layout == L_GAPPED ? 1 + (j * 7) % 5 : 0);
        }
    }
    return (size_t)(pos - base);
}

#endif
