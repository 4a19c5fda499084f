/*
 * mesh (uniform all-to-all only): the multi-dimensional, dimension-ordered exchange (SMPI's
 * 2dmesh and 3dmesh; Kumar, Kale et al., "Optimizing all-to-all on mesh and torus
 * networks"; Sack and Gropp's multi-level schedules), for any P and any number of
 * dimensions.
 *
 * The grid: P = d_0 * d_1 * ... * d_{k-1} (tuna_a2a_mesh_shape), k = the parameter `dims`
 * clamped to [1, number of prime factors of P] (prime P: one dimension, the direct linear
 * exchange; P = 1: none). Of all the ways to write P as k factors >= 2 it takes the one
 * with the fewest messages, sum(d_j - 1), ties to the smaller largest factor: the factors
 * as close to P^(1/k) as P allows, so no dimension of size 1 is ever left. They are
 * ordered largest first; rank r has the mixed-radix digits c_j = (r / w_j) mod d_j, w_j =
 * d_0 ... d_{j-1}, d_0 the fastest-varying, so under block placement dimension 0 (the
 * largest) stays inside a node and carries the most messages there.
 *
 * P slots of B bytes, slot i initially the block for rank i. Phase j: every rank exchanges
 * with the d_j - 1 ranks that differ from it in digit j alone, r + (v - c_j) w_j for v !=
 * c_j: to peer v the slots whose digit j is v, from peer v the same positions (digit j of
 * a slot turns from the destination's digit into the source's). After the last phase slot
 * i holds the block from rank i: the slots are the receive buffer. Each message carries
 * P/d_j blocks; the phases move (k - sum 1/d_j) P B bytes per rank in sum(d_j - 1)
 * messages, against (P - 1) B in P - 1 for the linear exchange.
 *
 * The slots with digit j = v are P/(w_j d_j) runs of w_j consecutive slots, one every
 * w_j d_j slots: one MPI hvector type (built once per phase, the same for every peer and
 * both directions, only the offset v w_j B differs) sends and receives them in place. The
 * other uniform row, bruck-radix, packs its rounds with memcpy on purpose (MPICH's k_brucks,
 * the comparison of issue 36), and padded-bruck's datatype=1 lost to its packing on short
 * blocks (docs/algorithms.md) because it builds two hindexed types per round of one
 * message; here one regular type serves the phase's 2(d_j - 1) messages and no copy or
 * pack buffer is needed, as TuNA's zero-copy rounds. Phase j reads one buffer and writes the
 * other, alternating between the receive buffer and one temporary of P*B bytes so that the
 * last phase writes the receive buffer (phase 0 reads the send buffer); the rank's own slots
 * (digit j = c_j) are copied locally. One dimension needs no temporary. Where the slots of a
 * digit value are one run (the last phase: w_j d_j = P) they go as plain bytes, no type.
 *
 * One phase per step. Requests in flight: 2 (d_j - 1). Temporary memory: P*B for k >= 2
 * (plus the byte view's packing for non-contiguous types). Tag TUNA_TAG_MESH.
 */
#include "uniform_rows.h"

#include <stdlib.h>
#include <string.h>

/* The most divisors an int has (2095133040 has 1600). */
#define MESH_MAX_DIVISORS 1600

int tuna_a2a_mesh_max_dims(long P)
{
    int n = 0;
    for (long p = 2; p * p <= P; p++)
        for (; P % p == 0; P /= p)
            n++;
    return n + (P > 1);
}

/* The divisors of P (1 <= P <= INT_MAX), ascending; returns how many. */
static int divisors(long P, int *div)
{
    int n = 1;
    div[0] = 1;
    for (long p = 2; P > 1; p++) {
        if (p * p > P)
            p = P; /* what is left is prime */
        if (P % p != 0)
            continue;
        const int before = n;
        for (long q = p; P % p == 0; P /= p, q *= p)
            for (int i = 0; i < before; i++)
                div[n++] = (int)(div[i] * q);
    }
    for (int i = 1; i < n; i++) /* insertion sort: at most 1600, once per call */
        for (int j = i; j > 0 && div[j - 1] > div[j]; j--) {
            const int t = div[j];
            div[j] = div[j - 1];
            div[j - 1] = t;
        }
    return n;
}

typedef struct shape_search {
    int div[MESH_MAX_DIVISORS]; /* the divisors of P, ascending */
    int ndiv;
    int cur[TUNA_A2A_MESH_MAX_DIMS], best[TUNA_A2A_MESH_MAX_DIMS];
    long long best_sum;
} shape_search;

/* Whether f^m >= R: f can be the largest of m factors of R. */
static bool largest_of(long long f, int m, long long R)
{
    long long p = 1;
    for (int i = 0; i < m; i++)
        if ((p *= f) >= R)
            return true;
    return false;
}

/* cur[depth..depth+m) <- m factors of R in [2, cap], non-increasing, of the least sum; the
 * first found of equal sum has the smallest leading factor (the divisors are ascending). */
