/*
 * Deterministic test data shared by the strict tests (test_alltoallv.c, test_plans.c): a
 * 64-bit mixer and a counter-based uniform double, so every rank can generate any rank's
 * payload and sizes without communication.
 */
#ifndef TUNA_TEST_DATA_H
#define TUNA_TEST_DATA_H

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

#endif
