"""``tuna sim``: tuna-bench under SimGrid SMPI on a simulated platform (docs/simulation.md).

  tuna sim run      one smpirun per (P, SMPI alltoallv selector): tuna-bench's JSON lines,
                    each tagged with a "sim" object (platform, ranks per node, SMPI
                    configuration, the `tuna sim run` command, wall time and memory of the
                    run, the lower bound and the ratios to it; a run killed by --timeout
                    leaves one record with status "timeout")
  tuna sim bound    the lower bound of one configuration
  tuna sim summary  a Markdown table from `tuna sim run` output: per configuration the best
                    parameters of each algorithm, the SMPI selectors, ratios to the bound
  tuna sim check    compare a run against a recorded baseline of ratios (regression gate)

The platforms are sim/platforms/NAME.xml with NAME.json next to it (sim/gen_platform.py).
"vendor" in simulation is SMPI's own MPI_Alltoallv, whose algorithm is chosen by
--cfg=smpi/alltoallv:SELECTOR (default, ompi, mpich, ...): one smpirun per selector.
"""
import json
import re
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from tuna_tools import launch, progress

HERE = os.path.dirname(os.path.abspath(__file__))


def project_root():
    """The tuna source tree: the one this module lives in, else (an installed `tuna`) the
    current directory or the nearest parent holding sim/platforms."""
    cands = [os.path.normpath(os.path.join(HERE, "..", ".."))]
    d = os.getcwd()
    while True:
        cands.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for c in cands:
        if os.path.isdir(os.path.join(c, "sim", "platforms")):
            return c
    return cands[0]


PLATFORM_DIR = os.path.join(project_root(), "sim", "platforms")


# ------------------------------------------------------------------ platforms

def load_platform(name):
    """(xml path, parameters) of a platform name from sim/platforms or a path to an .xml."""
    xml = name if name.endswith(".xml") else os.path.join(PLATFORM_DIR, f"{name}.xml")
    meta_path = xml[:-4] + ".json"
    if not os.path.exists(xml) or not os.path.exists(meta_path):
        raise ValueError(f"platform '{name}': {xml} and {meta_path} are needed "
                         "(sim/gen_platform.py writes both)")
    with open(meta_path, encoding="utf-8") as f:
        return xml, json.load(f)


