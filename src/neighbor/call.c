/*
 * A neighborhood all-to-all call described once (tuna_nbr_call): the communicator's topology
 * read into neighbor lists in MPI's order (distributed graph: MPI_Dist_graph_neighbors;
 * graph: MPI_Graph_neighbors, in and out alike; Cartesian: per dimension the rank at -1 then
 * at +1, MPI_PROC_NULL past a non-periodic border), this rank's arguments checked, counts and
 * displacements copied (the operation owns them until it completes). The rows' memory
 * (requests) grows in tuna_nbr_reserve.
 */
#include "neighbor.h"

#include <stdlib.h>

void tuna_nbr_call_free(tuna_nbr_call *c)
{
    if (!c)
        return;
    free(c->out.peer);
    free(c->out.count);
    free(c->out.displ);
    free(c->in.peer);
    free(c->in.count);
    free(c->in.displ);
    free(c);
}

static int side_alloc(tuna_nbr_side *s, int n)
{
    s->n = n;
    const size_t m = (size_t)n + 1;
    s->peer = malloc(m * sizeof *s->peer);
    s->count = malloc(m * sizeof *s->count);
    s->displ = malloc(m * sizeof *s->displ);
    return s->peer && s->count && s->displ ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* The neighbor lists of comm's topology; *library for a Cartesian one where a rank is a
 * neighbor twice (a periodic dimension of size 1 or 2). */
static int topology_read(const char *fn, MPI_Comm comm, tuna_nbr_call *c, bool *library)
{
    int kind = MPI_UNDEFINED, me;
    TUNA_MPI_CHECK(PMPI_Topo_test(comm, &kind));
    TUNA_MPI_CHECK(PMPI_Comm_rank(comm, &me));
    *library = false;
    if (kind == MPI_DIST_GRAPH) {
        int indeg, outdeg, weighted;
        TUNA_MPI_CHECK(PMPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted));
        if (side_alloc(&c->in, indeg) != MPI_SUCCESS || side_alloc(&c->out, outdeg) != MPI_SUCCESS)
            return MPI_ERR_NO_MEM;
        int *w = NULL;
        if (weighted && !(w = malloc(((size_t)indeg + (size_t)outdeg + 1) * sizeof *w)))
            return MPI_ERR_NO_MEM;
        int rc = PMPI_Dist_graph_neighbors(comm, indeg, c->in.peer, w ? w : MPI_UNWEIGHTED,
                                           outdeg, c->out.peer, w ? w + indeg : MPI_UNWEIGHTED);
        free(w);
        return rc == MPI_SUCCESS ? rc : tuna_library_result(rc, "PMPI_Dist_graph_neighbors");
    }
    if (kind == MPI_GRAPH) {
        int n;
        TUNA_MPI_CHECK(PMPI_Graph_neighbors_count(comm, me, &n));
        if (side_alloc(&c->in, n) != MPI_SUCCESS || side_alloc(&c->out, n) != MPI_SUCCESS)
            return MPI_ERR_NO_MEM;
        TUNA_MPI_CHECK(PMPI_Graph_neighbors(comm, me, n, c->in.peer));
        for (int i = 0; i < n; i++)
            c->out.peer[i] = c->in.peer[i];
        return MPI_SUCCESS;
    }
    if (kind == MPI_CART) {
        int ndims;
        TUNA_MPI_CHECK(PMPI_Cartdim_get(comm, &ndims));
        if (side_alloc(&c->in, 2 * ndims) != MPI_SUCCESS ||
            side_alloc(&c->out, 2 * ndims) != MPI_SUCCESS)
            return MPI_ERR_NO_MEM;
        for (int d = 0; d < ndims; d++) {
            TUNA_MPI_CHECK(PMPI_Cart_shift(comm, d, 1, &c->in.peer[2 * d],
                                           &c->in.peer[2 * d + 1]));
            c->out.peer[2 * d] = c->in.peer[2 * d];
            c->out.peer[2 * d + 1] = c->in.peer[2 * d + 1];
        }
        for (int i = 0; i < 2 * ndims; i++)
            for (int j = 0; j < i; j++)
                if (c->in.peer[i] != MPI_PROC_NULL && c->in.peer[i] == c->in.peer[j])
                    *library = true;
        return MPI_SUCCESS;
    }
    return tuna_error_set(MPI_ERR_TOPOLOGY, "%s: the communicator has no graph, distributed "
                          "graph or Cartesian topology", fn);
}

static int side_args(const char *fn, const char *what, tuna_nbr_side *s, const void *buf,
                     const tuna_counts *k, size_t tsize)
{
    if (s->n > 0 && !tuna_counts_given(k))
        return tuna_error_set(MPI_ERR_ARG, "%s: %scounts or %sdispls is NULL", fn, what, what);
    for (int i = 0; i < s->n; i++) {
        const MPI_Count n = tuna_counts_n(k, i);
        if (n < 0)
            return tuna_error_set(MPI_ERR_COUNT, "%s: %scounts[%d] = %lld is negative", fn,
                                  what, i, (long long)n);
        if (n > 0 && tsize > 0 && !buf)
            return tuna_error_set(MPI_ERR_BUFFER, "%s: the %s buffer is NULL with data for "
                                  "neighbor %d", fn, what[0] == 's' ? "send" : "receive", i);
        s->count[i] = n;
        s->displ[i] = tuna_counts_d(k, i);
    }
    return MPI_SUCCESS;
}

