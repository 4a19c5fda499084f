"""Tuning tables (TUNA_TUNING; docs/tuning.md): the JSON Schema check, the key ranges
`tuna tune build` writes, and the check by libtuna's own reader (tuna-model --check-tuning).

An entry's keys are an integer n (the range [n, n]) or [lo, hi] (hi null: no upper limit);
auto runs the first entry whose ranges hold its inputs, as Open MPI's rules files do."""
import json
import os
import subprocess
import tempfile

from tuna_tools import selection

SCHEMA_PATH = os.path.join(selection.DATA_DIR, "tuning.schema.json")
RANGE_KEYS = ("P", "ranks_per_node", "size_bucket", "sparsity_bucket")


def schema():
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


def _bounds(value):
    if isinstance(value, int):
        return value, value
    return value[0], value[1]


def schema_errors(table):
    """Messages for what the schema and the key limits reject (empty: valid)."""
    import jsonschema
    validator = jsonschema.Draft202012Validator(schema())
    errors = [f"{'/'.join(str(p) for p in e.absolute_path) or 'table'}: {e.message}"
              for e in sorted(validator.iter_errors(table), key=lambda e: list(e.path))]
    if errors:
        return errors
    # What a schema cannot say: ordered ranges within the keys' limits.
    top = {"P": 1 << 30, "ranks_per_node": 1 << 30,
           "size_bucket": selection.size_bucket_count() - 1, "sparsity_bucket": 3}
    low = {"P": 1, "ranks_per_node": 0, "size_bucket": 0, "sparsity_bucket": 0}
    for i, e in enumerate(table["entries"]):
        for k in RANGE_KEYS:
            if k not in e:
                continue
            lo, hi = _bounds(e[k])
            if lo < low[k] or (hi is not None and (hi < lo or hi > top[k])):
                errors.append(f"entries/{i}/{k}: {e[k]} is not a range within "
                              f"[{low[k]}, {top[k]}] with lo <= hi")
    return errors


def library_check(path, model):
    """libtuna's reader on the file (tuna-model --check-tuning): (ok, its message)."""
    proc = subprocess.run([model, "--check-tuning", path], capture_output=True, text=True,
                          timeout=120)
    text = (proc.stdout + proc.stderr).strip()
    return proc.returncode == 0, text


def validate(table, model=None):
    """Raise ValueError unless the schema and, with a tuna-model, libtuna accept the table."""
    errors = schema_errors(table)
    if errors:
        raise ValueError("tuning table rejected by its schema: " + "; ".join(errors))
    if model:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(table, f)
        try:
            ok, text = library_check(f.name, model)
        finally:
            os.unlink(f.name)
        if not ok:
            raise ValueError(f"tuning table rejected by libtuna: {text}")


def _spans(values, first_lo, last_hi):
    """{value: [lo, hi]} for sorted distinct values: each from itself up to the next one's
    predecessor (the first from first_lo when given, the last up to last_hi)."""
    vals = sorted(set(values))
    out = {}
    for i, v in enumerate(vals):
        lo = first_lo if i == 0 and first_lo is not None else v
        hi = vals[i + 1] - 1 if i + 1 < len(vals) else last_hi
        out[v] = [lo, hi]
    return out


def spread(entries):
    """Exact keys -> ranges, the way Open MPI's rules files read: a measured P holds up to the
    next measured P (the last one upwards; below the smallest, the model decides); within a P,
    a measured size bucket holds from the previous one's successor (the smallest from 0) up to
    the next one (the largest upwards), likewise the sparsity bucket (0..3). Ranks per node
    stay exact (another node shape is another machine). The entries stay disjoint."""
    def group(keys):
        g = {}
        for e in entries:
            g.setdefault(tuple(e.get(k) for k in keys), []).append(e)
        return g
    out = [dict(e) for e in entries]
    entries = out
    for _, es in group(("collective", "ranks_per_node")).items():
        ps = _spans([e["P"] for e in es], None, None)
        for e in es:
            e["_P"] = ps[e["P"]]
    for _, es in group(("collective", "ranks_per_node", "P")).items():
        if "sparsity_bucket" in es[0]:
            zs = _spans([e["sparsity_bucket"] for e in es], 0, 3)
            for e in es:
                e["_z"] = zs[e["sparsity_bucket"]]
    for _, es in group(("collective", "ranks_per_node", "P", "sparsity_bucket")).items():
        ss = _spans([e["size_bucket"] for e in es], 0, None)
        for e in es:
            e["_s"] = ss[e["size_bucket"]]
    for e in entries:
        e["P"] = e.pop("_P")
        e["size_bucket"] = e.pop("_s")
        if "_z" in e:
            e["sparsity_bucket"] = e.pop("_z")
    return entries
