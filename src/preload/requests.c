/*
 * The drop-in's proxy requests, their progress, and the MPI calls that complete, start, free
 * or cancel requests (the collectives' files hand their operations over through
 * preload_proxy_for_op and preload_plan_request).
 * tuna's operations behind the application's MPI requests: MPI_Ialltoallv (and the other
 * nonblocking collectives) that tuna takes (a tuna_request), and MPI_Alltoallv_init (MPI 4) /
 * MPIX_Alltoallv_init (Open MPI's pcollreq extension; the other persistent collectives
 * likewise) that tuna takes (a tuna plan). The application holds a proxy: a real
 * request of the library, a 0-byte receive from this process on a private duplicate of
 * MPI_COMM_SELF under a tag of its own, which completes when the preload sends it its
 * message, once tuna's operation has finished. Starts are local (MPI_Ialltoallv; MPI_Start of
 * a plan whose algorithm has a step form: docs/nonblocking.md). While an operation is in
 * flight, the completion calls (MPI_Wait*, MPI_Test*, MPI_Request_get_status) progress every
 * one of them and poll the library; the library completes the proxies like any request
 * (arrays mixed with point-to-point requests, statuses, MPI_Request_free). Other candidates
 * for the proxy misbehave in MPICH 4.0.2: a started persistent send to MPI_PROC_NULL looks
 * inactive to Waitany/Testany/Waitsome/Testsome (MPI_UNDEFINED), and MPICH's own persistent
 * collectives (e.g. a barrier on MPI_COMM_SELF) make MPI_Testall return MPI_ERR_IN_STATUS.
 *
 * Threads: the list is guarded by one mutex; progress holds it (one thread progresses at a
 * time), error handlers run outside it.
 */
#include "preload_internal.h"
#include "tuna_internal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct proxy_req {
    MPI_Request req;                /* the application's handle: the proxy */
    int tag;                        /* the proxy's own tag on proxy_comm */
    enum coll coll;                 /* the collective (its blocking form) */
    enum coll stat;                 /* its statistics row (coll unless an _as call said) */
    bool persistent;                /* a plan (else one nonblocking call) */
    bool in_flight;                 /* started, tuna's operation not finished yet */
    bool freed;                     /* MPI_Request_free'd in flight: the proxy is completed and
                                       the entry dropped when the operation finishes */
    int rc;                         /* the finished operation's outcome, for the completion */
    tuna_plan plan;                 /* persistent */
    tuna_request op;                /* nonblocking */
    preload_owned *owned;           /* nonblocking: what the drop-in made for the call (the
                                       count arrays of MPI_Ineighbor_alltoall), freed when the
                                       operation finishes */
    MPI_Comm comm;                  /* whose error handler reports a failure */
    comm_record *rec;               /* statistics (records outlive communicators) */
    char label[LABEL_MAX];          /* what runs */
    int algorithm;                  /* and its index (-1: unknown) */
    unsigned long long sent, recvd; /* this rank's bytes in one exchange */
    double t0;                      /* the start */
    struct proxy_req *next;
} proxy_req;

static proxy_req *proxies;
static int nproxies, nin_flight;
static pthread_mutex_t proxy_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Comm proxy_comm = MPI_COMM_NULL;
static int proxy_tag_ub = 32767, next_proxy_tag = 2;

/* Linear: a program holds few tuna requests, and other requests pay nothing while there are
 * none (the callers test nproxies first). */
static proxy_req *proxy_find(MPI_Request req)
{
    if (req == MPI_REQUEST_NULL)
        return NULL;
    pthread_mutex_lock(&proxy_lock);
    proxy_req *e = proxies;
    while (e && e->req != req)
        e = e->next;
    pthread_mutex_unlock(&proxy_lock);
    return e;
}

static bool proxy_tag_used(int tag)
{
    for (proxy_req *e = proxies; e; e = e->next)
        if (e->tag == tag)
            return true;
    return false;
}

/* A new entry with its proxy (persistent: MPI_Recv_init; else posted now), or NULL with the
 * error in *rc. */
