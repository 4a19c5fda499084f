/*
 * The alltoallv family's internals: the registry row, the cost models and candidate grids
 * that table.c's rows name (model.c), auto's steps, and the engines shared by several
 * algorithms, the argument record (tuna_a2av_args) that the front end (front.c) fills from
 * the user's arguments, and the block helpers (blocks.c). The algorithms' step functions are
 * declared at the top of rows.h (tuna's and linear's, which other files call, here); the rows
 * are in rows.h and table.c (docs/contributing.md, "Adding an algorithm").
 */
#ifndef TUNA_ALLTOALLV_H
#define TUNA_ALLTOALLV_H

#include "../core/op.h"
#include "../transport/cuda_staged.h" /* the nonblocking starts' staging transport */
#include "../select/tuna_select.h"

#include <string.h>

/*
 * Arguments after validation and normalisation. Displacements are in BYTES
 * (already multiplied by the extent, as MPI_Aint, so offsets beyond 2 GiB
 * cannot overflow). For MPI_IN_PLACE the front end packs the receive buffer's
 * blocks into a temporary buffer first, so algorithms never see in-place.
 */
typedef struct tuna_a2av_args {
    const char *sbuf;
    const int *scounts;         /* in units of stype (tuna_scount(): NULL for large counts) */
    const MPI_Count *scounts_l; /* the large-count arrays (tuna_alltoallv_c), else NULL */
    const MPI_Count *rcounts_l;
    const MPI_Aint *sdisp;      /* byte offsets from sbuf */
    MPI_Datatype stype;
    MPI_Aint sext;              /* extent of stype */
    size_t ssize;               /* MPI_Type_size(stype) */
    bool scontig;               /* stype's data is ssize contiguous bytes at the displacement */
    char *rbuf;
    const int *rcounts;
    const MPI_Aint *rdisp;
    MPI_Datatype rtype;
    MPI_Aint rext;
    size_t rsize;
    bool rcontig;
    tuna_ctx *ctx;              /* ctx->comm is the private communicator */
    const tuna_transport *tp;   /* moves the call's data (src/transport/transport.h) */
    tuna_scratch *scr;          /* the call's buffers: &ctx->scr, or the operation's own */
    int tag_shift;              /* added to every tag of the call (tuna_op_tag_shift): 0 for
                                 * blocking calls; the block helpers below add it */
    int rank, size;
    const tuna_algorithm_info *info; /* the running row (tuna_a2av_run_row): its parameters */
    long param[TUNA_MAX_PARAMS];/* resolved values in the row's order (defaults applied,
                                 * clamped): algorithms read them by name, tuna_a2av_param() */
    size_t max_block_bytes;     /* global maximum over all ranks of any block's bytes */
    size_t total_bytes_max;     /* global maximum over ranks of bytes sent by one rank */
    double zero_fraction;       /* global fraction of empty blocks */
    double mean_block_bytes;    /* global mean block size in bytes */
    bool stats_agreed;          /* the four fields above are set (else TUNA_ARGCHECK=local
                                 * skipped the agreement: they are 0) */
    bool uniform;               /* a uniform all-to-all (tuna_alltoall): every block of every
                                 * rank is tuna_scount(a, 0) * ssize bytes, known to all ranks
                                 * without a message (MPI's type-signature rule), so rows may
                                 * skip their size metadata; the statistics are then set */
} tuna_a2av_args;

/* Fill a's global statistics fields from agreed values. */
void tuna_a2av_set_stats(tuna_a2av_args *a, const long long v[TUNA_AGREE_N]);
/* After an agreement: MPI_ERR_TRUNCATE on every rank when the ranks send more bytes in all
 * than their receive counts hold (a type-signature mismatch that some receiver would have
 * to truncate; found this way even by the rows that pad blocks and so cannot see it). */
int tuna_a2av_check_totals(const long long v[TUNA_AGREE_N]);

/* Pointer to block j of the send / receive buffer. The buffer may be MPI_BOTTOM (NULL, the
 * datatype holding absolute addresses): address arithmetic, not pointer arithmetic on NULL. */
