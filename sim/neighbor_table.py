#!/usr/bin/env python3
"""Table of tuna-bench --collective neighbor_alltoallv runs (docs/results/neighbor.md).

    python3 -S sim/neighbor_table.py RUN1.jsonl[.gz] [RUN2.jsonl ...] [--against OPTIONS]

One row per neighborhood (spmv file and scale, or stencil and size) and form (blocking,
persistent), one column per configuration: the ratio library median / row median from each
run (speedup: above 1, tuna faster), the runs' median first, then every run's value in brackets.
Simulated records (a "sim" object, --no-vendor) have no ratio: there the column is the row's
median time in us, and --against OPTIONS (e.g. linear) prints each time's ratio to that
configuration's in the same form instead.
"""
import gzip
import json
import statistics
import sys


def key_of(r):
    d = r["dist"]
    if d["name"] == "stencil":
        return "%s %s B" % (d["spec"], d["S_bytes"])
    f = d.get("file", "").rsplit("/", 1)[-1]
    return "spmv %s x%g" % (f, d.get("scale", 1))


def main(argv):
    against = None
    if "--against" in argv:
        i = argv.index("--against")
        against = argv[i + 1]
        del argv[i:i + 2]
    runs = []
    for path in argv:
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as fh:
            runs.append([json.loads(line) for line in fh if line.strip()])
    rows, cols = [], []
    cell = {}
    for n, recs in enumerate(runs):
        base = {}
        for r in recs:
            if r.get("status") != "ok":
                continue
            k, c = "%s | %s" % (key_of(r), r.get("form", "blocking")), r["options"]
            if k not in rows:
                rows.append(k)
            if c not in cols:
                cols.append(c)
            if against and r["options"] == against:
                base[k] = r["time"]["median"]
        for r in recs:
            if r.get("status") != "ok":
                continue
            k, c = "%s | %s" % (key_of(r), r.get("form", "blocking")), r["options"]
            if against:
                b = base.get(k)
                v = b / r["time"]["median"] if b else None
            elif r.get("speedup") is not None:
                v = r["speedup"]
            else:
                v = r["time"]["median"] * 1e6
            if v is not None:
                cell.setdefault((k, c), []).append(v)
    print("| neighborhood | form | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 2) + "|")
    for k in rows:
        out = []
        for c in cols:
            v = cell.get((k, c), [])
            if not v:
                out.append("-")
            elif len(v) == 1:
                out.append("%.2f" % v[0])
            else:
                out.append("%.2f (%s)" % (statistics.median(v), " ".join("%.2f" % x for x in v)))
        print("| %s | %s |" % (k, " | ".join(out)))


if __name__ == "__main__":
    main(sys.argv[1:])
