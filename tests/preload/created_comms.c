/*
 * Communicators made by every creation call, seen only by nonblocking and persistent
 * collectives (issue 56): MPI_Comm_dup, _dup_with_info, _split (an MPI_UNDEFINED color on
 * every third rank), _split_type (shared; and MPI_UNDEFINED on odd ranks), _create (even
 * ranks; odd ones get MPI_COMM_NULL), _create_group (the lower half calls it),
 * _create_from_group (the upper half; where the library has it), MPI_Cart_create (all ranks;
 * and P - 1 of them: the last gets MPI_COMM_NULL), MPI_Cart_sub, MPI_Graph_create,
 * MPI_Dist_graph_create, _adjacent and MPI_Intercomm_merge (of an intercommunicator between
 * the even and the odd ranks). Every rank checks that it got MPI_COMM_NULL exactly where it is
 * not a member. Round 0 starts MPI_Ialltoallv, MPI_Ialltoall, MPI_Iallreduce and
 * MPI_Iallgather on every communicator before completing any, round 1 one communicator after
 * the other; then persistent alltoallv, alltoall, allgather and allreduce (where the library
 * has them) on the cartesian subcommunicator and the merged one. Every receive buffer is
 * sentinel-filled and compared byte for byte with the library's own call (PMPI_*, blocking).
 * run_client.py checks that tuna's rows ran every call from the first (no "has not set this
 * communicator up" row). With the argument "idup", an MPI_Comm_idup's communicator (named
 * "idup") gets the same calls: the one creation the drop-in cannot set up (its communicator
 * exists only at the completion, which is not collective).
 */
#include "client.h"
#include "nb_calls.h"
#include "tuna_mpi_features.h"

#define MAXC 20

static MPI_Comm comms[MAXC];
static const char *names[MAXC];
static int ncomm;

/* A communicator's salt for its values: the same on every member (its place in comms[]
 * differs between ranks that are members of different communicators). */
static int salt_of(int k)
{
    int h = 0;
    for (const char *c = names[k]; *c; c++)
        h = (h * 31 + *c) % 997;
    return h;
}

/* A creation's result: kept when this rank is a member (should_be), else checked NULL. */
static void got(MPI_Comm c, int should_be, const char *name)
{
    expect((c != MPI_COMM_NULL) == should_be, name, 0);
    if (c == MPI_COMM_NULL)
        return;
    int inter = 1;
    MPI_Comm_test_inter(c, &inter);
    expect(!inter, name, 1);
    MPI_Comm_set_name(c, name);
    names[ncomm] = name;
    comms[ncomm++] = c;
}

/* The group of world ranks lo..hi-1 (empty when hi <= lo). */
static MPI_Group world_range(int lo, int hi)
{
    MPI_Group w, g;
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    if (hi <= lo) {
        MPI_Group_free(&w);
        return MPI_GROUP_EMPTY;
    }
    int range[1][3] = {{lo, hi - 1, 1}};
    MPI_Group_range_incl(w, 1, range, &g);
    MPI_Group_free(&w);
    return g;
}

static void create_all(int with_idup)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    got(c, 1, "dup");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
    MPI_Info_free(&info);
    got(c, 1, "dup_with_info");
    MPI_Comm_split(MPI_COMM_WORLD, me % 3 == 2 ? MPI_UNDEFINED : me % 3, P - me, &c);
    got(c, me % 3 != 2, "split");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &c);
    got(c, 1, "split_type");
    MPI_Comm_split_type(MPI_COMM_WORLD, me % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, me,
                        MPI_INFO_NULL, &c);
    got(c, me % 2 == 0, "split_type_undefined");
    { /* even ranks */
        MPI_Group w, even;
        MPI_Comm_group(MPI_COMM_WORLD, &w);
        int range[1][3] = {{0, P - 1, 2}};
        MPI_Group_range_incl(w, 1, range, &even);
        MPI_Comm_create(MPI_COMM_WORLD, even, &c);
        got(c, me % 2 == 0, "create");
        MPI_Group_free(&even);
        MPI_Group_free(&w);
    }
    const int lower = (P + 1) / 2; /* ranks 0..lower-1 */
    if (me < lower) {
        MPI_Group g = world_range(0, lower);
        MPI_Comm_create_group(MPI_COMM_WORLD, g, 56, &c);
        got(c, 1, "create_group");
        MPI_Group_free(&g);
    }
#ifdef TUNA_HAVE_MPI_COMM_CREATE_FROM_GROUP
    if (me >= P / 2) {
        MPI_Group g = world_range(P / 2, P);
        MPI_Comm_create_from_group(g, "tuna.issue56", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &c);
        got(c, 1, "create_from_group");
        MPI_Group_free(&g);
    }
