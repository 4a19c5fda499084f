#!/usr/bin/env python3
"""The exhaustive sweep of tuna's alltoallv rows for sim/learn_study.sh: one tuna-bench `-a`
list per family, each configuration named explicitly ("alg:k=v,k2=v2") and deduplicated
after the library's clamping, so no configuration is simulated twice.

Grids (the model's candidate grids, src/select/choose.c tuna_grid_radix / tuna_grid_pow2):
  radix   2..8, then 10 and ceil(x 1.25) steps below U, ceil(sqrt U) if > 8, and U
          (U = P for tuna, Q = ranks per node for coalesced and staggered)
  block / stride   powers of two below U, and U (U: the parameter's clamp: tuna r-1,
          coalesced N-1 nodes, staggered (N-1) Q, scattered / multipair / multipair-waitany P)
  padded-bruck datatype 0 and 1.
multipair-testany (polling: minutes of simulated-time work per call) and auto are left out.

Usage: sim/learn_configs.py P RPN            # prints "FAMILY<TAB>-a list" per line
"""
import math
import sys

CHUNK = 40  # configurations per smpirun at most


def grid_radix(U):
    v = [r for r in range(2, min(U, 8) + 1)]
    r = 10
    while r < U:
        v.append(r)
        r = math.ceil(r * 1.25)
    s = math.ceil(math.sqrt(U))
    if 8 < s < U:
        v.append(s)
    if U > 8:
        v.append(U)
    return sorted(set(v))


def grid_pow2(U):
    U = max(U, 1)
    v, b = [], 1
    while b < U:
        v.append(b)
        b *= 2
    v.append(U)
    return v


def families(P, Q):
    N = -(-P // Q)
    fam = {}
    fam["linear"] = ["vendor", "spreadout", "linear", "pairwise", "xor"]
    fam["bruck"] = ["bruck", "padded-bruck:datatype=0", "padded-bruck:datatype=1",
                    "twophase-bruck"]
    for alg, name in (("scattered", "block"), ("multipair", "stride"),
                      ("multipair-waitany", "stride")):
        fam[alg] = [f"{alg}:{name}={b}" for b in grid_pow2(P)]
    fam["tuna"] = [f"tuna:radix={r},block={b}" for r in grid_radix(P)
                   for b in grid_pow2(min(r - 1, P))]
    fam["coalesced"] = [f"coalesced:radix={r},block={b}" for r in grid_radix(Q)
                        for b in grid_pow2(max(N - 1, 1))]
    fam["staggered"] = [f"staggered:radix={r},block={b}" for r in grid_radix(Q)
                        for b in grid_pow2(max((N - 1) * Q, 1))]
    return fam


def main():
    P, Q = int(sys.argv[1]), int(sys.argv[2])
    for name, cfgs in families(P, Q).items():
        # tuna-bench's -a holds 4096 characters, and a smpirun that hits sim/learn_study.sh's
        # timeout records nothing of what it finished: split long families (at most
        # CHUNK configurations per smpirun; at P = 256 the 268 tuna configurations took
        # more than 10 minutes in one smpirun).
        chunk, out = [], []
        for c in cfgs:
            if len(",".join(chunk + [c])) > 4000 or len(chunk) >= CHUNK:
                out.append(chunk)
                chunk = []
            chunk.append(c)
        out.append(chunk)
        for i, ch in enumerate(out):
            print(f"{name}{'' if len(out) == 1 else f'.{i}'}\t{','.join(ch)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
