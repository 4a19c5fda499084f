#!/usr/bin/env python3
"""Table of scripts/learn-study.sh: auto's steady state against the exhaustive best row.

usage: learn_table.py DIR     (DIR holds run-P*-S*-r*.json and .log; it writes DIR/summary.jsonl,
                              the per-run results, and reads that alone when the runs' JSON
                              files are gone: they hold every call's time, tens of MB)

Per (P, S): for each repeat, each row's time as a ratio to the library's own call interleaved
with it (the median of its calls over the median of the library's in the same calls; runs
without the interleaved call, before 2026-11-27, use the medians as they are), best = the
smallest over the rows (the `vendor` row, the library through tuna's registry, among them),
steady = auto's second half of calls over the library's in the same calls, the library
against itself = the `vendor` row over the library's call interleaved with it (tuna's
registry path around the same call, and the run's noise), extra = the time auto's first 100 calls took beyond 100 steady calls (the learning
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
    summary = os.path.join(d, "summary.jsonl")
    paths = sorted(glob.glob(os.path.join(d, "run-P*-S*-r*.json")))
    if not paths and os.path.exists(summary):
        # A study whose per-call JSON was not kept (tens of MB): the per-run results.
        for x in records(summary):
            cells.setdefault((x["P"], x["S"]), []).append(x)
    kept = []
    for path in paths:
        m = re.search(r"run-P(\d+)-S(\d+)-r(\d+)\.json$", path)
        P, S, r = int(m.group(1)), int(m.group(2)), int(m.group(3))
        recs = [x for x in records(path) if x["status"] == "ok"]
        autos = [x for x in recs if x["algorithm"] == "auto"]
        rows = [x for x in recs if x["algorithm"] not in ("auto", "vendor")]
        vendor = [x for x in recs if x["algorithm"] == "vendor"]
        if not autos or not rows:
            continue
        rows += vendor  # the library's call through tuna's registry is auto's candidate too

        def norm(rec, start=0):
            """The row's median over the interleaved library call's (seconds without it)."""
            own = statistics.median(rec["samples"][start:])
            lib = rec.get("vendor_samples")
            return own / statistics.median(lib[start:]) if lib else own

        best = min(rows, key=norm)
        samples = autos[0]["samples"]
        steady = statistics.median(samples[len(samples) // 2:])
        steady_norm = norm(autos[0], len(samples) // 2)
        # A call of more than 20 steady calls is the machine (a descheduled rank), not a
        # candidate: counted as 20.
        first = [min(x, 20 * steady) for x in samples[:100]]
        extra = (sum(first) - len(first) * steady) / steady
        log = open(path[:-5] + ".log", encoding="utf-8").read()
        won = re.findall(r"winner (\S+)", log)
        kept.append(dict(P=P, S=S, repeat=r))
        cells.setdefault((P, S), []).append(kept[-1])
        kept[-1].update(dict(ratio=steady_norm / norm(best), best=label(best),
                 best_us=best["time"]["median"] * 1e6, steady_us=steady * 1e6, extra=extra,
                 vendor=(steady_norm if autos[0].get("vendor_samples") else
                         steady / vendor[0]["time"]["median"] if vendor else float("nan")),
                 learned=",".join(won) or "-",
                 self=norm(vendor[0]) if vendor and vendor[0].get("vendor_samples") else None))
    if kept:  # the per-run results beside the runs: enough for this table without them
        with open(summary, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(x) + "\n" for x in kept)
    print("| P | S | auto steady / best row (median of repeats) | each repeat | auto / vendor | the library against itself | best row (us), first repeat | auto learned | learning: extra steady calls' worth in the first 100 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (P, S), runs in sorted(cells.items()):
        ratios = [x["ratio"] for x in runs]
        print(f"| {P} | {S} | {statistics.median(ratios):.3f} | "
              f"{', '.join(f'{x:.2f}' for x in ratios)} | "
              f"{statistics.median(x['vendor'] for x in runs):.2f} | "
              f"{', '.join('%.2f' % x['self'] for x in runs if x.get('self')) or '-'} | "
              f"{runs[0]['best']} "
              f"({runs[0]['best_us']:.1f}) | {'; '.join(x['learned'] for x in runs)} | "
              f"{', '.join('%.1f' % x['extra'] for x in runs)} |")


if __name__ == "__main__":
    main()