static void shape_from(shape_search *s, long long R, int m, long long cap, int depth,
                       long long sum)
{
    if (m == 1) {
        if (R <= cap && sum + R < s->best_sum) {
            s->cur[depth] = (int)R;
            for (int i = 0; i <= depth; i++)
                s->best[i] = s->cur[i];
            s->best_sum = sum + R;
        }
        return;
    }
    for (int i = 0; i < s->ndiv; i++) {
        const long long f = s->div[i];
        /* every other factor is >= 2: nothing from here on beats the best */
        if (f > cap || sum + f + 2LL * (m - 1) >= s->best_sum || R / f < (1LL << (m - 1)))
            break;
        if (f < 2 || R % f != 0 || !largest_of(f, m, R))
            continue;
        s->cur[depth] = (int)f;
        shape_from(s, R / f, m - 1, f, depth + 1, sum + f);
    }
}

int tuna_a2a_mesh_shape(long P, long dims, int d[TUNA_A2A_MESH_MAX_DIMS])
{
    const int most = P > 1 ? tuna_a2a_mesh_max_dims(P) : 0;
    const int k = dims < 1 ? (most ? 1 : 0) : dims > most ? most : (int)dims;
    if (k <= 1) {
        d[0] = (int)P;
        return k;
    }
    /* about 7 KB on the stack: on the heap it would be one more allocation to fail */
    shape_search s;
    s.ndiv = divisors(P, s.div);
    s.best_sum = (long long)P + 2LL * k; /* above any k factors of P: the first one found wins */
    shape_from(&s, P, k, P, 0, 0);
    for (int i = 0; i < k; i++)
        d[i] = s.best[i];
    return k;
}

typedef struct mesh_state {
    tuna_bytes_view v;
    tuna_timer tm;
    size_t B;                        /* every block's bytes */
    int k, j;                        /* dimensions; the phase in flight */
    int d[TUNA_A2A_MESH_MAX_DIMS];   /* dimension sizes, d[0] the fastest-varying digit */
    const char *sb;                  /* the P send blocks, B bytes apart */
    char *rb, *tmp;                  /* the P receive blocks; the temporary (k >= 2) */
    size_t temp;                     /* bytes of tmp */
    long long w;                     /* place value of digit j: d_0 ... d_{j-1} */
    MPI_Datatype run, set;           /* phase j: w blocks; the slots of one digit value */
    MPI_Request req[];               /* 2 (max d_j - 1) */
} mesh_state;

static void mesh_types_free(mesh_state *s)
{
    if (s->set != MPI_DATATYPE_NULL)
        PMPI_Type_free(&s->set);
    if (s->run != MPI_DATATYPE_NULL)
        PMPI_Type_free(&s->run);
}

static void mesh_state_free(tuna_a2av_op *o)
{
    mesh_state *s = o->state;
    mesh_types_free(s);
    free(s->tmp);
    tuna_a2av_state_release(o, &s->v);
}

/* The last step: the view closed (unpacked if rc is MPI_SUCCESS), the state freed. */
static int mesh_close(tuna_a2av_op *o, int rc)
{
    mesh_state *s = o->state;
    if (rc == MPI_SUCCESS) {
        tuna_stats_temp(s->temp);
        tuna_stats_rounds(s->k);
    }
    return tuna_a2av_view_done(o, &s->v, rc);
}

/* Phase j: its types, the exchanges with the d_j - 1 peers posted, the own slots copied. */
static int mesh_post(tuna_a2av_op *o, mesh_state *s)
{
    const tuna_a2av_args *a = o->a;
    const int P = a->size, me = a->rank, j = s->j, dj = s->d[j];
    const size_t B = s->B, run = (size_t)s->w * B, stride = run * (size_t)dj;
    const int runs = (int)(P / (s->w * dj));
    const int c = (int)(me / s->w % dj);
    /* the last phase writes the receive buffer; each reads what the one before wrote */
    const char *src = j == 0 ? s->sb : (s->k - j) % 2 == 0 ? s->rb : s->tmp;
    char *dst = (s->k - 1 - j) % 2 == 0 ? s->rb : s->tmp;
    /* One run (the last phase, and one dimension): plain bytes, no type to build. */
    int rc = MPI_SUCCESS;
    if (runs > 1 &&
        ((rc = tuna_bruck_block_type(run, &s->run)) != MPI_SUCCESS ||
         (rc = PMPI_Type_create_hvector(runs, 1, (MPI_Aint)stride, s->run, &s->set)) !=
             MPI_SUCCESS ||
         (rc = PMPI_Type_commit(&s->set)) != MPI_SUCCESS))
        rc = tuna_error_set(rc, "mesh: the datatype of phase %d (%d runs of %zu bytes) "
                                "failed",
                            j, runs, run);
    tuna_timer_stop(&s->tm, TUNA_PHASE_PREPARE);
    if (rc != MPI_SUCCESS)
        return mesh_close(o, rc);
    /* Receives first, then sends, each from the next coordinate up (round-robin from self,
     * as spreadout, so the peers are not all served in the same order). */
    const int tag = TUNA_TAG_MESH + a->tag_shift;
    const MPI_Comm comm = a->ctx->comm;
    int n = 0;
    for (int send = 0; send < 2; send++)
        for (int i = 1; i < dj && rc == MPI_SUCCESS; i++) {
            const int v = (c + i) % dj, peer = (int)(me + (long long)(v - c) * s->w);
            MPI_Request *req = &s->req[n];
            int prc;
            if (send) {
                const char *at = src + (size_t)v * run;
                prc = runs > 1 ? tuna_tp_isend_typed(a->tp, at, 1, s->set, peer, tag, comm, req)
                               : tuna_tp_isend(a->tp, at, run, peer, tag, comm, req);
            } else {
                char *at = dst + (size_t)v * run;
                prc = runs > 1 ? tuna_tp_irecv_typed(a->tp, at, 1, s->set, peer, tag, comm, req)
                               : tuna_tp_irecv(a->tp, at, run, peer, tag, comm, req);
            }
            if ((rc = tuna_posted(prc, &n)) != MPI_SUCCESS)
                rc = tuna_error_set(rc, "mesh: MPI_%s rank %d in phase %d failed",
                                    send ? "Isend to" : "Irecv from", peer, j);
        }
    /* The own slots stay where they are, copied while the messages travel (no message
     * reads or writes them). */
    for (int i = 0; i < runs && rc == MPI_SUCCESS; i++) {
        const size_t at = (size_t)c * run + (size_t)i * stride;
        tuna_tp_copy(a->tp, dst + at, src + at, run);
    }
    tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
    return tuna_a2av_step_wait(o, s->req, n, rc);
}

