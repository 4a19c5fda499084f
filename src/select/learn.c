/*
 * auto that learns (docs/tuning.md, "Learning"): for each class of calls on a communicator
 * (a collective and the buckets of its agreed statistics), the first calls run the cost
 * model's few best candidates, each timed on every rank; the times are reduced to their
 * maximum over the ranks (alltoallv: inside auto's statistics agreement, which every
 * exploring round ends with anyway; allgather and allreduce: one small allreduce per round),
 * and from the same agreed numbers every rank drops the same clearly slower candidates and
 * adopts the same winner, which goes into the process's wisdom. A class found in wisdom that
 * every rank holds alike explores nothing.
 *
 * Everything here changes only on values every rank holds identically (the agreed samples,
 * call counts, the model's candidates for agreed inputs), so every rank runs the same
 * candidate on every call.
 */
#include "tuna_select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEARN_EXPLORING, LEARN_SETTLED };

struct tuna_learn_class {
    tuna_collective coll;
    const tuna_registry *reg;
    tuna_select_input in;              /* the agreed inputs the class was created with */
    int refines;                       /* phase 2's runs (one that had nothing to time too) */
    bool refining;                     /* in phase 2: candidate 0 is the last phase's winner */
    tuna_choice tried[TUNA_LEARN_TRIED]; /* every candidate of every phase so far */
    int ntried;
    long long key[TUNA_LEARN_KEY];
    tuna_wisdom_key wkey;
    int state;
    int source;                        /* TUNA_LEARN_SOURCE_*: how it settled */
    int n;                             /* candidates */
    tuna_choice cand[TUNA_LEARN_MAX];
    double best[TUNA_LEARN_MAX];       /* agreed: the fastest sample (max over ranks); < 0 none */
    double worst[TUNA_LEARN_MAX];      /* agreed: the slowest sample */
    int tries[TUNA_LEARN_MAX];
    bool alive[TUNA_LEARN_MAX];
    /* The floor: a candidate's messages (the model's) times the agreed per-message cost; one
     * with TUNA_LEARN_DEFER times the fewest messages is deferred past the first round and
     * dropped untimed when its floor is above TUNA_LEARN_FLOOR_DROP times the fastest. */
    double floor[TUNA_LEARN_MAX];      /* seconds; 0: none (no cost measured, unmodelled) */
    bool deferred[TUNA_LEARN_MAX];
    bool floored[TUNA_LEARN_MAX];      /* dropped by its floor, untimed */
    long long local[TUNA_LEARN_MAX];   /* this rank's ns since the last reduction; -1: none */
    int sched[TUNA_LEARN_MAX], nsched, pos; /* the candidates of the current round, in order */
    int running;                       /* the candidate the last tuna_learn_pick gave */
    bool filler_next;                  /* the next call runs untimed: the class's first call
                                          (first-call costs), and the call after a reduction
                                          of samples (the ranks leave it together: a candidate
                                          timed there would not pay their usual skew) */
    int calls;                         /* exploring calls so far */
    double spent;                      /* agreed seconds of the exploring calls */
    int winner;
    double learned;                    /* the winner's agreed time when it was chosen */
    long long check_local;             /* alltoallv: this rank's ns of the winner on the last
                                          agreement call (the drift check); -1: none */
    int strikes, relearns;
};

struct tuna_learn {
    tuna_learn_class **cls;
    int n, cap;
    double msg_cost;           /* agreed seconds per message pair (the least over the ranks);
                                  < 0: not measured yet */
    tuna_learn_class *pending; /* alltoallv: whose samples the next agreement carries */
};

void tuna_learn_free(tuna_learn *l)
{
    if (!l)
        return;
    for (int i = 0; i < l->n; i++)
        free(l->cls[i]);
    free(l->cls);
    free(l);
}

/* "name:k=v,..." of candidate i (logs). */
static void describe(const tuna_learn_class *cl, int i, char *buf, size_t len)
{
    const tuna_algorithm_info *info = tuna_algorithm_get(cl->coll, cl->cand[i].algorithm);
    int n = snprintf(buf, len, "%s", info->name);
    for (int k = 0; k < info->nparams && n > 0 && (size_t)n < len; k++)
        n += snprintf(buf + n, len - (size_t)n, "%c%s=%ld", k ? ',' : ':', info->params[k].name,
                      cl->cand[i].param[k]);
}

