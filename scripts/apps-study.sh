#!/bin/sh
# The runs of docs/applications.md: tuna-fft and tuna-tc, every algorithm class, JSON lines.
#   scripts/apps-study.sh local BUILD_DIR [OUT_DIR]   mpiexec, P = 4 and 8 (oversubscribed here)
#   scripts/apps-study.sh sim SMPI_BUILD_DIR [OUT_DIR] smpirun, P = 64 on sim/platforms/fattree
# SMPI_BUILD_DIR: cmake -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake. Data: ../shared/data if present.
set -eu
mode=${1:?usage: $0 local|sim BUILD_DIR [OUT_DIR]}
build=$(cd "${2:?build directory}" && pwd)
out=${3:-.}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
cd "$out"
A="vendor,linear,spreadout,scattered,pairwise,tuna,tuna:radix=2,coalesced"
graphs="-g chain:400 -g rmat:9 -g grid:20x20 -g $root/tests/data/west0132.mtx"
big="$root/../shared/data/suitesparse/can_1072.mtx"
[ -f "$big" ] && graphs="$graphs -g $big"
case $mode in
local)
  M="mpiexec"
  mpiexec --version 2>&1 | grep -q "Open MPI" && M="mpiexec --oversubscribe --allow-run-as-root"
  for np in 4 8; do
    TUNA_RANKS_PER_NODE=2 $M -n $np "$build/apps/tuna-fft" -a $A -W n2,custom -d 64x64x64 -n 10 \
      -j fft_local_p$np.jsonl --run-name local-fft-p$np
    TUNA_RANKS_PER_NODE=2 $M -n $np "$build/apps/tuna-fft" -a $A -W n1 -d 1x1x32768 -n 10 \
      -j fft_local_n1_p$np.jsonl --run-name local-fft-n1-p$np
    # shellcheck disable=SC2086
    TUNA_RANKS_PER_NODE=2 $M -n $np "$build/apps/tuna-tc" -a $A -n 3 $graphs \
      -j tc_local_p$np.jsonl --run-name local-tc-p$np
  done ;;
sim)
  # tuna sim's settings; the applications charge their own computation (app_charge), the
  # copies inside any all-to-all are free alike (smpi/simulate-computation:no).
  CFG="--cfg=smpi/simulate-computation:no --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1
       --cfg=network/crosstraffic:0 --cfg=smpi/os:0:5e-7:0 --cfg=smpi/ois:0:5e-7:0
       --cfg=smpi/or:0:5e-7:0 --cfg=smpi/host-speed:1Gf --cfg=surf/precision:1e-7
       --log=root.thres:warning"
  A="vendor,linear,scattered,pairwise,tuna,tuna:radix=2,coalesced"
  hosts=$(mktemp)
  for i in 0 1 2 3; do echo "node-$i:16"; done > "$hosts"
  export TUNA_RANKS_PER_NODE=16
  # shellcheck disable=SC2086
  smpirun -np 64 -platform "$root/sim/platforms/fattree.xml" -hostfile "$hosts" $CFG \
    "$build/apps/tuna-fft" -a $A -W n1,n2 -d 256x256x32 -n 3 -j fft_sim_p64.jsonl \
    --run-name sim-fattree-fft-p64
  # shellcheck disable=SC2086
  smpirun -np 64 -platform "$root/sim/platforms/fattree.xml" -hostfile "$hosts" $CFG \
    "$build/apps/tuna-tc" -a $A -g chain:64 -g rmat:9 -j tc_sim_p64.jsonl \
    --run-name sim-fattree-tc-p64
  rm -f "$hosts" ;;
*)
  echo "usage: $0 local|sim BUILD_DIR [OUT_DIR]" >&2
  exit 2 ;;
esac
