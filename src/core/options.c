/* Option strings: "ALGORITHM[:key=value[,key=value...]]", parsed and formatted, over the
 * collectives' registries (tuna_registry_of). */
#include "tuna_internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tuna_algorithm_count(tuna_collective coll)
{
    const tuna_registry *r = tuna_registry_of(coll);
    return r ? r->n : 0;
}

const tuna_algorithm_info *tuna_algorithm_get(tuna_collective coll, int index)
{
    if (index < 0 || index >= tuna_algorithm_count(coll))
        return NULL;
    return &tuna_registry_row(tuna_registry_of(coll), index)->info;
}

static int find_n(tuna_collective coll, const char *name, size_t len)
{
    int n = tuna_algorithm_count(coll);
    for (int i = 0; i < n; i++) {
        const char *an = tuna_algorithm_get(coll, i)->name;
        if (strlen(an) == len && strncmp(an, name, len) == 0)
            return i;
    }
    return -1;
}

int tuna_algorithm_find(tuna_collective coll, const char *name)
{
    return name ? find_n(coll, name, strlen(name)) : -1;
}

/* Parse one value token; symbolic values only where the range reaches P. */
static int parse_value(const tuna_param_info *p, const char *tok, size_t len, long *out)
{
    bool symbolic_ok = p->max == TUNA_PARAM_P;
    if (symbolic_ok && len == 1 && tok[0] == 'P') {
        *out = TUNA_PARAM_P;
        return 0;
    }
    if (symbolic_ok && len == 5 && strncmp(tok, "sqrtP", 5) == 0) {
        *out = TUNA_PARAM_SQRTP;
        return 0;
    }
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, tok, len);
    buf[len] = '\0';
    if (!(buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno || *end != '\0')
        return -1;
    /* One rule for every parameter (docs/algorithms.md, "Parameter values"): a value no
     * communicator could make valid is rejected; one above this communicator's size, where
     * the range ends at P, is clamped to P per call (an option string serves any size). */
    if (v < p->min || v > (p->max == TUNA_PARAM_P ? (long)INT_MAX : p->max))
        return -2;
    *out = v;
    return 0;
}

static void range_text(const tuna_param_info *p, char *buf, size_t len)
{
    if (p->max == TUNA_PARAM_P)
        snprintf(buf, len, "[%ld, P] (or P, sqrtP; values above P clamp to P)", p->min);
    else
        snprintf(buf, len, "[%ld, %ld]", p->min, p->max);
}

int tuna_options_parse(const char *str, tuna_collective coll, tuna_options *opt)
{
    tuna_error_clear();
    if (!opt)
        return tuna_error_set(MPI_ERR_ARG, "tuna_options_parse: NULL options pointer");
    if (!str)
        return tuna_error_set(MPI_ERR_ARG, "tuna_options_parse: NULL option string");
    if ((int)coll < 0 || coll >= TUNA_COLLECTIVE_COUNT)
        return tuna_error_set(MPI_ERR_ARG, "tuna_options_parse: unknown collective %d",
                              (int)coll);
    tuna_options o = {.collective = coll};
    const char *colon = strchr(str, ':');
    size_t nlen = colon ? (size_t)(colon - str) : strlen(str);
    o.algorithm = find_n(coll, str, nlen);
    if (o.algorithm < 0)
        return tuna_error_set(MPI_ERR_ARG,
                              "unknown %s algorithm '%.*s' in option string '%s' "
                              "(tuna-bench --list shows the algorithms)",
                              tuna_collective_name(coll), (int)nlen, str, str);
    const tuna_algorithm_info *info = tuna_algorithm_get(coll, o.algorithm);
    if (colon) {
        const char *s = colon + 1;
        if (*s == '\0')
            return tuna_error_set(MPI_ERR_ARG, "empty parameter list after ':' in '%s'", str);
        while (*s) {
            const char *comma = strchr(s, ',');
            size_t tlen = comma ? (size_t)(comma - s) : strlen(s);
            const char *eq = memchr(s, '=', tlen);
            if (!eq)
                return tuna_error_set(MPI_ERR_ARG, "parameter '%.*s' in '%s' is not key=value",
                                      (int)tlen, s, str);
            size_t klen = (size_t)(eq - s);
            int pi = -1;
            for (int i = 0; i < info->nparams; i++)
                if (strlen(info->params[i].name) == klen &&
                    strncmp(info->params[i].name, s, klen) == 0)
                    pi = i;
            if (pi < 0)
                return tuna_error_set(MPI_ERR_ARG,
                                      "unknown parameter '%.*s' for algorithm '%s' in '%s'",
                                      (int)klen, s, info->name, str);
            if (o.set & (1u << pi))
                return tuna_error_set(MPI_ERR_ARG, "parameter '%.*s' given twice in '%s'",
                                      (int)klen, s, str);
            const char *vtok = eq + 1;
            size_t vlen = tlen - klen - 1;
            long v = 0;
            int prc = parse_value(&info->params[pi], vtok, vlen, &v);
            if (prc != 0) {
                char range[64];
                range_text(&info->params[pi], range, sizeof range);
                return tuna_error_set(MPI_ERR_ARG, "%s value '%.*s' for '%.*s' in '%s'; allowed %s",
                                      prc == -2 ? "out-of-range" : "malformed", (int)vlen, vtok,
                                      (int)klen, s, str, range);
            }
            o.value[pi] = v;
            o.set |= 1u << pi;
            if (!comma)
                break;
            s = comma + 1;
            if (*s == '\0')
                return tuna_error_set(MPI_ERR_ARG, "trailing ',' in '%s'", str);
        }
    }
    for (int i = 0; i < info->nparams; i++)
        if (!(o.set & (1u << i)))
            o.value[i] = info->params[i].defval;
    *opt = o;
    return MPI_SUCCESS;
}

