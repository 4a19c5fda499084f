"""sim/headline_table.py on hand-made records: rows, patterns and ratios (no SimGrid)."""
import importlib.util
import json
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
_spec = importlib.util.spec_from_file_location(
    "headline_table", os.path.join(ROOT, "sim", "headline_table.py"))
ht = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ht)


def record(algorithm, options, seconds, spec, S, P=256, selector="default", bound=None):
    name = spec.split(":")[0]
    return {"collective": "alltoallv", "algorithm": algorithm, "options": options,
            "status": "ok", "time": {"median": seconds},
            "dist": {"name": name, "spec": spec, "S_bytes": S},
            "machine": {"P": P},
            "sim": {"platform": "fugaku", "selector": selector, "wall_s": 1.0,
                    "max_rss_kib": 1048576, "bound": {"bound_s": bound} if bound else None}}


def write(tmp_path, recs):
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return str(path)


def test_patterns_rows_and_ratios(tmp_path, capsys):
    ml = "matrix:file=/x/tests/data/ml_256.txt,scale=0.1"
    recs = [
        record("vendor", "vendor", 8e-6, "uniform", 16, selector="mpich", bound=1e-6),
        record("tuna", "tuna:radix=4,block=256", 2e-6, "uniform", 16, bound=1e-6),
        record("coalesced", "coalesced:radix=4,block=8", 4e-6, "uniform", 16, bound=1e-6),
        record("vendor", "vendor", 30e-6, ml, None, selector="mpich"),
        record("vendor", "vendor", 20e-6, ml, None, selector="ompi"),
        record("tuna", "tuna:radix=4,block=256", 40e-6, ml, None),
        record("coalesced", "coalesced:radix=4,block=8", 10e-6, ml, None),
    ]
    rows = ht.summary(ht.load([write(tmp_path, recs)]))
    # The matrix row (no S) sorts first.
    mat, uni = rows
    assert uni["best"] == (2e-6, "tuna:radix=4,block=256")
    assert abs(uni["mpich"] / uni["best"][0] - 4.0) < 1e-12
    assert uni["best_bound"] == 1e-6
    assert mat["best"] == (10e-6, "coalesced:radix=4,block=8")
    assert mat["best_bound"] is None          # no bound for file patterns
    assert ht.pattern(mat) == "ml_256 x 0.1"
    assert ht.pattern(uni) == "uniform"
    ht.table(rows)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| platform | pattern | S | P |")
    assert out[3].split(" | ")[:4] == ["| fugaku", "uniform", "16", "256"]
    cells = out[2].split(" | ")
    assert cells[1:4] == ["ml_256 x 0.1", "-", "256"]
    assert "3.00x" in cells and "2.00x" in cells   # over mpich, over ompi
    assert out[2].endswith("| - | 1 s, 1.0 GiB |")


def test_uniform_only_table_has_no_pattern_column(tmp_path, capsys):
    recs = [record("vendor", "vendor", 8e-6, "uniform", 16, selector="mpich", bound=1e-6),
            record("tuna", "tuna:radix=2,block=256", 2e-6, "uniform", 16, bound=1e-6)]
    ht.table(ht.summary(ht.load([write(tmp_path, recs)])))
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| platform | S | P |")
    assert out[2].startswith("| fugaku | 16 | 256 | 8.0 | - | 2.0 (tuna r=2) | - |")