static inline const char *tuna_sblock(const tuna_a2av_args *a, int j)
{
    return (const char *)((uintptr_t)a->sbuf + (uintptr_t)a->sdisp[j]);
}
static inline char *tuna_rblock(const tuna_a2av_args *a, int j)
{
    return (char *)((uintptr_t)a->rbuf + (uintptr_t)a->rdisp[j]);
}

/* Count of send / receive block j, in elements of stype / rtype (int or large arrays). */
static inline MPI_Count tuna_scount(const tuna_a2av_args *a, int j)
{
    return a->scounts ? a->scounts[j] : a->scounts_l[j];
}
static inline MPI_Count tuna_rcount(const tuna_a2av_args *a, int j)
{
    return a->rcounts ? a->rcounts[j] : a->rcounts_l[j];
}

/* Whether block j is sent / received at all (zero-byte messages are skipped on both sides). */
static inline bool tuna_a2av_sends(const tuna_a2av_args *a, int j)
{
    return tuna_scount(a, j) > 0 && a->ssize > 0;
}
static inline bool tuna_a2av_recvs(const tuna_a2av_args *a, int j)
{
    return tuna_rcount(a, j) > 0 && a->rsize > 0;
}

/* Post the send / receive of block `peer` (the peer's rank) with the user's datatypes. */
int tuna_a2av_isend_block(const tuna_a2av_args *a, int peer, int tag, MPI_Request *req);
int tuna_a2av_irecv_block(const tuna_a2av_args *a, int peer, int tag, MPI_Request *req);
/* Post the send of block `peer` of large-count args into *req (tuna_a2av_isend_block's; with
 * external linkage the compiler keeps it out of line, and the common path stays short:
 * static, it was inlined and doubled tuna_a2av_isend_block's instructions per call). */
int tuna_a2av_send_large(const tuna_a2av_args *a, int peer, int tag, MPI_Request *req);
/* Post the receive from `src` and the send to `dst` if non-empty, appending to reqs[*n]. */
int tuna_a2av_post_pair(const tuna_a2av_args *a, int src, int dst, int tag, MPI_Request *reqs,
                        int *n);
/* Copy this rank's own block (sendbuf block `rank` to recvbuf block `rank`). */
int tuna_a2av_copy_self(const tuna_a2av_args *a);

/*
 * Byte-level view for algorithms that move blocks as raw bytes (Bruck family,
 * TuNA, hierarchical). For contiguous types the view points into the user's
 * buffers; otherwise send blocks are packed into, and receive blocks later
 * unpacked from, temporary buffers.
 */
typedef struct tuna_bytes_view {
    const char *sbase;          /* block j at sbase + soff[j], sbytes[j] bytes */
    const MPI_Aint *soff;
    size_t *sbytes;
    char *rbase;                /* block j at rbase + roff[j], rbytes[j] bytes (capacity) */
    const MPI_Aint *roff;
    size_t *rbytes;
    /* private */
    void *spack, *rpack;
    MPI_Aint *soff_own, *roff_own;
} tuna_bytes_view;

int tuna_bytes_view_open(const tuna_a2av_args *a, tuna_bytes_view *v);
/* Unpack received blocks (if needed) and release the view's memory. */
int tuna_bytes_view_close(const tuna_a2av_args *a, tuna_bytes_view *v, int rc);

/*
 * Radix-2 Bruck family helpers (src/alltoallv/bruck_common.c). "Slot" i of a
 * rank's working set holds the block travelling distance i (to rank+i before
 * the rounds, from rank-i after them); round k moves the slots with bit k set.
 */
int tuna_bruck_rounds(int P);                        /* ceil(log2 P); 0 for P = 1 */
int tuna_bruck_round_slots(int P, int k, int *idx);  /* slots of round k; <= P/2 of them */
static inline int tuna_bruck_rank(int me, long long off, int P)
{
    return (int)((((long long)me + off) % P + P) % P);
}
int tuna_bruck_padded_size(size_t nslots, size_t B, size_t *bytes);
void tuna_bruck_pad(const tuna_transport *tp, const tuna_bytes_view *v, int P, int shift, size_t B,
                    char *w);
