/*
 * A tool in front of the drop-in sees only the application's calls (issue 56): run with
 * LD_PRELOAD=libcall_counter.so:libtuna-preload.so. This application makes collectives that
 * tuna takes (blocking, nonblocking, on MPI_COMM_WORLD, a duplicate and a split of it, so
 * that tuna sets up its private communicators, agrees, discovers nodes and sends its
 * messages) and tallies its own calls of every name the counter intercepts; before
 * MPI_Finalize each rank compares the counter's counts with its tally: any difference is a
 * call tuna made through the profiled name, and the rank fails naming it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 128
static const char *tally_name[MAXN];
static long tally_count[MAXN];

static void tally(const char *name)
{
    int i = 0;
    while (i < MAXN && tally_name[i] && strcmp(tally_name[i], name) != 0)
        i++;
    if (i == MAXN) {
        fprintf(stderr, "tool_in_front: too many names\n");
        exit(2);
    }
    tally_name[i] = name;
    tally_count[i]++;
}

static long tallied(const char *name)
{
    for (int i = 0; i < MAXN && tally_name[i]; i++)
        if (strcmp(tally_name[i], name) == 0)
            return tally_count[i];
    return 0;
}

/* The application's own call of `fn`, tallied. */
#define APP(fn, ...) (tally(#fn), fn(__VA_ARGS__))

static int failures;
static void check(int ok, const char *what, int rank)
{
    if (!ok) {
        fprintf(stderr, "tool_in_front: rank %d: wrong result of %s\n", rank, what);
        failures++;
    }
}

