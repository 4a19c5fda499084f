"""auto vs vendor (docs/tuning.md), per cell of tuna sim run JSON
lines measured with TUNA_AUTO_PERIOD=PERIOD: auto's calls that reused agreed statistics and
those that agreed (every PERIOD-th call, counting the warm-up ones), and the time per call at
the default period K = 32, mean(reusing) + (mean(agreeing) - mean(reusing)) / K, against
vendor's mean over the same interleaved iterations.

    python3 sim/auto_vs_vendor.py PERIOD FILE.jsonl... [--min RATIO]

--min RATIO: exit 1 if any cell's vendor/auto is below RATIO (the CI check).
"""
import json, math, sys
K = 32
args = sys.argv[1:]
minimum = None
if "--min" in args:
    i = args.index("--min")
    minimum = float(args[i + 1])
    del args[i:i + 2]
if len(args) < 2:
    sys.exit(__doc__)
period = int(args[0])
rows = []
print("| platform | selector | distribution | S (B) | vendor mean (us) | auto, reusing calls (us) | auto, agreeing calls (us) | vendor/auto at K = 32 |")
print("|---|---|---|---|---|---|---|---|")
for f in args[1:]:
    for line in open(f):
        r = json.loads(line)
        if r["algorithm"] != "auto":
            continue
        s = r["samples"]
        n = len(s)
        # timed calls i = 0..n-1 follow tuna-bench's untimed agreeing call (made after
        # tuna_pattern_changed) and `warmup` calls; the agreeing ones are every period-th.
        w = r["run"]["warmup"] + 1
        agree = [s[i] for i in range(n) if (w + i) % period == 0]
        reuse = [s[i] for i in range(n) if (w + i) % period != 0]
        v = sum(r["vendor_samples"]) / n
        mr = sum(reuse) / len(reuse)
        ma = sum(agree) / len(agree)
        t = mr + (ma - mr) / K
        sel = "mpich" if "mpich" in f else "default"
        plat = r["run"]["name"].replace("sim-", "")
        rows.append((sel, v / t))
        print(f"| {plat} | {sel} | {r['dist']['name']} | {r['dist']['S']} | {v*1e6:.1f} | "
              f"{mr*1e6:.1f} | {ma*1e6:.1f} | {v/t:.3f} |")
for sel in ("default", "mpich"):
    xs = [q for s_, q in rows if s_ == sel]
    if xs:
        print(f"\n{sel}: {len(xs)} cells, geometric mean {math.exp(sum(map(math.log, xs))/len(xs)):.3f}, "
              f"worst {min(xs):.3f}, below 0.95: {sum(x < 0.95 for x in xs)}")
if not rows:
    sys.exit("no auto records")
if minimum is not None and min(q for _, q in rows) < minimum:
    print(f"FAIL: a cell's vendor/auto is below {minimum}")
    sys.exit(1)
