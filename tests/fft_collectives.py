#!/usr/bin/env python3
"""Run tuna-fft with --json and check which collective each reshape ran (issue 36).

usage: fft_collectives.py --mpiexec MPIEXEC [--mpiexec-flag=FLAG ...] --np N
                          [--expect [RESHAPE=]alltoall|alltoallv ...]
                          [--alltoallv-algorithms A,B] [--alltoall-algorithms A,B]
                          -- TUNA_FFT args...

tuna-fft must exit 0 (its own answer checks passed) and write at least one record. --expect
says what the reshapes of a row that may use tuna_alltoall must run: "alltoall" (equal
blocks) or "alltoallv", for every reshape or for the one named (later ones win). The rows that
may not are worked out here, not taken from the records: an algorithm of
--alltoallv-algorithms (the alltoall registry lacks it, e.g. twophase-bruck) and every row
with alltoallv_only (--alltoallv-only, the [alltoallv] copies of --compare-alltoallv) must
run tuna_alltoallv everywhere; an algorithm of --alltoall-algorithms (e.g. bruck-radix) must
be skipped where a reshape is expected on alltoallv. Every other row must be "ok" and
verified, each reshape's calls all on the expected collective (and at least one). The rows'
alltoallv_only must match tuna-fft's flags (with --compare-alltoallv: both rows of every
algorithm both registries know), and unless --alltoallv-only some reshape must have run
tuna_alltoall when one is expected to.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--mpiexec-flag", action="append", default=[])
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--alltoallv-algorithms", default="")
    ap.add_argument("--alltoall-algorithms", default="")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command and a.command[0] == "--" else a.command
    v_only_algs = set(filter(None, a.alltoallv_algorithms.split(",")))
    a_only_algs = set(filter(None, a.alltoall_algorithms.split(",")))
    expect = {}
    for e in a.expect:
        name, _, coll = e.rpartition("=")
        if coll not in ("alltoall", "alltoallv"):
            sys.exit(f"--expect {e}: expected [RESHAPE=]alltoall|alltoallv")
        expect[name or "*"] = coll

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fft.jsonl")
        full = [a.mpiexec, *a.mpiexec_flag, "-n", str(a.np), *cmd, "-j", path]
        print(" ".join(full), flush=True)
        rc = subprocess.run(full).returncode
        if rc != 0:
            print(f"FAIL: tuna-fft exited with {rc}")
            return 1
        with open(path) as f:
            recs = [json.loads(line) for line in f if line.strip()]

    fails = []
    ran_alltoall = 0
    v_only = "--alltoallv-only" in cmd
    compare = "--compare-alltoallv" in cmd
    for r in recs:
        if r["alltoallv_only"] and not (v_only or compare) or v_only and not r["alltoallv_only"]:
            fails.append(f"{r['options']}: alltoallv_only {r['alltoallv_only']}")
    if compare:  # every algorithm both registries know: once each way
        for o in {r["options"] for r in recs}:
            alg = o.split(":")[0]
            if alg not in v_only_algs and alg not in a_only_algs and \
                    {r["alltoallv_only"] for r in recs if r["options"] == o} != {False, True}:
                fails.append(f"{o}: --compare-alltoallv without both rows")
    for r in recs:
        opts = r["options"]
        alg = opts.split(":")[0]
        where = (f"{r['decomposition']} {r['transform']} {'x'.join(map(str, r['dims']))} "
                 f"grid {r['grid']} {r['workload']} {opts}"
                 f"{' [alltoallv]' if r['alltoallv_only'] else ''}")
        has_u, has_v = alg not in v_only_algs, alg not in a_only_algs
        uses_u = has_u and not r["alltoallv_only"]
        if (r["alltoall_options"] is not None) != uses_u:
            fails.append(f"{where}: alltoall_options {r['alltoall_options']!r}, expected "
                         f"{'a string' if uses_u else 'null'}")
        if (r["alltoallv_options"] is not None) != has_v:
            fails.append(f"{where}: alltoallv_options {r['alltoallv_options']!r}")
        want = {}
        for t in r["transposes"]:
            e = expect.get(t["name"], expect.get("*", "alltoallv"))
            want[t["name"]] = e if uses_u else "alltoallv"
        skip = not has_v and "alltoallv" in want.values()
        if skip:
            if r["status"] != "skipped":
                fails.append(f"{where}: status {r['status']}, expected skipped")
            else:
                print(f"ok  {where}: skipped")
            continue
        if r["status"] != "ok" or not r["verified"]:
            fails.append(f"{where}: status {r['status']}, verified {r['verified']} "
                         f"{r.get('error', '')}")
            continue
        for t in r["transposes"]:
            w = want[t["name"]]
            other = "alltoallv" if w == "alltoall" else "alltoall"
            calls = t["calls"]
            if t["collective"] != w or calls[w] < 1 or calls[other] != 0:
                fails.append(f"{where}: reshape {t['name']} ran {t['collective']} "
                             f"(calls {calls}), expected {w}")
            elif w == "alltoall":
                ran_alltoall += 1
        print(f"ok  {where}: " + ", ".join(f"{t['name']} {t['collective']}"
                                           for t in r["transposes"]))
    if not recs:
        fails.append("no records")
    if "alltoall" in expect.values() and not v_only and not ran_alltoall:
        fails.append("no reshape ran tuna_alltoall")
    for f in fails:
        print("FAIL:", f)
    print(f"{len(recs)} records, {ran_alltoall} reshapes on tuna_alltoall, {len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
