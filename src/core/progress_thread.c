/*
 * TUNA_PROGRESS=thread (docs/nonblocking.md, "Progress"): a thread that advances the
 * process's active tuna operations while the application computes or blocks in an MPI call
 * tuna does not see (MPI_Recv, a library collective), as MPI libraries' own progress
 * threads do. Without it an operation advances only inside tuna's calls and, under the
 * drop-in, the completion calls (MPI_Wait*, MPI_Test*).
 *
 * The thread calls MPI, so it needs MPI_THREAD_MULTIPLE (the drop-in asks for it in
 * MPI_Init when the setting is on); where the library provides less, or under SimGrid SMPI
 * (simulated ranks are not threads MPI may be called from), operations progress by polling
 * as without the setting, and TUNA_VERBOSE=1 says so once.
 *
 * It sleeps on a condition variable while no operation is active; while some are, it
 * progresses them every TUNA_PROGRESS_INTERVAL_US microseconds (a pause, not a busy loop: on
 * a node whose cores all run ranks a spinning thread would take a core from one of them).
 * MPI_Finalize stops it (tuna_progress_thread_stop, from the MPI_COMM_SELF callback) before
 * the remaining operations are drained.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c11 */
#include "op.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TUNA_PROGRESS_INTERVAL_US 20

enum { MODE_POLL, MODE_THREAD, MODE_INVALID };

static pthread_once_t mode_once = PTHREAD_ONCE_INIT;
static int mode;

static void read_mode(void)
{
    const char *s = getenv("TUNA_PROGRESS");
    if (!s || !*s || strcmp(s, "poll") == 0)
        mode = MODE_POLL;
    else if (strcmp(s, "thread") == 0)
        mode = MODE_THREAD;
    else
        mode = MODE_INVALID;
}

int tuna_progress_config_check(void)
{
    pthread_once(&mode_once, read_mode);
    if (mode == MODE_INVALID)
        return tuna_error_set(MPI_ERR_ARG, "TUNA_PROGRESS=%s: expected 'poll' or 'thread'",
                              getenv("TUNA_PROGRESS"));
    return MPI_SUCCESS;
}

bool tuna_progress_thread_wanted(void)
{
    pthread_once(&mode_once, read_mode);
    return mode == MODE_THREAD;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static bool started, tried, stopping;

static void *progress_main(void *arg)
{
    (void)arg;
    const struct timespec pause = {0, TUNA_PROGRESS_INTERVAL_US * 1000L};
    pthread_mutex_lock(&lock);
    while (!stopping) {
        if (!tuna_op_any_active()) {
            pthread_cond_wait(&wake, &lock);
            continue;
        }
        pthread_mutex_unlock(&lock);
        tuna_op_progress_all();
        nanosleep(&pause, NULL);
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Whether this process may call MPI from a second thread. */
static bool threads_allowed(int *provided)
{
    *provided = MPI_THREAD_SINGLE;
#ifdef SMPI_SHARED_MALLOC /* SimGrid SMPI's mpi.h */
    return false;
#else
    return PMPI_Query_thread(provided) == MPI_SUCCESS && *provided == MPI_THREAD_MULTIPLE;
#endif
}

void tuna_progress_thread_wake(void)
{
    if (!tuna_progress_thread_wanted())
        return;
    pthread_mutex_lock(&lock);
    if (!tried && !stopping) {
        tried = true;
        int provided;
        if (!threads_allowed(&provided))
            tuna_log(1, "TUNA_PROGRESS=thread: MPI provides thread level %d, not "
                        "MPI_THREAD_MULTIPLE (or this is SimGrid SMPI): operations progress "
                        "inside tuna's and the completion calls only",
                     provided);
        else if (pthread_create(&thread, NULL, progress_main, NULL) == 0)
            started = true;
        else
            tuna_log(1, "TUNA_PROGRESS=thread: the progress thread could not be created: "
                        "operations progress inside tuna's and the completion calls only");
    }
    if (started)
        pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
}

void tuna_progress_thread_stop(void)
{
    pthread_mutex_lock(&lock);
    stopping = true;
    const bool join = started;
    started = false;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    if (join)
        pthread_join(thread, NULL);
}
