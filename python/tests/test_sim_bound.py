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
    # ... and 4 x 3 x 100 B between its own distinct ranks.
    assert abs(lb["intra_s"] - 1200 / 4e9) < 1e-15
    assert lb["bound_s"] == max(lb["latency_s"], lb["bandwidth_s"], lb["intra_s"])


def test_size_matrix_is_deterministic_and_bounded():
    for name in ("uniform", "normal", "powerlaw"):
        a = sim.size_matrix({"name": name}, 16, 1000, 7)
        b = sim.size_matrix({"name": name}, 16, 1000, 7)
        assert (a == b).all() and a.min() >= 0
        if name != "normal":
            assert a.max() <= 1000
