#!/usr/bin/env bash
# The local study of docs/benchmarks.md: P = 4, 8, 16 ranks on this machine (oversubscribed
# when P exceeds the cores), maximum block size S = 16 B .. 16 KiB, uniform and power-law block
# sizes, every algorithm of the table with its parameters swept, each against the vendor
# MPI_Alltoallv in the same run; then the figures. Then the allgather and allreduce algorithms
# (--collective) with k swept over 2..P, S = 16 B .. 1 MiB per rank, against the vendor's.
#
#   scripts/bench-study.sh
#
# Environment: TUNA_BUILD_DIR (default: build/main), TUNA_STUDY_DIR (default: docs/figures),
# TUNA_STUDY_PROCS (default: "4 8 16"), TUNA_STUDY_SIZES (default: 16:16384:x4),
# TUNA_STUDY_ITERS (timed iterations, default: 15), TUNA_STUDY_WARMUP (default: 2),
# TUNA_STUDY_COLLECTIVES (default: "alltoallv allgather allreduce"),
# TUNA_STUDY_COLL_SIZES (allgather/allreduce bytes per rank, default: 16:1048576:x4).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TUNA_BUILD_DIR:-$root/build/main}
out=${TUNA_STUDY_DIR:-$root/docs/figures}
procs=${TUNA_STUDY_PROCS:-4 8 16}
sizes=${TUNA_STUDY_SIZES:-16:16384:x4}
iters=${TUNA_STUDY_ITERS:-15}
warmup=${TUNA_STUDY_WARMUP:-2}
collectives=" ${TUNA_STUDY_COLLECTIVES:-alltoallv allgather allreduce} "
coll_sizes=${TUNA_STUDY_COLL_SIZES:-16:1048576:x4}
mkdir -p "$out/data"
out=$(cd "$out" && pwd) # absolute: the runs below work from the project's root
data=$out/data

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j "$(nproc)" --target tuna-bench
build=$(cd "$build" && pwd)
bench=$build/tools/tuna-bench

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
if command -v tuna > /dev/null; then
  tuna=(tuna)
else
  tuna=(env "PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}" python3 -m tuna_tools)
fi

run() { # name P args...: one tuna-bench run, table to $data/name.txt, JSON lines gzipped
  local name=$1 np=$2
  shift 2
  echo "+ $mpiexec ${flags[*]} -n $np tuna-bench $* --iters $iters --warmup $warmup" \
       "--json $name.jsonl" | tee "$data/$name.txt"
  local t0=$SECONDS
  "$mpiexec" "${flags[@]}" -n "$np" "$bench" "$@" --iters "$iters" --warmup "$warmup" --quiet \
    --json "$data/$name.jsonl" --run-name "$name" >> "$data/$name.txt"
  echo "wall time: $((SECONDS - t0)) s" | tee -a "$data/$name.txt"
  gzip -f "$data/$name.jsonl"
}

cd "$root" # file names in the results are relative to the project
synthetic=(--sizes "$sizes" --dist uniform --dist powerlaw:exponent=1.5)
all=() radix=() ml=()
[[ $collectives == *" alltoallv "* ]] && for np in $procs; do
  # Logical nodes for the hierarchical algorithms: 2 ranks per node at P = 4, else 4.
  q=4
  [ "$np" -le 4 ] && q=2
  # Every algorithm, every parameter over the powers of two of its range (and its maximum).
  run "all-P$np" "$np" --algorithms all --param '*=powers' --ranks-per-node "$q" \
    "${synthetic[@]}"
  all+=("$data/all-P$np.jsonl.gz")
  # TuNA's radix over every value 2..P, block (digits in flight) 1 or all.
  run "radix-P$np" "$np" --algorithms tuna --radix 2:P --block 1,P "${synthetic[@]}"
  radix+=("$data/radix-P$np.jsonl.gz")
  # The recorded ML application's matrix for this P, scaled by 1e-3 (blocks up to ~100 KB).
  if [ -f "tests/data/ml_$np.txt" ]; then
    run "ml-P$np" "$np" --algorithms all --param '*=powers' --ranks-per-node "$q" \
      --dist "matrix:tests/data/ml_$np.txt,scale=1e-3"
    ml+=("$data/ml-P$np.jsonl.gz")
  fi
done

for coll in allgather allreduce; do
  [[ $collectives == *" $coll "* ]] || continue
  files=()
  for np in $procs; do
    run "$coll-P$np" "$np" --collective "$coll" --algorithms all --param k=2:P \
      --sizes "$coll_sizes"
    files+=("$data/$coll-P$np.jsonl.gz")
  done
  for alg in kring recmul recmul-permuted; do
    "${tuna[@]}" plot radix "${files[@]}" --algorithm "$alg" -o "$out/$coll-k-$alg"
  done
  "${tuna[@]}" plot compare "${files[@]}" -o "$out/$coll-compare" --cols 6
done
[ ${#all[@]} -gt 0 ] || exit 0

"${tuna[@]}" plot compare "${all[@]}" -o "$out/compare" --cols 6
if [ ${#ml[@]} -gt 0 ]; then
  "${tuna[@]}" plot compare "${ml[@]}" -o "$out/compare-ml" --cols 3
fi
"${tuna[@]}" plot radix "${radix[@]}" -o "$out/radix"
"${tuna[@]}" plot heatmap "${radix[@]}" -o "$out/heatmap"
last=${procs##* }
"${tuna[@]}" plot breakdown "$data/all-P$last.jsonl.gz" -o "$out/breakdown"