static int type_args(const char *fn, const char *what, MPI_Datatype t, MPI_Aint *extent,
                     size_t *size)
{
    if (t == MPI_DATATYPE_NULL)
        return tuna_error_set(MPI_ERR_TYPE, "%s: %stype is MPI_DATATYPE_NULL", fn, what);
    MPI_Count sz = 0;
    MPI_Aint lb;
    if (PMPI_Type_size_x(t, &sz) != MPI_SUCCESS || sz < 0 ||
        PMPI_Type_get_extent(t, &lb, extent) != MPI_SUCCESS)
        return tuna_error_set(MPI_ERR_TYPE, "%s: %stype is not a valid datatype", fn, what);
    *size = (size_t)sz;
    return MPI_SUCCESS;
}

int tuna_nbr_call_make(const char *fn, const void *sendbuf, const tuna_counts *send,
                       MPI_Datatype sendtype, void *recvbuf, const tuna_counts *recv,
                       MPI_Datatype recvtype, MPI_Comm comm, tuna_nbr_call **call,
                       bool *library)
{
    *call = NULL;
    *library = false;
    if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE)
        return tuna_error_set(MPI_ERR_BUFFER, "%s: MPI_IN_PLACE is not valid in a neighborhood "
                              "collective", fn);
    tuna_nbr_call *c = calloc(1, sizeof *c);
    if (!c)
        return tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory", fn);
    c->sbuf = sendbuf;
    c->rbuf = recvbuf;
    c->stype = sendtype;
    c->rtype = recvtype;
    c->tp = &tuna_transport_mpi_host;
    int rc = type_args(fn, "send", sendtype, &c->sext, &c->ssize);
    if (rc == MPI_SUCCESS)
        rc = type_args(fn, "recv", recvtype, &c->rext, &c->rsize);
    if (rc == MPI_SUCCESS) {
        rc = topology_read(fn, comm, c, library);
        if (rc == MPI_ERR_NO_MEM)
            rc = tuna_error_set(rc, "%s: no memory for the neighbor lists", fn);
    }
    if (rc == MPI_SUCCESS)
        rc = side_args(fn, "send", &c->out, sendbuf, send, c->ssize);
    if (rc == MPI_SUCCESS)
        rc = side_args(fn, "recv", &c->in, recvbuf, recv, c->rsize);
    if (rc != MPI_SUCCESS) {
        tuna_nbr_call_free(c);
        return rc;
    }
    *call = c;
    return MPI_SUCCESS;
}

int tuna_nbr_reserve(tuna_nbr_op *o, int n)
{
    if (n <= o->cap)
        return MPI_SUCCESS;
    MPI_Request *r = realloc(o->req, (size_t)n * sizeof *r);
    if (!r)
        return tuna_error_set(MPI_ERR_NO_MEM, "neighbor: no memory for %d requests", n);
    o->req = r;
    MPI_Request *p = realloc(o->pend, (size_t)n * sizeof *p);
    if (!p)
        return tuna_error_set(MPI_ERR_NO_MEM, "neighbor: no memory for %d requests", n);
    o->pend = p;
    o->cap = n;
    return MPI_SUCCESS;
}

int tuna_nbr_post_edge(const tuna_nbr_call *c, bool send, int i, int tag, MPI_Request *req)
{
    const tuna_nbr_side *s = send ? &c->out : &c->in;
    const MPI_Datatype type = send ? c->stype : c->rtype;
    const MPI_Aint ext = send ? c->sext : c->rext;
    int n;
    MPI_Datatype msg;
    bool made;
    int rc = tuna_message_type(s->count[i], type, ext, &n, &msg, &made);
    if (rc != MPI_SUCCESS)
        return rc;
    if (send)
        rc = tuna_tp_isend_typed(c->tp, c->sbuf + s->displ[i] * ext, n, msg, s->peer[i], tag,
                                 c->comm, req);
    else
        rc = tuna_tp_irecv_typed(c->tp, c->rbuf + s->displ[i] * ext, n, msg, s->peer[i], tag,
                                 c->comm, req);
    if (made) /* MPI keeps what a pending message needs */
        PMPI_Type_free(&msg);
    return rc;
}

int tuna_nbr_pack_edge(const tuna_nbr_call *c, int i, char *to)
{
    const char *from = c->sbuf + c->out.displ[i] * c->sext;
    if (tuna_type_is_contiguous(c->stype)) {
        tuna_tp_copy(c->tp, to, from, tuna_nbr_bytes(&c->out, c->ssize, i));
        return MPI_SUCCESS;
    }
    return tuna_pack_block(from, c->out.count[i], c->stype, c->sext, c->ssize, to, c->comm);
}

int tuna_nbr_unpack_edge(const tuna_nbr_call *c, int j, const char *from)
{
    char *to = c->rbuf + c->in.displ[j] * c->rext;
    if (tuna_type_is_contiguous(c->rtype)) {
        tuna_tp_copy(c->tp, to, from, tuna_nbr_bytes(&c->in, c->rsize, j));
        return MPI_SUCCESS;
    }
    return tuna_unpack_block(from, to, c->in.count[j], c->rtype, c->rext, c->rsize, c->comm);
}
