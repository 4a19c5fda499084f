/*
 * Set-up at creation from several threads at once (issue 56): under MPI_THREAD_MULTIPLE,
 * THREADS threads each create communicators on a parent of their own (MPI_Comm_dup and
 * MPI_Comm_split of it, ROUNDS times), concurrently; then the main thread runs MPI_Ialltoallv,
 * MPI_Ialltoall, MPI_Iallreduce and MPI_Iallgather on every communicator made, all outstanding
 * at once, bytes against PMPI_* (nb_calls.h). run_client.py checks that every call ran tuna's
 * rows from the first (run with TUNA_SETUP_AT_CREATION=1: the set-ups ran in the threads).
 */
#include "client.h"
#include "nb_calls.h"

#include <pthread.h>

#define THREADS 3
#define ROUNDS 4

static MPI_Comm parent[THREADS];
static MPI_Comm made[THREADS][2 * ROUNDS];

static void *creator(void *arg)
{
    const int t = (int)(size_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        MPI_Comm_dup(parent[t], &made[t][2 * r]);
        MPI_Comm_split(parent[t], (me + r) % 2, P - me, &made[t][2 * r + 1]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    client_start(240);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (me == 0)
            fprintf(stderr, "FAIL: the MPI library does not provide MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 1;
    }
    for (int t = 0; t < THREADS; t++)
        PMPI_Comm_dup(MPI_COMM_WORLD, &parent[t]); /* the parents: not set up (no matter) */
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        if (pthread_create(&th[t], NULL, creator, (void *)(size_t)t) != 0) {
            fprintf(stderr, "FAIL: pthread_create\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    enum { N = THREADS * 2 * ROUNDS };
    calls c[N];
    MPI_Request q[N * NCOLL];
    for (int k = 0; k < N; k++)
        calls_make(&c[k], made[k / (2 * ROUNDS)][k % (2 * ROUNDS)], k);
    for (int k = 0; k < N; k++)
        calls_start(&c[k], q + NCOLL * k);
    MPI_Waitall(N * NCOLL, q, MPI_STATUSES_IGNORE);
    for (int k = 0; k < N; k++) {
        calls_check(&c[k], k);
        calls_free(&c[k]);
        MPI_Comm_free(&made[k / (2 * ROUNDS)][k % (2 * ROUNDS)]);
    }
    for (int t = 0; t < THREADS; t++)
        MPI_Comm_free(&parent[t]);
    int total = client_outcome("created_threads");
    MPI_Finalize();
    return total ? 1 : 0;
}
