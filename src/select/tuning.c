/*
 * Tuning tables (TUNA_TUNING, docs/tuning.md): entries of key ranges (P, ranks per node, size
 * bucket, sparsity bucket) and a configuration, per collective; the first entry whose ranges
 * hold the inputs decides, as in Open MPI's rules files. JSON Schema of the format:
 * python/tuna_tools/data/tuning.schema.json (`tuna tune check`); this reader applies the
 * same rules and the checks a schema cannot express (options, unreachable entries).
 */
#include "tuna_select.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *coll_name(tuna_collective coll)
{
    return tuna_collective_name(coll);
}

static int coll_of(const char *name, tuna_collective *out)
{
    for (int c = 0; c < TUNA_COLLECTIVE_COUNT; c++)
        if (strcmp(name, coll_name((tuna_collective)c)) == 0) {
            *out = (tuna_collective)c;
            return 0;
        }
    return -1;
}

/*
 * Key `key` of entry idx into *out: an integer n (the range [n, n]) or [lo, hi] with
 * min <= lo <= hi <= max (hi null: up to max). Absent: the whole [min, max] if `optional`.
 */
static int entry_range(json_t *e, const char *key, int idx, long min, long max, bool optional,
                       tuna_tuning_range *out, const char *path)
{
    json_t *v = json_object_get(e, key);
    if (!v && optional) {
        *out = (tuna_tuning_range){min, max};
        return MPI_SUCCESS;
    }
    long lo = -1, hi = -1;
    bool ok = false;
    if (json_is_integer(v)) {
        lo = hi = (long)json_integer_value(v);
        ok = true;
    } else if (json_is_array(v) && json_array_size(v) == 2 &&
               json_is_integer(json_array_get(v, 0))) {
        json_t *top = json_array_get(v, 1);
        lo = (long)json_integer_value(json_array_get(v, 0));
        hi = json_is_null(top) ? max : json_is_integer(top) ? (long)json_integer_value(top) : -1;
        ok = json_is_null(top) || json_is_integer(top);
    }
    if (!ok || lo < min || hi > max || lo > hi)
        return tuna_error_set(MPI_ERR_ARG,
                              "tuning table %s: entries[%d].%s must be an integer in [%ld, %ld] "
                              "or a range [lo, hi] within it (hi null: no upper limit)",
                              path, idx, key, min, max);
    *out = (tuna_tuning_range){lo, hi};
    return MPI_SUCCESS;
}

static bool within(const tuna_tuning_range *inner, const tuna_tuning_range *outer)
{
    return outer->lo <= inner->lo && inner->hi <= outer->hi;
}

static bool in_range(const tuna_tuning_range *r, long v)
{
    return r->lo <= v && v <= r->hi;
}

/* Whether entry a matches every input entry b matches (b can never be reached after a). */
static bool covers(const tuna_tuning_entry *a, const tuna_tuning_entry *b)
{
    return within(&b->P, &a->P) && within(&b->Q, &a->Q) &&
           within(&b->size_bucket, &a->size_bucket) &&
           within(&b->sparsity_bucket, &a->sparsity_bucket);
}

static void mix(unsigned long long *h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) /* FNV-1a */
        *h = (*h ^ c[i]) * 1099511628211ULL;
}

/* Entry idx of the file, for collective ecoll, into *te (options parsed for ecoll). */
static int parse_entry(json_t *e, int idx, tuna_collective ecoll, tuna_tuning_entry *te,
                       const char *path)
{
    static const char *const entry_keys[] = {"collective", "P", "ranks_per_node",
                                             "size_bucket", "sparsity_bucket", "options",
                                             "time", "vendor_time", "source", NULL};
    const char *bad = tuna_select_unknown_key(e, entry_keys);
    if (bad)
        return tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d]: unknown key \"%s\"",
                              path, idx, bad);
    int rc = entry_range(e, "P", idx, 1, 1L << 30, false, &te->P, path);
    if (!rc)
        rc = entry_range(e, "ranks_per_node", idx, 0, 1L << 30, false, &te->Q, path);
    if (!rc)
        rc = entry_range(e, "size_bucket", idx, 0, tuna_select_size_bucket_count() - 1, false,
                         &te->size_bucket, path);
    /* allgather / allreduce inputs are dense: their sparsity bucket is always 0 */
    if (!rc)
        rc = entry_range(e, "sparsity_bucket", idx, 0, 3, ecoll != TUNA_ALLTOALLV,
                         &te->sparsity_bucket, path);
    if (rc)
        return rc;
    json_t *o = json_object_get(e, "options");
    if (!json_is_string(o))
        return tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d].options must be a "
                                           "string",
                              path, idx);
    const char *s = json_string_value(o);
    if (strncmp(s, "auto", 4) == 0 && (s[4] == '\0' || s[4] == ':'))
        return tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d].options: 'auto' "
                                           "cannot be a table entry",
                              path, idx);
    if (tuna_options_parse(s, ecoll, &te->opt) != MPI_SUCCESS) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", tuna_error_string(MPI_ERR_ARG));
        tuna_error_clear(); /* replace the parser's message with the located one */
        return tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d].options (%s): %s", path,
                              idx, coll_name(ecoll), msg);
    }
    return MPI_SUCCESS;
}

