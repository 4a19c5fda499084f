#!/bin/sh
# Identity check (issue 55): the project's platforms (sim/platforms, sim/gen_platform.py) give
# the same simulated times under SimGrid 4.1 as under Debian's 3.32, at P = 64 and 256 on the
# Fugaku-like torus and the Polaris-like dragonfly, for TuNA, coalesced and staggered (r = 4),
# the linear exchange (P = 64) and SMPI's mpich alltoallv, 16 B and 1 KiB, every
# configuration's first call verified. The baseline sim/baselines/identity-p64-p256.json was
# recorded under 3.32 with the platforms as they were before the <zone> wrapper that 4.1 needs
# (docs/results/simulation.md, "SimGrid 4.1 at the papers' scale"); SMPI's alltoallv, which
# sends empty messages, has its own times under SimGrid >= 3.34 there ("times_since_3.34").
#
#   sim/simgrid_identity.sh                    # SimGrid 4.1 from $TUNA_SIMGRID41, else
#                                              # ${TUNA_CACHE:-~/.cache/tuna}/simgrid-4.1
#   SIMGRID=system BENCH=build/smpi/tools/tuna-bench sim/simgrid_identity.sh   # Debian's 3.32
#   RECORD=1 SIMGRID=system BENCH=... PLATDIR=/tmp/old sim/simgrid_identity.sh  # the baseline
#
# Without a SimGrid 4.1 install it prints why and exits 77 (CTest's SKIP_RETURN_CODE): CI
# does not build SimGrid. With one, it builds tuna-bench with 4.1's smpicc into $BUILD41
# (default ./smpi-4.1 under the current directory; incremental) unless BENCH names one.
# About 5 minutes of CPU under 4.1.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
BASELINE=${BASELINE:-$ROOT/sim/baselines/identity-p64-p256.json}
PLATDIR=${PLATDIR:-$ROOT/sim/platforms}
OUT=${OUT:-$PWD/simgrid_identity.jsonl}
SIMGRID=${SIMGRID:-${TUNA_SIMGRID41:-${TUNA_CACHE:-$HOME/.cache/tuna}/simgrid-4.1}}

if [ "$SIMGRID" = system ]; then
    sg=""
    : "${BENCH:?SIMGRID=system needs BENCH, a tuna-bench built with Debian's smpicc}"
else
    if [ ! -x "$SIMGRID/bin/smpicc" ] || [ ! -x "$SIMGRID/bin/smpirun" ]; then
        echo "simgrid_identity: SKIPPED: no SimGrid 4.1 install at $SIMGRID (scripts/build-simgrid.sh" \
             "builds one; set TUNA_SIMGRID41=PREFIX for another place). CI does not build SimGrid."
        exit 77
    fi
    sg="--simgrid $SIMGRID"
    if [ -z "${BENCH:-}" ]; then
        BUILD41=${BUILD41:-$PWD/smpi-4.1}
        echo "simgrid_identity: building tuna-bench with $SIMGRID/bin/smpicc in $BUILD41"
        cmake -S "$ROOT" -B "$BUILD41" -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/smpi.cmake" \
            -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNA_SIMGRID_PREFIX="$SIMGRID" >"$BUILD41.log" 2>&1 &&
            cmake --build "$BUILD41" -j2 --target tuna-bench >>"$BUILD41.log" 2>&1 ||
            { echo "simgrid_identity: the 4.1 build failed, see $BUILD41.log"; exit 1; }
        BENCH=$BUILD41/tools/tuna-bench
    fi
fi
rm -f "$OUT"
run() { # PLATFORM P tuna-sim-run-options...
    plat=$1 P=$2
    shift 2
    # shellcheck disable=SC2086
    "$PY" -m tuna_tools sim run --platform "$PLATDIR/$plat.xml" --procs "$P" --rpn 32 -w 1 \
        $sg --bench "$BENCH" -q --append -o "$OUT" "$@" ||
        { echo "simgrid_identity: $plat P=$P $* failed"; exit 1; }
}
for plat in fugaku polaris; do
    run "$plat" 64 -a tuna,coalesced,staggered,spreadout --param radix=4 -s 16,1K --no-vendor
    run "$plat" 64 -a vendor --selectors mpich -s 16,1K --no-vendor
    run "$plat" 256 -a tuna,coalesced,staggered --param radix=4 -s 16,1K --no-vendor
    run "$plat" 256 -a vendor --selectors mpich -s 16,1K --no-vendor
done
if [ -n "${RECORD:-}" ]; then
    exec "$PY" -m tuna_tools sim check "$OUT" --times --tolerance 1e-6 --baseline "$BASELINE" --record
fi
if [ "$SIMGRID" != system ]; then
    # SimGrid's own difference, not the platform's: from 3.34 on an empty message costs no
    # smpi/os, ois, or (FactorSet, docs/results/simulation.md "SimGrid 3.32 vs 3.35"), and
    # SMPI's alltoallv sends one per empty block (tuna sends none). Its rows are compared
    # with the baseline's "times_since_3.34" (recorded under 4.1); tuna's with 3.32's.
    "$PY" - "$BASELINE" "$OUT.baseline" <<'PYEOF' || exit 1
import json, sys
base = json.load(open(sys.argv[1]))
newer = base.pop("times_since_3.34", {})
base["times"].update(newer.get("times", {}))
json.dump(base, open(sys.argv[2], "w"), indent=2)
PYEOF
    BASELINE=$OUT.baseline
fi
exec "$PY" -m tuna_tools sim check "$OUT" --times --identical --baseline "$BASELINE"