/* Every collective tuna takes on comm, results checked (values from rank and index). */
static void round_on(MPI_Comm comm, int salt)
{
    int me, P;
    APP(MPI_Comm_rank, comm, &me);
    APP(MPI_Comm_size, comm, &P);
    int *s = malloc(sizeof(int) * (size_t)P * 8), *r1 = malloc(sizeof(int) * (size_t)P * 8),
        *r2 = malloc(sizeof(int) * (size_t)P * 8), *r3 = malloc(sizeof(int) * (size_t)P * 8);
    int *cnt = malloc(sizeof(int) * (size_t)P), *dsp = malloc(sizeof(int) * (size_t)P);
    if (!s || !r1 || !r2 || !r3 || !cnt || !dsp)
        exit(2);
    for (int i = 0; i < P * 8; i++)
        s[i] = me * 1000 + i + salt;
    for (int p = 0; p < P; p++) {
        cnt[p] = 2;
        dsp[p] = 2 * p;
    }
    int sum_in = me + salt, sum_out = -1, mine = me + salt, all[64];
    MPI_Request q[4];
    APP(MPI_Ialltoallv, s, cnt, dsp, MPI_INT, r1, cnt, dsp, MPI_INT, comm, &q[0]);
    APP(MPI_Ialltoall, s, 3, MPI_INT, r2, 3, MPI_INT, comm, &q[1]);
    APP(MPI_Iallreduce, &sum_in, &sum_out, 1, MPI_INT, MPI_SUM, comm, &q[2]);
    APP(MPI_Iallgather, &mine, 1, MPI_INT, all, 1, MPI_INT, comm, &q[3]);
    APP(MPI_Waitall, 4, q, MPI_STATUSES_IGNORE);
    int ok = sum_out == P * (P - 1) / 2 + P * salt;
    for (int p = 0; p < P; p++)
        ok = ok && r1[2 * p] == p * 1000 + 2 * me + salt && r2[3 * p] == p * 1000 + 3 * me + salt &&
             all[p] == p + salt;
    check(ok, "the nonblocking collectives", me);
    APP(MPI_Alltoallv, s, cnt, dsp, MPI_INT, r3, cnt, dsp, MPI_INT, comm);
    APP(MPI_Allreduce, &sum_in, &sum_out, 1, MPI_INT, MPI_SUM, comm);
    APP(MPI_Allgather, &mine, 1, MPI_INT, all, 1, MPI_INT, comm);
    ok = sum_out == P * (P - 1) / 2 + P * salt;
    for (int p = 0; p < P; p++)
        ok = ok && r3[2 * p + 1] == p * 1000 + 2 * me + 1 + salt && all[p] == p + salt;
    check(ok, "the blocking collectives", me);
    free(s);
    free(r1);
    free(r2);
    free(r3);
    free(cnt);
    free(dsp);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P;
    APP(MPI_Comm_rank, MPI_COMM_WORLD, &me);
    APP(MPI_Comm_size, MPI_COMM_WORLD, &P);
    if (P > 64) {
        fprintf(stderr, "tool_in_front: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long (*calls)(const char *) = NULL;
    const char *(*name)(int) = NULL;
    void *f = dlsym(RTLD_DEFAULT, "tuna_counter_calls"), *g = dlsym(RTLD_DEFAULT,
                                                                    "tuna_counter_name");
    if (!f || !g) {
        fprintf(stderr, "tool_in_front: run with LD_PRELOAD=libcall_counter.so:...\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memcpy(&calls, &f, sizeof f);
    memcpy(&name, &g, sizeof g);
    MPI_Comm dup, half;
    APP(MPI_Comm_dup, MPI_COMM_WORLD, &dup);
    APP(MPI_Comm_split, dup, me % 2, me, &half);
    for (int k = 0; k < 3; k++) {
        round_on(dup, k);     /* nonblocking first: tuna has not seen dup yet */
        round_on(half, k + 5);
        round_on(MPI_COMM_WORLD, k + 9);
    }
    /* The other creation calls the drop-in intercepts (and sets up at creation where that is
     * on): each seen once by the tool, tuna's set-up not at all. */
    MPI_Comm made[9];
    int nmade = 0, dims[1] = {P}, periods[1] = {0}, remain[1] = {1};
    int next = (me + 1) % P, prev = (me + P - 1) % P, w = 1;
    int *index = malloc(sizeof(int) * (size_t)P), *edges = malloc(sizeof(int) * (size_t)P);
    for (int i = 0; i < P; i++)
        index[i] = i + 1, edges[i] = (i + 1) % P;
    MPI_Group wg;
    APP(MPI_Comm_group, MPI_COMM_WORLD, &wg);
    APP(MPI_Comm_split_type, MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL,
        &made[nmade++]);
    APP(MPI_Comm_dup_with_info, MPI_COMM_WORLD, MPI_INFO_NULL, &made[nmade++]);
    APP(MPI_Comm_create, MPI_COMM_WORLD, wg, &made[nmade++]);
    APP(MPI_Comm_create_group, MPI_COMM_WORLD, wg, 5, &made[nmade++]);
    APP(MPI_Cart_create, MPI_COMM_WORLD, 1, dims, periods, 0, &made[nmade]);
    APP(MPI_Cart_sub, made[nmade], remain, &made[nmade + 1]);
    nmade += 2;
    APP(MPI_Graph_create, MPI_COMM_WORLD, P, index, edges, 0, &made[nmade++]);
    APP(MPI_Dist_graph_create, MPI_COMM_WORLD, 1, &me, &w, &next, &w, MPI_INFO_NULL, 0,
        &made[nmade++]);
    APP(MPI_Dist_graph_create_adjacent, MPI_COMM_WORLD, 1, &prev, &w, 1, &next, &w,
        MPI_INFO_NULL, 0, &made[nmade++]);
    APP(MPI_Group_free, &wg);
    free(index);
    free(edges);
    for (int k = 0; k < nmade; k++)
        round_on(made[k], 20 + k);
    if (P > 1) { /* the even and the odd ranks, merged */
        MPI_Comm inter, merged;
        APP(MPI_Intercomm_create, half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 56, &inter);
        APP(MPI_Intercomm_merge, inter, me % 2, &merged);
        round_on(merged, 40);
        APP(MPI_Comm_free, &merged);
        APP(MPI_Comm_free, &inter);
    }
    for (int k = 0; k < nmade; k++)
        APP(MPI_Comm_free, &made[k]);
    APP(MPI_Comm_free, &half);
    APP(MPI_Comm_free, &dup);
    /* Every intercepted name: the counter saw exactly the application's calls. */
    for (int i = 0; name(i); i++) {
        long seen = calls(name(i)), own = tallied(name(i));
        if (seen != own) {
            fprintf(stderr,
                    "tool_in_front: rank %d: the tool in front saw %ld calls of %s, the "
                    "application made %ld: tuna called the profiled name, not PMPI_*\n",
                    me, seen, name(i), own);
            failures++;
        }
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
