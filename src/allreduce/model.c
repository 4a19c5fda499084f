/*
 * Cost models of the allreduce algorithms (docs/tuning.md), named by the rows of table.c, on
 * the selector's phase model: n = bytes of the vector (in->bytes); reductions cost one pass
 * over the reduced bytes at copy bandwidth.
 */
#include "allreduce.h"

/* false when nothing moves (P = 1 or an empty vector): every algorithm costs 0. */
static bool moves(const tuna_select_input *in)
{
    return in->P > 1 && in->bytes > 0;
}

double tuna_ar_cost_recursive_doubling(const tuna_profile *m, const tuna_select_input *in,
                                       const tuna_algorithm_info *info, const long *param)
{
    (void)info;
    (void)param;
    return tuna_model_recmul_of(m, in, 2, false);
}

double tuna_ar_cost_ring(const tuna_profile *m, const tuna_select_input *in,
                         const tuna_algorithm_info *info, const long *param)
{
    (void)info;
    (void)param;
    if (!moves(in))
        return 0;
    if (!in->commute) /* it would run recursive-doubling: not a candidate */
        return -1;
    const tuna_model_layout l = tuna_model_layout_of(in);
    const double n = in->bytes, P = in->P;
    return 2.0 * (P - 1) *
               tuna_model_phase_even(m, &l, 1, n / P, tuna_model_cross(&l, 1), 1, 1, 1) +
           (P - 1) * n / P / m->copy_bandwidth;
}

double tuna_ar_cost_kring(const tuna_profile *m, const tuna_select_input *in,
                          const tuna_algorithm_info *info, const long *param)
{
    if (!moves(in))
        return 0;
    if (!in->commute) /* it would run recursive-doubling: not a candidate */
        return -1;
    const tuna_model_layout l = tuna_model_layout_of(in);
    const double n = in->bytes;
    const long P = in->P;
    long g = tuna_coll_kring_group((int)P, tuna_param_get(info, param, "k")), G = P / g;
    return 2.0 * (double)(g - 1) *
               tuna_model_phase_even(m, &l, 1, n / (double)g, tuna_model_cross(&l, 1), 1, 1, 1) +
           2.0 * (double)(G - 1) *
               tuna_model_phase_even(m, &l, 1, n / (double)P, tuna_model_cross(&l, g), g, g, 1) +
           (double)(P - 1) * n / (double)P / m->copy_bandwidth;
}

double tuna_ar_cost_recmul(const tuna_profile *m, const tuna_select_input *in,
                           const tuna_algorithm_info *info, const long *param)
{
    return tuna_model_recmul_of(m, in, tuna_param_get(info, param, "k"), false);
}

/*
 * recmul-permuted: reduce-scatter rounds at distances 1, k, k^2, ... each sending and
 * reducing (k-1) ranges of n/k^(r+1), then the allgather rounds moving the same ranges
 * back; fold-in/out of whole vectors when Qk < P.
 */
double tuna_ar_cost_recmul_permuted(const tuna_profile *m, const tuna_select_input *in,
                                    const tuna_algorithm_info *info, const long *param)
{
    if (!moves(in))
        return 0;
    const tuna_model_layout l = tuna_model_layout_of(in);
    const double n = in->bytes;
    const tuna_model_fold f = tuna_model_fold_of(l.P, tuna_param_get(info, param, "k"));
    const long k = f.k;
    const double per_group = f.per_group;
    double t = 0, part = n;
    long d = 1;
    for (int r = 0; r < f.m; r++, d *= k) {
        double phi = tuna_model_partners_cross(&l, &f, d);
        long s = tuna_model_partners_step(&f, d);
        part /= (double)k;
        double bytes = (double)(k - 1) * part;
        t += 2.0 * tuna_model_phase_even(m, &l, (double)(k - 1), bytes, phi, s, (k - 1) * s, s) +
             bytes / m->copy_bandwidth;
    }
    if (f.Qk < l.P) {
        double phi = tuna_model_cross(&l, 1);
        t += 2.0 * tuna_model_phase_even(m, &l, per_group, per_group * n, phi, 1, 1, 1) +
             per_group * n / m->copy_bandwidth;
    }
    return t;
}