static void log_settled(const tuna_learn_class *cl, const tuna_ctx *ctx)
{
    if (tuna_verbosity() < 1 || ctx->rank != 0)
        return;
    static const char *const how[] = {"", "measured", "wisdom", "budget spent", "one left"};
    char line[1024], opts[160];
    int n = snprintf(line, sizeof line, "auto learned (%s, class %lld/%lld/%lld, %s, %d calls):",
                     tuna_collective_name(cl->coll), cl->key[0], cl->key[1], cl->key[2],
                     how[cl->source], cl->calls);
    for (int i = 0; i < cl->n && n > 0 && (size_t)n < sizeof line; i++) {
        describe(cl, i, opts, sizeof opts);
        if (cl->best[i] >= 0)
            n += snprintf(line + n, sizeof line - (size_t)n, " %s %.3g us (%d)%s;", opts,
                          cl->best[i] * 1e6, cl->tries[i], cl->alive[i] ? "" : " dropped");
        else if (cl->floored[i])
            n += snprintf(line + n, sizeof line - (size_t)n, " %s floor %.3g us, dropped untimed;",
                          opts, cl->floor[i] * 1e6);
        else
            n += snprintf(line + n, sizeof line - (size_t)n, " %s untimed;", opts);
    }
    describe(cl, cl->winner, opts, sizeof opts);
    tuna_log(1, "%s winner %s", line, opts);
}

/* The round's schedule: every live candidate that still needs a sample, in model order. */
static void schedule(tuna_learn_class *cl)
{
    int rounds, calls;
    double seconds;
    tuna_select_learn_settings(&rounds, &calls, &seconds);
    cl->nsched = cl->pos = 0;
    for (int i = 0; i < cl->n; i++)
        if (cl->alive[i] && !cl->deferred[i] && cl->tries[i] < rounds)
            cl->sched[cl->nsched++] = i;
}

/* The samples' relative spread of candidate i (0 with one sample, or where they repeat). */
static double spread(const tuna_learn_class *cl, int i)
{
    return cl->tries[i] > 1 && cl->best[i] > 0 ? cl->worst[i] / cl->best[i] - 1 : 0;
}

/*
 * A tie goes to the library's own call: where the fastest candidate beats it by less than
 * the two's samples vary (the larger relative spread, at most TUNA_LEARN_TIE), the machine
 * cannot tell them apart, and the library's call is what the caller runs without tuna
 * (Open MPI, P = 8, 1 KiB on two shared cores: multipair 35.4 us against the library's 36.5
 * learned, 1.04x the library in the calls after). Samples that repeat exactly (a simulator)
 * leave the fastest.
 */
bool tuna_learn_library_ties(double library, double library_spread, double fastest,
                             double fastest_spread)
{
    double margin = library_spread > fastest_spread ? library_spread : fastest_spread;
    if (margin > TUNA_LEARN_TIE)
        margin = TUNA_LEARN_TIE;
    return library <= fastest * (1 + margin);
}

static int tie_to_library(const tuna_learn_class *cl, int w)
{
    for (int v = 0; v < cl->n; v++)
        if (v != w && cl->alive[v] && cl->best[v] >= 0 &&
            tuna_registry_row(cl->reg, cl->cand[v].algorithm)->kind == TUNA_ROW_VENDOR)
            return tuna_learn_library_ties(cl->best[v], spread(cl, v), cl->best[w], spread(cl, w))
                       ? v
                       : w;
    return w;
}

static void settle(tuna_learn_class *cl, const tuna_ctx *ctx, int source)
{
    int w = -1;
    for (int i = 0; i < cl->n; i++)
        if (cl->alive[i] && cl->best[i] >= 0 && (w < 0 || cl->best[i] < cl->best[w]))
            w = i;
    if (w < 0) /* nothing timed (every sample failed): the model's choice */
        w = 0;
    else
        w = tie_to_library(cl, w);
    cl->winner = w;
    cl->learned = cl->best[w];
    cl->state = LEARN_SETTLED;
    cl->refining = false;
    cl->source = source;
    cl->nsched = cl->pos = 0;
    cl->strikes = 0;
    cl->check_local = -1;
    if (source != TUNA_LEARN_SOURCE_WISDOM && cl->learned >= 0)
        tuna_wisdom_add(&cl->wkey, &cl->cand[w], cl->learned);
    log_settled(cl, ctx);
}

static bool same_choice(const tuna_choice *a, const tuna_choice *b)
{
    return a->algorithm == b->algorithm && memcmp(a->param, b->param, sizeof a->param) == 0;
}

static bool was_tried(const tuna_learn_class *cl, const tuna_choice *c)
{
    for (int i = 0; i < cl->ntried; i++)
        if (same_choice(&cl->tried[i], c))
            return true;
    return false;
}

/* The class's current candidates into what it has tried (a full list keeps its first ones). */
static void remember(tuna_learn_class *cl)
{
    for (int i = 0; i < cl->n && cl->ntried < TUNA_LEARN_TRIED; i++)
        if (!was_tried(cl, &cl->cand[i]))
            cl->tried[cl->ntried++] = cl->cand[i];
}

