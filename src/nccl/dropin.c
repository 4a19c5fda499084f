/*
 * The drop-in over NCCL (docs/nccl.md, "The drop-in"): libtuna-nccl defines ncclAllGather,
 * ncclAllReduce and ncclAlltoAll, so a program that loads it ahead of NCCL (LD_PRELOAD, or
 * -ltuna-nccl before -lnccl) has those calls run by the row its environment names, in
 * tuna_options_parse()'s grammar: TUNA_NCCL_ALLGATHER, TUNA_NCCL_ALLREDUCE,
 * TUNA_NCCL_ALLTOALL. Unset, empty or "vendor": NCCL's own call (nothing has run on a GPU
 * yet; `auto`, which learns among the rows and NCCL's own, is there to be asked). A call the
 * named row does not serve (a value that does not parse, a row or parameter not on the NCCL
 * path, ncclAvg, half types, an argument tuna refuses) is NCCL's own too, counted as a fallback
 * with the reason: NCCL then answers it as it would without tuna. NCCL's own is reached by its
 * profiling names (pncclAllGather & co.: NCCL defines the entry points as weak aliases of
 * them), so the vendor rows and the pass-through never come back here. Every other NCCL
 * function is NCCL's, untouched.
 *
 * Statistics (TUNA_NCCL_STATS=FILE): rows per process x communicator x collective x path x
 * algorithm, appended to FILE at exit (one write per process; the process that creates FILE
 * writes the header). TUNA_VERBOSE=1 prints what runs, once per collective, path and
 * algorithm. Unset, no call reads a clock.
 */
#define _GNU_SOURCE
#include "../../include/tuna_nccl.h"
#include "nccl_rows.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { DI_ALLGATHER, DI_ALLREDUCE, DI_ALLTOALL, DI_COUNT };
enum { PATH_TUNA, PATH_VENDOR, PATH_FALLBACK, PATH_ERROR };

static const struct {
    const char *env, *entry, *stat;
    tuna_collective coll;
} colls[DI_COUNT] = {
    {"TUNA_NCCL_ALLGATHER", "ncclAllGather", "allgather", TUNA_ALLGATHER},
    {"TUNA_NCCL_ALLREDUCE", "ncclAllReduce", "allreduce", TUNA_ALLREDUCE},
    {"TUNA_NCCL_ALLTOALL", "ncclAlltoAll", "alltoall", TUNA_ALLTOALL},
};
static const char *const path_names[] = {"tuna", "vendor", "fallback", "error"};

/* What the environment asks, read once. */
static struct {
    bool tuna;       /* a row that parsed (else NCCL's own) */
    tuna_options opt;
    char label[96];  /* the value as given, or the reason it is not used */
    bool bad;        /* the value did not parse: every call is a fallback */
} choice[DI_COUNT];
static bool stats_on, verbose;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void read_environment(void)
{
    const char *s = getenv("TUNA_NCCL_STATS");
    stats_on = s && *s;
    s = getenv("TUNA_VERBOSE");
    verbose = s && *s && strcmp(s, "0") != 0;
    for (int c = 0; c < DI_COUNT; c++) {
        const char *v = getenv(colls[c].env);
        snprintf(choice[c].label, sizeof choice[c].label, "%s", colls[c].entry);
        if (!v || !*v || !strcmp(v, "vendor"))
            continue;
        int rc = tuna_options_parse(v, colls[c].coll, &choice[c].opt);
        if (rc != MPI_SUCCESS) {
            choice[c].bad = true;
            snprintf(choice[c].label, sizeof choice[c].label, "%s=%s does not parse",
                     colls[c].env, v);
            fprintf(stderr, "tuna-nccl: %s=%s: %s; NCCL's own %s runs\n", colls[c].env, v,
                    tuna_error_string(rc), colls[c].entry);
            continue;
        }
        choice[c].tuna = true;
        snprintf(choice[c].label, sizeof choice[c].label, "%s", v);
    }
}

/* ---- statistics ---- */

typedef struct di_record {
    ncclComm_t comm;
    int comm_no, rank, size, coll, path;
    char label[256];
    long calls;
    unsigned long long sent, received;
    double seconds;
} di_record;

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static di_record *records;
static size_t nrecords, records_cap;
/* The communicators, numbered in order of their first call here, with their rank and size
 * asked of NCCL then (a communicator destroyed and another made at its address keeps the
 * first one's: statistics only). */
