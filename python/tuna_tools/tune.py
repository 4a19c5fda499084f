"""``tuna tune``: tuning tables for ``auto`` (docs/tuning.md).

  tuna tune run      run tuna-bench sweeps locally under mpiexec (every algorithm and a
                     parameter grid, plus auto, vendor measured interleaved), write the JSON
                     lines, and build the table from them
  tuna tune build    build the table from existing tuna-bench JSON lines (local runs,
                     `tuna sim run` output, several files at once)
  tuna tune check    validate tables: the JSON Schema (data/tuning.schema.json), then
                     libtuna's own reader (tuna-model --check-tuning); build and run do the
                     same before they write
  tuna tune profile  the machine profile (TUNA_PROFILE) of a simulated platform
                     (sim/platforms/NAME.json), so model and simulation describe one machine,
                     with vendor_alltoallv for the SMPI selector (--selector)
  tuna tune quality  selection quality of auto in JSON lines that hold auto and an
                     exhaustive sweep of the same cells: best / auto (best over tuna's
                     configurations, vendor excluded) and vendor / auto per cell
  tuna tune model    the cost model (tuna-model, TUNA_PROFILE) against measured sweeps:
                     per cell the configuration it ranks first among those measured, and
                     its measured time against the measured best

Table key: (collective, P, ranks per node, size bucket, sparsity bucket for alltoallv), with
the buckets libtuna uses (both read data/selection.json): size bucket = ceil(log2(max block
bytes)), 0 for blocks <= 1 byte; sparsity bucket = floor(4 * fraction of empty blocks), at
most 3. Entries are written as ranges (tuning_table.spread; --exact: one entry per key), and
libtuna runs the first entry whose ranges hold its inputs.
Within a key, a configuration is scored by the geometric mean over the key's cells
(distribution x size) of its median time / the cell's best median time, counting only
configurations measured in every cell; the lowest score wins.
"""
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

from tuna_tools import results
# The buckets as libtuna computes them: both read data/selection.json.
from tuna_tools.selection import size_bucket, sparsity_bucket  # noqa: F401 (also tune's API)
from tuna_tools import launch, progress, selection, tuning_table


def key_of(rec):
    d = rec["dist"]
    m = rec["machine"]
    return (m["P"], m.get("ranks_per_node") or 0, size_bucket(d["max_block_bytes"]),
            sparsity_bucket(d["zero_fraction"]))


def cell_of(rec):
    """A measured cell: machine (simulated platform or run name), distribution, size."""
    d = rec["dist"]
    where = (rec.get("sim") or {}).get("platform") or (rec.get("run") or {}).get("name", "")
    return (d["spec"], d.get("S_bytes"), d.get("file"), d["seed"], where)


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("inf")


def build_table(records, source, exact=False):
    """The table from tuna-bench records: per measured key (collective, P, ranks per node,
    size bucket, sparsity bucket for alltoallv) the best configuration, keys spread into
    ranges (tuning_table.spread) unless exact. An exact alltoallv-only table is written as
    version 1, which older libtuna reads too."""
    groups = {}
    for r in results.ok(records):
        if r["algorithm"] == "auto":
            continue
        key = (r.get("collective", "alltoallv"),) + key_of(r)
        cells = groups.setdefault(key, {})
        cells.setdefault(cell_of(r), {})[r["options"]] = r
    entries = []
    for key in sorted(groups):
        cells = groups[key]
        best = {c: min(rs[o]["time"]["median"] for o in rs) for c, rs in cells.items()}
        common = set.intersection(*(set(rs) for rs in cells.values()))
        if not common:
            continue
        scored = sorted(
            (_geomean([cells[c][o]["time"]["median"] / best[c] for c in cells]), o)
            for o in common)
        score, opts = scored[0]
        times = [cells[c][opts]["time"]["median"] for c in cells]
        vtimes = [cells[c][opts]["vendor"]["median"] for c in cells
                  if cells[c][opts].get("vendor")]
        entry = {"collective": key[0], "P": key[1], "ranks_per_node": key[2],
                 "size_bucket": key[3]}
        if key[0] == "alltoallv":
            entry["sparsity_bucket"] = key[4]
        entry.update({"options": opts, "time": _geomean(times)})
        if len(vtimes) == len(times):
            entry["vendor_time"] = _geomean(vtimes)
        entry["source"] = (f"{source}; {len(cells)} cell(s), {len(common)} configurations, "
                           f"score {score:.3f}")
        entries.append(entry)
    if exact and all(e["collective"] == "alltoallv" for e in entries):
        for e in entries:
            del e["collective"]
        return {"tuna_tuning": 1, "collective": "alltoallv", "entries": entries}
    return {"tuna_tuning": 2, "entries": entries if exact else tuning_table.spread(entries)}


