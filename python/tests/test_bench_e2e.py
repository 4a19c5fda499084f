"""End-to-end: a 4-rank tuna-bench sweep writes JSON lines that parse and hold every
configuration asked for; every `tuna plot` command turns them into non-empty PNG files.

Run by CTest (test bench_e2e_pytest), which sets TUNA_BENCH to the built tuna-bench and
TUNA_MPIEXEC / TUNA_MPIEXEC_FLAGS to the configured launcher. Run by hand:
    TUNA_BENCH=build/tools/tuna-bench python3 -m pytest python/tests
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the tuna_tools package without installing it

from tuna_tools import cli, launch  # noqa: E402

NP = 4
SIZES = [64, 1024]
DISTS = ["uniform", "powerlaw:exponent=1.5"]
BLOCKS = [1, 4]


def bench_path():
    path = os.environ.get("TUNA_BENCH") or shutil.which("tuna-bench")
    if not path or not os.path.exists(path):
        pytest.skip("tuna-bench not found: set TUNA_BENCH (CTest does)")
    return path


def launcher():
    return launch.mpiexec(NP)


def data_dir():
    return Path(os.environ.get("TUNA_TEST_DATA", HERE.parent.parent / "tests" / "data"))


def parse_list(text):
    """algorithm -> [(param, lo, hi, default)] from `tuna-bench --list`."""
    algs = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^  (\S+)\s{2,}\S", line)
        if m and not line.startswith("    "):
            current = m.group(1)
            algs[current] = []
            continue
        m = re.match(r"^\s+(\w+) in \[(\w+), (\w+)\], default (\w+):", line)
        if m and current:
            algs[current].append(m.groups())
    return algs


def resolve(token, P):
    return P if token == "P" else math.ceil(math.sqrt(P)) if token == "sqrtP" else int(token)


def expected_values(param, P):
    name, lo, hi, default = param
    lo, hi = resolve(lo, P), resolve(hi, P)
    if name == "radix":
        vals = range(2, P + 1)
    elif name == "block":
        vals = BLOCKS
    else:
        vals = [resolve(default, P)]
    return sorted({min(max(v, lo), max(lo, hi)) for v in vals})


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    bench = bench_path()
    listing = subprocess.run([bench, "--list"], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0, listing.stderr
    table = parse_list(listing.stdout)
    assert "vendor" in table and "scattered" in table, listing.stdout
    algorithms = ["vendor", "scattered"] + (["auto"] if "auto" in table else [])
    # An algorithm with a radix for the radix plot and the heatmap (TuNA when it is there).
    radix_algs = [a for a, ps in table.items() if any(p[0] == "radix" for p in ps)]
    radix_alg = "tuna" if "tuna" in radix_algs else (radix_algs[0] if radix_algs else None)
    if radix_alg:
        algorithms.append(radix_alg)
    out = tmp_path_factory.mktemp("bench")
    jsonl = out / "sweep.jsonl"
    cmd = launcher() + [bench, "--algorithms", ",".join(algorithms), "--radix", "2:P",
                        "--block", ",".join(map(str, BLOCKS)),
                        "--sizes", ",".join(map(str, SIZES)), "--iters", "3", "--warmup", "1",
                        "--json", str(jsonl), "--run-name", "e2e"]
    for d in DISTS:
        cmd += ["--dist", d]
    cmd += ["--dist", f"matrix:{data_dir() / 'ml_4.txt'}", "--scale", "1e-4"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
    return {"jsonl": jsonl, "table": table, "algorithms": algorithms, "radix_alg": radix_alg,
            "stdout": proc.stdout, "stderr": proc.stderr, "dir": out}


def test_json_lines_hold_every_configuration(sweep):
    lines = sweep["jsonl"].read_text().splitlines()
    records = [json.loads(line) for line in lines]
    expected = set()
    for alg in sweep["algorithms"]:
        params = sweep["table"][alg]
        combos = [{}]
        for p in params:
            combos = [dict(c, **{p[0]: v}) for c in combos for v in expected_values(p, NP)]
        for dist in DISTS:
            for size in SIZES:
                for c in combos:
                    expected.add((alg, dist, size, tuple(sorted(c.items()))))
        for c in combos:
            expected.add((alg, "matrix", None, tuple(sorted(c.items()))))
    got = []
    for r in records:
        dist = r["dist"]["spec"] if r["dist"]["name"] != "matrix" else "matrix"
        got.append((r["algorithm"], dist, r["dist"]["S"], tuple(sorted(r["params"].items()))))
    assert len(got) == len(set(got)), "a configuration appears twice"
    assert set(got) == expected
    for r in records:
        assert r["status"] == "ok" and r["verified"] is True, r
        m = r["machine"]
        assert m["P"] == NP and m["hostname"] and m["mpi_library"] and m["nodes"] >= 1
        assert r["run"]["iterations"] == 3 and r["run"]["warmup"] == 1
        assert r["run"]["name"] == "e2e" and "--json" in r["run"]["command"]
        t = r["time"]
        assert 0 < t["min"] <= t["median"] <= t["p90"] <= t["max"]
        assert len(r["samples"]) == 3 and len(r["vendor_samples"]) == 3
        assert r["vendor"]["median"] > 0 and r["speedup"] > 0
        assert set(r["phases"]) == {"prepare", "metadata", "data", "copy", "rearrange", "inter"}
        assert isinstance(r["temp_bytes"], int) and r["temp_bytes"] >= 0
        # Phases come from as many separate calls as --iters, the timed ones record none.
        assert r["run"]["phase_iterations"] == 3 and r["timed_with_stats"] is False
        assert r["recorded_median"] > 0
        assert r["dist"]["seed"] == 1 and r["dist"]["unit"] == "bytes"
    matrix = [r for r in records if r["dist"]["name"] == "matrix"]
    # ml_4.txt scaled by 1e-4: 12 non-zero blocks, the largest 104841216 B -> 10484 B.
    assert matrix and all(r["dist"]["max_block_bytes"] == 10484 for r in matrix)
    assert all(abs(r["dist"]["zero_fraction"] - 0.25) < 1e-9 for r in matrix)


def test_auto_records_say_what_ran(sweep):
    """auto's records name the configuration its last call ran (a row of the table, with the
    table's parameters), the model's time and the source (1-4: the model or a table, 5-7: its
    learning, docs/tuning.md); other records have none."""
    if "auto" not in sweep["algorithms"]:
        pytest.skip("no auto in this build")
    recs = [json.loads(line) for line in sweep["jsonl"].read_text().splitlines()]
    autos = [r for r in recs if r["algorithm"] == "auto"]
    assert autos and all("auto_choice" not in r for r in recs if r["algorithm"] != "auto")
    for r in autos:
        ch = r["auto_choice"]
        name, _, params = ch["options"].partition(":")
        assert name in sweep["table"] and name != "auto", ch
        want = {p[0] for p in sweep["table"][name]}
        assert {kv.split("=")[0] for kv in params.split(",") if kv} == want, ch
        assert ch["source"] in (1, 2, 3, 4, 5, 6, 7) and ch["predicted"] >= 0, ch


def test_until_learned_ends_the_warmup_at_the_learned_winner(tmp_path):
    """--until-learned: auto's learning warm-up (90 calls without it) ends at the first call
    that ran the class's learned winner on every rank, so the record's learning calls are
    fewer than 90, at least -w, and the choice recorded is the learned one (source 6); rows
    other than auto keep their -w warm-up calls."""
    bench = bench_path()
    jsonl = tmp_path / "until.jsonl"
    proc = subprocess.run(launcher() + [bench, "-c", "alltoall", "-a", "auto,linear", "-s",
                                        "256", "-n", "3", "-w", "2", "--no-phases",
                                        "--until-learned", "-q", "--json", str(jsonl)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    recs = {r["algorithm"]: r for r in map(json.loads, jsonl.read_text().splitlines())}
    auto = recs["auto"]
    assert 2 <= auto["learning"]["calls"] < 90, auto["learning"]
    assert auto["auto_choice"]["source"] == 6, auto["auto_choice"]
    assert len(auto["samples"]) == 3 and "learning" not in recs["linear"]


def test_phases_recorded_apart_from_timed_calls(tmp_path):
    """The timed calls run with tuna_stats off (the record says so); the phase breakdown,
    temporary memory and rounds come from --phase-iters separate calls; --no-phases (or
    --phase-iters 0) makes none and records no phases; the table's footnote says which."""
    bench = bench_path()
    base = [bench, "-a", "tuna:radix=2,auto", "-s", "1024", "-n", "4", "-w", "1"]
    runs = {}
    for name, extra in (("two", ["--phase-iters", "2"]), ("default", []),
                        ("none", ["--no-phases"]), ("zero", ["--phase-iters", "0"])):
        jsonl = tmp_path / f"{name}.jsonl"
        proc = subprocess.run(launcher() + base + extra + ["-q", "--json", str(jsonl)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{name}\n{proc.stdout}\n{proc.stderr}"
        assert "timed calls run with tuna_stats off" in proc.stdout, proc.stdout
        runs[name] = ([json.loads(line) for line in jsonl.read_text().splitlines()],
                      proc.stdout)
    for name, n in (("two", 2), ("default", 4), ("none", 0), ("zero", 0)):
        recs, stdout = runs[name]
        assert len(recs) == 2, recs
        assert ("phases and temp_KiB come from separate calls" in stdout) == (n > 0), stdout
        assert f"+ {n} phase iterations each" in stdout, stdout
        for r in recs:
            assert r["status"] == "ok" and r["timed_with_stats"] is False, r
            assert r["run"]["phase_iterations"] == n and len(r["samples"]) == 4, r
            if r["algorithm"] == "auto":  # its choice is read from a call with stats on
                assert r["auto_choice"]["options"].split(":")[0] != "auto", r
            if n == 0:
                assert r["phases"] is None and r["recorded_median"] is None, r
                assert r["temp_bytes"] is None and r["rounds"] is None, r
                continue
            assert r["recorded_median"] > 0, r
            if r["algorithm"] == "tuna":  # radix 2 at P = 4: two rounds, each timed
                assert r["rounds"] == 2, r
                assert r["phases"]["metadata"] > 0 and r["phases"]["data"] > 0, r


def test_tune_model_ranks_the_measured_configurations(sweep, capsys, monkeypatch):
    """tuna tune model runs tuna-model on the sweep's statistics: one row per cell, the pick
    among the measured configurations, and what auto would run; bad input is an error."""
    if not os.environ.get("TUNA_MODEL"):
        pytest.skip("TUNA_MODEL not set (ctest sets it)")
    monkeypatch.delenv("TUNA_PROFILE", raising=False)
    assert cli.main(["tune", "model", str(sweep["jsonl"]), "--all"]) == 0
    out = capsys.readouterr().out
    assert "best/pick geometric mean" in out and "| measured (us) | model (us) |" in out
    recs = [json.loads(line) for line in sweep["jsonl"].read_text().splitlines()]
    cells = {(r["dist"]["spec"], r["dist"]["S_bytes"]) for r in recs}
    assert out.count("| `") >= len(cells)
    proc = subprocess.run([os.environ["TUNA_MODEL"]], input="4 2 2 16 8 100 0 nosuch\n",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stdout.startswith("error:") and "nosuch" in proc.stdout


def test_auto_vendor_wins_ties_only_against_its_own_algorithm(tmp_path, monkeypatch):
    """vendor is weighed just before the algorithm that models it: modelled as `spreadout` it
    wins the tie with spreadout (the library runs it without tuna's per-call work); modelled
    as rank-ordered `linear` it loses the same tie to spreadout, which comes first."""
    if not os.environ.get("TUNA_MODEL"):
        pytest.skip("TUNA_MODEL not set (ctest sets it)")
    data = data_dir()
    prof = json.loads((data / "profile_vendor_best.json").read_text())
    picks = {}
    for model in ("spreadout", "linear"):
        prof["vendor_alltoallv"] = model
        path = tmp_path / f"vendor-{model}.json"
        path.write_text(json.dumps(prof))
        monkeypatch.setenv("TUNA_PROFILE", str(path))
        proc = subprocess.run([os.environ["TUNA_MODEL"]],
                              input="8 4 2 16 8 100 0 auto\n8 4 2 16 8 100 0 vendor\n"
                                    "8 4 2 16 8 100 0 spreadout\n",
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        rows = [line.split() for line in proc.stdout.splitlines()]
        assert float(rows[1][0]) == pytest.approx(float(rows[2][0])), rows  # a tie
        picks[model] = rows[0][1]
    assert picks == {"spreadout": "vendor", "linear": "spreadout"}


def test_table_and_progress(sweep):
    assert "speedup" in sweep["stdout"] and "vendor_us" in sweep["stdout"]
    assert "scattered:block=1" in sweep["stdout"]
    assert re.search(r"\[\d+/\d+\]", sweep["stderr"]), "no progress on stderr"


@pytest.mark.parametrize("kind", ["radix", "compare", "heatmap", "breakdown", "quality"])
def test_plot_commands_write_png(sweep, kind, capsys):
    if kind in ("radix", "heatmap") and not sweep["radix_alg"]:
        pytest.skip("no algorithm with a radix parameter in the table")
    prefix = sweep["dir"] / "figs" / kind
    argv = ["plot", kind, str(sweep["jsonl"]), "-o", str(prefix), "--formats", "png,svg"]
    if kind in ("radix", "heatmap"):
        argv += ["--algorithm", sweep["radix_alg"]]
    assert cli.main(argv) == 0
    written = capsys.readouterr().out.split()
    pngs = [Path(p) for p in written if p.endswith(".png")]
    svgs = [Path(p) for p in written if p.endswith(".svg")]
    assert pngs and len(pngs) == len(svgs)
    for p in pngs:
        data = p.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 5000, p
    for s in svgs:
        assert s.stat().st_size > 1000


def test_plot_rejects_bad_input(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    assert cli.main(["plot", "compare", str(bad), "-o", str(tmp_path / "x")]) == 1
    assert "not JSON" in capsys.readouterr().err


def test_bench_rejects_bad_arguments():
    bench = bench_path()
    for args, message in ((["--sizes", "16:abc"], "abc"),
                          (["--dist", "gaussian"], "gaussian"),
                          (["--algorithms", "nosuch"], "nosuch"),
                          (["--param", "block=2:x"], "2:x"),
                          (["--iters", "0"], "--iters")):
        proc = subprocess.run(launcher() + [bench] + args, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode != 0, args
        assert message in proc.stderr, (args, proc.stderr)


def test_bench_rejects_matrix_of_wrong_size():
    bench = bench_path()
    proc = subprocess.run(launcher() + [bench, "--dist", f"matrix:{data_dir() / 'ml_8.txt'}",
                                        "-a", "vendor", "-n", "1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "ml_8.txt" in proc.stderr and "P = 4" in proc.stderr


def test_no_vendor_and_no_verify(tmp_path, capsys):
    """--no-vendor: vendor/speedup null, still verified (against the expected payload);
    --no-verify: verified false; the speedup plots refuse such data, the radix plot works."""
    bench = bench_path()
    base = [bench, "-a", "tuna,scattered", "--radix", "2,4", "-s", "64", "-n", "2", "-w", "0",
            "-d", "uniform", "-d", "sparse:zero=0.5", "-q"]
    runs = {}
    for name, extra in (("novendor", ["--no-vendor"]), ("noverify", ["--no-verify"]),
                        ("neither", ["--no-vendor", "--no-verify"]), ("both", [])):
        jsonl = tmp_path / f"{name}.jsonl"
        proc = subprocess.run(launcher() + base + extra + ["--json", str(jsonl)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{name}\n{proc.stdout}\n{proc.stderr}"
        runs[name] = [json.loads(line) for line in jsonl.read_text().splitlines()]
        assert runs[name] and all(r["status"] == "ok" for r in runs[name])
    for name, vendor, verified in (("novendor", False, True), ("noverify", True, False),
                                   ("neither", False, False), ("both", True, True)):
        for r in runs[name]:
            assert r["vendor_measured"] is vendor and r["verified"] is verified, (name, r)
            if not vendor:
                assert r["vendor"] is None and r["speedup"] is None and \
                    r["vendor_samples"] is None, r
    # The data set does not depend on the options (rows/columns generated per rank).
    facts = {name: [(r["dist"]["spec"], r["dist"]["total_bytes"], r["dist"]["max_block_bytes"],
                     r["dist"]["zero_fraction"]) for r in recs] for name, recs in runs.items()}
    assert facts["novendor"] == facts["both"] == facts["neither"] == facts["noverify"]
    novendor = tmp_path / "novendor.jsonl"
    assert cli.main(["plot", "radix", str(novendor), "-o", str(tmp_path / "r"),
                     "--algorithm", "tuna"]) == 0
    capsys.readouterr()
    assert cli.main(["plot", "compare", str(novendor), "-o", str(tmp_path / "c")]) == 1
    assert "--no-vendor" in capsys.readouterr().err


@pytest.mark.parametrize("collective", ["allgather", "allreduce"])
def test_collective_sweep(tmp_path, capsys, collective):
    """--collective allgather|allreduce: every (algorithm, k) configuration runs verified
    against PMPI (and, with --no-vendor, against the locally computed result); the JSON
    names the collective; the k plots work on it."""
    bench = bench_path()
    listing = subprocess.run([bench, "--collective", collective, "--list"], capture_output=True,
                             text=True, timeout=60).stdout
    algs = parse_list(listing)
    assert {"vendor", "ring", "kring", "recmul", "recmul-permuted", "auto"} <= set(algs)
    runs = {}
    for name, extra in (("vendor", []), ("novendor", ["--no-vendor"])):
        jsonl = tmp_path / f"{collective}-{name}.jsonl"
        proc = subprocess.run(launcher() + [bench, "-c", collective, "--param", "k=2,3,P",
                                            "-s", "8,1000", "-n", "2", "-w", "0", "-q",
                                            "--json", str(jsonl)] + extra,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"== {collective}" in proc.stdout
        runs[name] = [json.loads(line) for line in jsonl.read_text().splitlines()]
    for recs in runs.values():
        seen = {(r["algorithm"], r["params"].get("k"), r["dist"]["S"]) for r in recs}
        for alg, params in algs.items():
            ks = {2, 3, NP} if params else {None}
            for k in ks:
                for s in (8, 1000):
                    assert (alg, k, s) in seen, (alg, k, s)
        for r in recs:
            assert r["collective"] == collective and r["status"] == "ok" and r["verified"], r
            assert r["dist"]["name"] == "fixed" and r["dist"]["S_bytes"] in (8, 1000)
            assert r["rounds"] >= 0 and r["time"]["median"] > 0
    assert cli.main(["plot", "radix", str(tmp_path / f"{collective}-vendor.jsonl"), "-o",
                     str(tmp_path / "k"), "--algorithm", "recmul", "--formats", "png"]) == 0
    assert cli.main(["plot", "compare", str(tmp_path / f"{collective}-vendor.jsonl"), "-o",
                     str(tmp_path / "c"), "--formats", "png"]) == 0
    out = capsys.readouterr().out
    assert "k.png" in out and "c.png" in out


def test_alltoall_sweep(tmp_path):
    """--collective alltoall: every row runs verified against PMPI_Alltoall (and, with
    --no-vendor, against the locally built result), in place of the alltoallv distributions a
    fixed block per peer; the JSON names the collective."""
    bench = bench_path()
    listing = subprocess.run([bench, "--collective", "alltoall", "--list"], capture_output=True,
                             text=True, timeout=60).stdout
    algs = parse_list(listing)
    assert {"vendor", "pairwise", "bruck", "tuna", "auto"} <= set(algs)
    assert "twophase-bruck" not in algs
    for extra in ([], ["--no-vendor"]):
        jsonl = tmp_path / f"alltoall{len(extra)}.jsonl"
        proc = subprocess.run(launcher() + [bench, "-c", "alltoall", "-s", "8,1000", "-n", "2",
                                            "-w", "0", "-q", "--json", str(jsonl)] + extra,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "== alltoall" in proc.stdout
        recs = [json.loads(line) for line in jsonl.read_text().splitlines()]
        assert {r["algorithm"] for r in recs} == set(algs)
        for r in recs:
            assert r["collective"] == "alltoall" and r["status"] == "ok" and r["verified"], r
            assert r["dist"]["name"] == "fixed" and r["dist"]["S_bytes"] in (8, 1000)


def test_collective_rejects_bad_arguments():
    bench = bench_path()
    for args, message in ((["-c", "reduce"], "reduce"),
                          (["-c", "alltoall", "-d", "normal"], "--dist"),
                          (["-c", "allreduce", "-t", "byte"], "--type"),
                          (["-c", "allgather", "-d", "normal"], "--dist"),
                          (["-c", "allgather", "-a", "tuna"], "tuna")):
        proc = subprocess.run(launcher() + [bench] + args, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode != 0, args
        assert message in proc.stderr, (args, proc.stderr)


@pytest.mark.parametrize("collective,algorithms", [
    ("alltoallv", "vendor,linear,tuna:radix=2,coalesced"),
    ("alltoall", "vendor,bruck-radix:radix=2"),
    ("allgather", "vendor,ring"),
    ("allreduce", "vendor,ring")])
def test_nonblocking_overlap(tmp_path, collective, algorithms):
    """--nonblocking: each configuration's nonblocking form, verified, timed alone (pure) and
    with computation as long as its pure time in between; the record says what ran (the row
    asked for, not the library's call a start on a communicator tuna has not set up runs)."""
    bench = bench_path()
    jsonl = tmp_path / "nb.jsonl"
    proc = subprocess.run(launcher() + [bench, "--collective", collective, "-a", algorithms,
                                        "-s", "256", "-n", "3", "-w", "1", "--nonblocking",
                                        "--poll", "0.1", "-q", "--json", str(jsonl)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    assert "overlap" in proc.stdout and "tested every 0.1" in proc.stdout, proc.stdout
    recs = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [r["options"].split(":")[0] for r in recs] == \
        [a.split(":")[0] for a in algorithms.split(",")], recs
    for r in recs:
        assert r["status"] == "ok" and r["verified"] is True, r
        nb = r["nonblocking"]
        assert nb["poll"] == pytest.approx(0.1) and nb["progress"] == "poll", nb
        assert nb["compute"] == pytest.approx(r["time"]["median"]), (nb, r["time"])
        assert len(nb["total_samples"]) == 3 and len(r["samples"]) == 3, r
        assert nb["total"]["median"] > 0 and 0 <= nb["overlap_percent"] <= 100, nb
        assert nb["ran"].split(":")[0] == r["options"].split(":")[0], (nb["ran"], r["options"])


def test_nonblocking_rejects_bad_arguments():
    bench = bench_path()
    for args, message in ((["--nonblocking", "--poll", "2"], "--poll"),
                          (["--nonblocking", "--plan", "estimate"], "--plan")):
        proc = subprocess.run(launcher() + [bench] + args, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode != 0, args
        assert message in proc.stderr, (args, proc.stderr)