void tuna_bruck_scan_out(const tuna_transport *tp, const tuna_bytes_view *v, int P, int me,
                         bool relative, size_t B, const char *w, const unsigned char *upper);
void tuna_bruck_rotate(const tuna_transport *tp, const char *in, char *out, int P, int me, size_t B,
                       bool inverse);
int tuna_bruck_block_type(size_t bytes, MPI_Datatype *type);

/* The pieces of tuna_alltoallv() that a plan (src/plan/) runs once at init; counts of either
 * width (tuna_counts; the send side is not read in place). */
/* Local argument checks; on success sinfo/rinfo and this rank's statistics in v. */
int tuna_a2av_check_args(const void *sendbuf, const tuna_counts *sc, MPI_Datatype sendtype,
                         const void *recvbuf, const tuna_counts *rcv, MPI_Datatype recvtype,
                         int P, int me, tuna_type_info *sinfo, tuna_type_info *rinfo,
                         long long v[TUNA_AGREE_N]);
/* Bytes of the in-place send copy. */
size_t tuna_a2av_inplace_bytes(const tuna_counts *rcv, size_t rsize, int P);
/* Fill a's buffer fields (a->size set): byte displacements in disp[2P]; in place, the send
 * side is `copy` (copy_counts: P ints, needed when the receive type is not contiguous),
 * which tuna_a2av_pack_inplace() fills from the receive blocks before each run. The arrays
 * sc and rcv point to are read by every run: they must live as long as a. */
void tuna_a2av_describe(tuna_a2av_args *a, const void *sendbuf, const tuna_counts *sc,
                        MPI_Datatype sendtype, const tuna_type_info *si, void *recvbuf,
                        const tuna_counts *rcv, MPI_Datatype recvtype, const tuna_type_info *ri,
                        MPI_Aint *disp, char *copy, int *copy_counts);
int tuna_a2av_pack_inplace(const tuna_a2av_args *a, char *copy);
/*
 * The nonblocking front end's preparation (src/alltoallv/ialltoallv.c), all local: this
 * rank's checks and its contribution to the agreement (v), the byte displacements into disp
 * (2P entries), a's buffer fields (a->ctx, size, rank set). In place, *copy (and, for a
 * non-contiguous receive type, *copy_counts) are allocated here and packed from the receive
 * blocks; the caller frees them when the operation ends. Nothing is allocated on an error.
 */
int tuna_a2av_prepare(tuna_a2av_args *a, const void *sendbuf, const tuna_counts *sc,
                      MPI_Datatype sendtype, void *recvbuf, const tuna_counts *rcv,
                      MPI_Datatype recvtype, long long v[TUNA_AGREE_N], MPI_Aint *disp,
                      char **copy, int **copy_counts);

/* The library's own alltoallv (vendor, an intercommunicator; and a nonblocking start that
 * waits for its communicator's set-up): with sendbuf == recvbuf, MPI_ERR_BUFFER if this rank sends and receives data
 * (tuna_check_alias's rule), local; MPI_SUCCESS otherwise. */
int tuna_a2av_library_alias(const char *fn, const void *sendbuf, const void *recvbuf,
                            const tuna_counts *sc, const tuna_counts *rcv, MPI_Comm comm);

/* The running algorithm's parameter `name` (resolved: default applied, clamped). */
static inline long tuna_a2av_param(const tuna_a2av_args *a, const char *name)
{
    return tuna_param_get(a->info, a->param, name);
}

typedef int tuna_a2av_run_fn(const tuna_a2av_args *a);

/*
 * An alltoallv operation (src/core/op.h): the engine's record, the arguments and where the
 * running row's schedule is between its steps. A row's step (tuna_a2av_step_fn) keeps its
 * position in `i` and its counters in the fields below (or, for a larger state, in its own
 * allocation at `state`, freed by state_free when the operation ends).
 */
typedef struct tuna_a2av_op {
    tuna_op op;                 /* first member: the engine's view */
    tuna_a2av_args *a;
    const struct tuna_a2av_algorithm *row;
    int i;                      /* position in the row's schedule (0: not started) */
    int n;                      /* a counter of the row's (rounds, ...) */
    int local_rc;               /* the own block's copy */
    MPI_Request pair[2];        /* room for the rows that keep one pair in flight */
    void *state;
    void (*state_free)(struct tuna_a2av_op *o);
} tuna_a2av_op;

