#!/bin/sh
# The runs behind docs/results/simulation-gap.md "The gap to the attainable bound" (SimGrid 3.35).
#   sim/bound_study.sh BENCH TAG [WHAT...]
# BENCH: a tuna-bench built with SimGrid 3.35's smpicc; TAG: before | after (file names).
# WHAT (default: all): rdv eager fast warm warm9 warmpolaris warmfast kib trace bruck cblock
#   families.
# trace: SMPI Paje traces (in $TRACEDIR, default /tmp/bound-trace; not kept) of one warm call,
# per-phase table by sim/bound_trace.py into sim/results/bound/TAG-trace-*.md.  Results: sim/results/bound/TAG-*.jsonl (appended).
# Everything at nice 19; every smpirun bounded by --timeout.
set -eu
BENCH=$1; TAG=$2; shift 2
WHAT=${*:-rdv eager fast warm warm9 warmpolaris warmfast kib trace bruck cblock families}
TRACEDIR=${TRACEDIR:-/tmp/bound-trace}
MW=8; [ "$TAG" = after ] && MW=adaptive
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/sim/results/bound
PY=${PY:-/work/main/.venv/bin/python}
SG=${SG:-/work/cache/simgrid-3.35}
mkdir -p "$OUT"
run() { PYTHONPATH=$ROOT/python nice -n 19 "$PY" -m tuna_tools sim run --simgrid "$SG" \
          --bench "$BENCH" --rpn 32 -s 16 --param radix=4 --append "$@"; }
for w in $WHAT; do case $w in
rdv)   # rendezvous model (--scale), as the study's P = 256 .. 4096 series; with and without phases
  for P in 64 128 256 512 1024; do
    run --scale --platform fugaku --procs $P -a tuna,coalesced --timeout 900 -o "$OUT/$TAG-rdv.jsonl"
    run --scale --platform fugaku --procs $P -a tuna,coalesced --phases --timeout 900 -o "$OUT/$TAG-rdv-phases.jsonl"
  done
  run --scale --platform fugaku --procs 2048 -a tuna --timeout 900 -o "$OUT/$TAG-rdv.jsonl"
  for P in 64 256 1024; do
    run --scale --platform polaris --procs $P -a tuna,coalesced --timeout 900 -o "$OUT/$TAG-rdv-polaris.jsonl"
  done ;;
eager) # SMPI's default (eager) model; verified up to P = 256
  for P in 64 128 256; do
    run --platform fugaku --procs $P -a tuna,coalesced --no-vendor --timeout 900 -o "$OUT/$TAG-eager.jsonl"
  done
  run --platform fugaku --procs 1024 -a tuna --no-vendor --no-verify --timeout 900 -o "$OUT/$TAG-eager.jsonl" ;;
fast)  # ablation: the same torus with 100x faster links (sim/results/bound/fugaku-fastlinks.xml)
  for P in 256 1024; do
    run --scale --platform "$OUT/fugaku-fastlinks.xml" --procs $P -a tuna,coalesced --timeout 900 \
        -o "$OUT/$TAG-rdv-fastlinks.jsonl"
  done ;;
warm)  # TuNA with one untimed call first (-w 1): without the first call's communicator setup
  for P in 64 256 1024; do
    run --scale --platform fugaku --procs $P -a tuna -w 1 --timeout 900 -o "$OUT/$TAG-rdv-warm.jsonl"
  done ;;
warm9) # warm TuNA and coalesced at surf/precision 1e-9 (per-message sleeps charged exactly)
  for P in 256 1024; do
    run --scale --precision 1e-9 --platform fugaku --procs $P -a tuna,coalesced -w 1 \
        --timeout 900 -o "$OUT/$TAG-rdv-warm-prec9.jsonl"
  done ;;
warmpolaris)
  for P in 64 256 1024; do
    run --scale --platform polaris --procs $P -a tuna -w 1 --timeout 900 -o "$OUT/$TAG-rdv-warm-polaris.jsonl"
  done ;;
warmfast)
  for P in 256 1024; do
    run --scale --platform "$OUT/fugaku-fastlinks.xml" --procs $P -a tuna -w 1 --timeout 900 \
        -o "$OUT/$TAG-rdv-warm-fastlinks.jsonl"
  done ;;
trace)
  mkdir -p "$TRACEDIR"
  for P in 256 1024; do for alg in tuna coalesced; do
    t=$TRACEDIR/$TAG-$alg-$P
    rm -f "$t.jsonl"
    run --scale --platform fugaku --procs $P -a $alg -w 1 --timeout 900 --cfg tracing:yes \
        --cfg tracing/smpi:yes --cfg tracing/precision:9 --cfg tracing/filename:$t.trace -o "$t.jsonl"
    PYTHONPATH=$ROOT/python nice -n 19 "$PY" "$ROOT/sim/bound_trace.py" "$t.trace" "$t.jsonl" \
        --meta-word $MW > "$OUT/$TAG-trace-$alg-p$P.md"
    rm -f "$t.trace"
  done; done ;;
bruck) # two-phase Bruck: warm, rendezvous; and eager, verified (the first call)
  for P in 64 256 1024; do
    run --scale --platform fugaku --procs $P -a twophase-bruck -w 1 --timeout 900 \
        -o "$OUT/$TAG-rdv-warm-bruck.jsonl"
  done
  for P in 64 256; do
    run --platform fugaku --procs $P -a twophase-bruck --no-vendor --timeout 900 \
        -o "$OUT/$TAG-eager-bruck.jsonl"
  done ;;
cblock) # coalesced with every remote node in one inter-node batch (block = N - 1)
  run --scale --platform fugaku --procs 1024 -a coalesced --param block=31 --timeout 900 \
      -o "$OUT/$TAG-rdv-cblock.jsonl" ;;
families) # every family once, warm, rendezvous (radix 4 where there is one)
  for P in 64 256; do
    run --scale --platform fugaku --procs $P -w 1 --timeout 900 \
        -a tuna,coalesced,staggered,twophase-bruck,padded-bruck,scattered,spreadout \
        -o "$OUT/$TAG-rdv-warm-families.jsonl"
  done
  # P = 64 at surf/precision 1e-9 (--scale's 1e-7 rounds the per-message sleeps)
  run --scale --precision 1e-9 --platform fugaku --procs 64 -w 1 --timeout 900 \
      -a tuna,coalesced,staggered,twophase-bruck,padded-bruck,scattered,spreadout \
      -o "$OUT/$TAG-rdv-warm-families-prec9.jsonl" ;;
kib)   # 1 KiB blocks (announced sizes need 2 bytes), uniform and power law, P = 256
  for plat in fugaku polaris; do
    run --scale --platform $plat --procs 256 -a tuna,coalesced -s 1K -d uniform -d powerlaw \
        --timeout 900 -o "$OUT/$TAG-rdv-1k.jsonl"
  done ;;
esac; done
