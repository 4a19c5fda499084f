#!/usr/bin/env python3
"""Are two tuna-bench JSON-lines result files the same measurement? (issue 21)

    python3 sim/redesign_identity.py BEFORE.jsonl AFTER.jsonl

Made for the redesign check (docs/results/identity.md "The redesign (issue 21)"):
the same `tuna sim run` sweep with the tuna-bench of the commit before and after a merge.
Configurations are matched on collective, platform, selector, P, distribution, size and the
options string. For each it prints the median simulated time before and after and whether
the configuration is identical: every timed sample, the status, the verification result,
auto's choice (options and predicted seconds), the distribution's statistics and the
simulation's attainable bound equal to the last digit the JSON holds. Exit status 1 if any
configuration differs or is missing from one side, else 0.
"""
import json
import sys


def key(r):
    sim = r.get("sim") or {}
    d = r["dist"]
    return (r["collective"], sim.get("platform"), sim.get("selector"), r["machine"]["P"],
            d["name"], d["S"], r["options"])


def compared(r):
    """The fields that must match: everything the run measured or decided."""
    d, sim = r["dist"], r.get("sim") or {}
    return {
        "status": r["status"],
        "verified": r.get("verified"),
        "samples": r.get("samples"),
        "auto_choice": r.get("auto_choice"),
        "dist": {k: d.get(k) for k in ("total_bytes", "max_rank_bytes", "max_block_bytes",
                                        "mean_block_bytes", "zero_fraction")},
        # `tuna sim run`'s attainable bound (tuna-bench's totals since the pyside merge,
        # a Python replay of the distributions before it)
        "bound": sim.get("bound"),
        "ratio_to_bound": sim.get("ratio_to_bound"),
    }


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                if key(r) in rows:  # a file holds each configuration once
                    sys.exit("%s: %s twice" % (path, key(r)))
                rows[key(r)] = r
    return rows


def median(r):
    t = r.get("time") or {}
    return "-" if t.get("median") is None else "%.9g" % t["median"]


def main(before_path, after_path):
    before, after = load(before_path), load(after_path)
    print("%-10s %-8s %-8s %4s %-9s %6s %-28s %-15s %-15s %s" %
          ("coll", "platform", "selector", "P", "dist", "S", "options", "before_s", "after_s",
           "identical"))
    differ = 0
    for k in sorted(set(before) | set(after), key=lambda k: tuple(map(str, k[:3])) + k[3:]):
        b, a = before.get(k), after.get(k)
        same = b is not None and a is not None and compared(b) == compared(a)
        differ += not same
        print("%-10s %-8s %-8s %4s %-9s %6s %-28s %-15s %-15s %s" %
              (*k, median(b) if b else "missing", median(a) if a else "missing",
               "yes" if same else "NO"))
    print("%d configurations, %d identical, %d differ" %
          (len(set(before) | set(after)), len(set(before) | set(after)) - differ, differ))
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
