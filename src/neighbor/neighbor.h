/*
 * The neighborhood all-to-all (MPI_Neighbor_alltoallv) on distributed-graph, graph and
 * Cartesian communicators: its call record, its operation and its rows (docs/algorithms-neighbor.md).
 *
 * A call is described once by tuna_nbr_call (neighbor.c): the topology's neighbor lists in
 * MPI's order, the counts and displacements widened to MPI_Count / MPI_Aint elements, the
 * types, and the private communicator the rows post on. The rows (linear.c, node_aware.c)
 * are step forms run by the operation engine (src/core/op.h): blocking (tuna_op_run),
 * nonblocking and persistent (tuna_op_start) share them.
 */
#ifndef TUNA_NEIGHBOR_H
#define TUNA_NEIGHBOR_H

#include "op.h"
#include "tuna_internal.h"
#include "tuna_registry.h"

#include <stdbool.h>

/* One side of the exchange: per neighbor edge, in the topology's order. */
typedef struct tuna_nbr_side {
    int n;               /* degree (in for receives, out for sends) */
    int *peer;           /* ranks (MPI_PROC_NULL on a Cartesian border) */
    MPI_Count *count;    /* elements */
    MPI_Aint *displ;     /* elements of the type's extent from the buffer */
} tuna_nbr_side;

/* A call's arguments, normalised: what every row reads. */
typedef struct tuna_nbr_call {
    const tuna_transport *tp;
    MPI_Comm comm;             /* private communicator (ctx->comm): the rows' traffic */
    int tag_shift;             /* tuna_op_tag_shift for nonblocking and persistent forms */
    const tuna_ctx *ctx;       /* node structure: node_of, local_of, nnodes */
    const char *sbuf;
    char *rbuf;
    MPI_Datatype stype, rtype;
    MPI_Aint sext, rext;       /* extents */
    size_t ssize, rsize;       /* type sizes (packed bytes per element) */
    tuna_nbr_side out, in;     /* sends to out.peer[i], receives from in.peer[j] */
    bool by_direction;         /* a Cartesian topology where a rank is a neighbor twice, run by
                                  linear: messages matched by direction (MPI 4.1), not order */
} tuna_nbr_call;

struct tuna_nbr_agg;    /* node_aware.c: the aggregated pattern and its buffers */
struct tuna_nbr_rounds; /* tuna.c: the packed blocks, the rounds and their recorded sizes */

/* The operation: the engine's record first, then where the row is. */
typedef struct tuna_nbr_op {
    tuna_op op;
    tuna_nbr_call *c;
    long param[TUNA_MAX_PARAMS];
    const tuna_algorithm_info *info;
    int stage;
    bool pattern_only;          /* persistent init: stop once the pattern is known */
    MPI_Request *req;           /* this step's requests */
    MPI_Request *pend;          /* requests that complete in a later step */
    int npend;
    int cap;                    /* room in req and in pend */
    struct tuna_nbr_agg *agg;   /* node_aware's state, kept across starts of a plan */
    struct tuna_nbr_rounds *rounds; /* tuna's state, kept across starts of a plan */
    int data_stage;             /* a row's first data stage once its pattern is known (0:
                                   none yet): where a plan's start resumes */
} tuna_nbr_op;

typedef struct tuna_nbr_algorithm {
    tuna_algorithm desc;
    tuna_step_fn *step;         /* NULL: vendor, auto */
    bool pattern;               /* a plan runs the row once at init (pattern_only) to work
                                   out what every start reuses */
} tuna_nbr_algorithm;

extern const tuna_nbr_algorithm tuna_nbr_table[];
extern const tuna_registry tuna_nbr_registry;

tuna_step_fn tuna_nbr_linear_step, tuna_nbr_node_aware_step, tuna_nbr_tuna_step;

/* The rows' states: freed with the operation (or the plan). */
void tuna_nbr_agg_free(struct tuna_nbr_agg *g);
void tuna_nbr_rounds_free(struct tuna_nbr_rounds *t);
/* A start of a persistent operation again: the pattern kept, the stages from the row's first
 * data stage (o->data_stage). */
void tuna_nbr_op_rewind(tuna_nbr_op *o);

/* Room for n requests in o->req and o->pend (grown, kept). */
int tuna_nbr_reserve(tuna_nbr_op *o, int n);

/* Edge i of the send side packed to `to` / edge j of the receive side unpacked from `from`
 * (its bytes, tuna_nbr_bytes). */
int tuna_nbr_pack_edge(const tuna_nbr_call *c, int i, char *to);
int tuna_nbr_unpack_edge(const tuna_nbr_call *c, int j, const char *from);

/* Post edge i of a side as one typed message (count elements of the call's type; above
 * INT_MAX elements as one element of a derived type of them: the same type signature). */
int tuna_nbr_post_edge(const tuna_nbr_call *c, bool send, int i, int tag, MPI_Request *req);

/* Bytes of edge i of a side (count times the type's size). */
static inline size_t tuna_nbr_bytes(const tuna_nbr_side *s, size_t tsize, int i)
{
    return (size_t)s->count[i] * tsize;
}

/* The call's topology and arguments (blocking, nonblocking and persistent forms share it;
 * counts of either width): *call allocated and filled, or an error with nothing kept.
 * *library when the library's own call must serve it (a Cartesian topology where a neighbor
 * appears twice: MPI matches those messages by direction, which the libraries do
 * differently). */
int tuna_nbr_call_make(const char *fn, const void *sendbuf, const tuna_counts *send,
                       MPI_Datatype sendtype, void *recvbuf, const tuna_counts *recv,
                       MPI_Datatype recvtype, MPI_Comm comm, tuna_nbr_call **call,
                       bool *library);
void tuna_nbr_call_free(tuna_nbr_call *c);
/* Frees what an operation holds (its pattern, requests, call). */
void tuna_nbr_op_clear(tuna_nbr_op *o);

/* auto's choice for a plan (collective over the private communicator): the row and its
 * parameters from the model over the agreed pattern. */
int tuna_nbr_auto_choose(const tuna_nbr_call *c, int *algorithm, long param[TUNA_MAX_PARAMS]);

#endif /* TUNA_NEIGHBOR_H */