int tuna_options_format(const tuna_options *opt, char *buf, size_t len)
{
    tuna_error_clear();
    if (!opt || !buf)
        return tuna_error_set(MPI_ERR_ARG, "tuna_options_format: NULL argument");
    const tuna_algorithm_info *info = tuna_algorithm_get(opt->collective, opt->algorithm);
    if (!info)
        return tuna_error_set(MPI_ERR_ARG, "tuna_options_format: invalid algorithm index %d",
                              opt->algorithm);
    size_t used = 0;
    int n = snprintf(buf, len, "%s", info->name);
    if (n < 0 || (size_t)n >= len)
        goto too_small;
    used = (size_t)n;
    char sep = ':';
    for (int i = 0; i < info->nparams; i++) {
        if (!(opt->set & (1u << i)))
            continue;
        long v = opt->value[i];
        if (v == TUNA_PARAM_P)
            n = snprintf(buf + used, len - used, "%c%s=P", sep, info->params[i].name);
        else if (v == TUNA_PARAM_SQRTP)
            n = snprintf(buf + used, len - used, "%c%s=sqrtP", sep, info->params[i].name);
        else
            n = snprintf(buf + used, len - used, "%c%s=%ld", sep, info->params[i].name, v);
        if (n < 0 || (size_t)n >= len - used)
            goto too_small;
        used += (size_t)n;
        sep = ',';
    }
    return MPI_SUCCESS;
too_small:
    if (len)
        buf[0] = '\0';
    return tuna_error_set(MPI_ERR_ARG, "tuna_options_format: buffer of %zu bytes too small", len);
}

static const char *env_name(tuna_collective coll)
{
    return (unsigned)coll < TUNA_COLLECTIVE_COUNT ? tuna_collective_table[coll].env : NULL;
}

/* Built-in default when the environment says nothing. */
static const char *builtin_default(tuna_collective coll)
{
    /* auto: the cost model (alltoallv: or a tuning table), docs/tuning.md. */
    (void)coll;
    return "auto";
}

int tuna_options_default(tuna_collective coll, tuna_options *opt)
{
    const char *name = env_name(coll);
    const char *env = name ? getenv(name) : NULL;
    if (env && *env) {
        int rc = tuna_options_parse(env, coll, opt);
        if (rc != MPI_SUCCESS) {
            /* Prefix the variable's name to the parser's message. */
            char msg[512];
            snprintf(msg, sizeof msg, "%s", tuna_error_string(rc));
            tuna_error_clear();
            return tuna_error_set(rc, "%s=%s: %s", name, env, msg);
        }
        return rc;
    }
    return tuna_options_parse(builtin_default(coll), coll, opt);
}

/*
 * The defaults of opt == NULL, read from the environment once per process (a getenv and a
 * parse per call cost more than a small MPI_Alltoallv); a bad variable is reported on
 * every call that needs it.
 */
static struct {
    tuna_options opt;
    int rc;
    char msg[512];
} defaults[TUNA_COLLECTIVE_COUNT];
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;
static atomic_bool defaults_loaded; /* spares the calls after the first a pthread_once */

static void defaults_load(void)
{
    for (int c = 0; c < TUNA_COLLECTIVE_COUNT; c++) {
        defaults[c].rc = tuna_options_default((tuna_collective)c, &defaults[c].opt);
        if (defaults[c].rc != MPI_SUCCESS)
            snprintf(defaults[c].msg, sizeof defaults[c].msg, "%s",
                     tuna_error_string(defaults[c].rc));
    }
    tuna_error_clear();
}

static void load_defaults_once(void)
{
    pthread_once(&defaults_once, defaults_load);
    atomic_store_explicit(&defaults_loaded, true, memory_order_release);
}

int tuna_call_begin(tuna_collective coll, MPI_Comm comm, const tuna_options **opt)
{
    tuna_error_clear();
    if (tuna_stats_on)
        memset(&tuna_stats_current, 0, sizeof tuna_stats_current);
    if (comm == MPI_COMM_NULL)
        return tuna_error_set(MPI_ERR_COMM, "tuna_%s: comm is MPI_COMM_NULL",
                              tuna_collective_name(coll));
    if (!*opt) {
        if (!atomic_load_explicit(&defaults_loaded, memory_order_acquire))
            load_defaults_once();
        if ((int)coll < 0 || (int)coll >= TUNA_COLLECTIVE_COUNT)
            return tuna_error_set(MPI_ERR_ARG, "tuna: unknown collective %d", (int)coll);
        if (defaults[coll].rc != MPI_SUCCESS)
            return tuna_error_set(defaults[coll].rc, "%s", defaults[coll].msg);
        *opt = &defaults[coll].opt;
    }
    const tuna_registry *reg = tuna_registry_of(coll);
    if (!reg || (*opt)->collective != coll || (*opt)->algorithm < 0 ||
        (*opt)->algorithm >= reg->n)
        return tuna_error_set(MPI_ERR_ARG,
                              "tuna_%s: options are not %s options (use tuna_options_parse)",
                              tuna_collective_name(coll), tuna_collective_name(coll));
    tuna_stats_current.algorithm = (*opt)->algorithm;
    tuna_stats_current.auto_source = 0;
    tuna_stats_current.fallback = NULL;
    return MPI_SUCCESS;
}

int tuna_require_intracomm(MPI_Comm comm, const char *algorithm)
{
    int inter = 0;
    TUNA_MPI_CHECK(PMPI_Comm_test_inter(comm, &inter));
    if (inter)
        return tuna_error_set(MPI_ERR_COMM,
                              "algorithm '%s' supports intracommunicators only "
                              "(use 'vendor' for intercommunicators)",
                              algorithm);
    return MPI_SUCCESS;
}
