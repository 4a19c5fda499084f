#!/usr/bin/env python3
"""Overlap of the nonblocking alltoallv rows (sim/overlap_study.sh, tuna-bench --nonblocking):
a Markdown table per platform (pure time, time with computation, overlap %) and the figure
docs/figures/overlap-sim.png (overlap % per row and block size, one panel per platform).

    PYTHONPATH=python python3 sim/overlap_table.py sim/results/nonblocking/overlap-*.jsonl \
        --figure docs/figures/overlap-sim.png
"""
import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from tuna_tools import results  # noqa: E402


def load(files):
    """platform -> S -> [(options, record)] in the run's order."""
    cells = defaultdict(lambda: defaultdict(list))
    for r in results.ok(results.load(files)):
        if not r.get("nonblocking") or "sim" not in r:
            continue
        cells[r["sim"]["platform"]][r["dist"]["S_bytes"]].append((r["options"], r))
    return cells


def row_order(by_size):
    """The rows of a platform in the run's order, over every size."""
    rows = []
    for S in sorted(by_size):
        for name, _ in by_size[S]:
            if name not in rows:
                rows.append(name)
    return rows


def table(cells):
    for plat, by_size in sorted(cells.items()):
        sizes = sorted(by_size)
        rows = row_order(by_size)
        print(f"\n{plat}-like, P = 64: pure us / with computation us / overlap %\n")
        print("| row | " + " | ".join(f"S = {S} B" for S in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for name in rows:
            cells_txt = []
            for S in sizes:
                r = dict(by_size[S]).get(name)
                if r is None:
                    cells_txt.append("-")
                    continue
                nb = r["nonblocking"]
                cells_txt.append(f"{r['time']['median'] * 1e6:.1f} / "
                                 f"{nb['total']['median'] * 1e6:.1f} / "
                                 f"**{nb['overlap_percent']:.0f}%**")
            print(f"| {name} | " + " | ".join(cells_txt) + " |")


def figure(cells, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plats = sorted(cells)
    fig, axes = plt.subplots(1, len(plats), figsize=(6.5 * len(plats), 4.2), squeeze=False)
    for ax, plat in zip(axes[0], plats):
        by_size = cells[plat]
        sizes = sorted(by_size)
        rows = row_order(by_size)
        width = 0.8 / max(1, len(sizes))
        for k, S in enumerate(sizes):
            d = dict(by_size[S])
            vals = [d[n]["nonblocking"]["overlap_percent"] if n in d else 0 for n in rows]
            ax.bar([i + k * width for i in range(len(rows))], vals, width, label=f"S = {S} B")
        ax.set_xticks([i + width * (len(sizes) - 1) / 2 for i in range(len(rows))])
        ax.set_xticklabels([n.split(",")[0] for n in rows], rotation=40, ha="right",
                           fontsize=8)
        ax.set_ylim(0, 100)
        ax.axhline(80, color="grey", lw=0.8, ls="--")
        ax.set_ylabel("overlap %")
        ax.set_title(f"{plat}-like, P = 64: nonblocking alltoallv, tested every 5%")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\nfigure: {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--figure", help="write the figure here (PNG)")
    args = ap.parse_args()
    cells = load(args.files)
    if not cells:
        sys.exit("overlap_table: no --nonblocking records in the files")
    table(cells)
    if args.figure:
        figure(cells, args.figure)


if __name__ == "__main__":
    main()
