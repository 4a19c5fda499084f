"""tuna plot quality: auto's choice against the best swept configuration and vendor, per cell.

One bar group per cell (machine, P, distribution, size) of `tuna tune quality`: the time of
auto's choice, of the best configuration of the sweep (tuna's own algorithms) and of the MPI
library's MPI_Alltoallv, each divided by the fastest of the three, so 1 is the best available
and auto's bar shows what its choice cost.
"""
from tuna_tools import tune
from tuna_tools.plot import common

HELP = "auto vs the best swept configuration vs vendor, per cell"
DESCRIPTION = __doc__


def add_arguments(parser):
    parser.add_argument("--normalize", action="store_true",
                        help="divide each time by the vendor time measured interleaved with it "
                             "(noisy shared machines; see tuna tune quality)")


def run(args):
    recs = common.usable(args, "the quality figure")
    rows = tune.quality(recs, args.normalize)
    if not rows:
        raise ValueError("no cell holds both an auto record and other configurations")
    rows.sort(key=lambda r: (r[1][4], r[0][0], r[1][0], r[1][1] or 0))  # machine, P, dist, S
    fig, axes = common.subplot_grid(1, width=max(6.0, 0.55 * len(rows) + 2), height=4.2)
    ax = axes[0]
    labels, series = [], {"auto's choice": [], "best swept": [], "vendor": []}
    for key, cell, a, b, _, v in rows:
        ref = min(x for x in (a, b, v) if x is not None)
        labels.append(f"{cell[4]} P={key[0]}\n{cell[0].split(':')[0]} "
                      f"{common.size_label(cell[1])}")
        series["auto's choice"].append(a / ref)
        series["best swept"].append(b / ref)
        series["vendor"].append(v / ref if v is not None else 0.0)
    width = 0.27
    for i, (name, vals) in enumerate(series.items()):
        xs = [k + (i - 1) * width for k in range(len(rows))]
        ax.bar(xs, vals, width=width, label=name,
               color=("tab:blue", "tab:green", "tab:gray")[i])
    ax.axhline(1.0, color="black", lw=0.6)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=70, ha="right", fontsize=7)
    ax.set_ylabel("time / fastest of the three")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle("auto's selection per cell\n" + common.machine_title(recs, args.title),
                 fontsize=10)
    fig.tight_layout()
    common.save(fig, args.output, "", 1, args.formats)
    return 0
