"""docs/figures/tuna_schedule.py reads TuNA's rounds from tuna-trace's messages.

The synthetic test needs no MPI: a hand-written trace of P = 4, radix 2 must give the worked
example of docs/algorithms.md. The end-to-end test runs tuna-trace (TUNA_TRACE, set by CTest
in bench_e2e_pytest) for every schedule the figures draw, checks them against the worked
examples and draws both figures.
"""
import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("tuna_schedule",
                                              ROOT / "docs" / "figures" / "tuna_schedule.py")
ts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ts)


def synthetic_p4_r2(P=4):
    """What every rank p sends at P = 4, radix 2: metadata then data, per round."""
    msgs = []
    for p in range(P):
        seq = 0
        # round (0, 1): blocks 1 and 3 to p + 1; round (1, 1): block 2, and p-1's block 3
        rounds = [(1, [(p, (p + 1) % P), (p, (p + 3) % P)]),
                  (2, [(p, (p + 2) % P), ((p - 1) % P, (p + 2) % P)])]
        for k, (dist, blocks) in enumerate(rounds):
            for kind, blk in (("meta", []), ("data", blocks)):
                msgs.append({"rank": p, "dest": (p + dist) % P, "tag": 140 + (kind == "data"),
                             "kind": kind, "seq": seq, "round": k, "blocks": blk})
                seq += 1
    return msgs


def test_synthetic_trace_gives_the_worked_example():
    rounds, table, batches = ts.tuna_schedule(synthetic_p4_r2(), 4, 2)
    assert rounds == [(0, 1), (1, 1)]
    assert table == ts.WORKED[(4, 2)]
    assert batches == [0, 1]  # a metadata message between the rounds: two batches


def test_ranks_that_disagree_are_reported():
    msgs = synthetic_p4_r2()
    for m in msgs:
        if m["rank"] == 2 and m["kind"] == "data" and m["round"] == 1:
            m["blocks"] = m["blocks"][:1]
    with pytest.raises(AssertionError, match="rank 2"):
        ts.tuna_schedule(msgs, 4, 2)


def test_round_of_reads_the_distance():
    assert ts.round_of(6, 3) == (1, 2)
    assert ts.round_of(4, 2) == (2, 1)
    with pytest.raises(AssertionError):
        ts.round_of(5, 2)


def test_figures_from_the_library(tmp_path):
    exe = os.environ.get("TUNA_TRACE")
    if not exe or not os.path.exists(exe):
        pytest.skip("tuna-trace not found: set TUNA_TRACE (CTest does)")
    ts.main(["-o", str(tmp_path), "--tuna-trace", exe, "--trace-dir", str(tmp_path)])
    for name in ("tuna-digit-hops.png", "hierarchical-phases.png"):
        assert (tmp_path / name).stat().st_size > 10000
    head, msgs = ts.load(tmp_path / "tuna-P8-r3.jsonl")
    assert head["P"] == 8 and any(m["kind"] == "meta" for m in msgs)
