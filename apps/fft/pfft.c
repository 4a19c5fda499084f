/* The distributed FFT engine of tuna-fft (see pfft.h). */
#define _POSIX_C_SOURCE 200809L
#include "pfft.h"
#include "app_common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void split(long n, int parts, int i, int blocks, long *lo, long *cnt)
{
    if (blocks) { /* FFTW: ceil(n/parts) per piece, the last ones short or empty */
        long b = (n + parts - 1) / parts, s = (long)i * b;
        if (s > n)
            s = n;
        *lo = s;
        *cnt = n - s < b ? n - s : b;
    } else { /* HeFFTe: sizes differ by at most one */
        *lo = n * i / parts;
        *cnt = n * (i + 1) / parts - *lo;
    }
}

void pfft_box_of(const pfft_layout *lay, const long ext[3], int rank, pfft_box *b)
{
    for (int d = 0; d < 3; d++)
        split(ext[d], lay->parts[d], (rank / lay->stride[d]) % lay->parts[d], lay->blocks,
              &b->lo[d], &b->n[d]);
}

static long box_elems(const pfft_box *b)
{
    return b->n[0] * b->n[1] * b->n[2];
}

static void box_intersect(const pfft_box *a, const pfft_box *b, pfft_box *out)
{
    for (int d = 0; d < 3; d++) {
        long lo = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        long ha = a->lo[d] + a->n[d], hb = b->lo[d] + b->n[d];
        long hi = ha < hb ? ha : hb;
        out->lo[d] = lo;
        out->n[d] = hi > lo ? hi - lo : 0;
    }
}

/* Copies region r (inside box b) between b's row-major storage and a packed array. */
static void region_copy(char *store, const pfft_box *b, char *packed, const pfft_box *r,
                        size_t esz, int to_packed)
{
    if (!box_elems(r))
        return;
    size_t run = (size_t)r->n[2] * esz;
    for (long x = 0; x < r->n[0]; x++)
        for (long y = 0; y < r->n[1]; y++, packed += run) {
            long off = ((x + r->lo[0] - b->lo[0]) * b->n[1] + (y + r->lo[1] - b->lo[1])) *
                           b->n[2] +
                       (r->lo[2] - b->lo[2]);
            char *s = store + (size_t)off * esz;
            if (to_packed)
                memcpy(packed, s, run);
            else
                memcpy(s, packed, run);
        }
}

static void charge(const pfft *f, double c0)
{
    if (f->cfg.charge)
        app_charge(c0);
}

/* The 2-D grid like heffte::make_procgrid: the factor pair closest to square, Pr <= Pc (for a
 * cubic box, the pencils of least surface). */
static void default_grid(int P, int grid[2])
{
    int r = 1;
    for (int i = 1; (long)i * i <= P; i++)
        if (P % i == 0)
            r = i;
    grid[0] = r, grid[1] = P / r;
}

/* The input bricks like heffte's proc_setup_min_surface: the 3-D factorisation of P whose
 * local box has the least surface (ties: the first found, the largest pieces in dim 0). */
static void default_brick(int P, const long n[3], int b[3])
{
    double best = -1;
    for (int i = P; i >= 1; i--) {
        if (P % i)
            continue;
        for (int j = P / i; j >= 1; j--) {
            if ((P / i) % j)
                continue;
            int k = P / i / j;
            double e0 = (double)(n[0] + i - 1) / i, e1 = (double)(n[1] + j - 1) / j,
                   e2 = (double)(n[2] + k - 1) / k;
            double s = e0 * e1 + e1 * e2 + e0 * e2;
            if (best < 0 || s < best)
                best = s, b[0] = i, b[1] = j, b[2] = k;
        }
    }
}

static double *real_buf(pfft *f, int s)
{
    return s == 0 ? f->rin : f->rpen;
}

static void *stage_buf(pfft *f, int s, int real)
{
    return real ? (void *)real_buf(f, s) : (void *)f->data;
}