def optional_model(path):
    """tuna-model for libtuna's check of a written table, or None (then only the schema)."""
    try:
        return find_model(path)
    except ValueError:
        return None


def write_table(table, path, model=None):
    """Validate (schema; libtuna's reader when tuna-model is found), then write."""
    model = optional_model(model)
    tuning_table.validate(table, model)
    text = json.dumps(table, indent=1) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        checked = "schema and libtuna" if model else "schema (no tuna-model to run libtuna's check)"
        print(f"tuna tune: {len(table['entries'])} entries written to {path}, checked by "
              f"{checked}", file=sys.stderr)


def cmd_check(args):
    """`tuna tune check FILE...`: the schema, then libtuna's own reader (tuna-model)."""
    model = None if args.schema_only else find_model(args.model)
    bad = 0
    for path in args.files:
        try:
            with open(path, encoding="utf-8") as f:
                table = json.load(f)
            errors = tuning_table.schema_errors(table)
            if errors:
                raise ValueError("schema: " + "; ".join(errors))
            note = "schema ok"
            if model:
                ok, text = tuning_table.library_check(path, model)
                if not ok:
                    raise ValueError(f"libtuna: {text}")
                note = text.split(": ", 1)[-1]
            print(f"{path}: ok ({note})")
        except (ValueError, OSError) as err:  # json.JSONDecodeError is a ValueError
            print(f"{path}: {err}")
            bad += 1
    return 1 if bad else 0


def quality(records, normalize=False):
    """Rows (key, cell, auto time, best time, best options, vendor time) per cell with auto.
    normalize: each record's time is divided by the vendor time measured interleaved with
    it (same period of machine load), so drifting load on a shared machine cancels; the
    vendor column is then 1. Vendor's time is the one measured interleaved with auto, else
    that of a 'vendor' record of the cell (runs with --no-vendor), else None."""
    cells = {}
    for r in results.ok(records):
        cells.setdefault((key_of(r), cell_of(r)), []).append(r)
    rows = []
    for (key, cell), rs in sorted(cells.items(), key=lambda kv: repr(kv[0])):
        auto = [r for r in rs if r["algorithm"] == "auto"]
        # auto chooses among tuna's algorithms: vendor is compared separately (last column)
        others = [r for r in rs if r["algorithm"] not in ("auto", "vendor")]
        if not auto or not others:
            continue
        def t(r):
            return r["time"]["median"] / (r["vendor"]["median"] if normalize else 1.0)
        a = t(auto[0])
        b = min(others, key=t)
        if normalize:
            vendor = 1.0
        elif auto[0].get("vendor"):
            vendor = auto[0]["vendor"]["median"]
        else:
            vrec = [r for r in rs if r["algorithm"] == "vendor"]
            vendor = vrec[0]["time"]["median"] if vrec else None
        rows.append((key, cell, a, t(b), b["options"], vendor))
    return rows


def auto_choices(records):
    """What auto ran per (key, cell): tuna-bench's auto_choice (its last call before the timed ones)
    ('-' for records from before tuna-bench wrote it)."""
    return {(key_of(r), cell_of(r)): r.get("auto_choice", {}).get("options", "-")
            for r in results.ok(records) if r["algorithm"] == "auto"}


