"""Checks that a simulated platform gives every node its own injection bandwidth: a linear
exchange on several nodes must run near the lower bound of `tuna sim` (bytes leaving the
busiest node / the node's injection bandwidth). SimGrid 3.32 shares a FAT_TREE or DRAGONFLY
cluster's limiter link between all nodes, which made a node's share fall as 1/N (spreadout at
16 KiB on 8 fat-tree nodes: 3.9x the bound; docs/simulation.md); sim/gen_platform.py therefore
emits no limiter there, and this check fails if one comes back.

    python3 sim/injection_check.py FILE.jsonl... --max RATIO
"""
import json
import sys

args = sys.argv[1:]
if "--max" not in args:
    sys.exit(__doc__)
i = args.index("--max")
limit = float(args[i + 1])
del args[i:i + 2]
if not args:
    sys.exit(__doc__)
worst, count = 0.0, 0
for f in args:
    for line in open(f, encoding="utf-8"):
        r = json.loads(line)
        ratio = (r.get("sim") or {}).get("ratio_to_bound")
        if ratio is None:
            sys.exit(f"{f}: a record without sim.ratio_to_bound ({r.get('options')})")
        count += 1
        worst = max(worst, ratio)
        print(f"{r['sim']['platform']} P={r['machine']['P']} nodes={r['machine']['nodes']} "
              f"{r['options']} S={r['dist']['S']}: {r['time']['median'] * 1e6:.1f} us, "
              f"{ratio:.2f}x the bound")
if count == 0:
    sys.exit("no records")
if worst > limit:
    sys.exit(f"FAIL: {worst:.2f}x the lower bound > {limit}: a node does not get its own "
             "injection bandwidth (a shared limiter link?)")
print(f"ok: worst {worst:.2f}x the lower bound (<= {limit})")