def write_hostfile(path, procs, rpn, nodes):
    """Node-major placement: rpn ranks on each of the first ceil(P/rpn) nodes."""
    need = -(-procs // rpn)
    if need > nodes:
        raise ValueError(f"P={procs} at {rpn} ranks per node needs {need} nodes; "
                         f"the platform has {nodes}")
    with open(path, "w", encoding="utf-8") as f:
        left = procs
        for i in range(need):
            f.write(f"node-{i}:{min(rpn, left)}\n")
            left -= rpn


# SMPI's default barrier and allreduce are linear in P; MPI libraries run logarithmic ones at
# these sizes. tuna-bench synchronises every timed call with MPI_Barrier (a linear barrier
# releases the ranks up to P overheads apart, and the skew lands in the measured time), and
# every tuna alltoallv call performs one small allreduce (its agreement).
LOG_COLLS = {"barrier": "ompi_bruck", "allreduce": "rdb"}


def smpi_config(plat, selector, precision, extra=(), collective="alltoallv",
                library_colls="log"):
    """The --cfg flags of a run. Per-message overheads come from the platform; the SMPI
    calibration factors are neutralised so the platform's numbers mean what they say.
    library_colls 'log': the MPI library's barrier and allreduce are logarithmic (LOG_COLLS),
    except the collective the run measures and any an --cfg sets; 'default': SMPI's own."""
    cfg = [
        "smpi/simulate-computation:no",        # local copies are not charged (see docs)
        "smpi/bw-factor:0:1", "smpi/lat-factor:0:1",
        "network/crosstraffic:0",
        f"smpi/os:0:{plat['os']:g}:0", f"smpi/ois:0:{plat['os']:g}:0",
        f"smpi/or:0:{plat['or']:g}:0",
        f"surf/precision:{precision:g}",
        # Model-neutral (no simulated time changed at P = 64, 128): at the default 1e-5 a
        # rounding residual trips an assertion in SimGrid 3.32's max-min solver whose message
        # reads out of bounds (segmentation fault at P >= 1024; docs/simulation.md).
        "maxmin/precision:1e-3",
        "smpi/host-speed:1Gf",
    ]
    if selector != "default":
        cfg.append(f"smpi/{collective}:{selector}")
    if library_colls == "log":
        for coll, alg in LOG_COLLS.items():
            if coll != collective and not any(str(c).startswith(f"smpi/{coll}:") for c in extra):
                cfg.append(f"smpi/{coll}:{alg}")
    elif library_colls != "default":
        raise ValueError(f"--library-colls '{library_colls}': expected 'log' or 'default'")
    cfg.extend(extra)
    return cfg


# `tuna sim run --scale` (see /work/briefs/smpi-scale-report.md):
#  - send-is-detached-thresh:0: every send is rendezvous. SimGrid 3.32 keeps all detached
#    (eager) sends in one list that CommImpl::finish() scans linearly, so eager runs cost
#    O(messages in flight) per message. This CHANGES THE MODEL: simulated times drop by up to
#    50% at S = 16 B (less at 16 KiB); do not mix them with default-threshold results.
#  (maxmin/precision:1e-3, needed from P = 1024 on, is in every run's configuration.)
SCALE_CFG = ("smpi/send-is-detached-thresh:0",)
# SimGrid 3.32's default smpi/send-is-detached-thresh, which the other runs keep: messages up
# to it are eager (detached). The profiles' eager_limit (tune.py; sim/gen_platform.py).
SMPI_EAGER_LIMIT = 65536

# surf/precision: at 1e-7 SimGrid rounds the per-message overheads' sleeps (os = or = 0.2 us
# on the Fugaku-like platform): a linear exchange of 63 messages a rank was charged 19.1 us
# instead of 25.2 (sim/probes/run.sh; docs/simulation.md). 1e-9 charges them exactly (1e-10
# gives the same times) at the same speed at P = 64. --scale keeps 1e-7: 10x faster for the
# linear exchanges of P >= 128 (docs/simulation.md), with that rounding.
PRECISION = 1e-9
SCALE_PRECISION = 1e-7


# ------------------------------------------------------------------ lower bound

# Distributions whose every rank sends to (nearly) every other, so the latency term's
# ceil(log2 P) rounds hold; sparse, FFT and file patterns get no bound.
BOUNDED_DISTRIBUTIONS = ("uniform", "normal", "powerlaw")


def lower_bound(plat, procs, rpn, node_send_bytes, node_recv_bytes):
    """Lower bound in seconds of one all-to-all (max of the terms below) and its terms.
    node_send_bytes / node_recv_bytes: the bytes the busiest node sends to / receives from
    other nodes (tuna-bench computes them from its size matrix: the dist object's
    max_node_offnode_send_bytes / max_node_offnode_recv_bytes).

    latency:   ceil(log2 P) rounds are needed for every rank to reach P-1 others when a rank
               sends one message per round (store and forward at best doubles the informed
               set); each round costs at least one send and one receive overhead plus one
               network hop (intra-node latency if all ranks share one node).
    bandwidth: bytes leaving (or entering) the busiest node over its injection bandwidth.
    intra:     0. SimGrid's cluster loopback gives every intra-node flow the full loopback
               bandwidth (it behaves as a FATPIPE; measured, docs/simulation.md), so these
               platforms put no shared limit on a node's internal traffic, and a term charging
               the node's internal bytes to one loopback was not a bound (simulated runs beat
               it). Kept in the output, as 0, for the record format.
    The terms can overlap in time, so their maximum, not their sum, is the bound."""
    nodes = -(-procs // rpn)
    hop = plat["intra_lat"] if nodes == 1 else plat["link_lat"]
    rounds = math.ceil(math.log2(procs)) if procs > 1 else 0
    lat = rounds * (plat["os"] + plat["or"] + hop)
    inter = max(node_send_bytes, node_recv_bytes) / plat["injection_bw"]
    return {"bound_s": max(lat, inter), "latency_s": lat, "bandwidth_s": inter,
            "intra_s": 0.0, "rounds": rounds}


def lower_bound_collective(plat, procs, rpn, collective, S):
    """Lower bound of an allgather, allreduce or alltoall in which every rank contributes S
    bytes (alltoall: S bytes to every rank).

    latency:   ceil(log2 P) rounds, as for the all-to-all (every result depends on all P
               inputs, and the set of inputs a rank can depend on at most doubles per round).
    bandwidth: allgather: a node must receive the S bytes of every rank outside it,
               (P - rpn) S over its injection bandwidth; allreduce (N > 1 nodes): every
               element of the result depends on inputs outside the node, so at least S bytes
               must enter it; alltoall: a full node sends rpn (P - rpn) S bytes out (the
               all-to-all's bound with every block S).
    intra:     0, as for the all-to-all (no shared intra-node limit in these platforms).
    The maximum of the terms is the bound."""
    nodes = -(-procs // rpn)
    hop = plat["intra_lat"] if nodes == 1 else plat["link_lat"]
    rounds = math.ceil(math.log2(procs)) if procs > 1 else 0
    lat = rounds * (plat["os"] + plat["or"] + hop)
    local = min(rpn, procs)
    if collective == "allgather":
        inter = (procs - local) * S / plat["injection_bw"]
    elif collective == "alltoall":
        inter = local * (procs - local) * S / plat["injection_bw"]
    else:
        inter = S / plat["injection_bw"] if nodes > 1 else 0.0
    return {"bound_s": max(lat, inter), "latency_s": lat, "bandwidth_s": inter,
            "intra_s": 0.0, "rounds": rounds}


def record_bound(rec, plat, procs, rpn, cache):
    """The lower bound of a tuna-bench record's configuration, memoised in `cache`: from the
    node totals tuna-bench wrote (its physical nodes must be the rpn-rank nodes of the
    simulated placement), else, for records from before tuna-bench wrote them, the bound
    recorded by the run that made them (the same definition). None for distributions
    outside BOUNDED_DISTRIBUTIONS and for neighbor_alltoallv."""
    d = rec["dist"]
    coll = rec.get("collective", "alltoallv")
    if coll == "neighbor_alltoallv":  # no bound for neighborhoods
        return None
    if coll != "alltoallv":
        key = (plat.get("name"), coll, d.get("S_bytes"), procs, rpn)
        if key not in cache:
            cache[key] = lower_bound_collective(plat, procs, rpn, coll, d["S_bytes"])
        return cache[key]
    if d.get("name") not in BOUNDED_DISTRIBUTIONS:
        return None
    if "max_node_offnode_send_bytes" not in d:
        return (rec.get("sim") or {}).get("bound")
    nodes = rec.get("machine", {}).get("nodes")
    if nodes is not None and nodes != -(-procs // rpn):
        raise ValueError(f"{d['spec']} S={d.get('S_bytes')}: tuna-bench saw {nodes} nodes, "
                         f"the placement has {-(-procs // rpn)} ({rpn} ranks per node)")
    send, recv = d["max_node_offnode_send_bytes"], d["max_node_offnode_recv_bytes"]
    key = (plat.get("name"), procs, rpn, send, recv)
    if key not in cache:
        cache[key] = lower_bound(plat, procs, rpn, send, recv)
    return cache[key]


# ------------------------------------------------------------------ running

class MemorySampler(threading.Thread):
    """Peak rise of the system's used memory (MemTotal - MemAvailable) during a run: with
    many ranks in one process, max RSS misses shared and mmap'd memory. The machine is
    shared, so this is an upper estimate."""

    def __init__(self, period=0.25):
        super().__init__(daemon=True)
        self.period, self.stop_flag = period, threading.Event()
        self.base = self.peak = self._used()

    @staticmethod
    def _used():
        info = {}
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                k, v = line.split(":", 1)
                info[k] = int(v.split()[0])
        return info["MemTotal"] - info.get("MemAvailable", info["MemFree"])

    def run(self):
        while not self.stop_flag.wait(self.period):
            self.peak = max(self.peak, self._used())

    def rise_mib(self):
        return max(0, self.peak - self.base) / 1024.0


def bench_simgrid_prefix(bench):
    """TUNA_SIMGRID_PREFIX of the build tree that holds `bench` (cmake/smpi.cmake), i.e. the
    SimGrid whose smpicc built it, or None (Debian's, on PATH). A tuna-bench runs only
    under the smpirun of the SimGrid it was linked with."""
    d = os.path.dirname(os.path.abspath(bench))
    for _ in range(4):
        cache = os.path.join(d, "CMakeCache.txt")
        if os.path.exists(cache):
            with open(cache, encoding="utf-8", errors="replace") as f:
                for line in f:
                    if line.startswith("TUNA_SIMGRID_PREFIX:"):
                        prefix = line.split("=", 1)[1].strip()
                        return prefix or None
            return None
        d = os.path.dirname(d)
    return None


def smpirun_path(args):
    """smpirun of --simgrid PREFIX (scripts/build-simgrid.sh), else $TUNA_SIMGRID, else the
    SimGrid the bench was built with (its build tree's TUNA_SIMGRID_PREFIX), else the one on
    PATH (Debian's 3.32)."""
    prefix = getattr(args, "simgrid", None) or os.environ.get("TUNA_SIMGRID")
    if not prefix and hasattr(args, "bench"):
        try:
            prefix = bench_simgrid_prefix(find_bench(args.bench))
        except ValueError:
            prefix = None
    return os.path.join(prefix, "bin", "smpirun") if prefix else "smpirun"


_versions = {}


def simgrid_version(args):
    """The version of the SimGrid that runs (recorded with every result)."""
    exe = smpirun_path(args)
    if exe not in _versions:
        v = "?"
        try:
            out = subprocess.run([exe, "-version"], capture_output=True, text=True,
                                 timeout=60).stdout
            m = re.search(r"SimGrid version (\d+\.\d+(\.\d+)?)", out)
            v = m.group(1) if m else "?"
        except OSError:
            pass
        _versions[exe] = v
    return _versions[exe]


def run_command():
    """The `tuna ...` command line that made a record (recorded with every result)."""
    return shlex.join(["tuna"] + sys.argv[1:])


def find_bench(path):
    # Absolute: smpirun runs in a temporary directory.
    if path:
        return os.path.abspath(path)
    env = os.environ.get("TUNA_SIM_BENCH")
    if env:
        return os.path.abspath(env)
    root = project_root()
    # SimGrid 4.1's build first (scripts/build-simgrid.sh; its smpirun is then found from
    # the build tree, smpirun_path), Debian's 3.32 otherwise.
    for cand in ("build/smpi-4.1/tools/tuna-bench", "build/smpi/tools/tuna-bench",
                 "build-sim/tools/tuna-bench", "build-smpi/tools/tuna-bench"):
        if os.path.exists(os.path.join(root, cand)):
            return os.path.join(root, cand)
    raise ValueError("tuna-bench built with smpicc not found: pass --bench or set "
                     "TUNA_SIM_BENCH (build: cmake -DTUNA_SMPI=ON -DCMAKE_C_COMPILER=smpicc)")


def run_one(args, xml, plat, procs, rpn, selector, out, sweep):
    tmp = tempfile.mkdtemp(prefix="tuna-sim-")
    try:
        hostfile = os.path.join(tmp, "hosts")
        write_hostfile(hostfile, procs, rpn, plat["nodes"])
        jsonl = os.path.join(tmp, "bench.jsonl")
        extra = list(SCALE_CFG if args.scale else ()) + list(args.cfg or ())
        cfg = smpi_config(plat, selector, args.precision, extra, args.collective,
                          args.library_colls)
        bench_args = ["-a", args.algorithms, "-s", args.sizes, "-n", str(args.iters),
                      "-w", str(args.warmup), "--json", jsonl, "-q",
                      "--run-name", f"sim-{plat['name']}"]
        if not args.discover_nodes:
            # tuna learns the node layout from TUNA_RANKS_PER_NODE (node-major, as the
            # hostfile places ranks) instead of an MPI_Allgather on its first call: SMPI's
            # default allgather posts all P^2 messages at once, which dominated the cost of
            # large runs and, with -w 0, the first (timed) call's simulated time.
            bench_args += ["--ranks-per-node", str(rpn)]
        if args.no_vendor:
            bench_args.append("--no-vendor")
        if args.no_verify:
            bench_args.append("--no-verify")
        if not args.phases:
            bench_args.append("--no-phases")
        if args.plan:
            bench_args += ["--plan", args.plan]
        if args.nonblocking:
            bench_args.append("--nonblocking")
        if getattr(args, "until_learned", False):
            bench_args.append("--until-learned")
        if args.poll is not None:
            bench_args += ["--poll", f"{args.poll:g}"]
        bench_args += launch.bench_workload(args.collective, args.dist)
        for p in args.param or []:
            bench_args += ["--param", p]
        cmd = [smpirun_path(args), "-np", str(procs), "-platform", xml, "-hostfile", hostfile]
        cmd += [f"--cfg={c}" for c in cfg]
        cmd += ["--log=root.thres:warning", find_bench(args.bench)] + bench_args
        timefile = os.path.join(tmp, "time")
        full = ["/usr/bin/time", "-f", "%e %M %U %S", "-o", timefile] + cmd \
            if os.path.exists("/usr/bin/time") else cmd
        if args.verbose:
            print("+ " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
        mem = MemorySampler()
        mem.start()
        t0 = time.monotonic()
        sweep.start_run(jsonl)
        # A session of its own: on timeout the whole group goes, smpimain included
        # (subprocess.run would kill /usr/bin/time only and leave the simulator running).
        # Output to files, not pipes: the loop below polls the JSON lines for progress.
        errpath = os.path.join(tmp, "stderr")
        with open(os.path.join(tmp, "stdout"), "w") as fout, open(errpath, "w") as ferr, \
                subprocess.Popen(full, cwd=tmp, stdout=fout, stderr=ferr,
                                 start_new_session=True) as proc:
            try:
                while True:
                    try:
                        proc.wait(timeout=0.5)
                        break
                    except subprocess.TimeoutExpired:
                        sweep.poll()
                        if args.timeout is not None and time.monotonic() - t0 > args.timeout:
                            raise
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
                mem.stop_flag.set()
                mem.join()
                # The configurations tuna-bench finished are kept (its JSON lines are written
                # one per configuration as it goes); the unfinished rest is recorded as a
                # timeout, so a table can say what did not finish (and after how long).
                done = write_records(args, jsonl, xml, plat, procs, rpn, selector, cfg, out,
                                     {"wall_s": None, "cpu_s": None, "max_rss_kib": None,
                                      "mem_rise_mib": round(mem.rise_mib(), 1),
                                      "killed_after_s": round(time.monotonic() - t0, 2)})
                write_unfinished(args, plat, procs, rpn, selector, cfg, out, "timeout",
                                 wall_s=round(time.monotonic() - t0, 2),
                                 timeout_s=args.timeout, finished_configurations=len(done),
                                 mem_rise_mib=round(mem.rise_mib(), 1))
                raise OSError(f"smpirun timed out after {args.timeout:g} s (P={procs}, "
                              f"{selector}; {len(done)} configurations finished and kept)") \
                    from None
        wall = time.monotonic() - t0
        mem.stop_flag.set()
        mem.join()
        rss = cpu = None
        if os.path.exists(timefile):
            with open(timefile, encoding="ascii") as f:
                last = f.read().strip().splitlines()[-1:]
            if last and len(last[0].split()) == 4:
                fields = last[0].split()
                rss, cpu = int(fields[1]), float(fields[2]) + float(fields[3])
        sweep.poll()
        if proc.returncode != 0:
            with open(errpath, encoding="utf-8", errors="replace") as f:
                stderr = f.read()
            tail = "\n".join(stderr.strip().splitlines()[-15:])
            # Recorded, as a timeout is: the table says what failed, and the other
            # selectors of the same command still run (cmd_run).
            write_unfinished(args, plat, procs, rpn, selector, cfg, out, "failed",
                             wall_s=round(wall, 2), exit=proc.returncode, error=tail)
            raise OSError(f"smpirun failed (P={procs}, {selector}, exit "
                               f"{proc.returncode}):\n{tail}")
        records = write_records(args, jsonl, xml, plat, procs, rpn, selector, cfg, out,
                                {"wall_s": round(wall, 2), "cpu_s": cpu, "max_rss_kib": rss,
                                 "mem_rise_mib": round(mem.rise_mib(), 1)})
        return records, wall, rss, mem.rise_mib()
    finally:
        keep = getattr(args, "stderr", None)
        errfile = os.path.join(tmp, "stderr")
        if keep and os.path.exists(errfile):  # --stderr: the run's stderr (e.g. TUNA_VERBOSE)
            with open(errfile, encoding="utf-8", errors="replace") as fin, \
                    open(keep, "a", encoding="utf-8") as fout:
                fout.write(fin.read())
        shutil.rmtree(tmp, ignore_errors=True)


def write_unfinished(args, plat, procs, rpn, selector, cfg, out, status, **sim):
    """One record for an smpirun that did not finish (status "timeout" or "failed"): the
    command's algorithms, the run's SMPI set-up and what sim adds (wall time, limit, error)."""
    out.write(json.dumps({
        "algorithm": args.algorithms, "params": args.param or [],
        "status": status, "machine": {"P": procs},
        "dist": {"spec": ",".join(args.dist or ["uniform"]), "sizes": args.sizes},
        "sim": {"platform": plat["name"], "ranks_per_node": rpn,
                "selector": selector, "smpi_cfg": cfg,
                "simgrid": simgrid_version(args), "command": run_command(),
                "scale_preset": bool(args.scale), **sim}}) + "\n")
    out.flush()


def write_records(args, jsonl, xml, plat, procs, rpn, selector, cfg, out, cost):
    """tuna-bench's records of one smpirun, each with its "sim" section (platform, SMPI
    configuration, lower bound, the run's cost), appended to out; returns them. A killed run
    passes what it has: a line cut off by the kill is dropped."""
    records = []
    if os.path.exists(jsonl):
        with open(jsonl, encoding="utf-8") as f:
            for line in f:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass  # the last line of a killed run
    bounds = {}
    for rec in records:
        lb = record_bound(rec, plat, procs, rpn, bounds)
        sim = {"platform": plat["name"], "platform_xml": os.path.basename(xml),
               "topology": plat["topology"], "nodes": -(-procs // rpn),
               "ranks_per_node": rpn, "selector": selector,
               "smpi_cfg": cfg, "simgrid": simgrid_version(args),
               "command": run_command(),
               "tuna_nodes": "discovered" if args.discover_nodes else "TUNA_RANKS_PER_NODE",
               "scale_preset": bool(args.scale), **cost, "bound": lb}
        if lb and rec.get("time"):  # error records have no time
            sim["ratio_to_bound"] = rec["time"]["median"] / lb["bound_s"]
            if rec.get("vendor") is not None:  # null with --no-vendor
                sim["vendor_ratio_to_bound"] = rec["vendor"]["median"] / lb["bound_s"]
        rec["sim"] = sim
        out.write(json.dumps(rec) + "\n")
    out.flush()
    return records


def cmd_run(args):
    if args.scale:
        args.no_vendor = args.no_verify = True
    if args.precision is None:
        args.precision = SCALE_PRECISION if args.scale else PRECISION
    xml, plat = load_platform(args.platform)
    rpn = args.rpn or plat["ranks_per_node"]
    out = open(args.output, "a" if args.append else "w", encoding="utf-8") \
        if args.output != "-" else sys.stdout
    selectors = args.selectors.split(",")
    sweep = progress.sweep_bar(len(args.procs) * len(selectors), args.quiet,
                               f"tuna sim {plat['name']}")
    failed = []
    try:
        for procs in args.procs:
            for sel in selectors:
                # One smpirun that fails or times out (recorded by run_one) does not cost
                # the others: SimGrid aborts on some algorithm/platform pairs (3.35, P = 256,
                # the Fugaku-like torus, alltoall basic_linear) that its other ones simulate.
                try:
                    recs, wall, rss, rise = run_one(args, xml, plat, procs, rpn, sel, out,
                                                    sweep)
                except OSError as e:
                    failed.append(str(e))
                    progress.note(f"tuna sim: {e}")
                    continue
                if not args.quiet:
                    progress.note(f"tuna sim: {plat['name']} P={procs} rpn={rpn} "
                                  f"{args.collective}={sel}: {len(recs)} configurations, wall "
                                  f"{wall:.1f} s, max RSS {(rss or 0) / 1024:.0f} MiB, system "
                                  f"memory +{rise:.0f} MiB")
    finally:
        sweep.close()
        if out is not sys.stdout:
            out.close()
    if failed:
        raise OSError(f"{len(failed)} of {len(args.procs) * len(selectors)} smpiruns failed "
                      "or timed out (recorded in the output; the others ran)")
    return 0


def find_native_bench(path):
    """A tuna-bench that runs without a launcher (not the smpicc one): `tuna sim bound` asks
    it for a data set's facts (tuna-bench --facts)."""
    root = project_root()
    for cand in (path, os.environ.get("TUNA_BENCH"), shutil.which("tuna-bench"),
                 os.path.join(root, "build", "openmpi", "tools", "tuna-bench"),
                 os.path.join(root, "build", "dev", "tools", "tuna-bench"),
                 os.path.join(root, "build", "main", "tools", "tuna-bench")):
        if cand and os.path.exists(cand):
            return os.path.abspath(cand)
    raise ValueError("tuna-bench not found: pass --bench (a build with mpicc, not smpicc)")


def bench_record(bench, procs, rpn, dist, size, seed, matrix=False, type_name=None):
    """tuna-bench --facts P [--matrix]: the data set's record, computed by tuna-bench alone
    (no launcher): "dist" holds the facts tuna-bench would record, node totals over nodes of
    rpn consecutive ranks included; with matrix, "matrix" the P x P block sizes in bytes (row
    i: what rank i sends to each rank j)."""
    cmd = [bench, "--facts", str(procs), "--ranks-per-node", str(rpn), "-d", dist,
           "-s", str(size), "--seed", str(seed)]
    cmd += ["--matrix"] if matrix else []
    cmd += ["--type", type_name] if type_name not in (None, "byte") else []
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ValueError(f"{shlex.join(cmd)}: {proc.stderr.strip()}")
    return json.loads(proc.stdout.splitlines()[0])


def bench_facts(bench, procs, rpn, dist, size, seed):
    """The "dist" object tuna-bench would record for this data set (bench_record)."""
    return bench_record(bench, procs, rpn, dist, size, seed)["dist"]


def size_matrix(dist, procs, S, seed, bench=None):
    """The block sizes tuna-bench draws for a data set (bench_record's "matrix") as a numpy
    array. dist: a distribution spec ("uniform", "powerlaw:exponent=1.5") or a record's
    "dist"."""
    import numpy as np
    spec, type_name = (dist["spec"], dist.get("type")) if isinstance(dist, dict) else (dist, None)
    rec = bench_record(find_native_bench(bench), procs, procs, spec, S, seed, matrix=True,
                       type_name=type_name)
    return np.array(rec["matrix"], dtype=float)


def cmd_bound(args):
    _, plat = load_platform(args.platform)
    rpn = args.rpn or plat["ranks_per_node"]
    d = bench_facts(find_native_bench(args.bench), args.procs, rpn, args.dist, args.size,
                    args.seed)
    print(json.dumps(lower_bound(plat, args.procs, rpn, d["max_node_offnode_send_bytes"],
                                 d["max_node_offnode_recv_bytes"]), indent=2))
    return 0


# ------------------------------------------------------------------ summaries

def family(rec):
    return rec["algorithm"]


def best_by_algorithm(records):
    """{(platform, P, rpn, dist spec or collective, S): {name: record of the fastest
    parameters}}; the SMPI selectors' own collective appears as 'smpi-SELECTOR' (median of the
    vendor timings of the run)."""
    from tuna_tools import results
    groups = {}
    for r in records:
        if r.get("status") != "ok" or "sim" not in r:
            continue
        s = r["sim"]
        label = results.dist_label(r)
        if s.get("scale_preset"):  # rendezvous sends: another model, never mixed
            label += " [rendezvous]"
        key = (s["platform"], r["machine"]["P"], s["ranks_per_node"], label,
               r["dist"].get("S_bytes"))
        g = groups.setdefault(key, {})
        name = family(r)
        if name == "vendor":
            name = f"smpi-{s['selector']}"
            t = r["time"]["median"]
        else:
            t = r["time"]["median"]
        vname = f"smpi-{s['selector']}"
        # --no-vendor: only the 'vendor' algorithm's own time measures the selector.
        vt = r["vendor"]["median"] if r.get("vendor") is not None else \
            (t if name == vname else None)
        if vt is not None and (vname not in g or vt < g[vname][0]):
            g[vname] = (vt, r, "")
        if name.startswith("smpi-"):
            continue
        if name not in g or t < g[name][0]:
            g[name] = (t, r, r["options"])
    return groups


def current_bound(rec, plat_cache, bound_cache):
    """The bound of a simulated record by today's definition (results files keep the bound
    of the run that made them); the one recorded if its platform is not in sim/platforms."""
    s = rec["sim"]
    name = s["platform"]
    if name not in plat_cache:
        try:
            plat_cache[name] = load_platform(name)[1]
        except ValueError:
            plat_cache[name] = None
    if plat_cache[name] is None:
        return s.get("bound")
    return record_bound(rec, plat_cache[name], rec["machine"]["P"], s["ranks_per_node"],
                        bound_cache)


def cmd_summary(args):
    from tuna_tools import results
    recs = results.load(args.files)
    groups = best_by_algorithm(recs)
    plat_cache, bound_cache = {}, {}
    for key in sorted(groups, key=lambda k: (k[0], k[3], k[1], k[4] or 0)):
        plat, procs, rpn, spec, S = key
        g = groups[key]
        any_rec = next(iter(g.values()))[1]
        lb = current_bound(any_rec, plat_cache, bound_cache) or {}
        print(f"\n#### {plat}, P={procs} ({rpn} per node), {spec}, S={S} B — bound "
              f"{lb.get('bound_s', float('nan')) * 1e6:.1f} us (latency "
              f"{lb.get('latency_s', 0) * 1e6:.1f}, network {lb.get('bandwidth_s', 0) * 1e6:.1f}"
              f", intra {lb.get('intra_s', 0) * 1e6:.1f})\n")
        print("| algorithm | best parameters | time (us) | ratio to bound |")
        print("|---|---|---:|---:|")
        for name, (t, _, opts) in sorted(g.items(), key=lambda kv: kv[1][0]):
            ratio = t / lb["bound_s"] if lb.get("bound_s") else float("nan")
            print(f"| {name} | {opts} | {t * 1e6:.1f} | {ratio:.2f} |")
    return 0


def cmd_table(args):
    """One Markdown row per (platform, P, distribution, S): the bound, the SMPI selectors'
    alltoallv and each algorithm at its best parameters (time, ratio to the bound)."""
    from tuna_tools import results
    groups = best_by_algorithm(results.load(args.files))
    plat_cache, bound_cache = {}, {}
    names = []
    for g in groups.values():
        for n in g:
            if n not in names:
                names.append(n)
    names.sort(key=lambda n: (not n.startswith("smpi-"), n))
    print("| platform | P | sizes | S | bound (us) | " +
          " | ".join(f"{n} (us, x bound)" for n in names) + " |")
    print("|---|---:|---|---:|---:|" + "---:|" * len(names))
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[3], k[4] or 0)):
        plat, procs, rpn, label, S = key
        g = groups[key]
        lb = current_bound(next(iter(g.values()))[1], plat_cache, bound_cache) or {}
        b = lb.get("bound_s")
        cells = []
        for n in names:
            if n not in g:
                cells.append("-")
                continue
            t, rec, _ = g[n]
            par = ",".join(str(v) for v in rec["params"].values()) if not n.startswith("smpi-") \
                else ""
            cells.append(f"{t * 1e6:.1f}" + (f" ({par})" if par else "") +
                         (f", {t / b:.1f}x" if b else ""))
        print(f"| {plat} | {procs} | {label} | {S} | {b * 1e6 if b else float('nan'):.1f} | " +
              " | ".join(cells) + " |")
    return 0


def regression_ratios(records):
    """{"platform P rpn spec S": smpi-vendor time / best tuna time} per configuration."""
    out = {}
    for key, g in best_by_algorithm(records).items():
        tuna = [v[0] for k, v in g.items() if not k.startswith("smpi-")]
        vend = [v[0] for k, v in g.items() if k.startswith("smpi-")]
        if tuna and vend:
            out[" ".join(str(x) for x in key)] = min(vend) / min(tuna)
    return out


def regression_times(records):
    """{"platform P rpn spec S options": simulated median time (s)} per configuration."""
    out = {}
    for r in records:
        if r.get("status") != "ok" or "sim" not in r or not r.get("time"):
            continue
        d = r["dist"]
        key = (r["sim"]["platform"], r["machine"]["P"], r["sim"]["ranks_per_node"],
               d.get("spec", r.get("collective")), d.get("S_bytes"), r["options"])
        out[" ".join(str(x) for x in key)] = r["time"]["median"]
    return out


def cmd_check(args):
    """Ratios (vendor / best tuna: higher is better) or, with --times, each configuration's
    simulated time (lower is better) against a recorded baseline."""
    from tuna_tools import results
    records = results.load(args.files)
    kind = "times" if args.times else "ratios"
    got = regression_times(records) if args.times else regression_ratios(records)
    if args.record:
        with open(args.baseline, "w", encoding="utf-8") as f:
            json.dump({"tolerance": args.tolerance, kind: got}, f, indent=2, sort_keys=True)
            f.write("\n")
        print(f"tuna sim check: recorded {len(got)} {kind} in {args.baseline}")
        return 0
    with open(args.baseline, encoding="utf-8") as f:
        base = json.load(f)
    if kind not in base:
        print(f"tuna sim check: {args.baseline} holds no {kind}", file=sys.stderr)
        return 2
    tol = base.get("tolerance", args.tolerance)
    bad = 0
    for key, want in sorted(base[kind].items()):
        have = got.get(key)
        if have is None:
            print(f"MISSING {key}")
            bad += 1
            continue
        # Both kinds as "how much better than the baseline": > 1 better, < 1 worse.
        gain = want / have if args.times else have / want
        what = (f"time {have * 1e6:.2f} us, baseline {want * 1e6:.2f} us" if args.times else
                f"vendor/best-tuna {have:.3f}, baseline {want:.3f}")
        if gain < 1 - tol:
            print(f"SLOWER  {key}: {what}")
            bad += 1
        elif args.identical and gain > 1 + tol:
            print(f"FASTER  {key}: {what}")
            bad += 1
        else:
            print(f"{'faster' if gain > 1 + tol else 'ok':7s} {key}: {what}")
    print(f"tuna sim check: {len(base[kind]) - bad} of {len(base[kind])} "
          + (f"identical (relative difference <= {tol:g})" if args.identical else
             f"within {tol:.0%} or better"))
    return 1 if bad else 0


def _int_list(text):
    try:
        return [int(x) for x in text.split(",") if x]
    except ValueError:
        raise ValueError(f"expected a comma-separated list of integers, got '{text}'") from None


def register(subparsers):
    parser = subparsers.add_parser(
        "sim", help="run tuna-bench under SimGrid SMPI on a simulated platform",
        description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="sim_command", metavar="SUBCOMMAND")
    sub.required = True

    r = sub.add_parser("run", help="a sweep under smpirun, JSON lines tagged with the platform")
    r.add_argument("--platform", required=True,
                   help="fugaku | polaris | fattree (sim/platforms) or a path to an .xml")
    r.add_argument("--procs", type=_int_list, required=True, help="P values, e.g. 256,1024")
    r.add_argument("--rpn", type=int, help="ranks per node (default: the platform's)")
    r.add_argument("--collective", choices=launch.COLLECTIVES,
                   default="alltoallv", help="tuna-bench --collective (default: %(default)s)")
    r.add_argument("-a", "--algorithms", default="tuna,coalesced,staggered",
                   help="tuna-bench algorithm list (default: %(default)s)")
    r.add_argument("--param", action="append", help="tuna-bench --param NAME=SPEC")
    r.add_argument("-s", "--sizes", default="16,256,4K,16K", help="tuna-bench size spec")
    r.add_argument("-d", "--dist", action="append", help="tuna-bench distribution (repeat)")
    r.add_argument("-n", "--iters", type=int, default=1,
                   help="timed iterations (simulated times are deterministic; default 1)")
    r.add_argument("-w", "--warmup", type=int, default=0,
                   help="warm-up iterations (the first call is always verified; default 0)")
    r.add_argument("--selectors", default="default",
                   help="SMPI selectors of the measured collective (smpi/COLLECTIVE:SELECTOR), one "
                        "smpirun each: default,ompi,mpich")
    r.add_argument("--no-vendor", action="store_true",
                   help="tuna-bench --no-vendor: do not simulate the SMPI MPI_Alltoallv next "
                        "to every configuration (add -a vendor to measure it once)")
    r.add_argument("--no-verify", action="store_true",
                   help="tuna-bench --no-verify: unverified, SMPI_SHARED_MALLOC'ed payloads "
                        "(memory flat in P)")
    r.add_argument("--plan", choices=["estimate", "measure"],
                   help="tuna-bench --plan: time persistent plans (docs/plans.md)")
    r.add_argument("--nonblocking", action="store_true",
                   help="tuna-bench --nonblocking: overlap of the nonblocking form with "
                        "simulated computation (docs/nonblocking.md, Overlap)")
    r.add_argument("--until-learned", action="store_true",
                   help="tuna-bench --until-learned: auto's learning warm-up ends at the first "
                        "call that runs the learned winner (not the 90 calls' cap)")
    r.add_argument("--poll", type=float,
                   help="tuna-bench --poll F: with --nonblocking, test every F of the pure time")
    r.add_argument("--phases", action="store_true",
                   help="record tuna_stats phase times (prepare, metadata, data, ...) in extra "
                        "calls after the timed ones (the timed calls never record: same "
                        "times as without; costs simulation time only)")
    r.add_argument("--scale", action="store_true",
                   help="large-P preset: --no-vendor --no-verify plus --cfg " +
                        " --cfg ".join(SCALE_CFG) + " (rendezvous sends: a different "
                        "model, see sim.py)")
    r.add_argument("--discover-nodes", action="store_true",
                   help="let tuna discover the nodes with MPI on its first call (an "
                        "MPI_Allgather inside the first timed call) instead of passing "
                        "--ranks-per-node RPN to tuna-bench")
    r.add_argument("--precision", type=float, default=None,
                   help=f"surf/precision of SimGrid's solver (default {PRECISION:g}; "
                        f"{SCALE_PRECISION:g} with --scale)")
    r.add_argument("--cfg", action="append", help="extra SimGrid --cfg=KEY:VALUE")
    r.add_argument("--library-colls", choices=["log", "default"], default="log",
                   help="the MPI library's barrier (tuna-bench's synchronisation) and small "
                        "allreduce (tuna's agreement): 'log' = dissemination barrier and "
                        "recursive doubling, as MPI libraries run them (default); 'default' = "
                        "SMPI's own, linear in P (runs before 2026-11-22)")
    r.add_argument("--simgrid", metavar="PREFIX",
                   help="run with the SimGrid installed at PREFIX (scripts/build-simgrid.sh; "
                        "default: $TUNA_SIMGRID, else the one the bench's build tree names "
                        "(-DTUNA_SIMGRID_PREFIX), else smpirun on PATH, Debian's 3.32); the "
                        "bench must be built with its smpicc")
    r.add_argument("--bench", help="tuna-bench built with smpicc (default: $TUNA_SIM_BENCH, "
                   "else build/smpi-4.1/ (SimGrid 4.1), build/smpi/ (scripts/test.sh), "
                   "build-sim/ or build-smpi/)")
    r.add_argument("--timeout", type=float, default=None,
                   help="seconds per smpirun (a killed run leaves a record with status "
                        "'timeout' and exits non-zero)")
    r.add_argument("-o", "--output", default="-", help="JSON lines file (default stdout)")
    r.add_argument("--append", action="store_true")
    r.add_argument("--stderr", metavar="FILE", default=None,
                   help="append each smpirun's stderr to FILE (e.g. TUNA_VERBOSE=1 lines)")
    r.add_argument("-v", "--verbose", action="store_true")
    r.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar and no per-run summary on stderr (the bar is shown "
                        "only on a terminal)")
    r.set_defaults(func=cmd_run)

    b = sub.add_parser("bound", help="lower bound of one configuration")
    b.add_argument("--platform", required=True)
    b.add_argument("--procs", type=int, required=True)
    b.add_argument("--rpn", type=int)
    b.add_argument("--dist", default="uniform", choices=["uniform", "normal", "powerlaw"])
    b.add_argument("--size", type=int, required=True, help="maximum block size S in bytes")
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--bench", help="tuna-bench built with mpicc, which computes the data set "
                   "(default: $TUNA_BENCH, PATH, build/{openmpi,dev,main}/)")
    b.set_defaults(func=cmd_bound)

    s = sub.add_parser("summary", help="Markdown tables from `tuna sim run` output")
    s.add_argument("files", nargs="+")
    s.set_defaults(func=cmd_summary)

    t = sub.add_parser("table", help="one Markdown row per configuration: bound, SMPI, each "
                                     "algorithm's best parameters")
    t.add_argument("files", nargs="+")
    t.set_defaults(func=cmd_table)

    c = sub.add_parser("check", help="compare ratios against a recorded baseline")
    c.add_argument("files", nargs="+")
    c.add_argument("--baseline", required=True)
    c.add_argument("--tolerance", type=float, default=0.05)
    c.add_argument("--record", action="store_true", help="write the baseline instead")
    c.add_argument("--times", action="store_true",
                   help="compare each configuration's simulated time instead of the ratio "
                        "vendor / best tuna (a schedule guard)")
    c.add_argument("--identical", action="store_true",
                   help="fail on a difference either way beyond the baseline's tolerance, "
                        "faster too (an identity check: the same platform under two SimGrid "
                        "versions, sim/simgrid_identity.sh)")
    c.set_defaults(func=cmd_check)