/* The neighbouring parameter sets of candidate i (each parameter at v/2, 2v, its least value,
 * v-1 and v+1, one at a time, clamped to its range; the model's time filled in), into out; how
 * many. None for a row without parameters or without a model. The far ones first: where the
 * model misjudges a machine's per-message cost it misjudges a radix by more than one (SMPI,
 * P = 64, 16 KiB power law: coalesced timed at the model's radix 6, 29.3 us, radix 2 22.4). */
static int neighbours(const tuna_learn_class *cl, const tuna_profile *prof, int i,
                      tuna_choice *out, int max)
{
    const tuna_choice base = cl->cand[i];
    const tuna_algorithm *row = tuna_registry_row(cl->reg, base.algorithm);
    if (row->kind != TUNA_ROW_ALGORITHM || !row->cost)
        return 0;
    int m = 0;
    for (int k = 0; k < row->info.nparams; k++) {
        const long v = base.param[k];
        const long tries[5] = {v / 2, 2 * v, row->info.params[k].min, v - 1, v + 1};
        for (int j = 0; j < 5 && m < max; j++) {
            tuna_choice c = base;
            c.param[k] = tuna_param_resolve(&row->info.params[k], tries[j], cl->in.P);
            c.predicted = tuna_model_cost(cl->reg, prof, &cl->in, c.algorithm, c.param);
            out[m++] = c;
        }
    }
    return m;
}

/*
 * Phase 2: the neighbouring parameter sets of the winning row, and of every other timed row
 * within TUNA_LEARN_NEAR of the winner's time (two rows that close may swap places once each
 * has its own best parameters), taken from the rows in turn; those the model prices within
 * TUNA_LEARN_MODEL_FACTOR of the class's model best; the winner first with its samples; at
 * most TUNA_LEARN_MAX in all, the budget anew. The model's best parameters of a row are its
 * guess: where it misjudges the machine it misjudges them too (SMPI, P = 64: coalesced timed
 * at radix 5, 1.12x the best row at radix 4). A neighbour whose first sample does not beat
 * the winner's best is dropped at once (apply): where none does, phase 2 costs one round.
 * Where one does, phase 2 runs again around it (apply, at most TUNA_LEARN_CLIMBS times in
 * all), over parameter sets the class has not tried: the model's guess can be more than one
 * neighbour away (SMPI, P = 64, Polaris-like, alltoall 256 B: phase 1 learned mesh:dims=2,
 * phase 2 dims=4, and dims=3, 0.91x dims 4, is dims 4's v-1). False when there is nothing
 * to refine.
 */
static bool refine(tuna_learn_class *cl, const tuna_ctx *ctx)
{
    cl->refines++;
    const int w = cl->winner;
    const tuna_choice win = cl->cand[w];
    const tuna_profile *loaded = NULL;
    if (cl->best[w] < 0 || tuna_select_profile(&loaded) != MPI_SUCCESS || !loaded)
        return false;
    tuna_profile buf; /* the class's pricing: with its agreed per-message cost */
    const tuna_profile *prof = tuna_select_profile_for(&cl->in, &buf);
    double bound = -1; /* the model's best tuna candidate of the class, times the factor */
    for (int i = 0; i < cl->n; i++)
        if (tuna_registry_row(cl->reg, cl->cand[i].algorithm)->kind == TUNA_ROW_ALGORITHM &&
            (bound < 0 || cl->cand[i].predicted < bound))
            bound = cl->cand[i].predicted;
    bound *= TUNA_LEARN_MODEL_FACTOR;
    /* The rows refined, the winner first, then the near rows fastest first (the slots go
     * round them in turn), and each one's neighbours. */
    enum { PER_ROW = 5 * TUNA_MAX_PARAMS };
    tuna_choice nb[TUNA_LEARN_MAX][PER_ROW];
    int nnb[TUNA_LEARN_MAX], pos[TUNA_LEARN_MAX], rows[TUNA_LEARN_MAX], nrows = 0;
    rows[nrows++] = w;
    for (int i = 0; i < cl->n; i++) {
        if (i == w || !cl->alive[i] || cl->best[i] < 0 ||
            cl->best[i] > TUNA_LEARN_NEAR * cl->best[w])
            continue;
        int j = nrows++;
        for (; j > 1 && cl->best[rows[j - 1]] > cl->best[i]; j--)
            rows[j] = rows[j - 1];
        rows[j] = i;
    }
    for (int r = 0; r < nrows; r++) {
        nnb[r] = neighbours(cl, prof, rows[r], nb[r], PER_ROW);
        pos[r] = 0;
    }
    tuna_choice next[TUNA_LEARN_MAX];
    int m = 0;
    next[m++] = win;
    for (bool more = true; more && m < TUNA_LEARN_MAX;) {
        more = false;
        for (int r = 0; r < nrows && m < TUNA_LEARN_MAX; r++) {
            /* the row's next neighbour that is new and priced within the bound */
            while (pos[r] < nnb[r]) {
                const tuna_choice c = nb[r][pos[r]++];
                bool seen = was_tried(cl, &c); /* timed in an earlier phase already */
                for (int i = 0; i < m; i++)
                    seen = seen || same_choice(&next[i], &c);
                if (seen || c.predicted < 0 || (bound > 0 && c.predicted > bound))
                    continue;
                next[m++] = c;
                break;
            }
            more = more || pos[r] < nnb[r];
        }
    }
    if (m == 1)
        return false;
    const double wbest = cl->best[w], wworst = cl->worst[w];
    const int wtries = cl->tries[w];
    cl->n = m;
    for (int i = 0; i < m; i++) {
        cl->cand[i] = next[i];
        cl->best[i] = i ? -1 : wbest;
        cl->worst[i] = i ? 0 : wworst;
        cl->tries[i] = i ? 0 : wtries;
        cl->alive[i] = true;
        cl->local[i] = -1;
        cl->floor[i] = 0; /* phase 2's rows are the winner's and its near rows' neighbours */
        cl->deferred[i] = cl->floored[i] = false;
    }
    remember(cl);
    cl->calls = 0;
    cl->spent = 0;
    cl->state = LEARN_EXPLORING;
    cl->refining = true;
    cl->filler_next = true;
    schedule(cl);
    if (tuna_verbosity() >= 1 && ctx->rank == 0) {
        char line[1024], opts[160];
        describe(cl, 0, opts, sizeof opts);
        int n = snprintf(line, sizeof line,
                         "auto (%s, class %lld/%lld/%lld): %s won (%.3g us, model %.3g us); "
                         "timing %d neighbouring parameter sets:",
                         tuna_collective_name(cl->coll), cl->key[0], cl->key[1], cl->key[2],
                         opts, wbest * 1e6, win.predicted * 1e6, m - 1);
        for (int i = 1; i < m && n > 0 && (size_t)n < sizeof line; i++) {
            describe(cl, i, opts, sizeof opts);
            n += snprintf(line + n, sizeof line - (size_t)n, " %s (model %.3g us)%s", opts,
                          cl->cand[i].predicted * 1e6, i + 1 < m ? ";" : "");
        }
        tuna_log(1, "%s", line);
    }
    return true;
}

