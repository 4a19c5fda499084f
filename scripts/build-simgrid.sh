#!/usr/bin/env bash
# Builds a newer SimGrid (with SMPI) from the Python registry's `simgrid` source distribution,
# once, into a cache outside the work tree, and installs it there (an installed SimGrid, not
# the build tree: the build tree's smpirun crashes on a hello-world program).
#
#   scripts/build-simgrid.sh [VERSION]        # default 4.1; prints the install prefix
#   TUNA_CACHE=/path scripts/build-simgrid.sh # cache root (default ~/.cache/tuna)
#
# Reuses an existing install (it holds bin/smpicc and a stamp file). The SMPI build uses it
# with -DTUNA_SIMGRID_PREFIX=PREFIX (build/smpi-4.1, which `tuna sim run` picks first, with
# this smpirun); Debian's SimGrid 3.32 stays the fallback and CI's (CI builds no SimGrid).
# The platforms of sim/platforms run under 4.1 since issue 55 (a <zone> around the cluster);
# sim_simgrid_identity checks that they give 3.32's times.
set -euo pipefail
VERSION=${1:-4.1}
CACHE=${TUNA_CACHE:-$HOME/.cache/tuna}
PREFIX="$CACHE/simgrid-$VERSION"
if [ -x "$PREFIX/bin/smpicc" ] && [ -f "$PREFIX/.tuna-built" ]; then
  echo "$PREFIX"; exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends \
  build-essential cmake libboost-dev libboost-context-dev libeigen3-dev \
  nlohmann-json3-dev python3-pip python3-venv >/dev/null
WORK="$CACHE/build-simgrid-$VERSION"
mkdir -p "$WORK"
cd "$WORK"
if [ ! -d src ]; then
  python3 -m venv dl && dl/bin/pip download -q --no-deps --no-binary :all: \
    "simgrid==$VERSION" -d sdist
  mkdir -p src && tar -xzf sdist/simgrid-"$VERSION"*.tar.gz -C src --strip-components=1
fi
# SMPI and its MPI compiler wrappers only: no Java, no Python bindings, no docs, no tests.
cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
  -Denable_smpi=ON -Denable_python=OFF -Denable_java=OFF -Denable_documentation=OFF \
  -Denable_compile_optimizations=ON -Denable_lto=OFF -Denable_model-checking=OFF \
  -Denable_ns3=OFF -Denable_smpi_MPICH3_testsuite=OFF -Denable_fortran=OFF >cmake.log
cmake --build build -j"$(nproc)" >build.log 2>&1
cmake --install build >install.log
touch "$PREFIX/.tuna-built"
echo "$PREFIX"
