"""The planner's measure against an exhaustive sweep of the same candidates (docs/plans.md).

Two steps, both tuna-bench JSON lines (local mpiexec or `tuna sim run`, --plan measure):
 1. `-a auto --plan measure`: each cell's auto record lists the candidates the measure timed
    (plan_tried). `python3 sim/plan_quality.py --candidates STEP1.jsonl...` prints their union
    as one -a list.
 2. `-a auto,<that list> --plan measure` (forced rows are timed as plans of that algorithm),
    then `python3 sim/plan_quality.py STEP2.jsonl...`: per cell, quality = the best
    candidate's time / the time of what measure chose, each time taken relative to the
    vendor call timed interleaved with it (drift cancels), over the candidates this cell's
    measure tried. 1.0: measure found the sweep's best; the geometric mean over cells is the
    figure of merit.

    python3 sim/plan_quality.py [--min GEOMEAN] STEP2.jsonl...
"""
import json, math, sys

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


def cell(f, r):
    return (f, r["run"].get("name", ""), r["machine"].get("P", r.get("P")), r["dist"]["name"],
            r["dist"]["S"])


def norm(r):
    t = r["time"]["median"]
    v = r.get("vendor")
    return t / v["median"] if v and v.get("median") else t


cells = {}
for f, r in records(args):
    if "error" in r:
        continue
    cells.setdefault(cell(f, r), {})[r["options"]] = r

print("| run | P | distribution | S | measure chose | its time / vendor | sweep's best | "
      "its time / vendor | quality |")
print("|---|---|---|---|---|---|---|---|---|")
qs = []
for key, rows in cells.items():
    auto = rows.get("auto")
    if not auto or not auto.get("plan_tried"):
        continue
    tried = [t["options"] for t in auto["plan_tried"]]
    swept = {o: norm(rows[o]) for o in tried if o in rows}
    if not swept:
        continue
    best = min(swept, key=swept.get)
    q = swept[best] / norm(auto)
    qs.append(q)
    _, name, P, dist, S = key
    print(f"| {name} | {P} | {dist} | {S} | {auto['auto_choice']['options']} | "
          f"{norm(auto):.3f} | {best} | {swept[best]:.3f} | {q:.3f} |")
if not qs:
    sys.exit("no cells with a measured auto plan and its candidates")
g = math.exp(sum(map(math.log, qs)) / len(qs))
print(f"\n{len(qs)} cells: geometric mean quality {g:.3f}, worst {min(qs):.3f}")
if minimum is not None and g < minimum:
    print(f"FAIL: geometric mean below {minimum}")
    sys.exit(1)