/* Agreed samples (ns, max over ranks; -1: not run) into the class: times, drops, settling. */
static void apply(tuna_learn_class *cl, const tuna_ctx *ctx, const long long *agreed)
{
    int rounds, calls;
    double seconds;
    tuna_select_learn_settings(&rounds, &calls, &seconds);
    for (int i = 0; i < cl->n; i++) {
        cl->local[i] = -1;
        if (agreed[i] < 0)
            continue;
        const double t = (double)agreed[i] * 1e-9;
        cl->spent += t;
        cl->tries[i]++;
        if (cl->best[i] < 0 || t < cl->best[i])
            cl->best[i] = t;
        if (t > cl->worst[i])
            cl->worst[i] = t;
    }
    if (cl->state != LEARN_EXPLORING)
        return;
    cl->filler_next = true; /* the reduction just made left the ranks in step */
    /* A candidate clearly slower than the fastest one so far is dropped: after one sample
     * (which may hold first-call costs) at TUNA_LEARN_DROP_FIRST times, after more at
     * TUNA_LEARN_DROP times. */
    double fastest = -1;
    for (int i = 0; i < cl->n; i++)
        if (cl->alive[i] && cl->best[i] >= 0 && (fastest < 0 || cl->best[i] < fastest))
            fastest = cl->best[i];
    /* The deferred candidates, after the first round: timed from the next one, unless their
     * floor alone is TUNA_LEARN_FLOOR_DROP times the fastest (nothing timed: all of them). */
    for (int i = 0; i < cl->n; i++) {
        if (!cl->deferred[i])
            continue;
        cl->deferred[i] = false;
        if (fastest > 0 && cl->floor[i] > TUNA_LEARN_FLOOR_DROP * fastest)
            cl->alive[i] = false, cl->floored[i] = true;
    }
    int alive = 0, pending = 0;
    bool repeat = true; /* every live candidate timed twice, its samples within 1% */
    for (int i = 0; i < cl->n; i++) {
        if (cl->alive[i] && cl->best[i] >= 0) {
            const double f = cl->tries[i] > 1 ? TUNA_LEARN_DROP : TUNA_LEARN_DROP_FIRST;
            if (cl->best[i] > f * fastest)
                cl->alive[i] = false;
            /* Phase 2: a neighbour stays only while it beats the last phase's winner (candidate 0,
             * its best of two or three samples) on its first sample. */
            if (cl->refining && i > 0 && cl->tries[i] == 1 && cl->best[0] >= 0 &&
                cl->best[i] >= cl->best[0])
                cl->alive[i] = false;
        }
        alive += cl->alive[i];
        pending += cl->alive[i] && cl->tries[i] < rounds;
        if (cl->alive[i] && (cl->tries[i] < 2 || cl->worst[i] > 1.01 * cl->best[i]))
            repeat = false;
    }
    int source = 0;
    if (alive <= 1)
        source = TUNA_LEARN_SOURCE_ONE_LEFT;
    else if (cl->calls >= calls || cl->spent >= seconds)
        source = TUNA_LEARN_SOURCE_BUDGET;
    else if (!pending || repeat) /* repeating times (a simulator, a quiet machine): enough */
        source = TUNA_LEARN_SOURCE_MEASURED;
    if (!source) {
        schedule(cl);
        return;
    }
    const bool climbing = cl->refining; /* a phase 2 ends: did a neighbour win it? */
    settle(cl, ctx, source);
    if (cl->refines < TUNA_LEARN_CLIMBS && (cl->refines == 0 || (climbing && cl->winner != 0)) &&
        refine(cl, ctx))
        return; /* phase 2 (again): settles again when its rounds end */
}