static proxy_req *proxy_new(enum coll coll, bool persistent, int *rc)
{
    proxy_req *e = calloc(1, sizeof *e);
    if (!e) {
        *rc = MPI_ERR_NO_MEM;
        return NULL;
    }
    pthread_mutex_lock(&proxy_lock);
    *rc = MPI_SUCCESS;
    if (proxy_comm == MPI_COMM_NULL) {
        if ((*rc = PMPI_Comm_dup(MPI_COMM_SELF, &proxy_comm)) != MPI_SUCCESS) {
            proxy_comm = MPI_COMM_NULL;
        } else {
            int *ub = NULL, flag = 0;
            if (PMPI_Comm_get_attr(proxy_comm, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag &&
                ub && *ub > 2)
                proxy_tag_ub = *ub;
        }
    }
    if (*rc == MPI_SUCCESS) {
        /* A tag no live proxy holds: an operation finishing before an earlier one completes
         * its own proxy, never the earlier one's. */
        int tag = next_proxy_tag;
        while (proxy_tag_used(tag))
            tag = tag >= proxy_tag_ub ? 2 : tag + 1;
        next_proxy_tag = tag >= proxy_tag_ub ? 2 : tag + 1;
        e->tag = tag;
        *rc = persistent ? PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, tag, proxy_comm, &e->req)
                         : PMPI_Irecv(NULL, 0, MPI_BYTE, 0, tag, proxy_comm, &e->req);
    }
    if (*rc != MPI_SUCCESS) {
        pthread_mutex_unlock(&proxy_lock);
        free(e);
        return NULL;
    }
    e->coll = coll;
    e->stat = coll;
    e->persistent = persistent;
    e->algorithm = -1;
    e->next = proxies;
    proxies = e;
    nproxies++;
    pthread_mutex_unlock(&proxy_lock);
    return e;
}

/* Caller holds the lock. */
static void proxy_unlink(proxy_req *e)
{
    for (proxy_req **p = &proxies; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            nproxies--;
            break;
        }
}

static void proxy_drop(proxy_req *e)
{
    pthread_mutex_lock(&proxy_lock);
    proxy_unlink(e);
    pthread_mutex_unlock(&proxy_lock);
    free(e);
}

/* Complete e's started proxy (every start gets exactly one such message). */
static int proxy_complete(const proxy_req *e)
{
    MPI_Request r;
    int rc = PMPI_Isend(NULL, 0, MPI_BYTE, 0, e->tag, proxy_comm, &r);
    return rc == MPI_SUCCESS ? PMPI_Request_free(&r) : rc;
}

/* e's operation finished with rc (caller holds the lock): counted, its proxy completed. */
static void proxy_finished(proxy_req *e, int rc)
{
    e->in_flight = false;
    nin_flight--;
    e->rc = rc;
    preload_owned_free(e->owned); /* the operation no longer reads it */
    e->owned = NULL;
    if (rc != MPI_SUCCESS) {
        preload_account_rec(e->rec, e->persistent ? e->stat : e->coll, PATH_ERROR, e->label,
                            preload_clock_now() - e->t0, 0, 0);
    } else {
        /* A nonblocking call's label says what its start chose (preload_proxy_for_op): the
         * thread's record may be another call's by now. */
        char buf[LABEL_MAX];
        preload_account_rec(e->rec, e->stat, e->persistent ? PATH_PLAN : PATH_TUNA,
                            e->persistent ? preload_ran_label(e->label, e->coll, e->algorithm,
                                                              buf, sizeof buf)
                                          : e->label,
                            preload_clock_now() - e->t0, e->sent, e->recvd);
    }
    int prc = proxy_complete(e);
    if (prc != MPI_SUCCESS && e->rc == MPI_SUCCESS)
        e->rc = prc;
}

/* Advance every operation in flight once (never blocks). */
static void proxies_progress(void)
{
    pthread_mutex_lock(&proxy_lock);
    for (proxy_req *e = proxies, *next; e; e = next) {
        next = e->next;
        if (e->in_flight) {
            int flag = 0;
            int rc = e->persistent ? tuna_test(e->plan, &flag)
                                   : tuna_request_test(&e->op, &flag);
            if (flag || rc != MPI_SUCCESS)
                proxy_finished(e, rc);
        }
        /* A request the application freed in flight: its proxy is still ours (freeing an
         * active receive trips an assertion in MPICH 4.0.2 when its message arrives), so
         * it is completed here, after its message. */
        if (e->freed && !e->in_flight) {
            (void)PMPI_Wait(&e->req, MPI_STATUS_IGNORE);
            proxy_unlink(e);
            free(e);
        }
    }
    pthread_mutex_unlock(&proxy_lock);
}

/* The entries of a request array, before a completion call (NULL where a request is not a
 * proxy; no allocation when the program holds none). */
