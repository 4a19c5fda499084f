"""`tuna tune` on synthetic records (no MPI needed): buckets as libtuna computes them, the
table's best configuration per key, selection quality, platform profiles."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tuna_tools import cli, tune, tuning_table  # noqa: E402


def record(options, P, S, median, vendor=1e-5, dist="uniform", zero=0.0, q=0):
    alg = options.split(":")[0]
    return {
        "algorithm": alg, "options": options, "status": "ok", "verified": True,
        "dist": {"name": dist, "spec": dist, "S_bytes": S, "seed": 1, "max_block_bytes": S,
                 "zero_fraction": zero},
        "machine": {"P": P, "ranks_per_node": q or P},
        "time": {"median": median}, "vendor": {"median": vendor},
    }


def test_buckets_match_the_library_rule():
    # tuna_select_size_bucket: ceil(log2 B), 0 for B <= 1 (tests/test_auto.c checks the C side)
    assert [tune.size_bucket(b) for b in (0, 1, 2, 3, 1024, 1025)] == [0, 0, 1, 2, 10, 11]
    assert [tune.sparsity_bucket(z) for z in (0, 0.24, 0.25, 0.99, 1.0)] == [0, 0, 1, 3, 3]


def test_bucket_data_gives_the_closed_forms():
    """selection.json's edges are ceil(log2 B) capped at 62 and floor(4 z) clamped to [0, 3]
    (the formulas the library used before the data file), over many values."""
    import random
    rng = random.Random(5)
    sizes = [0, 1, 2, 3, 2 ** 62, 2 ** 62 + 1, 2 ** 70] + \
        [rng.randrange(1, 2 ** rng.randrange(1, 64)) for _ in range(5000)]
    for b in sizes:
        want = 0 if b <= 1 else min(62, (b - 1).bit_length())
        assert tune.size_bucket(b) == want, b
    for z in [rng.random() for _ in range(5000)] + [0, 0.25, 0.5, 0.75, 1.0]:
        assert tune.sparsity_bucket(z) == max(0, min(3, math.floor(4.0 * z))), z


def test_table_picks_the_best_common_configuration(tmp_path):
    recs = []
    for dist in ("uniform", "powerlaw"):
        recs.append(record("spreadout", 8, 1024, 2e-5, dist=dist))
        recs.append(record("tuna:radix=2,block=1", 8, 1024, 1e-5, dist=dist))
        recs.append(record("auto", 8, 1024, 1.1e-5, dist=dist))
    # only in one cell: not a candidate for the key
    recs.append(record("xor", 8, 1024, 0.5e-5, dist="uniform"))
    # another key (size bucket 4)
    recs.append(record("spreadout", 8, 16, 1e-6))
    recs.append(record("tuna:radix=2,block=1", 8, 16, 2e-6))
    path = tmp_path / "sweep.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "table.json"
    assert cli.main(["tune", "build", str(path), "-o", str(out), "--exact"]) == 0
    table = json.loads(out.read_text())
    assert table["tuna_tuning"] == 1 and table["collective"] == "alltoallv"
    got = {(e["P"], e["ranks_per_node"], e["size_bucket"], e["sparsity_bucket"]): e["options"]
           for e in table["entries"]}
    assert got == {(8, 8, 10, 0): "tuna:radix=2,block=1", (8, 8, 4, 0): "spreadout"}


def test_table_ranges_cover_the_gaps(tmp_path):
    """By default a measured P holds up to the next one and a size bucket from the smaller
    one's successor (the smallest from 0) up to the next: P = 63 and 100 find entries,
    P = 7 (below the smallest measured) does not; allgather entries come with them."""
    recs = [record("spreadout", 8, 1024, 1e-5, q=4), record("xor", 8, 16, 1e-6, q=4),
            record("tuna:radix=2,block=1", 64, 1024, 1e-5, q=4)]
    ag = record("kring:k=4", 8, 1024, 1e-5, q=4)
    ag["collective"] = "allgather"
    recs.append(ag)
    path = tmp_path / "sweep.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "table.json"
    assert cli.main(["tune", "build", str(path), "-o", str(out)]) == 0
    table = json.loads(out.read_text())
    assert table["tuna_tuning"] == 2
    got = {(e["collective"], e["options"]): (e["P"], e["size_bucket"], e.get("sparsity_bucket"))
           for e in table["entries"]}
    assert got == {("alltoallv", "xor"): ([8, 63], [0, 9], [0, 3]),
                   ("alltoallv", "spreadout"): ([8, 63], [10, None], [0, 3]),
                   ("alltoallv", "tuna:radix=2,block=1"): ([64, None], [0, None], [0, 3]),
                   ("allgather", "kring:k=4"): ([8, None], [0, None], None)}
    assert tuning_table.schema_errors(table) == []


def test_schema_rejects_bad_tables():
    good = {"tuna_tuning": 2, "entries": [
        {"P": [60, 64], "ranks_per_node": 32, "size_bucket": [0, None], "sparsity_bucket": 0,
         "options": "xor"},
        {"collective": "allreduce", "P": 64, "ranks_per_node": 32, "size_bucket": 10,
         "options": "recmul:k=4"},
        {"collective": "alltoall", "P": 64, "ranks_per_node": 32, "size_bucket": 3,
         "options": "bruck-radix:radix=4"}]}  # dense: no sparsity bucket
    assert tuning_table.schema_errors(good) == []
    alltoall_file = {"tuna_tuning": 2, "collective": "alltoall", "entries": [
        {"P": 8, "ranks_per_node": 8, "size_bucket": 3, "options": "bruck"}]}
    assert tuning_table.schema_errors(alltoall_file) == []
    bad = [
        {"tuna_tuning": 3, "entries": []},                       # unknown version
        {"tuna_tuning": 2, "entries": [], "colour": 1},          # unknown key
        {"tuna_tuning": 1, "entries": [dict(good["entries"][1])]},  # v1: alltoallv only
        {"tuna_tuning": 2, "entries": [{"P": 4, "ranks_per_node": 4, "size_bucket": 3,
                                        "options": "xor"}]},     # alltoallv needs sparsity
        {"tuna_tuning": 2, "entries": [dict(good["entries"][0], P=[64, 60])]},  # lo > hi
        {"tuna_tuning": 2, "entries": [dict(good["entries"][0], size_bucket=63)]},  # no bucket
        {"tuna_tuning": 2, "entries": [dict(good["entries"][0], options="auto")]},
    ]
    for table in bad:
        assert tuning_table.schema_errors(table), table


@pytest.mark.skipif(not os.environ.get("TUNA_MODEL"), reason="needs tuna-model (TUNA_MODEL)")
def test_check_runs_the_library_reader(tmp_path, capsys):
    """`tuna tune check`: a table the schema passes but libtuna rejects (an entry the one
    before it always matches first; options of another collective) fails."""
    shadowed = {"tuna_tuning": 2, "entries": [
        {"P": [1, None], "ranks_per_node": [0, None], "size_bucket": [0, None],
         "sparsity_bucket": [0, 3], "options": "xor"},
        {"P": 64, "ranks_per_node": 32, "size_bucket": 10, "sparsity_bucket": 0,
         "options": "linear"}]}
    wrong = {"tuna_tuning": 2, "entries": [
        {"collective": "allgather", "P": 4, "ranks_per_node": 4, "size_bucket": 10,
         "options": "tuna:radix=2"}]}
    files = []
    for name, table in (("shadowed", shadowed), ("wrong", wrong)):
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(table))
    data = Path(__file__).resolve().parents[2] / "tests" / "data" / "tuning_auto_p4.json"
    assert cli.main(["tune", "check", str(data)]) == 0
    assert "1 allgather" in capsys.readouterr().out
    for f in files:
        assert cli.main(["tune", "check", str(f)]) == 1
    out = capsys.readouterr().out
    assert "never used" in out and "allgather" in out


def test_quality_rows(tmp_path, capsys):
    recs = [record("spreadout", 4, 256, 2e-5), record("auto", 4, 256, 2.5e-5, vendor=5e-5)]
    recs[1]["auto_choice"] = {"options": "tuna:radix=3,block=2", "predicted": 1e-5, "source": 1}
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert cli.main(["tune", "quality", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0.800" in out and "2.000" in out and "`tuna:radix=3,block=2`" in out
    assert cli.main(["tune", "quality", str(path), "--min-quality", "0.9"]) == 1


def test_quality_takes_vendor_from_a_vendor_record(tmp_path, capsys):
    # --no-vendor runs (tuna sim --scale): vendor is a record of its own, not interleaved
    recs = [record("spreadout", 4, 256, 2e-5), record("auto", 4, 256, 2.5e-5),
            record("vendor", 4, 256, 4e-5)]
    for r in recs:
        r["vendor"] = None
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    rows = tune.quality([json.loads(line) for line in path.read_text().splitlines()])
    assert [(a, b, v) for _, _, a, b, _, v in rows] == [(2.5e-5, 2e-5, 4e-5)]
    recs.pop()  # no vendor at all: the column is '-'
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert cli.main(["tune", "quality", str(path)]) == 0
    assert "| - |" in capsys.readouterr().out


def test_fit_agreement_recovers_both_terms():
    # t(P) = a ceil(log2 P) + b (P - 1), exactly, from two or three points
    def t(p, a, b):
        return a * math.ceil(math.log2(p)) + b * (p - 1)
    for a, b in ((2e-6, 0.0), (0.0, 4e-7), (1e-6, 1e-7)):
        got = tune.fit_agreement([(p, t(p, a, b)) for p in (64, 256, 1024)])
        assert got == pytest.approx((a, b), abs=1e-12)
    # one point: the better single term, never a negative coefficient
    got = tune.fit_agreement([(64, 12e-6)])
    assert min(got) >= 0 and t(64, *got) == pytest.approx(12e-6)
    with pytest.raises(ValueError):
        tune.fit_agreement([(1, 1e-6)])


def test_platform_profile_is_a_valid_profile():
    plat = {"name": "x", "ranks_per_node": 4, "topology": "torus", "dims": [4, 4, 4],
            "os": 1e-7, "or": 2e-7, "intra_lat": 3e-7, "intra_bw": 4e10, "link_lat": 1e-7,
            "nic_bw": 1e10, "nic_count": 2, "link_bw": 5e9}
    p = tune.platform_profile(plat)
    assert p["tuna_profile"] == 1 and p["nics_per_node"] == 2
    assert p["intra"]["bandwidth"] == pytest.approx(4e10)  # the loopback, per message
    assert p["inter"]["overhead"] == pytest.approx(3e-7)
    # tuna sim run --scale (rendezvous sends): SMPI charges the send overhead only
    r = tune.platform_profile(plat, rendezvous=True)
    assert r["inter"]["overhead"] == pytest.approx(1e-7) == r["intra"]["overhead"]
    assert set(p["intra"]) == {"latency", "overhead", "gap", "bandwidth"}
    # a torus: the model's network term (SimGrid routes it link by link)
    assert p["network"] == {"topology": "torus", "dims": [4, 4, 4], "link_bandwidth": 5e9}
    # other topologies: full bisection, no network key
    assert "network" not in tune.platform_profile(dict(plat, topology="fat-tree"))


def test_model_input_line():
    rec = {"machine": {"P": 8, "nodes": 2, "ranks_per_node": 4},
           "dist": {"max_block_bytes": 16.0, "mean_block_bytes": 8.5, "max_rank_bytes": 90.0,
                    "zero_fraction": 0.25}}
    assert tune.model_input(rec, "tuna:radix=2") == "8 4 2 16.0 8.5 90.0 0.25 tuna:radix=2"
    # unequal nodes (P != nodes x ranks per node): Q = 0, as libtuna's context says
    rec["machine"]["P"] = 7
    assert tune.model_input(rec, "auto").startswith("7 0 2 ")


def _gen_platform():
    import importlib.util
    path = Path(__file__).resolve().parents[2] / "sim" / "gen_platform.py"
    spec = importlib.util.spec_from_file_location("gen_platform", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_platform_from_profile_round_trips():
    """sim/gen_platform.py --from-profile is the inverse of `tuna tune profile`: the platform
    made from a profile gives the same profile back (torus and crossbar), and what SMPI cannot
    express is said, not silently dropped."""
    gp = _gen_platform()
    levels = {"intra": {"latency": 3e-7, "overhead": 4e-7, "gap": 0.0, "bandwidth": 3e9},
              "inter": {"latency": 1.2e-6, "overhead": 4e-7, "gap": 0.0, "bandwidth": 6e9},
              "eager_limit": 65536}
    torus = dict(levels, tuna_profile=1, name="t", nics_per_node=4,
                 network={"topology": "torus", "dims": [4, 4, 2], "link_bandwidth": 5e9})
    dragonfly = dict(levels, tuna_profile=1, name="d", nics_per_node=2,
                     network={"topology": "dragonfly", "groups": [4, 2], "chassis": [2, 2],
                              "routers": [4, 1], "nodes_per_router": 4,
                              "link_bandwidth": 12e9})
    for prof, kw in ((torus, {}), (dragonfly, {}),
                     (dict(levels, tuna_profile=1, name="c", nics_per_node=2),
                      {"topology": "crossbar", "nodes": 16})):
        plat, warn = gp.from_profile(prof, 8, **kw)
        assert warn == []
        back = tune.platform_profile(dict(plat, name="x"))
        for level in ("intra", "inter"):
            for key in ("latency", "overhead", "gap", "bandwidth"):
                assert back[level][key] == pytest.approx(prof[level][key]), (level, key)
        assert back["nics_per_node"] == prof["nics_per_node"]
        assert back["eager_limit"] == prof["eager_limit"]
        assert back.get("network") == prof.get("network")
        assert "<cluster" in gp.xml_text("x", plat)
    plat, _ = gp.from_profile(dragonfly, 8)
    assert 'topology="DRAGONFLY" topo_parameters="4,2;2,2;4,1;4"' in gp.xml_text("x", plat)
    _, warn = gp.from_profile(dict(dragonfly, inter=dict(levels["inter"], bandwidth=5e9)), 8)
    assert any("inter.bandwidth" in w for w in warn)
    _, warn = gp.from_profile(dict(torus, copy_bandwidth=8e9, intra=dict(levels["intra"], gap=1e-8)), 8)
    assert any("gap" in w for w in warn) and any("copy_bandwidth" in w for w in warn)
    _, warn = gp.from_profile(dict(torus, eager_limit=0), 8)  # --scale's: a run setting
    assert any("send-is-detached-thresh:0" in w for w in warn)
    with pytest.raises(ValueError):
        gp.from_profile(dict(levels, tuna_profile=1), 8)  # no torus: topology and nodes needed


def test_platform_limiter_only_on_plain_clusters():
    """SimGrid 3.32 shares a FAT_TREE or DRAGONFLY cluster's limiter link between all its
    nodes (a node's share fell as 1/N, docs/simulation.md): the generator emits one only for a
    plain cluster, makes the node's own link the injection limit elsewhere, and refuses a fat
    tree or dragonfly whose NICs and link disagree."""
    gp = _gen_platform()
    for name in ("fattree", "polaris", "fugaku"):
        assert "limiter_link" not in gp.xml_text(name, gp.PRESETS[name]), name
    xbar = dict(gp.PRESETS["fattree"], topology="crossbar", nodes=16)
    assert 'limiter_link="2.5e+10Bps"' in gp.xml_text("x", xbar)
    for topo in ("fat-tree", "dragonfly"):
        bad = dict(gp.PRESETS["polaris" if topo == "dragonfly" else "fattree"], nic_count=3)
        with pytest.raises(ValueError, match="injection"):
            gp.xml_text("x", bad)


def test_build_rejects_garbage(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("not json\n")
    assert cli.main(["tune", "build", str(path)]) == 1


def test_smpi_vendor_alltoallv_per_selector():
    # SimGrid 3.32's alltoallv selectors and the tuna algorithm that behaves like each
    assert tune.smpi_vendor_alltoallv("default") == "linear"
    assert tune.smpi_vendor_alltoallv("mpich") == "scattered:block=4"
    assert tune.smpi_vendor_alltoallv("ompi", 2) == "xor"
    assert tune.smpi_vendor_alltoallv("ompi", 32) == "linear"
    assert tune.smpi_vendor_alltoallv("ompi", 64) == "xor"
    assert tune.smpi_vendor_alltoallv("ompi", 1024) == "linear"
    with pytest.raises(ValueError):
        tune.smpi_vendor_alltoallv("ompi")
    with pytest.raises(ValueError):
        tune.smpi_vendor_alltoallv("mvapich2")


def test_profile_command_writes_vendor_alltoallv(tmp_path):
    # --agreement-procs '': no simulation (the SMPI build is tested by sim_auto_profile)
    out = tmp_path / "p.json"
    no_sim = ["--agreement-procs", ""]
    assert cli.main(["tune", "profile", "--platform", "fattree", "--selector", "mpich",
                     "-o", str(out)] + no_sim) == 0
    p = json.loads(out.read_text())
    assert p["vendor_alltoallv"] == "scattered:block=4" and "agreement" not in p
    assert cli.main(["tune", "profile", "--platform", "fattree", "-o", str(out)] + no_sim) == 0
    assert json.loads(out.read_text())["vendor_alltoallv"] == "linear"
    assert cli.main(["tune", "profile", "--platform", "fattree", "--selector", "nosuch",
                     "-o", str(out)] + no_sim) == 1


def test_profile_agreement_needs_the_smpi_bench(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TUNA_SIM_BENCH", str(tmp_path / "missing-tuna-bench"))
    assert cli.main(["tune", "profile", "--platform", "fattree", "--bench",
                     str(tmp_path / "missing-tuna-bench"), "-o", str(tmp_path / "p.json")]) == 1
    assert "tuna-bench" in capsys.readouterr().err


@pytest.mark.skipif(not os.environ.get("TUNA_MODEL"), reason="needs tuna-model (TUNA_MODEL)")
def test_model_prices_allgather_and_allreduce_lines(monkeypatch):
    """tuna-model's collective lines under the Polaris-like NCCL profile: the rows resolve,
    auto answers, alltoallv lines beside them are unchanged, bad lines are errors."""
    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("TUNA_PROFILE",
                       str(root / "sim/results/nccl-model/profile-polaris-gpu-nccl.json"))
    a2av = "64 4 16 16 16 1024 0 linear\n"

    def run(text):
        return subprocess.run([os.environ["TUNA_MODEL"]], input=text, capture_output=True,
                              text=True, timeout=60)

    alone = run(a2av)
    lines = ("allgather 64 4 16 1024 ring\nallgather 64 4 16 1024 recmul:k=8\n"
             "allreduce 8 4 2 4194304 recmul-permuted:k=8\nallreduce 64 4 16 1024 auto\n" + a2av)
    proc = run(lines)
    assert alone.returncode == 0 and proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert [r[1] for r in rows[:3]] == ["ring", "recmul:k=8", "recmul-permuted:k=8"]
    assert float(rows[1][0]) < float(rows[0][0])  # two groups against 63
    assert rows[3][0] != "error:" and proc.stdout.splitlines()[4] == alone.stdout.strip()
    bad = run("allgather 64 4 16 1024 vendor\nallreduce 64 4 16 1024 ring noncommutative\n"
              "allgather 64 4 16 1024 tuna\nallgather 64 4 16\n")
    assert bad.returncode == 1
    assert [line.startswith("error:") for line in bad.stdout.splitlines()] == [True] * 4