/* Which candidates wait for the first round (their floors against the fewest messages'). */
static void defer(tuna_learn_class *cl)
{
    double least = 0;
    for (int i = 0; i < cl->n; i++)
        if (cl->floor[i] > 0 && (least == 0 || cl->floor[i] < least))
            least = cl->floor[i];
    for (int i = 0; i < cl->n; i++)
        cl->deferred[i] = least > 0 && cl->floor[i] >= TUNA_LEARN_DEFER * least;
}

/* The drift check (alltoallv): the winner's agreed time on an agreement call against its
 * slowest sample while learning; TUNA_LEARN_STRIKES checks in a row above TUNA_LEARN_DRIFT
 * times it
 * (and TUNA_LEARN_DRIFT_FLOOR seconds above it: a call of a few microseconds varies more than
 * twofold from one call to the next on a shared machine) reopen exploration, at most
 * TUNA_LEARN_RELEARNS times per class. */
static void check_drift(tuna_learn_class *cl, const tuna_ctx *ctx, long long agreed_ns)
{
    cl->check_local = -1;
    if (agreed_ns < 0 || cl->state != LEARN_SETTLED || cl->learned <= 0)
        return;
    const double t = (double)agreed_ns * 1e-9;
    /* Against the slowest of the winner's samples: its fastest is an optimist's figure, and
     * on a shared machine the calls after it vary as much as its samples did. */
    const double ref = cl->worst[cl->winner] > cl->learned ? cl->worst[cl->winner] : cl->learned;
    cl->strikes = t > TUNA_LEARN_DRIFT * ref && t - ref > TUNA_LEARN_DRIFT_FLOOR
                      ? cl->strikes + 1
                      : 0;
    if (cl->strikes < TUNA_LEARN_STRIKES || cl->relearns >= TUNA_LEARN_RELEARNS)
        return;
    if (tuna_verbosity() >= 1 && ctx->rank == 0)
        tuna_log(1, "auto: %s class %lld/%lld/%lld: the winner now takes %.3g us (learned at "
                    "%.3g us): learning again",
                 tuna_collective_name(cl->coll), cl->key[0], cl->key[1], cl->key[2], t * 1e6,
                 cl->learned * 1e6);
    cl->relearns++;
    cl->state = LEARN_EXPLORING;
    cl->calls = 0;
    cl->spent = 0;
    for (int i = 0; i < cl->n; i++) {
        cl->best[i] = -1;
        cl->worst[i] = 0;
        cl->tries[i] = 0;
        cl->alive[i] = true;
        cl->floored[i] = false;
    }
    defer(cl);
    schedule(cl);
}

/* Candidates of a new class: the model's (vendor first, then the rows it prices within
 * TUNA_LEARN_MODEL_FACTOR of its best). */
static int candidates(tuna_learn_class *cl, const tuna_registry *reg, const tuna_select_input *in)
{
    int rc = tuna_select_candidates_within(reg, in, TUNA_LEARN_MODEL_FACTOR, cl->cand,
                                           TUNA_LEARN_MAX, &cl->n);
    for (int i = 0; i < cl->n; i++) {
        cl->best[i] = -1;
        cl->worst[i] = 0;
        cl->tries[i] = 0;
        cl->alive[i] = true;
        cl->local[i] = -1;
        cl->floor[i] = 0;
        cl->deferred[i] = cl->floored[i] = false;
    }
    return rc;
}

/*
 * This rank's CPU cost of one message pair (an MPI_Isend and its MPI_Irecv, to itself): the
 * difference of a batch of 32 pairs and a batch of 4, whose latency cancels, per pair; the
 * least of three tries after one to warm up (first messages pay set-up). Local: no peer
 * takes part. 0 when a post fails (then no floor is used). TUNA_LEARN_MESSAGE_COST gives
 * it instead.
 */