typedef struct di_comm {
    ncclComm_t comm;
    int rank, size;
} di_comm;
static di_comm *comms;
static int ncomms, comms_cap;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* comm's entry (under stats_lock), made at its first call; NULL without memory. */
static const di_comm *comm_entry(ncclComm_t comm, int *no)
{
    for (int i = 0; i < ncomms; i++)
        if (comms[i].comm == comm)
            return &comms[*no = i];
    if (ncomms == comms_cap) {
        int n = comms_cap ? 2 * comms_cap : 8;
        di_comm *p = realloc(comms, (size_t)n * sizeof *p);
        if (!p)
            return NULL;
        comms = p;
        comms_cap = n;
    }
    di_comm *c = &comms[*no = ncomms++];
    *c = (di_comm){comm, -1, -1};
    if (comm) {
        ncclCommUserRank(comm, &c->rank);
        ncclCommCount(comm, &c->size);
    }
    return c;
}

/* One call of `count` elements of `type` counted (and, the first time a collective takes this
 * path and label, said under TUNA_VERBOSE): this rank's bytes sent and received. */
static void account(int coll, int path, const char *label, ncclComm_t comm, double t0,
                    size_t count, ncclDataType_t type)
{
    if (!stats_on && !verbose)
        return;
    const double dt = stats_on ? now() - t0 : 0;
    pthread_mutex_lock(&stats_lock);
    int no = -1;
    const di_comm *c = comm_entry(comm, &no);
    const int rank = c ? c->rank : -1, size = c ? c->size : -1;
    const unsigned long long b = (unsigned long long)count * tuna_nccl_type_bytes(type),
                             P = size > 0 ? (unsigned)size : 1;
    const unsigned long long sent = coll == DI_ALLTOALL ? b * P : b,
                             received = coll == DI_ALLREDUCE ? b : b * P;
    di_record *r = NULL;
    bool first_label = true;
    for (size_t i = 0; i < nrecords; i++) {
        di_record *q = &records[i];
        if (q->coll == coll && q->path == path && !strcmp(q->label, label)) {
            first_label = false;
            if (q->comm_no == no) {
                r = q;
                break;
            }
        }
    }
    if (!r && nrecords == records_cap) {
        size_t n = records_cap ? 2 * records_cap : 16;
        di_record *p = realloc(records, n * sizeof *p);
        if (p) {
            records = p;
            records_cap = n;
        }
    }
    if (!r && nrecords < records_cap) {
        r = &records[nrecords++];
        *r = (di_record){.comm = comm, .comm_no = no, .rank = rank, .size = size, .coll = coll,
                         .path = path};
        snprintf(r->label, sizeof r->label, "%s", label);
    }
    if (r) {
        r->calls++;
        r->sent += sent;
        r->received += received;
        r->seconds += dt;
    }
    pthread_mutex_unlock(&stats_lock);
    if (verbose && first_label)
        fprintf(stderr, "tuna-nccl: rank %d of %d: %s: %s (%s)\n", rank, size,
                colls[coll].entry, path == PATH_TUNA ? "tuna's row" : path_names[path], label);
}

/* At exit: this process's rows appended to TUNA_NCCL_STATS in one write. */
__attribute__((destructor)) static void write_statistics(void)
{
    const char *file = getenv("TUNA_NCCL_STATS");
    if (!stats_on || !file || !*file || nrecords == 0)
        return;
    size_t cap = 256 + nrecords * 400, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return;
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_EXCL, 0644);
    if (fd >= 0)
        len += (size_t)snprintf(buf, cap, "# tuna-nccl statistics: one row per process x "
                                "communicator x collective x path x algorithm; seconds are "
                                "host time in the call (enqueueing)\npid\tcomm\trank\tsize\t"
                                "collective\tpath\talgorithm\tcalls\tbytes_sent\t"
                                "bytes_received\tseconds\n");
    else if (errno == EEXIST)
        fd = open(file, O_WRONLY | O_APPEND);
    if (fd < 0) {
        fprintf(stderr, "tuna-nccl: cannot write the statistics file %s: %s\n", file,
                strerror(errno));
        free(buf);
        return;
    }
    for (size_t i = 0; i < nrecords && len < cap; i++) {
        const di_record *r = &records[i];
        len += (size_t)snprintf(buf + len, cap - len, "%ld\t%d\t%d\t%d\t%s\t%s\t%s\t%ld\t%llu\t"
                                "%llu\t%.6f\n", (long)getpid(), r->comm_no, r->rank, r->size,
                                colls[r->coll].stat, path_names[r->path], r->label, r->calls,
                                r->sent, r->received, r->seconds);
    }
    if (len > cap)
        len = cap;
    if (write(fd, buf, len) != (ssize_t)len)
        fprintf(stderr, "tuna-nccl: writing the statistics file %s failed\n", file);
    close(fd);
    free(buf);
}