/* The first step: checks, the view, the temporary, phase 0. */
static int mesh_begin(tuna_a2av_op *o)
{
    const tuna_a2av_args *a = o->a;
    const int P = a->size;
    if (!a->uniform)
        return tuna_a2av_step_done(
            o, tuna_error_set(MPI_ERR_INTERN, "mesh: runs a uniform all-to-all only "
                                              "(tuna_alltoall), not an alltoallv"));
    int d[TUNA_A2A_MESH_MAX_DIMS];
    const int k = tuna_a2a_mesh_shape(P, tuna_a2av_param(a, "dims"), d);
    int dmax = 1;
    for (int j = 0; j < k; j++)
        dmax = d[j] > dmax ? d[j] : dmax;
    mesh_state *s = tuna_calloc(1, sizeof *s + sizeof(MPI_Request) * 2 * (size_t)(dmax - 1));
    if (!s)
        return tuna_a2av_step_done(
            o, tuna_error_set(MPI_ERR_NO_MEM, "mesh: out of memory for its state"));
    s->run = s->set = MPI_DATATYPE_NULL;
    int rc = tuna_a2av_state_attach(o, s, mesh_state_free, &s->tm, &s->v);
    if (rc != MPI_SUCCESS)
        return tuna_a2av_step_done(o, rc);
    s->B = (size_t)tuna_scount(a, 0) * a->ssize;
    s->k = k;
    for (int i = 0; i < k; i++)
        s->d[i] = d[i];
    /* The slots are the P blocks B bytes apart: the bytes view lays out every uniform call so
     * (contiguous types: extent = size; packed and in-place copies: back to back). */
    s->sb = s->v.sbase + s->v.soff[0];
    s->rb = s->v.rbase + s->v.roff[0];
    for (int i = 0; i < P; i++)
        if (s->v.sbytes[i] != s->B || s->v.rbytes[i] != s->B ||
            s->v.soff[i] - s->v.soff[0] != (MPI_Aint)((size_t)i * s->B) ||
            s->v.roff[i] - s->v.roff[0] != (MPI_Aint)((size_t)i * s->B))
            return mesh_close(o, tuna_error_set(MPI_ERR_INTERN,
                                                "mesh: block %d is not the uniform %zu bytes at "
                                                "%d x %zu",
                                                i, s->B, i, s->B));
    /* Empty blocks (on every rank: B is uniform) or one rank: no exchange. */
    if (s->B == 0 || k == 0) {
        if (s->B)
            tuna_tp_copy(a->tp, s->rb, s->sb, s->B);
        return mesh_close(o, MPI_SUCCESS);
    }
    if (k >= 2) {
        s->temp = (size_t)P * s->B; /* fits: the receive buffer holds as much */
        if (!(s->tmp = tuna_malloc(s->temp)))
            return mesh_close(o, tuna_error_set(MPI_ERR_NO_MEM,
                                                "mesh: out of memory for %zu bytes of slots",
                                                s->temp));
    }
    s->w = 1;
    return mesh_post(o, s);
}

/* o->i: 0 before the first step, then 1 (the phases; state at o->state). */
int tuna_a2a_mesh_step(tuna_a2av_op *o, int wait_rc)
{
    if (o->i == 0) {
        o->i = 1;
        return mesh_begin(o);
    }
    mesh_state *s = o->state;
    int rc = tuna_a2av_step_outcome(o, wait_rc, "mesh: a phase's exchange failed");
    tuna_timer_stop(&s->tm, TUNA_PHASE_DATA);
    mesh_types_free(s);
    if (rc != MPI_SUCCESS || s->j + 1 == s->k)
        return mesh_close(o, rc);
    s->w *= s->d[s->j++];
    return mesh_post(o, s);
}
