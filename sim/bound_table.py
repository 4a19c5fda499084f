#!/usr/bin/env python3
"""Tables of docs/results/simulation-gap.md "The gap to the attainable bound": measured times of
`sim/bound_study.sh` runs (JSON lines) next to today's bound and the attainable bound of
`sim/attainable_bound.py` for the same platform, P, S, distribution and algorithm.

  sim/bound_table.py [--meta-word 8|adaptive] [--after FILE] FILE...

With --after, a second measured column (the same configurations from FILE) and its ratio.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import attainable_bound as ab  # noqa: E402
from tuna_tools import results  # noqa: E402
from tuna_tools import sim as tsim  # noqa: E402


def load(files):
    out = {}
    for r in results.ok(results.load(files)):
        if not r.get("time") or r["algorithm"] in ("vendor", "auto"):  # no schedule to mirror
            continue
        key = (r["sim"]["platform"], r["machine"]["P"], r["algorithm"],
               r["dist"]["spec"], r["dist"]["S_bytes"], model_of(r))
        out[key] = r
    return out


_cache = {}


def model_of(rec):
    cfg = rec["sim"].get("smpi_cfg", [])
    return "rendezvous" if "smpi/send-is-detached-thresh:0" in cfg else "eager"


def attainable(plat_name, P, rpn, alg, params, dist, S, meta_word, model):
    key = (plat_name, P, rpn, alg, tuple(sorted(params.items())), dist["spec"], S, meta_word,
           model)
    if key not in _cache:
        xml = os.path.join(HERE, "results", "bound", plat_name + ".xml")
        _, plat = tsim.load_platform(xml if os.path.exists(xml) else plat_name)
        sizes = tsim.size_matrix(dist, P, S, dist.get("seed", 1))  # tuna-bench --facts --matrix
        mw = ab.meta_word_adaptive if meta_word == "adaptive" else ab.meta_word_fixed(8)
        bt = ab.schedule(alg, params, P, rpn, sizes, mw)
        net = ab.Network(plat)
        res = ab.price(bt, P, rpn, plat, net, model)
        res["cut_s"] = net.cut_bound(-(-P // rpn), rpn, sizes)[0]
        _cache[key] = res
    return _cache[key]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--after", action="append", default=[])
    ap.add_argument("--meta-word", default="8")
    ap.add_argument("--after-meta-word", default="adaptive")
    args = ap.parse_args()
    before = load(args.files)
    after = load(args.after) if args.after else {}
    hdr = ("| platform | P | sizes | S | algorithm | measured (us) | today's bound (us), x "
           "| routed cut (us) | attainable (us) | x attainable |")
    sep = "|---|---:|---|---:|---|---:|---:|---:|---:|---:|"
    if after:
        hdr += " after (us) | attainable after (us) | after x attainable | before / after |"
        sep += "---:|---:|---:|---:|"
    print(hdr)
    print(sep)
    for key in sorted(before, key=lambda k: (k[5], k[0], k[2], k[1])):
        plat, P, alg, dist, S, _ = key
        r = before[key]
        rpn = r["sim"]["ranks_per_node"]
        params = {k: v for k, v in r["params"].items()}
        t = r["time"]["median"]
        lb = r["sim"]["bound"]["bound_s"]
        a = attainable(plat, P, rpn, alg, params, r["dist"], S, args.meta_word, model_of(r))
        row = (f"| {plat} | {P} | {dist} | {S} | {r['options']} | {t * 1e6:.1f} | {lb * 1e6:.1f}, "
               f"{t / lb:.1f}x | {a['cut_s'] * 1e6:.1f} | {a['attainable_s'] * 1e6:.1f} | "
               f"{t / a['attainable_s']:.2f} |")
        if after:
            ra = after.get(key)
            if ra:
                ta = ra["time"]["median"]
                aa = attainable(plat, P, rpn, alg, params, r["dist"], S, args.after_meta_word,
                                model_of(ra))
                row += (f" {ta * 1e6:.1f} | {aa['attainable_s'] * 1e6:.1f} | "
                        f"{ta / aa['attainable_s']:.2f} | {t / ta:.2f} |")
            else:
                row += " - | - | - | - |"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
