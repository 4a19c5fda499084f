#!/bin/sh
# Issue 19's headline series: vendor (SMPI's `mpich` and `ompi` alltoallv) and tuna's families
# side by side from P = 64 to 4096, eager (default) model, SimGrid 3.35, Fugaku-like and
# Polaris-like, 32 ranks per node, uniform sizes in [0, S], one warm-up call (the first call on
# a communicator carries tuna's setup, e.g. coalesced's node communicators, which an
# application pays once; the timed call is the second). ONE smpirun per configuration
# (its wall time, CPU time and max RSS are its own), one at a time, at nice 10, unverified
# above P = 256 (the reference alltoallv would double the cost). JSON lines appended to
# sim/results/headline/headline-S.jsonl; sim/headline_table.py writes the table and figure of
# docs/results/headline.md ("Headline: vendor and tuna at scale").
#
#   sim/headline_study.sh                       the list below, S = 16
#   SIZES=1K LIST="4096:polaris:tuna4:1800" sim/headline_study.sh
#   DIST=powerlaw LIST="1024:fugaku:tuna4:1800" sim/headline_study.sh
#
# DIST is a tuna-bench distribution (default uniform); results of any other go to
# headline-NAME-S.jsonl, NAME = the distribution's name before ':' or ',' (matrix:FILE -> the
# file's base name), e.g. headline-powerlaw-16.jsonl, headline-ml_256-16.jsonl.
#
# BENCH is a tuna-bench built with SimGrid 3.35's smpicc:
#   cmake -S . -B build/smpi-3.35 -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake \
#         -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNA_SIMGRID_PREFIX=/work/cache/simgrid-3.35
#   cmake --build build/smpi-3.35 --target tuna-bench
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
: "${SIZES:=16}" "${SG:=/work/cache/simgrid-3.35}" "${BENCH:=build/smpi-3.35/tools/tuna-bench}"
: "${DIST:=uniform}"
# smpirun runs in a directory of its own: a matrix file's path must be absolute.
case $DIST in
matrix:/*) ;;
matrix:*) DIST="matrix:$ROOT/${DIST#matrix:}" ;;
esac
case $DIST in
uniform) tag="" ;;
matrix:*) tag=$(basename "${DIST#matrix:}"); tag="${tag%%,*}"; tag="${tag%.*}-" ;;
*) tag="${DIST%%[:,]*}-" ;;
esac
OUT=${OUT:-$ROOT/sim/results/headline}
mkdir -p "$OUT"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"

# auto uses the platform's profile (`tuna tune profile`, as a user calibrates once; vendor in
# it is SMPI's mpich selector, which auto's runs use) and writes to headline-auto-S.jsonl.
profile_of() { # PLATFORM -> path of its profile, written once
    f="$OUT/profile-$1-rpn32-mpich.json"
    [ -s "$f" ] || (cd "$ROOT" && TUNA_SIMGRID="$SG" "$PY" -m tuna_tools tune profile --platform "$1" --rpn 32 \
        --selector mpich --bench "$BENCH" -o "$f") >&2
    echo "$f"
}

# P:PLATFORM:CONFIG:TIMEOUT, cheapest first so a stopped study still holds whole rows.
# Not listed: SMPI's `ompi` (basic linear, P(P-1) eager flows) on the torus above 256 and on
# the dragonfly above 1024 (P = 1024 took 900+ s on Fugaku-like and 1.9 GiB on Polaris-like,
# docs/results/simulation.md "SimGrid 3.32 vs 3.35"); TuNA r = sqrt(P) above 256 on the torus
# (900+ s
# at 1024).
: "${LIST:=
64:fugaku:fams:600 64:fugaku:vboth:600 64:fugaku:auto:600
64:polaris:fams:600 64:polaris:vboth:600 64:polaris:auto:600
256:fugaku:auto:600 256:polaris:auto:600
256:fugaku:tuna2:600 256:fugaku:tuna4:600 256:fugaku:tunasqrt:600 256:fugaku:coalesced4:600
256:fugaku:staggered4:600 256:fugaku:vmpich:600 256:fugaku:vompi:600
256:polaris:tuna2:600 256:polaris:tuna4:600 256:polaris:tunasqrt:600 256:polaris:coalesced4:600
256:polaris:staggered4:600 256:polaris:vmpich:600 256:polaris:vompi:600
1024:polaris:tuna2:900 1024:polaris:tuna4:900 1024:polaris:coalesced4:900
1024:polaris:vmpich:900 1024:fugaku:tuna2:900 1024:fugaku:tuna4:900
1024:fugaku:coalesced4:900 1024:fugaku:vmpich:900 1024:polaris:auto:900 1024:fugaku:auto:900
4096:polaris:tuna4:1800 4096:polaris:tuna2:1800 4096:fugaku:tuna4:1800 4096:fugaku:tuna2:1800
4096:polaris:vmpich:2400 4096:polaris:coalesced4:1800 4096:fugaku:coalesced4:1800
4096:fugaku:vmpich:3600 4096:polaris:auto:1800 4096:fugaku:auto:1800
}"

args_of() { # CONFIG -> tuna sim run options
    case $1 in
    fams) echo "-a tuna,coalesced,staggered --param radix=2,4,sqrtP" ;;
    vboth) echo "-a vendor --selectors mpich,ompi" ;;
    auto) echo "-a auto --selectors mpich" ;;
    tuna2) echo "-a tuna --param radix=2" ;;
    tuna4) echo "-a tuna --param radix=4" ;;
    tuna16) echo "-a tuna --param radix=16" ;;
    tunasqrt) echo "-a tuna --param radix=sqrtP" ;;
    coalesced2) echo "-a coalesced --param radix=2" ;;
    coalesced4) echo "-a coalesced --param radix=4" ;;
    staggered4) echo "-a staggered --param radix=4" ;;
    vmpich) echo "-a vendor --selectors mpich" ;;
    vompi) echo "-a vendor --selectors ompi" ;;
    *) echo "headline_study.sh: unknown configuration $1" >&2; exit 2 ;;
    esac
}

for S in $SIZES; do
    for item in $LIST; do
        IFS=: read -r P plat cfg tmo <<EOF
$item
EOF
        # Unverified above P = 256 and for recorded matrices (the ML pattern's rows hold up to
        # 88 MB: verifying needs real buffers, SMPI_SHARED_MALLOC'ed ones do not).
        verify=""
        [ "$P" -gt 256 ] && verify="--no-verify"
        case $DIST in matrix:*) verify="--no-verify" ;; esac
        out="$OUT/headline-$tag$S.jsonl" profile=""
        if [ "$cfg" = auto ]; then
            out="$OUT/headline-auto-$tag$S.jsonl" profile=$(profile_of "$plat")
        fi
        # shellcheck disable=SC2046,SC2086
        (cd "$ROOT" && TUNA_PROFILE=$profile nice -n 10 "$PY" -m tuna_tools sim run --platform "$plat" --procs "$P" \
            --rpn 32 -s "$S" -d "$DIST" -w 1 $(args_of "$cfg") --no-vendor $verify --simgrid "$SG" \
            --bench "$BENCH" --timeout "$tmo" --append -o "$out") ||
            echo "headline_study.sh: $plat P=$P S=$S $DIST $cfg failed or timed out" >&2
    done
done
