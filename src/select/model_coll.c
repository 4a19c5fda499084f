/*
 * Cost model of the allgather and allreduce algorithms (docs/tuning.md), on the
 * same phase cost as alltoallv: n = bytes of one rank's block (allgather) or of
 * the vector (allreduce); reductions cost one pass over the reduced bytes at
 * copy bandwidth.
 */
#include "tuna_coll.h"
#include "tuna_select.h"

#include <math.h>
#include <string.h>

typedef struct cmodel {
    const tuna_profile *m;
    tuna_model_layout l;
} cmodel;

/* A phase to the ranks at distances d0, d0 + step, ..., d1 (every rank sends as much). */
static double ph(const cmodel *x, double msgs, double bytes, double phi, long d0, long d1,
                 long step)
{
    return tuna_model_phase(x->m, &x->l, msgs, bytes, bytes, phi, d0, d1, step);
}

static double cross(const cmodel *x, long d)
{
    return tuna_model_cross(&x->l, d);
}

/*
 * Recursive multiplying with radix k over P ranks folded into Qk = k^m groups
 * (tuna_fold): m rounds among leaders with k-1 partners at distance k^r groups,
 * plus fold-in and fold-out phases when Qk < P. `gather`: messages carry the
 * blocks gathered so far (allgather); otherwise the whole vector and a reduction.
 */
/* The folding of tuna_fold: k clamped to [2, P], Qk = k^m groups of P/Qk ranks on average. */
typedef struct fold_shape {
    long k, Qk;
    int m;
    double per_group;
} fold_shape;

static fold_shape fold_shape_of(long P, long k)
{
    fold_shape f = {.k = k < 2 ? 2 : (k > P ? P : k), .Qk = 1, .m = 0};
    while (f.Qk <= P / f.k) {
        f.Qk *= f.k;
        f.m++;
    }
    f.per_group = (double)P / (double)f.Qk;
    return f;
}

/* Rank distance of a leader's first partner at distance d groups (the others: multiples). */
static long partners_step(const fold_shape *f, long d)
{
    long s = (long)llround((double)d * f->per_group);
    return s < 1 ? 1 : s;
}

/* Mean cross-node fraction of a leader's k-1 partners at distance d groups. */
static double partners_cross(const cmodel *x, const fold_shape *f, long d)
{
    double phi = 0;
    for (long z = 1; z < f->k; z++)
        phi += cross(x, (long)llround(z * d * f->per_group));
    return phi / (double)(f->k - 1);
}

static double recmul(const cmodel *x, long k_in, double n, bool gather)
{
    const long P = x->l.P;
    const fold_shape f = fold_shape_of(P, k_in);
    const long k = f.k, Qk = f.Qk;
    const int m = f.m;
    const double per_group = f.per_group;
    double t = 0, held = per_group; /* allgather: blocks a leader holds */
    long d = 1;
    for (int r = 0; r < m; r++, d *= k) {
        double phi = partners_cross(x, &f, d);
        long s = partners_step(&f, d);
        if (gather) {
            t += ph(x, (double)(k - 1), (double)(k - 1) * held * n, phi, s, (k - 1) * s, s);
            held *= (double)k;
        } else {
            t += ph(x, (double)(k - 1), (double)(k - 1) * n, phi, s, (k - 1) * s, s) +
                 (double)(k - 1) * n / x->m->copy_bandwidth;
        }
    }
    if (Qk < P) {
        double phi = cross(x, 1);
        t += ph(x, per_group, per_group * n, phi, 1, 1, 1);                 /* fold in */
        t += ph(x, per_group, per_group * (gather ? P * n : n), phi, 1, 1, 1); /* fold out */
        if (!gather)
            t += per_group * n / x->m->copy_bandwidth;
    }
    return t;
}

/*
 * recmul-permuted allreduce: reduce-scatter rounds at distances 1, k, k^2, ...
 * each sending and reducing (k-1) ranges of n/k^(r+1), then the allgather rounds
 * moving the same ranges back; fold-in/out of whole vectors when Qk < P.
 */
