#!/usr/bin/env bash
# percall_study.sh: before/after study of tuna's per-call cost in SimGrid SMPI.
#
# What it measures: the simulated time (median of the timed calls, slowest rank) of tuna's
# collectives next to SMPI's own ("vendor", timed interleaved in the same run), in the runs
# below. It was written to measure removing the per-call MPI_Allreduce of tuna's alltoallv,
# allgather and allreduce calls (argument agreement and global size statistics,
# docs/simulation.md): run it once on a build before the change and once on a build after it,
# with the same arguments, and compare the two output directories
# (sim/percall_summary.py BEFORE_DIR AFTER_DIR).
#
#   a  TuNA radix 2, 4, sqrtP (8 at P = 64, 16 at P = 256), S = 16 B and 1 KiB, uniform,
#      P = 64 and 256, fugaku and polaris (32 ranks per node), -w 1 -n 3; the vendor under
#      SMPI's default and mpich selectors at P = 64, mpich only at P = 256 (SMPI's default
#      alltoallv is too slow to simulate there: one call > 15 min)
#   b  auto, vendor, spreadout, tuna, coalesced, padded-bruck (default parameters), P = 64,
#      fugaku and polaris, S = 16, 256, 1K, 4K, 16K, uniform and power law, -w 2 -n 5
#   c  --collective allgather and allreduce, -a all (default parameters), S = 16 B, P = 64,
#      fugaku and polaris, -w 1 -n 3
#   d  control: the agreement's allreduce alone (SMPI's 40-byte allreduce, recursive doubling
#      and SMPI's default), P = 64 and 256, fugaku and polaris: build-independent
# Every run: `tuna sim run` defaults (eager model, every configuration's first call verified,
# SMPI's collective timed alongside, with its default selector but in part a, logarithmic
# library barrier and allreduce except for the collective measured, --ranks-per-node 32), no
# TUNA_* variable set (any in the caller's environment is unset). The warm-up call takes the
# per-communicator first-call costs out of the timed calls. One smpirun per (output file,
# selector).
#
# Usage:
#   sim/percall_study.sh BENCH PYDIR OUTDIR
#     BENCH   tuna-bench built with smpicc, or the build directory holding tools/tuna-bench
#     PYDIR   directory holding the tuna_tools package (e.g. /work/before/python); its
#             ../sim/platforms provides the platforms
#     OUTDIR  output: one NAME.jsonl per run, logs/NAME.log, walltime.tsv, commands.sh,
#             manifest.txt, TABLES.md (sim/percall_summary.py OUTDIR, if found next to this
#             script)
# Environment:
#   PARTS="a b c d"  parts to run (default all);  P256=0 skips part a's P = 256 runs
#   PYTHON         interpreter with numpy (default: PYDIR/../.venv/bin/python, else the
#                  .venv next to this script, else python3)
#   TIMEOUT=1200   seconds per smpirun (tuna sim run --timeout)
#   SELECTORS_P64=default,mpich  SELECTORS_P256=mpich   part a's SMPI alltoallv selectors
#   FORCE=1        re-run runs whose NAME.jsonl exists (default: skipped, so an interrupted
#                  study can be resumed)
# Example (17 min on this 2-core machine shared with other jobs, load 4-20; part a's fugaku
# P = 256 run 5.6 min, part b 9 min; /work/simwork/before/SUMMARY.md):
#   sim/percall_study.sh /work/before/build-smpi /work/before/python /work/simwork/before
set -euo pipefail

if [ $# -ne 3 ]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
BENCH=$1 PYDIR=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)

[ -d "$BENCH" ] && BENCH=$BENCH/tools/tuna-bench
[ -x "$BENCH" ] || { echo "percall_study: no tuna-bench at $BENCH" >&2; exit 2; }
BENCH=$(cd "$(dirname "$BENCH")" && pwd)/$(basename "$BENCH")
[ -f "$PYDIR/tuna_tools/sim.py" ] || { echo "percall_study: no tuna_tools in $PYDIR" >&2; exit 2; }
PYDIR=$(cd "$PYDIR" && pwd)
if [ -z "${PYTHON:-}" ]; then
    for cand in "$PYDIR/../.venv/bin/python" "$HERE/../.venv/bin/python" python3; do
        if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import numpy' 2>/dev/null; then
            PYTHON=$cand
            [ -x "$cand" ] && PYTHON=$(cd "$(dirname "$cand")" && pwd)/$(basename "$cand")
            break
        fi
    done
fi
: "${PYTHON:?no python with numpy found: set PYTHON}"
: "${PARTS:=a b c d}" "${P256:=1}" "${TIMEOUT:=1200}" "${FORCE:=0}"
: "${SELECTORS_P64:=default,mpich}" "${SELECTORS_P256:=mpich}"

# Default environment: no TUNA_* variable reaches tuna (nor the driver).
for v in $(compgen -e | grep '^TUNA_' || true); do
    echo "percall_study: unsetting $v=${!v}" >&2
    unset "$v"
done
export PYTHONPATH=$PYDIR

mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
PLATDIR=$(cd "$PYDIR/.." && pwd)/sim/platforms
{
    echo "== $(date -Is): sim/percall_study.sh $*"
    echo "bench: $BENCH"
    echo "bench sha256: $(sha256sum "$BENCH" | cut -d' ' -f1)"
    cache=$(dirname "$BENCH")/../CMakeCache.txt
    if [ -f "$cache" ]; then
        src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
        echo "source: $src ($(git -C "$src" describe --always --dirty 2>/dev/null || echo '?'))"
    fi
    echo "python: $PYTHON ($("$PYTHON" --version 2>&1)), PYTHONPATH=$PYDIR"
    echo "tuna_tools: $(git -C "$PYDIR" describe --always --dirty 2>/dev/null || echo '?')"
    for p in fugaku polaris; do
        echo "platform $p: $(sha256sum "$PLATDIR/$p.xml" | cut -d' ' -f1)"
    done
    echo "simgrid: $(smpirun -version 2>&1 | head -n 1 || true)"
    echo "host: $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "PARTS=$PARTS P256=$P256 TIMEOUT=$TIMEOUT SELECTORS_P64=$SELECTORS_P64" \
        "SELECTORS_P256=$SELECTORS_P256"
} >>"$OUT/manifest.txt"
[ -f "$OUT/walltime.tsv" ] || printf 'run\twall_s\tstatus\n' >"$OUT/walltime.tsv"
[ -f "$OUT/commands.sh" ] || echo "# commands run by sim/percall_study.sh (PYTHONPATH=$PYDIR)" \
    >"$OUT/commands.sh"

failed=0
# run NAME [tuna sim run options...]: one smpirun, output OUT/NAME.jsonl.
run() {
    local name=$1
    shift
    local cmd=("$PYTHON" -m tuna_tools sim run --bench "$BENCH" --timeout "$TIMEOUT" "$@"
        -o "$OUT/$name.jsonl")
    if [ "$FORCE" != 1 ] && [ -s "$OUT/$name.jsonl" ]; then
        echo "== $name: $OUT/$name.jsonl exists, skipped (FORCE=1 re-runs)"
        return 0
    fi
    echo "== $name"
    printf '+'; printf ' %q' "${cmd[@]}"; echo
    { printf '%q ' "${cmd[@]}"; echo; } >>"$OUT/commands.sh"
    local t0 t1 status=ok
    t0=$(date +%s.%N)
    if ! "${cmd[@]}" >"$OUT/logs/$name.log" 2>&1; then
        status=failed
        failed=$((failed + 1))
        rm -f "$OUT/$name.jsonl"
    fi
    t1=$(date +%s.%N)
    local wall
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    printf '%s\t%s\t%s\n' "$name" "$wall" "$status" >>"$OUT/walltime.tsv"
    tail -n 3 "$OUT/logs/$name.log"
    echo "   $name: $status, wall $wall s"
}

t_start=$(date +%s)
for part in $PARTS; do
    case $part in
    a)  # TuNA, radix 2, 4, sqrtP: P = 64 and 256, 16 B and 1 KiB, uniform. At P = 64 the
        # vendor is timed under SMPI's default selector and, in a second smpirun, mpich; at
        # P = 256 under mpich only (SELECTORS_P256): SMPI's default alltoallv (an Ialltoallv
        # completed by a Waitall that SMPI runs as repeated Waitany) did not finish two calls
        # (-w 0 -n 1: the reference and the timed one) in 15 minutes at P = 256 here.
        for plat in fugaku polaris; do
            run "a-tuna-$plat-p64" --platform "$plat" --procs 64 --rpn 32 \
                -a tuna --param radix=2,4,sqrtP -s 16,1K -d uniform -w 1 -n 3 \
                --selectors "$SELECTORS_P64"
        done
        if [ "$P256" = 1 ]; then
            for plat in fugaku polaris; do
                run "a-tuna-$plat-p256" --platform "$plat" --procs 256 --rpn 32 \
                    -a tuna --param radix=2,4,sqrtP -s 16,1K -d uniform -w 1 -n 3 \
                    --selectors "$SELECTORS_P256"
            done
        fi ;;
    b)  # auto and the logarithmic rows against the vendor, P = 64
        for plat in fugaku polaris; do
            run "b-auto-$plat-p64" --platform "$plat" --procs 64 --rpn 32 \
                -a auto,vendor,spreadout,tuna,coalesced,padded-bruck \
                -s 16,256,1K,4K,16K -d uniform -d powerlaw -w 2 -n 5
        done ;;
    c)  # allgather and allreduce, every algorithm at its default parameters, 16 B, P = 64
        for coll in allgather allreduce; do
            for plat in fugaku polaris; do
                run "c-$coll-$plat-p64" --platform "$plat" --procs 64 --rpn 32 \
                    --collective "$coll" -a all -s 16 -w 1 -n 3
            done
        done ;;
    d)  # control: the per-call agreement alone, i.e. the MPI library's 40-byte allreduce
        # (5 long longs in tuna) as tuna's calls run it: recursive doubling (rdb, the
        # alltoallv and allgather runs) and SMPI's default allreduce (the allreduce runs,
        # where `tuna sim run` leaves the measured collective's selector alone). tuna only
        # passes through (-a vendor): the same times on any build.
        for plat in fugaku polaris; do
            for alg in rdb default; do
                cfg=()
                [ "$alg" = rdb ] && cfg=(--cfg smpi/allreduce:rdb)
                run "d-agree-$alg-$plat" --platform "$plat" --procs 64,256 --rpn 32 \
                    --collective allreduce -a vendor -s 40 --no-vendor -w 1 -n 3 "${cfg[@]}"
            done
        done ;;
    *)  echo "percall_study: unknown part '$part' (a, b, c or d)" >&2
        exit 2 ;;
    esac
done
echo "percall_study: total wall $(($(date +%s) - t_start)) s, $failed run(s) failed; $OUT"

if [ -f "$HERE/percall_summary.py" ]; then
    "$PYTHON" "$HERE/percall_summary.py" "$OUT" >"$OUT/TABLES.md" &&
        echo "percall_study: tables in $OUT/TABLES.md"
fi
[ "$failed" = 0 ]
