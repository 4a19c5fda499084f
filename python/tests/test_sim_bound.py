"""`tuna sim` pieces that need no SimGrid: hostfiles and the lower bound."""
import argparse
import json
import os

import pytest

from tuna_tools import cli, sim

PLAT = {"os": 5e-7, "or": 5e-7, "link_lat": 1e-6, "intra_lat": 2e-7,
        "injection_bw": 1e9, "intra_bw": 4e9}


def test_hostfile_node_major(tmp_path):
    path = tmp_path / "hosts"
    sim.write_hostfile(path, 10, 4, 8)
    assert path.read_text() == "node-0:4\nnode-1:4\nnode-2:2\n"


def test_bound_terms():
    P, Q = 8, 4  # two nodes, every block 100 B: each node sends 4 x 4 x 100 B off node
    lb = sim.lower_bound(PLAT, P, Q, 1600, 1600)
    assert lb["rounds"] == 3
    assert abs(lb["latency_s"] - 3 * (1e-6 + 1e-6)) < 1e-15
    # Each node sends 4 ranks x 4 remote peers x 100 B off node.
    assert abs(lb["bandwidth_s"] - 1600 / 1e9) < 1e-15
    # No intra-node term: SimGrid's cluster loopback does not share bandwidth between flows.
    assert lb["intra_s"] == 0.0
    assert lb["bound_s"] == max(lb["latency_s"], lb["bandwidth_s"])


def test_collective_bounds():
    P, Q, S = 8, 4, 1000
    ag = sim.lower_bound_collective(PLAT, P, Q, "allgather", S)
    # A node receives the 4 outside ranks' blocks.
    assert abs(ag["bandwidth_s"] - 4 * S / 1e9) < 1e-15
    ar = sim.lower_bound_collective(PLAT, P, Q, "allreduce", S)
    assert abs(ar["bandwidth_s"] - S / 1e9) < 1e-15
    assert ar["latency_s"] == ag["latency_s"] == 3 * (1e-6 + 1e-6)
    a2a = sim.lower_bound_collective(PLAT, P, Q, "alltoall", S)
    # The all-to-all's bound with every block S: 4 ranks x 4 remote peers x S leave a node.
    assert a2a == sim.lower_bound(PLAT, P, Q, 16 * S, 16 * S)
    one = sim.lower_bound_collective(PLAT, 4, 4, "allreduce", S)  # one node: latency only
    assert one["bandwidth_s"] == 0.0 and one["bound_s"] == 2 * (5e-7 + 5e-7 + 2e-7)


def test_record_bound_uses_the_bench_totals():
    """The bound's bandwidth term is the busier direction of tuna-bench's node totals; records
    from before tuna-bench wrote them keep their recorded bound; sparse patterns get none."""
    rec = {"collective": "alltoallv", "machine": {"P": 8, "nodes": 2},
           "dist": {"name": "uniform", "spec": "uniform", "S_bytes": 16,
                    "max_node_offnode_send_bytes": 1200, "max_node_offnode_recv_bytes": 1500}}
    lb = sim.record_bound(rec, PLAT, 8, 4, {})
    assert lb["bandwidth_s"] == 1500 / 1e9
    old = {"collective": "alltoallv", "dist": {"name": "normal", "spec": "normal"},
           "sim": {"bound": {"bound_s": 3e-6}}}
    assert sim.record_bound(old, PLAT, 8, 4, {}) == {"bound_s": 3e-6}
    sparse = dict(rec, dist=dict(rec["dist"], name="sparse", spec="sparse:zero=0.9"))
    assert sim.record_bound(sparse, PLAT, 8, 4, {}) is None
    with pytest.raises(ValueError):  # tuna-bench's nodes are not the placement's
        sim.record_bound(dict(rec, machine={"P": 8, "nodes": 1}), PLAT, 8, 4, {})


@pytest.mark.skipif(not os.environ.get("TUNA_BENCH"), reason="needs tuna-bench (TUNA_BENCH)")
def test_bound_command_asks_the_bench(capsys):
    """`tuna sim bound` takes the node totals from tuna-bench --facts: uniform blocks in
    [0, 16] on 2 nodes of 4 ranks."""
    bench = os.environ["TUNA_BENCH"]
    d = sim.bench_facts(bench, 8, 4, "uniform", 16, 1)
    assert d["total_bytes"] == 522 and 0 < d["max_node_offnode_send_bytes"] <= 4 * 4 * 16
    assert cli.main(["sim", "bound", "--platform", "fugaku", "--procs", "8", "--rpn", "4",
                     "--size", "16", "--bench", bench]) == 0
    lb = json.loads(capsys.readouterr().out)
    _, plat = sim.load_platform("fugaku")
    want = max(d["max_node_offnode_send_bytes"], d["max_node_offnode_recv_bytes"])
    assert lb["bandwidth_s"] == want / plat["injection_bw"]


