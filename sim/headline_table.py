#!/usr/bin/env python3
"""The headline table and figure of docs/results/headline.md ("Headline: vendor and tuna at
scale") from `sim/headline_study.sh` results (JSON lines).

  sim/headline_table.py sim/results/headline/headline-16.jsonl [--figure docs/figures/headline]

Per platform, size and P: SMPI's `mpich` and `ompi` alltoallv, the best configuration of each
tuna family (TuNA over its radices; the hierarchical pair coalesced/staggered), `auto`, the
speedup of tuna's best over each vendor, the best's ratio to today's lower bound, and the
wall time and max RSS of the costliest smpirun of the row. The figure: tuna's best over
SMPI's `mpich` and `ompi` against P, one line per platform and vendor.
"""
import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from tuna_tools import results  # noqa: E402

FAMILIES = {"tuna": "tuna", "coalesced": "hier", "staggered": "hier"}


def load(files):
    """(platform, S, dist, P) -> {label: record}; the last record of a configuration wins."""
    cells = defaultdict(dict)
    for r in results.ok(results.load(files)):
        if not r.get("time"):
            continue
        key = (r["sim"]["platform"], r["dist"]["S_bytes"], r["dist"]["spec"], r["machine"]["P"])
        label = "vendor:" + r["sim"]["selector"] if r["algorithm"] == "vendor" else r["options"]
        cells[key][label] = r
    return cells


def best_of(cell, family):
    runs = [(r["time"]["median"], label) for label, r in cell.items()
            if FAMILIES.get(r["algorithm"]) == family]
    return min(runs) if runs else None


def short(label):
    """'tuna:radix=4,block=64' -> 'tuna r=4' (the block is the default everywhere here)."""
    name, _, params = label.partition(":")
    p = dict(kv.split("=") for kv in params.split(",") if "=" in kv)
    return f"{name} r={p['radix']}" if "radix" in p else name


def us(t):
    return f"{t * 1e6:.1f}" if t is not None else "-"


def ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def summary(cells):
    """Rows of the table, one per (platform, S, dist, P)."""
    rows = []
    # Platform, kind of pattern, S, P: recorded matrices of several P sort by P.
    for key in sorted(cells, key=lambda k: (k[0], k[2].split(":")[0], k[1] or 0, k[3], k[2])):
        cell = cells[key]
        vm = cell.get("vendor:mpich")
        vo = cell.get("vendor:ompi")
        tm = vm["time"]["median"] if vm else None
        to = vo["time"]["median"] if vo else None
        tuna = best_of(cell, "tuna")
        hier = best_of(cell, "hier")
        best = min(x for x in (tuna, hier) if x) if (tuna or hier) else None
        auto = cell.get("auto")
        costliest = max(cell.values(), key=lambda r: r["sim"].get("wall_s") or 0)
        rows.append({
            "platform": key[0], "S": key[1], "dist": key[2], "P": key[3],
            "mpich": tm, "ompi": to, "tuna": tuna, "hier": hier, "best": best,
            "auto": auto["time"]["median"] if auto else None,
            # No bound for FFT and file patterns (tuna sim: BOUNDED_DISTRIBUTIONS).
            "best_bound": ((cell[best[1]]["sim"].get("bound") or {}).get("bound_s")
                           if best else None),
            "wall": costliest["sim"].get("wall_s"), "rss": costliest["sim"].get("max_rss_kib"),
        })
    return rows


def recorded(dist):
    """A recorded count matrix (matrix:FILE): its sizes come from the file, not from S."""
    return dist.startswith("matrix:")


def pattern(w):
    """The size pattern of a row: the distribution spec, or a matrix file's base name and
    its scale where that is not 1."""
    d = w["dist"]
    if recorded(d):
        fields = d[len("matrix:"):].split(",")
        name = os.path.splitext(os.path.basename(fields[0]))[0]
        scale = [f.split("=", 1)[1] for f in fields[1:] if f.startswith("scale=")]
        return f"{name} x {scale[0]}" if scale and float(scale[0]) != 1 else name
    return d


