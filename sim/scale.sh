#!/bin/sh
# Large-P simulation runs (P = 1024..4096) with `tuna sim run --scale`: rendezvous sends
# (smpi/send-is-detached-thresh:0, a different model from the default eager one; every run
# also uses maxmin/precision:1e-3, which avoids a SimGrid 3.32 segmentation fault), unverified, no vendor
# next to each configuration. One smpirun per line, each limited to TIMEOUT seconds (600);
# JSON lines appended to sim/results/scale-PLATFORM-pP.jsonl. See the report of issue 6.
#
#   sim/scale.sh                      the default list below
#   sim/scale.sh fugaku 2048 tuna radix=2,4,64 [extra tuna sim run options]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
: "${TUNA_SIM_BENCH:=$ROOT/build-sim/tools/tuna-bench}"
: "${TIMEOUT:=600}"
export TUNA_SIM_BENCH
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"

one() { # PLATFORM P ALGORITHMS PARAM [extra options]
    plat=$1 procs=$2 algs=$3 param=$4
    shift 4
    set -- --param "$param" "$@"
    [ "$param" = "-" ] && shift 2
    python3 -m tuna_tools sim run --platform "$plat" --procs "$procs" -a "$algs" -s "${SIZES:-16}" \
        --scale --timeout "$TIMEOUT" --append \
        -o "$ROOT/sim/results/scale-$plat-p$procs.jsonl" "$@" ||
        echo "scale.sh: $plat P=$procs $algs $param failed or timed out" >&2
}

if [ $# -ge 4 ]; then
    one "$@"
    exit 0
fi
for plat in fugaku polaris; do
    one $plat 1024 tuna radix=2,4,32
    one $plat 1024 coalesced,staggered radix=4
    one $plat 1024 spreadout,scattered -
    one $plat 1024 vendor - --selectors mpich
    one $plat 2048 tuna radix=2,4,64
    one $plat 2048 coalesced,staggered radix=4
    one $plat 4096 tuna radix=4
    one $plat 4096 coalesced,staggered radix=4
    one $plat 4096 tuna radix=2,64
done