/* A row's step (tuna_step_fn on the alltoallv operation). */
typedef int tuna_a2av_step_fn(tuna_a2av_op *o, int wait_rc);

/* A registry row: the algorithm, then how to run it: step (every form: blocking,
 * nonblocking, persistent) or, for the rows without a step form yet, run (blocking only;
 * docs/nonblocking.md lists them). */
typedef struct tuna_a2av_algorithm {
    tuna_algorithm desc;
    tuna_a2av_run_fn *run;
    tuna_a2av_step_fn *step;
} tuna_a2av_algorithm;

extern const tuna_a2av_algorithm tuna_a2av_table[];
extern const tuna_registry tuna_a2av_registry;

/* A step form's blocking run: its steps and waits, here (tuna_op_run). */
int tuna_a2av_run_steps(const tuna_a2av_algorithm *row, tuna_a2av_args *a);

/* Run `row` on a (whose param holds the row's resolved values), blocking. */
static inline int tuna_a2av_run_row(const tuna_a2av_algorithm *row, tuna_a2av_args *a)
{
    a->info = &row->desc.info;
    return row->step ? tuna_a2av_run_steps(row, a) : row->run(a);
}

/* tuna_op_step_wait on the alltoallv operation; returns TUNA_STEP_WAIT. */
static inline int tuna_a2av_step_wait(tuna_a2av_op *o, MPI_Request *reqs, int n, int post_rc)
{
    return tuna_op_step_wait(&o->op, reqs, n, post_rc);
}
/* The outcome of the step that just completed: its failed post (o->op.post_rc), else its
 * failed wait (recorded with `what`). Unlike tuna_op_step_record it neither clears the post
 * nor keeps the first failure: the row decides (o->op.comm_rc where its steps go on). */
int tuna_a2av_step_outcome(const tuna_a2av_op *o, int wait_rc, const char *what);
/* The end of a row whose state owns the byte view v (the Bruck rows, bruck-radix, mesh):
 * the view closed (the receive blocks unpacked if rc is MPI_SUCCESS), the state freed by
 * o->state_free, the operation ended with the outcome; returns TUNA_STEP_DONE. */
int tuna_a2av_view_done(tuna_a2av_op *o, tuna_bytes_view *v, int rc);
/* A row's state s (zeroed, its types MPI_DATATYPE_NULL) attached to o with its state_free,
 * its timer tm started and its byte view v opened, the first things its first step does.
 * On failure (returned) the view is empty and state_free has run: the caller ends the
 * operation with the outcome. */
static inline int tuna_a2av_state_attach(tuna_a2av_op *o, void *s,
                                         void (*state_free)(tuna_a2av_op *o), tuna_timer *tm,
                                         tuna_bytes_view *v)
{
    o->state = s;
    o->state_free = state_free;
    tuna_timer_start(tm);
    int rc = tuna_bytes_view_open(o->a, v);
    if (rc != MPI_SUCCESS) {
        memset(v, 0, sizeof *v); /* a failed open freed what it had: nothing to close */
        state_free(o);
    }
    return rc;
}
/* The end of a row's state_free, its own buffers freed: the state's byte view v closed
 * without unpacking (an open one's buffers freed; a closed one is empty), the state freed,
 * the operation left without one. */
static inline void tuna_a2av_state_release(tuna_a2av_op *o, tuna_bytes_view *v)
{
    (void)tuna_bytes_view_close(o->a, v, MPI_ERR_INTERN); /* frees, unpacks nothing */
    free(o->state);
    o->state = NULL;
    o->state_free = NULL;
}
/* End the operation with outcome rc; returns TUNA_STEP_DONE. */
static inline int tuna_a2av_step_done(tuna_a2av_op *o, int rc)
{
    return tuna_op_step_done(&o->op, rc);
}
/*
 * The step of a row that exchanges with its peers in batches of `width` (scattered,
 * multipair): o->i is the next batch's first peer offset, o->n the batches done. The first
 * step copies the own block and sets o->i to `first`; every later one records the last
 * batch's outcome (a failed batch is complete when recorded, and the batches go on:
 * docs/test-harnesses.md). A batch posts a pair per offset off: receive from rank-off and
 * send to rank+off (`down`), else the reverse; offset 0, the own block, is skipped.
 */
