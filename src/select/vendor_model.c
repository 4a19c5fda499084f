/*
 * Which tuna algorithm models an MPI library's own MPI_Alltoallv, so that `auto` can weigh
 * `vendor` against tuna's algorithms. The built-in guesses follow the libraries' default
 * decision rules (where they were read: docs/model.md, "vendor as a candidate"); a site
 * that changes its library's algorithm writes "vendor_alltoallv" into the profile instead.
 */
#include "tuna_select.h"

#include <string.h>

tuna_mpi_library tuna_mpi_library_detect(const char *version)
{
    if (!version)
        return TUNA_MPILIB_UNKNOWN;
    /* Prefixes of the libraries' own strings; derivatives (Cray MPICH, MVAPICH, Intel MPI)
     * print something else and tune alltoallv their own way: unknown. */
    if (strncmp(version, "Open MPI v", 10) == 0)
        return TUNA_MPILIB_OPENMPI;
    if (strncmp(version, "MPICH Version:", 14) == 0)
        return TUNA_MPILIB_MPICH;
    if (strncmp(version, "SMPI Version", 12) == 0)
        return TUNA_MPILIB_SMPI;
    return TUNA_MPILIB_UNKNOWN;
}

const char *tuna_mpi_library_name(tuna_mpi_library lib)
{
    switch (lib) {
    case TUNA_MPILIB_OPENMPI:
        return "Open MPI";
    case TUNA_MPILIB_MPICH:
        return "MPICH";
    case TUNA_MPILIB_SMPI:
        return "SMPI";
    default:
        return "unknown MPI library";
    }
}

int tuna_vendor_alltoallv_guess(tuna_mpi_library lib, int P, tuna_options *opt)
{
    /* The rules (python/tuna_tools/data/selection.json): Open MPI's coll/tuned fixed rule
     * looks at the communicator size only (basic linear or pairwise); MPICH runs
     * MPIR_Alltoallv_intra_scattered with MPIR_CVAR_ALLTOALL_THROTTLE = 32 pairs per batch;
     * SimGrid's default selector all receives then all sends in rank order (its "mpich"
     * selector runs batches of 4: `tuna tune profile --selector`). */
    if (lib == TUNA_MPILIB_UNKNOWN)
        return TUNA_VENDOR_GUESS_NONE;
    bool by_P;
    const char *alg = tuna_vendor_alltoallv_rule(tuna_mpi_library_name(lib), P, &by_P);
    tuna_options o;
    if (!alg || tuna_options_parse(alg, TUNA_ALLTOALLV, &o) != MPI_SUCCESS)
        return TUNA_VENDOR_GUESS_NONE; /* not reached: every rule is a table row (test_auto) */
    *opt = o;
    return by_P ? TUNA_VENDOR_GUESS_BY_P : TUNA_VENDOR_GUESS_FIXED;
}

double tuna_vendor_call_overhead_guess(tuna_mpi_library lib)
{
    /* MPICH 4.0.2 at P = 2 (tuna-callcost, 16 B and 1 KiB): its MPI_Alltoallv takes 0.09-0.11
     * us longer than tuna's scattered:block=32, the same exchange, whose own call path is the
     * built-in call_overhead (0.1 us): 0.2 us above the exchange. Open MPI's call is as cheap
     * as tuna's passthrough (0); SMPI does not charge CPU time (0). */
    return lib == TUNA_MPILIB_MPICH ? 0.2e-6 : 0;
}