static double recmul_permuted_allreduce(const cmodel *x, long k_in, double n)
{
    const fold_shape f = fold_shape_of(x->l.P, k_in);
    const long k = f.k;
    const double per_group = f.per_group;
    double t = 0, part = n;
    long d = 1;
    for (int r = 0; r < f.m; r++, d *= k) {
        double phi = partners_cross(x, &f, d);
        long s = partners_step(&f, d);
        part /= (double)k;
        double bytes = (double)(k - 1) * part;
        t += 2.0 * ph(x, (double)(k - 1), bytes, phi, s, (k - 1) * s, s) +
             bytes / x->m->copy_bandwidth;
    }
    if (f.Qk < x->l.P) {
        double phi = cross(x, 1);
        t += 2.0 * ph(x, per_group, per_group * n, phi, 1, 1, 1) +
             per_group * n / x->m->copy_bandwidth;
    }
    return t;
}

double tuna_model_allgather(const tuna_profile *m, const tuna_select_input *in, double n,
                            int alg, const long *param)
{
    if (alg < 0 || alg >= tuna_ag_table_len)
        return -1;
    const char *name = tuna_ag_table[alg].info.name;
    cmodel x = {.m = m, .l = tuna_model_layout_of(in)};
    const long P = in->P;
    if (strcmp(name, "vendor") == 0 || strcmp(name, "auto") == 0)
        return -1;
    if (P <= 1 || n <= 0)
        return 0;
    if (strcmp(name, "ring") == 0)
        return (double)(P - 1) * ph(&x, 1, n, cross(&x, 1), 1, 1, 1);
    if (strcmp(name, "kring") == 0) {
        long g = tuna_coll_kring_group((int)P, param[0]), G = P / g;
        return (double)(G - 1) * ph(&x, 1, n, cross(&x, g), g, g, 1) +
               (double)(g - 1) * ph(&x, 1, (double)G * n, cross(&x, 1), 1, 1, 1);
    }
    if (strcmp(name, "recursive-doubling") == 0)
        return recmul(&x, 2, n, true);
    if (strcmp(name, "recmul") == 0)
        return recmul(&x, param[0], n, true);
    if (strcmp(name, "recmul-permuted") == 0) /* + the final in-place block permutation */
        return recmul(&x, param[0], n, true) + (double)P * n / m->copy_bandwidth;
    return -1;
}

double tuna_model_allreduce(const tuna_profile *m, const tuna_select_input *in, double n,
                            bool commute, int alg, const long *param)
{
    if (alg < 0 || alg >= tuna_ar_table_len)
        return -1;
    const char *name = tuna_ar_table[alg].info.name;
    cmodel x = {.m = m, .l = tuna_model_layout_of(in)};
    const long P = in->P;
    if (strcmp(name, "vendor") == 0 || strcmp(name, "auto") == 0)
        return -1;
    if (P <= 1 || n <= 0)
        return 0;
    const double cb = m->copy_bandwidth;
    bool ring_family = strcmp(name, "ring") == 0 || strcmp(name, "kring") == 0;
    if (ring_family && !commute) /* they would run recursive-doubling: not a candidate */
        return -1;
    if (strcmp(name, "recursive-doubling") == 0)
        return recmul(&x, 2, n, false);
    if (strcmp(name, "ring") == 0)
        return 2.0 * (double)(P - 1) * ph(&x, 1, n / (double)P, cross(&x, 1), 1, 1, 1) +
               (double)(P - 1) * n / (double)P / cb;
    if (strcmp(name, "kring") == 0) {
        long g = tuna_coll_kring_group((int)P, param[0]), G = P / g;
        return 2.0 * (double)(g - 1) * ph(&x, 1, n / (double)g, cross(&x, 1), 1, 1, 1) +
               2.0 * (double)(G - 1) * ph(&x, 1, n / (double)P, cross(&x, g), g, g, 1) +
               (double)(P - 1) * n / (double)P / cb;
    }
    if (strcmp(name, "recmul") == 0)
        return recmul(&x, param[0], n, false);
    if (strcmp(name, "recmul-permuted") == 0)
        return recmul_permuted_allreduce(&x, param[0], n);
    return -1;
}
