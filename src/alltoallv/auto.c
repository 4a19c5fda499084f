/*
 * auto: chooses an algorithm and its parameters from values every rank agrees
 * on (P, ranks per node, nodes, and size statistics reduced over all ranks),
 * through a tuning table entry (TUNA_TUNING) or the cost model (TUNA_PROFILE or
 * the built-in profile). The same inputs give the same choice on every rank;
 * see docs/tuning.md. The statistics are agreed (one allreduce, the argument
 * error flag riding along) on auto's first call on a communicator and then
 * periodically (TUNA_AUTO_PERIOD); the calls in between run the last
 * agreement's choice without any collective, so choosing costs nothing there.
 */
#include "alltoallv.h"
#include "memkind.h" /* TUNA_MEMORY_DEVICE */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-communicator set of (size bucket, sparsity bucket) already logged at TUNA_VERBOSE=1. */
static int logged_keyval = MPI_KEYVAL_INVALID;

static int free_logged(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    free(val);
    return MPI_SUCCESS;
}

/* True the first time this communicator sees the bucket pair (logging only: no agreement). */
static bool first_in_bucket(MPI_Comm comm, int size_bucket, int sparsity_bucket)
{
    if (logged_keyval == MPI_KEYVAL_INVALID &&
        PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_logged, &logged_keyval, NULL) !=
            MPI_SUCCESS)
        return false;
    uint64_t *seen = NULL;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, logged_keyval, &seen, &found) != MPI_SUCCESS)
        return false;
    if (!found) {
        /* Logging only: a failure just skips the message, so no error is recorded. */
        seen = tuna_realloc_try(NULL, 4 * sizeof *seen);
        if (seen)
            memset(seen, 0, 4 * sizeof *seen);
        if (!seen || PMPI_Comm_set_attr(comm, logged_keyval, seen) != MPI_SUCCESS) {
            free(seen);
            return false;
        }
    }
    uint64_t bit = (uint64_t)1 << size_bucket;
    if (seen[sparsity_bucket] & bit)
        return false;
    seen[sparsity_bucket] |= bit;
    return true;
}

static void log_choice(const tuna_a2av_args *a, const tuna_select_input *in,
                       const tuna_choice *c, bool reusing)
{
    if (tuna_verbosity() < 1 || a->rank != 0)
        return;
    int sb = tuna_select_size_bucket(in->max_block);
    int zb = tuna_select_sparsity_bucket(in->zero_fraction);
    if (!first_in_bucket(a->ctx->comm, sb, zb))
        return;
    const tuna_algorithm_info *info = &tuna_a2av_table[c->algorithm].desc.info;
    char opts[256];
    int n = snprintf(opts, sizeof opts, "%s", info->name);
    for (int i = 0; i < info->nparams && n > 0 && (size_t)n < sizeof opts; i++)
        n += snprintf(opts + n, sizeof opts - (size_t)n, "%c%s=%ld", i ? ',' : ':',
                      info->params[i].name, c->param[i]);
    /* vendor: say which algorithm stood in for the MPI library in the model. */
    tuna_options vm;
    int src = tuna_a2av_table[c->algorithm].desc.kind == TUNA_ROW_VENDOR
                  ? tuna_select_vendor_model(in->P, &vm)
                  : TUNA_VENDOR_MODEL_NONE;
    char vopts[96];
    if (src != TUNA_VENDOR_MODEL_NONE && n > 0 && (size_t)n < sizeof opts &&
        tuna_options_format(&vm, vopts, sizeof vopts) == MPI_SUCCESS)
        snprintf(opts + n, sizeof opts - (size_t)n, " (modelled as %s, %s%s)", vopts,
                 src == TUNA_VENDOR_MODEL_PROFILE ? "profile's vendor_alltoallv"
                                                  : "built-in guess for ",
                 src == TUNA_VENDOR_MODEL_PROFILE ? ""
                                                  : tuna_mpi_library_name(tuna_select_library()));
    const tuna_profile *prof = NULL;
    tuna_select_profile(&prof);
    char window[64] = "";
    if (c->windowed)
        snprintf(window, sizeof window, ", within the window of %d requests",
                 TUNA_WINDOW_REQUESTS);
    tuna_log(1,
             "auto: P=%d Q=%d N=%d, max block %.0f B, mean block %.1f B, %.0f%% empty "
             "(size bucket %d, sparsity bucket %d%s): %s, model time %.3g us (%s%s, profile %s)",
             in->P, in->Q, in->N, in->max_block, in->mean_block, 100.0 * in->zero_fraction, sb,
             zb, reusing ? ", last agreed statistics" : "", opts, c->predicted * 1e6,
             c->from_table ? "tuning table" : "model", window, prof ? prof->name : "?");
}