static proxy_req **proxies_of(int count, const MPI_Request *reqs)
{
    if (!nproxies || count <= 0 || !reqs)
        return NULL;
    proxy_req **e = calloc((size_t)count, sizeof *e);
    if (e)
        for (int i = 0; i < count; i++)
            e[i] = proxy_find(reqs[i]);
    return e;
}

/* After a completion call completed the proxy of entry e (its status at st, or NULL): the
 * operation's outcome (its failure raised on its communicator), the entry dropped unless
 * persistent. */
static int proxy_report(proxy_req *e, MPI_Status *st)
{
    if (!e)
        return MPI_SUCCESS;
    int rc = e->rc;
    e->rc = MPI_SUCCESS;
    MPI_Comm comm = e->comm;
    char msg[700];
    if (rc != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "%s (%s): %s", tuna_collective_table[e->coll].name, e->label,
                 tuna_error_string(rc));
    if (!e->persistent)
        proxy_drop(e);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    if (st && st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = rc;
    return preload_raise_error(comm, rc, msg);
}

/* Report the completed entries of an array call: indices idx[0..n) (all when idx is NULL). */
static int proxies_report(proxy_req **e, int n, const int *idx, MPI_Status *statuses)
{
    int first = MPI_SUCCESS;
    for (int k = 0; e && k < n; k++) {
        const int i = idx ? idx[k] : k;
        int rc = proxy_report(e[i], statuses != MPI_STATUSES_IGNORE ? &statuses[i] : NULL);
        if (first == MPI_SUCCESS)
            first = rc;
    }
    free(e);
    return first != MPI_SUCCESS && statuses != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS : first;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!nproxies || !request)
        return PMPI_Wait(request, status);
    proxy_req *e = proxy_find(*request);
    int rc = MPI_SUCCESS, flag = 0;
    while (nin_flight && !flag && rc == MPI_SUCCESS) {
        proxies_progress();
        rc = PMPI_Test(request, &flag, status);
    }
    if (!flag && rc == MPI_SUCCESS)
        rc = PMPI_Wait(request, status);
    return rc == MPI_SUCCESS ? proxy_report(e, status) : rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (!nproxies || !request)
        return PMPI_Test(request, flag, status);
    proxy_req *e = proxy_find(*request);
    proxies_progress();
    int rc = PMPI_Test(request, flag, status);
    return rc == MPI_SUCCESS && *flag ? proxy_report(e, status) : rc;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    proxy_req **e = proxies_of(count, array_of_requests);
    if (!e)
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    int rc = MPI_SUCCESS, flag = 0;
    while (nin_flight && !flag && rc == MPI_SUCCESS) {
        proxies_progress();
        rc = PMPI_Testall(count, array_of_requests, &flag, array_of_statuses);
    }
    if (!flag && rc == MPI_SUCCESS)
        rc = PMPI_Waitall(count, array_of_requests, array_of_statuses);
    if (rc != MPI_SUCCESS) {
        free(e);
        return rc;
    }
    return proxies_report(e, count, NULL, array_of_statuses);
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                MPI_Status array_of_statuses[])
{
    proxy_req **e = proxies_of(count, array_of_requests);
    if (!e)
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    proxies_progress();
    int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    if (rc != MPI_SUCCESS || !*flag) {
        free(e);
        return rc;
    }
    return proxies_report(e, count, NULL, array_of_statuses);
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    proxy_req **e = proxies_of(count, array_of_requests);
    if (!e)
        return PMPI_Waitany(count, array_of_requests, index, status);
    int rc = MPI_SUCCESS, flag = 0;
    while (nin_flight && !flag && rc == MPI_SUCCESS) {
        proxies_progress();
        rc = PMPI_Testany(count, array_of_requests, index, &flag, status);
    }
    if (!flag && rc == MPI_SUCCESS)
        rc = PMPI_Waitany(count, array_of_requests, index, status);
    if (rc == MPI_SUCCESS && index && *index != MPI_UNDEFINED)
        rc = proxy_report(e[*index], status);
    free(e);
    return rc;
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                MPI_Status *status)
{
    proxy_req **e = proxies_of(count, array_of_requests);
    if (!e)
        return PMPI_Testany(count, array_of_requests, index, flag, status);
    proxies_progress();
    int rc = PMPI_Testany(count, array_of_requests, index, flag, status);
    if (rc == MPI_SUCCESS && *flag && index && *index != MPI_UNDEFINED)
        rc = proxy_report(e[*index], status);
    free(e);
    return rc;
}

