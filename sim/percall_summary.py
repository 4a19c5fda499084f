#!/usr/bin/env python3
"""Tables of a sim/percall_study.sh output directory, or a comparison of two.

  percall_summary.py DIR                 per run: simulated median time (us) of every
                                         configuration, SMPI's collective timed alongside,
                                         vendor / algorithm, auto's choice; wall time per run
  percall_summary.py BEFORE AFTER        per configuration: before and after (us), after /
                                         before, vendor / algorithm before and after

Reads DIR/*.jsonl (`tuna sim run` records) and DIR/walltime.tsv. Standard library only.
"""
import json
import os
import sys

PART_ORDER = {"a": 0, "b": 1, "c": 2, "d": 3}


def load_dir(d):
    runs = {}
    for name in os.listdir(d):
        if name.endswith(".jsonl"):
            with open(os.path.join(d, name), encoding="utf-8") as f:
                runs[name[:-6]] = [json.loads(line) for line in f if line.strip()]
    walls = {}
    path = os.path.join(d, "walltime.tsv")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f.read().splitlines()[1:]:
                fields = line.split("\t")
                if len(fields) >= 3 and fields[2] == "ok":
                    walls[fields[0]] = float(fields[1])  # the last successful run counts
    return runs, walls


def run_order(name):
    """Part, then P, then the name (a-tuna-fugaku-p64 before a-tuna-fugaku-p256)."""
    tail = name.rsplit("-p", 1)
    procs = int(tail[1]) if len(tail) == 2 and tail[1].isdigit() else 0
    return (PART_ORDER.get(name[:1], 9), procs, name)


def order(rec):
    """Distribution, S, then the bench's own configuration order."""
    k = key(rec)
    return (k[4], k[0], k[1] or 0, rec.get("run", {}).get("index", 0), k[3])


def key(rec):
    d = rec["dist"]
    return (d.get("spec") or d.get("name") or "-", d.get("S_bytes"), rec["options"],
            rec.get("sim", {}).get("selector", "?"), rec["machine"]["P"])


def us(x):
    return "-" if x is None else f"{x * 1e6:.2f}"


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.3f}"


def spread_note(rec):
    s = rec.get("samples") or []
    if len(s) > 1 and min(s) > 0 and max(s) / min(s) - 1 > 0.005:
        return f"samples {min(s) * 1e6:.2f}-{max(s) * 1e6:.2f}"
    return ""


def med(rec, what):
    v = rec.get(what)
    return v["median"] if isinstance(v, dict) else None


def header(name, recs, wall):
    r = recs[0]
    s = r.get("sim", {})
    run = r.get("run", {})
    procs = ",".join(str(p) for p in sorted({x["machine"]["P"] for x in recs}))
    colls = ", ".join(c.split("/", 1)[1] for c in s.get("smpi_cfg", [])
                      if c.split(":")[0] in ("smpi/barrier", "smpi/allreduce", "smpi/allgather"))
    return (f"### {name}: {s.get('platform')} P={procs} "
            f"({s.get('ranks_per_node')} per node), {r.get('collective', 'alltoallv')}, "
            f"SMPI selector(s) {', '.join(sorted({x['sim']['selector'] for x in recs}))}, "
            f"-w {run.get('warmup')} -n {run.get('iterations')}, library {colls or 'SMPI defaults'}"
            f"; wall {wall if wall is not None else '?'} s ({len(recs)} configurations)")


def one(d):
    runs, walls = load_dir(d)
    print(f"# percall study: {os.path.abspath(d)}\n")
    print("Simulated time: median of the timed calls (each the slowest rank's); vendor = SMPI's "
          "own collective timed alongside each configuration; ratio = vendor / algorithm "
          "(> 1: tuna faster).\n")
    print("| run | wall (s) | configurations |")
    print("|---|---:|---:|")
    runs = {n: r for n, r in runs.items() if r}  # an empty file: a run not finished
    for name in sorted(runs, key=run_order):
        print(f"| {name} | {walls.get(name, '?')} | {len(runs[name])} |")
    total = sum(walls.get(n, 0) for n in runs)
    print(f"| total | {total:.1f} | |\n")
    for name in sorted(runs, key=run_order):
        recs = runs[name]
        if not recs:
            continue
        print(header(name, recs, walls.get(name)) + "\n")
        print("| P | sizes | S | configuration | time (us) | SMPI selector | vendor (us) | "
              "vendor / alg | auto's choice | note |")
        print("|---:|---|---:|---|---:|---|---:|---:|---|---|")
        for r in sorted(recs, key=order):
            spec, S, opts, sel, procs = key(r)
            if r.get("status") != "ok":
                print(f"| {procs} | {spec} | {S} | {opts} | error | {sel} | | | | "
                      f"{r.get('error', '')} |")
                continue
            t, v = med(r, "time"), med(r, "vendor")
            choice = (r.get("auto_choice") or {}).get("options", "")
            print(f"| {procs} | {spec} | {S} | {opts} | {us(t)} | {sel} | {us(v)} | "
                  f"{ratio(v, t)} | {choice} | {spread_note(r)} |")
        print()
    return 0


def compare(d0, d1):
    runs0, walls0 = load_dir(d0)
    runs1, walls1 = load_dir(d1)
    runs0 = {n: r for n, r in runs0.items() if r}
    runs1 = {n: r for n, r in runs1.items() if r}
    print(f"# percall study: {os.path.abspath(d1)} (after) vs {os.path.abspath(d0)} (before)\n")
    print("after / before < 1: faster after. vendor / alg: SMPI's own collective timed "
          "alongside over the configuration (> 1: tuna faster).\n")
    print("| run | wall before (s) | wall after (s) |")
    print("|---|---:|---:|")
    for name in sorted(set(runs0) | set(runs1), key=run_order):
        print(f"| {name} | {walls0.get(name, '-')} | {walls1.get(name, '-')} |")
    print()
    for name in sorted(set(runs0) | set(runs1), key=run_order):
        r0 = {key(r): r for r in runs0.get(name, [])}
        r1 = {key(r): r for r in runs1.get(name, [])}
        any_rec = next(iter(r0.values() or r1.values()), None)
        if any_rec is None:
            continue
        print(header(name, list(r0.values() or r1.values()), None).split("; wall")[0] + "\n")
        print("| P | sizes | S | configuration | SMPI selector | before (us) | after (us) | "
              "after / before | vendor before | vendor after | vendor / alg before | "
              "vendor / alg after | auto before | auto after |")
        print("|---:|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
        both = {**r1, **r0}
        for k in sorted(both, key=lambda k: order(both[k])):
            a, b = r0.get(k), r1.get(k)
            ta, tb = (med(a, "time") if a else None), (med(b, "time") if b else None)
            va, vb = (med(a, "vendor") if a else None), (med(b, "vendor") if b else None)
            ca = ((a or {}).get("auto_choice") or {}).get("options", "")
            cb = ((b or {}).get("auto_choice") or {}).get("options", "")
            print(f"| {k[4]} | {k[0]} | {k[1]} | {k[2]} | {k[3]} | {us(ta)} | {us(tb)} | "
                  f"{ratio(tb, ta)} | {us(va)} | {us(vb)} | {ratio(va, ta)} | {ratio(vb, tb)} | "
                  f"{ca} | {cb} |")
        print()
    return 0


def main(argv):
    if len(argv) == 2:
        return one(argv[1])
    if len(argv) == 3:
        return compare(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
