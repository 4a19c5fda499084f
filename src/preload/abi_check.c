/*
 * A preload built for the MPI standard ABI (MPI 5; MPICH 5's mpicc_abi) must run in programs
 * built for that ABI. Loaded into a program that links an implementation's own ABI (MPICH's
 * libmpi.so.12, Open MPI's libmpi.so.40), the preload's PMPI_ calls would bind to that library
 * and hand it ABI handles: wrong results or a crash. So MPI_Init checks first that the library
 * its PMPI_Init binds to implements the standard ABI (MPI_Abi_get_version gives a major
 * version >= 1 from that same library) and stops the process with one line if not.
 */
#define _GNU_SOURCE /* dladdr */
#include "preload_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

void preload_abi_check(void)
{
    Dl_info init_lib = {0}, abi_lib = {0};
    int major = -1, minor = -1;
    const int found = dladdr((void *)&PMPI_Init, &init_lib) != 0;
    if (found && dladdr((void *)&PMPI_Abi_get_version, &abi_lib) &&
        init_lib.dli_fbase == abi_lib.dli_fbase &&
        PMPI_Abi_get_version(&major, &minor) == MPI_SUCCESS && major >= 1)
        return;
    fprintf(stderr,
            "tuna: invalid configuration, aborting: libtuna-preload.so was built for the MPI "
            "standard ABI, but this program's MPI library (%s) is not a standard-ABI library; "
            "use a preload built with that library's own mpicc (docs/compatibility.md)\n",
            found && init_lib.dli_fname ? init_lib.dli_fname : "unknown");
    _exit(1);
}
