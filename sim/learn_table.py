#!/usr/bin/env python3
"""Table and figure of sim/learn_study.sh (issue 34: does auto's learning reach the best row?).

Per cell (platform, per-message overhead, P, S, distribution):
  best row     the fastest configuration of the exhaustive sweep (sweep.jsonl; vendor is one
               of tuna's rows), its median time
  steady       auto's median over the last 100 of its 200 samples / best
  whole        auto's sum of the 200 samples / (200 x best)
  the same two for TUNA_AUTO_LEARN=0 (auto-model.jsonl: the cost model's choice alone)
  learned      the winner of the "auto learned" line (err/CELL.learn.err, TUNA_VERBOSE=1), and
               the candidates' measured times on that line
  skipped      sweep chunks that hit the timeout (status "timeout" records) or were not run
               (sim/learn_study.sh's SKIP: status "skipped"), with their first and last
               configurations
Targets (issue 34): steady <= 1.05, whole <= 1.10.

Usage: sim/learn_table.py [DIR (default sim/results/learn)] [--reference DIR] [--figure PNG]
                          [--candidates]
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys


def overhead_us(rec):
    """The per-message send overhead the run used: the last smpi/os in its --cfg list."""
    os_s = None
    for c in rec["sim"]["smpi_cfg"]:
        if c.startswith("smpi/os:"):
            os_s = float(c.split(":")[2])
    return round(os_s * 1e6, 3)


def cell_of(rec):
    d = rec["dist"]
    return (rec["sim"]["platform"], overhead_us(rec), rec["machine"]["P"],
            int(d.get("sizes") or d.get("S")), d.get("spec", d.get("name")).split(":")[0])


def cell_name(c):
    plat, ov, P, S, dist = c
    return f"{plat}-os{ov:g}-P{P}-S{S}-{dist}"


def load(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def learned_line(path):
    """(winner, candidates text, calls) of a cell's "auto learned" lines, or None. Phase 2 (the
    winner's neighbouring parameters, docs/tuning.md "Learning") settles a second time: the
    winner is the last line's, the calls the sum, the candidates each line's ("; then")."""
    if not os.path.exists(path):
        return None
    found = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"auto learned \((.*?)\):(.*)", line)
            if m:
                head, rest = m.group(1), m.group(2)
                calls = re.search(r"(\d+) calls", head)
                w = re.search(r"winner (\S+)\s*$", rest)
                cands = rest[:w.start()].strip() if w else rest.strip()
                found.append({"winner": w.group(1) if w else "(line cut)",
                              "candidates": cands, "how": head.split(",")[-2].strip()
                              if head.count(",") >= 2 else "",
                              "calls": int(calls.group(1)) if calls else None})
    if not found:
        return None
    calls = [x["calls"] for x in found]
    return {"winner": found[-1]["winner"],
            "candidates": " then ".join(x["candidates"] for x in found),
            "how": ", then ".join(x["how"] for x in found),
            "calls": None if None in calls else sum(calls)}


def model_choice(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"\): (\S+), model time", line)
            if m:
                return m.group(1).rstrip(",")
    return None


def ratios(rec, best):
    s = rec["samples"]
    steady = statistics.median(s[-100:]) / best
    whole = sum(s) / (len(s) * best)
    return steady, whole


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?", default="sim/results/learn")
    ap.add_argument("--figure", help="PNG path (matplotlib)")
    ap.add_argument("--candidates", action="store_true",
                    help="also list each cell's learned line (candidates' measured times)")
    ap.add_argument("--reference", metavar="DIR",
                    help="read sweep.jsonl and auto-model.jsonl (and done/) from DIR "
                         "(a re-run of the learning part only; default: DIR itself)")
    args = ap.parse_args()
    ref = args.reference or args.dir
    sweep, skipped = {}, {}
    for r in load(os.path.join(ref, "sweep.jsonl")):
        if r.get("status") in ("timeout", "skipped"):
            ov = r["sim"]["os_us"] if "os_us" in r["sim"] else overhead_us(r)
            c = (r["sim"]["platform"], ov, r["machine"]["P"],
                 int(r["dist"]["sizes"]), r["dist"]["spec"].split(":")[0])
            fam = r.get("family") or r["algorithm"].split(":")[0].split(",")[0]
            cfgs = re.split(r",(?=[a-z][a-z-]*(?::|,|$))", r["algorithm"])
            first, last = cfgs[0], cfgs[-1]
            what = f"{first} .. {last}" if first != last else first
            skipped.setdefault(c, []).append(
                f"{fam} ({r['sim']['timeout_s']:g} s timeout: {what})"
                if r["status"] == "timeout" else f"{fam} (not run: {what})")
            continue
        if r.get("status") != "ok" or not r.get("time"):
            continue
        sweep.setdefault(cell_of(r), []).append((r["time"]["median"], r["options"]))
    learn = {cell_of(r): r for r in load(os.path.join(args.dir, "auto-learn.jsonl"))
             if r.get("samples")}
    model = {cell_of(r): r for r in load(os.path.join(ref, "auto-model.jsonl"))
             if r.get("samples")}
    cells = sorted(set(sweep) | set(learn) | set(model),
                   key=lambda c: (c[2], c[0], c[1], c[3], c[4]))
    rows = []
    print("| platform | os = or (us) | P | S | dist | best row (us) | auto learned | "
          "learn: steady / best | learn: 200 calls / (200 x best) | LEARN=0: model choice on agreement calls | "
          "model: steady / best | model: 200 / (200 x best) | sweep skipped |")
    print("|---|---:|---:|---:|---|---|---|---:|---:|---|---:|---:|---|")
    for c in cells:
        plat, ov, P, S, dist = c
        name = cell_name(c)
        best = min(sweep[c]) if c in sweep else None
        ll = learned_line(os.path.join(args.dir, "err", f"{name}.learn.err"))
        mc = model_choice(os.path.join(ref, "err", f"{name}.model.err"))
        row = {"cell": c, "best": best, "learned": ll, "model_choice": mc}
        if best and not os.path.exists(os.path.join(ref, "done", f"{name}.sweep")):
            skipped.setdefault(c, []).append("sweep not finished (stopped)")
        fmt = lambda x: "-" if x is None else f"{x:.3f}"
        ls = lw = ms = mw = None
        if best and c in learn:
            ls, lw = ratios(learn[c], best[0])
        if best and c in model:
            ms, mw = ratios(model[c], best[0])
        row.update(ls=ls, lw=lw, ms=ms, mw=mw)
        rows.append(row)
        flag = lambda x, lim: "" if x is None or x <= lim else " **"
        print(f"| {plat} | {ov:g} | {P} | {S} | {dist} | "
              f"{'-' if not best else f'{best[0] * 1e6:.1f} ({best[1]})'} | "
              f"{ll['winner'] if ll else '-'} | {fmt(ls)}{flag(ls, 1.05)} | {fmt(lw)}{flag(lw, 1.10)} | "
              f"{mc or '-'} | {fmt(ms)} | {fmt(mw)} | {', '.join(skipped.get(c, [])) or '-'} |")
    if args.candidates:
        print()
        for r in rows:
            if r["learned"]:
                ll = r["learned"]
                print(f"- {cell_name(r['cell'])}: {ll['how']}, {ll['calls']} calls: "
                      f"{ll['candidates']} winner {ll['winner']}")
    if args.figure and rows:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
        rows = [r for r in rows if r["ls"] is not None or r["ms"] is not None]
        x = np.arange(len(rows))
        w = 0.2
        fig, ax = plt.subplots(figsize=(max(8, 0.5 * len(rows) + 2), 5))
        series = [("ls", "learning on: steady state", "tab:blue"),
                  ("lw", "learning on: 200 calls", "tab:cyan"),
                  ("ms", "learning off: steady state", "tab:red"),
                  ("mw", "learning off: 200 calls", "tab:orange")]
        for i, (k, label, col) in enumerate(series):
            ax.bar(x + (i - 1.5) * w, [r[k] or np.nan for r in rows], w, label=label, color=col)
        ax.axhline(1.05, color="k", ls="--", lw=0.8, label="1.05 (steady-state target)")
        ax.axhline(1.10, color="k", ls=":", lw=0.8, label="1.10 (200-call target)")
        ax.set_yscale("log")
        from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter
        top = np.nanmax([[r[k] or np.nan for k in ("ls", "lw", "ms", "mw")] for r in rows])
        ticks = [t for t in (0.9, 1, 1.05, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20) if t <= top * 1.2]
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.set_ylabel("time / best row's time")
        ax.set_xticks(x)
        ax.set_xticklabels([f"{r['cell'][0].replace('generic-', '')} os{r['cell'][1]:g}\n"
                            f"P{r['cell'][2]} {r['cell'][3]}B {r['cell'][4][:4]}"
                            for r in rows], rotation=90, fontsize=7)
        versions = sorted({(r.get("sim") or {}).get("simgrid") or "?" for r in learn.values()})
        ax.set_title("auto vs the exhaustive best row, SMPI (SimGrid "
                     f"{', '.join(versions)}), built-in profile")
        ax.legend(fontsize=7, ncol=3)
        fig.tight_layout()
        os.makedirs(os.path.dirname(args.figure) or ".", exist_ok=True)
        fig.savefig(args.figure, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