static const pfft_box *stage_box(const pfft *f, int s, int real)
{
    return real ? &f->st[s].rbox : &f->st[s].cbox;
}

/* FFTW's iodims of a row-major box: the transformed dim d and the other two as loops. */
static void iodims(const pfft_box *in, const pfft_box *out, int d, fftw_iodim *dim,
                   fftw_iodim loops[2])
{
    long si[3] = {in->n[1] * in->n[2], in->n[2], 1}, so[3] = {out->n[1] * out->n[2], out->n[2], 1};
    dim->n = (int)in->n[d], dim->is = (int)si[d], dim->os = (int)so[d];
    for (int e = 0, k = 0; e < 3; e++)
        if (e != d)
            loops[k].n = (int)in->n[e], loops[k].is = (int)si[e], loops[k++].os = (int)so[e];
}

static int make_fftw_plans(pfft *f, int s)
{
    pfft_stage *st = &f->st[s];
    for (int j = 0; j < st->nfft; j++) {
        int d = st->dims[j];
        fftw_iodim dim, loops[2];
        if (f->r2c_stage == s && j == 0) {
            if (!box_elems(&st->rbox))
                continue;
            double *r = real_buf(f, s);
            iodims(&st->rbox, &st->cbox, d, &dim, loops);
            st->fwd[j] = fftw_plan_guru_dft_r2c(1, &dim, 2, loops, r, f->data, FFTW_ESTIMATE);
            /* c2r: from the complex box back to the real one (logical length n[d]) */
            iodims(&st->cbox, &st->rbox, d, &dim, loops);
            dim.n = (int)st->rbox.n[d];
            st->bwd[j] = fftw_plan_guru_dft_c2r(1, &dim, 2, loops, f->data, r, FFTW_ESTIMATE);
        } else {
            if (!box_elems(&st->cbox))
                continue;
            iodims(&st->cbox, &st->cbox, d, &dim, loops);
            st->fwd[j] = fftw_plan_guru_dft(1, &dim, 2, loops, f->data, f->data, FFTW_FORWARD,
                                            FFTW_ESTIMATE);
            st->bwd[j] = fftw_plan_guru_dft(1, &dim, 2, loops, f->data, f->data,
                                            FFTW_BACKWARD, FFTW_ESTIMATE);
        }
        if (!st->fwd[j] || !st->bwd[j])
            return -1;
    }
    return 0;
}

/* Reshape t (stage t -> t + 1) inside comm: what goes to and comes from each member.
 * Collective over f->comm whatever happens (no early return between its collectives). */
