#!/usr/bin/env bash
# Which topology calls of tuna_neighbor_alltoallv's path SMPI implements (docs/results/
# neighbor.md, "What SMPI 3.32 implements"): one smpirun per call, 4 ranks on a 4-host cluster.
#   sim/probes/neighbor_support.sh [SMPICC [SMPIRUN]]    (default: smpicc, smpirun)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cc=${1:-smpicc}
run=${2:-smpirun}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cc" -O2 -o "$tmp/probe" "$here/neighbor_support.c" 2>/dev/null
cat > "$tmp/p.xml" <<'XML'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<cluster id="c" prefix="h" radical="0-3" suffix="" speed="1Gf" bw="10GBps" lat="1us"/>
</platform>
XML
printf 'h0\nh1\nh2\nh3\n' > "$tmp/hosts"
for f in MPI_Cart_create MPI_Cartdim_get MPI_Cart_shift MPI_Topo_test MPI_Graph_create \
         MPI_Dist_graph_create MPI_Dist_graph_create_adjacent MPI_Neighbor_alltoallv; do
  out=$("$run" -np 4 -platform "$tmp/p.xml" -hostfile "$tmp/hosts" "$tmp/probe" "$f" 2>&1)
  if grep -q "Not yet implemented" <<< "$out"; then
    printf '%-32s NOT IMPLEMENTED (%s)\n' "$f" "$(grep -o 'Not yet implemented: [A-Za-z_]*' <<< "$out" | head -1)"
  else
    grep -v '^\[' <<< "$out" | grep "$f" || printf '%-32s failed\n' "$f"
  fi
done
