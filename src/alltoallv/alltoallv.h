/*
 * The alltoallv family's internals: the registry row, the cost models and candidate grids
 * that table.c's rows name (model.c), auto's steps, and the engines shared by several
 * algorithms. The argument record (tuna_a2av_args) and the block helpers are the core's
 * (tuna_internal.h), which normalises the user's arguments. The algorithms' run functions
 * are declared in table.c, next to their rows (docs/contributing.md).
 */
#ifndef TUNA_ALLTOALLV_H
#define TUNA_ALLTOALLV_H

#include "../select/tuna_select.h"

typedef int tuna_a2av_run_fn(const tuna_a2av_args *a);

/* A registry row: the algorithm, then how to run it. */
typedef struct tuna_a2av_algorithm {
    tuna_algorithm desc;
    tuna_a2av_run_fn *run;
} tuna_a2av_algorithm;

extern const tuna_a2av_algorithm tuna_a2av_table[];
extern const tuna_registry tuna_a2av_registry;

/* Run `row` on a (whose param holds the row's resolved values). */
static inline int tuna_a2av_run_row(const tuna_a2av_algorithm *row, tuna_a2av_args *a)
{
    a->info = &row->desc.info;
    return row->run(a);
}

/* Algorithms another one falls back to: hierarchical TuNA on unequal nodes runs flat TuNA
 * (same parameter names), vendor without the library's MPI_Alltoallv_c runs linear. */
int tuna_a2av_tuna(const tuna_a2av_args *a);
int tuna_a2av_linear(const tuna_a2av_args *a);

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
/* After a call that ran a candidate of auto's learning (ctx->learn_class): this rank's
 * seconds of it (rc: its outcome), and the next candidate into the reuse fields. */
void tuna_a2av_learn_end(tuna_ctx *ctx, double seconds, int rc);

/* Shared engines of several algorithms. */
int tuna_a2av_exchange_step(const tuna_a2av_args *a, int src, int dst, int tag);
int tuna_a2av_multipair_window(const tuna_a2av_args *a, bool poll, int tag);

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
