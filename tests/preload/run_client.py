#!/usr/bin/env python3
"""Run an MPI client under LD_PRELOAD=libtuna-preload.so and check the stats file.

usage: run_client.py --preload LIB --mpiexec MPIEXEC [--mpiexec-flag=FLAG ...] --np N [--env K=V ...]
                     [--min-tuna-calls N] [--allow-fallback] [--algorithm PREFIX]
                     [--mpi4py-tests DIR|auto] [--per-rank-calls [COLL/]PATH[:TEXT]=N|>=N ...]
                     [--plan-algorithm PREFIX] -- client args...

Passes when the client exits 0 and the stats file (TUNA_STATS) shows at least
--min-tuna-calls calls handled by tuna's code (path "tuna"), no fallback rows
unless --allow-fallback (or of the --allow-fallback-reason reasons), and, with --algorithm, only that algorithm on the tuna path.
--collective: the collective these checks are about (alltoallv by default; rows of the
others are printed only, except that no call of any may have returned an error unless
--allow-errors).
--per-rank-calls [COMM_NAME@][COLL/]PATH[:TEXT]=N: on every rank, the calls of the rows (of
communicator COMM_NAME, of collective COLL if given) on PATH (whose algorithm column
contains TEXT) sum to N (or at least N); --plan-algorithm: every "plan" row (starts of
persistent alltoallv plans) runs that algorithm.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile


def read_stats(path):
    with open(path, encoding="utf-8") as f:
        lines = [ln for ln in f if not ln.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def mpi4py_tests(where, builddir):
    """The test/ directory of the mpi4py sdist matching the installed mpi4py."""
    if where != "auto":
        return where
    import mpi4py
    version = mpi4py.__version__
    root = os.path.join(builddir, "mpi4py-sdist")
    test_dir = os.path.join(root, f"mpi4py-{version}", "test")
    if not os.path.isdir(test_dir):
        os.makedirs(root, exist_ok=True)
        tarball = os.path.join(root, f"mpi4py-{version}.tar.gz")
        if not os.path.exists(tarball):
            # --no-binary mpi4py: the sdist (pip install does not install the tests).
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                            "--no-binary", "mpi4py", f"mpi4py=={version}", "-d", root],
                           check=True)
        import tarfile
        with tarfile.open(tarball) as t:
            members = [m for m in t.getmembers()
                       if m.name.startswith(f"mpi4py-{version}/test/")]
            t.extractall(root, members=members)
    return test_dir


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preload", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--mpiexec-flag", action="append", default=[])
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--min-tuna-calls", type=int, default=1)
    ap.add_argument("--allow-fallback", action="store_true")
    ap.add_argument("--allow-fallback-reason", action="append", default=[])
    ap.add_argument("--algorithm")
    ap.add_argument("--mpi4py-tests")
    ap.add_argument("--per-rank-calls", action="append", default=[])
    ap.add_argument("--plan-algorithm")
    ap.add_argument("--collective", default="alltoallv")
    ap.add_argument("--allow-errors", action="store_true")
    ap.add_argument("client", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    client = a.client[1:] if a.client and a.client[0] == "--" else a.client
    env = dict(os.environ)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    if a.mpi4py_tests:
        test_dir = mpi4py_tests(a.mpi4py_tests, os.getcwd())
        client = [sys.executable, os.path.join(test_dir, "main.py")] + client
    fd, stats = tempfile.mkstemp(prefix="tuna-stats-", suffix=".tsv", dir=os.getcwd())
    os.close(fd)
    env["TUNA_STATS"] = stats
    env["LD_PRELOAD"] = a.preload
    cmd = [a.mpiexec] + a.mpiexec_flag + ["-n", str(a.np)] + client
    shown = ("LD_PRELOAD", "TUNA_ALLTOALLV", "TUNA_ALLTOALL", "TUNA_ALLGATHER", "TUNA_ALLREDUCE",
             "TUNA_PLAN", "TUNA_WISDOM", "TUNA_STATS")
    print("+", " ".join(f"{k}={env[k]}" for k in shown if k in env), " ".join(cmd), flush=True)
    rc = subprocess.run(cmd, env=env).returncode
    if rc != 0:
        print(f"FAIL: client exited with {rc}")
        os.unlink(stats)
        return 1
    all_rows = read_stats(stats)
    os.unlink(stats)
    for r in all_rows:
        print("stats:", "\t".join(r.values()))
    # The checks are about one collective; errors are never expected.
    errors = sum(int(r["calls"]) for r in all_rows if r["path"] == "error")
    rows = [r for r in all_rows if r["collective"] == a.collective]
    tuna = sum(int(r["calls"]) for r in rows if r["path"] == "tuna")
    fallback = sum(int(r["calls"]) for r in rows if r["path"] == "fallback")
    unexpected = sum(int(r["calls"]) for r in rows if r["path"] == "fallback"
                     and r["algorithm"] not in a.allow_fallback_reason)
    vendor = sum(int(r["calls"]) for r in rows if r["path"] == "vendor")
    print(f"calls: tuna {tuna}, vendor {vendor}, fallback {fallback}")
    ok = True
    if errors and not a.allow_errors:
        print(f"FAIL: {errors} calls returned an error")
        ok = False
    if tuna < a.min_tuna_calls:
        print(f"FAIL: tuna handled {tuna} calls, expected at least {a.min_tuna_calls}")
        ok = False
    if unexpected and not a.allow_fallback:
        print(f"FAIL: {unexpected} {a.collective} calls fell back to the library's call")
        ok = False
    # What ran on the tuna path (blocking calls) and on the plan path (persistent starts).
    for path, want, who in (("tuna", a.algorithm, "tuna"), ("plan", a.plan_algorithm, "the plans")):
        if not want:
            continue
        other = {r["algorithm"] for r in rows if r["path"] == path
                 and not r["algorithm"].startswith(want)}
        if other:
            print(f"FAIL: {who} ran {sorted(other)}, expected {want}")
            ok = False
    for spec in a.per_rank_calls:
        m = re.fullmatch(r"(?:([^@:=>]+)@)?([^:=>]+)(?::(.*?))?(>?=)(\d+)", spec)
        if not m:
            print(f"FAIL: bad --per-rank-calls {spec!r}")
            return 1
        comm, path, text = m.group(1), m.group(2), m.group(3) or ""
        op, want = m.group(4), int(m.group(5))
        coll, _, path = path.rpartition("/")
        pool = [r for r in all_rows if r["collective"] == coll] if coll else rows
        if comm:  # COMM_NAME@...: that communicator's rows only
            pool = [r for r in pool if r["comm_name"] == comm]
        for rank in range(a.np):
            got = sum(int(r["calls"]) for r in pool if r["rank"] == str(rank)
                      and r["path"] == path and text in r["algorithm"])
            if got != want if op == "=" else got < want:
                print(f"FAIL: rank {rank}: {got} calls on path {path!r} with {text!r}, "
                      f"expected {op}{want}")
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
