/*
 * The preload's Fortran bindings of the persistent collectives under Open MPI, called the way
 * a Fortran program calls them (every argument by reference, handles as INTEGERs), from C:
 * neither MPI 5 wheel ships a Fortran wrapper, and Open MPI 5 renamed Open MPI 4.1's
 * MPIX_ALLTOALLV_INIT (...) to MPI_ALLTOALLV_INIT. Open MPI's own Fortran library calls
 * PMPI_Alltoallv_init, so without these bindings a Fortran persistent collective never reaches
 * tuna.
 *
 * For each of alltoallv, alltoall, allgather, allreduce and alltoallw the binding is looked up
 * under every name Open MPI gives a Fortran routine (lo, lo_, lo__, UP, lo_f08_;
 * lo = mpi_alltoallv_init where mpi.h declares MPI_Alltoallv_init, else mpix_alltoallv_init),
 * so a missing name fails here. Each request is started twice with new send contents, completed with MPI_Wait, and its
 * receive buffer (sentinel-filled) compared with values computed from the formula. The blocking
 * MPI_ALLTOALLW and nonblocking MPI_IALLTOALLW (always MPI_ names) run once each per name.
 * run_client.py checks in the TUNA_STATS file that tuna's plans ran every start.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <mpi.h>

#include "client.h"
#include "tuna_mpi_features.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#if defined(TUNA_HAVE_MPI_ALLTOALLV_INIT)
#define PREFIX "mpi_"
#define UPREFIX "MPI_"
#elif defined(TUNA_HAVE_MPIX_ALLTOALLV_INIT)
#define PREFIX "mpix_"
#define UPREFIX "MPIX_"
#else
#error "the MPI library declares no persistent alltoallv (CMake adds this test only if it does)"
#endif

#define SENTINEL (-7777)
#define NAMES 5
#define STARTS 2

typedef void (*v_init)(void *, const MPI_Fint *, const MPI_Fint *, const MPI_Fint *, void *,
                       const MPI_Fint *, const MPI_Fint *, const MPI_Fint *, const MPI_Fint *,
                       const MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*counted_init)(void *, const MPI_Fint *, const MPI_Fint *, void *,
                             const MPI_Fint *, const MPI_Fint *, const MPI_Fint *,
                             const MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*w_call)(void *, const MPI_Fint *, const MPI_Fint *, const MPI_Fint *, void *,
                       const MPI_Fint *, const MPI_Fint *, const MPI_Fint *, const MPI_Fint *,
                       MPI_Fint *);
typedef void (*iw_call)(void *, const MPI_Fint *, const MPI_Fint *, const MPI_Fint *, void *,
                        const MPI_Fint *, const MPI_Fint *, const MPI_Fint *, const MPI_Fint *,
                        MPI_Fint *, MPI_Fint *);
typedef void (*reduce_init)(void *, void *, const MPI_Fint *, const MPI_Fint *,
                            const MPI_Fint *, const MPI_Fint *, const MPI_Fint *, MPI_Fint *,
                            MPI_Fint *);

/* The binding of `coll` (e.g. "alltoallv_init") under its k-th Fortran name, with the
 * prefixes of the persistent collectives (pre, upre) or MPI_'s. */
static void *binding_as(const char *pre, const char *upre, const char *coll, int k, char *name,
                        size_t len);
static void *binding(const char *coll, int k, char *name, size_t len)
{
    return binding_as(PREFIX, UPREFIX, coll, k, name, len);
}

static void *binding_as(const char *pre, const char *upre, const char *coll, int k, char *name,
                        size_t len)
{
    char up[32];
    size_t i = 0;
    for (; coll[i] && i < sizeof up - 1; i++)
        up[i] = (char)(coll[i] >= 'a' && coll[i] <= 'z' ? coll[i] - 'a' + 'A' : coll[i]);
    up[i] = '\0';
    static const char *const suffix[NAMES] = {"", "_", "__", "", "_f08_"};
    if (k == 3)
        snprintf(name, len, "%s%s", upre, up);
    else
        snprintf(name, len, "%s%s%s", pre, coll, suffix[k]);
    void *fn = dlsym(RTLD_DEFAULT, name);
    expect(fn != NULL, name, k);
    return fn;
}

static int val(int from, int to, int i, int start) { return from * 1000 + to * 100 + i * 10 + start; }

/* Starts the Fortran request STARTS times; before each, fill() writes the send buffer and the
 * sentinels, after each check() compares. */
