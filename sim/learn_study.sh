#!/bin/sh
# Does auto's learning reach the best of tuna's rows? (issue 34's acceptance measurement, SMPI)
#
# For every cell (platform x per-message overhead x P x S x distribution), under SimGrid SMPI
# with tuna's built-in profile (no TUNA_PROFILE, no TUNA_TUNING):
#   a. `auto` for 200 calls, no warm-up, no vendor interleaving, every sample kept
#      (tuna-bench -a auto -n 200 -w 0 --no-vendor --no-phases), learning on (the default,
#      TUNA_VERBOSE=1: its "auto learned" line goes to $OUT/err/CELL.learn.err)
#      -> $OUT/auto-learn.jsonl; and the same with TUNA_AUTO_LEARN=0 -> $OUT/auto-model.jsonl
#   b. the exhaustive sweep of tuna's rows and vendor (sim/learn_configs.py: every algorithm
#      but multipair-testany and auto, on the model's radix / block grids), 1 warm-up + 2 timed
#      calls each (SMPI repeats exactly), one smpirun per family with a timeout
#      -> $OUT/sweep.jsonl (a family that timed out leaves a record with status "timeout")
# then sim/learn_table.py makes the table and docs/figures/learn-smpi.png.
#
# One smpirun at a time, at nice 10. A cell part already done (marker $OUT/done/CELL.PART)
# is not run again: the script resumes. Per smpirun, e.g. (overhead 0 is passed as --cfg
# after the platform's 0.5 us, which SimGrid takes last):
#   TUNA_VERBOSE=1 nice -n 10 python -m tuna_tools sim run --platform generic-crossbar \
#       --procs 64 -a auto -s 16 -d uniform -n 200 -w 0 --no-vendor \
#       --cfg smpi/os:0:0:0 --cfg smpi/ois:0:0:0 --cfg smpi/or:0:0:0 \
#       --bench build/smpi/tools/tuna-bench --stderr ERR --append -o sim/results/learn/auto-learn.jsonl
#
# Env knobs (defaults):
#   PROCS="64"  SIZES="16 1024 16384"  DISTS="uniform powerlaw"
#   PLATFORMS="generic-crossbar generic-fattree"  OVERHEADS="0 0.5" (us, os = or = ois)
#   PARTS="learn model sweep"  TIMEOUT=300 (s per sweep smpirun)  AUTO_TIMEOUT=1200
#   SWEEP_ITERS=2 (timed calls per sweep configuration, after 1 warm-up)
#   PRECISION (surf/precision; default tuna sim's 1e-9)  VERIFY=1 (0: --no-verify)
#   BENCH=build/smpi/tools/tuna-bench  PYTHON=/work/main/.venv/bin/python  OUT=sim/results/learn
#   SKIP="" (sweep chunks of sim/learn_configs.py not to run, e.g. "tuna.2 tuna.3": each is
#   recorded in sweep.jsonl with status "skipped", and the table lists it)
#
# Build (Debian's SimGrid 3.32):
#   cmake -S . -B build/smpi -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo
#   cmake --build build/smpi -j2 --target tuna-bench
# Platforms (sim/platforms/generic-*.{xml,json}):
#   sim/gen_platform.py --name generic-crossbar --topology crossbar --nodes 16 --cores 32 \
#     --ranks-per-node 32 --nic-count 1 --nic-bw 25e9 --link-bw 25e9 --link-lat 5e-7 \
#     --intra-bw 50e9 --intra-lat 3e-7 --os 5e-7 --or 5e-7 --out-dir sim/platforms
#   sim/gen_platform.py --name generic-fattree --topology fat-tree --nodes 16 --cores 32 \
#     --ranks-per-node 32 --nic-count 1 --nic-bw 12.5e9 --link-bw 12.5e9 --link-lat 2.5e-7 \
#     --intra-bw 50e9 --intra-lat 3e-7 --os 5e-7 --or 5e-7 --out-dir sim/platforms
# Table and figure:
#   sim/learn_table.py sim/results/learn --figure docs/figures/learn-smpi.png
set -u
cd "$(dirname "$0")/.."
PROCS=${PROCS:-64}
SIZES=${SIZES:-"16 1024 16384"}
DISTS=${DISTS:-"uniform powerlaw"}
PLATFORMS=${PLATFORMS:-"generic-crossbar generic-fattree"}
OVERHEADS=${OVERHEADS:-"0 0.5"}
PARTS=${PARTS:-"learn model sweep"}
TIMEOUT=${TIMEOUT:-300}
SWEEP_ITERS=${SWEEP_ITERS:-2}
AUTO_TIMEOUT=${AUTO_TIMEOUT:-1200}
VERIFY=${VERIFY:-1}
BENCH=${BENCH:-build/smpi/tools/tuna-bench}
PYTHON=${PYTHON:-/work/main/.venv/bin/python}
OUT=${OUT:-sim/results/learn}
SKIP=${SKIP:-}
export PYTHONPATH=python
unset TUNA_TUNING TUNA_PROFILE TUNA_AUTO_LEARN TUNA_VERBOSE
mkdir -p "$OUT/done" "$OUT/err"

