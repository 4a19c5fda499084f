/*
 * TUNA_STATS=FILE: the drop-in's statistics. Each communicator gets a record (comm_record,
 * made on its first counted call; records outlive their communicators) holding one row per
 * collective x path x label (calls, bytes, seconds). At MPI_Finalize rank 0 writes one file
 * with every rank's rows (from an MPI_COMM_SELF attribute delete callback, so Fortran's
 * MPI_FINALIZE, which calls PMPI_Finalize, is covered: init_finalize.c).
 */
#include "preload_internal.h"
#include "tuna_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *stat_coll_name(enum coll c)
{
    static const char *const others[] = {"ialltoallv", "ialltoall", "iallgather", "iallreduce",
                                         "alltoallw", "ialltoallw", "alltoallw_init",
                                         "ineighbor_alltoallv", "neighbor_alltoall",
                                         "ineighbor_alltoall"};
    return c >= NCOLL ? others[c - NCOLL] : tuna_collective_table[c].name;
}

/* The statistics collective of the nonblocking form of `c`. */
enum coll preload_stat_nonblocking(enum coll c)
{
    switch (c) {
    case COLL_ALLTOALL:
        return STAT_IALLTOALL;
    case COLL_ALLGATHER:
        return STAT_IALLGATHER;
    case COLL_ALLREDUCE:
        return STAT_IALLREDUCE;
    case COLL_NEIGHBOR_ALLTOALLV:
        return STAT_INEIGHBOR_ALLTOALLV;
    default:
        return STAT_IALLTOALLV;
    }
}

static const char *const path_name[] = {"tuna", "vendor", "fallback", "plan", "plan_init",
                                        "error"};

typedef struct stat_row {
    enum coll coll;
    enum path path;
    char label[LABEL_MAX];      /* algorithm string, or the fallback's reason */
    long long calls;
    unsigned long long bytes_sent, bytes_recv;
    double seconds;
} stat_row;

static comm_record *records, **records_tail = &records;
static int records_count;

bool preload_stats_enabled;

double preload_clock_now(void)
{
    return preload_stats_enabled ? PMPI_Wtime() : 0.0;
}

static stat_row *stat_find(comm_record *rec, enum coll coll, enum path path, const char *label)
{
    for (int i = 0; i < rec->nrows; i++)
        if (rec->rows[i].coll == coll && rec->rows[i].path == path &&
            strcmp(rec->rows[i].label, label) == 0)
            return &rec->rows[i];
    if (rec->nrows == rec->cap) {
        int cap = rec->cap ? 2 * rec->cap : 4;
        stat_row *r = realloc(rec->rows, sizeof *r * (size_t)cap);
        if (!r)
            return NULL;    /* statistics are best effort; the call itself goes on */
        rec->rows = r;
        rec->cap = cap;
    }
    stat_row *r = &rec->rows[rec->nrows++];
    memset(r, 0, sizeof *r);
    r->coll = coll;
    r->path = path;
    snprintf(r->label, sizeof r->label, "%s", label);
    return r;
}

static comm_record *record_new(MPI_Comm comm)
{
    comm_record *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->id = records_count++;
    PMPI_Comm_size(comm, &r->size);
    int len = 0;
    if (PMPI_Comm_get_name(comm, r->name, &len) != MPI_SUCCESS || len == 0)
        snprintf(r->name, sizeof r->name, "-");
    /* Names go into a tab-separated file. */
    for (char *c = r->name; *c; c++)
        if (*c == '\t' || *c == '\n')
            *c = ' ';
    *records_tail = r;
    records_tail = &r->next;
    return r;
}

void preload_account_rec(comm_record *rec, enum coll coll, enum path path, const char *label,
                         double secs, unsigned long long sent, unsigned long long recvd)
{
    stat_row *r = rec && preload_stats_enabled ? stat_find(rec, coll, path, label) : NULL;
    if (!r)
        return;
    r->calls++;
    r->seconds += secs;
    r->bytes_sent += sent;
    r->bytes_recv += recvd;
}

/* The communicator's statistics record, made on first use (NULL without memory). */
comm_record *preload_state_record(comm_state *s)
{
    if (!s->rec)
        s->rec = record_new(s->comm);
    return s->rec;
}

