/*
 * The uniform all-to-all's own rows and models (issue 36): what only a uniform exchange
 * (tuna_a2av_args.uniform: every block of every rank the same, known size) can run or be
 * priced by. The alltoall table (table.c) names them next to the alltoallv rows it reuses.
 */
#ifndef TUNA_UNIFORM_ROWS_H
#define TUNA_UNIFORM_ROWS_H

#include "../alltoallv/alltoallv.h"

/* bruck-radix (bruck_radix.c): the classic Bruck all-to-all with radix "radix" in [2, P],
 * packing each round's blocks; a step form (tuna_a2av_step_fn). Requires a->uniform. */
tuna_a2av_step_fn tuna_a2a_bruck_radix_step;

/* Cost models (model.c; tuna_cost_fn) for uniform blocks: max = mean, no size metadata. */
/* bruck-radix: one rotation, a packed message per (digit, value) round, one inverse
 * rotation. */
double tuna_a2a_cost_bruck_radix(const tuna_profile *m, const tuna_select_input *in,
                                 const tuna_algorithm_info *info, const long *param);
/* tuna (parameters radix, block) without its metadata phases: the engine's known sizes. */
double tuna_a2a_cost_tuna(const tuna_profile *m, const tuna_select_input *in,
                          const tuna_algorithm_info *info, const long *param);
/* coalesced, staggered (radix, block) without the intra-node nor the inter-node sizes. */
double tuna_a2a_cost_coalesced(const tuna_profile *m, const tuna_select_input *in,
                               const tuna_algorithm_info *info, const long *param);
double tuna_a2a_cost_staggered(const tuna_profile *m, const tuna_select_input *in,
                               const tuna_algorithm_info *info, const long *param);

/* auto's candidates for bruck-radix (tuna_grid_fn): radix over [2, P]. */
void tuna_a2a_grid_bruck_radix(const tuna_select_input *in, const tuna_algorithm_info *info,
                               tuna_candidates *out);

/* Requests in flight per rank (tuna_inflight_fn). */
/* bruck-radix: one receive and one send per round. */
long tuna_a2a_inflight_bruck_radix(const tuna_select_input *in, const tuna_algorithm_info *info,
                                   const long *param);
/* tuna with known sizes: a batch's b data sends and b data receives, no size messages. */
long tuna_a2a_inflight_tuna(const tuna_select_input *in, const tuna_algorithm_info *info,
                            const long *param);
/* coalesced, staggered with known sizes: no size messages in either phase. */
long tuna_a2a_inflight_coalesced(const tuna_select_input *in, const tuna_algorithm_info *info,
                                 const long *param);
long tuna_a2a_inflight_staggered(const tuna_select_input *in, const tuna_algorithm_info *info,
                                 const long *param);

#endif /* TUNA_UNIFORM_ROWS_H */
