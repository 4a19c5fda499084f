"""tuna plot heatmap: for each (P, S), the radices where TuNA beats vendor, colored by speedup.

Cells: speedup of the algorithm at that radix (best over its other parameters) over the
vendor MPI_Alltoallv measured interleaved in the same run; blue cells beat vendor, red lose,
outlined cells are the best radix of their size. One panel per P (the idea of the TuNA
paper's Figure 9).
"""
import numpy as np
from matplotlib.colors import TwoSlopeNorm
from matplotlib.patches import Rectangle

from tuna_tools import results
from tuna_tools.plot import common

HELP = "radices where TuNA beats vendor, colored by speedup"
DESCRIPTION = __doc__


def add_arguments(parser):
    parser.add_argument("--algorithm", default="tuna",
                        help="algorithm with a 'radix' parameter (default: %(default)s)")
    parser.add_argument("--param", help="the parameter on the y axis (default: 'radix', or "
                                        "the algorithm's only parameter)")


def run(args):
    usable = common.with_vendor(common.usable(args, "the heatmap"), "the heatmap")
    param = results.swept_param(usable, args.algorithm, args.param)
    recs = [r for r in usable if r["algorithm"] == args.algorithm and param in r["params"]]
    if not recs:
        raise ValueError(f"no '{args.algorithm}' configurations with a "
                         f"{args.param or 'radix'} in the data")
    groups = results.group_by(recs, results.dist_label)
    for dist, grp in groups.items():
        panels = results.group_by(grp, lambda r: (results.procs(r), results.rpn_env(r)))
        fig, axes = common.subplot_grid(len(panels), width=5.2, height=4.2)
        for ax, ((P, rpn), prec) in zip(axes, panels.items()):
            sizes = sorted({results.size_bytes(r) for r in prec}, key=lambda s: (s is None, s))
            radices = sorted({r["params"][param] for r in prec})
            grid = np.full((len(radices), len(sizes)), np.nan)
            bases = {s: results.baseline_for([r for r in prec if results.size_bytes(r) == s],
                                             args.baseline) for s in sizes}
            for r in prec:
                i = radices.index(r["params"][param])
                j = sizes.index(results.size_bytes(r))
                sp = results.speedup(r, bases[results.size_bytes(r)])
                if np.isnan(grid[i, j]) or sp > grid[i, j]:
                    grid[i, j] = sp
            lo = np.nanmin(grid)
            hi = np.nanmax(grid)
            norm = TwoSlopeNorm(vcenter=1.0, vmin=min(lo, 0.99), vmax=max(hi, 1.01))
            im = ax.imshow(grid, origin="lower", aspect="auto", cmap="RdBu", norm=norm)
            for j in range(len(sizes)):
                col = grid[:, j]
                if np.all(np.isnan(col)):
                    continue
                ib = int(np.nanargmax(col))
                ax.add_patch(Rectangle((j - 0.5, ib - 0.5), 1, 1, fill=False, lw=1.6,
                                       ec="black"))
                if len(radices) * len(sizes) <= 160:
                    for i in range(len(radices)):
                        if not np.isnan(col[i]):
                            ax.text(j, i, f"{col[i]:.2f}", ha="center", va="center",
                                    fontsize=6)
            ax.set_xticks(range(len(sizes)))
            ax.set_xticklabels([common.size_label(s) for s in sizes], rotation=45, ha="right",
                               fontsize=7)
            ax.set_yticks(range(len(radices)))
            ax.set_yticklabels([str(x) for x in radices], fontsize=7)
            per_rank = prec[0].get("collective", "alltoallv") != "alltoallv"
            ax.set_xlabel("bytes per rank S" if per_rank else "maximum block size S (bytes)")
            ax.set_ylabel("radix r" if param == "radix" else param)
            wins = int(np.sum(grid > 1))
            qtext = f" ({rpn}/node)" if rpn else ""
            ax.set_title(f"P = {P}{qtext}: {wins} of {int(np.sum(~np.isnan(grid)))} cells beat vendor",
                         fontsize=9)
            fig.colorbar(im, ax=ax, label=f"speedup over vendor (×, {args.baseline})")
        fig.suptitle(f"{args.algorithm}: speedup over vendor by {param} and size, {dist}"
                     "\n" + common.machine_title(grp, args.title), fontsize=10)
        fig.tight_layout()
        common.save(fig, args.output, dist, len(groups), args.formats)
    return 0