/* After a Waitsome or Testsome that completed outcount requests (their positions in
 * indices): each proxy among them reports into its status (statuses are indexed by the
 * position in indices); the first error makes the call's MPI_ERR_IN_STATUS where there are
 * statuses. */
static int proxies_report_some(proxy_req **e, int outcount, const int indices[],
                               MPI_Status statuses[])
{
    int first = MPI_SUCCESS;
    for (int k = 0; k < outcount; k++) {
        int r = proxy_report(e[indices[k]], statuses != MPI_STATUSES_IGNORE ? &statuses[k] : NULL);
        if (first == MPI_SUCCESS)
            first = r;
    }
    return first != MPI_SUCCESS && statuses != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS : first;
}

/* The end of MPI_Waitsome and MPI_Testsome (rc: the library's): the completed proxies'
 * outcomes reported, e freed. */
static int proxies_some_end(proxy_req **e, int rc, int outcount, const int indices[],
                            MPI_Status statuses[])
{
    if (rc == MPI_SUCCESS && outcount != MPI_UNDEFINED)
        rc = proxies_report_some(e, outcount, indices, statuses);
    free(e);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    proxy_req **e = proxies_of(incount, array_of_requests);
    if (!e)
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    int rc = MPI_SUCCESS;
    *outcount = 0;
    while (nin_flight && *outcount == 0 && rc == MPI_SUCCESS) {
        proxies_progress();
        rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
    }
    if (*outcount == 0 && rc == MPI_SUCCESS)
        rc = PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
    return proxies_some_end(e, rc, *outcount, array_of_indices, array_of_statuses);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    proxy_req **e = proxies_of(incount, array_of_requests);
    if (!e)
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                             array_of_statuses);
    proxies_progress();
    int rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices,
                           array_of_statuses);
    return proxies_some_end(e, rc, *outcount, array_of_indices, array_of_statuses);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (nin_flight) /* a program polling any request lets tuna's operations go on */
        proxies_progress();
    return PMPI_Request_get_status(request, flag, status);
}

int MPI_Cancel(MPI_Request *request)
{
    proxy_req *e = nproxies && request ? proxy_find(*request) : NULL;
    if (!e)
        return PMPI_Cancel(request);
    return preload_raise_error(e->comm, MPI_ERR_REQUEST,
                               "MPI_Cancel: the request is a collective's (MPI_Ialltoallv, "
                               "MPI_Ialltoall, MPI_Iallgather, MPI_Iallreduce, "
                               "MPI_Ineighbor_alltoall(v) or a persistent one of these), which "
                               "cannot be cancelled");
}

/*
 * A new proxy (as proxy_new) for a call on comm, s's communicator, that moves sent and recvd
 * bytes: for its tuna operation op (nonblocking) or its plan (persistent). What the two kinds
 * share, failure too: the operation then runs on (its peers take part) and is completed here,
 * or the plan is freed, before the error is raised (its handler may not return); NULL, with
 * *rc the code to return.
 */
static proxy_req *proxy_for_call(comm_state *s, enum coll coll, bool persistent,
                                 tuna_request op, tuna_plan plan, MPI_Comm comm,
                                 unsigned long long sent, unsigned long long recvd, int *rc)
{
    proxy_req *e = proxy_new(coll, persistent, rc);
    if (!e) {
        char msg[100];
        if (persistent) {
            tuna_plan_free(&plan);
            snprintf(msg, sizeof msg, "no persistent request for the %s plan",
                     tuna_collective_table[coll].name);
        } else {
            tuna_request_wait(&op);
            snprintf(msg, sizeof msg, "no request for the nonblocking %s",
                     tuna_collective_table[coll].name);
        }
        *rc = preload_raise_error(comm, *rc, msg);
        return NULL;
    }
    if (persistent)
        e->plan = plan;
    else
        e->op = op;
    e->comm = comm;
    e->rec = preload_state_record(s);
    e->sent = sent;
    e->recvd = recvd;
    return e;
}

int preload_proxy_for_op(comm_state *s, enum coll coll, tuna_request op, MPI_Comm comm,
                         double t0, unsigned long long sent, unsigned long long recvd,
                         MPI_Request *request)
{
    return preload_proxy_for_op_owning(s, coll, preload_stat_nonblocking(coll), op, NULL, comm,
                                       t0, sent, recvd, request);
}


