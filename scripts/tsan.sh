#!/usr/bin/env bash
# ThreadSanitizer run of tuna's thread tests (docs/testing.md, "ThreadSanitizer"): a build with
# -fsanitize=thread, then tests/test_threads.c (threads each calling tuna on its own
# communicator) and tests/test_progress_thread.c (TUNA_PROGRESS=thread) at P = 2, 3, 4 under
# Open MPI. Open MPI is not instrumented: reports with an MPI frame are suppressed
# (tests/tsan.supp says why); any other report fails the run. Manual, not in CI
# (about 2 minutes; TSan's view of an uninstrumented MPI is a heuristic).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${TUNA_PYTHON:-$PWD/.venv/bin/python}
[ -x "$PY" ] || PY=$(command -v python3)
dir=build/tsan
flags="-fsanitize=thread -O1 -g"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DPython3_EXECUTABLE="$PY" -DTUNA_WERROR=ON \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >"$dir.configure.log" 2>&1 ||
  { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j "$(nproc)" --target test_threads test_progress_thread \
  >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; exit 1; }
# Open MPI unloads its plugins at MPI_Finalize, and TSan stops a process in which a library a
# called_from_lib suppression names is unloaded: the ranks keep them (as the ASan tests do).
cc -shared -fPIC -o "$dir/nodlclose.so" tests/support/nodlclose.c
logs=$(mktemp -d)
supp=$PWD/tests/tsan.supp
failed=0
for t in test_threads test_progress_thread; do
  for p in 2 3 4; do
    # Open MPI as root needs these; harmless otherwise.
    env=""; [ "$t" = test_progress_thread ] && env="TUNA_PROGRESS=thread"
    if ! env $env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        TSAN_OPTIONS="halt_on_error=0 report_signal_unsafe=0 history_size=7 suppressions=$supp log_path=$logs/$t.p$p" \
        timeout 600 mpiexec --oversubscribe -x LD_PRELOAD="$PWD/$dir/nodlclose.so" -n "$p" \
          "$dir/tests/$t" >"$logs/$t.p$p.out" 2>&1; then
      echo "FAIL $t P=$p (output: $logs/$t.p$p.out)"
      failed=1
    fi
  done
done
if grep -h "SUMMARY: ThreadSanitizer" "$logs"/*.p[0-9].[0-9]* 2>/dev/null | sort | uniq -c; then
  echo "tsan: reports above (logs in $logs)"
  exit 1
fi
[ "$failed" -eq 0 ] || exit 1
echo "tsan: test_threads and test_progress_thread at P = 2, 3, 4: no unsuppressed report"
