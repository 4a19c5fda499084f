/*
 * What the preload's client tests share (they use no tuna header, as an application): this
 * rank's P, me and failure count, a local check that reports the first failures, the
 * watchdog that fails a hang (a start that is not local, or an operation nobody progresses),
 * and the run's outcome summed over the ranks.
 */
#ifndef TUNA_TEST_PRELOAD_CLIENT_H
#define TUNA_TEST_PRELOAD_CLIENT_H

#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static int failures, me, P;

/* A local check (no communication): case `it` of `what`. */
static void expect(int cond, const char *what, int it)
{
    if (!cond) {
        if (failures < 20)
            fprintf(stderr, "FAIL rank %d P=%d: %s (case %d)\n", me, P, what, it);
        failures++;
    }
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: HANG (a start that is not local, or no progress)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

/* MPI_Init done: P, me, and the watchdog armed for `seconds`. */
static inline void client_start(unsigned seconds)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}

/* Before MPI_Finalize: every rank's failures summed, the watchdog off, rank 0's verdict
 * line; the sum (nonzero: the run failed). */
static inline int client_outcome(const char *name)
{
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    alarm(0);
    if (me == 0)
        printf("%s P=%d: %s\n", name, P, total ? "FAILED" : "passed");
    return total;
}

#endif /* TUNA_TEST_PRELOAD_CLIENT_H */
