#!/usr/bin/env bash
# The SMPI probes behind docs/simulation.md ("A node's injection is its own link") and
# docs/model.md ("Profiles of simulated platforms"), with tuna sim's SimGrid settings.
#   sim/probes/run.sh [PLATFORM.xml ...]   (default: sim/platforms/polaris.xml and fattree.xml)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
smpicc -O2 -o "$tmp/shift_exchange" "$here/shift_exchange.c" 2>/dev/null
smpicc -O2 -o "$tmp/message_overhead" "$here/message_overhead.c" 2>/dev/null
smpicc -O2 -o "$tmp/rounds" "$here/rounds.c" 2>/dev/null
cfg=(--cfg=smpi/simulate-computation:no --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1
     --cfg=network/crosstraffic:0 --cfg=smpi/os:0:5e-07:0 --cfg=smpi/ois:0:5e-07:0
     --cfg=smpi/or:0:5e-07:0 --cfg=surf/precision:1e-09 --cfg=maxmin/precision:1e-3
     --cfg=smpi/host-speed:1Gf --cfg=smpi/barrier:ompi_bruck --log=root.thres:warning)
run() { # PLATFORM RANKS_PER_NODE P PROGRAM ARGS...
  local xml=$1 rpn=$2 np=$3; shift 3
  : > "$tmp/hosts"
  for ((i = 0; i < (np + rpn - 1) / rpn; i++)); do echo "node-$i:$rpn" >> "$tmp/hosts"; done
  smpirun -np "$np" -platform "$xml" -hostfile "$tmp/hosts" "${cfg[@]}" ${EXTRA:-} "$@" 2>&1 |
    grep -v "^\[" || true
}
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=("$here/../platforms/polaris.xml" "$here/../platforms/fattree.xml")
for xml in "${platforms[@]}"; do
  rpn=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['ranks_per_node'])" "${xml%.xml}.json")
  echo "== $(basename "$xml"): ring exchange of 64 KiB per rank to the next node, $rpn ranks per node"
  for nodes in 2 4 8; do run "$xml" "$rpn" $((nodes * rpn)) "$tmp/shift_exchange" 65536 "$rpn"; done
done
xml=${platforms[0]}
echo "== $(basename "$xml"): 100 one-byte messages each way between two nodes, eager then rendezvous"
run "$xml" 1 2 "$tmp/message_overhead" 100
EXTRA=--cfg=smpi/send-is-detached-thresh:0 run "$xml" 1 2 "$tmp/message_overhead" 100
echo "== $(basename "$xml"): 1, 2 and 4 messages of 1 B and 4 KiB each way, eager"
for m in 1 2 4; do for s in 1 4096; do run "$xml" 1 2 "$tmp/message_overhead" $m $s; done; done
echo "== polaris.xml, 16 nodes x 4 ranks: rounds of m 16-byte messages to other nodes, eager"
for m in 1 2 3; do run "$here/../platforms/polaris.xml" 4 64 "$tmp/rounds" $m 16 16; done
echo "== fugaku.xml, 2 nodes x 32 ranks, os = or = 0.2 us: a linear exchange (63 messages a rank)"
echo "   at surf/precision 1e-9 (tuna sim run) and 1e-7 (--scale), which rounds the overheads"
for prec in 1e-09 1e-07; do
  EXTRA="--cfg=smpi/os:0:2e-07:0 --cfg=smpi/ois:0:2e-07:0 --cfg=smpi/or:0:2e-07:0 --cfg=surf/precision:$prec" \
    run "$here/../platforms/fugaku.xml" 32 64 "$tmp/rounds" 63 16 1
done
