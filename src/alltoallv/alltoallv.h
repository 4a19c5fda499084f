/*
 * The alltoallv family's internals: the registry row, the cost models and candidate grids
 * that table.c's rows name (model.c), auto's steps, and the engines shared by several
 * algorithms. The argument record (tuna_a2av_args) and the block helpers are the core's
 * (tuna_internal.h), which normalises the user's arguments. The algorithms' run functions
 * are declared in table.c, next to their rows (docs/contributing.md).
 */
#ifndef TUNA_ALLTOALLV_H
#define TUNA_ALLTOALLV_H

#include "../core/op.h"
#include "../select/tuna_select.h"

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
    int post_rc;                /* the current step's failed post, if any */
    int comm_rc;                /* the first failed step so far (the steps go on) */
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

/* Hand the engine the n requests just posted (post_rc: the first failed post, which ends
 * the step early: the posted ones still complete); returns TUNA_STEP_WAIT. */
static inline int tuna_a2av_step_wait(tuna_a2av_op *o, MPI_Request *reqs, int n, int post_rc)
{
    o->op.req = reqs;
    o->op.nreq = n;
    o->post_rc = post_rc;
    return TUNA_STEP_WAIT;
}
/* The outcome of the step that just completed: its failed post, else its failed wait
 * (recorded with `what`). */
int tuna_a2av_step_outcome(const tuna_a2av_op *o, int wait_rc, const char *what);
/* The end of a row whose state owns the byte view v (the Bruck rows, bruck-radix, mesh):
 * the view closed (the receive blocks unpacked if rc is MPI_SUCCESS), the state freed by
 * o->state_free, the operation ended with the outcome; returns TUNA_STEP_DONE. */
int tuna_a2av_view_done(tuna_a2av_op *o, tuna_bytes_view *v, int rc);
/* End the operation with outcome rc; returns TUNA_STEP_DONE. */
static inline int tuna_a2av_step_done(tuna_a2av_op *o, int rc)
{
    o->op.rc = rc;
    return TUNA_STEP_DONE;
}

/* Algorithms another one falls back to: hierarchical TuNA on unequal nodes runs flat TuNA
 * (same parameter names), vendor without the library's MPI_Alltoallv_c runs linear. */
tuna_a2av_step_fn tuna_a2av_tuna_step, tuna_a2av_linear_step;

/*
 * auto's steps around the core's checks (src/alltoallv/auto.c). Before them:
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

/* Cost models (model.c; tuna_cost_fn), each named for what it models; docs/tuning.md. */
double tuna_a2av_cost_one_phase(const tuna_profile *m, const tuna_select_input *in,
                                const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_receives_first(const tuna_profile *m, const tuna_select_input *in,
                                     const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_batches_of_block(const tuna_profile *m, const tuna_select_input *in,
                                       const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_batches_of_stride(const tuna_profile *m, const tuna_select_input *in,
                                        const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_stepwise(const tuna_profile *m, const tuna_select_input *in,
                               const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_window(const tuna_profile *m, const tuna_select_input *in,
                             const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_bruck(const tuna_profile *m, const tuna_select_input *in,
                            const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_padded_bruck(const tuna_profile *m, const tuna_select_input *in,
                                   const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_twophase_bruck(const tuna_profile *m, const tuna_select_input *in,
                                     const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_tuna(const tuna_profile *m, const tuna_select_input *in,
                           const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_coalesced(const tuna_profile *m, const tuna_select_input *in,
                                const tuna_algorithm_info *info, const long *param);
double tuna_a2av_cost_staggered(const tuna_profile *m, const tuna_select_input *in,
                                const tuna_algorithm_info *info, const long *param);

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

/* auto's candidate grids (model.c; tuna_grid_fn). */
void tuna_a2av_grid_block(const tuna_select_input *in, const tuna_algorithm_info *info,
                          tuna_candidates *out);
void tuna_a2av_grid_stride(const tuna_select_input *in, const tuna_algorithm_info *info,
                           tuna_candidates *out);
void tuna_a2av_grid_tuna(const tuna_select_input *in, const tuna_algorithm_info *info,
                         tuna_candidates *out);
void tuna_a2av_grid_coalesced(const tuna_select_input *in, const tuna_algorithm_info *info,
                              tuna_candidates *out);
void tuna_a2av_grid_staggered(const tuna_select_input *in, const tuna_algorithm_info *info,
                              tuna_candidates *out);

/* Requests in flight per rank (model.c; tuna_inflight_fn), read in each algorithm's file. */
long tuna_a2av_inflight_all_peers(const tuna_select_input *in, const tuna_algorithm_info *info,
                                  const long *param);
long tuna_a2av_inflight_one_peer(const tuna_select_input *in, const tuna_algorithm_info *info,
                                 const long *param);
long tuna_a2av_inflight_block(const tuna_select_input *in, const tuna_algorithm_info *info,
                              const long *param);
long tuna_a2av_inflight_stride(const tuna_select_input *in, const tuna_algorithm_info *info,
                               const long *param);
long tuna_a2av_inflight_tuna(const tuna_select_input *in, const tuna_algorithm_info *info,
                             const long *param);
long tuna_a2av_inflight_coalesced(const tuna_select_input *in, const tuna_algorithm_info *info,
                                  const long *param);
long tuna_a2av_inflight_staggered(const tuna_select_input *in, const tuna_algorithm_info *info,
                                  const long *param);

#endif /* TUNA_ALLTOALLV_H */
