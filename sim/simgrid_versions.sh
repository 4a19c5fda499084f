#!/bin/sh
# SimGrid 3.32 (Debian) vs 3.35 (scripts/build-simgrid.sh), issue 19: the same tuna-bench
# source built with each SimGrid's smpicc, the same platforms and options, eager (default)
# model, every configuration verified. ONE smpirun per configuration (so wall time and max
# RSS are the configuration's own), the two versions back to back for each configuration
# (similar machine load), one at a time, at nice 10. JSON lines appended to
# sim/results/simgrid-versions/simgrid-VERSION.jsonl (docs/results/simulation.md, "SimGrid 3.32 vs
# 3.35").
#
#   sim/simgrid_versions.sh                 P = 64 and 256, both platforms, 16 B and 1 KiB
#   PROCS=1024 PLATFORMS=fugaku SIZES=16 CONFIGS="tuna4" NOVERIFY=1 sim/simgrid_versions.sh
#   PROCS=1024 PLATFORMS=fugaku SIZES=16 VERSIONS=3.35 CONFIGS="tuna2 tunasqrt vmpich vompi" \
#       NOVERIFY=1 sim/simgrid_versions.sh
# NOVERIFY=1: tuna sim run --no-verify (no reference MPI_Alltoallv, shared payloads), as the
# large-P runs of docs/simulation.md; the default verifies every configuration.
#
# Builds (same source for both; the results of docs/simulation.md used commit 93cdea0):
#   cmake -S . -B build/h19-smpi-3.32 -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake
#   cmake -S . -B build/h19-smpi-3.35 -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake \
#         -DTUNA_SIMGRID_PREFIX=/work/cache/simgrid-3.35
#   cmake --build build/h19-smpi-3.3X -j1 --target tuna-bench
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
: "${PROCS:=64 256}" "${PLATFORMS:=fugaku polaris}" "${SIZES:=16 1K}" "${VERSIONS:=3.32 3.35}"
: "${CONFIGS:=tuna2 tunasqrt coalesced4 spreadout vmpich vompi}" "${TIMEOUT:=900}"
: "${SG335:=/work/cache/simgrid-3.35}"
OUT=${OUT:-$ROOT/sim/results/simgrid-versions}
mkdir -p "$OUT"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"

args_of() { # CONFIG -> tuna sim run options
    case $1 in
    tuna2) echo "-a tuna --param radix=2 --no-vendor" ;;
    tuna4) echo "-a tuna --param radix=4 --no-vendor" ;;
    tunasqrt) echo "-a tuna --param radix=sqrtP --no-vendor" ;;
    coalesced4) echo "-a coalesced --param radix=4 --no-vendor" ;;
    spreadout) echo "-a spreadout --no-vendor" ;;
    vmpich) echo "-a vendor --selectors mpich --no-vendor" ;;
    vompi) echo "-a vendor --selectors ompi --no-vendor" ;;
    *) echo "simgrid_versions.sh: unknown configuration $1" >&2; exit 2 ;;
    esac
}

for P in $PROCS; do for plat in $PLATFORMS; do for S in $SIZES; do for c in $CONFIGS; do
    for v in $VERSIONS; do
        case $v in
        3.32) sg="" ;;
        *) sg="--simgrid $SG335" ;;
        esac
        # shellcheck disable=SC2046,SC2086
        (cd "$ROOT" && nice -n 10 "$PY" -m tuna_tools sim run --platform "$plat" --procs "$P" \
            --rpn 32 -s "$S" $(args_of "$c") ${NOVERIFY:+--no-verify} $sg --bench "build/h19-smpi-$v/tools/tuna-bench" \
            --timeout "$TIMEOUT" --append -o "$OUT/simgrid-$v.jsonl") ||
            echo "simgrid_versions.sh: $v $plat P=$P S=$S $c failed or timed out" >&2
    done
done; done; done; done
