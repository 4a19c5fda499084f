#!/usr/bin/env bash
# mpi4py-fft's own pencil test (tests/test_pencil.py: forward and backward redistributions of
# 2-D and 3-D arrays between pencils, float/double/complex, every axis pair, checked against
# the input) under libtuna-preload.so. Its redistribution is MPI_Alltoallw with a subarray
# type per peer on Cartesian sub-communicators: every call must run on tuna's path.
#
# A MANUAL CHECK, NOT CI: it downloads mpi4py-fft's source from the Python registry (nothing
# of it is copied here). Only its pure-Python pencil module is used, so nothing is compiled:
# the package's __init__ (which imports its FFTW extension) is replaced by an empty one.
#
# usage: scripts/mpi4py-fft-pencil.sh [-b BUILD] [-n "2 3 4"] [-r "auto pairwise ..."]
#   BUILD: a tuna build directory configured with the MPI that .venv's mpi4py was built for
#   (default build/openmpi); the rows go to TUNA_ALLTOALLV (MPI_Alltoallw runs the alltoallv
#   rows). Prints per run: exit status, seconds, the alltoallw calls per statistics path.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build/openmpi NPS="2 3 4" ROWS="auto pairwise tuna:radix=2 bruck"
while getopts b:n:r: o; do
  case $o in b) BUILD=$OPTARG ;; n) NPS=$OPTARG ;; r) ROWS=$OPTARG ;; *) exit 2 ;; esac
done
PY=${TUNA_PYTHON:-$PWD/.venv/bin/python}
MPIEXEC=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
FLAGS=()
"$MPIEXEC" --version 2>&1 | grep -q "Open MPI\|OpenRTE" && FLAGS=(--allow-run-as-root --oversubscribe)
WORK=$BUILD/mpi4py-fft
VERSION=2.0.6
if [ ! -f "$WORK/mpi4py_fft-$VERSION/tests/test_pencil.py" ]; then
  mkdir -p "$WORK"
  "$PY" - "$WORK" "$VERSION" <<'PYEOF'
import re, sys, tarfile, urllib.request
work, version = sys.argv[1], sys.argv[2]
html = urllib.request.urlopen("https://pypi.org/simple/mpi4py-fft/").read().decode()
url = re.findall(r'href="([^"#]+mpi4py[_-]fft-%s\.tar\.gz)' % re.escape(version), html)[0]
path = f"{work}/mpi4py_fft-{version}.tar.gz"
urllib.request.urlretrieve(url, path)
with tarfile.open(path) as t:
    t.extractall(work)
PYEOF
fi
mkdir -p "$WORK/shim/mpi4py_fft"
cp "$WORK/mpi4py_fft-$VERSION/mpi4py_fft/pencil.py" "$WORK/shim/mpi4py_fft/"
: > "$WORK/shim/mpi4py_fft/__init__.py"
for np in $NPS; do
  for row in $ROWS; do
    stats=$(mktemp)
    s=$(date +%s) rc=0
    LD_PRELOAD=$PWD/$BUILD/src/preload/libtuna-preload.so TUNA_ALLTOALLV=$row TUNA_STATS=$stats \
      PYTHONPATH=$WORK/shim MPIR_CVAR_CH4_PROGRESS_THROTTLE=1 \
      timeout 900 "$MPIEXEC" "${FLAGS[@]}" -n "$np" "$PY" \
      "$WORK/mpi4py_fft-$VERSION/tests/test_pencil.py" > "$WORK/p${np}_${row//[:=]/_}.log" 2>&1 ||
      rc=$?
    calls=$(grep -v '^#' "$stats" 2>/dev/null |
            awk -F'\t' '$5=="alltoallw"{c[$6]+=$8} END{for(k in c) printf "%s %d  ", k, c[k]}')
    echo "P=$np $row: exit $rc, $(( $(date +%s) - s )) s, alltoallw calls (all ranks): $calls"
    rm -f "$stats"
  done
done
