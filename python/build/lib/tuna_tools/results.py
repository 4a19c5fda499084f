"""Reading tuna-bench's JSON lines (one record per configuration)."""
import gzip
import json
import os
import statistics


def load(paths):
    """Records of every file (plain or .gz), in order. Raises ValueError naming the file and
    line."""
    records = []
    for path in paths:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(f"{path}:{lineno}: not JSON: {err}") from None
                if not isinstance(rec, dict) or "algorithm" not in rec:
                    raise ValueError(f"{path}:{lineno}: not a tuna-bench record")
                records.append(rec)
    return records


def ok(records):
    """Records whose configuration ran and was verified."""
    return [r for r in records if r.get("status") == "ok"]


def procs(rec):
    return rec["machine"]["P"]


def size_bytes(rec):
    """The distribution's maximum block size S in bytes (None for count matrices from files)."""
    return rec["dist"].get("S_bytes")


def dist_label(rec):
    """The distribution; count matrices read from files are labelled by kind and scale only,
    so the files of several P (ml_4.txt, ml_8.txt, ...) make one figure."""
    d = rec["dist"]
    coll = rec.get("collective", "alltoallv")
    if coll != "alltoallv":  # allgather / allreduce: no distribution, equal contributions
        return coll
    if d.get("file") is not None:
        return f"{d['name']}:scale={d.get('scale', 1):g}"
    return d["spec"]


def size_text(rec):
    """S with its unit, or the matrix file's name."""
    d = rec["dist"]
    if d.get("S_bytes") is None:
        return os.path.basename(d.get("file") or "file")
    return None


def rpn(rec):
    return rec["machine"].get("ranks_per_node")


def rpn_env(rec):
    """Logical ranks per node set with --ranks-per-node (TUNA_RANKS_PER_NODE), 0 if not set."""
    return rec.get("ranks_per_node_env") or 0


def rpn_text(q):
    return f", {q} ranks/node (logical)" if q else ""


def median_time(rec):
    return rec["time"]["median"]


def vendor_measured(rec):
    """Whether the vendor was timed next to this configuration (not with --no-vendor, where
    `vendor`, `vendor_samples` and `speedup` are null)."""
    return rec.get("vendor") is not None


def speedup(rec, baseline=None):
    """Vendor time / algorithm median. baseline=None: the configuration's own interleaved
    vendor median (the bench's `speedup`, None when not measured); else the given vendor
    time (e.g. pooled_vendor)."""
    if baseline is None:
        return rec.get("speedup")
    return baseline / median_time(rec)


def pooled_vendor(records):
    """Median of every vendor sample of a group of configurations (same run, P, distribution
    and S): hundreds of interleaved samples, so a burst of load that hits the few vendor
    samples of one configuration does not turn into a fake speedup."""
    samples = [t for r in records for t in r.get("vendor_samples") or []]
    if not samples:
        samples = [r["vendor"]["median"] for r in records if vendor_measured(r)]
    return statistics.median(samples) if samples else None


def baseline_for(records, mode):
    """The vendor time a group's speedups are computed against ('pooled' or 'paired')."""
    return pooled_vendor(records) if mode == "pooled" else None


def filter_records(records, args):
    """Apply the common --dist / --procs / --rpn / --algorithms filters."""
    out = []
    algs = set(args.algorithms.split(",")) if getattr(args, "algorithms", None) else None
    for r in records:
        if args.dist and args.dist not in (r["dist"]["name"], r["dist"]["spec"]):
            continue
        if args.procs and procs(r) not in args.procs:
            continue
        if args.rpn and rpn(r) not in args.rpn:
            continue
        if algs and r["algorithm"] not in algs:
            continue
        out.append(r)
    return out


def group_by(records, key):
    """Ordered dict of key(record) -> records, keys sorted (None last)."""
    groups = {}
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return dict(sorted(groups.items(), key=lambda kv: _sort_key(kv[0])))


def _sort_key(k):
    if isinstance(k, tuple):
        return tuple(_sort_key(x) for x in k)
    return (k is None, "" if k is None else k if not isinstance(k, str) else k)


def vendor_median(records):
    """Median of the interleaved vendor medians of a group of configurations."""
    vals = [r["vendor"]["median"] for r in records if vendor_measured(r)]
    return statistics.median(vals) if vals else None


def best_per_algorithm(records):
    """algorithm -> (fastest record by median, all records of that algorithm)."""
    by_alg = {}
    for r in records:
        by_alg.setdefault(r["algorithm"], []).append(r)
    return {a: (min(rs, key=median_time), rs) for a, rs in by_alg.items()}


def swept_param(records, algorithm, wanted=None):
    """The parameter a per-parameter plot of `algorithm` uses: `wanted` if given, else
    'radix' (alltoallv) or the algorithm's only parameter (e.g. 'k' of allgather's recmul).
    None when the records of that algorithm have no such parameter."""
    names = {n for r in records if r["algorithm"] == algorithm for n in r["params"]}
    if wanted:
        return wanted if wanted in names else None
    if "radix" in names:
        return "radix"
    return next(iter(names)) if len(names) == 1 else None