/* ---- the entry points ---- */

/* The NCCL result of tuna's failed call that had begun posting. */
static ncclResult_t as_nccl(int rc)
{
    if (tuna_nccl_last_result != ncclSuccess)
        return tuna_nccl_last_result;
    switch (rc) {
    case MPI_ERR_NO_MEM:
        return ncclSystemError;
    case MPI_ERR_OTHER:
        return ncclUnhandledCudaError; /* NCCL's failures set tuna_nccl_last_result */
    default:
        return ncclInternalError;
    }
}

/* tuna's row where the environment names one; NCCL's own (`library`, which runs it) where it
 * does not, or where tuna refuses the call before posting anything. */
#define DROPIN_CALL(coll, count, type, comm, tuna_call, library_call)                              \
    do {                                                                                           \
        pthread_once(&once, read_environment);                                                     \
        const double t0 = stats_on ? now() : 0;                                                    \
        if (!choice[coll].tuna) {                                                                  \
            ncclResult_t res = library_call;                                                       \
            account(coll, choice[coll].bad ? PATH_FALLBACK : PATH_VENDOR, choice[coll].label,      \
                    comm, t0, count, type);                                                        \
            return res;                                                                            \
        }                                                                                          \
        tuna_nccl_posted = false;                                                                  \
        tuna_nccl_last_result = ncclSuccess;                                                       \
        const int rc = tuna_call;                                                                  \
        if (rc == MPI_SUCCESS) {                                                                   \
            char ran[160];                                                                         \
            if (tuna_nccl_auto_ran && (stats_on || verbose))                                       \
                snprintf(ran, sizeof ran, "%s (ran %s)", choice[coll].label, tuna_nccl_auto_ran);  \
            account(coll, PATH_TUNA, tuna_nccl_auto_ran ? ran : choice[coll].label, comm, t0,      \
                    count, type);                                                                  \
            return ncclSuccess;                                                                    \
        }                                                                                          \
        if (tuna_nccl_posted) {                                                                    \
            account(coll, PATH_ERROR, choice[coll].label, comm, t0, count, type);                  \
            return as_nccl(rc);                                                                    \
        }                                                                                          \
        char why[256];                                                                             \
        snprintf(why, sizeof why, "%s", tuna_error_string(rc));                                    \
        ncclResult_t res = library_call;                                                           \
        account(coll, PATH_FALLBACK, why, comm, t0, count, type);                                  \
        return res;                                                                                \
    } while (0)

#pragma GCC visibility push(default)

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    DROPIN_CALL(DI_ALLGATHER, sendcount, datatype, comm,
                tuna_nccl_allgather(sendbuff, recvbuff, sendcount, datatype, comm, stream,
                                    &choice[DI_ALLGATHER].opt),
                pncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm, stream));
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream)
{
    DROPIN_CALL(DI_ALLREDUCE, count, datatype, comm,
                tuna_nccl_allreduce(sendbuff, recvbuff, count, datatype, op, comm, stream,
                                    &choice[DI_ALLREDUCE].opt),
                pncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm, stream));
}

ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    DROPIN_CALL(DI_ALLTOALL, count, datatype, comm,
                tuna_nccl_alltoall(sendbuff, recvbuff, count, datatype, comm, stream,
                                   &choice[DI_ALLTOALL].opt),
                pncclAlltoAll(sendbuff, recvbuff, count, datatype, comm, stream));
}

#pragma GCC visibility pop