int preload_proxy_for_op_owning(comm_state *s, enum coll coll, enum coll stat, tuna_request op,
                                preload_owned *owned, MPI_Comm comm, double t0, unsigned long long sent,
                                unsigned long long recvd, MPI_Request *request)
{
    int rc;
    proxy_req *e = proxy_for_call(s, coll, false, op, NULL, comm, sent, recvd, &rc);
    if (!e) { /* proxy_for_call waited for op: nothing reads owned any more */
        preload_owned_free(owned);
        return rc;
    }
    e->owned = owned;
    e->stat = stat;
    const choice *ch = &s->ch[coll];
    e->t0 = t0;
    e->algorithm = ch->opt.algorithm;
    /* What the start chose (the thread's record is the start's until the next call). */
    char buf[LABEL_MAX];
    snprintf(e->label, sizeof e->label, "%s",
             preload_ran_label(ch->label, coll, ch->opt.algorithm, buf, sizeof buf));
    pthread_mutex_lock(&proxy_lock);
    e->in_flight = true;
    nin_flight++;
    pthread_mutex_unlock(&proxy_lock);
    *request = e->req;
    return MPI_SUCCESS;
}

void preload_owned_free(preload_owned *o)
{
    if (!o)
        return;
    for (int i = 0; i < 2; i++)
        if (o->type[i] != MPI_DATATYPE_NULL)
            PMPI_Type_free(&o->type[i]);
    free(o);
}

/* At MPI_Finalize, first: the operations still in flight (a freed request's) finish, their
 * peers being in them. */
void preload_proxies_drain(void)
{
    while (nin_flight)
        proxies_progress();
}

/* At MPI_Finalize, after the operations still in flight (a freed request's) finished, before
 * the statistics are written: the plans the application never freed (their proxies are the
 * library's). */
void preload_proxies_release(void)
{
    pthread_mutex_lock(&proxy_lock);
    while (proxies) {
        proxy_req *e = proxies;
        proxies = e->next;
        if (e->persistent)
            tuna_plan_free(&e->plan);
        free(e);
    }
    nproxies = 0;
    pthread_mutex_unlock(&proxy_lock);
}

#ifdef TUNA_PRELOAD_PERSISTENT
static const char *const plan_source_name[] = {"forced", "estimate", "measure", "wisdom"};

/* The plan's algorithm as an option string (its resolved parameters), and how it was chosen. */
static const char *plan_label(tuna_plan plan, char *buf, size_t len, int *algorithm)
{
    tuna_plan_info info;
    snprintf(buf, len, "?");
    *algorithm = -1;
    if (tuna_plan_get_info(plan, &info) != MPI_SUCCESS)
        return "?";
    const tuna_algorithm_info *a = tuna_algorithm_get(info.collective, info.algorithm);
    if (!a)
        return "?";
    *algorithm = info.algorithm;
    tuna_options o = {.collective = info.collective, .algorithm = info.algorithm};
    for (int i = 0; i < a->nparams && i < TUNA_MAX_PARAMS; i++) {
        o.set |= 1u << i;
        o.value[i] = info.params[i];
    }
    if (tuna_options_format(&o, buf, len) != MPI_SUCCESS)
        snprintf(buf, len, "%s", a->name);
    return info.source >= 0 && info.source <= 3 ? plan_source_name[info.source] : "?";
}

int preload_plan_request(comm_state *s, enum coll coll, enum coll stat, tuna_plan plan,
                         MPI_Comm comm, double t0, unsigned long long sent,
                         unsigned long long recvd, MPI_Request *request)
{
    int rc;
    /* The bytes are fixed at init, so counted once for every start. */
    proxy_req *e =
        proxy_for_call(s, coll, true, TUNA_REQUEST_NULL, plan, comm, sent, recvd, &rc);
    if (!e)
        return rc;
    e->stat = stat;
    char label[LABEL_MAX + 32];
    const char *source = plan_label(plan, e->label, sizeof e->label, &e->algorithm);
    snprintf(label, sizeof label, "%s (%s)", e->label, source);
    preload_account(s, stat, PATH_PLAN_INIT, label, preload_clock_now() - t0, 0, 0);
    if (tuna_verbosity() >= 1 && preload_comm_rank0(comm))
        preload_say("communicator %d '%s': %s_init%s: plan %s (%s)", s->rec ? s->rec->id : -1,
                    s->rec ? s->rec->name : "-", tuna_collective_table[coll].name,
                    stat == coll ? "" : " (alltoallw)", e->label, source);
    *request = e->req;
    return MPI_SUCCESS;
}

