#!/usr/bin/env python3
"""Table of scripts/learn-study.sh: auto's steady state against the exhaustive best row.

usage: learn_table.py DIR     (DIR holds auto-P*-S*-r*.json, sweep-*.json, auto-*.log)

Per (P, S): for each repeat, best = the smallest median over the sweep's rows (auto left
out), steady = the median of auto's second half of calls, extra = the time auto's first
100 calls took beyond 100 steady calls (the learning phase's cost), and what auto learned
(TUNA_VERBOSE=1 log). Prints a markdown table: the median of the repeats' ratios and each.
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
    for path in sorted(glob.glob(os.path.join(d, "auto-P*-S*-r*.json"))):
        m = re.search(r"auto-P(\d+)-S(\d+)-r(\d+)\.json$", path)
        P, S, r = int(m.group(1)), int(m.group(2)), int(m.group(3))
        sweep = os.path.join(d, f"sweep-P{P}-S{S}-r{r}.json")
        if not os.path.exists(sweep):
            continue
        auto = records(path)[0]
        rows = [x for x in records(sweep) if x["algorithm"] != "auto" and x["status"] == "ok"]
        best = min(rows, key=lambda x: x["time"]["median"])
        samples = auto["samples"]
        steady = statistics.median(samples[len(samples) // 2:])
        first = samples[:100]
        extra = (sum(first) - len(first) * steady) / steady
        log = open(os.path.join(d, f"auto-P{P}-S{S}-r{r}.log"), encoding="utf-8").read()
        won = re.findall(r"winner (\S+)", log)
        cells.setdefault((P, S), []).append(
            dict(ratio=steady / best["time"]["median"], best=label(best),
                 best_us=best["time"]["median"] * 1e6, steady_us=steady * 1e6, extra=extra,
                 learned=",".join(won) or "-"))
    print("| P | S | auto steady / best (median of repeats) | each repeat | best row (us), first repeat | auto learned | learning phase: extra calls' worth in the first 100 |")
    print("|---|---|---|---|---|---|---|")
    for (P, S), runs in sorted(cells.items()):
        ratios = [x["ratio"] for x in runs]
        print(f"| {P} | {S} | {statistics.median(ratios):.3f} | "
              f"{', '.join(f'{x:.2f}' for x in ratios)} | {runs[0]['best']} "
              f"({runs[0]['best_us']:.1f}) | {'; '.join(x['learned'] for x in runs)} | "
              f"{', '.join('%.1f' % x['extra'] for x in runs)} |")


if __name__ == "__main__":
    main()