static inline int tuna_a2av_batches_step(tuna_a2av_op *o, int wait_rc, int first, int width,
                                         bool down, int tag, const char *failed)
{
    const tuna_a2av_args *a = o->a;
    const int P = a->size, me = a->rank;
    if (o->n == 0 && o->i == 0) {
        int rc = tuna_a2av_copy_self(a);
        if (rc != MPI_SUCCESS)
            return tuna_a2av_step_done(o, rc);
        o->i = first;
    } else {
        int rc = tuna_a2av_step_outcome(o, wait_rc, failed);
        o->op.comm_rc = tuna_first_error(o->op.comm_rc, rc);
        o->n++;
    }
    if (o->i >= P) {
        tuna_stats_rounds(o->n);
        return tuna_a2av_step_done(o, o->op.comm_rc);
    }
    MPI_Request *reqs = tuna_scratch_requests(a->scr, 2 * (size_t)width);
    if (!reqs) { /* nothing of this batch is posted: the peers' posts of it stay unmatched */
        tuna_stats_rounds(o->n);
        return tuna_a2av_step_done(o, tuna_first_error(o->op.comm_rc, MPI_ERR_NO_MEM));
    }
    int n = 0, prc = MPI_SUCCESS;
    const int off0 = o->i;
    for (int off = off0; off < off0 + width && off < P && prc == MPI_SUCCESS; off++) {
        if (off == 0)
            continue; /* self: copied at the first step */
        const int lo = (me - off + P) % P, hi = (me + off) % P;
        prc = tuna_a2av_post_pair(a, down ? lo : hi, down ? hi : lo, tag, reqs, &n);
    }
    o->i = off0 + width;
    return tuna_a2av_step_wait(o, reqs, n, prc);
}

/* The user's arguments of tuna_ialltoallv and tuna_ialltoall besides their counts: what the
 * library's call posts, and what a start that waits for the communicator's set-up
 * (tuna_setup_defer) restarts with. */
typedef struct tuna_a2av_nb_user {
    const char *fn; /* the public entry's name, for messages */
    const void *sendbuf;
    void *recvbuf;
    MPI_Datatype stype, rtype;
    MPI_Comm comm; /* the operation's: the private communicator where there is a context */
} tuna_a2av_nb_user;
/* A nonblocking start's opening: req checked and cleared, the call begun (tuna_call_begin:
 * *opt becomes the call's options). */
static inline int tuna_a2av_nb_begin(tuna_collective coll, const tuna_a2av_nb_user *u,
                                     const tuna_options **opt, tuna_request *req)
{
    if (!req)
        return tuna_error_set(MPI_ERR_REQUEST, "%s: req is NULL", u->fn);
    *req = TUNA_REQUEST_NULL;
    return tuna_call_begin(coll, u->comm, opt);
}

/*
 * What the nonblocking starts tuna_ialltoallv and tuna_ialltoall (ialltoallv.c, ialltoall.c)
 * keep beside their operation, theirs until it completes: buffers, the agreement's or the
 * library's request, and where a row serves device buffers (alltoallv) the staging
 * transport of its own (src/transport/cuda_staged.c). The helpers below that run on every
 * start or step are inline, where the per-call budget counts (docs/results/identity.md).
 */
typedef struct tuna_a2av_nb {
    tuna_scratch scr;
    MPI_Aint *disp;
    char *copy;                 /* in place: the packed send side */
    int *copy_counts;
    MPI_Request lib;            /* the agreement's or the library's request */
    struct tuna_staged *staged; /* the staging transport, or NULL (host buffers) */
} tuna_a2av_nb;

/* The operation's engine record: its step and release, published statistics, and the MPI
 * host transport, which completes the library's request and the agreement too. */