static double message_cost(const tuna_ctx *ctx)
{
    const double given = tuna_select_learn_message_cost();
    if (given >= 0)
        return given;
    enum { FEW = 4, MANY = 32, TRIES = 4 };
    char out[MANY] = {0}, in[MANY];
    MPI_Request req[2 * MANY];
    double least = -1;
    for (int t = 0; t < TRIES; t++) {
        double took[2];
        for (int b = 0; b < 2; b++) {
            const int k = b ? MANY : FEW;
            int posted = 0, rc = MPI_SUCCESS;
            const double t0 = PMPI_Wtime();
            for (; posted < k && rc == MPI_SUCCESS; posted++) {
                req[2 * posted] = req[2 * posted + 1] = MPI_REQUEST_NULL;
                rc = PMPI_Irecv(in + posted, 1, MPI_CHAR, ctx->rank, TUNA_TAG_LEARN_PROBE,
                                ctx->comm, &req[2 * posted]);
                if (rc == MPI_SUCCESS)
                    rc = PMPI_Isend(out + posted, 1, MPI_CHAR, ctx->rank, TUNA_TAG_LEARN_PROBE,
                                    ctx->comm, &req[2 * posted + 1]);
                if (rc != MPI_SUCCESS && req[2 * posted] != MPI_REQUEST_NULL)
                    PMPI_Cancel(&req[2 * posted]); /* its send was not posted */
            }
            if (rc != MPI_SUCCESS) {
                tuna_mpi_host_complete(2 * posted, req);
                return 0;
            }
            if (PMPI_Waitall(2 * k, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
                tuna_mpi_host_complete(2 * k, req);
                return 0;
            }
            took[b] = PMPI_Wtime() - t0;
        }
        const double c = (took[1] - took[0]) / (MANY - FEW);
        if (t > 0 && (least < 0 || c < least))
            least = c;
    }
    return least > 0 ? least : 0;
}

/*
 * Whether every rank's wisdom holds this class with the same choice: one allreduce. It also
 * agrees on the per-message cost when `measure` (the least over the ranks, into *cost; the
 * measurement is local).
 */
static int agree_wisdom(tuna_learn_class *cl, const tuna_ctx *ctx, bool *use, tuna_choice *c,
                        double *seconds, bool measure, double *cost)
{
    const bool found = tuna_wisdom_find(&cl->wkey, c, seconds);
    unsigned long long h = 1469598103934665603ULL; /* FNV-1a of the choice */
    const long vals[1 + TUNA_MAX_PARAMS] = {found ? c->algorithm : -1};
    memcpy((long *)vals + 1, found ? c->param : (long[TUNA_MAX_PARAMS]){0},
           sizeof(long) * TUNA_MAX_PARAMS);
    const unsigned char *b = (const unsigned char *)vals;
    for (size_t i = 0; i < sizeof vals; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    /* picoseconds, negated: the maximum is the least */
    long long v[4] = {!found, (long long)(h >> 2), -(long long)(h >> 2),
                      measure ? -(long long)(message_cost(ctx) * 1e12) : 0};
    TUNA_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_LONG_LONG, MPI_MAX, ctx->comm));
    *use = v[0] == 0 && v[1] == -v[2];
    if (measure)
        *cost = (double)-v[3] * 1e-12;
    return MPI_SUCCESS;
}

static bool same_class(const tuna_learn_class *cl, tuna_collective coll, const long long *key)
{
    return cl->coll == coll && memcmp(cl->key, key, sizeof cl->key) == 0;
}