#endif
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(P, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
    got(cart, 1, "cart_create");
    int remain[2] = {1, 0};
    MPI_Cart_sub(cart, remain, &c);
    got(c, 1, "cart_sub");
    if (P > 1) { /* a line of P - 1: the last rank is outside */
        int d1 = P - 1, p1 = 0;
        MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 0, &c);
        got(c, me < P - 1, "cart_create_short");
    }
    { /* a ring, three ways */
        int *index = malloc(sizeof(int) * (size_t)P), *edges = malloc(sizeof(int) * (size_t)P);
        for (int i = 0; i < P; i++)
            index[i] = i + 1, edges[i] = (i + 1) % P;
        MPI_Graph_create(MPI_COMM_WORLD, P, index, edges, 0, &c);
        got(c, 1, "graph_create");
        free(index);
        free(edges);
        /* weights given: Open MPI's MPI_UNWEIGHTED is a pointer gcc sees as 0 bytes */
        int src = me, deg = 1, dst = (me + 1) % P, from = (me + P - 1) % P, w = 1;
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, &w, MPI_INFO_NULL, 0, &c);
        got(c, 1, "dist_graph_create");
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, &w, 1, &dst, &w, MPI_INFO_NULL,
                                       0, &c);
        got(c, 1, "dist_graph_create_adjacent");
    }
    if (P > 1) { /* even ranks and odd ranks, merged (the odd ones high) */
        MPI_Comm local, inter;
        PMPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &local); /* not seen by the drop-in */
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 57, &inter);
        MPI_Intercomm_merge(inter, me % 2, &c);
        got(c, 1, "intercomm_merge");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }
    if (with_idup) {
        MPI_Request r;
        MPI_Comm_idup(MPI_COMM_WORLD, &c, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        got(c, 1, "idup");
    }
    got(MPI_COMM_WORLD, 1, "MPI_COMM_WORLD");
}

#ifdef ALLTOALLV_INIT
/* Persistent alltoallv, alltoall, allgather, allreduce on comm: two starts each. */
static void persistent_on(MPI_Comm comm, int salt)
{
    calls c;
    calls_make(&c, comm, salt);
    MPI_Request q[NCOLL];
    ALLTOALLV_INIT(c.vs, c.sc, c.sd, MPI_INT, c.vr, c.rc, c.rd, MPI_INT, comm, MPI_INFO_NULL,
                   &q[0]);
    ALLTOALL_INIT(c.as, 2, MPI_INT, c.ar, 2, MPI_INT, comm, MPI_INFO_NULL, &q[1]);
    ALLREDUCE_INIT(c.red, c.rout, 3, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &q[2]);
    ALLGATHER_INIT(c.gin, 2, MPI_INT, c.gr, 2, MPI_INT, comm, MPI_INFO_NULL, &q[3]);
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < c.rlen; i++)
            c.vr[i] = SENTINEL;
        for (int i = 0; i < 2 * c.n; i++)
            c.ar[i] = c.gr[i] = SENTINEL;
        for (int i = 0; i < 3; i++)
            c.rout[i] = SENTINEL;
        MPI_Startall(NCOLL, q);
        MPI_Waitall(NCOLL, q, MPI_STATUSES_IGNORE);
        calls_check(&c, 1000 + salt * 10 + s);
    }
    for (int i = 0; i < NCOLL; i++)
        MPI_Request_free(&q[i]);
    calls_free(&c);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    client_start(240);
    create_all(argc > 1 && strcmp(argv[1], "idup") == 0);
    { /* round 0: every first call outstanding at once, completed in reverse order */
        calls c[MAXC];
        MPI_Request q[MAXC * NCOLL], rev[MAXC * NCOLL];
        for (int k = 0; k < ncomm; k++)
            calls_make(&c[k], comms[k], salt_of(k));
        for (int k = 0; k < ncomm; k++)
            calls_start(&c[k], q + NCOLL * k);
        for (int i = 0; i < ncomm * NCOLL; i++)
            rev[i] = q[ncomm * NCOLL - 1 - i];
        MPI_Waitall(ncomm * NCOLL, rev, MPI_STATUSES_IGNORE);
        for (int k = 0; k < ncomm; k++)
            calls_check(&c[k], k), calls_free(&c[k]);
    }
    for (int k = 0; k < ncomm; k++) { /* round 1: one communicator after the other */
        calls c;
        MPI_Request q[NCOLL];
        calls_make(&c, comms[k], salt_of(k) + 50);
        calls_start(&c, q);
        MPI_Waitall(NCOLL, q, MPI_STATUSES_IGNORE);
        calls_check(&c, 100 + k);
        calls_free(&c);
    }
#ifdef ALLTOALLV_INIT
    for (int k = 0; k < ncomm; k++)
        if (strcmp(names[k], "cart_sub") == 0 || strcmp(names[k], "intercomm_merge") == 0)
            persistent_on(comms[k], salt_of(k) + 70);
#endif
    for (int k = 0; k < ncomm; k++)
        if (comms[k] != MPI_COMM_WORLD)
            MPI_Comm_free(&comms[k]);
    int total = client_outcome(argc > 1 ? "created_comms idup" : "created_comms");
    MPI_Finalize();
    return total ? 1 : 0;
}