static inline void tuna_a2av_nb_init(tuna_a2av_op *o, tuna_a2av_args *a, tuna_step_fn *step,
                                     void (*release)(tuna_op *))
{
    o->op.step = step;
    o->op.tp = &tuna_transport_mpi_host;
    o->op.release = release;
    o->op.publish_stats = true;
    o->a = a;
}
/* Where the row serves the call's device buffers (device): the operation's own staging
 * transport in place of the host one. */
static inline int tuna_a2av_nb_stage(tuna_a2av_op *o, tuna_a2av_nb *nb, bool device)
{
    return device ? tuna_staged_open(&nb->staged, &o->op.tp) : MPI_SUCCESS;
}
/* A row step; at the row's end a failed device copy of the staging transport (its copies
 * cannot return one) is the operation's error. */
static inline int tuna_a2av_nb_row_step(tuna_a2av_op *o, const tuna_a2av_nb *nb, int wait_rc)
{
    const int r = o->row->step(o, wait_rc);
    if (r == TUNA_STEP_DONE && nb->staged) {
        const int copy_rc = tuna_staged_result(o->op.tp);
        if (o->op.rc == MPI_SUCCESS)
            o->op.rc = copy_rc;
    }
    return r;
}
/* nb->lib posted: the operation's next wait. */
static inline void tuna_a2av_nb_wait_lib(tuna_a2av_op *o, tuna_a2av_nb *nb)
{
    o->op.req = &nb->lib;
    o->op.nreq = 1;
}
/* The library's call (`call`) completed with wait_rc: the operation's end. */
static inline int tuna_a2av_nb_library_done(tuna_a2av_op *o, int wait_rc, const char *call)
{
    return tuna_a2av_step_done(o, wait_rc == MPI_SUCCESS
                                      ? MPI_SUCCESS
                                      : tuna_error_set(wait_rc, "the library's %s failed", call));
}
/* The statistics of a start that the library's call takes instead of the row asked for: no
 * context (an intercommunicator), or auto before its selector's agreement (reg: the
 * collective's registry, for its vendor row). */
static inline void tuna_a2av_nb_library_stats(const tuna_registry *reg, const tuna_ctx *ctx)
{
    tuna_stats_current.algorithm = tuna_registry_find_kind(reg, TUNA_ROW_VENDOR);
    tuna_stats_current.fallback =
        !ctx ? TUNA_NO_CONTEXT_FALLBACK : "auto: TUNA_PROFILE / TUNA_TUNING not agreed yet";
}
/* Free what nb holds and the row's state (the operation's release). */
void tuna_a2av_nb_free(tuna_a2av_op *o, tuna_a2av_nb *nb);
/*
 * A start's context: for a row of tuna's (not vendor), comm's, begun here where tuna has not
 * seen comm (its set-up then runs as the operation's first steps, setup.c); NULL for vendor
 * and an intercommunicator. TUNA_NB_DEFER: the set-up is still to run, and the start waits
 * for it (tuna_setup_defer_copy); else an MPI error, or MPI_SUCCESS with *collective
 * (TUNA_ARGCHECK=collective on the context).
 */
#define TUNA_NB_DEFER (-1)
static inline int tuna_a2av_nb_context(MPI_Comm comm, bool vendor, tuna_ctx **ctx,
                                       bool *collective)
{
    int rc;
    *ctx = NULL;
    *collective = false;
    if (!vendor && ((rc = tuna_ctx_find(comm, ctx)) != MPI_SUCCESS ||
                    (!*ctx && (rc = tuna_ctx_begin(comm, ctx)) != MPI_SUCCESS)))
        return rc;
    if (!*ctx)
        return MPI_SUCCESS;
    if (!tuna_ctx_ready(*ctx))
        return TUNA_NB_DEFER;
    return (*ctx)->argcheck_local ? MPI_SUCCESS : tuna_argcheck_collective(collective);
}
/* The first step's agreement posted (one MPI_Iallreduce of v's n values, this rank's error
 * flag from local_rc): the operation's next wait; else the error. */
