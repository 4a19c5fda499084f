#!/usr/bin/env python3
"""Table of scripts/learn-study.sh: auto's steady state against the exhaustive best row.

usage: learn_table.py DIR     (DIR holds run-P*-S*-r*.json and .log)

Per (P, S): for each repeat, best = the smallest median over the rows (auto and vendor left
out: tuna's rows), vendor = the library's own call, steady = the median of auto's second half
of calls, extra = the time auto's first 100 calls took beyond 100 steady calls (the learning
phase's cost, in steady calls; a call above 20 steady calls counts as 20: on a shared machine
those are a descheduled rank, not a candidate), and what auto learned (TUNA_VERBOSE=1 log). Prints a markdown
table: the median of the repeats' ratios, and each.
"""
import glob
import json
import os
import re
import statistics
import sys


def records(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def label(rec):
    params = ",".join(f"{k}={v}" for k, v in sorted(rec.get("params", {}).items()))
    return rec["algorithm"] + (":" + params if params else "")


def main():
    d = sys.argv[1]
    cells = {}
    for path in sorted(glob.glob(os.path.join(d, "run-P*-S*-r*.json"))):
        m = re.search(r"run-P(\d+)-S(\d+)-r(\d+)\.json$", path)
        P, S, r = int(m.group(1)), int(m.group(2)), int(m.group(3))
        recs = [x for x in records(path) if x["status"] == "ok"]
        autos = [x for x in recs if x["algorithm"] == "auto"]
        rows = [x for x in recs if x["algorithm"] not in ("auto", "vendor")]
        vendor = [x for x in recs if x["algorithm"] == "vendor"]
        if not autos or not rows:
            continue
        best = min(rows, key=lambda x: x["time"]["median"])
        samples = autos[0]["samples"]
        steady = statistics.median(samples[len(samples) // 2:])
        # A call of more than 20 steady calls is the machine (a descheduled rank), not a
        # candidate: counted as 20.
        first = [min(x, 20 * steady) for x in samples[:100]]
        extra = (sum(first) - len(first) * steady) / steady
        log = open(path[:-5] + ".log", encoding="utf-8").read()
        won = re.findall(r"winner (\S+)", log)
        cells.setdefault((P, S), []).append(
            dict(ratio=steady / best["time"]["median"], best=label(best),
                 best_us=best["time"]["median"] * 1e6, steady_us=steady * 1e6, extra=extra,
                 vendor=steady / vendor[0]["time"]["median"] if vendor else float("nan"),
                 learned=",".join(won) or "-"))
    print("| P | S | auto steady / best tuna row (median of repeats) | each repeat | auto / vendor | best row (us), first repeat | auto learned | learning: extra steady calls' worth in the first 100 |")
    print("|---|---|---|---|---|---|---|---|")
    for (P, S), runs in sorted(cells.items()):
        ratios = [x["ratio"] for x in runs]
        print(f"| {P} | {S} | {statistics.median(ratios):.3f} | "
              f"{', '.join(f'{x:.2f}' for x in ratios)} | "
              f"{statistics.median(x['vendor'] for x in runs):.2f} | {runs[0]['best']} "
              f"({runs[0]['best_us']:.1f}) | {'; '.join(x['learned'] for x in runs)} | "
              f"{', '.join('%.1f' % x['extra'] for x in runs)} |")


if __name__ == "__main__":
    main()
