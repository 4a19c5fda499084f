#!/usr/bin/env bash
# Issue 52's SMPI study of the neighborhood all-to-all (docs/results/neighbor.md, "Simulated"):
# the SpMV halos of can_1072 and msc01050 (1-D row blocks), small (x1: one double per x
# entry) and large (x256), every row of tuna_neighbor_alltoallv at its defaults, blocking and
# persistent, 32 ranks per node, on the Fugaku-like torus and the
# Polaris-like dragonfly. Under SMPI 3.32 the "library's call" is tools/bench/smpi_topology.c's
# linear exchange (SMPI has no MPI_Neighbor_alltoallv). smpi/test:1e-9: a failed MPI_Test costs
# 1 ns of simulated time (SimGrid's default, 100 us per test, charges tuna_wait's polling:
# 8.4 ms for a 17 us exchange at P = 64; with 0 this sweep did not finish on Fugaku-like
# P = 256 in 15 minutes of wall time; 1e-9 added 0.5% to the persistent linear row's 18.0 us).
#   sim/neighbor_study.sh P [PLATFORM ...]     (default: fugaku polaris)
#   ROWS=vendor,linear,tuna,auto sim/neighbor_study.sh 1024   (fewer rows)
# Needs build/smpi (cmake -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake) and the matrices in
# $TUNA_SUITESPARSE (default /work/shared/data/suitesparse).
set -euo pipefail
cd "$(dirname "$0")/.."
P=${1:?usage: sim/neighbor_study.sh P [PLATFORM ...]}
shift
M=${TUNA_SUITESPARSE:-/work/shared/data/suitesparse}
mkdir -p sim/results/neighbor
plats=("$@")
[ ${#plats[@]} -gt 0 ] || plats=(fugaku polaris)
for plat in "${plats[@]}"; do
  PYTHONPATH=python ${PYTHON:-python3} -m tuna_tools sim run --platform "$plat" --procs "$P" --rpn 32 \
    --collective neighbor_alltoallv -a "${ROWS:-vendor,linear,node-aware:max=2048,tuna,auto}" \
    -d "spmv:$M/can_1072.mtx" -d "spmv:file=$M/can_1072.mtx,scale=256" \
    -d "spmv:$M/msc01050.mtx" -d "spmv:file=$M/msc01050.mtx,scale=256" \
    -n 3 -w 1 --cfg smpi/test:1e-9 --bench build/smpi/tools/tuna-bench \
    -o "sim/results/neighbor/sim-$plat-p$P.jsonl" &
done
wait