static inline int tuna_a2av_nb_agree_post(tuna_a2av_op *o, tuna_a2av_nb *nb, tuna_ctx *ctx,
                                          long long *v, int n, int local_rc)
{
    v[TUNA_AGREE_ERROR] = local_rc != MPI_SUCCESS;
    const int rc = tuna_agree_start(ctx, v, n, &nb->lib);
    if (rc == MPI_SUCCESS)
        tuna_a2av_nb_wait_lib(o, nb);
    return rc;
}
/* The agreement completed with wait_rc: MPI_SUCCESS where every rank's checks passed, else
 * the operation's error (the agreement's, this rank's own, or another rank's; fn: the call,
 * named in that message). */
static inline int tuna_a2av_nb_agreed(int wait_rc, int local_rc, const long long *v,
                                      const char *fn)
{
    if (wait_rc != MPI_SUCCESS)
        return tuna_error_set(wait_rc, "the agreement (MPI_Iallreduce) failed");
    if (local_rc != MPI_SUCCESS)
        return local_rc;
    if (v[TUNA_AGREE_ERROR])
        return tuna_error_set(MPI_ERR_ARG, "%s: invalid arguments on another rank; no data moved",
                              fn);
    return MPI_SUCCESS;
}

/* Algorithms another one falls back to: hierarchical TuNA on unequal nodes runs flat TuNA
 * (same parameter names), vendor without the library's MPI_Alltoallv_c runs linear. */
tuna_a2av_step_fn tuna_a2av_tuna_step, tuna_a2av_linear_step;

/*
 * auto's steps around the front end's checks (src/alltoallv/auto.c). Before them:
 * whether this call agrees on the statistics (*due: every rank counts the same
 * calls), else the choice it reuses (*reuse, resolved parameters in param).
 * After an agreement (a's statistics set): the choice, in *algorithm and
 * a->param, which also becomes the one the next calls reuse; due: the call is
 * auto's agreement (learning acts only there), not one whose row needed stats.
 */
int tuna_a2av_auto_begin(tuna_ctx *ctx, bool agree_always, bool *due, int *reuse, long *param);
int tuna_a2av_auto_decide(tuna_a2av_args *a, int *algorithm, bool due);
/* The nonblocking form's choice from statistics its own agreement gave (a's set): the
 * model's cheapest row with a step form (not the library's: its MPI_Ialltoallv must start at
 * the operation's start, in the order of the starts on every rank, not from a later step);
 * no tuning table, no learning (docs/nonblocking.md). */
int tuna_a2av_auto_decide_steps(tuna_a2av_args *a, int *algorithm);
/* The model's cheapest row with a step form for `in` (false, *c the vendor row: none
 * priced); what auto plans choose, so that their starts are local. */
bool tuna_a2av_select_steps(const tuna_select_input *in, tuna_choice *c);
/* auto on device buffers it stages (docs/gpu.md): the model's cheapest row that declares
 * device memory for a's agreed statistics (pairwise where none is priced); recorded in the
 * statistics as auto's choice. */
int tuna_a2av_select_device(tuna_ctx *ctx, const tuna_a2av_args *a, tuna_choice *c);
/* After a call that ran a candidate of auto's learning (ctx->learn_class): this rank's
 * seconds of it (rc: its outcome), and the next candidate into the reuse fields. */
void tuna_a2av_learn_end(tuna_ctx *ctx, double seconds, int rc);

/* Shared engines of several algorithms. */
/* The sliding window of multipair-waitany / -testany (poll) as steps (multipair_window.c). */
int tuna_a2av_window_step(tuna_a2av_op *o, int wait_rc, bool poll, int tag);
/* The pairwise schedules as steps (pairwise.c): before step s (1 <= s < count) the pair
 * (src, dst) is posted under tag, one step at a time; `name` names failures. */
typedef void tuna_a2av_pair_of_fn(const tuna_a2av_args *a, int s, int *src, int *dst);
int tuna_a2av_pairs_step(tuna_a2av_op *o, int wait_rc, int count, tuna_a2av_pair_of_fn *pair_of,
                         int tag, const char *name);