int tuna_learn_class_of(tuna_ctx *ctx, const tuna_registry *reg, const tuna_select_input *in,
                        const long long key[TUNA_LEARN_KEY], tuna_learn_class **out)
{
    *out = NULL;
    if (!tuna_select_learn_on() || ctx->size < 2)
        return MPI_SUCCESS;
    if (!ctx->learn) {
        ctx->learn = tuna_calloc(1, sizeof *ctx->learn);
        if (!ctx->learn)
            return tuna_error_set(MPI_ERR_NO_MEM, "auto: no memory for learning");
        ctx->learn_free = tuna_learn_free;
        ctx->learn->msg_cost = -1;
    }
    tuna_learn *l = ctx->learn;
    for (int i = 0; i < l->n; i++)
        if (same_class(l->cls[i], reg->coll, key)) {
            *out = l->cls[i];
            return MPI_SUCCESS;
        }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        tuna_learn_class **c = tuna_realloc(l->cls, sizeof *c * (size_t)cap);
        if (!c)
            return tuna_error_set(MPI_ERR_NO_MEM, "auto: no memory for learning");
        l->cls = c;
        l->cap = cap;
    }
    tuna_learn_class *cl = tuna_calloc(1, sizeof *cl);
    if (!cl)
        return tuna_error_set(MPI_ERR_NO_MEM, "auto: no memory for learning");
    cl->coll = reg->coll;
    cl->reg = reg;
    cl->in = *in;
    memcpy(cl->key, key, sizeof cl->key);
    const long long sig[1 + TUNA_LEARN_KEY] = {TUNA_WISDOM_LEARNED, key[0], key[1], key[2]};
    tuna_wisdom_key_init(&cl->wkey, reg->coll, ctx, sig, 1 + TUNA_LEARN_KEY);
    cl->check_local = -1;
    /* The communicator's per-message cost, measured with its first class (every rank comes
     * here on the same call), agreed with the wisdom check. The model prices the candidates
     * with it (tuna_select_profile_for: the built-in profile's overheads are a guess), and
     * it gives each candidate its floor. */
    bool use = false;
    tuna_choice w;
    double secs = 0;
    const bool measure = l->msg_cost < 0;
    int rc = agree_wisdom(cl, ctx, &use, &w, &secs, measure, &l->msg_cost);
    if (rc == MPI_SUCCESS && measure && tuna_verbosity() >= 1 && ctx->rank == 0)
        tuna_log(1, "auto: per-message cost %.3g us (the least over the ranks, %s)",
                 l->msg_cost * 1e6,
                 tuna_select_learn_message_cost() >= 0 ? "TUNA_LEARN_MESSAGE_COST" : "measured");
    cl->in.message_cost = l->msg_cost > 0 ? l->msg_cost : 0;
    if (rc == MPI_SUCCESS)
        rc = candidates(cl, reg, &cl->in);
    if (rc == MPI_SUCCESS)
        remember(cl);
    /* Floors where the candidates' messages differ TUNA_LEARN_DEFER-fold (agreed inputs and
     * cost: every rank decides alike). */
    for (int i = 0; rc == MPI_SUCCESS && i < cl->n && l->msg_cost > 0; i++)
        cl->floor[i] = tuna_select_messages(reg, &cl->in, &cl->cand[i]) * l->msg_cost;
    if (rc == MPI_SUCCESS)
        defer(cl);
    for (int i = 0; rc == MPI_SUCCESS && i < cl->n && tuna_verbosity() >= 2 && ctx->rank == 0;
         i++) {
        char opts[160];
        describe(cl, i, opts, sizeof opts);
        tuna_log(2, "auto: candidate %s: model %.3g us, floor %.3g us%s", opts,
                 cl->cand[i].predicted * 1e6, cl->floor[i] * 1e6,
                 cl->deferred[i] ? ", deferred" : "");
    }
    if (rc != MPI_SUCCESS || cl->n == 0) {
        free(cl);
        return rc;
    }
    l->cls[l->n++] = cl;
    cl->state = LEARN_EXPLORING;
    cl->filler_next = true;
    if (use) {
        /* The learned choice, in the candidates' place (it may not be one of them today). */
        cl->n = 1;
        cl->cand[0] = w;
        cl->best[0] = secs;
        settle(cl, ctx, TUNA_LEARN_SOURCE_WISDOM);
    } else if (cl->n == 1) {
        settle(cl, ctx, TUNA_LEARN_SOURCE_ONE_LEFT);
    } else {
        schedule(cl);
    }
    *out = cl;
    return MPI_SUCCESS;
}

bool tuna_learn_exploring(const tuna_learn_class *cl)
{
    return cl && cl->state == LEARN_EXPLORING;
}

int tuna_learn_pick(tuna_learn_class *cl, tuna_choice *c)
{
    if (cl->state == LEARN_SETTLED) {
        *c = cl->cand[cl->winner];
        cl->running = cl->winner;
        return cl->source == TUNA_LEARN_SOURCE_WISDOM ? TUNA_AUTO_SOURCE_WISDOM
                                                      : TUNA_AUTO_SOURCE_LEARNED;
    }
    /* Untimed (the filler): the fastest so far, or on the class's first call the model's
     * choice (the caller's c); also past the round's end (a round cut short by an early
     * agreement, or more calls than the schedule between agreements). */
    if (cl->filler_next || cl->pos >= cl->nsched) {
        cl->filler_next = false;
        int f = -1;
        for (int i = 0; i < cl->n; i++)
            if (cl->alive[i] && cl->best[i] >= 0 && (f < 0 || cl->best[i] < cl->best[f]))
                f = i;
        if (f >= 0)
            *c = cl->cand[f];
        cl->running = -1;
        return TUNA_AUTO_SOURCE_LEARNING;
    }
    cl->running = cl->sched[cl->pos++];
    cl->calls++;
    *c = cl->cand[cl->running];
    return TUNA_AUTO_SOURCE_LEARNING;
}

void tuna_learn_synced(tuna_learn_class *cl)
{
    cl->filler_next = true;
}