def cmd_quality(args):
    recs = results.load(args.files)
    rows = quality(recs, args.normalize)
    ran = auto_choices(recs)
    unit, scale = ("x vendor", 1.0) if args.normalize else ("us", 1e6)
    if not rows:
        raise ValueError("no cell holds both an auto record and other configurations")
    print(f"| machine | P | Q | distribution | S (B) | auto ({unit}) | auto ran | best ({unit}) "
          "| best configuration | best/auto | vendor/auto |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    qs, vs = [], []
    for key, cell, a, b, bo, v in rows:
        qs.append(b / a)
        if v is not None:
            vs.append(v / a)
        vtext = f"{v / a:.3f}" if v is not None else "-"
        print(f"| {cell[4]} | {key[0]} | {key[1]} | {cell[0]} | {cell[1]} | {a * scale:.3g} "
              f"| `{ran.get((key, cell), '-')}` | {b * scale:.3g} "
              f"| `{bo}` | {b / a:.3f} | {vtext} |")
    vsum = (f"vendor/auto geometric mean {_geomean(vs):.3f}, worst {min(vs):.3f}" if vs
            else "no vendor time")
    print(f"\n{len(rows)} cells: best/auto geometric mean {_geomean(qs):.3f}, worst "
          f"{min(qs):.3f}; {vsum}")
    if args.min_quality is not None and _geomean(qs) < args.min_quality:
        print(f"tuna tune quality: geometric mean {_geomean(qs):.3f} below "
              f"{args.min_quality}", file=sys.stderr)
        return 1
    return 0


def model_input(rec, options):
    """tuna-model's input line for a record's statistics and an option string."""
    m, d = rec["machine"], rec["dist"]
    P, N, q = m["P"], m.get("nodes") or 1, m.get("ranks_per_node") or 0
    Q = q if q * N == P else 0
    return (f"{P} {Q} {N} {d['max_block_bytes']} {d['mean_block_bytes']} "
            f"{d['max_rank_bytes']} {d['zero_fraction']} {options}")


def find_model(path):
    """tuna-model: --model, $TUNA_MODEL, on PATH, or in the source tree's Open MPI build."""
    from tuna_tools import sim
    for cand in (path, os.environ.get("TUNA_MODEL"), shutil.which("tuna-model"),
                 os.path.join(sim.project_root(), "build", "openmpi", "tools", "tuna-model")):
        if cand and os.path.exists(cand):
            return os.path.abspath(cand)
    raise ValueError("tuna-model not found: pass --model or set TUNA_MODEL (it is built with "
                     "tuna, tools/model)")


def model_check(records, model):
    """Per cell: the configuration the model ranks first among those measured, its measured
    time, the measured best (both among tuna's configurations, as in quality()), and what auto
    would run with the same statistics. Returns (rows, predictions, cells); the model runs
    under TUNA_PROFILE."""
    cells = {}
    for r in results.ok(records):
        if r["algorithm"] != "auto":
            cells.setdefault((key_of(r), cell_of(r)), {})[r["options"]] = r
    lines, where = [], []
    for kc, cfg in sorted(cells.items(), key=lambda kv: repr(kv[0])):
        any_rec = next(iter(cfg.values()))
        for o in list(cfg) + ["auto"]:
            lines.append(model_input(any_rec, o))
            where.append((kc, o))
    proc = subprocess.run([model], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=600)
    out = proc.stdout.splitlines()
    if len(out) != len(lines):
        raise ValueError(f"tuna-model answered {len(out)} of {len(lines)} lines: "
                         f"{proc.stderr.strip()}")
    pred = {}
    for (kc, o), text in zip(where, out):
        if text.startswith("error:"):
            raise ValueError(f"tuna-model: {o}: {text}")
        t, resolved = text.split(" ", 1)
        pred.setdefault(kc, {})[o] = (float(t), resolved)
    rows = []
    for kc, cfg in sorted(cells.items(), key=lambda kv: repr(kv[0])):
        # tuna's configurations only: a measured vendor lacks the agreement allreduce that
        # every other one pays (tune quality compares vendor separately)
        measured = {o: r["time"]["median"] for o, r in cfg.items() if r["algorithm"] != "vendor"}
        if not measured:
            continue
        best = min(measured, key=measured.get)
        pick = min(measured, key=lambda o: pred[kc][o][0])
        rows.append((kc, pick, measured[pick], best, measured[best], pred[kc]["auto"][1]))
    return rows, pred, cells


def cmd_model(args):
    rows, pred, cells = model_check(results.load(args.files), find_model(args.model))
    if not rows:
        raise ValueError("no cell with measured configurations")
    print("| machine | P | Q | distribution | S (B) | model's pick | its time (us) | best | "
          "best (us) | best/pick | auto would run |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    qs = []
    for (key, cell), pick, tp, best, tb, auto in rows:
        qs.append(tb / tp)
        print(f"| {cell[4]} | {key[0]} | {key[1]} | {cell[0]} | {cell[1]} | `{pick}` | "
              f"{tp * 1e6:.3g} | `{best}` | {tb * 1e6:.3g} | {tb / tp:.3f} | `{auto}` |")
    print(f"\n{len(rows)} cells: best/pick geometric mean {_geomean(qs):.3f}, worst {min(qs):.3f}")
    if args.all:
        print("\n| machine | distribution | S (B) | configuration | measured (us) | model (us) |")
        print("|---|---|---|---|---|---|")
        for kc, cfg in sorted(cells.items(), key=lambda kv: repr(kv[0])):
            for o in sorted(cfg, key=lambda o: cfg[o]["time"]["median"]):
                print(f"| {kc[1][4]} | {kc[1][0]} | {kc[1][1]} | `{o}` | "
                      f"{cfg[o]['time']['median'] * 1e6:.3g} | {pred[kc][o][0] * 1e6:.3g} |")
    return 0


def cmd_build(args):
    recs = results.load(args.files)
    write_table(build_table(recs, "tuna tune build " + " ".join(args.files), args.exact),
                args.output, args.model)
    return 0


def cmd_run(args):
    bench = args.bench or shutil.which("tuna-bench")
    if not bench or not os.path.exists(bench):
        raise ValueError("tuna-bench not found: give --bench PATH")
    mpiexec = shlex.split(args.mpiexec)
    jsonl = args.jsonl or (args.output + ".jsonl" if args.output != "-" else "tune.jsonl")
    first = True
    sweep = progress.sweep_bar(len(args.procs), args.quiet, "tuna tune run")
    # With the bar on the terminal, tuna-bench's tables go to a file instead of between it.
    tables = jsonl + ".txt" if not sweep.bar.disable else None
    try:
        for p in args.procs:
            first = _run_bench(args, bench, mpiexec, jsonl, p, first, sweep, tables)
    finally:
        sweep.close()
    if tables:
        progress.note(f"tuna tune: tuna-bench's tables are in {tables}")
    write_table(build_table(results.load([jsonl]), f"tuna tune run ({jsonl})", args.exact),
                args.output, args.model)
    return 0


def _run_bench(args, bench, mpiexec, jsonl, p, first, sweep, tables):
    """One tuna-bench sweep at P ranks into jsonl (the first truncates it, later ones append);
    its tables go to the file `tables` when set. Returns False: the next run appends."""
    cmd = mpiexec + ["-n", str(p), bench, "-a", args.algorithms, "--param", args.param,
                     "-s", args.sizes, "-n", str(args.iters), "-w", str(args.warmup),
                     "-j", jsonl, "-q"]
    if not first:
        cmd.append("--append")
    cmd += launch.bench_workload(args.collective, args.dist)
    if args.rpn:
        cmd += ["--ranks-per-node", args.rpn]
    if not args.quiet:
        progress.note("tuna tune: " + " ".join(shlex.quote(c) for c in cmd))
    if first and os.path.exists(jsonl):
        os.unlink(jsonl)  # tuna-bench truncates it anyway: count from an empty file
    sweep.start_run(jsonl)
    log = open(tables, "w" if first else "a", encoding="utf-8") if tables else None
    try:
        proc = subprocess.Popen(cmd, stdout=log)
        while True:
            try:
                rc = proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                sweep.poll()
    finally:
        if log:
            log.close()
    sweep.poll()
    if rc != 0:
        raise ValueError(f"tuna-bench exited with {rc}")
    return False


def platform_profile(plat, rendezvous=False):
    """TUNA_PROFILE contents describing a `tuna sim` platform as SMPI runs it (sim.py's
    smpi_config): per-message overheads os + or (os alone for `tuna sim run --scale`'s
    rendezvous sends: SMPI charges `or` only when a detached, eager message completes a
    receive; measured, docs/tuning.md), no charge for local copies or datatypes
    (smpi/simulate-computation:no), every intra-node message at the loopback bandwidth
    (SimGrid does not share a cluster's loopback between flows: docs/simulation.md), NIC
    bandwidth per NIC, a network latency of a typical path (hops x link latency), and SMPI's
    eager limit (smpi/send-is-detached-thresh: SimGrid's 65536 bytes, 0 under --scale)."""
    from tuna_tools import sim
    q = plat["ranks_per_node"]
    if plat.get("topology") == "torus":
        hops = max(1.0, sum(plat.get("dims", [4])) / 4.0)  # mean distance of a torus ring
    else:
        hops = 3.0  # fat tree / dragonfly: up, across, down
    o = plat["os"] if rendezvous else plat["os"] + plat["or"]
    prof = {
        "tuna_profile": 1,
        "name": f"sim-{plat['name']}",
        "intra": {"latency": plat["intra_lat"], "overhead": o, "gap": 0.0,
                  "bandwidth": plat["intra_bw"]},
        "inter": {"latency": hops * plat["link_lat"], "overhead": o, "gap": 0.0,
                  "bandwidth": plat["nic_bw"]},
        "nics_per_node": int(plat["nic_count"]),
        "copy_bandwidth": 1e15,
        "datatype_overhead": 0.0,
        "datatype_block": 0.0,
        "eager_limit": 0 if rendezvous else sim.SMPI_EAGER_LIMIT,
        "measured": {"from_platform": plat["name"], "ranks_per_node": q, "hops": hops,
                     "note": "derived by `tuna tune profile` from sim/platforms"},
    }
    if plat.get("topology") == "torus":
        # SimGrid routes a torus dimension by dimension over links of link_bw each way, and
        # tuna sim places the job on nodes 0..N-1: the model's network term (docs/tuning.md).
        prof["network"] = {"topology": "torus", "dims": list(plat["dims"]),
                           "link_bandwidth": plat["link_bw"]}
    elif plat.get("topology") == "dragonfly":
        # SimGrid's DRAGONFLY zone: minimal routes over green (router), black (chassis) and
        # blue (group) links of link_bw per cable; the job on nodes 0..N-1 as well.
        (g, gl), (c, cl), (r, rl), n = plat["dragonfly"]
        prof["network"] = {"topology": "dragonfly", "groups": [g, gl], "chassis": [c, cl],
                           "routers": [r, rl], "nodes_per_router": n,
                           "link_bandwidth": plat["link_bw"]}
    return prof


def smpi_vendor_alltoallv(selector, procs=None):
    """vendor_alltoallv for an SMPI selector (data/selection.json, smpi_alltoallv_selectors);
    'ompi' decides on the communicator size (Open MPI's coll/tuned fixed rule: basic linear or
    its XOR 'pair'), so it needs procs."""
    known = selection.smpi_selectors()
    if selector not in known:
        raise ValueError(f"SMPI selector '{selector}': no tuna algorithm models it (known: "
                         f"{', '.join(sorted(known))})")
    rules = known[selector]
    if len(rules) > 1 and not procs:
        raise ValueError(f"--selector {selector} chooses by communicator size: give --procs P")
    return selection.first_rule(rules, procs)


def fit_agreement(points):
    """(per_round, per_rank) >= 0 with t(P) ~ per_round * ceil(log2 P) + per_rank * (P - 1),
    least squares over (P, t) points; a negative coefficient is dropped and the other refit."""
    rows = [(math.ceil(math.log2(p)), p - 1.0, t) for p, t in points if p > 1]
    if not rows:
        raise ValueError("the agreement needs at least one P > 1")

    def one(k):  # least squares with a single coefficient (column k)
        den = sum(r[k] * r[k] for r in rows)
        return sum(r[k] * r[2] for r in rows) / den if den else 0.0

    if len(rows) >= 2:
        a11 = sum(r[0] * r[0] for r in rows)
        a12 = sum(r[0] * r[1] for r in rows)
        a22 = sum(r[1] * r[1] for r in rows)
        b1 = sum(r[0] * r[2] for r in rows)
        b2 = sum(r[1] * r[2] for r in rows)
        det = a11 * a22 - a12 * a12
        if abs(det) > 1e-12 * a11 * a22:
            x = ((b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det)
            if x[0] >= 0 and x[1] >= 0:
                return x
    # One coefficient: whichever single term fits better.
    cands = [(one(0), 0.0), (0.0, one(1))]
    err = [sum((c[0] * r[0] + c[1] * r[1] - r[2]) ** 2 for r in rows) for c in cands]
    return cands[0] if err[0] <= err[1] else cands[1]


def simulate_agreement(args, plat_name, procs, rpn):
    """Simulated time of the MPI library's 40-byte MPI_Allreduce (tuna's statistics
    agreement) at each P, with tuna sim's settings."""
    from tuna_tools import sim
    bench = sim.find_bench(args.bench)
    if not os.path.exists(bench):
        raise ValueError(f"tuna-bench built with smpicc not found at {bench}: the profile's "
                         "agreement is simulated (pass --agreement-procs '' to skip it)")
    out = []
    with tempfile.TemporaryDirectory(prefix="tuna-agree-") as tmp:
        path = os.path.join(tmp, "agree.jsonl")
        cmd = [sys.executable, "-m", "tuna_tools", "sim", "run", "--platform", plat_name,
               "--procs", ",".join(str(p) for p in procs), "--rpn", str(rpn),
               "--collective", "allreduce", "-a", "vendor", "-s", "40", "--no-vendor",
               "-w", "1", "-o", path]
        cmd += ["--bench", bench]
        cmd += ["--library-colls", args.library_colls]
        if args.scale:
            cmd.append("--scale")
        if args.library_colls == "log":  # the allreduce tuna sim run gives tuna's agreement
            cmd += ["--cfg", f"smpi/allreduce:{sim.LOG_COLLS['allreduce']}"]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))] +
            [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        with open(path, encoding="utf-8") as f:
            for line in f:
                rec = json.loads(line)
                out.append((rec["machine"]["P"], rec["time"]["median"]))
    return sorted(out)


def cmd_profile(args):
    from tuna_tools import sim
    _, plat = sim.load_platform(args.platform)
    if args.rpn:
        plat = dict(plat, ranks_per_node=args.rpn)
    prof = platform_profile(plat, rendezvous=args.scale)
    if args.scale:
        prof["measured"]["sends"] = "rendezvous (tuna sim run --scale)"
    prof["vendor_alltoallv"] = smpi_vendor_alltoallv(args.selector, args.procs)
    prof["measured"]["selector"] = args.selector
    if args.agreement_procs:
        points = simulate_agreement(args, args.platform, args.agreement_procs,
                                    plat["ranks_per_node"])
        per_round, per_rank = fit_agreement(points)
        prof["agreement"] = {"per_round": per_round, "per_rank": per_rank}
        prof["measured"]["agreement_allreduce"] = {str(p): t for p, t in points}
    text = json.dumps(prof, indent=1) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


def _int_list(text):
    try:
        return [int(x) for x in text.split(",") if x]
    except ValueError:
        raise ValueError(f"not a list of integers: {text}") from None


def register(subparsers):
    t = subparsers.add_parser("tune", help="tuning tables for auto (docs/tuning.md)")
    sub = t.add_subparsers(dest="tune_command", metavar="ACTION")
    sub.required = True
    r = sub.add_parser("run", help="run tuna-bench sweeps with mpiexec and write a table")
    r.add_argument("--procs", type=_int_list, required=True, help="P values, e.g. 2,4,8")
    r.add_argument("--rpn", help="tuna-bench --ranks-per-node list (logical nodes)")
    r.add_argument("--collective", choices=launch.COLLECTIVES,
                   default="alltoallv", help="tuna-bench --collective (default: %(default)s)")
    r.add_argument("-a", "--algorithms", default="all", help="tuna-bench algorithm list")
    r.add_argument("--param", default="*=powers", help="tuna-bench --param grid")
    r.add_argument("-s", "--sizes", default="16,256,4K,16K", help="tuna-bench size spec")
    r.add_argument("-d", "--dist", action="append", help="distribution (repeat)")
    r.add_argument("-n", "--iters", type=int, default=20)
    r.add_argument("-w", "--warmup", type=int, default=3)
    r.add_argument("--bench", help="path of tuna-bench (default: on PATH)")
    r.add_argument("--mpiexec", default="mpiexec",
                   help="launcher and its flags, e.g. 'mpiexec --oversubscribe'")
    r.add_argument("--jsonl", help="where the sweep's JSON lines go (default OUTPUT.jsonl)")
    r.add_argument("-o", "--output", default="-", help="tuning table (default stdout)")
    r.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar (shown only on a terminal) and no command lines on "
                        "stderr")
    r.set_defaults(func=cmd_run)
    b = sub.add_parser("build", help="build a table from tuna-bench JSON lines")
    b.add_argument("files", nargs="+")
    b.add_argument("-o", "--output", default="-")
    b.set_defaults(func=cmd_build)
    for p in (r, b):
        p.add_argument("--exact", action="store_true",
                       help="one entry per measured key, no ranges (alltoallv only: version 1, "
                            "which older libtuna reads)")
        p.add_argument("--model", help="tuna-model that checks the table with libtuna's "
                       "reader (default: $TUNA_MODEL, the build, PATH; none: schema only)")
    c = sub.add_parser("check", help="validate tuning tables: JSON Schema "
                       "(data/tuning.schema.json), then libtuna's reader (tuna-model)")
    c.add_argument("files", nargs="+")
    c.add_argument("--model", help="path of tuna-model (default: $TUNA_MODEL, the build, PATH)")
    c.add_argument("--schema-only", action="store_true",
                   help="the schema and key limits only, without tuna-model")
    c.set_defaults(func=cmd_check)
    mo = sub.add_parser("model", help="the cost model against measured configurations: its "
                        "pick per cell vs the measured best (TUNA_PROFILE: the profile)")
    mo.add_argument("files", nargs="+", help="tuna-bench JSON lines")
    mo.add_argument("--model", help="path of tuna-model (default: $TUNA_MODEL, the build, PATH)")
    mo.add_argument("--all", action="store_true",
                    help="also list every configuration's measured and predicted time")
    mo.set_defaults(func=cmd_model)
    pr = sub.add_parser("profile", help="TUNA_PROFILE of a simulated platform")
    pr.add_argument("--platform", required=True, help="sim/platforms name or .xml path")
    pr.add_argument("--rpn", type=int, help="ranks per node (default: the platform's)")
    pr.add_argument("--selector", default="default",
                    help="SMPI MPI_Alltoallv selector the runs use (tuna sim run --selectors): "
                         "writes the tuna algorithm that models it as vendor_alltoallv "
                         "(default: %(default)s)")
    pr.add_argument("--procs", type=int,
                    help="communicator size, for selectors that decide on it (ompi)")
    pr.add_argument("--agreement-procs", type=_int_list, default=[64, 256],
                    help="P values at which to simulate the MPI library's small allreduce "
                         "(tuna's statistics agreement) and fit the profile's \"agreement\" "
                         "(default: 64,256; empty: leave it to the model)")
    pr.add_argument("--library-colls", choices=["log", "default"], default="log",
                    help="tuna sim run --library-colls of the runs the profile is for "
                         "(default: %(default)s)")
    pr.add_argument("--scale", action="store_true",
                    help="the runs use tuna sim run --scale (rendezvous sends): SMPI then "
                         "charges the send overhead only (os), not os + or")
    pr.add_argument("--bench", help="tuna-bench built with smpicc (as tuna sim run --bench)")
    pr.add_argument("-o", "--output", default="-")
    pr.set_defaults(func=cmd_profile)
    q = sub.add_parser("quality", help="auto's selection quality per cell (Markdown)")
    q.add_argument("files", nargs="+")
    q.add_argument("--normalize", action="store_true",
                   help="divide every time by its interleaved vendor time (noisy machines)")
    q.add_argument("--min-quality", type=float,
                   help="exit 1 if the geometric mean of best/auto is below this")
    q.set_defaults(func=cmd_quality)
