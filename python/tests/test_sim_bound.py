"""`tuna sim` pieces that need no SimGrid: hostfiles and the lower bound."""
import numpy as np

from tuna_tools import sim

PLAT = {"os": 5e-7, "or": 5e-7, "link_lat": 1e-6, "intra_lat": 2e-7,
        "injection_bw": 1e9, "intra_bw": 4e9}


def test_hostfile_node_major(tmp_path):
    path = tmp_path / "hosts"
    sim.write_hostfile(path, 10, 4, 8)
    assert path.read_text() == "node-0:4\nnode-1:4\nnode-2:2\n"


def test_bound_terms():
    P, Q = 8, 4  # two nodes
    sizes = np.full((P, P), 100.0)
    lb = sim.lower_bound(PLAT, P, Q, sizes)
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
    one = sim.lower_bound_collective(PLAT, 4, 4, "allreduce", S)  # one node: latency only
    assert one["bandwidth_s"] == 0.0 and one["bound_s"] == 2 * (5e-7 + 5e-7 + 2e-7)


def test_size_matrix_is_deterministic_and_bounded():
    for name in ("uniform", "normal", "powerlaw"):
        a = sim.size_matrix({"name": name}, 16, 1000, 7)
        b = sim.size_matrix({"name": name}, 16, 1000, 7)
        assert (a == b).all() and a.min() >= 0
        if name != "normal":
            assert a.max() <= 1000


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
    import json
    from tuna_tools import cli
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
