#!/usr/bin/env bash
# Build tuna (if needed) and benchmark every alltoallv algorithm against the MPI library's
# own MPI_Alltoallv on a few local ranks, printing tuna-bench's table.
#
#   scripts/demo.sh [tuna-bench options...]
#
# Environment: TUNA_BUILD_DIR (default: build/main), TUNA_DEMO_NP (ranks, default 4),
# TUNA_DEMO_JSON (JSON lines output, default: $TUNA_BUILD_DIR/demo.jsonl),
# TUNA_DEMO_RPN (logical ranks per node for the hierarchical algorithms, default 2).
# Extra arguments go to tuna-bench (e.g. --dist powerlaw --sizes 1K).
# The table times calls as a user makes them (tuna_stats off); the phase breakdown in the
# JSON comes from separate, untimed calls after the timed ones (docs/benchmarks.md).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TUNA_BUILD_DIR:-$root/build/main}
np=${TUNA_DEMO_NP:-4}
json=${TUNA_DEMO_JSON:-$build/demo.jsonl}
rpn=${TUNA_DEMO_RPN:-2}

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j "$(nproc)" --target tuna-bench

# The launcher CMake found; Open MPI needs --oversubscribe (few cores) and, as root,
# --allow-run-as-root.
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
mpiexec=${mpiexec:-mpiexec}
flags=()
# Oversubscribed MPICH ranks busy-poll; yielding at once is much faster on few cores.
export MPIR_CVAR_POLLS_BEFORE_YIELD=${MPIR_CVAR_POLLS_BEFORE_YIELD:-1}
# MPICH 5 reads this one instead: sleep 1 us after 16 empty polls (oversubscribed ranks).
export MPIR_CVAR_CH4_PROGRESS_THROTTLE=${MPIR_CVAR_CH4_PROGRESS_THROTTLE:-1}
export MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT=${MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT:-16}
if "$mpiexec" --version 2>&1 | grep -qE 'Open MPI|OpenRTE'; then
  flags=(--oversubscribe)
  [ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
fi

echo "+ $mpiexec ${flags[*]} -n $np tuna-bench ..." >&2
exec "$mpiexec" "${flags[@]}" -n "$np" "$build/tools/tuna-bench" \
  --algorithms all --radix powers --block powers --param stride=powers \
  --sizes 16:4096:x16 --dist uniform --ranks-per-node "$rpn" --iters 10 --warmup 2 --quiet \
  --json "$json" --run-name "demo-P$np" "$@"
