"""Draw TuNA's digit hops and hierarchical TuNA's two phases (docs/algorithms.md) from traces
of the library's own messages.

    .venv/bin/python docs/figures/tuna_schedule.py [--tuna-trace build/dev/tools/tuna-trace]
                                                   [-o docs/figures] [--trace-dir DIR [--no-run]]

writes tuna-digit-hops.png and hierarchical-phases.png. It runs tuna-trace
(tools/trace/tuna-trace.c; TUNA_TRACE or --tuna-trace names it, TUNA_MPIEXEC and
TUNA_MPIEXEC_FLAGS the launcher) once per schedule:

    mpiexec -n 4  tuna-trace -o tuna-P4-r2.jsonl tuna:radix=2
    mpiexec -n 8  tuna-trace -o tuna-P8-r3.jsonl tuna:radix=3      (and tuna-P8-r2, radix=2)
    mpiexec -n 12 tuna-trace -q 4 -o coalesced-P12-q4.jsonl coalesced:radix=2
    mpiexec -n 12 tuna-trace -q 4 -o staggered-P12-q4.jsonl staggered:radix=2

tuna-trace records every message one tuna_alltoallv sends (caught through MPI's profiling
interface) with the blocks it carries; --trace-dir keeps the traces, --no-run reads them back.
Everything drawn is read from the traces: which block moves in which round, from which rank
to which, whether it leaves the send buffer (its origin sends it) or lands in the receive
buffer (its destination receives it), the batches (rounds posted together between two
metadata exchanges), the sub-blocks of an intra-node block, the inter-node messages and what
each carries. Two properties are not on the wire and come from src/alltoallv/tuna_engine.c's
rules instead: the number of the temporary slot a block waits in (t = i - 1 - dx*(r-1) - dz,
slot_of()), and that a middle hop's outgoing copy goes through the staging area. The tables
read from the traces are checked against the worked examples of docs/algorithms.md before
anything is drawn, so those examples are checked against the library.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
from tuna_tools import launch  # noqa: E402

# ------------------------------------------------------------------ traces


def default_exe():
    env = os.environ.get("TUNA_TRACE")
    if env:
        return env
    for b in ("dev", "openmpi", "rel", "main"):
        p = os.path.join(ROOT, "build", b, "tools", "tuna-trace")
        if os.path.exists(p):
            return p
    return shutil.which("tuna-trace") or "tuna-trace"


def launcher():
    return launch.mpiexec()


# name -> (P, ranks per node or 0, option string)
RUNS = {
    "tuna-P4-r2": (4, 0, "tuna:radix=2"),
    "tuna-P8-r3": (8, 0, "tuna:radix=3"),
    "tuna-P8-r2": (8, 0, "tuna:radix=2"),
    "coalesced-P12-q4": (12, 4, "coalesced:radix=2"),
    "staggered-P12-q4": (12, 4, "staggered:radix=2"),
}


def run_trace(exe, path, P, q, options):
    cmd = launcher() + ["-n", str(P), exe, "-o", path] + (["-q", str(q)] if q else []) + \
        [options]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{res.stdout}{res.stderr}")


def load(path):
    """(run header, messages) of a tuna-trace file."""
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    head = lines[0]
    assert head.get("kind") == "run", f"{path}: no run header"
    return head, lines[1:]


def traces(exe, trace_dir, run=True):
    out = {}
    for name, (P, q, options) in RUNS.items():
        path = os.path.join(trace_dir, name + ".jsonl")
        if run:
            run_trace(exe, path, P, q, options)
        head, msgs = load(path)
        assert head["P"] == P and head["options"] == options, (path, head)
        out[name] = msgs
    return out


# ------------------------------------------------------------------ flat TuNA


def digits(i, r, w):
    return [(i // r**x) % r for x in range(w)]


def ndigits(P, r):
    w = 1
    while r**w < P:
        w += 1
    return w


def round_of(dist, r):
    """(x, z) of a round from its distance z*r^x (one non-zero base-r digit)."""
    x = 0
    while dist % r == 0:
        dist //= r
        x += 1
    assert dist < r, "distance with two non-zero digits: not a TuNA round"
    return x, dist


def slot(i, r):
    """Temporary slot of block i (tuna_engine.c's slot_of(): not visible in a trace)."""
    dx, dz = 0, i
    while dz >= r:
        dz //= r
        dx += 1
    return i - 1 - dx * (r - 1) - dz


def rank_table(msgs, P, r, p):
    """Rank p's rounds from its data messages: ([(x, z)], {(x, z): [(i, src, dst)]},
    [batch of each round]). src is "send" when p is the block's origin (its send buffer),
    dst "recv" when the message goes to the block's destination; otherwise the block waits
    in slot t<slot(i)>."""
    mine = sorted((m for m in msgs if m["rank"] == p), key=lambda m: m["seq"])
    rounds, table, batches, batch, last_kind = [], {}, [], -1, None
    for m in mine:
        if m["kind"] == "data":
            if last_kind != "data":  # a metadata exchange separates two batches
                batch += 1
            xz = round_of((m["dest"] - p) % P, r)
            assert xz not in table, f"rank {p}: round {xz} twice"
            rows = []
            for o, d in m["blocks"]:
                i = (d - o) % P
                t = f"t{slot(i, r)}"
                rows.append((i, "send" if o == p else t, "recv" if m["dest"] == d else t))
            rounds.append(xz)
            table[xz] = sorted(rows)
            batches.append(batch)
        last_kind = m["kind"]
    return rounds, table, batches


def tuna_schedule(msgs, P, r):
    """The table of rank 0, after checking that every rank's is the same (docs/algorithms.md:
    "The same table holds on every rank p")."""
    ref = rank_table(msgs, P, r, 0)
    for p in range(1, P):
        assert rank_table(msgs, P, r, p) == ref, f"P={P} r={r}: rank {p}'s rounds differ"
    return ref


# The worked examples of docs/algorithms.md ("tuna (flat)"), transcribed.
WORKED = {
    (4, 2): {(0, 1): [(1, "send", "recv"), (3, "send", "t0")],
             (1, 1): [(2, "send", "recv"), (3, "t0", "recv")]},
    (8, 3): {(0, 1): [(1, "send", "recv"), (4, "send", "t0"), (7, "send", "t2")],
             (0, 2): [(2, "send", "recv"), (5, "send", "t1")],
             (1, 1): [(3, "send", "recv"), (4, "t0", "recv"), (5, "t1", "recv")],
             (1, 2): [(6, "send", "recv"), (7, "t2", "recv")]},
}


def check_flat(tr):
    for (P, r), want in WORKED.items():
        rounds, got, batches = tuna_schedule(tr[f"tuna-P{P}-r{r}"], P, r)
        assert got == want, f"P={P} r={r}: the library's {got} != docs/algorithms.md's {want}"
        # "rounds (0,1) and (0,2) are in flight together, then (1,1) and (1,2)"
        for k, (x, _) in enumerate(rounds):
            assert batches[k] == x, f"P={P} r={r}: round {rounds[k]} not in batch {x}"
    # P = 8, r = 2: block 7 = 111 passes through in round (1, 1) (H = 1), 4 slots.
    rounds, h, _ = tuna_schedule(tr["tuna-P8-r2"], 8, 2)
    assert (7, "t3", "t3") in h[(1, 1)], h
    assert len(rounds) == 3 and nslots(h) == 4, (rounds, h)


def nslots(table):
    return len({s for rows in table.values() for _, a, b in rows for s in (a, b)
                if s.startswith("t")})


# ------------------------------------------------------------------ hierarchical TuNA


def hier_phases(msgs, P, Q):
    """(intra, inter): the data messages inside a node and between nodes (consecutive
    logical nodes: rank = node*Q + local rank)."""
    data = [m for m in msgs if m["kind"] == "data"]
    intra = [m for m in data if m["rank"] // Q == m["dest"] // Q]
    inter = [m for m in data if m["rank"] // Q != m["dest"] // Q]
    return intra, inter


def intra_rounds(intra, P, Q, r):
    """[(x, z)] of the intra-node rounds, the same in every node and local rank; checks that
    an intra-node block carries one sub-block per node."""
    N = P // Q
    by_round = {}
    for m in intra:
        d = (m["dest"] % Q - m["rank"] % Q) % Q
        by_round.setdefault(m["round"], set()).add(d)
        subs = {}
        for o, dst in m["blocks"]:
            subs.setdefault((o, dst % Q), set()).add(dst // Q)
        for key, nodes in subs.items():
            # a block: its origin's sub-blocks for this local rank of every node
            assert len(nodes) == N, f"intra-node block {key} carries nodes {nodes}, not {N}"
    rounds = []
    for k in sorted(by_round):
        assert len(by_round[k]) == 1, f"intra-node round {k}: distances {by_round[k]}"
        rounds.append(round_of(by_round[k].pop(), r))
    return rounds


def check_hier(tr, P=12, Q=4, r=2):
    N = P // Q
    ci, co = hier_phases(tr[f"coalesced-P{P}-q{Q}"], P, Q)
    si, so = hier_phases(tr[f"staggered-P{P}-q{Q}"], P, Q)
    key = [(m["rank"], m["dest"], m["round"], m["blocks"]) for m in ci]
    assert key == [(m["rank"], m["dest"], m["round"], m["blocks"]) for m in si], \
        "coalesced and staggered differ in the intra-node phase"
    rounds = intra_rounds(ci, P, Q, r)
    for m in co + so:  # inter-node: same local rank, blocks for that local rank only
        assert m["dest"] % Q == m["rank"] % Q, m
        assert all(d == m["dest"] for _, d in m["blocks"]), m
    for p in range(P):
        c = [m for m in co if m["rank"] == p]
        s = [m for m in so if m["rank"] == p]
        assert len(c) == N - 1 and all(len(m["blocks"]) == Q for m in c), (p, c)
        assert len(s) == (N - 1) * Q and all(len(m["blocks"]) == 1 for m in s), (p, s)
        # docs/algorithms.md: message t goes to the node at distance 1 + t mod (N-1) and
        # carries the block of local rank (g + t div (N-1)) mod Q
        g, node = p % Q, p // Q
        for m in s:
            t = m["round"]
            assert (m["dest"] // Q - node) % N == 1 + t % (N - 1), (p, m)
            assert m["blocks"][0][0] // Q == node, (p, m)
            assert m["blocks"][0][0] % Q == (g + t // (N - 1)) % Q, (p, m)
    return rounds, co, so


def staggered_messages(so, P, Q, g):
    """(t, node distance, local rank whose block it carries) of local rank g of node 0."""
    return [(m["round"], (m["dest"] // Q) % (P // Q), m["blocks"][0][0] % Q)
            for m in sorted(so, key=lambda m: m["round"]) if m["rank"] == g]


# ------------------------------------------------------------------ drawing

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


def draw_hops(ax, sched, P, r):
    from matplotlib.patches import Rectangle
    rs, h, batches = sched
    w = ndigits(P, r)
    for c, xz in enumerate(rs):
        for i, src, dst in h[xz]:
            row = i - 1
            ax.add_patch(Rectangle((c, row), 1, 1, facecolor=KIND_COLOR[kind(src, dst)],
                                   edgecolor="white", lw=2))
            label = f"{src}→{dst}" + (" (staged)" if kind(src, dst) == "staged" else "")
            ax.text(c + 0.5, row + 0.5, label, ha="center", va="center", fontsize=8)
    # batches: the rounds posted together (one digit each with the default block)
    for b in sorted(set(batches)):
        cols = [c for c, bb in enumerate(batches) if bb == b]
        if cols[0] > 0:
            ax.axvline(cols[0], color="black", lw=1.5)
        xs = {rs[c][0] for c in cols}
        ax.text((cols[0] + cols[-1] + 1) / 2, -0.35,
                "digit " + ",".join(str(x) for x in sorted(xs)), ha="center", va="bottom",
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
    n = nslots(h)
    ax.set_title(f"P = {P}, radix {r}: {len(rs)} rounds, {n} slots (t0..t{n - 1})",
                 fontsize=10)
    for s in ax.spines.values():
        s.set_visible(False)


def figure_hops(path, tr):
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [4, 3]})
    draw_hops(axes[0], tuna_schedule(tr["tuna-P8-r3"], 8, 3), 8, 3)
    draw_hops(axes[1], tuna_schedule(tr["tuna-P8-r2"], 8, 2), 8, 2)
    handles = [Patch(color=KIND_COLOR["direct"], label="send buffer → receive buffer (one non-zero digit)"),
               Patch(color=KIND_COLOR["to_slot"], label="first hop: send buffer → slot"),
               Patch(color=KIND_COLOR["from_slot"], label="last hop: slot → receive buffer"),
               Patch(color=KIND_COLOR["staged"], label="middle hop: slot → same slot, outgoing copy staged")]
    fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.suptitle("TuNA (flat), traced from tuna_alltoallv: block i of rank p goes to p+i; round "
                 "(x, z) sends the blocks whose digit x is z to p + z·r^x (the same on every rank)",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.1, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figure_hier(path, tr, P=12, Q=4, r=2):
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Patch, Rectangle
    N = P // Q
    rs, co, so = check_hier(tr, P, Q, r)
    intra, _ = hier_phases(tr[f"coalesced-P{P}-q{Q}"], P, Q)
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

    def arrow(ax, a, b, color, rad=0.0, lw=1.2):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=10, color=color,
                                     lw=lw, shrinkA=9, shrinkB=9,
                                     connectionstyle=f"arc3,rad={rad}", zorder=2))

    def at(rank):
        return xs[rank // Q], rank % Q

    # (a) intra-node phase: every traced intra-node data message
    ax = axes[0]
    colors = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a"]
    nodes(ax, f"1. intra-node phase: TuNA over the Q = {Q}\nranks of every node at once "
              f"(radix {r}, {len(rs)} rounds);\na block carries N = {N} sub-blocks, one per node")
    for m in intra:
        arrow(ax, at(m["rank"]), at(m["dest"]), colors[m["round"] % len(colors)],
              rad=0.5 + 0.25 * m["round"])
    ax.legend(handles=[Patch(color=colors[k % len(colors)],
                             label=f"round ({x},{z}): to local rank l+{z * r**x}")
                       for k, (x, z) in enumerate(rs)], loc="lower center", fontsize=7,
              frameon=False, bbox_to_anchor=(0.5, -0.2))

    # (b) coalesced: node 0's inter-node messages
    ax = axes[1]
    nq = len(co[0]["blocks"])
    nodes(ax, "2a. coalesced: local rank g sends one message\n"
              f"per remote node to local rank g, carrying\nQ = {nq} blocks (node 0's messages shown)")
    for m in co:
        if m["rank"] // Q == 0:
            arrow(ax, at(m["rank"]), at(m["dest"]), "#1f78b4",
                  rad=-0.25 if m["dest"] // Q > 1 else 0.0)

    # (c) staggered: local ranks 0 and 1 of node 0, messages in the order of t
    ax = axes[2]
    per = len([m for m in so if m["rank"] == 0])
    nodes(ax, f"2b. staggered: (N-1)·Q = {per} messages per rank, one block\n"
              "each; message t goes to the node at distance\n1 + t mod (N-1) (local ranks 0, 1 of node 0 shown)")
    for g, color in ((0, "#e31a1c"), (1, "#33a02c")):
        msgs = staggered_messages(so, P, Q, g)
        for d in range(1, N):
            ts = [(t, l) for t, dd, l in msgs if dd == d]
            label = "t " + ",".join(str(t) for t, _ in ts) + ": blocks of " + \
                    ",".join(str(l) for _, l in ts)
            arrow(ax, (xs[0], g), (xs[d], g), color, rad=-0.25 if d > 1 else 0.0)
            ax.text(xs[0] + 0.35, Q + 0.25 + 0.3 * (2 * g + d - 1),
                    f"local rank {g} → node {d}: {label}", fontsize=7, color=color)
    ax.set_ylim(Q + 1.6, -1.0)
    fig.suptitle(f"Hierarchical TuNA traced from tuna_alltoallv, N = {N} nodes x Q = {Q} ranks: "
                 "after phase 1 local rank g holds everything its node sends to local rank g of "
                 "the other nodes", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--outdir", default=os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--tuna-trace", default=default_exe(), help="the tuna-trace executable")
    ap.add_argument("--trace-dir", help="keep the traces here (default: a temporary directory)")
    ap.add_argument("--no-run", action="store_true", help="read the traces of --trace-dir")
    a = ap.parse_args(argv)
    if a.no_run and not a.trace_dir:
        ap.error("--no-run needs --trace-dir")
    if not a.no_run and not os.path.exists(a.tuna_trace):
        sys.exit(f"{a.tuna_trace} not found: build it (cmake --build build/dev --target "
                 "tuna-trace) or pass --tuna-trace / TUNA_TRACE")
    with tempfile.TemporaryDirectory() as tmp:
        d = a.trace_dir or tmp
        os.makedirs(d, exist_ok=True)
        tr = traces(a.tuna_trace, d, run=not a.no_run)
    check_flat(tr)
    check_hier(tr)
    import matplotlib
    matplotlib.use("Agg")
    figure_hops(os.path.join(a.outdir, "tuna-digit-hops.png"), tr)
    figure_hier(os.path.join(a.outdir, "hierarchical-phases.png"), tr)
    print("wrote", os.path.join(a.outdir, "tuna-digit-hops.png"), "and hierarchical-phases.png")


if __name__ == "__main__":
    main()