static int reshape_init(pfft *f, int t, MPI_Comm comm, int own, const char *name)
{
    pfft_reshape *rs = &f->rs[t];
    rs->comm = comm, rs->own_comm = own;
    rs->real = f->r2c_stage > t;
    snprintf(rs->name, sizeof rs->name, "%s", name);
    MPI_Comm_size(comm, &rs->q);
    int q = rs->q;
    int *members = malloc((size_t)q * sizeof *members);
    rs->cnt = malloc(4 * (size_t)q * sizeof *rs->cnt);
    rs->box = malloc(2 * (size_t)q * sizeof *rs->box);
    int ok = members && rs->cnt && rs->box;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, f->comm);
    if (!ok) {
        free(members);
        return -1;
    }
    MPI_Allgather(&f->me, 1, MPI_INT, members, 1, MPI_INT, comm);
    const long *ext = rs->real ? f->cfg.n : f->cext;
    const pfft_box *from = stage_box(f, t, rs->real), *to = stage_box(f, t + 1, rs->real);
    long ssum = 0, rsum = 0;
    int rc = 0;
    for (int i = 0; i < q && !rc; i++) {
        pfft_box peer_from, peer_to;
        pfft_box_of(&f->st[t].lay, ext, members[i], &peer_from);
        pfft_box_of(&f->st[t + 1].lay, ext, members[i], &peer_to);
        box_intersect(from, &peer_to, &rs->box[i]);
        box_intersect(&peer_from, to, &rs->box[q + i]);
        long sc = box_elems(&rs->box[i]);
        long rcv = box_elems(&rs->box[q + i]);
        if (ssum > INT_MAX - sc || rsum > INT_MAX - rcv) {
            rc = -2; /* tuna's counts and displacements are int */
            break;
        }
        rs->cnt[i] = (int)sc, rs->cnt[q + i] = (int)ssum;
        rs->cnt[2 * q + i] = (int)rcv, rs->cnt[3 * q + i] = (int)rsum;
        ssum += sc, rsum += rcv;
    }
    free(members);
    /* Every element must reach a member of this communicator: a grid bug otherwise. */
    if (!rc && (ssum != box_elems(from) || rsum != box_elems(to)))
        rc = -3;
    /* Uniform: c elements to and from every member, packed in member order, on every member
     * with the same c, as MPI_Alltoall's single count demands; so agreed over comm, once. */
    int local = !rc, c = local ? rs->cnt[0] : 0; /* cnt is partly unset after rc = -2 */
    for (int i = 0; local && i < q; i++)
        local = rs->cnt[i] == c && rs->cnt[q + i] == (long)i * c && rs->cnt[2 * q + i] == c &&
                rs->cnt[3 * q + i] == (long)i * c;
    int v[3] = {!local, c, -c};
    MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MAX, comm);
    rs->uniform = !v[0] && v[1] == -v[2];
    rs->count = c;
    size_t esz = rs->real ? sizeof(double) : sizeof(fftw_complex);
    rs->bytes = (double)ssum * (double)esz;
    MPI_Allreduce(MPI_IN_PLACE, &rs->bytes, 1, MPI_DOUBLE, MPI_SUM, f->comm);
    return rc;
}

static int set_stages(pfft *f, char *err, size_t errlen)
{
    pfft_config *c = &f->cfg;
    int P = f->P;
    if (!c->pencil) {
        pfft_stage *a = &f->st[0], *b = &f->st[1];
        f->nstages = 2;
        a->lay = (pfft_layout){{P, 1, 1}, {1, 1, 1}, 1};
        b->lay = (pfft_layout){{1, P, 1}, {1, 1, 1}, 1};
        a->name = "slab-x", b->name = "slab-y";
        /* 3-D: dims 2 then 1 local in the first slab (r2c on the last, contiguous, one);
         * 2-D: dim 1 only (dim 2 has length 1) */
        a->nfft = c->nd == 3 ? 2 : 1;
        a->dims[0] = c->nd == 3 ? 2 : 1, a->dims[1] = 1;
        b->nfft = 1, b->dims[0] = 0;
        f->r2c_stage = c->r2c ? 0 : -1;
        return 0;
    }
    if (c->nd != 3) {
        snprintf(err, errlen, "the pencil decomposition needs a 3-D grid (--dims N0xN1xN2)");
        return -1;
    }
    if (!c->grid[0])
        default_grid(P, c->grid);
    if ((long)c->grid[0] * c->grid[1] != P) {
        snprintf(err, errlen, "--grid %dx%d: %d ranks, the job has %d", c->grid[0], c->grid[1],
                 c->grid[0] * c->grid[1], P);
        return -1;
    }
    int Pr = c->grid[0], Pc = c->grid[1], *b = c->brick, s0 = 0;
    if (c->pencil_input) { /* the input already in x-pencils: no brick stage */
        b[0] = b[1] = b[2] = 0;
    } else {
        default_brick(P, c->n, b);
        f->st[0].lay = (pfft_layout){{b[0], b[1], b[2]}, {b[1] * b[2], b[2], 1}, 0};
        f->st[0].name = "brick";
        s0 = 1;
    }
    f->nstages = s0 + 3;
    f->st[s0].lay = (pfft_layout){{1, Pr, Pc}, {1, Pc, 1}, 0};
    f->st[s0 + 1].lay = (pfft_layout){{Pr, 1, Pc}, {Pc, 1, 1}, 0};
    f->st[s0 + 2].lay = (pfft_layout){{Pr, Pc, 1}, {Pc, 1, 1}, 0};
    const char *names[3] = {"x-pencil", "y-pencil", "z-pencil"};
    for (int d = 0; d < 3; d++) {
        f->st[s0 + d].name = names[d];
        f->st[s0 + d].nfft = 1;
        f->st[s0 + d].dims[0] = d;
    }
    f->r2c_stage = c->r2c ? s0 : -1;
    return 0;
}