typedef struct {
    int *sbuf, *rbuf;
    int n;   /* ints received */
    const char *what;
    void (*fill)(int *sbuf, int *rbuf, int start);
    void (*check)(const int *rbuf, int start, const char *what, int k);
} round_t;

static void run_starts(MPI_Fint freq, MPI_Fint ierr, const round_t *r, int k)
{
    expect(ierr == MPI_SUCCESS, r->what, k);
    if (ierr != MPI_SUCCESS)
        return;
    MPI_Request req = MPI_Request_f2c(freq);
    for (int s = 0; s < STARTS; s++) {
        r->fill(r->sbuf, r->rbuf, s);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        r->check(r->rbuf, s, r->what, k);
    }
    MPI_Request_free(&req);
}

/* alltoallv: rank j sends (me + j) % 3 ints to rank j, gaps of one int between the blocks. */
static int a2av_count(int from, int to) { return (from + to) % 3; }

static void a2av_fill(int *sbuf, int *rbuf, int s)
{
    for (int j = 0, off = 0; j < P; j++, off += 4)
        for (int i = 0; i < a2av_count(me, j); i++)
            sbuf[off + i] = val(me, j, i, s);
    for (int i = 0; i < 4 * P; i++)
        rbuf[i] = SENTINEL;
}

static void a2av_check(const int *rbuf, int s, const char *what, int k)
{
    for (int j = 0, off = 0; j < P; j++, off += 4)
        for (int i = 0; i < 4; i++)
            expect(rbuf[off + i] == (i < a2av_count(j, me) ? val(j, me, i, s) : SENTINEL), what,
                   k * 100 + s);
}

/* alltoall and allgather: 2 ints per block. */
static void a2a_fill(int *sbuf, int *rbuf, int s)
{
    for (int j = 0; j < P; j++)
        for (int i = 0; i < 2; i++)
            sbuf[2 * j + i] = val(me, j, i, s);
    for (int i = 0; i < 2 * P + 1; i++)
        rbuf[i] = SENTINEL;
}

static void a2a_check(const int *rbuf, int s, const char *what, int k)
{
    for (int j = 0; j < P; j++)
        for (int i = 0; i < 2; i++)
            expect(rbuf[2 * j + i] == val(j, me, i, s), what, k * 100 + s);
    expect(rbuf[2 * P] == SENTINEL, what, k * 100 + s);
}

static void ag_fill(int *sbuf, int *rbuf, int s)
{
    for (int i = 0; i < 2; i++)
        sbuf[i] = val(me, 0, i, s);
    for (int i = 0; i < 2 * P + 1; i++)
        rbuf[i] = SENTINEL;
}

static void ag_check(const int *rbuf, int s, const char *what, int k)
{
    for (int j = 0; j < P; j++)
        for (int i = 0; i < 2; i++)
            expect(rbuf[2 * j + i] == val(j, 0, i, s), what, k * 100 + s);
    expect(rbuf[2 * P] == SENTINEL, what, k * 100 + s);
}

enum { RED = 5 };
static void red_fill(int *sbuf, int *rbuf, int s)
{
    for (int i = 0; i < RED; i++)
        sbuf[i] = val(me, 0, i, s);
    for (int i = 0; i < RED + 1; i++)
        rbuf[i] = SENTINEL;
}

static void red_check(const int *rbuf, int s, const char *what, int k)
{
    for (int i = 0; i < RED; i++) {
        int sum = 0;
        for (int j = 0; j < P; j++)
            sum += val(j, 0, i, s);
        expect(rbuf[i] == sum, what, k * 100 + s);
    }
    expect(rbuf[RED] == SENTINEL, what, k * 100 + s);
}

/* alltoallw: alltoallv's blocks (its fill and check), byte displacements, send types MPI_INT,
 * receive types MPI_INT and a one-int derived type by turns (the packed way where P > 1). */
