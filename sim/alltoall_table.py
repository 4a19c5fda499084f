#!/usr/bin/env python3
"""The simulated MPI_Alltoall tables and figure of docs/algorithms-alltoall.md from
`sim/alltoall_study.sh` results (JSON lines of `tuna sim run --collective alltoall`).

  sim/alltoall_table.py sim/results/alltoall/alltoall-*.jsonl [--figure docs/figures/alltoall-sim]
      [--every]

Summary, one row per (platform, P, S): SMPI's best alltoall algorithm, tuna's best (every row
at its best parameters, and auto's own choice), their ratio (the issue's gates: <= 0.8x at S <= 256 B, <= 1.05x everywhere),
auto, what auto ran, and auto / tuna's best (gate: <= 1.05x). --every adds, per (platform, P),
the time of every SMPI algorithm and every tuna row (best parameters) at every S. The figure:
tuna's best and auto over SMPI's best against S, one panel per P.
"""
import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from tuna_tools import results  # noqa: E402

SMALL = 256  # the small-block gate applies up to this S


def load(files):
    """(platform, P, S) -> {label: (time, record)}: 'smpi-NAME' per SMPI algorithm, each tuna
    row at its fastest parameters, 'auto'."""
    cells = defaultdict(dict)
    for r in results.ok(results.load(files)):
        if r.get("collective") != "alltoall" or not r.get("time") or "sim" not in r:
            continue
        key = (r["sim"]["platform"], r["machine"]["P"], r["dist"]["S_bytes"])
        label = "smpi-" + r["sim"]["selector"] if r["algorithm"] == "vendor" else r["algorithm"]
        t = r["time"]["median"]
        if label not in cells[key] or t < cells[key][label][0]:
            cells[key][label] = (t, r)
    return cells


def best(cell, smpi):
    """SMPI's best algorithm, or tuna's best configuration: the swept rows and what auto ran
    (auto's choice may lie between the sweep's powers of 2)."""
    runs = [(t, label, r) for label, (t, r) in cell.items() if label.startswith("smpi-") == smpi]
    return min(runs, key=lambda x: x[0]) if runs else None


def short(r):
    """'tuna:radix=4,block=64' -> 'tuna r=4,b=64'; auto -> what it ran."""
    if r["algorithm"] == "auto":
        return "auto: " + (r.get("auto_choice") or {}).get("options", "?")
    p = r["params"]
    par = ",".join(f"{k[0]}={v}" for k, v in p.items())
    return f"{r['algorithm']} {par}" if par else r["algorithm"]


def us(t):
    return f"{t * 1e6:.1f}" if t is not None else "-"


def summary(cells):
    print("| platform | P | S (B) | lower bound (us) | SMPI's best (us) | tuna's best (us) | "
          "tuna / SMPI | `auto` (us) | `auto` ran | `auto` / tuna's best |")
    print("|---|---:|---:|---:|---|---|---:|---:|---|---:|")
    out = []
    for key in sorted(cells):
        cell = cells[key]
        s, t = best(cell, True), best(cell, False)
        a = cell.get("auto")
        ran = (a[1].get("auto_choice") or {}).get("options", "-") if a else "-"
        rt = t[0] / s[0] if s and t else None
        ra = a[0] / t[0] if a and t else None
        flag = ""
        if rt is not None and rt > (0.8 if key[2] <= SMALL else 1.05):
            flag = " (gate missed)"
        bound = (next(iter(cell.values()))[1]["sim"].get("bound") or {}).get("bound_s")
        print(f"| {key[0]} | {key[1]} | {key[2]} | {us(bound)} | "
              f"{us(s[0]) + ' (' + s[1][5:] + ')' if s else '-'} | "
              f"{us(t[0]) + ' (' + short(t[2]) + ')' if t else '-'} | "
              f"{f'{rt:.2f}x' if rt else '-'}{flag} | {us(a[0]) if a else '-'} | {ran} | "
              f"{f'{ra:.2f}x' if ra else '-'} |")
        out.append((key, s, t, a))
    return out


def every(cells):
    for plat, procs in sorted({(k[0], k[1]) for k in cells}):
        sizes = sorted(k[2] for k in cells if k[:2] == (plat, procs))
        labels = sorted({lab for k in cells if k[:2] == (plat, procs) for lab in cells[k]},
                        key=lambda lab: (not lab.startswith("smpi-"), lab == "auto", lab))
        print(f"\n#### {plat}-like, P = {procs}: every algorithm (us; tuna rows at their best "
              "parameters)\n")
        print("| algorithm | " + " | ".join(f"{S} B" for S in sizes) + " |")
        print("|---|" + "---:|" * len(sizes))
        for lab in labels:
            row = []
            for S in sizes:
                c = cells[(plat, procs, S)].get(lab)
                if not c:
                    row.append("-")
                elif lab.startswith("smpi-") or lab == "auto" or not c[1]["params"]:
                    row.append(us(c[0]))
                else:
                    row.append(f"{us(c[0])} ({','.join(str(v) for v in c[1]['params'].values())})")
            print(f"| {lab} | " + " | ".join(row) + " |")


def figure(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = sorted({k[1] for k, *_ in rows})
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.8), squeeze=False)
    for ax, procs in zip(axes[0], panels):
        for plat, color in (("fugaku", "tab:red"), ("polaris", "tab:blue")):
            for what, style, idx in (("tuna's best", "-", 2), ("auto", "--", 3)):
                pts = [(row[0][2], row[1][0] / row[idx][0]) for row in rows
                       if row[0][:2] == (plat, procs) and row[1] and row[idx]]
                if pts:
                    xs, ys = zip(*sorted(pts))
                    ax.plot(xs, ys, style, marker="o", color=color,
                            label=f"{plat}-like: {what}")
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("block S (bytes)")
        ax.set_ylabel("speedup over SMPI's best alltoall")
        ax.set_title(f"MPI_Alltoall, P = {procs} (32 ranks per node), SMPI", fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=110)
    print(f"wrote {out}.png", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--every", action="store_true",
                    help="also every algorithm's time per (platform, P)")
    ap.add_argument("--figure", help="write FIGURE.png (speedups against S)")
    args = ap.parse_args()
    cells = load(args.files)
    rows = summary(cells)
    if args.every:
        every(cells)
    if args.figure:
        figure(rows, args.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