int pfft_init(pfft *f, const pfft_config *cfg, MPI_Comm comm, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->cfg = *cfg;
    f->comm = comm;
    MPI_Comm_rank(comm, &f->me);
    MPI_Comm_size(comm, &f->P);
    if (set_stages(f, err, errlen))
        return -1;
    for (int d = 0; d < 3; d++)
        f->cext[d] = f->cfg.n[d];
    if (f->r2c_stage >= 0) {
        int h = f->st[f->r2c_stage].dims[0];
        f->cext[h] = f->cfg.n[h] / 2 + 1;
    }
    long cmax = 1;
    for (int s = 0; s < f->nstages; s++) {
        pfft_box_of(&f->st[s].lay, f->cfg.n, f->me, &f->st[s].rbox);
        pfft_box_of(&f->st[s].lay, f->cext, f->me, &f->st[s].cbox);
        /* FFTW's guru dims and tuna's counts are int */
        if (box_elems(&f->st[s].rbox) > INT_MAX)
            cmax = -1;
        else if (cmax > 0 && box_elems(&f->st[s].cbox) > cmax)
            cmax = box_elems(&f->st[s].cbox);
    }
    int ok = cmax > 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        snprintf(err, errlen, "grid %ldx%ldx%ld: a rank's part exceeds INT_MAX elements at P=%d",
                 f->cfg.n[0], f->cfg.n[1], f->cfg.n[2], f->P);
        return -1;
    }
    /* Communicators: the whole one for slabs and bricks, a column of the grid (same c) for
     * x -> y, a row (same r) for y -> z. */
    int rc = 0;
    if (!f->cfg.pencil) {
        rc = reshape_init(f, 0, comm, 0, "x-y");
    } else {
        int Pc = f->cfg.grid[1];
        MPI_Comm col, row;
        MPI_Comm_split(comm, f->me % Pc, f->me / Pc, &col);
        MPI_Comm_split(comm, f->me / Pc, f->me % Pc, &row);
        int s0 = f->cfg.pencil_input ? 0 : 1;
        if (s0)
            rc = reshape_init(f, 0, comm, 0, "brick-x");
        int rc1 = reshape_init(f, s0, col, 1, "x-y");
        int rc2 = reshape_init(f, s0 + 1, row, 1, "y-z");
        rc = rc ? rc : rc1 ? rc1 : rc2;
    }
    size_t xbytes = 16, rin = 1, rpen = 1;
    for (int t = 0; t < f->nstages - 1; t++) {
        pfft_reshape *rs = &f->rs[t];
        size_t esz = rs->real ? sizeof(double) : sizeof(fftw_complex);
        for (int half = 0; rs->cnt && half < 2; half++) {
            size_t sum = 0;
            for (int i = 0; i < rs->q; i++)
                sum += (size_t)rs->cnt[2 * half * rs->q + i];
            if (sum * esz > xbytes)
                xbytes = sum * esz;
        }
    }
    if (f->r2c_stage >= 0) {
        rin += (size_t)box_elems(&f->st[0].rbox);
        if (f->r2c_stage > 0)
            rpen += (size_t)box_elems(&f->st[f->r2c_stage].rbox);
    }
    f->data = fftw_malloc((size_t)cmax * sizeof(fftw_complex));
    f->sbuf = fftw_malloc(xbytes);
    f->rbuf = fftw_malloc(xbytes);
    if (f->r2c_stage >= 0) {
        f->rin = fftw_malloc(rin * sizeof(double));
        f->rpen = f->r2c_stage > 0 ? fftw_malloc(rpen * sizeof(double)) : f->rin;
    }
    ok = rc == 0 && f->data && f->sbuf && f->rbuf && (f->r2c_stage < 0 || (f->rin && f->rpen));
    for (int s = 0; ok && s < f->nstages; s++)
        if (make_fftw_plans(f, s))
            ok = 0;
    int why = ok ? 0 : rc == -2 ? 2 : rc == -3 ? 3 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &why, 1, MPI_INT, MPI_MAX, comm);
    if (why) {
        snprintf(err, errlen, "%s", why == 2   ? "a rank's transpose exceeds INT_MAX elements"
                                    : why == 3 ? "internal error: the layouts do not match"
                                               : "out of memory or no FFTW plan");
        pfft_free(f);
        return -1;
    }
    int nt = f->nstages - 1, ur[PFFT_MAX_STAGES - 1];
    for (int t = 0; t < nt; t++)
        ur[t] = f->rs[t].uniform;
    MPI_Allreduce(MPI_IN_PLACE, ur, nt, MPI_INT, MPI_SUM, comm);
    for (int t = 0; t < nt; t++)
        f->rs[t].uniform_ranks = ur[t];
    return 0;
}

