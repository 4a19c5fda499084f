#!/usr/bin/env bash
# Issue 35, "Overlap": each alltoallv row's nonblocking form against the library's own
# MPI_Ialltoallv (the `vendor` row: SMPI's), P = 64, 32 ranks per node, Fugaku-like and
# Polaris-like, uniform blocks up to S = 64 B, 1 KiB, 16 KiB; the computation simulated
# (smpi_execute) and the operation tested every 5% of its pure time. smpi/test:0: an MPI_Test
# costs no simulated time (SimGrid's default sleeps 100 us in a test, and longer for each
# failed test in a row, to make busy loops advance the clock; here the computation advances
# it, and tuna's wait blocks in MPI_Waitall when its operation is the only one active).
# Results: sim/results/nonblocking/; table and figure: sim/overlap_table.py
# (docs/results/nonblocking.md, "Overlap, simulated"). About 30 minutes per platform here
# (SimGrid 3.32).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${TUNA_PYTHON:-$PWD/.venv/bin/python}
BENCH=${TUNA_SIM_BENCH:-build/smpi/tools/tuna-bench}
mkdir -p sim/results/nonblocking
for plat in polaris fugaku; do
  PYTHONPATH=python "$PY" -m tuna_tools.cli sim run --platform "$plat" --procs 64 \
    --bench "$BENCH" -s 64,1024,16384 -n 3 -w 2 --no-vendor --nonblocking --poll 0.05 \
    -a vendor,linear,spreadout,scattered,pairwise,tuna,tuna:radix=2,coalesced,staggered,coalesced:radix=4,coalesced:radix=8,coalesced:radix=16,staggered:radix=8 \
    --cfg smpi/test:0 -o "sim/results/nonblocking/overlap-$plat-p64.jsonl"
done
