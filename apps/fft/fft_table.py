#!/usr/bin/env python3
"""Markdown tables of tuna-fft JSON lines (docs/applications.md): per configuration
(decomposition, input, transform, dims, grid, P), one row per algorithm with its all-to-all
time per round trip (max over ranks, ms), the ratio vendor / algorithm computed within each
run (> 1: faster than the MPI library's MPI_Alltoallv timed interleaved with it) and each
reshape's time. Several files of the same configuration (repeated runs): the times are their
medians and every run's ratio is listed. A run without vendor (one SMPI run per algorithm:
simulated times are deterministic) takes the vendor row of the same configuration from
another file. Rows with every reshape on tuna_alltoallv (--alltoallv-only, the copies of
--compare-alltoallv) are labelled "NAME [alltoallv]" and compared with the vendor row of their
kind (MPI_Alltoallv); the others with the vendor row that ran MPI_Alltoall where the blocks are
equal.

    python3 apps/fft/fft_table.py RUN.jsonl [RUN2.jsonl ...]
"""
import json
import statistics
import sys


def main(paths):
    groups = {}  # configuration -> algorithm -> [(record, vendor record of its run)]
    for path in paths:
        with open(path) as f:
            recs = [json.loads(line) for line in f if line.strip()]
        for r in recs:
            key = (r["decomposition"], r.get("input", ""), r.get("transform", "c2c"),
                   "x".join(map(str, r["dims"])), tuple(r.get("grid") or ()),
                   r["machine"]["P"], r["workload"])
            vonly = r.get("alltoallv_only", False)
            vendor = next((v for v in recs if v["options"] == "vendor" and
                           v.get("transform") == r.get("transform") and v.get("grid") == r.get("grid")
                           and v["workload"] == r["workload"]
                           and v.get("alltoallv_only", False) == vonly), None)
            name = r["options"] + (" [alltoallv]" if vonly else "")
            groups.setdefault(key, {}).setdefault(name, []).append((r, vendor))
    for key, algs in groups.items():
        dec, inp, kind, dims, grid, P, wl = key
        first = next(iter(algs.values()))[0][0]
        names = [t["name"] for t in first.get("transposes", [])]
        title = f"{dec} ({inp} input) {kind} {dims} {wl}, P = {P}"
        if grid:
            title += f", grid {grid[0]}x{grid[1]}"
        nrun = max(len(v) for v in algs.values())
        print(f"\n{title} ({nrun} run{'s' if nrun > 1 else ''})\n")
        print("| algorithm | a2a ms | vendor / alg | " + " | ".join(f"{n} ms" for n in names)
              + " | verified |")
        print("|---|---:|---:|" + "---:|" * len(names) + "---|")
        shared = algs.get("vendor", [(None, None)])[0][0]
        for name, runs in algs.items():
            runs = [(r, v or shared) for r, v in runs]
            a2a = statistics.median(r["time"]["alltoallv"]["max"] for r, _ in runs)
            ratios = ", ".join(f"{v['time']['alltoallv']['max'] / r['time']['alltoallv']['max']:.2f}"
                               for r, v in runs if v and r["time"]["alltoallv"]["max"] > 0)
            stages = " | ".join(
                f"{1e3 * statistics.median(r['transposes'][i]['alltoallv']['max'] for r, _ in runs):.3f}"
                for i in range(len(names)))
            ok = all(r["verified"] for r, _ in runs)
            print(f"| {name} | {1e3 * a2a:.3f} | {ratios} | {stages} | {'yes' if ok else 'NO'} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
