/*
 * Plans (persistent collectives): the state a plan keeps between init and its starts, and
 * the pieces the three init functions share (docs/plans.md).
 */
#ifndef TUNA_PLAN_H
#define TUNA_PLAN_H

#include "../allgather/allgather.h"
#include "../allreduce/allreduce.h"
#include "../alltoall/alltoall.h"
#include "../alltoallv/alltoallv.h"

/* Candidates the planner times at most (vendor + the model's best rows). */
#define TUNA_PLAN_MAX_CANDIDATES 7

struct tuna_plan_s {
    tuna_collective coll;
    bool active;
    MPI_Comm comm;      /* the user's communicator */
    tuna_ctx *ctx;      /* NULL: vendor on an intercommunicator */
    tuna_plan_info info;
    tuna_wisdom_key key;
    /* One exchange with the current choice, blocking (the planner's measure; the start of
     * a choice without a step form), and setting a choice. */
    int (*start)(struct tuna_plan_s *p);
    /* The local start of one exchange (tuna_start) where the choice has a step form:
     * MPI_SUCCESS with the exchange in flight as `inflight` (tuna_op_start), 1 when the choice
     * has none (then tuna_start runs start), else an error with nothing in flight. NULL:
     * never. */
    int (*begin)(struct tuna_plan_s *p);
    tuna_op *inflight;          /* the exchange in flight, or NULL (completed in start) */
    void (*choose)(struct tuna_plan_s *p, const tuna_choice *c);
    /* Point the exchange at a private receive buffer (measure), or back (NULL). */
    void (*redirect)(struct tuna_plan_s *p, void *private_recv);
    void *private_recv;         /* the measure's receive buffer (allocation) */
    MPI_Aint private_offset;    /* its address = allocation - offset (the receive span's lb) */
    size_t private_bytes;

    /* alltoallv */
    const void *sendbuf;
    void *recvbuf, *user_recvbuf;
    /* alltoallv: copies of sendcounts, sdispls, recvcounts, rdispls as wide as the caller's
     * (sc, rcv point into them; sc is empty in place); alltoall: tuna_a2a_prepare's counts */
    void *arrays;
    tuna_counts sc, rcv;
    bool large;                 /* the _c init: MPI_Count counts (vendor: the library's _c call) */
    MPI_Count a2a_count[2];     /* alltoall: sendcount, recvcount (for a vendor start) */
    MPI_Datatype sendtype, recvtype;
    bool vendor;                /* the choice is the MPI library's own call */
    /* What a start runs instead of the choice, and why (tuna_stats_last().fallback): vendor
     * with large counts where the library has no _c call runs linear; NULL otherwise. */
    const char *fallback;
    int fallback_algorithm;
    tuna_a2av_args a;
    const tuna_a2av_algorithm *run;
    tuna_scratch scr;           /* the plan's own buffers (a.scr) */
    int tag_shift;              /* the plan's tags (tuna_op_tag_shift), for its local starts */
    tuna_a2av_op a2av_op;       /* the exchange in flight (a local start) */
    /* alltoallv on device buffers its row stages: the plan's staging transport (a.tp; its
     * stream and pinned pool, kept from init to free), else NULL */
    struct tuna_staged *staged;
    MPI_Aint *disp;
    char *inplace_copy;
    int *inplace_counts;

    /* Derived datatypes the plan duplicated (MPI lets the caller free its own after init). */
    MPI_Datatype owned[2];
    int nowned;

    /* allgather / allreduce: the blocking call with the chosen algorithm (the measure; the
     * start of a vendor choice), and the operation a local start runs */
    int scount, rcount;
    MPI_Datatype dtype;
    MPI_Op op;
    tuna_options chosen;
    size_t block;               /* the agreed block's / vector's bytes */
    bool commute;               /* allreduce: whether the op commutes */
    tuna_ag_op ag_op;
    tuna_ar_op ar_op;

    /* alltoallw (src/alltoallw/alltoallw_init.c): a plan made on other buffers than the
     * caller's runs `before` ahead of every exchange (the send blocks packed), `after` once an
     * exchange succeeded (the received blocks unpacked). `release` frees a collective's own
     * state, `extra`, with the plan (alltoallw's; neighbor_alltoallv's operation,
     * src/plan/plan_neighbor.c). NULL: none. */
    int (*before)(struct tuna_plan_s *p);
    int (*after)(struct tuna_plan_s *p);
    void (*release)(struct tuna_plan_s *p);
    void *extra;
};