@pytest.mark.skipif(not os.environ.get("TUNA_BENCH"), reason="needs tuna-bench (TUNA_BENCH)")
def test_size_matrix_is_the_bench_draw():
    """tuna-bench --facts --matrix: the matrix the attainable bound prices block by block sums
    to the facts tuna-bench records, row i being what rank i sends."""
    bench = os.environ["TUNA_BENCH"]
    for spec in ("uniform", "powerlaw:exponent=1.5"):
        d = sim.bench_facts(bench, 12, 4, spec, 64, 3)
        m = sim.size_matrix(spec, 12, 64, 3, bench)
        assert m.shape == (12, 12)
        assert m.sum() == d["total_bytes"] and m.max() == d["max_block_bytes"]
        assert max(m.sum(axis=1)) == d["max_rank_bytes"]
        # the node totals of the same record come from the same matrix: nodes of 4 ranks
        rec = sim.bench_record(bench, 12, 4, spec, 64, 3, matrix=True)
        assert rec["matrix"] == m.tolist()
        node = [i // 4 for i in range(12)]
        sent = [sum(m[i][j] for i in range(12) for j in range(12)
                    if node[i] == k and node[j] != k) for k in range(3)]
        assert max(sent) == rec["dist"]["max_node_offnode_send_bytes"]


def _rec(alg, params, t, scale=False, vendor=None):
    return {"algorithm": alg, "params": params, "options": alg, "status": "ok",
            "collective": "alltoallv",
            "dist": {"name": "uniform", "spec": "uniform", "S_bytes": 16, "seed": 1,
                     "total_bytes": 0, "max_block_bytes": 0},
            "machine": {"P": 4}, "time": {"median": t},
            "vendor": {"median": vendor} if vendor else None,
            "sim": {"platform": "nosuch", "ranks_per_node": 2, "selector": "mpich",
                    "scale_preset": scale,
                    "bound": {"bound_s": 1e-6, "latency_s": 1e-6, "bandwidth_s": 0,
                              "intra_s": 0}}}


def test_table_keeps_models_apart(tmp_path, capsys):
    """`tuna sim table`: best parameters per algorithm, SMPI's vendor, and runs of the
    rendezvous preset (--scale) in rows of their own."""
    path = tmp_path / "r.jsonl"
    recs = [_rec("tuna", {"radix": 2}, 3e-6, vendor=5e-6), _rec("tuna", {"radix": 4}, 2e-6),
            _rec("tuna", {"radix": 4}, 1e-6, scale=True)]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert cli.main(["sim", "table", str(path)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| nosuch")]
    assert len(rows) == 2, out
    assert "2.0 (4), 2.0x" in rows[0] and "5.0, 5.0x" in rows[0]
    assert "[rendezvous]" in rows[1] and "1.0 (4), 1.0x" in rows[1]


def test_bound_cache_is_per_platform():
    cache = {}
    rec = {"collective": "allreduce", "dist": {"spec": "fixed", "S_bytes": 8}}
    slow = dict(PLAT, name="slow", os=1e-5)
    a = sim.record_bound(rec, dict(PLAT, name="fast"), 8, 4, cache)
    b = sim.record_bound(rec, slow, 8, 4, cache)
    assert b["latency_s"] > a["latency_s"]


def test_write_records_keeps_what_a_killed_run_finished(tmp_path):
    """A timed-out smpirun's finished configurations are kept with their "sim" section; the
    line the kill cut off is dropped."""
    import argparse
    import io
    rec = {"collective": "alltoall", "algorithm": "bruck", "options": "bruck", "params": {},
           "status": "ok", "machine": {"P": 8}, "dist": {"S_bytes": 100},
           "time": {"median": 1e-5}, "vendor": None}
    jsonl = tmp_path / "bench.jsonl"
    jsonl.write_text(json.dumps(rec) + "\n" + json.dumps(rec)[:40])
    plat = dict(PLAT, name="p", topology="crossbar")
    args = argparse.Namespace(discover_nodes=False, scale=False, simgrid=None)
    sim._versions["smpirun"] = "3.35"  # no smpirun asked
    out = io.StringIO()
    got = sim.write_records(args, str(jsonl), "p.xml", plat, 8, 4, "default", [], out,
                            {"wall_s": None, "killed_after_s": 12.0})
    assert len(got) == 1
    kept = json.loads(out.getvalue())
    assert kept["sim"]["killed_after_s"] == 12.0 and kept["sim"]["platform"] == "p"
    want = sim.lower_bound_collective(plat, 8, 4, "alltoall", 100)
    assert kept["sim"]["bound"] == want
    assert abs(kept["sim"]["ratio_to_bound"] - 1e-5 / want["bound_s"]) < 1e-12


def test_run_goes_on_past_a_failed_smpirun(tmp_path, monkeypatch):
    """One selector whose smpirun fails is recorded as "failed" and the others still run
    (SimGrid 3.35 aborts on some algorithm/platform pairs); the command then reports it."""
    prefix = tmp_path / "sg"
    (prefix / "bin").mkdir(parents=True)
    smpirun = prefix / "bin" / "smpirun"
    smpirun.write_text(
        "#!/bin/sh\n"
        "[ \"$1\" = -version ] && { echo 'SimGrid version 3.35.0'; exit 0; }\n"
        "for a in \"$@\"; do case \"$a\" in\n"
        "  --cfg=smpi/alltoallv:bad) echo 'The Impossible Did Happen' >&2; exit 134 ;;\n"
        "  --cfg=smpi/alltoallv:*) echo \"${a#--cfg=smpi/alltoallv:}\" >> \"$FAKE_LOG\" ;;\n"
        "esac; done\n")
    smpirun.chmod(0o755)
    bench = tmp_path / "tuna-bench"
    bench.write_text("")
    log, out = tmp_path / "ran", tmp_path / "out.jsonl"
    monkeypatch.setenv("FAKE_LOG", str(log))
    rc = cli.main(["sim", "run", "--platform", "fattree", "--procs", "4", "--rpn", "2",
                   "-a", "vendor", "--selectors", "ompi,bad,mpich", "--no-vendor",
                   "--simgrid", str(prefix), "--bench", str(bench), "-o", str(out), "-q"])
    assert rc != 0
    assert log.read_text().split() == ["ompi", "mpich"]
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["status"], r["sim"]["selector"]) for r in recs] == [("failed", "bad")]
    assert "Impossible" in recs[0]["sim"]["error"]


def test_smpirun_follows_the_bench_build(tmp_path, monkeypatch):
    """A tuna-bench runs under the smpirun of the SimGrid it was built with: its build tree's
    TUNA_SIMGRID_PREFIX (cmake/smpi.cmake), unless --simgrid or $TUNA_SIMGRID says."""
    monkeypatch.delenv("TUNA_SIMGRID", raising=False)
    tree = tmp_path / "smpi-4.1"
    (tree / "tools").mkdir(parents=True)
    bench = tree / "tools" / "tuna-bench"
    bench.write_text("")
    (tree / "CMakeCache.txt").write_text("TUNA_SIMGRID_PREFIX:PATH=/opt/sg41\n")
    args = argparse.Namespace(simgrid=None, bench=str(bench))
    assert sim.smpirun_path(args) == "/opt/sg41/bin/smpirun"
    args.simgrid = "/opt/other"
    assert sim.smpirun_path(args) == "/opt/other/bin/smpirun"
    (tree / "CMakeCache.txt").write_text("CMAKE_C_COMPILER:FILEPATH=smpicc\n")  # Debian's
    assert sim.smpirun_path(argparse.Namespace(simgrid=None, bench=str(bench))) == "smpirun"


def test_check_identical_fails_either_way(tmp_path, monkeypatch):
    """`tuna sim check --times --identical`: a faster time fails too (an identity check)."""
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"tolerance": 1e-6, "times": {"k": 1.0e-5}}))
    args = argparse.Namespace(baseline=str(base), times=True, identical=True, record=False,
                              tolerance=0.05, files=[])
    for have, rc in ((1.0e-5, 0), (0.9e-5, 1), (1.1e-5, 1)):
        monkeypatch.setattr(sim, "regression_times", lambda records, h=have: {"k": h})
        assert sim.cmd_check(args) == rc
    args.identical = False
    monkeypatch.setattr(sim, "regression_times", lambda records: {"k": 0.9e-5})  # a guard
    assert sim.cmd_check(args) == 0