void pfft_free(pfft *f)
{
    for (int s = 0; s < f->nstages; s++)
        for (int j = 0; j < 2; j++) {
            if (f->st[s].fwd[j])
                fftw_destroy_plan(f->st[s].fwd[j]);
            if (f->st[s].bwd[j])
                fftw_destroy_plan(f->st[s].bwd[j]);
        }
    for (int t = 0; t < f->nstages - 1; t++) {
        if (f->rs[t].own_comm && f->rs[t].comm != MPI_COMM_NULL)
            MPI_Comm_free(&f->rs[t].comm);
        free(f->rs[t].cnt);
        free(f->rs[t].box);
    }
    if (f->rpen != f->rin)
        fftw_free(f->rpen);
    fftw_free(f->rin);
    fftw_free(f->data);
    fftw_free(f->sbuf);
    fftw_free(f->rbuf);
    memset(f, 0, sizeof *f);
}

void *pfft_input(pfft *f, size_t *elems, size_t *elem_size)
{
    int real = f->r2c_stage >= 0;
    *elems = (size_t)box_elems(stage_box(f, 0, real));
    *elem_size = real ? sizeof(double) : sizeof(fftw_complex);
    return stage_buf(f, 0, real);
}

fftw_complex *pfft_output(pfft *f, size_t *elems)
{
    *elems = (size_t)box_elems(&f->st[f->nstages - 1].cbox);
    return f->data;
}