int tuna_tuning_load(const char *path, tuna_collective coll, tuna_tuning *out)
{
    static const char *const file_keys[] = {"tuna_tuning", "collective", "entries", "comment",
                                            NULL};
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
    long version = json_is_integer(ver) ? (long)json_integer_value(ver) : 0;
    tuna_collective file_coll = TUNA_ALLTOALLV;
    if (!json_is_object(root) || (version != 1 && version != 2))
        rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: not a tuning table (an object with "
                                         "\"tuna_tuning\": 1 or 2 expected)",
                            path);
    else if (tuna_select_unknown_key(root, file_keys))
        rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: unknown key \"%s\" (known: "
                                         "tuna_tuning, collective, entries, comment)",
                            path, tuna_select_unknown_key(root, file_keys));
    else if (!json_is_array(entries))
        rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: \"entries\" must be an array", path);
    else if (cl && (!json_is_string(cl) || coll_of(json_string_value(cl), &file_coll) != 0 ||
                    (version == 1 && file_coll != TUNA_ALLTOALLV)))
        /* version 1 tables were alltoallv's only */
        rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: \"collective\" is not %s", path,
                            version == 1 ? "\"alltoallv\" (version 1)"
                                         : "alltoallv, allgather or allreduce");
    size_t n = rc ? 0 : json_array_size(entries);
    if (n > 0 && !(t.entries = tuna_malloc(n * sizeof *t.entries)))
        rc = MPI_ERR_NO_MEM;
    /* Every entry is validated; those of `coll` are kept, in file order. */
    tuna_tuning_entry *seen = n > 0 && !rc ? tuna_malloc(n * sizeof *seen) : NULL;
    tuna_collective *seen_coll = n > 0 && !rc ? tuna_malloc(n * sizeof *seen_coll) : NULL;
    if (n > 0 && !rc && !(seen && seen_coll))
        rc = MPI_ERR_NO_MEM;
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *e = json_array_get(entries, i);
        int idx = (int)i;
        if (!json_is_object(e)) {
            rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d] is not an object",
                                path, idx);
            break;
        }
        tuna_collective ecoll = file_coll;
        json_t *ec = json_object_get(e, "collective");
        if (ec && (version == 1 || !json_is_string(ec) ||
                   coll_of(json_string_value(ec), &ecoll) != 0)) {
            rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d].collective must be "
                                             "alltoallv, allgather, allreduce or alltoall (version 2)",
                                path, idx);
            break;
        }
        tuna_tuning_entry *te = &seen[i];
        if ((rc = parse_entry(e, idx, ecoll, te, path)) != MPI_SUCCESS)
            break;
        seen_coll[i] = ecoll;
        for (size_t k = 0; k < i && !rc; k++)
            if (seen_coll[k] == ecoll && covers(&seen[k], te))
                rc = tuna_error_set(MPI_ERR_ARG, "tuning table %s: entries[%d] repeats or lies "
                                                 "within the key ranges of entries[%d], which "
                                                 "matches first: it is never used",
                                    path, idx, (int)k);
        if (!rc && ecoll == coll) {
            t.entries[t.n++] = *te;
            long k[] = {te->P.lo, te->P.hi, te->Q.lo, te->Q.hi, te->size_bucket.lo,
                        te->size_bucket.hi, te->sparsity_bucket.lo, te->sparsity_bucket.hi,
                        te->opt.algorithm};
            mix(&h, k, sizeof k);
            mix(&h, te->opt.value, sizeof te->opt.value);
        }
    }
    free(seen);
    free(seen_coll);
    json_decref(root);
    if (rc) {
        tuna_tuning_free(&t);
        return rc;
    }
    t.digest = h;
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
        if (in_range(&e->P, P) && in_range(&e->Q, Q) && in_range(&e->size_bucket, size_bucket) &&
            in_range(&e->sparsity_bucket, sparsity_bucket))
            return e;
    }
    return NULL;
}