/* Plans on alltoallv's operation (alltoallv, alltoall; plan_alltoallv.c): the local start of
 * the chosen row (1: vendor, which runs in the start), a blocking run of it (the measure; the
 * in-place copy packed first), the choice from the collective's table, the receive buffer
 * pointed at the measure's private one (NULL: back). */
int tuna_plan_a2av_begin(struct tuna_plan_s *p);
int tuna_plan_a2av_run(struct tuna_plan_s *p);
void tuna_plan_a2av_choose(struct tuna_plan_s *p, const tuna_choice *c);
void tuna_plan_a2av_redirect(struct tuna_plan_s *p, void *private_recv);
/* The fields every such plan sets at init (its arguments, these functions and `start`, the
 * one that runs the library's call; with ctx: the exchange's description and the plan's tag
 * shift), its derived datatypes duplicated (the caller may free its own after init). */
int tuna_plan_a2av_setup(struct tuna_plan_s *p, tuna_collective coll, MPI_Comm comm,
                         tuna_ctx *ctx, int (*start)(struct tuna_plan_s *p), const void *sendbuf,
                         MPI_Datatype sendtype, void *recvbuf, MPI_Datatype recvtype, bool large);
/* A large-count plan on an intercommunicator runs the library's _c call: MPI_ERR_COMM where the
 * library has none (vendor's replacement, linear, needs an intracommunicator). */
int tuna_plan_a2av_inter_large(const char *fn, tuna_collective coll, bool large);
/* The opening of an alltoall(v) init after tuna_plan_begin (*local its outcome): the plan's
 * memory (*p; no memory is a local error, agreed like the others) and whether comm is an
 * intercommunicator. Returns an error only where the init ends at once, with *p freed. */
int tuna_plan_a2av_open(const char *fn, MPI_Comm comm, int *local, struct tuna_plan_s **p,
                        int *inter);
/* A row the caller named (not auto): its parameters resolved at P, the plan's choice. */
void tuna_plan_a2av_forced(struct tuna_plan_s *p, const tuna_a2av_algorithm *alg,
                           const tuna_options *opt, int P);

/* *type is kept by the plan: a derived one is replaced by a duplicate the plan owns. */
int tuna_plan_keep_type(struct tuna_plan_s *p, MPI_Datatype *type);

/* The local part of every init: the plan pointer (*plan set to NULL), the flags, the options
 * (NULL: the collective's default) and comm, as tuna_call_begin() checks them. */
int tuna_plan_begin(const char *fn, tuna_collective coll, MPI_Comm comm, unsigned flags,
                    tuna_plan *plan, const tuna_options **opt);

/* The end of every init: on success the plan (its init time recorded) goes to *plan; on an
 * error p (may be NULL) is freed and rc returned. */
int tuna_plan_finish(struct tuna_plan_s *p, int rc, double t0, tuna_plan *plan);

/* The options naming a choice: its algorithm with every parameter set. */
tuna_options tuna_plan_options_of(tuna_collective coll, const tuna_choice *c);

/* The planner: the choice for an auto plan, by the model (estimate) or by timing the model's
 * candidates (measure; wisdom first). Collective over p->ctx->comm. */
int tuna_plan_decide(struct tuna_plan_s *p, const tuna_select_input *in, unsigned flags);

/* Bytes and lowest offset (from the buffer pointer) that the k blocks of one side span (block j:
 * tuna_counts_n(blocks, j) elements of `type` from element tuna_counts_d(blocks, j)). */
int tuna_plan_span(MPI_Datatype type, const tuna_counts *blocks, int k, size_t *bytes,
                   MPI_Aint *lo);
/* The same for one run of n elements at the buffer pointer. */
int tuna_plan_span_run(MPI_Datatype type, long long n, size_t *bytes, MPI_Aint *lo);

void tuna_plan_fill_key(struct tuna_plan_s *p, const long long *sig, int nsig);
void tuna_plan_set_info_choice(struct tuna_plan_s *p, const tuna_choice *c, int source);


#endif /* TUNA_PLAN_H */
