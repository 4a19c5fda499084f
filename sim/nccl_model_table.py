#!/usr/bin/env python3
"""The cost model's predictions for tuna's NCCL rows on a Polaris-like system (issue 54,
item 4; docs/results/nccl-model.md): writes tuna-model's input lines, runs it under the
uncalibrated GPU profile and prints markdown tables of predicted times and speedups.

  python3 sim/nccl_model_table.py [--model build/openmpi/tools/tuna-model]
                                  [--profile sim/results/nccl-model/profile-polaris-gpu-nccl.json]

P = 8, 16, 32, 64 GPUs, 4 per node. alltoallv: `tuna` at radix 2, 4, 8 against `linear` (all
sends and receives in one NCCL group), uniform blocks. allgather (size = the gathered total,
as nccl-tests counts it) and allreduce (size = the vector): kring, recmul, recmul-permuted at
k = 2, 4, 8 against `ring` as tuna's NCCL row runs it (P-1 groups for allgather, 2(P-1) for
allreduce, each paying the profile's latency, which holds a kernel launch) and against a
one-kernel ring, the stand-in for NCCL's own: the same ring priced with the latencies less
LAUNCH, plus one LAUNCH. Stdlib only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PS = (8, 16, 32, 64)
GPUS_PER_NODE = 4
A2AV_SIZES = (16, 256, 1024, 4096)
COLL_SIZES = (1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26)
RADICES = (2, 4, 8)
KS = (2, 4, 8)
PICCL = ("kring", "recmul", "recmul-permuted")
# The kernel launch inside the profile's latencies (its note): what a ring run as one kernel
# pays once instead of at every step.
LAUNCH = 4e-6


def run_model(model, profile, lines):
    """tuna-model's predicted seconds for each input line (an error line is fatal)."""
    env = dict(os.environ, TUNA_PROFILE=profile)
    out = subprocess.run([model], input="\n".join(lines) + "\n", env=env, text=True,
                         capture_output=True, check=False).stdout.splitlines()
    if len(out) != len(lines) or any(o.startswith("error") for o in out):
        sys.exit("tuna-model failed:\n" + "\n".join(f"{i} -> {o}" for i, o in zip(lines, out)))
    return [float(o.split()[0]) for o in out]


def variant(profile, tmpdir, name, change):
    """A copy of the profile with `change` applied to its dict; the path of the copy."""
    with open(profile) as f:
        p = json.load(f)
    change(p)
    path = os.path.join(tmpdir, name + ".json")
    with open(path, "w") as f:
        json.dump(p, f)
    return path


def one_kernel(p):
    for level in ("intra", "inter"):
        p[level]["latency"] -= LAUNCH


def us(t):
    return f"{t * 1e6:.1f}" if t < 1e-2 else f"{t * 1e6:.0f}"


def size_name(b):
    for unit, s in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= s:
            return f"{b // s} {unit}"
    return f"{b} B"


def a2av_line(P, b, opts):
    N = P // GPUS_PER_NODE
    return f"{P} {GPUS_PER_NODE} {N} {b} {b} {P * b} 0 {opts}"


def alltoallv(model, profile, title=True):
    opts = ["linear"] + [f"tuna:radix={r}" for r in RADICES]
    lines = [a2av_line(P, b, o) for P in PS for b in A2AV_SIZES for o in opts]
    t = iter(run_model(model, profile, lines))
    if title:
        print("### alltoallv: TuNA against grouped send/recv (`linear`), uniform blocks\n")
    print("| P | nodes | block | linear (us) | tuna r=2 | r=4 | r=8 | best | linear / best |")
    print("|---|---|---|---:|---:|---:|---:|---|---:|")
    for P in PS:
        for b in A2AV_SIZES:
            lin, *tun = [next(t) for _ in opts]
            i = min(range(len(tun)), key=lambda j: tun[j])
            print(f"| {P} | {P // GPUS_PER_NODE} | {size_name(b)} | {us(lin)} | "
                  + " | ".join(us(x) for x in tun)
                  + f" | r={RADICES[i]} | {lin / tun[i]:.2f} |")
    print()


def collective(model, profile, fused, coll):
    rows = [f"{a}:k={k}" for a in PICCL for k in KS]
    lines, ring_lines = [], []
    for P in PS:
        for s in COLL_SIZES:
            b = s // P if coll == "allgather" else s  # allgather: one rank's block
            head = f"{coll} {P} {GPUS_PER_NODE} {P // GPUS_PER_NODE} {b}"
            lines += [f"{head} ring"] + [f"{head} {r}" for r in rows]
            ring_lines.append(f"{head} ring")
    t = iter(run_model(model, profile, lines))
    f = iter(run_model(model, fused, ring_lines))
    what = "the gathered total" if coll == "allgather" else "the vector"
    print(f"### {coll}: PICCL's rows against the ring (size = {what})\n")
    print("| P | size | ring, P-1 groups (us) | ring, one kernel (us) | best kring | best recmul "
          "| best recmul-permuted | best | ring / best | one-kernel ring / best |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for P in PS:
        for s in COLL_SIZES:
            ring = next(t)
            ring1 = next(f) + LAUNCH
            times = [next(t) for _ in rows]
            bests = []
            for a, alg in enumerate(PICCL):
                block = times[a * len(KS):(a + 1) * len(KS)]
                j = min(range(len(KS)), key=lambda x: block[x])
                bests.append((block[j], f"{alg}:k={KS[j]}"))
            tb, name = min(bests)
            cells = " | ".join(f"{us(x)} (k={n.split('=')[1]})" for x, n in bests)
            print(f"| {P} | {size_name(s)} | {us(ring)} | {us(ring1)} | {cells} | {name} | "
                  f"{ring / tb:.2f} | {ring1 / tb:.2f} |")
    print()


def sensitivity(model, profile, tmpdir):
    """alltoallv at P = 64, 16 B: the best TuNA against linear as the two guessed values
    move (per-operation cost and latency across nodes)."""
    print("### Sensitivity: alltoallv, P = 64, 16 B blocks, linear / best tuna\n")
    ovh, lat = (0.5e-6, 1.5e-6, 3e-6), (8e-6, 12e-6, 20e-6)
    print("| inter overhead \\ inter latency | " + " | ".join(f"{us(x)} us" for x in lat) + " |")
    print("|---|" + "---:|" * len(lat))
    opts = ["linear"] + [f"tuna:radix={r}" for r in RADICES]
    for o in ovh:
        cells = []
        for L in lat:
            def change(p, o=o, L=L):
                p["inter"]["overhead"], p["inter"]["latency"] = o, L
            path = variant(profile, tmpdir, f"o{o}-L{L}", change)
            lin, *tun = run_model(model, path, [a2av_line(64, 16, x) for x in opts])
            cells.append(f"{lin / min(tun):.2f}")
        print(f"| {us(o)} us | " + " | ".join(cells) + " |")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "build/openmpi/tools/tuna-model"))
    ap.add_argument("--profile", default=os.path.join(
        ROOT, "sim/results/nccl-model/profile-polaris-gpu-nccl.json"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmpdir:
        fused = variant(a.profile, tmpdir, "one-kernel", one_kernel)
        alltoallv(a.model, a.profile)
        for coll in ("allgather", "allreduce"):
            collective(a.model, a.profile, fused, coll)
        sensitivity(a.model, a.profile, tmpdir)


if __name__ == "__main__":
    main()
