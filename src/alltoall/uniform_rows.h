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

/* mesh (mesh.c): the dimension-ordered exchange on a grid of `dims` dimensions, one phase
 * per dimension, zero-copy hvector messages; a step form. Requires a->uniform. */
tuna_a2av_step_fn tuna_a2a_mesh_step;
/* The most dimensions of a mesh: an int P has at most 30 prime factors. */
#define TUNA_A2A_MESH_MAX_DIMS 31
/* mesh's grid for P ranks and parameter dims: returns k, dims clamped to [1, the number of
 * prime factors of P] (0 for P = 1), and d[0..k) the sizes, each >= 2, largest first, of
 * the fewest messages sum(d_j - 1) (ties: the smaller largest factor): as balanced as P
 * allows. k = 1: d[0] = P. */
int tuna_a2a_mesh_shape(long P, long dims, int d[TUNA_A2A_MESH_MAX_DIMS]);
/* The number of prime factors of P with multiplicity: the most dimensions P allows. */
int tuna_a2a_mesh_max_dims(long P);

/* Cost models (model.c; tuna_cost_model) for uniform blocks: max = mean, no size metadata. */
/* bruck-radix: one rotation, a packed message per (digit, value) round, one inverse
 * rotation. */
tuna_cost_model tuna_a2a_cost_bruck_radix;
/* mesh: per phase j, d_j - 1 messages of P/d_j blocks in flight together, the own slots'
 * copy, and for strided slots the phase's two types and the library's gather and scatter. */
tuna_cost_model tuna_a2a_cost_mesh;
/* tuna (parameters radix, block) without its metadata phases: the engine's known sizes. */
tuna_cost_model tuna_a2a_cost_tuna;
/* coalesced, staggered (radix, block) without the intra-node nor the inter-node sizes. */
tuna_cost_model tuna_a2a_cost_coalesced, tuna_a2a_cost_staggered;

/* auto's candidates for bruck-radix (tuna_candidate_grid): radix over [2, P]. */
tuna_candidate_grid tuna_a2a_grid_bruck_radix;
/* auto's candidates for mesh: dims over [2, min(6, prime factors of P)]. */
tuna_candidate_grid tuna_a2a_grid_mesh;

/* Requests in flight per rank (tuna_inflight_bound). */
/* bruck-radix: one receive and one send per round. */
tuna_inflight_bound tuna_a2a_inflight_bruck_radix;
/* mesh: one receive and one send per peer of its largest dimension, 2 (max d_j - 1). */
tuna_inflight_bound tuna_a2a_inflight_mesh;
/* tuna with known sizes: a batch's b data sends and b data receives, no size messages. */
tuna_inflight_bound tuna_a2a_inflight_tuna;
/* coalesced, staggered with known sizes: no size messages in either phase. */
tuna_inflight_bound tuna_a2a_inflight_coalesced, tuna_a2a_inflight_staggered;

#endif /* TUNA_UNIFORM_ROWS_H */