def table(rows):
    # A pattern column only where a table holds more than uniform sizes (the older tables).
    show = any(w["dist"] != "uniform" for w in rows)
    print(("| platform | pattern " if show else "| platform ") + "| S | P | SMPI `mpich` (us) | SMPI `ompi` (us) | best TuNA (us) | "
          "best hierarchical (us) | `auto` (us) | best / `mpich` | best / `ompi` | `auto` / `mpich` | "
          "best x bound | costliest run: wall, max RSS |")
    print("|---" + ("|---" if show else "") + "|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for w in rows:
        b = w["best"]
        tuna = f"{us(w['tuna'][0])} ({short(w['tuna'][1])})" if w["tuna"] else "-"
        hier = f"{us(w['hier'][0])} ({short(w['hier'][1])})" if w["hier"] else "-"
        sp_m = ratio(w["mpich"], b[0]) if b else "-"
        sp_o = ratio(w["ompi"], b[0]) if b else "-"
        xb = f"{b[0] / w['best_bound']:.1f}x" if b and w["best_bound"] else "-"
        cost = (f"{w['wall']:.0f} s, {w['rss'] / 1048576:.1f} GiB"
                if w["wall"] is not None and w["rss"] else "-")
        pat = f" {pattern(w)} |" if show else ""
        S = "-" if recorded(w["dist"]) else w["S"]
        print(f"| {w['platform']} |{pat} {S} | {w['P']} | {us(w['mpich'])} | {us(w['ompi'])} | "
              f"{tuna} | {hier} | {us(w['auto'])} | {sp_m} | {sp_o} | {ratio(w['mpich'], w['auto'])} | "
              f"{xb} | {cost} |")


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, out):
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=110)
    print(f"wrote {out}.png", file=sys.stderr)


def figure(rows, out):
    plt = pyplot()
    panels = sorted({(w["S"], w["dist"]) for w in rows}, key=lambda k: (k[0] or 0, k[1]))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.8), squeeze=False)
    for ax, (S, dist) in zip(axes[0], panels):
        for plat, color in (("fugaku", "tab:red"), ("polaris", "tab:blue")):
            for vendor, style in (("mpich", "-"), ("ompi", "--")):
                pts = [(w["P"], w[vendor] / w["best"][0]) for w in rows
                       if w["platform"] == plat and (w["S"], w["dist"]) == (S, dist)
                       and w[vendor] and w["best"]]
                if pts:
                    xs, ys = zip(*sorted(pts))
                    ax.plot(xs, ys, style, marker="o", color=color,
                            label=f"{plat}-like, over SMPI `{vendor}`")
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("P (32 ranks per node)")
        ax.set_ylabel("speedup of tuna's best over vendor")
        if dist == "uniform":
            what = f"uniform sizes in [0, {S} B]"
        elif recorded(dist):
            what = f"recorded pattern {pattern({'dist': dist})}"
        else:
            what = f"{dist}, S = {S} B"
        ax.set_title(f"alltoallv, {what}, SimGrid 3.35 (eager)", fontsize=9)
        ax.legend(fontsize=8)
    save(fig, out)


def bars(rows, out):
    """One bar per row: tuna's best over SMPI's `mpich` (and `ompi` where run), for tables
    whose patterns were run at one P each (the power-law, FFT and ML rows)."""
    plt = pyplot()
    rows = [w for w in rows if w["best"] and w["mpich"]]
    labels = [f"{w['platform']}-like\n{pattern(w).replace('powerlaw:exponent=', 'power law ')}"
              + ("" if recorded(w["dist"]) else f", S={w['S']}") + f"\nP={w['P']}"
              for w in rows]
    xs = range(len(rows))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(rows)), 4.2))
    ax.bar([x - 0.2 for x in xs], [w["mpich"] / w["best"][0] for w in rows], 0.4,
           label="over SMPI `mpich`", color="tab:blue")
    ax.bar([x + 0.2 for x in xs], [w["ompi"] / w["best"][0] if w["ompi"] else 0 for w in rows],
           0.4, label="over SMPI `ompi`", color="tab:orange")
    ax.axhline(1, color="grey", lw=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("speedup of tuna's best over vendor")
    ax.set_title("alltoallv, non-uniform patterns, SimGrid 3.35 (eager), 32 ranks per node",
                 fontsize=9)
    ax.legend(fontsize=8)
    save(fig, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--figure", help="write FIGURE.png (speedup vs P)")
    ap.add_argument("--bars", help="write BARS.png (speedup per row, one bar each)")
    args = ap.parse_args()
    rows = summary(load(args.files))
    table(rows)
    if args.figure:
        figure(rows, args.figure)
    if args.bars:
        bars(rows, args.bars)
    return 0


if __name__ == "__main__":
    sys.exit(main())