run() { # run LOG-TAG ARGS...: one tuna sim run at nice 10, its wall time logged
    tag=$1; shift
    t0=$(date +%s)
    nice -n 10 "$PYTHON" -m tuna_tools sim run -q --bench "$BENCH" "$@"
    rc=$?
    echo "$(date -u +%FT%TZ) $tag rc=$rc wall=$(( $(date +%s) - t0 ))s" >> "$OUT/log.txt"
    return $rc
}

for P in $PROCS; do
  for plat in $PLATFORMS; do
    rpn=$("$PYTHON" -c "import json;print(json.load(open('sim/platforms/$plat.json'))['ranks_per_node'])")
    for ov in $OVERHEADS; do
      if [ "$ov" = "0.5" ]; then ocfg=""; else
        s=$("$PYTHON" -c "print('%g' % ($ov * 1e-6))")
        ocfg="--cfg smpi/os:0:$s:0 --cfg smpi/ois:0:$s:0 --cfg smpi/or:0:$s:0"
      fi
      common="--platform $plat --procs $P $ocfg"
      [ -n "${PRECISION:-}" ] && common="$common --precision $PRECISION"
      [ "$VERIFY" = 0 ] && common="$common --no-verify"
      for S in $SIZES; do
        for d in $DISTS; do
          cell="$plat-os$ov-P$P-S$S-$d"
          for part in $PARTS; do
            [ -e "$OUT/done/$cell.$part" ] && continue
            case $part in
              learn)
                # shellcheck disable=SC2086
                TUNA_VERBOSE=1 run "$cell.learn" $common -a auto -s "$S" -d "$d" -n 200 -w 0 \
                    --no-vendor --timeout "$AUTO_TIMEOUT" --stderr "$OUT/err/$cell.learn.err" \
                    --append -o "$OUT/auto-learn.jsonl" && touch "$OUT/done/$cell.$part" ;;
              model)
                # shellcheck disable=SC2086
                TUNA_AUTO_LEARN=0 TUNA_VERBOSE=1 run "$cell.model" $common -a auto -s "$S" \
                    -d "$d" -n 200 -w 0 --no-vendor --timeout "$AUTO_TIMEOUT" \
                    --stderr "$OUT/err/$cell.model.err" --append -o "$OUT/auto-model.jsonl" \
                    && touch "$OUT/done/$cell.$part" ;;
              sweep)
                "$PYTHON" sim/learn_configs.py "$P" "$rpn" | while IFS="$(printf '\t')" read -r fam cfgs; do
                  [ -e "$OUT/done/$cell.sweep.$fam" ] && continue
                  case " $SKIP " in *" $fam "*)
                    # not run (SKIP): recorded, so the table names it among the skipped
                    "$PYTHON" -c 'import json, sys; a = sys.argv; print(json.dumps({
                        "algorithm": a[1], "family": a[2], "status": "skipped",
                        "machine": {"P": int(a[3])}, "dist": {"spec": a[4], "sizes": a[5]},
                        "sim": {"platform": a[6], "os_us": float(a[7])}}))' \
                        "$cfgs" "$fam" "$P" "$d" "$S" "$plat" "$ov" >> "$OUT/sweep.jsonl"
                    touch "$OUT/done/$cell.sweep.$fam"
                    continue ;;
                  esac
                  # shellcheck disable=SC2086
                  run "$cell.sweep.$fam" $common -a "$cfgs" -s "$S" -d "$d" -n "$SWEEP_ITERS" -w 1 \
                      --no-vendor --timeout "$TIMEOUT" --append -o "$OUT/sweep.jsonl"
                  # done either way: a timeout is recorded (status "timeout") and skipped
                  touch "$OUT/done/$cell.sweep.$fam"
                done
                touch "$OUT/done/$cell.$part" ;;
            esac
          done
        done
      done
    done
  done
done
