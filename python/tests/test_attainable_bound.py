"""sim/attainable_bound.py without SimGrid: its routing mirrors, schedules and pricing."""
import importlib.util
import os

import numpy as np
import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
_spec = importlib.util.spec_from_file_location(
    "attainable_bound", os.path.join(ROOT, "sim", "attainable_bound.py"))
ab = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ab)

TORUS = {"topology": "torus", "dims": [8, 8, 8], "link_bw": 1e9, "link_lat": 1e-7,
         "intra_bw": 1e11, "intra_lat": 3e-7, "os": 2e-7, "or": 3e-7}
FLY = {"topology": "dragonfly", "dragonfly": [[8, 2], [2, 2], [4, 1], 8], "link_bw": 1e9,
       "link_lat": 1e-7, "intra_bw": 1e11, "intra_lat": 3e-7, "os": 2e-7, "or": 3e-7}


def hops(net, a, b):
    return [(ln[1], ln[2]) for ln in net.route(a, b)[0]]


def links(net, a, b):
    return [ln[:-1] for ln in net.route(a, b)[0]]     # without the bandwidth


def test_torus_routes_dimension_order_shortest_way():
    net = ab.Network(TORUS)
    assert hops(net, 0, 3) == [(0, 1), (1, 2), (2, 3)]
    assert hops(net, 0, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]      # a tie goes up
    assert hops(net, 1, 6) == [(1, 0), (0, 7), (7, 6)]              # down, through the wrap
    assert hops(net, 5, 1) == [(5, 6), (6, 7), (7, 0), (0, 1)]      # SimGrid's rule: up
    # x first, then y (node id = x + 8 y)
    assert hops(net, 0, 9) == [(0, 1), (1, 9)]
    assert net.route(0, 9)[1] == pytest.approx(2e-7)


def test_dragonfly_routes_inside_a_group():
    net = ab.Network(FLY)
    kinds = lambda a, b: [ln[0] for ln in net.route(a, b)[0]]   # noqa: E731
    assert kinds(0, 7) == ["up", "down"]                  # same router (8 nodes per blade)
    assert kinds(0, 8) == ["up", "green", "down"]         # other router of the chassis
    assert kinds(0, 32) == ["up", "black", "down"]        # same blade, other chassis
    assert kinds(9, 48) == ["up", "green", "black", "down"]    # blade 1 -> 2, chassis 0 -> 1
    # SimGrid continues from chassis 0's router after a green hop (the chassis index is
    # dropped): chassis 1 -> chassis 0 across blades makes no black hop, and a green hop
    # inside chassis 1 is followed by a black one from chassis 0 back to chassis 1.
    assert links(net, 40, 0) == [("up", 40), ("green", (0, 1, 1), (0, 1, 0)), ("down", 0)]
    assert links(net, 32, 48) == [("up", 32), ("green", (0, 1, 0), (0, 1, 2)),
                                  ("black", (0, 0, 2), (0, 1, 2)), ("down", 48)]


def test_dragonfly_routes_between_groups():
    net = ab.Network(FLY)
    # node 0 (group 0, chassis 0, blade 0) -> node 64 (group 1, chassis 0, blade 0): a green
    # hop to blade 1 (= the target group), the group pair's blue link to group 1's router in
    # chassis 0, blade 0 (= the source group), the node's down link.
    assert links(net, 0, 64) == [("up", 0), ("green", (0, 0, 0), (0, 0, 1)),
                                 ("blue", (0, 0, 1), (1, 0, 0)), ("down", 64)]
    # from chassis 1 first to chassis 0 (black), then blue, then to the target's blade and
    # chassis (green lands in chassis 0, black to chassis 1)
    assert [ln[0] for ln in net.route(41, 64 + 32 + 16)[0]] == [
        "up", "black", "blue", "green", "black", "down"]
    blue = [ln for ln in net.route(0, 64)[0] if ln[0] == "blue"][0]
    assert net.link_bw(blue) == pytest.approx(2e9)        # two blue links per group pair
    assert net.route(0, 64)[1] == pytest.approx(4e-7)
    with pytest.raises(ValueError):
        net.route(0, 64 * 5)      # group 5 >= 4 blades: outside SimGrid's green_links_


def nonzero_digits(i, r):
    n = 0
    while i:
        n += (i % r) != 0
        i //= r
    return n


