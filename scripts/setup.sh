#!/usr/bin/env bash
# Installs everything tuna needs on Debian 12: compilers, CMake, Open MPI (default MPI),
# MPICH (second configuration), SimGrid (SMPI), Jansson, FFTW, gfortran, and a Python
# virtual environment (.venv) with matplotlib, mpi4py, pytest, tqdm, jsonschema and the `tuna`
# command (python/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends \
  build-essential cmake pkg-config git ca-certificates \
  openmpi-bin libopenmpi-dev mpich libmpich-dev \
  libjansson-dev libsimgrid-dev simgrid libfftw3-dev libfftw3-mpi-dev gfortran \
  python3 python3-venv python3-pip python3-dev >/dev/null
PY=${TUNA_PYTHON_BOOTSTRAP:-python3}
if [ ! -x .venv/bin/python ]; then "$PY" -m venv .venv; fi
.venv/bin/python -m pip install -q --upgrade pip
# mpi4py compiles against the default mpicc (Open MPI).
.venv/bin/python -m pip install -q -r python/requirements.txt
if [ -f python/pyproject.toml ]; then .venv/bin/python -m pip install -q ./python; fi
echo "setup done: MPI $(mpicc --showme:version 2>/dev/null | head -1)"
