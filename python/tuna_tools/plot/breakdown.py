"""tuna plot breakdown: stacked phase times per algorithm (tuna_stats phases).

Each bar is an algorithm's fastest configuration (or every configuration with --all); each
segment is the median over iterations of that phase's maximum over ranks, so the stack can
exceed the measured total (shown as a black tick); time the phases do not cover is hatched. One figure per distribution and P, a panel
per size.

tuna-bench records the phases in separate calls after the timed ones (recording on, the timed
calls run with it off): the black tick is those calls' median (`recorded_median`), the one the
phases add up to; the timed median, what a user's call costs, is the grey dot. Records from
before the change (no `recorded_median`) timed with recording on: their tick is the median.
"""
from tuna_tools import results
from tuna_tools.plot import common

HELP = "stacked phase times per algorithm"
DESCRIPTION = __doc__

PHASES = ["prepare", "metadata", "data", "copy", "rearrange", "inter"]
COLORS = ["tab:gray", "tab:orange", "tab:blue", "tab:green", "tab:purple", "tab:red"]


def recorded(rec):
    """Median time of the calls the phases were recorded in."""
    t = rec.get("recorded_median")
    return t if t is not None else results.median_time(rec)


def add_arguments(parser):
    parser.add_argument("--algorithms", help="only these algorithms (comma-separated)")
    parser.add_argument("--all", action="store_true",
                        help="one bar per configuration instead of each algorithm's fastest")


def run(args):
    recs = [r for r in common.usable(args, "the breakdown") if r.get("phases")]
    if not recs:
        raise ValueError("no phase breakdown in the data (was tuna-bench run with --no-phases?)")
    groups = results.group_by(recs, lambda r: (results.dist_label(r), results.procs(r),
                                               results.rpn_env(r)))
    for (dist, P, rpn), grp in groups.items():
        panels = results.group_by(grp, results.size_bytes)
        fig, axes = common.subplot_grid(len(panels), width=6.0, height=3.8, max_cols=2)
        for ax, (size, prec) in zip(axes, panels.items()):
            if args.all:
                bars = [(r["options"], r) for r in prec]
            else:
                best = results.best_per_algorithm(prec)
                bars = [(a, best[a][0]) for a in dict.fromkeys(r["algorithm"] for r in prec)]
            xs = list(range(len(bars)))
            bottom = [0.0] * len(bars)
            for ph, color in zip(PHASES, COLORS):
                vals = [1e6 * r["phases"].get(ph, 0.0) for _, r in bars]
                if any(v > 0 for v in vals):
                    ax.bar(xs, vals, bottom=bottom, color=color, width=0.7, label=ph)
                    bottom = [b + v for b, v in zip(bottom, vals)]
            # Time the instrumented phases do not cover (e.g. algorithms without phase timers).
            rest = [max(0.0, 1e6 * recorded(r) - b) for (_, r), b in zip(bars, bottom)]
            if any(v > 0.05 * max(bottom + [1e-9]) for v in rest):
                ax.bar(xs, rest, bottom=bottom, color="none", edgecolor="tab:gray", hatch="///",
                       width=0.7, lw=0.5, label="not attributed")
            ax.scatter(xs, [1e6 * recorded(r) for _, r in bars], marker="_", s=160,
                       color="black", zorder=5, label="total (median)")
            if any(r.get("recorded_median") is not None for _, r in bars):
                ax.scatter(xs, [1e6 * results.median_time(r) for _, r in bars], marker="o",
                           s=14, color="dimgray", zorder=6, label="timed (recording off)")
            ax.set_xticks(xs)
            ax.set_xticklabels([n for n, _ in bars], rotation=70, ha="right", fontsize=7)
            ax.set_ylabel("time per call (µs)")
            ax.set_title(results.size_text(prec[0]) or f"S = {common.size_label(size)}",
                         fontsize=9)
            ax.grid(True, axis="y", alpha=0.3)
        axes[0].legend(fontsize=7, ncol=2)
        fig.suptitle(f"Phase breakdown, P = {P}, {dist}{results.rpn_text(rpn)}\n"
                     + common.machine_title(grp, args.title), fontsize=10)
        fig.tight_layout()
        tag = f"{dist}-P{P}" + (f"-q{rpn}" if rpn else "")
        common.save(fig, args.output, tag, len(groups), args.formats)
    return 0
