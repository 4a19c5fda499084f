"""`tuna plot` on synthetic records (no MPI needed): best-parameter selection, grouping,
file naming, filters and errors."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tuna_tools import cli, results  # noqa: E402


def record(alg, params, P, S, median, vendor, dist="uniform", q=0, phases=None):
    return {
        "algorithm": alg, "params": params, "status": "ok", "verified": True,
        "options": alg + (":" + ",".join(f"{k}={v}" for k, v in params.items()) if params else ""),
        "dist": {"name": dist.split(":")[0], "spec": dist, "S": S, "S_bytes": S},
        "machine": {"hostname": "h", "mpi_library": "MPI x", "P": P, "nodes": 1,
                    "ranks_per_node": q or P},
        "ranks_per_node_env": q,
        "run": {"name": "synthetic"},
        "time": {"median": median}, "vendor": {"median": vendor},
        "speedup": vendor / median,
        "phases": phases or {"prepare": median / 4, "data": median / 2},
    }


def synthetic():
    recs = []
    for P in (4, 8):
        for S in (16, 1024):
            recs.append(record("vendor", {}, P, S, 1e-5, 1e-5))
            for r in range(2, P + 1):
                # TuNA beats vendor at radix 2 for small S and at radix P for large S.
                best = 2 if S == 16 else P
                t = 0.8e-5 if r == best else 1.5e-5 + r * 1e-7
                recs.append(record("tuna", {"radix": r, "block": 1}, P, S, t, 1e-5))
    return recs


@pytest.fixture()
def jsonl(tmp_path):
    path = tmp_path / "syn.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in synthetic()))
    return path


def test_best_per_algorithm():
    recs = [r for r in synthetic() if r["machine"]["P"] == 8 and r["dist"]["S"] == 1024]
    best = results.best_per_algorithm(recs)
    assert best["tuna"][0]["params"]["radix"] == 8
    assert len(best["tuna"][1]) == 7 and best["vendor"][0]["algorithm"] == "vendor"


@pytest.mark.parametrize("kind,count", [("radix", 2), ("compare", 1), ("heatmap", 1),
                                        ("breakdown", 2)])
def test_figures_per_group(jsonl, tmp_path, capsys, kind, count):
    prefix = tmp_path / "out" / kind
    assert cli.main(["plot", kind, str(jsonl), "-o", str(prefix), "--formats", "png"]) == 0
    written = capsys.readouterr().out.split()
    assert len(written) == count, written
    for p in written:
        assert Path(p).read_bytes().startswith(b"\x89PNG")
    if count > 1:
        assert any("P4" in p for p in written) and any("P8" in p for p in written)


def test_filters(jsonl, tmp_path, capsys):
    prefix = tmp_path / "radix"
    assert cli.main(["plot", "radix", str(jsonl), "-o", str(prefix), "--procs", "8",
                     "--formats", "png"]) == 0
    assert capsys.readouterr().out.split() == [f"{prefix}.png"]
    assert cli.main(["plot", "radix", str(jsonl), "-o", str(prefix), "--dist", "normal"]) == 1
    assert "no configurations left" in capsys.readouterr().err


def test_no_radix_algorithm(tmp_path, capsys):
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps(record("vendor", {}, 4, 16, 1e-5, 1e-5)) + "\n")
    assert cli.main(["plot", "heatmap", str(path), "-o", str(tmp_path / "h")]) == 1
    assert "no 'tuna' configurations" in capsys.readouterr().err


def test_missing_file(tmp_path, capsys):
    assert cli.main(["plot", "compare", str(tmp_path / "nope.jsonl")]) == 1
    assert "nope.jsonl" in capsys.readouterr().err


def test_pooled_vendor_resists_one_noisy_configuration():
    recs = [record("a", {"x": i}, 4, 16, 1e-5, 1e-5) for i in range(5)]
    for r in recs:
        r["vendor_samples"] = [1e-5] * 9
    # One configuration's vendor samples hit by load: its paired speedup is inflated.
    recs[0]["vendor_samples"] = [9e-5] * 9
    recs[0]["vendor"]["median"] = 9e-5
    recs[0]["speedup"] = 9.0
    base = results.pooled_vendor(recs)
    assert base == pytest.approx(1e-5)
    assert results.speedup(recs[0], base) == pytest.approx(1.0)
    assert results.speedup(recs[0]) == pytest.approx(9.0)