void preload_account(comm_state *s, enum coll coll, enum path path, const char *label,
                     double secs, unsigned long long sent, unsigned long long recvd)
{
    if (preload_stats_enabled)
        preload_account_rec(preload_state_record(s), coll, path, label, secs, sent, recvd);
}

const char *preload_ran_label(const char *asked, enum coll coll, int asked_alg, char *buf,
                              size_t len)
{
    const int ran = tuna_stats_current.algorithm;
    if (ran == asked_alg || ran < 0)
        return asked;
    const tuna_algorithm_info *a = tuna_algorithm_get((tuna_collective)coll, ran);
    /* A label longer than buf is cut: it is a statistics key, not data (the return value is
     * checked so that GCC's -Wformat-truncation knows the cut is intended). */
    int n = tuna_stats_current.fallback
                ? snprintf(buf, len, "%s (ran %s: %s)", asked, a ? a->name : "?",
                           tuna_stats_current.fallback)
            : tuna_stats_current.auto_source == TUNA_AUTO_SOURCE_LEARNING
                ? snprintf(buf, len, "%s (ran %s, learning)", asked, a ? a->name : "?")
                : snprintf(buf, len, "%s (ran %s)", asked, a ? a->name : "?");
    return n < 0 ? asked : buf;
}

/* Append to a growing text buffer; returns 0 on allocation failure. */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static int text_add(text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int text_add(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return 0;
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->len + (size_t)n + 1) * 2;
        char *s = realloc(t->s, cap);
        if (!s)
            return 0;
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
    return 1;
}

/*
 * TUNA_STATS=FILE: every rank formats its rows, rank 0 gathers them and
 * writes one tab-separated file (a per-rank table; sum rows for totals).
 */
void preload_write_stats(void)
{
    const char *path = getenv("TUNA_STATS");
    if (!path || !*path)
        return;
    int me = 0, P = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    PMPI_Comm_size(MPI_COMM_WORLD, &P);
    text t = {0};
    int ok = 1;
    for (comm_record *r = records; r && ok; r = r->next)
        for (int i = 0; i < r->nrows && ok; i++) {
            const stat_row *w = &r->rows[i];
            ok = text_add(&t, "%d\t%d\t%s\t%d\t%s\t%s\t%s\t%lld\t%llu\t%llu\t%.9f\n", me,
                          r->id, r->name, r->size, stat_coll_name(w->coll), path_name[w->path],
                          w->label, w->calls, w->bytes_sent, w->bytes_recv, w->seconds);
        }
    if (!ok)
        t.len = 0;    /* out of memory: this rank contributes no rows */
    int len = t.len > INT_MAX ? 0 : (int)t.len;
    int *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (me == 0) {
        lens = calloc((size_t)P, sizeof(int));
        displs = calloc((size_t)P, sizeof(int));
    }
    PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long long total = 0;
    if (me == 0 && lens && displs) {
        for (int r = 0; r < P; r++) {
            displs[r] = total > INT_MAX ? 0 : (int)total;
            total += lens[r];
        }
        if (total <= INT_MAX)
            all = malloc((size_t)total + 1);
        if (!all)
            for (int r = 0; r < P; r++)
                lens[r] = displs[r] = 0;   /* gather nothing; report below */
    }
    PMPI_Gatherv(t.s, len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (me == 0) {
        FILE *f = fopen(path, "w");
        if (!f) {
            preload_say("TUNA_STATS=%s: cannot open the file for writing", path);
        } else {
            fprintf(f, "# tuna-preload statistics: one row per rank x communicator x collective x "
                       "path; "
                       "bytes are this rank's send/receive totals\n");
            fprintf(f, "rank\tcomm\tcomm_name\tcomm_size\tcollective\tpath\talgorithm\tcalls"
                       "\tbytes_sent\tbytes_received\tseconds\n");
            if (all)
                fwrite(all, 1, (size_t)total, f);
            else
                fprintf(f, "# rows lost: out of memory on rank 0\n");
            fclose(f);
        }
    }
    free(all);
    free(lens);
    free(displs);
    free(t.s);
}

/* At MPI_Finalize (finalize_fn, init_finalize.c), after the states are released. */
void preload_stats_release(void)
{
    while (records) {
        comm_record *r = records;
        records = r->next;
        free(r->rows);
        free(r);
    }
    records_tail = &records;
}
