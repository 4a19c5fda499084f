/*
 * auto: chooses an algorithm and its parameters from values every rank agrees
 * on (P, ranks per node, nodes, and the core's globally reduced size
 * statistics), through a tuning table entry (TUNA_TUNING) or the cost model
 * (TUNA_PROFILE or the built-in profile), then runs it. The same inputs give
 * the same choice on every rank; see docs/tuning.md. Under TUNA_ARGCHECK=local
 * the statistics are agreed once every TUNA_AUTO_PERIOD calls, so a linear
 * choice usually costs no allreduce.
 */
#include "tuna_internal.h"
#include "../select/tuna_select.h"

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
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_logged, &logged_keyval, NULL) !=
            MPI_SUCCESS)
        return false;
    uint64_t *seen = NULL;
    int found = 0;
    if (MPI_Comm_get_attr(comm, logged_keyval, &seen, &found) != MPI_SUCCESS)
        return false;
    if (!found) {
        seen = calloc(4, sizeof *seen);
        if (!seen || MPI_Comm_set_attr(comm, logged_keyval, seen) != MPI_SUCCESS) {
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
    const tuna_algorithm_info *info = &tuna_a2av_table[c->algorithm].info;
    char opts[256];
    int n = snprintf(opts, sizeof opts, "%s", info->name);
    for (int i = 0; i < info->nparams && n > 0 && (size_t)n < sizeof opts; i++)
        n += snprintf(opts + n, sizeof opts - (size_t)n, "%c%s=%ld", i ? ',' : ':',
                      info->params[i].name, c->param[i]);
    /* vendor: say which algorithm stood in for the MPI library in the model. */
    tuna_options vm;
    int src = tuna_a2av_table[c->algorithm].run == tuna_a2av_vendor
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
    tuna_log(1,
             "auto: P=%d Q=%d N=%d, max block %.0f B, mean block %.1f B, %.0f%% empty "
             "(size bucket %d, sparsity bucket %d%s): %s, model time %.3g us (%s, profile %s)",
             in->P, in->Q, in->N, in->max_block, in->mean_block, 100.0 * in->zero_fraction, sb,
             zb, reusing ? ", last agreed statistics" : "", opts, c->predicted * 1e6,
             c->from_table ? "tuning table" : "model", prof ? prof->name : "?");
}

static tuna_select_input input_of(const tuna_a2av_args *a, bool reusing)
{
    return (tuna_select_input){
        .P = a->size,
        .Q = a->ctx->ranks_per_node,
        .N = a->ctx->nnodes,
        .max_block = (double)a->max_block_bytes,
        .mean_block = a->mean_block_bytes,
        .total_max = (double)a->total_bytes_max,
        .zero_fraction = a->zero_fraction,
        .agree_pending = reusing,
    };
}

/* The choice for a's statistics; *in receives the selector's input (for the log). */
static int choose(const tuna_a2av_args *a, bool reusing, tuna_select_input *in, tuna_choice *c)
{
    *in = input_of(a, reusing);
    return tuna_select_alltoallv(in, c);
}

/*
 * TUNA_ARGCHECK=local: the core did not agree on this call's statistics. Agree on them (one
 * allreduce) on the first auto call of a communicator and then once every TUNA_AUTO_PERIOD
 * calls; in between, decide from the last agreed values, which every rank holds alike, so
 * a linear choice (vendor included) runs with no allreduce at all. A choice that needs the
 * statistics itself (Bruck family, TuNA) agrees at once and decides from this call's values.
 * Every rank counts the same calls, so all agree on the same ones.
 */
static int choose_reusing(tuna_a2av_args *cur, tuna_select_input *in, tuna_choice *c,
                          bool *reused)
{
    tuna_ctx *ctx = cur->ctx;
    *reused = false;
    int rc;
    if (ctx->agreed_valid && ctx->agreed_reuses + 1 < tuna_select_auto_period()) {
        tuna_a2av_args last = *cur;
        tuna_a2av_set_stats(&last, ctx->agreed_stats);
        rc = choose(&last, true, in, c);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!tuna_a2av_table[c->algorithm].needs_global_stats) {
            ctx->agreed_reuses++;
            *reused = true;
            return MPI_SUCCESS;
        }
    }
    long long v[TUNA_AGREE_N];
    memcpy(v, cur->local_stats, sizeof v);
    rc = tuna_agree(ctx, v);
    if (rc != MPI_SUCCESS)
        return rc;
    memcpy(ctx->agreed_stats, v, sizeof v);
    ctx->agreed_valid = true;
    ctx->agreed_reuses = 0;
    tuna_a2av_set_stats(cur, v);
    return choose(cur, false, in, c);
}

int tuna_a2av_auto(const tuna_a2av_args *a)
{
    int rc = tuna_select_agree(a->ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    tuna_a2av_args chosen = *a;
    tuna_select_input in;
    tuna_choice c;
    bool reused = false;
    rc = a->stats_agreed ? choose(a, false, &in, &c)
                         : choose_reusing(&chosen, &in, &c, &reused);
    if (rc != MPI_SUCCESS)
        return rc;
    log_choice(a, &in, &c, reused); /* the choice that runs, not one set aside */

    memcpy(chosen.param, c.param, sizeof chosen.param);
    tuna_stats_current.algorithm = c.algorithm;
    memcpy(tuna_stats_current.params, c.param, sizeof tuna_stats_current.params);
    tuna_stats_current.predicted = c.predicted;
    tuna_stats_current.auto_source = (c.from_table ? 2 : 1) + (reused ? 2 : 0);
    return tuna_a2av_table[c.algorithm].run(&chosen);
}