void preload_library_init_done(comm_state *s, enum coll coll, int why, MPI_Comm comm,
                               double t0)
{
    char label[LABEL_MAX + 32];
    if (why >= 0) {
        preload_log_fallback(comm, s, coll, (enum reason)why);
        snprintf(label, sizeof label, "%s (%s_init)", preload_reason_name[why],
                 tuna_collective_table[coll].name);
    } else {
        snprintf(label, sizeof label, "%s_init", tuna_collective_table[coll].name);
    }
    preload_account(s, coll, why >= 0 ? PATH_FALLBACK : PATH_VENDOR, label,
                    preload_clock_now() - t0, 0, 0);
}
#endif /* TUNA_PRELOAD_PERSISTENT */

/* One start of a plan whose proxy is started: local where the plan's algorithm has a step
 * form (the exchange then finishes in the completion calls' progress), else the exchange
 * completes here. A failed start completes the proxy, so the application's completion call
 * returns. */
static int start_plan(proxy_req *e)
{
    e->t0 = preload_clock_now();
    int rc = tuna_start(e->plan);   /* even on errors: the other ranks are in this exchange */
    if (rc != MPI_SUCCESS) {
        preload_account_rec(e->rec, e->stat, PATH_ERROR, e->label, preload_clock_now() - e->t0,
                            0, 0);
        (void)proxy_complete(e);
        char msg[700];
        snprintf(msg, sizeof msg, "persistent %s (%s): %s", tuna_collective_table[e->coll].name, e->label,
                 tuna_error_string(rc));
        return preload_raise_error(e->comm, rc, msg);
    }
    pthread_mutex_lock(&proxy_lock);
    e->in_flight = true;
    nin_flight++;
    pthread_mutex_unlock(&proxy_lock);
    proxies_progress(); /* a start that completed inside completes its proxy now */
    return MPI_SUCCESS;
}

int MPI_Start(MPI_Request *request)
{
    proxy_req *e = nproxies && request ? proxy_find(*request) : NULL;
    if (!e || !e->persistent)
        return PMPI_Start(request);
    /* The proxy first: the library rejects starting an active request before data moves. */
    int rc = PMPI_Start(request);
    return rc == MPI_SUCCESS ? start_plan(e) : rc;
}

/*
 * MPI_Startall acts as MPI_Start on each request in some order: one PMPI_Startall starts
 * the whole array (the library's requests as it always does, and the proxies), then the
 * plans start in array order (every rank must list them in the same order, as for any
 * collectives it starts).
 */
int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    proxy_req **e = proxies_of(count, array_of_requests);
    if (!e)
        return PMPI_Startall(count, array_of_requests);
    int rc = PMPI_Startall(count, array_of_requests);
    /* After a failure the remaining plans still start: the other ranks are in them. */
    int first = MPI_SUCCESS;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
        int r = e[i] && e[i]->persistent ? start_plan(e[i]) : MPI_SUCCESS;
        if (r != MPI_SUCCESS && first == MPI_SUCCESS)
            first = r;
    }
    free(e);
    return rc != MPI_SUCCESS ? rc : first;
}

int MPI_Request_free(MPI_Request *request)
{
    proxy_req *e = nproxies && request ? proxy_find(*request) : NULL;
    if (!e)
        return PMPI_Request_free(request);
    if (!e->persistent && e->in_flight) {
        /* MPI lets an active request be freed: the operation runs on; its proxy stays the
         * preload's, completed once the operation has finished (proxies_progress). */
        e->freed = true;
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    /* A persistent request in flight finishes first (its peers are in the exchange). */
    while (e->in_flight)
        proxies_progress();
    int rc = PMPI_Request_free(request);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_plan plan = e->plan;
    MPI_Comm comm = e->comm;
    const enum coll coll = e->coll;
    proxy_drop(e);
    if (plan && (rc = tuna_plan_free(&plan)) != MPI_SUCCESS) {
        char msg[600];
        snprintf(msg, sizeof msg, "freeing the %s plan: %s", tuna_collective_table[coll].name,
                 tuna_error_string(rc));
        return preload_raise_error(comm, rc, msg);
    }
    return MPI_SUCCESS;
}
