#!/usr/bin/env bash
# Prepares what scripts/gpu-check.sh needs on a lent GPU machine that has no MPI and no network
# (docs/gpu.md): the MPICH wheel from the Python registry, downloaded here into the git-ignored
# build/gpu-carry/ (about 13 MB), to be carried there (the device tool's `carry`), where
# gpu-check.sh unpacks it (a wheel is a zip; its data/ folder is a relocatable MPICH prefix).
# Usage: scripts/gpu-carry.sh   (prints the folder to carry)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${TUNA_PYTHON:-$PWD/.venv/bin/python}
[ -x "$PY" ] || PY=$(command -v python3)
mkdir -p build/gpu-carry
"$PY" -m pip download -q --no-deps --only-binary :all: -d build/gpu-carry mpich==5.0.2
ls build/gpu-carry/mpich-*.whl >/dev/null
echo build/gpu-carry
