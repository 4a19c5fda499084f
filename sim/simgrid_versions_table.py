#!/usr/bin/env python3
"""The "SimGrid 3.32 vs 3.35" table of docs/simulation.md from sim/simgrid_versions.sh's
records: one row per (platform, P, S, configuration), simulated time under each version,
their ratio (new / old), and each run's wall time (user + system CPU time) and max RSS (one
smpirun per configuration).

  python3 sim/simgrid_versions_table.py sim/results/simgrid-versions/simgrid-3.32.jsonl \
      sim/results/simgrid-versions/simgrid-3.35.jsonl
"""
import json
import sys


def label(rec):
    s = rec["sim"]
    alg = rec["algorithm"]
    if "--no-verify" in s.get("command", "").split():
        return base_label(rec, s, alg) + " (unverified)"
    return base_label(rec, s, alg)


def base_label(rec, s, alg):
    if alg == "vendor":
        return f"SMPI `{s['selector']}`"
    params = rec.get("params") or {}
    if isinstance(params, dict) and params:
        keep = {k: v for k, v in params.items() if not (alg == "tuna" and k == "block")
                and not (alg == "coalesced" and k == "block")}
        return f"{alg} " + ",".join(f"{k}={v}" for k, v in keep.items())
    if isinstance(params, list) and params:  # timeout records keep the --param strings
        return f"{alg} " + ",".join(params)
    return alg


def size_of(rec):
    """S in bytes (a timeout record keeps the size spec: 16, 1K)."""
    d = rec.get("dist", {})
    if "S_bytes" in d:
        return d["S_bytes"]
    spec = str(d.get("sizes"))
    units = {"K": 1024, "M": 1024 * 1024}
    return int(spec[:-1]) * units[spec[-1]] if spec[-1:] in units else spec


def main(paths):
    cells, order = {}, []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                rec = json.loads(line)
                s = rec["sim"]
                key = (s["platform"], rec["machine"]["P"], str(size_of(rec)), label(rec))
                if key not in cells:
                    cells[key] = {}
                    order.append(key)
                cells[key][s["simgrid"]] = rec
    versions = sorted({v for c in cells.values() for v in c},
                      key=lambda v: tuple(int(x) for x in v.split(".")))

    def cell(rec):
        if rec is None:
            return "-", "-"
        s = rec["sim"]
        if rec.get("status") == "timeout":
            return f"timeout ({s['timeout_s']:g} s)", f"> {s['timeout_s']:g} s, -"
        t = f"{rec['time']['median'] * 1e6:.1f}" if rec.get("time") else rec.get("status", "?")
        rss = f"{s['max_rss_kib'] / 1024:.0f}" if s.get("max_rss_kib") else "?"
        cpu = f"{s['cpu_s']:.1f}" if s.get("cpu_s") is not None else "?"
        return t, f"{s['wall_s']:.1f} s ({cpu}), {rss} MiB"

    head = "| platform | P | S (B) | configuration | " + " | ".join(
        f"sim. time {v} (us)" for v in versions)
    if len(versions) == 2:
        head += f" | {versions[1]} / {versions[0]}"
    head += " | " + " | ".join(f"wall (CPU), max RSS {v}" for v in versions) + " |"
    print(head)
    print("|---|---:|---:|---|" + "---:|" * len(versions) + ("---:|" if len(versions) == 2
                                                            else "") + "---:|" * len(versions))
    order.sort(key=lambda k: (k[1], k[0], int(k[2]) if k[2].isdigit() else 0))
    for key in order:
        recs = [cells[key].get(v) for v in versions]
        cs = [cell(r) for r in recs]
        row = f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | " + " | ".join(c[0] for c in cs)
        if len(versions) == 2:
            a, b = recs
            if a and b and a.get("time") and b.get("time"):
                row += f" | {b['time']['median'] / a['time']['median']:.4f}"
            else:
                row += " | -"
        row += " | " + " | ".join(c[1] for c in cs) + " |"
        print(row)


if __name__ == "__main__":
    main(sys.argv[1:])
