"""Draw TuNA's digit hops and hierarchical TuNA's two phases (docs/algorithms.md).

    .venv/bin/python docs/figures/tuna_schedule.py [-o docs/figures]

writes tuna-digit-hops.png and hierarchical-phases.png. The schedules are computed here from
the rules docs/algorithms.md states for src/alltoallv/tuna_engine.c, coalesced.c and
staggered.c (block i of rank p goes to p + i; round (x, z) moves the blocks whose base-r digit
x is z, to p + z*r^x; slot t = i - 1 - dx*(r-1) - dz; staggered message t goes to the node at
distance 1 + t mod (N-1) with the block of local rank (g + t div (N-1)) mod Q). They are
checked against the worked examples of docs/algorithms.md before anything is drawn; this is a
re-statement of those rules, not a trace of the library.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle  # noqa: E402


def digits(i, r, w):
    return [(i // r**x) % r for x in range(w)]


def ndigits(P, r):
    w = 1
    while r**w < P:
        w += 1
    return w


def rounds(P, r):
    """TuNA's rounds (x, z) with z*r^x < P, lowest digit first."""
    w = ndigits(P, r)
    return [(x, z) for x in range(w) for z in range(1, r) if z * r**x < P]


def slot(i, r, w):
    """Temporary slot of block i (None if it has one non-zero digit: it never waits)."""
    d = digits(i, r, w)
    nz = [x for x in range(w) if d[x]]
    if len(nz) < 2:
        return None
    dx = nz[-1]
    return i - 1 - dx * (r - 1) - d[dx]


def hops(P, r):
    """{(x, z): [(i, source, destination)]}: source/destination 'send', 'recv' or 'tN'."""
    w = ndigits(P, r)
    out = {}
    for x, z in rounds(P, r):
        moves = []
        for i in range(1, P):
            d = digits(i, r, w)
            if d[x] != z:
                continue
            t = slot(i, r, w)
            first = all(d[y] == 0 for y in range(x))
            last = all(d[y] == 0 for y in range(x + 1, w))
            moves.append((i, "send" if first else f"t{t}", "recv" if last else f"t{t}"))
        out[(x, z)] = moves
    return out


# The worked examples of docs/algorithms.md ("tuna (flat)"), transcribed.
WORKED = {
    (4, 2): {(0, 1): [(1, "send", "recv"), (3, "send", "t0")],
             (1, 1): [(2, "send", "recv"), (3, "t0", "recv")]},
    (8, 3): {(0, 1): [(1, "send", "recv"), (4, "send", "t0"), (7, "send", "t2")],
             (0, 2): [(2, "send", "recv"), (5, "send", "t1")],
             (1, 1): [(3, "send", "recv"), (4, "t0", "recv"), (5, "t1", "recv")],
             (1, 2): [(6, "send", "recv"), (7, "t2", "recv")]},
}


def check():
    for (P, r), want in WORKED.items():
        got = hops(P, r)
        assert got == want, f"P={P} r={r}: {got} != docs/algorithms.md's {want}"
    # P = 8, r = 2: block 7 = 111 passes through in round (1, 1) (H = 1), 4 slots.
    h = hops(8, 2)
    assert (7, "t3", "t3") in h[(1, 1)], h
    assert len(rounds(8, 2)) == 3 and max(slot(i, 2, 3) or 0 for i in range(8)) == 3


