#!/usr/bin/env bash
# SimGrid 3.32 vs 3.35 on zero-byte messages (docs/results/simulation.md, "SimGrid 3.32 vs 3.35"):
# message_overhead.c between two Fugaku-like nodes (os = or = 0.2 us), 1 and 4 messages each
# way of 0, 1 and 16 bytes, under Debian's 3.32 and the SimGrid at $SG335.
#   sim/probes/zero_bytes.sh [SG335_PREFIX]     (default /work/cache/simgrid-3.35)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SG335=${1:-/work/cache/simgrid-3.35}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
smpicc -O2 -o "$tmp/mo-3.32" "$here/message_overhead.c" 2>/dev/null
"$SG335/bin/smpicc" -O2 -o "$tmp/mo-3.35" "$here/message_overhead.c" 2>/dev/null
printf 'node-0:1\nnode-1:1\n' > "$tmp/hosts"
cfg=(--cfg=smpi/simulate-computation:no --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1
     --cfg=network/crosstraffic:0 --cfg=smpi/os:0:2e-07:0 --cfg=smpi/ois:0:2e-07:0
     --cfg=smpi/or:0:2e-07:0 --cfg=surf/precision:1e-09 --cfg=maxmin/precision:1e-3
     --cfg=smpi/host-speed:1Gf --cfg=smpi/barrier:ompi_bruck --log=root.thres:warning)
for v in 3.32 3.35; do
  run=smpirun
  [ "$v" = 3.32 ] || run="$SG335/bin/smpirun"
  for m in 1 4; do for s in 0 1 16; do
    echo -n "SimGrid $v: "
    "$run" -np 2 -platform "$here/../platforms/fugaku.xml" -hostfile "$tmp/hosts" "${cfg[@]}" \
      "$tmp/mo-$v" "$m" "$s" 2>&1 | grep -v "^\[" || true
  done; done
done
