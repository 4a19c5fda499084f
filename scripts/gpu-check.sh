#!/usr/bin/env bash
# One command for a machine with a GPU (docs/gpu.md): CUDA, CMake and Python, no MPI needed,
# no network. Builds tuna's device kernels (nvcc, sm_80 and sm_90, warnings as errors), runs
# the gpu label (the kernels byte for byte against host code), the kernels under
# compute-sanitizer where it is installed, and the bandwidth benchmark (64 MiB, against
# cudaMemcpy device to device; --check: every kernel at 80% of the copy or more). Where an
# MPI is installed (mpicc on PATH) it also builds the whole project with CUDA and runs the
# memory-kind tests; without one it says so and skips them.
# Results under $OUT (default build/gpu-check/out): summary.txt and one log per step.
# Exit status: 0 when every step that ran passed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/build/gpu-check/out}
B=build/gpu-check
mkdir -p "$OUT" "$B"
: >"$OUT/summary.txt"
say() { echo "$*" | tee -a "$OUT/summary.txt"; }
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
if (cd "$B/kernels" && ctest -L gpu -E bandwidth --output-on-failure) >"$OUT/ctest-gpu.log" 2>&1; then
  if grep -q "Skipped" "$OUT/ctest-gpu.log"; then
    say "gpu label: SKIPPED (no CUDA device: ctest-gpu.log)"; status=1
  else
    say "gpu label: passed"
  fi
else
  say "FAILED: gpu label (ctest-gpu.log)"; status=1
fi

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

# 5. With an MPI: the whole project with CUDA, the memory-kind tests and the gpu label there.
if command -v mpicc >/dev/null && command -v mpiexec >/dev/null; then
  if cmake -S . -B "$B/mpi" -DTUNA_CUDA=ON -DTUNA_WERROR=ON >"$OUT/mpi-configure.log" 2>&1 &&
      cmake --build "$B/mpi" -j "$(nproc)" >"$OUT/mpi-build.log" 2>&1 &&
      (cd "$B/mpi" && ctest --output-on-failure -R "memkind|device_buffers|index_maps") \
        >"$OUT/mpi-ctest.log" 2>&1; then
    say "with MPI: the memory-kind and index-map tests passed (mpi-ctest.log)"
  else
    say "FAILED: with MPI (mpi-*.log)"; status=1
  fi
  # The NCCL path (docs/nccl.md) where NCCL was found: every row with one rank on NCCL, and the
  # drop-in (gpu_nccl_dropin_p1) over NCCL.
  if [ -x "$B/mpi/tests/test_nccl_gpu" ]; then
    if (cd "$B/mpi" && ctest --output-on-failure -R "gpu_nccl|nccl_standin_p[1-4]$|nccl_dropin") \
        >"$OUT/nccl-ctest.log" 2>&1; then
      if grep -q "Skipped" "$OUT/nccl-ctest.log"; then
        say "NCCL: gpu_nccl_p1 SKIPPED (no CUDA device: nccl-ctest.log)"; status=1
      else
        say "NCCL: every row and the drop-in with one rank on NCCL passed (nccl-ctest.log)"
      fi
    else
      say "FAILED: NCCL (nccl-ctest.log)"; status=1
    fi
  else
    say "NCCL not found by CMake: the NCCL path not built (mpi-configure.log)"
  fi
else
  say "no MPI on this machine (mpicc, mpiexec): the memory-kind tests not run here (CI runs them)"
fi
say "gpu-check: $(elapsed) s, $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status
