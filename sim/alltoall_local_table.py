#!/usr/bin/env python3
"""Table of local MPI_Alltoall runs (issue 36): `auto` against the library's own call, each
over repeated runs of the same tuna-bench command (its vendor call interleaved, so every
speedup is a ratio in one run).

  sim/alltoall_local_table.py FILE...   (tuna-bench --json lines, .jsonl or .jsonl.gz; one
                                         file per run and P)

Per (P, S): auto's speedup over the library (the median over the runs, and each), what auto
ran, the `vendor` row's (the library's call through tuna's registry: tuna's path around it,
and the run's noise), and the best row of each run.
"""
import collections
import gzip
import json
import statistics
import sys


def records(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def label(r):
    params = ",".join(f"{k}={v}" for k, v in sorted(r["params"].items()))
    return r["algorithm"] + (":" + params if params else "")


def main():
    cells = collections.defaultdict(list)
    for path in sys.argv[1:]:
        runs = collections.defaultdict(list)
        for r in records(path):
            if r.get("status") == "ok":
                runs[(r["run"]["name"], r["machine"]["P"], r["dist"]["S"])].append(r)
        for (_, P, S), rs in runs.items():
            auto = next(r for r in rs if r["algorithm"] == "auto")
            lib = next(r for r in rs if r["algorithm"] == "vendor")
            best = max((r for r in rs if r["algorithm"] != "auto"), key=lambda r: r["speedup"])
            cells[(P, S)].append((auto["speedup"], (auto.get("auto_choice") or {}).get("options"),
                                  lib["speedup"], best["speedup"], label(best)))
    print("| P | S | auto / the library (median) | each run | auto ran | the library against "
          "itself | best row (each run) |")
    print("|---|---:|---:|---|---|---|---|")
    for (P, S), v in sorted(cells.items()):
        print(f"| {P} | {S} B | {statistics.median(x[0] for x in v):.2f}x | "
              f"{', '.join('%.2f' % x[0] for x in v)} | {'; '.join(str(x[1]) for x in v)} | "
              f"{', '.join('%.2f' % x[2] for x in v)} | "
              f"{'; '.join('%s %.2fx' % (x[4], x[3]) for x in v)} |")


if __name__ == "__main__":
    main()
