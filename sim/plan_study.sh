#!/usr/bin/env bash
# plan_study.sh: the planner's measure against an exhaustive sweep of its candidates
# (docs/plans.md, sim/plan_quality.py), in SimGrid SMPI or on local ranks.
#
#   sim/plan_study.sh sim PLATFORM P OUTDIR     # tuna sim run (SMPI), 32 ranks per node
#   sim/plan_study.sh local - P OUTDIR          # mpiexec --oversubscribe -n P, build/main
#
# Step 1 runs auto as a TUNA_PLAN_MEASURE plan in every cell (SIZES x uniform, power law) and
# records the candidates its measure timed; step 2 runs auto again next to every one of those
# candidates as a forced plan, in one run, each timed interleaved with the MPI library's own
# MPI_Alltoallv; sim/plan_quality.py compares, per cell, what measure chose with the best of
# its candidates. In SMPI (simulated times repeat exactly, nothing drifts) step 2 runs only
# the candidates, without the vendor call beside them, and step 1's choice is judged: the
# same answer for half the simulator time (at P = 256 an exchange costs seconds to minutes). Environment: SIZES (default 16,1024,16384), ITERS (local default 200, sim 1),
# WARMUP (local 5, sim 1), REPEATS (sweeps of step 2, pooled; default 1), PYTHON (default
# .venv/bin/python), SIMGRID (a prefix from scripts/build-simgrid.sh), SIM_BENCH (tuna-bench
# built with its smpicc), LOCAL_BENCH (the local tuna-bench, default build/main's) and
# SELECTORS (SMPI alltoallv selectors, default: default).
set -euo pipefail
mode=$1 plat=$2 P=$3 out=$4
root=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-$root/.venv/bin/python}
SIZES=${SIZES:-16,1024,16384}
mkdir -p "$out"
name="$mode-$plat-p$P"
run_bench() { # output, algorithms
  if [ "$mode" = sim ]; then
    "$PYTHON" -m tuna_tools sim run --platform "$plat" --procs "$P" -a "$2" -s "$SIZES" \
      ${SIMGRID:+--simgrid "$SIMGRID"} ${SIM_BENCH:+--bench "$SIM_BENCH"} \
      ${SELECTORS:+--selectors "$SELECTORS"} ${3:+--no-vendor} \
      -d uniform -d powerlaw -n "${ITERS:-1}" -w "${WARMUP:-1}" --plan measure --timeout 3600 \
      -o "$1"
  else
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpiexec --oversubscribe -n "$P" \
      "${LOCAL_BENCH:-$root/build/main/tools/tuna-bench}" -a "$2" -s "$SIZES" -d uniform -d powerlaw \
      -n "${ITERS:-200}" -w "${WARMUP:-5}" -q --no-phases --plan measure -j "$1"
  fi
}
rm -f "$out/$name-step1.jsonl" "$out/$name"-step2*.jsonl
run_bench "$out/$name-step1.jsonl" auto
cands=$("$PYTHON" "$root/sim/plan_quality.py" --candidates "$out/$name-step1.jsonl")
echo "candidates: $cands"
# REPEATS sweeps (default 1; on local ranks 3 damp the noise of single rows): pooled.
step2=()
for k in $(seq 1 "${REPEATS:-1}"); do
  f="$out/$name-step2$([ "$k" = 1 ] || echo "-r$k").jsonl"
  if [ "$mode" = sim ]; then
    run_bench "$f" "$cands" no-vendor
  else
    run_bench "$f" "auto,$cands"
  fi
  step2+=("$f")
done
[ "$mode" = sim ] && step2=("$out/$name-step1.jsonl" "${step2[@]}")
"$PYTHON" "$root/sim/plan_quality.py" "${step2[@]}" | tee "$out/$name.md"
