#!/usr/bin/env python3
# tuna-model's input grid for the redesign check (commands.sh): every alltoallv registry row
# (defaults and parameter variants, auto and vendor), P = 2..4096, node shapes Q = 1, P, 4,
# 32 and unequal nodes (Q = 0), largest blocks 16 B..1 MiB, uniform / skewed / half-empty
# statistics. 34503 lines: P Q N MAX_BLOCK MEAN_BLOCK MAX_RANK_BYTES ZERO_FRACTION OPTIONS.
opts = ["vendor", "spreadout", "scattered", "scattered:block=4", "linear", "pairwise", "xor",
        "multipair", "multipair:stride=2", "multipair-waitany", "multipair-waitany:stride=16",
        "multipair-testany", "multipair-testany:stride=4", "bruck", "padded-bruck",
        "padded-bruck:datatype=1", "twophase-bruck", "tuna", "tuna:radix=2", "tuna:radix=4",
        "tuna:radix=8,block=1", "tuna:radix=4096", "tuna:radix=16,block=3", "coalesced",
        "coalesced:radix=2", "coalesced:radix=4,block=1", "coalesced:block=64", "staggered",
        "staggered:radix=2,block=1", "staggered:block=256", "auto"]
for k in range(1, 13):
    P = 2 ** k
    shapes = {(1, P), (P, 1)} | {(q, P // q) for q in (4, 32) if q < P} | {(0, max(2, P // 16))}
    for Q, N in sorted(shapes):
        for B in (16, 256, 1024, 4096, 16384, 65536, 1 << 20):
            for mean, tmax, z in ((B, P * B, 0.0), (B / 4, P * B / 2, 0.0), (B / 16, P * B / 8, 0.5)):
                for o in opts:
                    print(P, Q, N, B, mean, tmax, z, o)
