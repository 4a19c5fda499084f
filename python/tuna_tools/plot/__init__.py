"""``tuna plot KIND FILE.jsonl...``: figures from tuna-bench results, one module per kind."""
import importlib

KINDS = ["radix", "compare", "heatmap", "breakdown", "quality"]


def register(subparsers):
    parser = subparsers.add_parser(
        "plot", help="figures from tuna-bench JSON lines",
        description="Figures from tuna-bench --json output (PNG and SVG).")
    kinds = parser.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    for kind in KINDS:
        module = importlib.import_module(f"tuna_tools.plot.{kind}")
        sub = kinds.add_parser(kind, help=module.HELP, description=module.DESCRIPTION)
        add_common_arguments(sub, default_output=f"tuna-{kind}")
        module.add_arguments(sub)
        sub.set_defaults(func=module.run)


def _int_list(text):
    try:
        return [int(x) for x in text.split(",") if x]
    except ValueError:
        raise ValueError(f"expected a comma-separated list of integers, got '{text}'") from None


def add_common_arguments(parser, default_output):
    parser.add_argument("files", nargs="+", metavar="FILE.jsonl", help="tuna-bench --json output")
    parser.add_argument("-o", "--output", default=default_output,
                        help="output path prefix; '.png'/'.svg' (and a group suffix when there "
                             "are several groups) are appended (default: %(default)s)")
    parser.add_argument("--formats", default="png,svg",
                        help="comma-separated image formats (default: %(default)s)")
    parser.add_argument("--title", help="run title (default: the run names in the data)")
    parser.add_argument("--dist", help="only this distribution (name or full spec)")
    parser.add_argument("--procs", type=_int_list, help="only these P, e.g. 4,8")
    parser.add_argument("--rpn", type=_int_list, help="only these ranks-per-node values")
    parser.add_argument("--baseline", choices=["pooled", "paired"], default="pooled",
                        help="vendor time of speedups: 'pooled' = median of all vendor samples "
                             "of the same run, P, distribution and S (default, robust to load "
                             "bursts); 'paired' = each configuration's own interleaved vendor "
                             "median")
