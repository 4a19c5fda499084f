"""tuna plot radix: time vs radix for each message size (one figure per distribution and P).

The TuNA paper's three trends show here: small sizes prefer a small radix, medium sizes a
U-shape near sqrt(P), large sizes a radix near P. Where the algorithm has other parameters
(e.g. block), each point is the best over them.
"""
import math

from tuna_tools import results
from tuna_tools.plot import common

HELP = "time vs radix per message size"
DESCRIPTION = __doc__


def add_arguments(parser):
    parser.add_argument("--algorithm", default="tuna",
                        help="algorithm with a 'radix' parameter (default: %(default)s)")
    parser.add_argument("--param", help="the parameter on the x axis (default: 'radix', or "
                                        "the algorithm's only parameter, e.g. 'k' of "
                                        "allgather/allreduce recmul)")


def run(args):
    usable = common.usable(args, "the radix plot")
    param = results.swept_param(usable, args.algorithm, args.param)
    recs = [r for r in usable if r["algorithm"] == args.algorithm and param in r["params"]]
    if not recs:
        raise ValueError(f"no '{args.algorithm}' configurations with a "
                         f"{args.param or 'radix'} in the data")
    groups = results.group_by(recs, lambda r: (results.dist_label(r), results.procs(r),
                                               results.rpn_env(r)))
    for (dist, P, rpn), grp in groups.items():
        fig, ax = common.plt.subplots(figsize=(7.5, 4.8))
        by_size = results.group_by(grp, results.size_bytes)
        cmap = common.plt.get_cmap("viridis")
        for k, (size, srecs) in enumerate(by_size.items()):
            best = {}
            for r in srecs:
                rad = r["params"][param]
                if rad not in best or results.median_time(r) < results.median_time(best[rad]):
                    best[rad] = r
            radices = sorted(best)
            times = [1e6 * results.median_time(best[x]) for x in radices]
            color = cmap(k / max(1, len(by_size) - 1))
            ax.plot(radices, times, marker="o", ms=3.5, color=color,
                    label=f"S = {common.size_label(size)}")
            i = min(range(len(times)), key=times.__getitem__)
            ax.plot([radices[i]], [times[i]], marker="*", ms=11, color=color, mec="black",
                    mew=0.6, zorder=5)
            vend = results.pooled_vendor(srecs)
            if vend is not None:  # None: --no-vendor
                ax.axhline(1e6 * vend, color=color, ls=":", lw=1)
        ax.axvline(math.ceil(math.sqrt(P)), color="grey", ls="--", lw=0.8)
        ax.text(math.ceil(math.sqrt(P)), ax.get_ylim()[1], " sqrt(P)", va="top", fontsize=8,
                color="grey")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("radix r" if param == "radix" else param)
        ax.set_ylabel("median time per call (µs)")
        ax.xaxis.set_major_formatter(common.matplotlib.ticker.ScalarFormatter())
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, ncol=2, title=f"★ best {param}, dotted: vendor", title_fontsize=8)
        ax.set_title(f"{args.algorithm}: time vs {param}, {dist}{results.rpn_text(rpn)}\n"
                     + common.machine_title(grp, args.title), fontsize=9)
        tag = f"{dist}-P{P}" + (f"-q{rpn}" if rpn else "")
        common.save(fig, args.output, tag, len(groups), args.formats)
    return 0