static void w_once(w_call w, iw_call iw, int *sbuf, int *rbuf, const MPI_Fint *counts,
                   const MPI_Fint *types, const MPI_Fint *comm, const char *what, int k)
{
    const MPI_Fint *sc = counts, *sd = counts + P, *rc = counts + 2 * P, *rd = counts + 3 * P;
    for (int s = 0; s < 2; s++) {
        a2av_fill(sbuf, rbuf, s);
        MPI_Fint ierr = -1, freq = -1;
        if (s == 0) {
            w(sbuf, sc, sd, types, rbuf, rc, rd, types + P, comm, &ierr);
        } else {
            iw(sbuf, sc, sd, types, rbuf, rc, rd, types + P, comm, &freq, &ierr);
            MPI_Request req = MPI_Request_f2c(freq);
            if (ierr == MPI_SUCCESS)
                MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        expect(ierr == MPI_SUCCESS, what, k * 100 + s);
        a2av_check(rbuf, s, what, k);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    client_start(120);
    const MPI_Fint comm = MPI_Comm_c2f(MPI_COMM_WORLD), type = MPI_Type_c2f(MPI_INT),
                   info = MPI_Info_c2f(MPI_INFO_NULL), sum = MPI_Op_c2f(MPI_SUM);
    int *sbuf = malloc(sizeof(int) * (4 * (size_t)P + 8));
    int *rbuf = malloc(sizeof(int) * (4 * (size_t)P + 8));
    MPI_Fint *sc = malloc(sizeof(MPI_Fint) * 4 * (size_t)P), *sd = sc + P, *rc = sc + 2 * P,
             *rd = sc + 3 * P;
    for (int j = 0; j < P; j++) {
        sc[j] = a2av_count(me, j);
        rc[j] = a2av_count(j, me);
        sd[j] = rd[j] = 4 * j;
    }
    const MPI_Fint two = 2, red = RED;
    char name[96];
    /* alltoallw's arrays: byte displacements, a type per peer and side */
    MPI_Datatype one_int;
    MPI_Type_contiguous(1, MPI_INT, &one_int);
    MPI_Type_commit(&one_int);
    MPI_Fint *wa = malloc(sizeof(MPI_Fint) * 6 * (size_t)P), *wt = wa + 4 * P;
    for (int j = 0; j < P; j++) {
        wa[j] = sc[j];
        wa[P + j] = 16 * j;
        wa[2 * P + j] = rc[j];
        wa[3 * P + j] = 16 * j;
        wt[j] = type;
        wt[P + j] = j % 2 ? MPI_Type_c2f(one_int) : type;
    }
    for (int k = 0; k < NAMES; k++) {
        MPI_Fint freq = -1, ierr = -1;
        v_init a2av = (v_init)binding("alltoallv_init", k, name, sizeof name);
        if (a2av) {
            a2av(sbuf, sc, sd, &type, rbuf, rc, rd, &type, &comm, &info, &freq, &ierr);
            run_starts(freq, ierr, &(round_t){sbuf, rbuf, 4 * P, name, a2av_fill, a2av_check}, k);
        }
        counted_init a2a = (counted_init)binding("alltoall_init", k, name, sizeof name);
        if (a2a) {
            a2a(sbuf, &two, &type, rbuf, &two, &type, &comm, &info, &freq, &ierr);
            run_starts(freq, ierr, &(round_t){sbuf, rbuf, 2 * P, name, a2a_fill, a2a_check}, k);
        }
        counted_init ag = (counted_init)binding("allgather_init", k, name, sizeof name);
        if (ag) {
            ag(sbuf, &two, &type, rbuf, &two, &type, &comm, &info, &freq, &ierr);
            run_starts(freq, ierr, &(round_t){sbuf, rbuf, 2 * P, name, ag_fill, ag_check}, k);
        }
        reduce_init ar = (reduce_init)binding("allreduce_init", k, name, sizeof name);
        if (ar) {
            ar(sbuf, rbuf, &red, &type, &sum, &comm, &info, &freq, &ierr);
            run_starts(freq, ierr, &(round_t){sbuf, rbuf, RED, name, red_fill, red_check}, k);
        }
        w_call w = (w_call)binding_as("mpi_", "MPI_", "alltoallw", k, name, sizeof name);
        iw_call iw = (iw_call)binding_as("mpi_", "MPI_", "ialltoallw", k, name, sizeof name);
        if (w && iw)
            w_once(w, iw, sbuf, rbuf, wa, wt, &comm, name, k);
#ifdef ALLTOALLW_INIT
        v_init wi = (v_init)binding("alltoallw_init", k, name, sizeof name);
        if (wi) {
            wi(sbuf, wa, wa + P, wt, rbuf, wa + 2 * P, wa + 3 * P, wt + P, &comm, &info, &freq,
               &ierr);
            run_starts(freq, ierr, &(round_t){sbuf, rbuf, 4 * P, name, a2av_fill, a2av_check}, k);
        }
#endif
    }
    MPI_Type_free(&one_int);
    free(wa);
    free(sc);
    free(sbuf);
    free(rbuf);
    int bad = client_outcome("fortran_persistent_bindings");
    MPI_Finalize();
    return bad != 0;
}
