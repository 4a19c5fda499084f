#!/bin/sh
# Issue 36's SMPI study of MPI_Alltoall: every SMPI alltoall algorithm (smpi/alltoall:NAME) and
# tuna's alltoall rows at their best parameters, plus `auto`, on the Fugaku-like and
# Polaris-like platforms, 32 ranks per node, every block S bytes, one warm-up call and one
# timed call (simulated times are deterministic). ONE smpirun per configuration, one at a
# time, at nice 10, unverified from P = 256 on (verified buffers take 3 P^2 S bytes). JSON
# lines appended to sim/results/alltoall/alltoall-P.jsonl; sim/alltoall_table.py writes the tables and figure of
# docs/results/alltoall.md ("Simulated").
#
#   sim/alltoall_study.sh                                  the list below
#   SIZES=8,256 LIST="256:polaris:smpi:900" sim/alltoall_study.sh
#
# BENCH is a tuna-bench built with SG's smpicc (default SimGrid 3.35, scripts/build-simgrid.sh):
#   cmake -S . -B build/smpi-3.35 -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake \
#         -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNA_SIMGRID_PREFIX=/work/cache/simgrid-3.35
#   cmake --build build/smpi-3.35 --target tuna-bench
set -uf  # -f: the argument lists below hold * (tuna-bench --param *=powers)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
: "${SIZES:=8,64,256,1K,4K,16K,64K}" "${SG:=/work/cache/simgrid-3.35}"
: "${BENCH:=build/smpi-3.35/tools/tuna-bench}"
OUT=${OUT:-$ROOT/sim/results/alltoall}
mkdir -p "$OUT"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"

# SMPI's alltoall algorithms, each its own smpirun (tuna-bench -a vendor). Not run: `automatic`
# (it runs every algorithm inside each call), `pair_rma` (one-sided; it fails at P = 64 in
# SimGrid 3.35). `rdb` allocates P x P x S bytes per rank (17 GiB at P = 64, S = 64 KiB):
# run at S <= 16 KiB, P = 64 only. `3dmesh` needs P a cube (64 here).
SMPI_ALGS="basic_linear,bruck,pair,pair_light_barrier,pair_mpi_barrier,pair_one_barrier,ring,\
ring_light_barrier,ring_mpi_barrier,ring_one_barrier,2dmesh,mvapich2,mvapich2_scatter_dest,\
ompi,mpich,impi"
SMPI_FEW="basic_linear,bruck,pair,ring,2dmesh,mvapich2,ompi,mpich"
# tuna's rows; not multipair-testany (the waitany exchange, polling: SMPI charges every
# MPI_Testany, minutes of simulation per call at P = 64) nor vendor (SMPI's own: above).
ROWS="spreadout,scattered,linear,pairwise,xor,multipair,multipair-waitany,bruck,padded-bruck,\
bruck-radix,tuna,coalesced,staggered"

# P:PLATFORM:CONFIG:TIMEOUT[:SIZES], cheapest first so a stopped study still holds whole rows.
: "${LIST:=
64:fugaku:smpi:900 64:fugaku:rows:1800 64:fugaku:auto:900 64:fugaku:smpi3d:600
64:fugaku:smpirdb:900:8,64,256,1K,4K,16K
64:polaris:smpi:900 64:polaris:rows:1800 64:polaris:auto:900 64:polaris:smpi3d:600
64:polaris:smpirdb:900:8,64,256,1K,4K,16K
256:polaris:fam:1800:8,256,4K,64K 256:polaris:auto:1800:8,256,4K,64K
256:polaris:smpifew:3600:8,256,4K,64K
256:fugaku:fam:1800:8,256,4K,64K 256:fugaku:auto:1800:8,256,4K,64K
256:fugaku:smpifew:3600:8,256,4K,64K
1024:polaris:fam:1800:8,256 1024:polaris:smpifew:3600:8 1024:polaris:smpilog:1800:256
1024:polaris:mesh:1800:8,256 1024:polaris:auto:1800:8
1024:fugaku:fam:1800:8 1024:fugaku:smpilog:1800:8,256 1024:fugaku:mesh:1800:8,256
1024:fugaku:hier:2400:256 1024:fugaku:smpilin:2400:256 1024:fugaku:auto:2400:8
}"

args_of() { # CONFIG -> tuna sim run options
    case $1 in
    smpi) echo "-a vendor --selectors $SMPI_ALGS" ;;
    smpifew) echo "-a vendor --selectors $SMPI_FEW" ;;
    smpi3d) echo "-a vendor --selectors 3dmesh" ;;
    # P = 1024: SMPI's logarithmic and grid algorithms (cheap to simulate; `ompi` and `mpich`
    # run `bruck` at 8 B), and apart from them two of its linear ones (a million messages per
    # call; `basic_linear` aborts SimGrid 3.35 on the torus from P = 256).
    smpilog) echo "-a vendor --selectors bruck,2dmesh" ;;
    smpilin) echo "-a vendor --selectors pair,ring" ;;
    smpirdb) echo "-a vendor --selectors rdb" ;;
    # Every row; radices at powers of 2 (the other parameters at their defaults).
    rows) echo "-a $ROWS --param radix=2,4,8,16,64" ;;
    # Larger P: the logarithmic and hierarchical rows at small radices and the linear one.
    fam) echo "-a bruck,bruck-radix,tuna,coalesced,staggered,spreadout --param radix=2,4,8,16" ;;
    mesh) echo "-a mesh --param dims=2,3,4,5" ;;
    # P = 1024 on the torus (slow to simulate): the hierarchical rows at the radices that won
    # at P = 256.
    hier) echo "-a coalesced,tuna --param radix=4,8" ;;
    # The warm-up ends where learning settled (tuna-bench --until-learned), not at 90 calls.
    auto) echo "-a auto --until-learned" ;;
    *) echo "alltoall_study.sh: unknown configuration $1" >&2; exit 2 ;;
    esac
}

for item in $LIST; do
    IFS=: read -r P plat cfg tmo sizes <<EOF
$item
EOF
    sizes=${sizes:-$SIZES}
    verify=""
    [ "$P" -ge 256 ] && verify="--no-verify"  # real buffers: 3 P^2 S bytes
    out="$OUT/alltoall-$P.jsonl"
    # shellcheck disable=SC2046
    (cd "$ROOT" && nice -n 10 "$PY" -m tuna_tools sim run --platform "$plat" --procs "$P" \
        --rpn 32 --collective alltoall -s "$sizes" -w 1 $(args_of "$cfg") --no-vendor $verify \
        --simgrid "$SG" --bench "$BENCH" --timeout "$tmo" --append -o "$out" -q) ||
        echo "alltoall_study.sh: $plat P=$P $cfg failed or timed out" >&2
done