/* Reshape t forward (stage t -> t+1) or backward: pack, all-to-all, unpack. */
static int reshape_run(pfft *f, int t, int forward, const tuna_options *opt,
                       const tuna_options *uopt, char *err, size_t errlen)
{
    pfft_reshape *rs = &f->rs[t];
    int q = rs->q, real = rs->real;
    size_t esz = real ? sizeof(double) : sizeof(fftw_complex);
    MPI_Datatype type = real ? MPI_DOUBLE : MPI_C_DOUBLE_COMPLEX;
    int src = forward ? t : t + 1, dst = forward ? t + 1 : t;
    const pfft_box *sbox = rs->box + (forward ? 0 : q), *rbox = rs->box + (forward ? q : 0);
    const int *scnt = rs->cnt + (forward ? 0 : 2 * q), *sdsp = scnt + q;
    const int *rcnt = rs->cnt + (forward ? 2 * q : 0), *rdsp = rcnt + q;
    double t0 = app_now(), c0 = app_cpu_now();
    for (int i = 0; i < q; i++)
        region_copy(stage_buf(f, src, real), stage_box(f, src, real),
                    (char *)f->sbuf + (size_t)sdsp[i] * esz, &sbox[i], esz, 1);
    charge(f, c0);
    double t1 = app_now();
    int rc, a2a;
    const pfft_plan *plan = f->plans ? &f->plans[2 * t + !forward] : NULL;
    if (plan) {
        a2a = plan->alltoall;
        rc = tuna_start(plan->plan);
        if (rc == MPI_SUCCESS)
            rc = tuna_wait(plan->plan);
    } else if ((a2a = rs->uniform && uopt)) {
        rc = tuna_alltoall(f->sbuf, rs->count, type, f->rbuf, rs->count, type, rs->comm, uopt);
    } else if (opt) {
        rc = tuna_alltoallv(f->sbuf, scnt, sdsp, type, f->rbuf, rcnt, rdsp, type, rs->comm, opt);
    } else {
        rc = MPI_ERR_ARG; /* agreed: uniform is the same on every member */
    }
    rs->calls[a2a]++;
    double t2 = app_now();
    c0 = app_cpu_now();
    for (int i = 0; i < q; i++)
        region_copy(stage_buf(f, dst, real), stage_box(f, dst, real),
                    (char *)f->rbuf + (size_t)rdsp[i] * esz, &rbox[i], esz, 0);
    charge(f, c0);
    rs->t_a2a += t2 - t1;
    f->t_transpose += app_now() - t0;
    if (rc != MPI_SUCCESS) {
        snprintf(err, errlen, "%s (%s): %s", a2a ? "tuna_alltoall" : "tuna_alltoallv", rs->name,
                 opt || a2a ? tuna_error_string(rc)
                            : "an alltoall-only algorithm on a non-uniform reshape");
        return -1;
    }
    return 0;
}

static void run_fftw(pfft *f, fftw_plan p)
{
    double t0 = app_now(), c0 = app_cpu_now();
    if (p)
        fftw_execute(p);
    charge(f, c0);
    f->t_fft += app_now() - t0;
}

int pfft_forward(pfft *f, const tuna_options *opt, const tuna_options *uopt, char *err,
                 size_t errlen)
{
    int rc = 0;
    for (int s = 0; s < f->nstages; s++) {
        if (s > 0 && reshape_run(f, s - 1, 1, opt, uopt, err, errlen))
            rc = -1; /* keep going: every peer expects every reshape */
        for (int j = 0; j < f->st[s].nfft; j++)
            run_fftw(f, f->st[s].fwd[j]);
    }
    return rc;
}

int pfft_backward(pfft *f, const tuna_options *opt, const tuna_options *uopt, char *err,
                  size_t errlen)
{
    int rc = 0;
    for (int s = f->nstages - 1; s >= 0; s--) {
        for (int j = f->st[s].nfft - 1; j >= 0; j--)
            run_fftw(f, f->st[s].bwd[j]);
        if (s > 0 && reshape_run(f, s - 1, 0, opt, uopt, err, errlen))
            rc = -1;
    }
    /* FFTW's transforms are unnormalised: scale so that backward(forward(x)) == x */
    double t0 = app_now(), c0 = app_cpu_now();
    double scale = 1.0 / ((double)f->cfg.n[0] * (double)f->cfg.n[1] * (double)f->cfg.n[2]);
    size_t n, esz;
    double *a = pfft_input(f, &n, &esz);
    n *= esz / sizeof(double);
    for (size_t i = 0; i < n; i++)
        a[i] *= scale;
    charge(f, c0);
    f->t_fft += app_now() - t0;
    return rc;
}

