"""Shared figure helpers: Agg backend, titles naming the machine and the run, saving."""
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend choice)

from tuna_tools import results  # noqa: E402


def machine_title(records, title=None):
    """'host, MPI library, P=..; run NAME' for a group of records."""
    hosts = sorted({r["machine"]["hostname"] for r in records})
    libs = sorted({r["machine"]["mpi_library"] for r in records})
    ps = sorted({results.procs(r) for r in records})
    runs = sorted({r["run"]["name"] for r in records})
    nodes = sorted({r["machine"]["nodes"] for r in records})
    machine = f"{', '.join(hosts)} ({', '.join(libs)}, {'/'.join(map(str, nodes))} node(s))"
    run = title if title else "run " + ", ".join(runs[:3]) + (" ..." if len(runs) > 3 else "")
    return f"{machine}, P = {', '.join(map(str, ps))}\n{run}"


def size_label(nbytes):
    if nbytes is None:
        return "file"
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= mult and nbytes % mult == 0:
            return f"{nbytes // mult} {unit}"
    return f"{nbytes} B"


def slug(text):
    return re.sub(r"[^A-Za-z0-9.]+", "-", str(text)).strip("-")


def output_paths(prefix, tag, ngroups, formats):
    base = prefix if ngroups <= 1 or not tag else f"{prefix}-{slug(tag)}"
    return [f"{base}.{fmt}" for fmt in formats.split(",") if fmt]


def save(fig, prefix, tag, ngroups, formats):
    """Write the figure in every format; returns the paths."""
    paths = output_paths(prefix, tag, ngroups, formats)
    for path in paths:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        fig.savefig(path, dpi=120, bbox_inches="tight")
        print(path)
    plt.close(fig)
    return paths


def usable(args, what):
    """Loaded, verified and filtered records; raises ValueError when nothing is left."""
    recs = results.load(args.files)
    good = results.ok(recs)
    if not good:
        raise ValueError(f"no successful configurations in {', '.join(args.files)}")
    good = results.filter_records(good, args)
    if not good:
        raise ValueError(f"no configurations left for {what} after the filters")
    return good


def with_vendor(recs, what):
    """The records whose vendor time was measured (speedup plots); ValueError when none."""
    good = [r for r in recs if results.vendor_measured(r)]
    if not good:
        raise ValueError(f"{what} needs vendor timings, and this data has none "
                         "(tuna-bench --no-vendor)")
    return good


def subplot_grid(n, width=5.0, height=3.6, max_cols=3):
    cols = min(n, max_cols)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows + 0.8),
                             squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]
