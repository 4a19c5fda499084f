/* Tuning tables: the best measured configuration per (P, Q, size bucket, sparsity bucket). */
#include "tuna_select.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int entry_int(json_t *e, const char *key, int idx, long lo, long hi, int *out,
                     const char *path)
{
    json_t *v = json_object_get(e, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return tuna_error_set(MPI_ERR_ARG,
                              "tuning table %s: entries[%d].%s must be an integer in [%ld, %ld]",
                              path, idx, key, lo, hi);
    *out = (int)json_integer_value(v);
    return MPI_SUCCESS;
}

static const char *coll_name(tuna_collective coll)
{
    return coll == TUNA_ALLTOALLV ? "alltoallv" : coll == TUNA_ALLGATHER ? "allgather"
                                                                          : "allreduce";
}

int tuna_tuning_load(const char *path, tuna_collective coll, tuna_tuning *out)
{
    static const char *const entry_keys[] = {"P", "ranks_per_node", "size_bucket",
                                             "sparsity_bucket", "options", "time",
                                             "vendor_time", "source", NULL};
    json_error_t err;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return tuna_error_set(MPI_ERR_ARG, "tuning table %s: line %d: %s", path, err.line,
                              err.text);
    int rc = MPI_SUCCESS;
    tuna_tuning t = {0};
    json_t *ver = json_object_get(root, "tuna_tuning");
    json_t *cl = json_object_get(root, "collective");
    json_t *entries = json_object_get(root, "entries");
    if (!json_is_object(root) || !json_is_integer(ver) || json_integer_value(ver) != 1)
        rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: not a tuning table (an object with "
                                         "\"tuna_tuning\": 1 expected)",
                            path);
    else if (!json_is_array(entries))
        rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: \"entries\" must be an array", path);
    else if (cl && (!json_is_string(cl) || strcmp(json_string_value(cl), coll_name(coll)) != 0))
        rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: \"collective\" is not \"%s\"", path,
                            coll_name(coll));
    size_t n = rc ? 0 : json_array_size(entries);
    if (n > 0 && !(t.entries = tuna_malloc(n * sizeof *t.entries)))
        rc = MPI_ERR_NO_MEM;
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *e = json_array_get(entries, i);
        int idx = (int)i;
        if (!json_is_object(e)) {
            rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d] is not an object",
                                path, idx);
            break;
        }
        const char *key;
        json_t *val;
        json_object_foreach(e, key, val) {
            bool ok = false;
            for (int k = 0; entry_keys[k]; k++)
                ok |= strcmp(key, entry_keys[k]) == 0;
            if (!ok && !rc)
                rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d]: unknown key "
                                                 "\"%s\"",
                                    path, idx, key);
        }
        tuna_tuning_entry *te = &t.entries[t.n];
        if (!rc)
            rc = entry_int(e, "P", idx, 1, 1L << 30, &te->P, path);
        if (!rc)
            rc = entry_int(e, "ranks_per_node", idx, 0, 1L << 30, &te->Q, path);
        if (!rc)
            rc = entry_int(e, "size_bucket", idx, 0, 62, &te->size_bucket, path);
        if (!rc)
            rc = entry_int(e, "sparsity_bucket", idx, 0, 3, &te->sparsity_bucket, path);
        json_t *o = json_object_get(e, "options");
        if (!rc && !json_is_string(o))
            rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d].options must be a "
                                             "string",
                                path, idx);
        if (!rc) {
            const char *s = json_string_value(o);
            if (strncmp(s, "auto", 4) == 0 && (s[4] == '\0' || s[4] == ':'))
                rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d].options: 'auto' "
                                                 "cannot be a table entry",
                                    path, idx);
            else if (tuna_options_parse(s, coll, &te->opt) != MPI_SUCCESS) {
                char msg[256];
                snprintf(msg, sizeof msg, "%s", tuna_error_string(MPI_ERR_ARG));
                tuna_error_clear(); /* replace the parser's message with the located one */
                rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d].options: %s",
                                    path, idx, msg);
            }
        }
        for (int k = 0; !rc && k < t.n; k++) {
            const tuna_tuning_entry *p = &t.entries[k];
            if (p->P == te->P && p->Q == te->Q && p->size_bucket == te->size_bucket &&
                p->sparsity_bucket == te->sparsity_bucket)
                rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d] repeats the key "
                                                 "of entries[%d]",
                                    path, idx, k);
        }
        if (!rc)
            t.n++;
    }
    json_decref(root);
    if (rc) {
        tuna_tuning_free(&t);
        return rc;
    }
    *out = t;
    return MPI_SUCCESS;
}

void tuna_tuning_free(tuna_tuning *t)
{
    free(t->entries);
    t->entries = NULL;
    t->n = 0;
}

const tuna_tuning_entry *tuna_tuning_find(const tuna_tuning *t, int P, int Q, int size_bucket,
                                          int sparsity_bucket)
{
    for (int i = 0; i < t->n; i++) {
        const tuna_tuning_entry *e = &t->entries[i];
        if (e->P == P && e->Q == Q && e->size_bucket == size_bucket &&
            e->sparsity_bucket == sparsity_bucket)
            return e;
    }
    return NULL;
}