static tuna_select_input input_of(const tuna_a2av_args *a, bool reusing)
{
    return tuna_select_input_a2av(a->ctx, (double)a->max_block_bytes, a->mean_block_bytes,
                                  (double)a->total_bytes_max, a->zero_fraction, reusing);
}

/* What ran and why, recorded on every call (the preload labels its statistics with them);
 * the rest only with statistics on. */
static void stats_of_choice(int algorithm, const long *param, double predicted, int source)
{
    tuna_stats_current.algorithm = algorithm;
    tuna_stats_current.auto_source = source;
    if (!tuna_stats_on)
        return;
    tuna_params_copy(tuna_stats_current.params, param);
    tuna_stats_current.predicted = predicted;
}

int tuna_a2av_auto_begin(tuna_ctx *ctx, bool agree_always, bool *due, int *reuse, long *param)
{
    if (ctx->select_status != 1) { /* 1: agreed, every rank loaded the same (the usual case) */
        int rc = tuna_select_agree(ctx); /* once per communicator, or the error again */
        if (rc != MPI_SUCCESS)
            return rc;
    }
    *reuse = -1;
    *due = agree_always || !ctx->agreed_valid || ctx->auto_countdown <= 0;
    if (*due)
        return MPI_SUCCESS;
    ctx->auto_countdown--;
    *reuse = ctx->reuse_algorithm;
    tuna_params_copy(param, ctx->reuse_param);
    stats_of_choice(ctx->reuse_algorithm, ctx->reuse_param, ctx->reuse_predicted,
                    ctx->reuse_source);
    return MPI_SUCCESS;
}

/* The choice the calls up to the next agreement run (and their statistics' source). */
static void set_reuse(tuna_ctx *ctx, const tuna_choice *c, int source)
{
    ctx->reuse_algorithm = c->algorithm;
    tuna_params_copy(ctx->reuse_param, c->param);
    ctx->reuse_predicted = c->predicted;
    ctx->reuse_source = source;
    ctx->reuse_vendor = tuna_a2av_table[c->algorithm].desc.kind == TUNA_ROW_VENDOR;
}

/* A confirmed choice doubles auto's agreement period (up to the longest), a changed one
 * resets it; c becomes the choice the calls up to the next agreement reuse. */
static void reuse_until_next_agreement(tuna_ctx *ctx, const tuna_choice *c, int source)
{
    int first, longest;
    tuna_select_auto_period(&first, &longest);
    if (ctx->agreed_valid && ctx->reuse_algorithm == c->algorithm &&
        memcmp(ctx->reuse_param, c->param, sizeof ctx->reuse_param) == 0 &&
        ctx->auto_period >= first) /* not after exploring, which agrees per round */
        ctx->auto_period = ctx->auto_period > longest / 2 ? longest : 2 * ctx->auto_period;
    else
        ctx->auto_period = first;
    ctx->auto_countdown = ctx->auto_period - 1;
    ctx->agreed_valid = true;
    set_reuse(ctx, c, source);
}

/*
 * A class of calls for learning: the size bucket of the largest block, the sparsity bucket,
 * and the skew, floor(log2(largest / mean block)) up to 7 (uniform and power-law blocks of
 * one largest size favour different algorithms).
 */
static void class_key(const tuna_select_input *in, long long key[TUNA_LEARN_KEY])
{
    key[0] = tuna_select_size_bucket(in->max_block);
    key[1] = tuna_select_sparsity_bucket(in->zero_fraction);
    double r = in->mean_block > 0 ? in->max_block / in->mean_block : 1;
    int skew = 0;
    while (r >= 2 && skew < 7) {
        r /= 2;
        skew++;
    }
    key[2] = skew;
}

