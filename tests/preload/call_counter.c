/*
 * A profiling tool stacked in FRONT of the drop-in (LD_PRELOAD=libcall_counter.so:
 * libtuna-preload.so): it defines the MPI calls tuna could make for itself (communicator
 * management and creation, attributes, point-to-point messages, completions, collectives, datatypes,
 * clocks), counts each call and forwards it to the next definition of the same name
 * (dlsym(RTLD_NEXT): tuna's entry point where the drop-in has one, else the library's), as a
 * tool that composes with the drop-in must. tuna's own calls go to PMPI_* (docs/preload.md):
 * this tool must see only the application's. The application reads the counts with
 * tuna_counter_calls() (tool_in_front.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* X(return type, name, parameters, arguments) for every intercepted call. */
#define CALLS(X)                                                                                 \
    X(int, MPI_Comm_dup, (MPI_Comm c, MPI_Comm *n), (c, n))                                      \
    X(int, MPI_Comm_dup_with_info, (MPI_Comm c, MPI_Info i, MPI_Comm *n), (c, i, n))             \
    X(int, MPI_Comm_idup, (MPI_Comm c, MPI_Comm *n, MPI_Request *r), (c, n, r))                  \
    X(int, MPI_Comm_split, (MPI_Comm c, int color, int key, MPI_Comm *n), (c, color, key, n))    \
    X(int, MPI_Comm_split_type, (MPI_Comm c, int t, int key, MPI_Info i, MPI_Comm *n),          \
      (c, t, key, i, n))                                                                         \
    X(int, MPI_Comm_create, (MPI_Comm c, MPI_Group g, MPI_Comm *n), (c, g, n))                   \
    X(int, MPI_Comm_create_group, (MPI_Comm c, MPI_Group g, int tag, MPI_Comm *n),              \
      (c, g, tag, n))                                                                            \
    X(int, MPI_Cart_create,                                                                      \
      (MPI_Comm c, int nd, const int d[], const int p[], int re, MPI_Comm *n),                   \
      (c, nd, d, p, re, n))                                                                      \
    X(int, MPI_Cart_sub, (MPI_Comm c, const int r[], MPI_Comm *n), (c, r, n))                    \
    X(int, MPI_Graph_create,                                                                     \
      (MPI_Comm c, int nn, const int i[], const int e[], int re, MPI_Comm *n),                   \
      (c, nn, i, e, re, n))                                                                      \
    X(int, MPI_Dist_graph_create,                                                                \
      (MPI_Comm c, int nn, const int s[], const int d[], const int t[], const int w[],           \
       MPI_Info i, int re, MPI_Comm *n),                                                         \
      (c, nn, s, d, t, w, i, re, n))                                                             \
    X(int, MPI_Dist_graph_create_adjacent,                                                       \
      (MPI_Comm c, int id, const int s[], const int sw[], int od, const int d[],                 \
       const int dw[], MPI_Info i, int re, MPI_Comm *n),                                         \
      (c, id, s, sw, od, d, dw, i, re, n))                                                       \
    X(int, MPI_Intercomm_create, (MPI_Comm l, int ll, MPI_Comm p, int rl, int t, MPI_Comm *n),  \
      (l, ll, p, rl, t, n))                                                                      \
    X(int, MPI_Intercomm_merge, (MPI_Comm c, int h, MPI_Comm *n), (c, h, n))                     \
    X(int, MPI_Comm_free, (MPI_Comm * c), (c))                                                   \
    X(int, MPI_Comm_group, (MPI_Comm c, MPI_Group *g), (c, g))                                   \
    X(int, MPI_Comm_create_keyval,                                                               \
      (MPI_Comm_copy_attr_function * cf, MPI_Comm_delete_attr_function *df, int *k, void *e),    \
      (cf, df, k, e))                                                                            \
    X(int, MPI_Comm_free_keyval, (int *k), (k))                                                  \
    X(int, MPI_Comm_set_attr, (MPI_Comm c, int k, void *v), (c, k, v))                           \
    X(int, MPI_Comm_get_attr, (MPI_Comm c, int k, void *v, int *f), (c, k, v, f))                \
    X(int, MPI_Comm_delete_attr, (MPI_Comm c, int k), (c, k))                                    \
    X(int, MPI_Comm_set_errhandler, (MPI_Comm c, MPI_Errhandler e), (c, e))                      \
    X(int, MPI_Comm_rank, (MPI_Comm c, int *r), (c, r))                                          \
    X(int, MPI_Comm_size, (MPI_Comm c, int *s), (c, s))                                          \
    X(int, MPI_Comm_remote_size, (MPI_Comm c, int *s), (c, s))                                   \
    X(int, MPI_Comm_test_inter, (MPI_Comm c, int *f), (c, f))                                    \
    X(int, MPI_Isend, (const void *b, int n, MPI_Datatype t, int p, int g, MPI_Comm c,          \
                       MPI_Request *r), (b, n, t, p, g, c, r))                                   \
    X(int, MPI_Irecv, (void *b, int n, MPI_Datatype t, int p, int g, MPI_Comm c, MPI_Request *r), \
      (b, n, t, p, g, c, r))                                                                     \
    X(int, MPI_Send, (const void *b, int n, MPI_Datatype t, int p, int g, MPI_Comm c),          \
      (b, n, t, p, g, c))                                                                        \
    X(int, MPI_Recv, (void *b, int n, MPI_Datatype t, int p, int g, MPI_Comm c, MPI_Status *s),  \
      (b, n, t, p, g, c, s))                                                                     \
    X(int, MPI_Sendrecv,                                                                         \
      (const void *sb, int sn, MPI_Datatype st, int d, int sg, void *rb, int rn,                \
       MPI_Datatype rt, int s, int rg, MPI_Comm c, MPI_Status *x),                               \
      (sb, sn, st, d, sg, rb, rn, rt, s, rg, c, x))                                              \
    X(int, MPI_Wait, (MPI_Request * r, MPI_Status *s), (r, s))                                   \
    X(int, MPI_Waitall, (int n, MPI_Request r[], MPI_Status s[]), (n, r, s))                     \
    X(int, MPI_Waitany, (int n, MPI_Request r[], int *i, MPI_Status *s), (n, r, i, s))           \
    X(int, MPI_Waitsome, (int n, MPI_Request r[], int *o, int i[], MPI_Status s[]),             \
      (n, r, o, i, s))                                                                           \
    X(int, MPI_Test, (MPI_Request * r, int *f, MPI_Status *s), (r, f, s))                        \
    X(int, MPI_Testall, (int n, MPI_Request r[], int *f, MPI_Status s[]), (n, r, f, s))          \
    X(int, MPI_Testany, (int n, MPI_Request r[], int *i, int *f, MPI_Status *s),                \
      (n, r, i, f, s))                                                                           \
    X(int, MPI_Testsome, (int n, MPI_Request r[], int *o, int i[], MPI_Status s[]),             \
      (n, r, o, i, s))                                                                           \
    X(int, MPI_Request_free, (MPI_Request * r), (r))                                             \
    X(int, MPI_Get_count, (const MPI_Status *s, MPI_Datatype t, int *n), (s, t, n))              \
    X(int, MPI_Barrier, (MPI_Comm c), (c))                                                       \
    X(int, MPI_Bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c)) \
    X(int, MPI_Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c),  \
      (s, r, n, t, o, c))                                                                        \
    X(int, MPI_Iallreduce,                                                                       \
      (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request *q),     \
      (s, r, n, t, o, c, q))                                                                     \
    X(int, MPI_Allgather,                                                                        \
      (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c),   \
      (s, sn, st, r, rn, rt, c))                                                                 \
    X(int, MPI_Iallgather,                                                                       \
      (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c,    \
       MPI_Request *q),                                                                          \
      (s, sn, st, r, rn, rt, c, q))                                                              \
    X(int, MPI_Ialltoall,                                                                        \
      (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c,    \
       MPI_Request *q),                                                                          \
      (s, sn, st, r, rn, rt, c, q))                                                              \
    X(int, MPI_Ialltoallv,                                                                       \
      (const void *s, const int sc[], const int sd[], MPI_Datatype st, void *r, const int rc[], \
       const int rd[], MPI_Datatype rt, MPI_Comm c, MPI_Request *q),                             \
      (s, sc, sd, st, r, rc, rd, rt, c, q))                                                      \
    X(int, MPI_Alltoallv,                                                                        \
      (const void *s, const int sc[], const int sd[], MPI_Datatype st, void *r, const int rc[], \
       const int rd[], MPI_Datatype rt, MPI_Comm c),                                             \
      (s, sc, sd, st, r, rc, rd, rt, c))                                                         \
    X(int, MPI_Type_commit, (MPI_Datatype * t), (t))                                             \
    X(int, MPI_Type_free, (MPI_Datatype * t), (t))                                               \
    X(int, MPI_Type_dup, (MPI_Datatype t, MPI_Datatype *n), (t, n))                              \
    X(int, MPI_Type_size, (MPI_Datatype t, int *s), (t, s))                                      \
    X(int, MPI_Type_get_extent, (MPI_Datatype t, MPI_Aint *l, MPI_Aint *e), (t, l, e))           \
    X(int, MPI_Type_get_true_extent, (MPI_Datatype t, MPI_Aint *l, MPI_Aint *e), (t, l, e))      \
    X(int, MPI_Type_contiguous, (int n, MPI_Datatype t, MPI_Datatype *o), (n, t, o))             \
    X(int, MPI_Type_create_hindexed,                                                             \
      (int n, const int b[], const MPI_Aint d[], MPI_Datatype t, MPI_Datatype *o),               \
      (n, b, d, t, o))                                                                           \
    X(int, MPI_Type_create_struct,                                                               \
      (int n, const int b[], const MPI_Aint d[], const MPI_Datatype t[], MPI_Datatype *o),       \
      (n, b, d, t, o))                                                                           \
    X(int, MPI_Type_get_envelope, (MPI_Datatype t, int *a, int *b, int *c, int *k),             \
      (t, a, b, c, k))                                                                           \
    X(int, MPI_Get_address, (const void *l, MPI_Aint *a), (l, a))                                \
    X(int, MPI_Op_commutative, (MPI_Op o, int *c), (o, c))                                       \
    X(int, MPI_Reduce_local, (const void *i, void *o, int n, MPI_Datatype t, MPI_Op op),         \
      (i, o, n, t, op))                                                                          \
    X(int, MPI_Get_processor_name, (char *n, int *l), (n, l))                                    \
    X(double, MPI_Wtime, (void), ())

