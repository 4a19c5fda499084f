#!/usr/bin/env python3
"""The simulated MPI_Alltoall tables and figure of docs/algorithms-alltoall.md from
`sim/alltoall_study.sh` results (JSON lines of `tuna sim run --collective alltoall`).

  sim/alltoall_table.py sim/results/alltoall/alltoall-*.jsonl [--figure docs/figures/alltoall-sim]
      [--every]

Summary, one row per (platform, P, S): SMPI's best alltoall algorithm, tuna's best (every row
at its best parameters, and auto's own choice), their ratio (the issue's gates: <= 0.8x at S <= 256 B, <= 1.05x everywhere),
auto, what auto ran, and auto / tuna's best (gate: <= 1.05x). The routed cut bound
(sim/attainable_bound.py: the bytes that must cross the busiest cut of the used nodes over the
links SimGrid's static routes give that cut) is strict for any algorithm on the platform; a
small-block gate below it cannot be met and is marked "gate below the strict bounds". The overhead
bound is the other strict one for small blocks: the inputs a rank can hold by time t obey
N(t) <= N(t - or) + N(t - os - hop - or) (its last receive costs it `or`; the sender of that
message paid `os` and the message the shortest hop), N = 1 before os + hop + or; the bound
is the first t with N(t) >= P. (The table's "lower bound" counts ceil(log2 P) rounds of
one message each, which a schedule that overlaps its sends can undercut.) --every adds, per (platform, P),
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
RPN = 32  # the study's ranks per node (sim/alltoall_study.sh)


def platform(plat_name, cache={}):
    """The platform's description (sim/platforms/NAME.json), or None."""
    if plat_name not in cache:
        try:
            from tuna_tools import sim as tsim
            cache[plat_name] = tsim.load_platform(plat_name)[1]
        except (ImportError, OSError, KeyError, ValueError):
            cache[plat_name] = None
    return cache[plat_name]


def overhead_bound(plat_name, procs):
    """The overhead bound above (seconds), or None without the platform's description."""
    plat = platform(plat_name)
    if plat is None or procs < 2:
        return None
    step = 1e-9
    o_r = round(plat["or"] / step)
    full = round((plat["os"] + min(plat["intra_lat"], plat["link_lat"]) + plat["or"]) / step)
    n = []
    while True:
        t = len(n)
        n.append(1 if t < full else n[t - max(o_r, 1)] + n[t - full])
        if n[-1] >= procs:
            return t * step


def _network(plat_name, procs, S, cache={}):
    """(attainable_bound, the platform, its Network, the P x P matrix of S-byte blocks) for the
    bounds below, or None without numpy or the platform's description (the rest of the table
    does not need them)."""
    key = (plat_name, procs, S)
    if key not in cache:
        cache[key] = None
        plat = platform(plat_name)
        if plat is not None:
            try:
                import numpy as np
                sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
                import attainable_bound as ab
            except ImportError:
                return None
            sizes = np.full((procs, procs), float(S))
            np.fill_diagonal(sizes, 0.0)
            cache[key] = (ab, plat, ab.Network(plat), sizes)
    return cache[key]


def direct_link_bound(plat_name, procs, S, cache={}):
    """The busiest directed link's bytes over its bandwidth (seconds) when every block goes
    from its source node to its destination node along SimGrid's route (attainable_bound's
    busiest link of the linear exchange): a bound for the exchanges that do so (the linear
    ones, `mesh` with its first dimension inside the node, the hierarchical rows), not for
    those forwarding through other nodes (Bruck, TuNA), which could spread the load onto other
    links. None on one node, without numpy or without the platform."""
    key = (plat_name, procs, S)
    if key not in cache:
        cache[key] = None
        got = _network(plat_name, procs, S)
        if got is not None and procs > RPN:
            ab, plat, net, sizes = got
            linear = ab.schedule("spreadout", {}, procs, RPN, sizes, ab.meta_word_adaptive)
            cache[key] = ab.price(linear, procs, RPN, plat, net)["link_s"]
    return cache[key]


def cut_bound(plat_name, procs, S, cache={}):
    """The routed cut bound (seconds) of an all-to-all with every block S bytes, or None
    without numpy or the platform; 0 where no cut between routers separates the used nodes
    (dragonfly nodes on one blade: the injection term of the lower bound covers them)."""
    key = (plat_name, procs, S)
    if key not in cache:
        got = _network(plat_name, procs, S)
        cache[key] = (got[2].cut_bound(-(-procs // RPN), RPN, got[3])[0]
                      if got is not None else None)
    return cache[key]


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
    print("| platform | P | S (B) | lower bound (us) | overhead bound (us) | routed cut (us) | "
          "busiest link, direct routes (us) | SMPI's best (us) | tuna's best (us) | "
          "tuna / SMPI | `auto` (us) | `auto` ran | `auto` / tuna's best |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---|---:|")
    out = []
    for key in sorted(cells):
        cell = cells[key]
        s, t = best(cell, True), best(cell, False)
        a = cell.get("auto")
        ran = (a[1].get("auto_choice") or {}).get("options", "-") if a else "-"
        rt = t[0] / s[0] if s and t else None
        ra = a[0] / t[0] if a and t else None
        flag = ""
        cut = cut_bound(*key)
        strict = max(cut or 0.0, overhead_bound(key[0], key[1]) or 0.0)
        if rt is not None and rt > (0.8 if key[2] <= SMALL else 1.05):
            below = key[2] <= SMALL and 0.8 * s[0] < strict
            flag = " (gate below the strict bounds)" if below else " (gate missed)"
        bound = (next(iter(cell.values()))[1]["sim"].get("bound") or {}).get("bound_s")
        print(f"| {key[0]} | {key[1]} | {key[2]} | {us(bound)} | "
              f"{us(overhead_bound(key[0], key[1]))} | {us(cut or None)} | "
              f"{us(direct_link_bound(*key))} | "
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