@pytest.mark.parametrize("P,r", [(16, 4), (13, 3), (8, 2), (12, 12)])
def test_tuna_schedule_moves_every_block_once_per_nonzero_digit(P, r):
    rng = np.random.default_rng(P * r)
    sizes = rng.integers(0, 17, size=(P, P)).astype(float)
    bt = ab.schedule("tuna", {"radix": r}, P, 4, sizes, ab.meta_word_fixed(8))
    data = sum(b for batch in bt for (s, d, b) in batch[1].msgs)
    want = sum(nonzero_digits(i, r) * sizes[p, (p + i) % P]
               for p in range(P) for i in range(1, P))
    assert data == want
    # one metadata message per round and rank; rounds (x, z) with z r^x < P
    K = sum(len(zs) for _, _, zs in ab.tuna_rounds(P, r))
    assert sum(len(batch[0].msgs) for batch in bt) == K * P
    # 8 bytes per block moved
    meta = sum(b for batch in bt for (s, d, b) in batch[0].msgs)
    assert meta == 8 * P * sum(nonzero_digits(i, r) for i in range(1, P))


def test_coalesced_schedule_delivers_every_remote_byte_once():
    P, Q = 16, 4
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 9, size=(P, P)).astype(float)
    bt = ab.schedule("coalesced", {"radix": 2, "block": 2}, P, Q, sizes,
                     ab.meta_word_adaptive)
    node = np.arange(P) // Q
    remote = sizes[node[:, None] != node[None, :]].sum()
    inter = [ph for batch in bt for ph in batch if ph.name.startswith("inter data")]
    assert sum(b for ph in inter for (s, d, b) in ph.msgs) == remote
    assert all(s // Q != d // Q and s % Q == d % Q for ph in inter for (s, d, b) in ph.msgs)
    meta = [ph for batch in bt for ph in batch if ph.name == "inter metadata"][0]
    assert len(meta.msgs) == P * (P // Q - 1)
    assert all(b == Q * 1 + 1 for (s, d, b) in meta.msgs)   # 1-byte sizes and a header


def test_meta_word_widths():
    assert ab.meta_word_adaptive(np.zeros(3)) == 0
    assert ab.meta_word_adaptive(np.array([255.0])) == 1
    assert ab.meta_word_adaptive(np.array([256.0])) == 2
    assert ab.meta_word_adaptive(np.array([2.0 ** 32])) == 8


def test_price_one_message():
    P, rpn = 64, 32
    ph = ab.Phase("one")
    ph.add(0, 32, 1000)                                    # node 0 -> node 1: one hop
    res = ab.price([[ph]], P, rpn, TORUS, ab.Network(TORUS), "eager")
    want = 2e-7 + 1000 / 1e9 + 1e-7 + 3e-7                 # os + bytes/bw + hop + or
    assert res["attainable_s"] == pytest.approx(want)
    rdv = ab.price([[ph]], P, rpn, TORUS, ab.Network(TORUS), "rendezvous")
    assert rdv["attainable_s"] == pytest.approx(want - 3e-7)   # no or in rendezvous


def test_cut_of_a_ring():
    # 8 nodes on one ring of the torus, one rank each, 1 byte between every pair: 16 bytes
    # cross from the lower half to the upper one over 2 links (one each way around).
    sizes = np.ones((8, 8)) - np.eye(8)
    t, _ = ab.Network(TORUS).cut_bound(8, 1, sizes)
    assert t == pytest.approx(16 / 2e9)


@pytest.mark.skipif(not os.environ.get("TUNA_BENCH"), reason="needs tuna-bench (TUNA_BENCH)")
def test_command_line_prices_the_bench_draw(capsys):
    """The script end to end: block sizes from tuna-bench (--facts --matrix), today's bound
    from their node totals, one row per algorithm."""
    assert ab.main(["--platform", "fugaku", "--procs", "64", "--rpn", "32", "-s", "16",
                    "-a", "tuna:radix=4", "-a", "coalesced:radix=4", "--meta-word", "adaptive",
                    "--bench", os.environ["TUNA_BENCH"]]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| 64 |")]
    assert len(rows) == 2 and "tuna:radix=4" in rows[0] and "coalesced:radix=4" in rows[1]
