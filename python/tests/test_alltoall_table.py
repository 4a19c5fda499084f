"""sim/alltoall_table.py's bounds, checked by hand on the repository's platforms."""
import importlib.util
import os
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "sim"))
_spec = importlib.util.spec_from_file_location(
    "alltoall_table", os.path.join(ROOT, "sim", "alltoall_table.py"))
at = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(at)


def test_overhead_bound_by_hand():
    # Polaris-like: os = or = 0.5 us, the shortest hop 0.3 us (link; intra-node 0.4).
    # P = 2: one message, os + hop + or. P = 3: the rank absorbs a second message 0.5 us
    # later. P = 4: N(2.3) = N(1.8) + N(1.0) = 3 + 1. P = 5: N(2.6) = N(2.1) + N(1.3) = 3 + 2.
    for procs, us in ((2, 1.3), (3, 1.8), (4, 2.3), (5, 2.6)):
        assert at.overhead_bound("polaris", procs) == pytest.approx(us * 1e-6, abs=2e-9)
    assert at.overhead_bound("polaris", 1) is None
    # Never above ceil(log2 P) rounds of one message each (the "lower bound" column's term).
    for procs in (8, 64, 1024):
        rounds = (procs - 1).bit_length()
        assert at.overhead_bound("polaris", procs) <= rounds * 1.3e-6 + 1e-12


def test_cut_and_direct_link_bounds_two_nodes():
    # Fugaku-like, P = 64 at 32 ranks per node: two neighbouring nodes, one torus link of
    # 6.8 GB/s each way; every block between them crosses it: 32 x 32 x 256 B.
    expect = 32 * 32 * 256 / 6.8e9
    assert at.cut_bound("fugaku", 64, 256) == pytest.approx(expect, rel=1e-9)
    assert at.direct_link_bound("fugaku", 64, 256) == pytest.approx(expect, rel=1e-9)
    # One node: no link between nodes bounds anything.
    assert at.direct_link_bound("fugaku", 32, 256) is None


def test_direct_routes_load_the_ring_more_than_the_cut():
    # Eight nodes on one torus ring (P = 256): the cut of four against four has two links
    # each way, but shortest-way routing puts more than its share on the busiest link.
    cut = at.cut_bound("fugaku", 256, 256)
    direct = at.direct_link_bound("fugaku", 256, 256)
    assert cut == pytest.approx(4 * 4 * 32 * 32 * 256 / (2 * 6.8e9), rel=1e-9)
    assert direct > cut
