#!/usr/bin/env bash
# auto that learns, on this machine (docs/results/learning.md, "Learning: measured"): for each P and
# maximum block size S, one process runs every row of the table with its parameters swept
# (the exhaustive best), then `auto` (the table's last row), each for ITERS calls with no
# warm-up: auto starts learning at its first call, as in an application; REPEATS times. Each
# call is interleaved with the library's own (tuna-bench's vendor call), so every row is
# timed as a ratio to the library in its own time window: rows run minutes apart on a shared
# machine, and two rows with the same code path differed by 40% when timed apart (2026-11-25,
# P = 2, 16 B). scripts/learn_table.py then compares auto's steady state (the median of its
# second half, over the library's in the same calls) with the best row of the same process
# and reports the learning phase's extra time.
#
#   scripts/learn-study.sh                         # Open MPI, build/main
#   TUNA_BUILD_DIR=build/mpich MPIEXEC=mpiexec.mpich scripts/learn-study.sh
#
# Environment: TUNA_BUILD_DIR (default build/main), LEARN_OUT (default
# docs/figures/data/learn-<library>), LEARN_PROCS (default "2 4 8"), LEARN_SIZES (default
# "16 1024 65536"), LEARN_ITERS (each row's calls, default 1000), LEARN_REPEATS (default 3),
# MPIEXEC (default mpiexec).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TUNA_BUILD_DIR:-$root/build/main}
mpiexec=${MPIEXEC:-mpiexec}
procs=${LEARN_PROCS:-2 4 8}
sizes=${LEARN_SIZES:-16 1024 65536}
iters=${LEARN_ITERS:-1000}
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
      TUNA_VERBOSE=1 "$mpiexec" "${flags[@]}" -n "$P" "$bench" -a all --param '*=powers' \
        -s "$S" -n "$iters" -w 0 --no-phases -q -j "$out/run-$tag.json" \
        2> "$out/run-$tag.log" > /dev/null
    done
  done
done
"${TUNA_PYTHON:-python3}" "$root/scripts/learn_table.py" "$out"