/* Cost models (model.c; tuna_cost_model), each named for what it models; docs/tuning.md. */
tuna_cost_model tuna_a2av_cost_one_phase, tuna_a2av_cost_receives_first,
    tuna_a2av_cost_batches, tuna_a2av_cost_stepwise,
    tuna_a2av_cost_window, tuna_a2av_cost_bruck, tuna_a2av_cost_padded_bruck,
    tuna_a2av_cost_twophase_bruck, tuna_a2av_cost_tuna, tuna_a2av_cost_coalesced,
    tuna_a2av_cost_staggered;

/* The TuNA models by parameter value, with the engine's size announcements or without them
 * (sizes_known: a uniform all-to-all, src/alltoall/model.c); hierarchical: coalesced or
 * staggered. The cost and inflight functions of the rows above and of the uniform rows. */
double tuna_a2av_model_tuna(const tuna_profile *m, const tuna_select_input *in, long radix,
                            long block, bool sizes_known);
double tuna_a2av_model_hierarchical(const tuna_profile *m, const tuna_select_input *in,
                                    long radix, long block, bool coalesced, bool sizes_known);
long tuna_a2av_model_inflight_tuna(const tuna_select_input *in, long radix, long block,
                                   bool sizes_known);
long tuna_a2av_model_inflight_hierarchical(const tuna_select_input *in, long radix, long block,
                                           bool coalesced, bool sizes_known);

/* The TuNA rows' cost and inflight functions at the row's radix and block, defined once for
 * alltoallv (prefix tuna_a2av, size messages) and alltoall (tuna_a2a, sizes known). */
#define TUNA_A2AV_TUNA_PRICES(prefix, sizes_known)                                              \
    double prefix##_cost_tuna(const tuna_profile *m, const tuna_select_input *in,               \
                              const tuna_algorithm_info *info, const long *param)               \
    {                                                                                           \
        return tuna_a2av_model_tuna(m, in, tuna_param_get(info, param, "radix"),                \
                                    tuna_param_get(info, param, "block"), sizes_known);         \
    }                                                                                           \
    TUNA_A2AV_HIER_PRICES(prefix, coalesced, true, sizes_known)                                 \
    TUNA_A2AV_HIER_PRICES(prefix, staggered, false, sizes_known)                                \
    long prefix##_inflight_tuna(const tuna_select_input *in, const tuna_algorithm_info *info,    \
                                const long *param)                                              \
    {                                                                                           \
        return tuna_a2av_model_inflight_tuna(in, tuna_param_get(info, param, "radix"),          \
                                             tuna_param_get(info, param, "block"), sizes_known);\
    }
#define TUNA_A2AV_HIER_PRICES(prefix, row, coalesced, sizes_known)                              \
    double prefix##_cost_##row(const tuna_profile *m, const tuna_select_input *in,              \
                               const tuna_algorithm_info *info, const long *param)              \
    {                                                                                           \
        return tuna_a2av_model_hierarchical(m, in, tuna_param_get(info, param, "radix"),        \
                                            tuna_param_get(info, param, "block"), coalesced,    \
                                            sizes_known);                                       \
    }                                                                                           \
    long prefix##_inflight_##row(const tuna_select_input *in, const tuna_algorithm_info *info,  \
                                 const long *param)                                             \
    {                                                                                           \
        return tuna_a2av_model_inflight_hierarchical(in, tuna_param_get(info, param, "radix"),  \
                                                     tuna_param_get(info, param, "block"),      \
                                                     coalesced, sizes_known);                   \
    }

/* auto's candidate grids (model.c; tuna_candidate_grid). */
tuna_candidate_grid tuna_a2av_grid_batch, tuna_a2av_grid_tuna,
    tuna_a2av_grid_coalesced, tuna_a2av_grid_staggered;

/* Requests in flight per rank (model.c; tuna_inflight_bound), read in each algorithm's file. */
tuna_inflight_bound tuna_a2av_inflight_all_peers, tuna_a2av_inflight_one_peer,
    tuna_a2av_inflight_batch, tuna_a2av_inflight_tuna,
    tuna_a2av_inflight_coalesced, tuna_a2av_inflight_staggered;

#endif /* TUNA_ALLTOALLV_H */
