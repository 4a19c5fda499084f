/*
 * Wisdom: measured choices (the planner's, and the classes auto learned), in this process and in a JSON file. An entry is
 * valid where its key matches: MPI library, P, ranks per node, nodes, collective and the
 * pattern's agreed statistics. Import is agreed (every rank must read the same bytes and
 * parse them), so a missing or different file fails every rank instead of splitting them
 * between measuring and not. docs/plans.md has the file format.
 */
#include "tuna_select.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wisdom_entry {
    tuna_wisdom_key key;
    tuna_choice choice;
    double seconds;
} wisdom_entry;

static wisdom_entry *entries;
static int nentries, capacity;
static long additions; /* tuna_wisdom_add() calls that kept their entry */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void tuna_wisdom_key_init(tuna_wisdom_key *k, tuna_collective coll, const tuna_ctx *ctx,
                          const long long *sig, int nsig)
{
    memset(k, 0, sizeof *k);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (PMPI_Get_library_version(version, &len) == MPI_SUCCESS) {
        size_t n = strcspn(version, "\n");
        if (n >= sizeof k->library)
            n = sizeof k->library - 1;
        memcpy(k->library, version, n);
    }
    k->P = ctx->size;
    k->Q = ctx->ranks_per_node;
    k->N = ctx->nnodes;
    k->coll = coll;
    for (int i = 0; i < nsig && i < TUNA_WISDOM_SIG; i++)
        k->sig[i] = sig[i];
}

static bool same_key(const tuna_wisdom_key *a, const tuna_wisdom_key *b)
{
    return strcmp(a->library, b->library) == 0 && a->P == b->P && a->Q == b->Q &&
           a->N == b->N && a->coll == b->coll && memcmp(a->sig, b->sig, sizeof a->sig) == 0;
}

