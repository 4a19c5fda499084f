/*
 * Cost models of the allgather algorithms (docs/tuning.md), named by the rows of table.c, on
 * the selector's phase model: n = bytes of one rank's block (in->bytes).
 */
#include "allgather.h"

/* false when nothing moves (P = 1 or empty blocks): every algorithm costs 0. */
static bool moves(const tuna_select_input *in)
{
    return in->P > 1 && in->bytes > 0;
}

double tuna_ag_cost_ring(const tuna_profile *m, const tuna_select_input *in,
                         const tuna_algorithm_info *info, const long *param)
{
    (void)info;
    (void)param;
    if (!moves(in))
        return 0;
    const tuna_model_layout l = tuna_model_layout_of(in);
    return (double)(in->P - 1) *
           tuna_model_phase_even(m, &l, 1, in->bytes, tuna_model_cross(&l, 1), 1, 1, 1);
}

double tuna_ag_cost_kring(const tuna_profile *m, const tuna_select_input *in,
                          const tuna_algorithm_info *info, const long *param)
{
    if (!moves(in))
        return 0;
    const tuna_model_layout l = tuna_model_layout_of(in);
    const double n = in->bytes;
    long g = tuna_coll_kring_group(in->P, tuna_param_get(info, param, "k")), G = in->P / g;
    return (double)(G - 1) * tuna_model_phase_even(m, &l, 1, n, tuna_model_cross(&l, g), g, g, 1) +
           (double)(g - 1) *
               tuna_model_phase_even(m, &l, 1, (double)G * n, tuna_model_cross(&l, 1), 1, 1, 1);
}

double tuna_ag_cost_recursive_doubling(const tuna_profile *m, const tuna_select_input *in,
                                       const tuna_algorithm_info *info, const long *param)
{
    (void)info;
    (void)param;
    return tuna_model_recmul_of(m, in, 2, true);
}

double tuna_ag_cost_recmul(const tuna_profile *m, const tuna_select_input *in,
                           const tuna_algorithm_info *info, const long *param)
{
    return tuna_model_recmul_of(m, in, tuna_param_get(info, param, "k"), true);
}

/* recmul plus the final in-place block permutation. */
double tuna_ag_cost_recmul_permuted(const tuna_profile *m, const tuna_select_input *in,
                                    const tuna_algorithm_info *info, const long *param)
{
    if (!moves(in))
        return 0;
    return tuna_model_recmul_of(m, in, tuna_param_get(info, param, "k"), true) +
           (double)in->P * in->bytes / m->copy_bandwidth;
}
