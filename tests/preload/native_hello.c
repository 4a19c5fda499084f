/* A program built with an implementation's own mpicc (not the standard ABI's): under a
 * standard-ABI preload, MPI_Init must stop it with tuna's one-line message. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    printf("MPI_Init returned under a standard-ABI preload\n");
    MPI_Finalize();
    return 0;
}
