"""tuna plot compare: each algorithm at its best parameters against vendor, per (P, S).

Bars: speedup of the algorithm's fastest configuration over the vendor MPI_Alltoallv measured
interleaved in the same run (> 1: faster than vendor). Boxes: the range of speedups over the
algorithm's parameter values (box: quartiles, whiskers: min and max; outlying whiskers are
cut at the panel's edge). One figure per distribution, a panel per (P, S).
"""
from tuna_tools import results
from tuna_tools.plot import common

HELP = "best parameter of each algorithm vs vendor, as speedup bars"
DESCRIPTION = __doc__


def add_arguments(parser):
    parser.add_argument("--algorithms", help="only these algorithms (comma-separated)")
    parser.add_argument("--cols", type=int, default=3, help="panels per row (default: 3)")


def run(args):
    recs = common.with_vendor(common.usable(args, "the compare plot"), "the compare plot")
    groups = results.group_by(recs, results.dist_label)
    for dist, grp in groups.items():
        panels = results.group_by(grp, lambda r: (results.procs(r), results.rpn_env(r),
                                                  results.size_bytes(r)))
        algs = []
        for r in grp:
            if r["algorithm"] not in algs:
                algs.append(r["algorithm"])
        fig, axes = common.subplot_grid(len(panels), width=max(4.5, 0.42 * len(algs) + 1.5),
                                        height=3.6, max_cols=args.cols)
        for ax, ((P, rpn, size), prec) in zip(axes, panels.items()):
            best = results.best_per_algorithm(prec)
            base = results.baseline_for(prec, args.baseline)
            names = [a for a in algs if a in best]
            xs = list(range(len(names)))
            sp = [results.speedup(best[a][0], base) for a in names]
            colors = ["tab:green" if s >= 1 else "tab:red" for s in sp]
            ax.bar(xs, sp, color=colors, alpha=0.55, width=0.7)
            ranges = [[results.speedup(r, base) for r in best[a][1]] for a in names]
            multi = [i for i, rg in enumerate(ranges) if len(rg) > 1]
            if multi:
                ax.boxplot([ranges[i] for i in multi], positions=multi, widths=0.45,
                           whis=(0, 100), showfliers=False, manage_ticks=False,
                           medianprops={"color": "black", "lw": 0.8},
                           boxprops={"lw": 0.8}, whiskerprops={"lw": 0.8})
            ax.axhline(1.0, color="black", lw=0.8)
            # Keep the bars readable: outlying whiskers may leave the panel.
            ax.set_ylim(min(sp + [1.0]) / 2.5, max(sp + [1.0]) * 2.5)
            ax.set_yscale("log", base=2)
            ax.yaxis.set_major_formatter(common.matplotlib.ticker.FormatStrFormatter("%.2g"))
            ax.set_xticks(xs)
            ax.set_xticklabels(names, rotation=70, ha="right", fontsize=7)
            ax.set_ylabel(f"speedup over vendor (×, {args.baseline})")
            qtext = f" ({rpn}/node)" if rpn else ""
            stext = results.size_text(prec[0]) or f"S = {common.size_label(size)}"
            ax.set_title(f"P = {P}{qtext}, {stext}", fontsize=9)
            ax.grid(True, axis="y", which="both", alpha=0.3)
        fig.suptitle(f"Best parameters vs vendor (bars) and range over parameters (boxes), "
                     f"{dist}\n" + common.machine_title(grp, args.title), fontsize=10)
        fig.tight_layout()
        common.save(fig, args.output, dist, len(groups), args.formats)
    return 0
