#!/bin/sh
# What moves SimGrid 4.1's cost (issue 55): one configuration, one smpirun per setting, one at
# a time (nice 19); CPU, wall and max RSS from /usr/bin/time in each record (sim.cpu_s,
# sim.wall_s, sim.max_rss_kib), the simulated time beside them (a setting that changes it
# changes the model). JSON lines appended to sim/results/simgrid41-cost/cost-settings.jsonl.
#
#   sim/simgrid_cost_settings.sh                       # Polaris-like, P = 1024, coalesced r = 4, 16 B
#   PLAT=fugaku P=256 ARGS="-a tuna --param radix=16" sim/simgrid_cost_settings.sh
#
# BENCH: a tuna-bench built with 4.1's smpicc (build/smpi-4.1, docs/simulation.md "Building").
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
: "${PLAT:=polaris}" "${P:=1024}" "${ARGS:=-a coalesced --param radix=4}" "${S:=16}"
: "${BENCH:=$ROOT/build/smpi-4.1/tools/tuna-bench}" "${TIMEOUT:=1200}"
OUT=${OUT:-$ROOT/sim/results/simgrid41-cost/cost-settings.jsonl}
mkdir -p "$(dirname "$OUT")"
# one setting per line ("default": tuna sim run's own options; maxmin/precision is 1e-3 there)
: "${SETTINGS:=default
network/optim:Full
network/solver:fairbottleneck
maxmin/precision:1e-2
surf/precision:1e-7
smpi/shared-malloc:global}"
echo "$SETTINGS" | while read -r setting; do
    [ -n "$setting" ] || continue
    cfg=""
    [ "$setting" = default ] || cfg="--cfg $setting"
    # shellcheck disable=SC2086
    nice -n 19 "$PY" -m tuna_tools sim run --platform "$PLAT" --procs "$P" --rpn 32 -s "$S" -w 1 \
        $ARGS --no-vendor --no-verify $cfg --bench "$BENCH" --timeout "$TIMEOUT" -q \
        --append -o "$OUT" || echo "simgrid_cost_settings: $setting failed or timed out" >&2
done
