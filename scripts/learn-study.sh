#!/usr/bin/env bash
# auto that learns, on this machine (docs/tuning.md, "Learning: measured"): for each P and
# maximum block size S, one process runs `auto` for ITERS calls from scratch (no warm-up, no
# vendor interleaved: what an application's first calls cost), and a second process runs
# every row of the table with its parameters swept (the exhaustive best); REPEATS times.
# scripts/learn_table.py then compares auto's steady state (median of its second half) with
# the best row of the same repeat and reports the learning phase's extra time.
#
#   scripts/learn-study.sh                         # Open MPI, build/main
#   TUNA_BUILD_DIR=build/mpich MPIEXEC=mpiexec.mpich scripts/learn-study.sh
#
# Environment: TUNA_BUILD_DIR (default build/main), LEARN_OUT (default
# docs/figures/data/learn-<library>), LEARN_PROCS (default "2 4 8"), LEARN_SIZES (default
# "16 1024 65536"), LEARN_ITERS (auto's calls, default 1000), LEARN_SWEEP_ITERS (each row's
# calls, default 200), LEARN_REPEATS (default 3), MPIEXEC (default mpiexec).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TUNA_BUILD_DIR:-$root/build/main}
mpiexec=${MPIEXEC:-mpiexec}
procs=${LEARN_PROCS:-2 4 8}
sizes=${LEARN_SIZES:-16 1024 65536}
iters=${LEARN_ITERS:-1000}
sweep_iters=${LEARN_SWEEP_ITERS:-200}
repeats=${LEARN_REPEATS:-3}
bench=$build/tools/tuna-bench
lib=$(basename "$mpiexec" | sed 's/^mpiexec\.\{0,1\}//')
out=${LEARN_OUT:-$root/docs/figures/data/learn-${lib:-openmpi}}
mkdir -p "$out"

flags=()
if "$mpiexec" --version 2>&1 | grep -q "OpenRTE\|Open MPI"; then
  flags=(--oversubscribe)
  [ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
fi

for P in $procs; do
  for S in $sizes; do
    for r in $(seq 1 "$repeats"); do
      tag="P$P-S$S-r$r"
      echo "learn-study: $tag" >&2
      TUNA_VERBOSE=1 "$mpiexec" "${flags[@]}" -n "$P" "$bench" -a auto -s "$S" -n "$iters" -w 0 \
        --no-vendor --no-phases -q -j "$out/auto-$tag.json" 2> "$out/auto-$tag.log" > /dev/null
      "$mpiexec" "${flags[@]}" -n "$P" "$bench" -a all --param '*=powers' -s "$S" \
        -n "$sweep_iters" -w 3 --no-vendor --no-phases -q -j "$out/sweep-$tag.json" > /dev/null
    done
  done
done
"${TUNA_PYTHON:-python3}" "$root/scripts/learn_table.py" "$out"
