#!/usr/bin/env bash
# One command for a machine with a GPU (docs/gpu.md): CUDA, CMake and Python, no MPI needed,
# no network. Builds tuna's device kernels (nvcc, sm_80 and sm_90, warnings as errors), runs
# the gpu label (the kernels byte for byte against host code), the kernels under
# compute-sanitizer where it is installed, and the bandwidth benchmark (64 MiB, against
# cudaMemcpy device to device; --check: every kernel at 80% of the copy or more). With an
# MPI (mpicc on PATH, else the MPICH wheel that scripts/gpu-carry.sh put in build/gpu-carry,
# unpacked here) it also builds the whole project with CUDA and runs the gpu label there
# (tuna's rows on device memory, several ranks sharing the GPU) and the memory-kind tests;
# without one it says so and skips them.
# Results under $OUT (default build/gpu-check/out): summary.txt and one log per step.
# Exit status: 0 when every step that ran passed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/build/gpu-check/out}
B=build/gpu-check
mkdir -p "$OUT" "$B"
: >"$OUT/summary.txt"
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
# ctest_step NAME LOG PASSED DIR ARGS...: ctest ARGS in DIR, its output in $OUT/LOG; says
# NAME passed (with PASSED), SKIPPED (a test skipped: no device) or FAILED; sets status.
ctest_step() {
  local name=$1 log=$2 passed=$3 dir=$4; shift 4
  if (cd "$dir" && ctest --output-on-failure "$@") >"$OUT/$log" 2>&1; then
    if grep -q "Skipped" "$OUT/$log"; then
      say "$name: SKIPPED (no CUDA device: $log)"; status=1
    else
      say "$name: passed ($passed: $log)"
    fi
  else
    say "FAILED: $name ($log)"; status=1
  fi
}
status=0
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }
export PATH=$PATH:/usr/local/cuda/bin

say "gpu-check: $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(hostname), $(date -u)"
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 || say "nvidia-smi failed (see nvidia-smi.txt)"
nvcc --version >"$OUT/nvcc.txt" 2>&1 || { say "FAILED: no nvcc"; exit 1; }

# 1. The kernels and the gpu tests, a project of their own (tests/gpu/CMakeLists.txt).
if cmake -S tests/gpu -B "$B/kernels" -DTUNA_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    >"$OUT/configure.log" 2>&1; then
  t0=$(date +%s)
  if cmake --build "$B/kernels" -j "$(nproc)" >"$OUT/build.log" 2>&1; then
    say "build: the kernels and the gpu tests in $(($(date +%s) - t0)) s"
  else
    say "FAILED: build (build.log)"; exit 1
  fi
else
  say "FAILED: configure (configure.log)"; exit 1
fi

# 2. The gpu label.
ctest_step "gpu label" ctest-gpu.log "the kernels" "$B/kernels" -L gpu -E bandwidth

# 3. compute-sanitizer: no invalid access in the kernels' test.
if command -v compute-sanitizer >/dev/null; then
  if compute-sanitizer --tool memcheck --error-exitcode 3 "$B/kernels/test_device_kernels" \
      >"$OUT/compute-sanitizer.log" 2>&1; then
    say "compute-sanitizer (memcheck): clean"
  else
    say "FAILED: compute-sanitizer (compute-sanitizer.log)"; status=1
  fi
else
  say "compute-sanitizer: not installed, not run"
fi

# 4. Bandwidth at 64 MiB against the device's own copy.
"$B/kernels/bench_device_kernels" --json "$OUT/bandwidth.json" --check >"$OUT/bandwidth.txt" 2>&1
case $? in
0) say "bandwidth: every kernel at 80% of cudaMemcpy D2D or more (bandwidth.txt)" ;;
77) say "bandwidth: SKIPPED (no CUDA device)"; status=1 ;;
*) say "bandwidth: below 80% of the copy, or failed (bandwidth.txt)"; status=1 ;;
esac
sed 's/^/  /' "$OUT/bandwidth.txt" | tee -a "$OUT/summary.txt" >/dev/null

