/*
 * Which of the topology calls tuna_neighbor_alltoallv needs does SMPI implement?
 * (docs/results/neighbor.md, "What SMPI 3.32 implements"). SMPI aborts on the first call it
 * lacks ("Not yet implemented"), so each run makes one call, named by argv[1], on 4 ranks;
 * neighbor_support.sh runs them all.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P, rc = MPI_SUCCESS;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *f = argc > 1 ? argv[1] : "";
    int dims[1] = {P}, per[1] = {1}, nb[2] = {(me + P - 1) % P, (me + 1) % P}, w[2] = {1, 1};
    MPI_Comm cart = MPI_COMM_NULL, g = MPI_COMM_NULL;
    int sb[2] = {me, me}, rb[2] = {-1, -1}, cnt[2] = {1, 1}, dsp[2] = {0, 1}, x = 0, y = 0;
    if (strcmp(f, "MPI_Graph_create") && strcmp(f, "MPI_Dist_graph_create_adjacent") &&
        strcmp(f, "MPI_Dist_graph_create"))
        rc = MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &cart);
    if (!strcmp(f, "MPI_Cartdim_get"))
        rc = MPI_Cartdim_get(cart, &x);
    else if (!strcmp(f, "MPI_Cart_shift"))
        rc = MPI_Cart_shift(cart, 0, 1, &x, &y);
    else if (!strcmp(f, "MPI_Topo_test"))
        rc = MPI_Topo_test(cart, &x);
    else if (!strcmp(f, "MPI_Neighbor_alltoallv"))
        rc = MPI_Neighbor_alltoallv(sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, cart);
    else if (!strcmp(f, "MPI_Graph_create")) {
        int index[64], edges[128];
        for (int i = 0; i < P && i < 64; i++) {
            index[i] = 2 * (i + 1);
            edges[2 * i] = (i + P - 1) % P;
            edges[2 * i + 1] = (i + 1) % P;
        }
        rc = MPI_Graph_create(MPI_COMM_WORLD, P, index, edges, 0, &g);
    } else if (!strcmp(f, "MPI_Dist_graph_create_adjacent"))
        rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, w, 2, nb, w, MPI_INFO_NULL,
                                            0, &g);
    else if (!strcmp(f, "MPI_Dist_graph_create")) {
        int src = me, deg = 2;
        rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, nb, w, MPI_INFO_NULL, 0, &g);
    }
    if (me == 0)
        printf("%-32s %s (rc %d)\n", f, rc == MPI_SUCCESS ? "implemented" : "error", rc);
    MPI_Finalize();
    return 0;
}
