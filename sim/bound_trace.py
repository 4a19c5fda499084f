#!/usr/bin/env python3
"""Per-phase times of one traced tuna-bench call next to the attainable bound's
(docs/results/simulation-gap.md, "The gap to the attainable bound").

  tuna sim run ... -a ALG -w 1 --cfg tracing:yes --cfg tracing/smpi:yes \\
      --cfg tracing/filename:T.trace -o T.jsonl
  sim/bound_trace.py T.trace T.jsonl [--meta-word 8|adaptive]

SMPI's Paje trace holds every rank's MPI calls. The timed call is the one after the last
MPI_Barrier; each of its MPI_Waitall ends a phase (TuNA's engine: metadata, then data, per
batch; coalesced's inter-node metadata and data batches). Measured: the latest rank's end of
the phase, counted from each rank's own barrier exit (as tuna-bench times a call). Model: the
same phase's end in sim/attainable_bound.py's chain (batches one after the other, each
max(O, C)).
"""
import argparse
import json
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import attainable_bound as ab  # noqa: E402
from tuna_tools import sim as tsim  # noqa: E402


def parse(path):
    names = {}
    stack = defaultdict(list)
    calls = defaultdict(list)       # container -> [(name, start, end)]
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("%"):
                continue
            t = line.split()
            if not t:
                continue
            if t[0] == "5":                      # PajeDefineEntityValue: alias type name
                names[t[1]] = t[3]
            elif t[0] == "12":                   # push: time type container value
                stack[t[3]].append((names.get(t[4], t[4]), float(t[1])))
            elif t[0] == "13" and stack[t[3]]:   # pop: time type container
                name, start = stack[t[3]].pop()
                calls[t[3]].append((name, start, float(t[1])))
    return calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("record")
    ap.add_argument("--meta-word", default="8")
    args = ap.parse_args()
    with open(args.record, encoding="utf-8") as f:
        rec = [json.loads(line) for line in f if line.strip()][-1]
    calls = parse(args.trace)
    ends = []
    for c, lst in calls.items():
        lst.sort(key=lambda x: x[1])
        last_bar = max(i for i, x in enumerate(lst) if x[0] == "PMPI_Barrier")
        t0 = lst[last_bar][2]
        w = [x[2] - t0 for x in lst[last_bar + 1:] if x[0] == "PMPI_Waitall"]
        ends.append(w)
    n = min(len(e) for e in ends)
    measured = [max(e[i] for e in ends) for i in range(n)]
    P, rpn = rec["machine"]["P"], rec["sim"]["ranks_per_node"]
    _, plat = tsim.load_platform(rec["sim"]["platform"])
    sizes = tsim.size_matrix(rec["dist"], P, rec["dist"]["S_bytes"], rec["dist"].get("seed", 1))
    mw = ab.meta_word_adaptive if args.meta_word == "adaptive" else ab.meta_word_fixed(8)
    model = "rendezvous" if "smpi/send-is-detached-thresh:0" in rec["sim"]["smpi_cfg"] else "eager"
    res = ab.price(ab.schedule(rec["algorithm"], rec["params"], P, rpn, sizes, mw), P, rpn, plat,
                   ab.Network(plat), model)
    # tuna_waitall (src/core/requests.c) waits WAIT_CHUNK requests per MPI_Waitall: a phase
    # with k peers (a send and a receive each) ends with the last of ceil(2k / 32) waits.
    bt = ab.schedule(rec["algorithm"], rec["params"], P, rpn, sizes, mw)
    waits = []
    for phases in bt:
        k_prev = 0
        for ph in phases:
            cnt = defaultdict(int)
            for (src, _, _) in ph.msgs:
                cnt[src] += 1
            k = max(cnt.values()) if cnt else 0
            k = max(k, k_prev) if ph.early else k
            waits.append(max(1, -(-2 * k // 32)))
            k_prev = k
    rows = []
    t = 0.0
    for b in res["batches"]:
        for name, e in zip(b["phases"], b["phase_end_s"]):
            rows.append((name, t + e))
        t += b["T_s"]
    merged = []
    i = 0
    for wcount in waits:
        i += wcount
        merged.append(measured[i - 1] if i - 1 < len(measured) else float("nan"))
    if i == len(measured):
        measured = merged
    print(f"# {rec['options']}, P = {P}, {rec['sim']['platform']}, {model}: call "
          f"{rec['time']['median'] * 1e6:.1f} us, model {res['attainable_s'] * 1e6:.1f} us")
    print("| phase (waitall) | model end (us) | measured end (us) | model phase (us) | "
          "measured phase (us) |")
    print("|---|---:|---:|---:|---:|")
    pm = pe = 0.0
    for i, (name, me) in enumerate(rows):
        ms = measured[i] if i < len(measured) else float("nan")
        print(f"| {name} | {me * 1e6:.1f} | {ms * 1e6:.1f} | {(me - pm) * 1e6:.1f} | "
              f"{(ms - pe) * 1e6:.1f} |")
        pm, pe = me, ms
    if len(measured) != len(rows):
        print(f"(the trace has {len(measured)} waits, the model {len(rows)} phases: "
              "not matched one to one)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