# 5. With an MPI: the whole project with CUDA, the gpu label there (tuna's rows on device
# memory, 2 and 4 ranks on the one GPU) and the tests of memory kinds and staging (stand-ins).
# No MPI installed: the carried MPICH wheel (scripts/gpu-carry.sh), unpacked with Python.
mpi_args=()
# TUNA_GPU_CHECK_MPI=wheel: the wheel even where an MPI is installed (to try this path).
if [ "${TUNA_GPU_CHECK_MPI:-}" = wheel ] || ! command -v mpicc >/dev/null ||
    ! command -v mpiexec >/dev/null; then
  whl=$(ls build/gpu-carry/mpich-*.whl 2>/dev/null | head -n 1)
  if [ -n "$whl" ] && rm -rf "$B/mpich" && mkdir -p "$B/mpich" &&
      python3 -m zipfile -e "$whl" "$B/mpich" && chmod +x "$B"/mpich/*.data/data/bin/*; then
    mpich=$(cd "$B"/mpich/*.data/data && pwd)
    export PATH=$mpich/bin:$PATH
    export MPIR_CVAR_CH4_PROGRESS_THROTTLE=1   # as tests/ sets it: MPICH 5 sleeps in progress
    say "MPI: the carried wheel $(basename "$whl") unpacked in $mpich"
  fi
fi
if command -v mpicc >/dev/null && command -v mpiexec >/dev/null; then
  mpi_args=(-DMPI_C_COMPILER="$(command -v mpicc)" -DMPIEXEC_EXECUTABLE="$(command -v mpiexec)")
  t0=$(date +%s)
  if cmake -S . -B "$B/mpi" -DTUNA_CUDA=ON -DTUNA_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "${mpi_args[@]}" >"$OUT/mpi-configure.log" 2>&1 &&
      cmake --build "$B/mpi" -j "$(nproc)" >"$OUT/mpi-build.log" 2>&1; then
    say "with MPI: built in $(($(date +%s) - t0)) s"
    ctest_step "with MPI, gpu label" mpi-gpu.log "tuna's rows on device memory" "$B/mpi" \
      -L gpu -E "nccl|bandwidth"
    # compute-sanitizer on tuna's rows on device memory (2 ranks sharing the GPU): no invalid
    # device access by the copies and kernels (a host access to device memory would fault).
    if command -v compute-sanitizer >/dev/null && [ -x "$B/mpi/tests/test_device_rows_gpu" ]; then
      if TUNA_CUDA_AWARE=0 mpiexec -n 2 compute-sanitizer --tool memcheck --error-exitcode 3 \
          "$B/mpi/tests/test_device_rows_gpu" >"$OUT/compute-sanitizer-rows.log" 2>&1; then
        say "compute-sanitizer (memcheck) on the device rows, 2 ranks: clean"
      else
        say "FAILED: compute-sanitizer on the device rows (compute-sanitizer-rows.log)"; status=1
      fi
    fi
    if (cd "$B/mpi" && ctest --output-on-failure -R "memkind|device_buffers|index_maps|staged|device_rows_p") \
        >"$OUT/mpi-ctest.log" 2>&1; then
      say "with MPI: the memory-kind, staging and index-map tests passed (mpi-ctest.log)"
    else
      say "FAILED: with MPI, memory kinds and staging (mpi-ctest.log)"; status=1
    fi
  else
    say "FAILED: with MPI, configure or build (mpi-configure.log, mpi-build.log)"; status=1
  fi
  # The NCCL path (docs/nccl.md) where NCCL was found: every row with one rank on NCCL, and the
  # drop-in (gpu_nccl_dropin_p1) over NCCL.
  if [ -x "$B/mpi/tests/test_nccl_gpu" ]; then
    ctest_step NCCL nccl-ctest.log "every row and the drop-in with one rank on NCCL" "$B/mpi" \
      -R "gpu_nccl|nccl_standin_p[1-4]$|nccl_dropin"
  else
    say "NCCL not found by CMake: the NCCL path not built (mpi-configure.log)"
  fi
else
  say "no MPI on this machine (mpicc, mpiexec) and no carried wheel (scripts/gpu-carry.sh): the rows on device memory not run here"
fi
say "gpu-check: $(elapsed) s, $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status
