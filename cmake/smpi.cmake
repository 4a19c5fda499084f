# Toolchain file for the SimGrid SMPI build (docs/simulation.md):
#   cmake -S . -B build-sim -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake
# libtuna and tuna-bench are compiled with smpicc and run under smpirun.
# A newer SimGrid built by scripts/build-simgrid.sh: -DTUNA_SIMGRID_PREFIX=/path/to/simgrid-3.35
# (its bin/smpicc and bin/smpirun; `tuna sim run --simgrid PREFIX` runs with it).
if(TUNA_SIMGRID_PREFIX)
  set(CMAKE_C_COMPILER ${TUNA_SIMGRID_PREFIX}/bin/smpicc)
  set(MPIEXEC_EXECUTABLE ${TUNA_SIMGRID_PREFIX}/bin/smpirun CACHE FILEPATH "SMPI launcher")
else()
  set(CMAKE_C_COMPILER smpicc)
  set(MPIEXEC_EXECUTABLE smpirun CACHE FILEPATH "SMPI launcher")
endif()
set(TUNA_SMPI ON CACHE BOOL "Build for SimGrid SMPI" FORCE)