/*
 * Learning on an agreement call (c: the model's choice, replaced by what learning runs).
 * While the class explores, this call runs the fastest candidate so far untimed (the
 * agreement's allreduce left the ranks in step, which a candidate's time must not gain
 * from), the next calls up to the next agreement run the round's candidates (picked one by
 * one in tuna_a2av_learn_end, after each one's sample), and that agreement carries the
 * samples.
 */
static int learn_decide(tuna_a2av_args *a, const tuna_select_input *in, tuna_choice *c,
                        int *source)
{
    tuna_ctx *ctx = a->ctx;
    ctx->learn_class = NULL;
    if (c->from_table) /* the site's table decides: nothing to learn */
        return MPI_SUCCESS;
    long long key[TUNA_LEARN_KEY];
    class_key(in, key);
    tuna_learn_class *cl = NULL;
    int rc = tuna_learn_class_of(ctx, &tuna_a2av_registry, in, key, &cl);
    if (rc != MPI_SUCCESS || !cl)
        return rc;
    if (tuna_learn_exploring(cl))
        tuna_learn_synced(cl); /* the agreement just left the ranks in step: untimed */
    *source = tuna_learn_pick(cl, c);
    ctx->learn_class = cl;
    if (tuna_learn_exploring(cl)) {
        ctx->auto_period = 0; /* the rounds set the agreements */
        ctx->auto_countdown = tuna_learn_calls_left(cl);
        ctx->agreed_valid = true;
        set_reuse(ctx, c, *source);
        return MPI_SUCCESS;
    }
    reuse_until_next_agreement(ctx, c, *source); /* settled: the winner */
    return MPI_SUCCESS;
}

void tuna_a2av_learn_end(tuna_ctx *ctx, double seconds, int rc)
{
    tuna_learn_class *cl = ctx->learn_class;
    if (!cl)
        return;
    tuna_learn_sample(cl, seconds, rc);
    tuna_learn_set_pending(ctx, cl); /* the next agreement carries the sample */
    if (tuna_learn_exploring(cl) && ctx->auto_countdown > 0 && tuna_learn_calls_left(cl) > 0) {
        tuna_choice next;
        const int source = tuna_learn_pick(cl, &next);
        set_reuse(ctx, &next, source);
        return;
    }
    ctx->learn_class = NULL; /* calls up to the next agreement: nothing to time */
}