def staggered_messages(N, Q, g):
    """(t, node distance, local rank whose block it carries) for local rank g."""
    nd = N - 1
    return [(t, 1 + t % nd, (g + t // nd) % Q) for t in range(nd * Q)]


KIND_COLOR = {"direct": "#7fc97f", "to_slot": "#80b1d3", "from_slot": "#fdb462",
              "staged": "#fb8072"}


def kind(src, dst):
    if src == "send" and dst == "recv":
        return "direct"
    if src == "send":
        return "to_slot"
    if dst == "recv":
        return "from_slot"
    return "staged"


def draw_hops(ax, P, r):
    w = ndigits(P, r)
    rs = rounds(P, r)
    h = hops(P, r)
    for c, (x, z) in enumerate(rs):
        for i, src, dst in h[(x, z)]:
            row = i - 1
            ax.add_patch(Rectangle((c, row), 1, 1, facecolor=KIND_COLOR[kind(src, dst)],
                                   edgecolor="white", lw=2))
            label = f"{src}→{dst}" + (" (staged)" if kind(src, dst) == "staged" else "")
            ax.text(c + 0.5, row + 0.5, label, ha="center", va="center", fontsize=8)
    # digit groups: the rounds of one digit are in flight together (default block)
    for x in range(w):
        cols = [c for c, (xx, _) in enumerate(rs) if xx == x]
        if cols and x > 0:
            ax.axvline(cols[0], color="black", lw=1.5)
        ax.text((cols[0] + cols[-1] + 1) / 2, -0.35, f"digit {x}", ha="center", va="bottom",
                fontsize=9, weight="bold")
    ax.set_xlim(0, len(rs))
    ax.set_ylim(P - 1, -0.9)
    ax.set_xticks([c + 0.5 for c in range(len(rs))])
    ax.set_xticklabels([f"({x},{z})\nto p+{z * r**x}" for x, z in rs], fontsize=8)
    ax.set_yticks([i - 0.5 for i in range(1, P)])
    ax.set_yticklabels(
        [f"block {i} = " + "".join(str(d) for d in reversed(digits(i, r, w))) + f"$_{{{r}}}$"
         for i in range(1, P)], fontsize=8)
    ax.tick_params(length=0)
    nslots = sum(1 for i in range(1, P) if slot(i, r, w) is not None)
    ax.set_title(f"P = {P}, radix {r}: {len(rs)} rounds, {nslots} slots (t0..t{nslots - 1})",
                 fontsize=10)
    for s in ax.spines.values():
        s.set_visible(False)


def figure_hops(path):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [4, 3]})
    draw_hops(axes[0], 8, 3)
    draw_hops(axes[1], 8, 2)
    handles = [Patch(color=KIND_COLOR["direct"], label="send buffer → receive buffer (one non-zero digit)"),
               Patch(color=KIND_COLOR["to_slot"], label="first hop: send buffer → slot"),
               Patch(color=KIND_COLOR["from_slot"], label="last hop: slot → receive buffer"),
               Patch(color=KIND_COLOR["staged"], label="middle hop: slot → same slot, outgoing copy staged")]
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.suptitle("TuNA (flat): block i of rank p goes to p+i; round (x, z) sends the blocks whose "
                 "digit x is z to p + z·r^x (the same on every rank)", fontsize=10)
    fig.tight_layout(rect=(0, 0.1, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figure_hier(path, N=3, Q=4, r=2):
    fig, axes = plt.subplots(1, 3, figsize=(14, 5))
    xs = [n * 1.6 for n in range(N)]

    def nodes(ax, title):
        for n in range(N):
            ax.add_patch(Rectangle((xs[n] - 0.45, -0.6), 0.9, Q + 0.2, facecolor="#f0f0f0",
                                   edgecolor="grey"))
            ax.text(xs[n], Q - 0.2, f"node {n}", ha="center", fontsize=9, weight="bold")
            for l in range(Q):
                ax.plot(xs[n], l, "o", ms=16, color="white", mec="black", zorder=3)
                ax.text(xs[n], l, f"{l}", ha="center", va="center", fontsize=8, zorder=4)
        ax.set_xlim(-0.8, xs[-1] + 0.8)
        ax.set_ylim(Q + 0.2, -1.0)
        ax.set_title(title, fontsize=10)
        ax.axis("off")

    def arrow(ax, a, b, color, rad=0.0, lw=1.2, label=None):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=10, color=color,
                                     lw=lw, shrinkA=9, shrinkB=9,
                                     connectionstyle=f"arc3,rad={rad}", zorder=2))
        if label:
            ax.text((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 - 0.15, label, fontsize=7, color=color,
                    ha="center")

    # (a) intra-node phase: TuNA over the Q local ranks, in every node at once
    ax = axes[0]
    colors = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a"]
    rs = rounds(Q, r)
    nodes(ax, f"1. intra-node phase: TuNA over the Q = {Q}\nranks of every node at once "
              f"(radix {r}, {len(rs)} rounds);\na block carries N = {N} sub-blocks, one per node")
    for k, (x, z) in enumerate(rs):
        d = z * r**x
        for n in range(N):
            for l in range(Q):
                arrow(ax, (xs[n], l), (xs[n], (l + d) % Q), colors[k % len(colors)],
                      rad=0.5 + 0.25 * k)
    ax.legend(handles=[Patch(color=colors[k % len(colors)], label=f"round ({x},{z}): to local rank l+{z * r**x}")
                       for k, (x, z) in enumerate(rs)], loc="lower center", fontsize=7,
              frameon=False, bbox_to_anchor=(0.5, -0.2))

    # (b) coalesced: one message per remote node, carrying Q blocks
    ax = axes[1]
    nodes(ax, "2a. coalesced: local rank g sends one message\n"
              f"per remote node to local rank g, carrying\nQ = {Q} blocks (node 0's messages shown)")
    for l in range(Q):
        for d in range(1, N):
            arrow(ax, (xs[0], l), (xs[d], l), "#1f78b4", rad=-0.25 if d > 1 else 0.0)

    # (c) staggered: (N-1)*Q messages, one block each, in the order of t
    ax = axes[2]
    nodes(ax, f"2b. staggered: (N-1)·Q = {(N - 1) * Q} messages per rank, one block\n"
              "each; message t goes to the node at distance\n1 + t mod (N-1) (local ranks 0, 1 of node 0 shown)")
    for g, color in ((0, "#e31a1c"), (1, "#33a02c")):
        msgs = staggered_messages(N, Q, g)
        for d in range(1, N):
            ts = [(t, l) for t, dd, l in msgs if dd == d]
            label = "t " + ",".join(str(t) for t, _ in ts) + ": blocks of " + \
                    ",".join(str(l) for _, l in ts)
            arrow(ax, (xs[0], g), (xs[d], g), color, rad=-0.25 if d > 1 else 0.0)
            ax.text(xs[0] + 0.35, Q + 0.25 + 0.3 * (2 * g + d - 1),
                    f"local rank {g} → node {d}: {label}", fontsize=7, color=color)
    ax.set_ylim(Q + 1.6, -1.0)
    fig.suptitle(f"Hierarchical TuNA, N = {N} nodes x Q = {Q} ranks: after phase 1 local rank g "
                 "holds everything its node sends to local rank g of the other nodes", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--outdir", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    check()
    figure_hops(os.path.join(a.outdir, "tuna-digit-hops.png"))
    figure_hier(os.path.join(a.outdir, "hierarchical-phases.png"))
    print("wrote", os.path.join(a.outdir, "tuna-digit-hops.png"), "and hierarchical-phases.png")


if __name__ == "__main__":
    main()
