/*
 * The model of recursive multiplying with folding (docs/tuning.md): the exchange shape of the
 * allgather and allreduce recmul families and of the MPI library's small allreduce, on the
 * same phase cost as every model: n = bytes of one rank's block (gather) or of the vector
 * (reduce); reductions cost one pass over the reduced bytes at copy bandwidth.
 */
#include "tuna_select.h"

#include <math.h>

typedef struct cmodel {
    const tuna_profile *m;
    tuna_model_layout l;
} cmodel;

/* A phase to the ranks at distances d0, d0 + step, ..., d1 (every rank sends as much). */
static double ph(const cmodel *x, double msgs, double bytes, double phi, long d0, long d1,
                 long step)
{
    return tuna_model_phase_even(x->m, &x->l, msgs, bytes, phi, d0, d1, step);
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
tuna_model_fold tuna_model_fold_of(long P, long k)
{
    tuna_model_fold f = {.k = k < 2 ? 2 : (k > P ? P : k), .Qk = 1, .m = 0};
    while (f.Qk <= P / f.k) {
        f.Qk *= f.k;
        f.m++;
    }
    f.per_group = (double)P / (double)f.Qk;
    return f;
}

/* Rank distance of a leader's first partner at distance d groups (the others: multiples). */
long tuna_model_partners_step(const tuna_model_fold *f, long d)
{
    long s = (long)llround((double)d * f->per_group);
    return s < 1 ? 1 : s;
}

/* Mean cross-node fraction of a leader's k-1 partners at distance d groups. */
double tuna_model_partners_cross(const tuna_model_layout *l, const tuna_model_fold *f, long d)
{
    double phi = 0;
    for (long z = 1; z < f->k; z++)
        phi += tuna_model_cross(l, (long)llround(z * d * f->per_group));
    return phi / (double)(f->k - 1);
}

static double recmul(const cmodel *x, long k_in, double n, bool gather)
{
    const long P = x->l.P;
    const tuna_model_fold f = tuna_model_fold_of(P, k_in);
    const long k = f.k, Qk = f.Qk;
    const int m = f.m;
    const double per_group = f.per_group;
    double t = 0, held = per_group; /* allgather: blocks a leader holds */
    long d = 1;
    for (int r = 0; r < m; r++, d *= k) {
        double phi = tuna_model_partners_cross(&x->l, &f, d);
        long s = tuna_model_partners_step(&f, d);
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

double tuna_model_recmul(const tuna_profile *m, const tuna_model_layout *l, long k, double n,
                         bool gather)
{
    const cmodel x = {.m = m, .l = *l};
    return recmul(&x, k, n, gather);
}

double tuna_model_recmul_of(const tuna_profile *m, const tuna_select_input *in, long k,
                            bool gather)
{
    if (in->P <= 1 || in->bytes <= 0)
        return 0;
    const tuna_model_layout l = tuna_model_layout_of(in);
    return tuna_model_recmul(m, &l, k, in->bytes, gather);
}