int tuna_a2av_auto_decide(tuna_a2av_args *a, int *algorithm, bool due)
{
    tuna_ctx *ctx = a->ctx;
    /* This call's choice: its statistics are agreed, so no algorithm pays for them. */
    tuna_select_input in = input_of(a, false);
    tuna_choice c;
    int rc = tuna_select_alltoallv(&tuna_a2av_registry, &in, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    int source = c.from_table ? 2 : 1;
    if (due && tuna_select_learn_on()) {
        rc = learn_decide(a, &in, &c, &source);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (!ctx->learn_class && source < TUNA_AUTO_SOURCE_LEARNED) {
        /* The model's choice for the calls that reuse them: there an algorithm that needs
         * this call's statistics (the Bruck family's padding) pays one more allreduce. */
        tuna_select_input rin = input_of(a, true);
        tuna_choice r;
        rc = tuna_select_alltoallv(&tuna_a2av_registry, &rin, &r);
        if (rc != MPI_SUCCESS)
            return rc;
        reuse_until_next_agreement(ctx, &r, r.from_table ? 4 : 3);
    }

    log_choice(a, &in, &c, false);
    tuna_params_copy(a->param, c.param);
    stats_of_choice(c.algorithm, c.param, c.predicted, source);
    *algorithm = c.algorithm;
    return MPI_SUCCESS;
}

/* The cheapest priced candidate with a step form (and, with `memory`, serving those kinds). */
typedef struct step_pick {
    bool found;
    int algorithm;
    long param[TUNA_MAX_PARAMS];
    double predicted;
    unsigned memory;
} step_pick;

static void pick_step_form(void *arg, int alg, const long *param, double predicted,
                           long inflight)
{
    (void)inflight;
    step_pick *p = arg;
    const tuna_a2av_algorithm *row = &tuna_a2av_table[alg];
    if (predicted < 0 || !row->step || (row->desc.memory & p->memory) != p->memory)
        return;
    if (p->found && predicted >= p->predicted) /* ties: the earlier (the selector's order) */
        return;
    p->found = true;
    p->algorithm = alg;
    tuna_params_copy(p->param, param);
    p->predicted = predicted;
}

/* The pick for `in` into *c (p->algorithm where nothing is priced): whether one was. */
static bool pick(const tuna_select_input *in, step_pick *p, tuna_choice *c)
{
    tuna_select_each_alltoallv_candidate(&tuna_a2av_registry, in, pick_step_form, p);
    *c = (tuna_choice){.algorithm = p->algorithm, .predicted = p->found ? p->predicted : 0};
    if (p->found)
        tuna_params_copy(c->param, p->param);
    return p->found;
}

bool tuna_a2av_select_steps(const tuna_select_input *in, tuna_choice *c)
{
    step_pick p = {.algorithm = tuna_registry_find_kind(&tuna_a2av_registry, TUNA_ROW_VENDOR)};
    return pick(in, &p, c);
}

int tuna_a2av_select_device(tuna_ctx *ctx, const tuna_a2av_args *a, tuna_choice *c)
{
    if (ctx->select_status != 1) { /* profiles and tables the same on every rank */
        int rc = tuna_select_agree(ctx);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    const tuna_select_input in = input_of(a, false);
    /* nothing priced: pairwise, the device row with the smallest round (no parameters) */
    step_pick p = {.algorithm = tuna_algorithm_find(TUNA_ALLTOALLV, "pairwise"),
                   .memory = TUNA_MEMORY_DEVICE};
    (void)pick(&in, &p, c);
    stats_of_choice(c->algorithm, c->param, c->predicted, 1); /* 1: the model */
    return MPI_SUCCESS;
}

int tuna_a2av_auto_decide_steps(tuna_a2av_args *a, int *algorithm)
{
    tuna_select_input in = input_of(a, false);
    tuna_choice c;
    tuna_a2av_select_steps(&in, &c); /* nothing priced: the library's own */
    tuna_params_copy(a->param, c.param);
    stats_of_choice(c.algorithm, c.param, c.predicted, 1); /* 1: the model */
    *algorithm = c.algorithm;
    return MPI_SUCCESS;
}

int tuna_a2av_auto(const tuna_a2av_args *a)
{
    /* Callers holding normalised arguments: the front end decides before normalising (so that a
     * vendor choice runs on the user's own arguments) and never comes here. */
    tuna_a2av_args chosen = *a;
    int alg;
    int rc = a->stats_agreed ? tuna_a2av_auto_decide(&chosen, &alg, false)
                             : tuna_error_set(MPI_ERR_INTERN,
                                              "auto: called without agreed statistics");
    return rc == MPI_SUCCESS ? tuna_a2av_run_row(&tuna_a2av_table[alg], &chosen) : rc;
}

int tuna_pattern_changed(MPI_Comm comm)
{
    tuna_error_clear();
    if (comm == MPI_COMM_NULL)
        return tuna_error_set(MPI_ERR_COMM, "tuna_pattern_changed: comm is MPI_COMM_NULL");
    tuna_ctx *ctx;
    int rc = tuna_ctx_get(comm, "auto", &ctx);
    /* auto's agreement too (once per communicator): a communicator set up here runs auto's
     * nonblocking calls on tuna's rows from the first, where the MPI cannot set up in the
     * operation (Open MPI; docs/nonblocking.md, "Set-up at creation"). */
    if (rc == MPI_SUCCESS)
        rc = tuna_select_agree(ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    ctx->agreed_valid = false; /* the next auto call is due on every rank */
    ctx->reuse_vendor = false;
    ctx->learn_class = NULL;   /* a round cut short: the agreement takes what was timed */
    return MPI_SUCCESS;
}
