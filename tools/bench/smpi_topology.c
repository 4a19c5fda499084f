/*
 * SMPI builds of tuna-bench only (tools/CMakeLists.txt): the distributed-graph topology and a
 * linear MPI_Neighbor_alltoallv, which SimGrid 3.32's SMPI lacks (MPI_Topo_test,
 * MPI_Dist_graph_create_adjacent and MPI_Neighbor_alltoallv abort with "Not yet
 * implemented"; sim/probes/neighbor_support.sh). Defined in the executable, these take the
 * place of SMPI's for the bench and the libtuna linked into it (static under SMPI), so
 * --collective neighbor_alltoallv can be simulated (docs/results/neighbor.md, "Simulated").
 *
 *  - MPI_Dist_graph_create_adjacent: a duplicate of the old communicator (reorder ignored)
 *    with the neighbor lists kept here, per rank (SMPI privatizes each rank's globals);
 *    MPI_Comm_free forgets them.
 *  - MPI_Topo_test: MPI_DIST_GRAPH for those communicators, MPI_UNDEFINED for any other
 *    (so no Cartesian topology: the bench's stencils use a distributed graph under SMPI).
 *  - MPI_Dist_graph_neighbors_count / _neighbors: the lists, unweighted.
 *  - MPI_Neighbor_alltoallv: one message per edge, every receive posted before the sends, one
 *    wait: the exchange Open MPI and MPICH run, which tuna's `linear` row also runs. So under
 *    SMPI the "library's call" is this linear exchange, not any library's algorithm.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define SHIM_TAG 7431

typedef struct shim_topo {
    MPI_Comm comm;
    int nin, nout;
    int *in, *out;
} shim_topo;

static shim_topo *topos;
static int ntopos, captopos;

static shim_topo *shim_find(MPI_Comm c)
{
    for (int i = 0; i < ntopos; i++)
        if (topos[i].comm == c)
            return &topos[i];
    return NULL;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm old, int indeg, const int *src, const int *sw,
                                    int outdeg, const int *dst, const int *dw, MPI_Info info,
                                    int reorder, MPI_Comm *comm)
{
    (void)sw, (void)dw, (void)info, (void)reorder;
    if (ntopos == captopos) {
        int nc = captopos ? 2 * captopos : 8;
        shim_topo *nt = realloc(topos, (size_t)nc * sizeof *nt);
        if (!nt)
            return MPI_ERR_NO_MEM;
        topos = nt;
        captopos = nc;
    }
    shim_topo t = {MPI_COMM_NULL, indeg, outdeg, malloc(sizeof(int) * ((size_t)indeg + 1)),
                   malloc(sizeof(int) * ((size_t)outdeg + 1))};
    if (!t.in || !t.out) {
        free(t.in), free(t.out);
        return MPI_ERR_NO_MEM;
    }
    if (indeg)
        memcpy(t.in, src, sizeof(int) * (size_t)indeg);
    if (outdeg)
        memcpy(t.out, dst, sizeof(int) * (size_t)outdeg);
    int rc = PMPI_Comm_dup(old, &t.comm);
    if (rc != MPI_SUCCESS) {
        free(t.in), free(t.out);
        return rc;
    }
    topos[ntopos++] = t;
    *comm = t.comm;
    return MPI_SUCCESS;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm old, int indeg, const int *src, const int *sw,
                                   int outdeg, const int *dst, const int *dw, MPI_Info info,
                                   int reorder, MPI_Comm *comm)
{
    return PMPI_Dist_graph_create_adjacent(old, indeg, src, sw, outdeg, dst, dw, info, reorder,
                                           comm);
}

int PMPI_Comm_free(MPI_Comm *comm);
int MPI_Comm_free(MPI_Comm *comm)
{
    shim_topo *t = comm ? shim_find(*comm) : NULL;
    if (t) {
        free(t->in), free(t->out);
        *t = topos[--ntopos];
    }
    return PMPI_Comm_free(comm);
}

int PMPI_Topo_test(MPI_Comm comm, int *kind)
{
    *kind = shim_find(comm) ? MPI_DIST_GRAPH : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int *kind)
{
    return PMPI_Topo_test(comm, kind);
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indeg, int *outdeg, int *weighted)
{
    shim_topo *t = shim_find(comm);
    if (!t)
        return MPI_ERR_TOPOLOGY;
    *indeg = t->nin;
    *outdeg = t->nout;
    *weighted = 0;
    return MPI_SUCCESS;
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indeg, int *outdeg, int *weighted)
{
    return PMPI_Dist_graph_neighbors_count(comm, indeg, outdeg, weighted);
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxin, int *src, int *sw, int maxout,
                              int *dst, int *dw)
{
    (void)sw, (void)dw;
    shim_topo *t = shim_find(comm);
    if (!t)
        return MPI_ERR_TOPOLOGY;
    for (int i = 0; i < t->nin && i < maxin; i++)
        src[i] = t->in[i];
    for (int i = 0; i < t->nout && i < maxout; i++)
        dst[i] = t->out[i];
    return MPI_SUCCESS;
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxin, int *src, int *sw, int maxout,
                             int *dst, int *dw)
{
    return PMPI_Dist_graph_neighbors(comm, maxin, src, sw, maxout, dst, dw);
}

int PMPI_Neighbor_alltoallv(const void *sbuf, const int *sc, const int *sd, MPI_Datatype st,
                            void *rbuf, const int *rc, const int *rd, MPI_Datatype rt,
                            MPI_Comm comm)
{
    shim_topo *t = shim_find(comm);
    if (!t)
        return MPI_ERR_TOPOLOGY;
    MPI_Aint lb, sext, rext;
    PMPI_Type_get_extent(st, &lb, &sext);
    PMPI_Type_get_extent(rt, &lb, &rext);
    MPI_Request *req = malloc(sizeof *req * ((size_t)t->nin + (size_t)t->nout + 1));
    if (!req)
        return MPI_ERR_NO_MEM;
    int n = 0, rc_ = MPI_SUCCESS;
    for (int j = 0; j < t->nin && rc_ == MPI_SUCCESS; j++)
        if (rc[j] > 0)
            rc_ = PMPI_Irecv((char *)rbuf + (MPI_Aint)rd[j] * rext, rc[j], rt, t->in[j],
                             SHIM_TAG, comm, &req[n++]);
    for (int i = 0; i < t->nout && rc_ == MPI_SUCCESS; i++)
        if (sc[i] > 0)
            rc_ = PMPI_Isend((const char *)sbuf + (MPI_Aint)sd[i] * sext, sc[i], st, t->out[i],
                             SHIM_TAG, comm, &req[n++]);
    if (rc_ == MPI_SUCCESS)
        rc_ = PMPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    free(req);
    return rc_;
}

int MPI_Neighbor_alltoallv(const void *sbuf, const int *sc, const int *sd, MPI_Datatype st,
                           void *rbuf, const int *rc, const int *rd, MPI_Datatype rt,
                           MPI_Comm comm)
{
    return PMPI_Neighbor_alltoallv(sbuf, sc, sd, st, rbuf, rc, rd, rt, comm);
}
