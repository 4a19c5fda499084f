# Toolchain file for the SimGrid SMPI build (docs/simulation.md):
#   cmake -S . -B build-sim -DCMAKE_TOOLCHAIN_FILE=cmake/smpi.cmake
# libtuna and tuna-bench are compiled with smpicc and run under smpirun.
set(CMAKE_C_COMPILER smpicc)
set(MPIEXEC_EXECUTABLE smpirun CACHE FILEPATH "SMPI launcher")
set(TUNA_SMPI ON CACHE BOOL "Build for SimGrid SMPI" FORCE)