int tuna_learn_calls_left(const tuna_learn_class *cl)
{
    return cl->state == LEARN_EXPLORING ? cl->nsched - cl->pos : 0;
}

void tuna_learn_sample(tuna_learn_class *cl, double seconds, int rc)
{
    if (cl->running < 0 || rc != MPI_SUCCESS)
        return;
    const long long ns = (long long)(seconds * 1e9);
    if (cl->state == LEARN_SETTLED)
        cl->check_local = ns;
    else if (cl->local[cl->running] < 0 || ns > cl->local[cl->running])
        cl->local[cl->running] = ns;
    cl->running = -1;
}

/* ------------------------------------------------------------ alltoallv: in the agreement */

int tuna_learn_fields(tuna_ctx *ctx, long long *fields)
{
    tuna_learn_class *cl = ctx->learn ? ctx->learn->pending : NULL;
    if (!cl)
        return 0;
    for (int i = 0; i < TUNA_LEARN_MAX; i++)
        fields[i] = i < cl->n ? cl->local[i] : -1;
    fields[TUNA_LEARN_MAX] = cl->check_local;
    return TUNA_LEARN_FIELDS;
}

void tuna_learn_apply_fields(tuna_ctx *ctx, const long long *agreed)
{
    tuna_learn_class *cl = ctx->learn ? ctx->learn->pending : NULL;
    if (!cl)
        return;
    ctx->learn->pending = NULL;
    check_drift(cl, ctx, agreed[TUNA_LEARN_MAX]);
    apply(cl, ctx, agreed);
}

void tuna_learn_set_pending(tuna_ctx *ctx, tuna_learn_class *cl)
{
    if (ctx->learn)
        ctx->learn->pending = cl;
}

/* ------------------------------------------------------------ allgather / allreduce */

int tuna_learn_round_end(tuna_ctx *ctx, tuna_learn_class *cl)
{
    if (cl->state != LEARN_EXPLORING || cl->pos < cl->nsched)
        return MPI_SUCCESS;
    long long v[TUNA_LEARN_MAX];
    memcpy(v, cl->local, sizeof v);
    TUNA_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, v, cl->n, MPI_LONG_LONG, MPI_MAX, ctx->comm));
    apply(cl, ctx, v);
    return MPI_SUCCESS;
}

bool tuna_learn_last_find(tuna_ctx *ctx, const tuna_registry *reg, const tuna_select_input *in,
                          tuna_choice *c, tuna_learn_class **learning)
{
    const struct tuna_auto_last *l = &ctx->auto_last[reg->coll];
    if (!learning || !l->valid || l->bytes != in->bytes || l->commute != in->commute)
        return false;
    *c = l->choice;
    tuna_select_record(c);
    tuna_stats_current.auto_source = l->source;
    *learning = NULL;
    return true;
}

/* The choice this call made, for tuna_learn_last_find once no class learns for it. */
static void last_keep(tuna_ctx *ctx, const tuna_registry *reg, const tuna_select_input *in,
                      const tuna_choice *c, const tuna_learn_class *learning)
{
    struct tuna_auto_last *l = &ctx->auto_last[reg->coll];
    ctx->library_repeat[reg->coll].valid = false; /* made from the choice replaced here */
    l->valid = !learning;
    l->bytes = in->bytes;
    l->commute = in->commute;
    l->source = tuna_stats_current.auto_source;
    l->choice = *c;
}

int tuna_learn_collective(tuna_ctx *ctx, const tuna_registry *reg, const tuna_select_input *in,
                          tuna_choice *c, tuna_learn_class **learning)
{
    if (!learning) { /* a nonblocking call: no learning (its time overlaps other work) */
        tuna_select_record(c);
        return MPI_SUCCESS;
    }
    *learning = NULL;
    int source = c->from_table ? 2 : 1;
    tuna_learn_class *cl = NULL;
    if (!c->from_table && tuna_select_learn_on()) {
        const long long key[TUNA_LEARN_KEY] = {tuna_select_size_bucket(in->bytes),
                                               in->commute, 0};
        int rc = tuna_learn_class_of(ctx, reg, in, key, &cl);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (cl) {
        source = tuna_learn_pick(cl, c);
        if (source == TUNA_AUTO_SOURCE_LEARNING)
            *learning = cl; /* also untimed calls: the round's end may come after them */
    }
    tuna_select_record(c);
    tuna_stats_current.auto_source = source;
    last_keep(ctx, reg, in, c, *learning);
    return MPI_SUCCESS;
}

int tuna_learn_after(tuna_ctx *ctx, tuna_learn_class *cl, double seconds, int rc)
{
    tuna_learn_sample(cl, seconds, rc);
    const int rrc = tuna_learn_round_end(ctx, cl); /* every rank, whatever rc */
    return rc != MPI_SUCCESS ? rc : rrc;
}
