#!/usr/bin/env python3
"""Markdown tables of tuna-fft JSON lines (docs/applications.md): per transform kind and grid,
one row per algorithm with its all-to-all time per round trip (max over ranks, ms), the ratio
vendor / algorithm (> 1: faster than the MPI library's MPI_Alltoallv in the same run) and each
reshape's time.

    python3 apps/fft/fft_table.py RUN.jsonl [RUN2.jsonl ...]
"""
import json
import sys


def main(paths):
    groups = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                key = (r["decomposition"], r.get("input", ""), r.get("transform", "c2c"),
                       "x".join(map(str, r["dims"])), tuple(r.get("grid") or ()),
                       r["machine"]["P"], r["workload"])
                groups.setdefault(key, []).append(r)
    for key, rows in groups.items():
        dec, inp, kind, dims, grid, P, wl = key
        vendor = next((r for r in rows if r["options"] == "vendor"), None)
        names = [t["name"] for t in rows[0].get("transposes", [])]
        title = f"{dec} ({inp} input) {kind} {dims} {wl}, P = {P}"
        if grid:
            title += f", grid {grid[0]}x{grid[1]}"
        print(f"\n{title}\n")
        print("| algorithm | a2a ms | vendor / alg | " + " | ".join(f"{n} ms" for n in names)
              + " | verified |")
        print("|---|---:|---:|" + "---:|" * len(names) + "---|")
        for r in rows:
            a2a = r["time"]["alltoallv"]["max"]
            ratio = vendor["time"]["alltoallv"]["max"] / a2a if vendor and a2a > 0 else float("nan")
            stages = " | ".join(f"{1e3 * t['alltoallv']['max']:.3f}" for t in r["transposes"])
            print(f"| {r['options']} | {1e3 * a2a:.3f} | {ratio:.2f} | {stages} | "
                  f"{'yes' if r['verified'] else 'NO'} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
