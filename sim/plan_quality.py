"""The planner's measure against an exhaustive sweep of the same candidates (docs/plans.md).

Two steps, both tuna-bench JSON lines (local mpiexec or `tuna sim run`, --plan measure):
 1. `-a auto --plan measure`: each cell's auto record lists the candidates the measure timed
    (plan_tried). `python3 sim/plan_quality.py --candidates STEP1.jsonl...` prints their union
    as one -a list.
 2. `-a auto,<that list> --plan measure` (forced rows are timed as plans of that algorithm),
    then `python3 sim/plan_quality.py STEP2.jsonl...`: per cell, quality = the sweep's time
    of the best candidate / the sweep's time of the one measure chose (the auto row's own
    time where the sweep lacks it), each time taken relative to the vendor call timed
    interleaved with it (drift cancels), over the candidates this cell's measure tried.
    Repeated sweeps (several STEP2 files) pool: a row's time is its median over the runs, and
    each run's choice counts as one cell. 1.0: measure found the sweep's best; the geometric
    mean over cells is the figure of merit.

    python3 sim/plan_quality.py [--min GEOMEAN] STEP2.jsonl...
"""
import json, math, re, sys

args = sys.argv[1:]
if not args:
    sys.exit(__doc__)


def records(files):
    for f in files:
        for line in open(f):
            line = line.strip()
            if line:
                yield f, json.loads(line)


if args[0] == "--candidates":
    seen = []
    for _, r in records(args[1:]):
        for t in r.get("plan_tried") or []:
            if t["options"] not in seen:
                seen.append(t["options"])
    print(",".join(seen))
    sys.exit(0)

minimum = None
if args[0] == "--min":
    minimum = float(args[1])
    args = args[2:]


def cell(r):
    # tuna-bench's default run name ends in the run's start time: repeats are one cell.
    name = re.sub(r"-\d{8}-\d{6}$", "", r["run"].get("name", ""))
    return (name, r["machine"].get("P", r.get("P")), r["dist"]["name"], r["dist"]["S"])


def norm(r):
    t = r["time"]["median"]
    v = r.get("vendor")
    return t / v["median"] if v and v.get("median") else t


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


# Several STEP2 files (repeated sweeps of the same cells) pool: each forced row's time is its
# median over the runs, and every run's own measure choice is judged against that pooled
# sweep. Judging the choice by the sweep's time of the same algorithm (not by the auto row's
# own time) makes a choice that is the sweep's best score exactly 1.
# In SMPI the sweep may run without the vendor call beside each row (nothing drifts there):
# then every time is in seconds, the auto rows' included.
cells, autos = {}, {}
raw = False
for f, r in records(args):
    if "error" in r:
        continue
    key = cell(r)
    if r["options"] == "auto":
        autos.setdefault(key, []).append(r)
    else:
        raw |= not (r.get("vendor") or {}).get("median")
        cells.setdefault(key, {}).setdefault(r["options"], []).append(r)
cells = {k: {o: [r["time"]["median"] if raw else norm(r) for r in rs] for o, rs in v.items()}
         for k, v in cells.items()}
unit = "its time (us)" if raw else "its time / vendor"
scale = 1e6 if raw else 1.0

print(f"| run | P | distribution | S | measure chose | {unit} | sweep's best | {unit} | quality |")
print("|---|---|---|---|---|---|---|---|---|")
qs = []
for key, runs in autos.items():
    rows = {o: median(v) for o, v in cells.get(key, {}).items()}
    for auto in runs:
        if not auto.get("plan_tried"):
            continue
        tried = [t["options"] for t in auto["plan_tried"]]
        swept = {o: rows[o] for o in tried if o in rows}
        if not swept:
            continue
        best = min(swept, key=swept.get)
        chosen = auto["auto_choice"]["options"]
        mine = swept.get(chosen, auto["time"]["median"] if raw else norm(auto))
        q = swept[best] / mine
        qs.append(q)
        name, P, dist, S = key
        print(f"| {name} | {P} | {dist} | {S} | {chosen} | {mine * scale:.3f} | {best} | "
              f"{swept[best] * scale:.3f} | {q:.3f} |")
if not qs:
    sys.exit("no cells with a measured auto plan and its candidates")
g = math.exp(sum(map(math.log, qs)) / len(qs))
print(f"\n{len(qs)} cells: geometric mean quality {g:.3f}, worst {min(qs):.3f}")
if minimum is not None and g < minimum:
    print(f"FAIL: geometric mean below {minimum}")
    sys.exit(1)