#define NAME(ret, name, params, args) #name,
static const char *const names[] = {CALLS(NAME)};
#define NCALLS ((int)(sizeof names / sizeof names[0]))
static atomic_long counts[NCALLS];

/* The index of each call in names[]. */
#define INDEX(ret, name, params, args) IDX_##name,
enum { CALLS(INDEX) };

/* The next definition of `name` after this library (tuna's or the MPI library's). */
static void *next_of(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "call_counter: no next definition of %s\n", name);
        abort();
    }
    return f;
}

#define WRAP(ret, name, params, args)                                                            \
    ret name params                                                                              \
    {                                                                                            \
        static ret(*next) params;                                                                \
        atomic_fetch_add(&counts[IDX_##name], 1);                                                \
        if (!next) {                                                                             \
            void *f = next_of(#name);                                                            \
            memcpy(&next, &f, sizeof f);                                                         \
        }                                                                                        \
        return next args;                                                                        \
    }
CALLS(WRAP)

/* Calls of `name` this tool saw; -1 when it does not intercept it. */
long tuna_counter_calls(const char *name)
{
    for (int i = 0; i < NCALLS; i++)
        if (strcmp(names[i], name) == 0)
            return atomic_load(&counts[i]);
    return -1;
}

/* The i-th intercepted name, NULL past the last. */
const char *tuna_counter_name(int i)
{
    return i >= 0 && i < NCALLS ? names[i] : NULL;
}