bool tuna_wisdom_find(const tuna_wisdom_key *k, tuna_choice *c, double *seconds)
{
    bool found = false;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nentries && !found; i++)
        if (same_key(&entries[i].key, k)) {
            *c = entries[i].choice;
            *seconds = entries[i].seconds;
            found = true;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

/* Replaces an entry with the same key. False only when out of memory. */
static bool add_locked(const tuna_wisdom_key *k, const tuna_choice *c, double seconds)
{
    for (int i = 0; i < nentries; i++)
        if (same_key(&entries[i].key, k)) {
            entries[i].choice = *c;
            entries[i].seconds = seconds;
            return true;
        }
    if (nentries == capacity) {
        int cap = capacity ? 2 * capacity : 16;
        wisdom_entry *e = tuna_realloc_try(entries, sizeof *e * (size_t)cap);
        if (!e)
            return false;
        entries = e;
        capacity = cap;
    }
    entries[nentries++] = (wisdom_entry){*k, *c, seconds};
    return true;
}

void tuna_wisdom_add(const tuna_wisdom_key *k, const tuna_choice *c, double seconds)
{
    pthread_mutex_lock(&lock);
    if (add_locked(k, c, seconds)) /* out of memory: the choice is simply not remembered */
        additions++;
    pthread_mutex_unlock(&lock);
}

long tuna_wisdom_additions(void)
{
    pthread_mutex_lock(&lock);
    long n = additions;
    pthread_mutex_unlock(&lock);
    return n;
}

static json_t *entry_json(const wisdom_entry *e)
{
    const tuna_algorithm_info *info = tuna_algorithm_get(e->key.coll, e->choice.algorithm);
    json_t *params = json_object(), *sig = json_array();
    for (int i = 0; i < info->nparams; i++)
        json_object_set_new(params, info->params[i].name, json_integer(e->choice.param[i]));
    for (int i = 0; i < TUNA_WISDOM_SIG; i++)
        json_array_append_new(sig, json_integer(e->key.sig[i]));
    return json_pack("{s:s, s:i, s:i, s:i, s:s, s:o, s:s, s:o, s:f}", "library",
                     e->key.library, "P", e->key.P, "ranks_per_node", e->key.Q, "nodes",
                     e->key.N, "collective", tuna_collective_name(e->key.coll), "signature", sig,
                     "algorithm", info->name, "params", params, "seconds", e->seconds);
}

int tuna_wisdom_export(const char *path, MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return tuna_error_set(MPI_ERR_COMM, "tuna_wisdom_export: comm is MPI_COMM_NULL");
    int me;
    TUNA_MPI_CHECK(PMPI_Comm_rank(comm, &me));
    int rc = MPI_SUCCESS;
    char msg[400] = "";
    if (me == 0) {
        if (!path) {
            rc = MPI_ERR_ARG;
            snprintf(msg, sizeof msg, "tuna_wisdom_export: path is NULL");
        } else {
            json_t *list = json_array();
            pthread_mutex_lock(&lock);
            for (int i = 0; i < nentries; i++)
                json_array_append_new(list, entry_json(&entries[i]));
            pthread_mutex_unlock(&lock);
            json_t *root = json_pack("{s:i, s:o}", "tuna_wisdom", 1, "entries", list);
            if (!root || json_dump_file(root, path, JSON_INDENT(1) | JSON_SORT_KEYS) != 0) {
                rc = MPI_ERR_FILE;
                snprintf(msg, sizeof msg, "tuna_wisdom_export: cannot write '%s'", path);
            }
            json_decref(root);
        }
    }
    /* Every rank returns rank 0's outcome. */
    TUNA_MPI_CHECK(PMPI_Bcast(&rc, 1, MPI_INT, 0, comm));
    if (rc != MPI_SUCCESS) {
        TUNA_MPI_CHECK(PMPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
        return tuna_error_set(rc, "%s", msg);
    }
    return MPI_SUCCESS;
}

static int find_algorithm(tuna_collective coll, const char *name)
{
    return name ? tuna_algorithm_find(coll, name) : -1;
}

/* Parses the file's entries into out (n of them); a message in why on failure. */
static int parse(const char *text, wisdom_entry **out, int *n, char *why, size_t len)
{
    json_error_t err;
    json_t *root = json_loads(text, 0, &err);
    *out = NULL;
    *n = 0;
    if (!root) {
        snprintf(why, len, "invalid JSON at line %d: %s", err.line, err.text);
        return MPI_ERR_ARG;
    }
    json_t *list = json_object_get(root, "entries");
    if (json_integer_value(json_object_get(root, "tuna_wisdom")) != 1 || !json_is_array(list)) {
        snprintf(why, len, "not a tuna wisdom file (expected {\"tuna_wisdom\": 1, "
                           "\"entries\": [...]})");
        json_decref(root);
        return MPI_ERR_ARG;
    }
    size_t m = json_array_size(list);
    wisdom_entry *e = tuna_calloc(m ? m : 1, sizeof *e);
    int rc = e ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (size_t i = 0; i < m && rc == MPI_SUCCESS; i++) {
        json_t *j = json_array_get(list, i), *sig = NULL, *params = NULL;
        const char *lib = NULL, *coll = NULL, *alg = NULL;
        double secs = 0;
        wisdom_entry *w = &e[i];
        if (json_unpack(j, "{s:s, s:i, s:i, s:i, s:s, s:o, s:s, s:o, s:F}", "library", &lib,
                        "P", &w->key.P, "ranks_per_node", &w->key.Q, "nodes", &w->key.N,
                        "collective", &coll, "signature", &sig, "algorithm", &alg, "params",
                        &params, "seconds", &secs) != 0 ||
            !json_is_array(sig) || json_array_size(sig) != TUNA_WISDOM_SIG || !json_is_object(params)) {
            snprintf(why, len, "entry %zu: missing or mistyped fields", i);
            rc = MPI_ERR_ARG;
            break;
        }
        snprintf(w->key.library, sizeof w->key.library, "%s", lib);
        int c = -1;
        for (int k = 0; k < TUNA_COLLECTIVE_COUNT; k++)
            if (strcmp(coll, tuna_collective_name((tuna_collective)k)) == 0)
                c = k;
        int a = c < 0 ? -1 : find_algorithm((tuna_collective)c, alg);
        if (a < 0) {
            snprintf(why, len, "entry %zu: unknown collective '%s' or algorithm '%s'", i, coll,
                     alg);
            rc = MPI_ERR_ARG;
            break;
        }
        w->key.coll = (tuna_collective)c;
        for (int k = 0; k < TUNA_WISDOM_SIG; k++)
            w->key.sig[k] = json_integer_value(json_array_get(sig, (size_t)k));
        const tuna_algorithm_info *info = tuna_algorithm_get(w->key.coll, a);
        w->choice.algorithm = a;
        for (int k = 0; k < info->nparams; k++) {
            json_t *v = json_object_get(params, info->params[k].name);
            if (!json_is_integer(v)) {
                snprintf(why, len, "entry %zu: parameter '%s' of '%s' missing", i,
                         info->params[k].name, alg);
                rc = MPI_ERR_ARG;
                break;
            }
            w->choice.param[k] = (long)json_integer_value(v);
        }
        w->seconds = secs;
    }
    json_decref(root);
    if (rc != MPI_SUCCESS) {
        free(e);
        return rc;
    }
    *out = e;
    *n = (int)m;
    return MPI_SUCCESS;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = tuna_malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *b = tuna_realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int tuna_wisdom_import(const char *path, MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return tuna_error_set(MPI_ERR_COMM, "tuna_wisdom_import: comm is MPI_COMM_NULL");
    size_t len = 0;
    char *text = read_file(path, &len);
    char why[300] = "";
    wisdom_entry *parsed = NULL;
    int n = 0, local = MPI_SUCCESS;
    if (!text) {
        local = MPI_ERR_FILE;
        snprintf(why, sizeof why, "cannot read '%s'", path ? path : "(null)");
    } else {
        local = parse(text, &parsed, &n, why, sizeof why);
    }
    /* FNV-1a of the bytes: max of (failed, h, -h) tells failure and differing contents. */
    unsigned long long u = 1469598103934665603ULL;
    for (size_t i = 0; text && i < len; i++)
        u = (u ^ (unsigned char)text[i]) * 1099511628211ULL;
    free(text);
    long long h = (long long)(u >> 2);
    long long v[3] = {local != MPI_SUCCESS, h, -h};
    int rc = PMPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MAX, comm);
    if (rc != MPI_SUCCESS) {
        free(parsed);
        return tuna_error_set(rc, "tuna_wisdom_import: MPI_Allreduce failed");
    }
    if (local != MPI_SUCCESS) {
        free(parsed);
        return tuna_error_set(local, "tuna_wisdom_import: %s", why);
    }
    if (v[0]) {
        free(parsed);
        return tuna_error_set(MPI_ERR_FILE, "tuna_wisdom_import: '%s' could not be read or "
                                            "parsed on another rank; nothing imported",
                              path);
    }
    if (v[1] != -v[2]) {
        free(parsed);
        return tuna_error_set(MPI_ERR_FILE, "tuna_wisdom_import: the ranks read different "
                                            "contents of '%s'; nothing imported",
                              path);
    }
    pthread_mutex_lock(&lock);
    bool ok = true;
    for (int i = 0; i < n && ok; i++)
        ok = add_locked(&parsed[i].key, &parsed[i].choice, parsed[i].seconds);
    pthread_mutex_unlock(&lock);
    free(parsed);
    /* Out of memory mid-way is local: agree on it as well. */
    int bad = !ok;
    TUNA_MPI_CHECK(PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm));
    if (bad)
        return tuna_error_set(MPI_ERR_NO_MEM, "tuna_wisdom_import: out of memory on some "
                                              "rank; partly imported");
    return MPI_SUCCESS;
}