int pfft_make_plans(pfft *f, const tuna_options *opt, const tuna_options *uopt, unsigned flags,
                    pfft_plan *plans, char *err, size_t errlen)
{
    int n = 2 * (f->nstages - 1);
    memset(plans, 0, (size_t)n * sizeof *plans);
    for (int k = 0; k < n; k++) {
        pfft_reshape *rs = &f->rs[k / 2];
        int q = rs->q, fwd = k % 2 == 0, rc;
        MPI_Datatype type = rs->real ? MPI_DOUBLE : MPI_C_DOUBLE_COMPLEX;
        const int *s = rs->cnt + (fwd ? 0 : 2 * q), *r = rs->cnt + (fwd ? 2 * q : 0);
        plans[k].alltoall = rs->uniform && uopt;
        if (plans[k].alltoall)
            rc = tuna_alltoall_init(f->sbuf, rs->count, type, f->rbuf, rs->count, type,
                                    rs->comm, uopt, flags, &plans[k].plan);
        else if (opt)
            rc = tuna_alltoallv_init(f->sbuf, s, s + q, type, f->rbuf, r, r + q, type,
                                     rs->comm, opt, flags, &plans[k].plan);
        else
            rc = MPI_ERR_ARG;
        /* init errors are agreed inside rs->comm only: agree over every rank before the
         * next reshape's init, which runs in other sub-communicators */
        int ok = rc == MPI_SUCCESS;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, f->comm);
        if (!ok) {
            const char *why = rc == MPI_SUCCESS ? "failed on another rank"
                              : opt || plans[k].alltoall
                                  ? tuna_error_string(rc)
                                  : "an alltoall-only algorithm on a non-uniform reshape";
            snprintf(err, errlen, "%s (%s): %s",
                     plans[k].alltoall ? "tuna_alltoall_init" : "tuna_alltoallv_init", rs->name,
                     why);
            for (int i = 0; i <= k; i++)
                if (plans[i].plan)
                    tuna_plan_free(&plans[i].plan);
            return -1;
        }
    }
    return 0;
}

void *pfft_gather(pfft *f, int s, int real, const void *local, int *ok)
{
    const long *ext = real ? f->cfg.n : f->cext;
    size_t dpe = real ? 1 : 2; /* doubles per element */
    long total = ext[0] * ext[1] * ext[2];
    int P = f->P;
    int *cnt = malloc(2 * (size_t)P * sizeof *cnt);
    double *packed = f->me == 0 ? malloc((size_t)total * dpe * sizeof *packed) : NULL;
    double *all = f->me == 0 ? fftw_malloc((size_t)total * dpe * sizeof *all) : NULL;
    *ok = cnt && (f->me != 0 || (packed && all)) && (double)total * dpe <= INT_MAX;
    MPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_INT, MPI_MIN, f->comm);
    if (*ok) {
        int c = (int)((size_t)box_elems(stage_box(f, s, real)) * dpe);
        MPI_Allgather(&c, 1, MPI_INT, cnt, 1, MPI_INT, f->comm);
        int *dsp = cnt + P;
        dsp[0] = 0;
        for (int r = 1; r < P; r++)
            dsp[r] = dsp[r - 1] + cnt[r - 1];
        MPI_Gatherv(local, c, MPI_DOUBLE, packed, cnt, dsp, MPI_DOUBLE, 0, f->comm);
        if (f->me == 0) {
            pfft_box whole = {{0, 0, 0}, {ext[0], ext[1], ext[2]}};
            for (int r = 0; r < P; r++) {
                pfft_box b;
                pfft_box_of(&f->st[s].lay, ext, r, &b);
                region_copy((char *)all, &whole, (char *)(packed + dsp[r]), &b,
                            dpe * sizeof(double), 0);
            }
        }
    }
    free(cnt);
    free(packed);
    if (!*ok) {
        fftw_free(all);
        all = NULL;
    }
    return all;
}
