/* Machine profiles: the built-in one and JSON files written by tuna-calibrate. */
#include "tuna_select.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void tuna_profile_builtin(tuna_profile *p)
{
    /* A generic cluster node on a 100 Gb/s fabric with one NIC (docs/tuning.md). */
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "builtin");
    p->intra = (tuna_level_profile){0.4e-6, 0.2e-6, 0.05e-6, 8e9};
    p->inter = (tuna_level_profile){1.5e-6, 0.4e-6, 0.1e-6, 12e9};
    p->nics_per_node = 1;
    p->copy_bandwidth = 8e9;
    p->datatype_overhead = 1e-6;
    p->datatype_block = 5e-9;
    p->call_overhead = 1e-7;
}

/* A finite number >= 0 (> 0 if `nonzero`) at `key` of `obj` into *out (kept when absent
 * and optional). */
static int get_number(json_t *obj, const char *where, const char *key, bool required,
                      bool nonzero, double *out, const char *path)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            return tuna_error_set(MPI_ERR_ARG, "profile %s: missing key \"%s%s\"", path, where,
                                  key);
        return MPI_SUCCESS;
    }
    if (!json_is_number(v))
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"%s%s\" must be a number", path, where,
                              key);
    double d = json_number_value(v);
    if (!isfinite(d) || d < 0 || (nonzero && d == 0) || d > 1e30)
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"%s%s\" = %g is out of range (%s)",
                              path, where, key, d, nonzero ? "> 0" : ">= 0");
    *out = d;
    return MPI_SUCCESS;
}

const char *tuna_select_unknown_key(struct json_t *obj, const char *const *known)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        bool ok = false;
        for (int i = 0; known[i]; i++)
            ok |= strcmp(key, known[i]) == 0;
        if (!ok)
            return key;
    }
    return NULL;
}

/* Reject keys outside `allowed` (NULL-terminated), so a typo is an error, not a default. */
static int check_keys(json_t *obj, const char *const *allowed, const char *where,
                      const char *path)
{
    const char *key = tuna_select_unknown_key(obj, allowed);
    if (key)
        return tuna_error_set(MPI_ERR_ARG, "profile %s: unknown key \"%s%s\"", path, where, key);
    return MPI_SUCCESS;
}

/*
 * Object `name` of `root` holding exactly the numbers keys[0..n-1], all required, into
 * *out[i] (> 0 where positive[i]). An absent object is an error if `required`, else leaves
 * *found false.
 */
static int load_numbers(json_t *root, const char *name, bool required, int n,
                        const char *const *keys, const bool *positive, double *const *out,
                        bool *found, const char *path)
{
    json_t *o = json_object_get(root, name);
    *found = false;
    if (!o && !required)
        return MPI_SUCCESS;
    if (!o || !json_is_object(o)) {
        char list[128] = "";
        for (int i = 0; i < n; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     keys[i]);
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"%s\" must be an object with keys %s",
                              path, name, list);
    }
    const char *allowed[8]; /* n <= 7: the callers below */
    for (int i = 0; i < n; i++)
        allowed[i] = keys[i];
    allowed[n] = NULL;
    char where[32];
    snprintf(where, sizeof where, "%s.", name);
    int rc = check_keys(o, allowed, where, path);
    for (int i = 0; i < n && !rc; i++)
        rc = get_number(o, where, keys[i], true, positive[i], out[i], path);
    *found = rc == MPI_SUCCESS;
    return rc;
}

static int load_level(json_t *root, const char *name, tuna_level_profile *l, const char *path)
{
    static const char *const keys[] = {"latency", "overhead", "gap", "bandwidth"};
    static const bool positive[] = {false, false, false, true};
    double *const out[] = {&l->latency, &l->overhead, &l->gap, &l->bandwidth};
    bool found;
    return load_numbers(root, name, true, 4, keys, positive, out, &found, path);
}

/* "vendor_alltoallv": the option string of the tuna algorithm that models the MPI library's
 * own MPI_Alltoallv (vendor and auto cannot model it: one is what is modelled, the other is
 * not modelled at all). */
static int load_vendor_model(json_t *root, tuna_profile *p, const char *path)
{
    json_t *v = json_object_get(root, "vendor_alltoallv");
    if (!v)
        return MPI_SUCCESS;
    if (!json_is_string(v))
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"vendor_alltoallv\" must be an "
                                           "alltoallv option string such as \"scattered:block=32\"",
                              path);
    const char *s = json_string_value(v);
    tuna_options o;
    if (tuna_options_parse(s, TUNA_ALLTOALLV, &o) != MPI_SUCCESS) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", tuna_error_string(MPI_ERR_ARG));
        tuna_error_clear(); /* replace the parser's message with the located one */
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"vendor_alltoallv\": %s", path, msg);
    }
    /* The option string was read through the alltoallv registry (the core's parser); its
     * row says whether it is one of tuna's own algorithms. */
    if (tuna_registry_row(tuna_registry_of(TUNA_ALLTOALLV), o.algorithm)->kind !=
        TUNA_ROW_ALGORITHM)
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"vendor_alltoallv\" = \"%s\": name the "
                                           "tuna algorithm that behaves like the MPI library's "
                                           "MPI_Alltoallv (not vendor or auto)",
                              path, s);
    p->has_vendor_alltoallv = true;
    p->vendor_alltoallv = o;
    return MPI_SUCCESS;
}

/* "agreement": {"per_round": s, "per_rank": s} (see tuna_profile). */
static int load_agreement(json_t *root, tuna_profile *p, const char *path)
{
    static const char *const keys[] = {"per_round", "per_rank"};
    static const bool positive[] = {false, false};
    double *const out[] = {&p->agreement_per_round, &p->agreement_per_rank};
    return load_numbers(root, "agreement", false, 2, keys, positive, out, &p->has_agreement,
                        path);
}

/* One positive integer of a network shape, at most `max`. */
static int shape_int(json_t *v, const char *what, long max, int *out, const char *path)
{
    json_int_t x = json_is_integer(v) ? json_integer_value(v) : 0;
    if (x < 1 || x > max)
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"network.%s\" must be an integer in "
                                           "[1, %ld]",
                              path, what, max);
    *out = (int)x;
    return MPI_SUCCESS;
}

/* "dims": [X, Y, ...] of a torus of at most TUNA_NET_MAX_NODES nodes. */
static int load_torus(json_t *o, tuna_profile *p, const char *path)
{
    json_t *dims = json_object_get(o, "dims");
    size_t nd = json_is_array(dims) ? json_array_size(dims) : 0;
    if (nd < 1 || nd > TUNA_TORUS_MAX_DIMS)
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"network.dims\" must be an array of 1 "
                                           "to %d integers",
                              path, TUNA_TORUS_MAX_DIMS);
    long nodes = 1;
    for (size_t j = 0; j < nd; j++) {
        int rc = shape_int(json_array_get(dims, j), "dims", TUNA_NET_MAX_NODES, &p->net_dims[j],
                           path);
        if (rc)
            return rc;
        nodes *= p->net_dims[j];
        if (nodes > TUNA_NET_MAX_NODES)
            return tuna_error_set(MPI_ERR_ARG, "profile %s: \"network.dims\": the model handles "
                                               "tori of at most %d nodes",
                                  path, TUNA_NET_MAX_NODES);
    }
    p->net_ndims = (int)nd;
    return MPI_SUCCESS;
}

/* "groups", "chassis", "routers": [count, links between two of them]; "nodes_per_router": n
 * (SimGrid's DRAGONFLY topo_parameters "G,GL;C,CL;R,RL;n"). */
static int load_dragonfly(json_t *o, tuna_profile *p, const char *path)
{
    static const char *const levels[] = {"groups", "chassis", "routers"};
    for (int l = 0; l < 3; l++) {
        json_t *a = json_object_get(o, levels[l]);
        if (!json_is_array(a) || json_array_size(a) != 2)
            return tuna_error_set(MPI_ERR_ARG, "profile %s: \"network.%s\" must be [count, "
                                               "links between two]",
                                  path, levels[l]);
        for (int k = 0; k < 2; k++) {
            int rc = shape_int(json_array_get(a, (size_t)k), levels[l], TUNA_NET_MAX_NODES,
                               &p->net_dims[2 * l + k], path);
            if (rc)
                return rc;
        }
    }
    int rc = shape_int(json_object_get(o, "nodes_per_router"), "nodes_per_router",
                       TUNA_NET_MAX_NODES, &p->net_dims[6], path);
    if (rc)
        return rc;
    const long routers = (long)p->net_dims[0] * p->net_dims[2] * p->net_dims[4];
    const long nodes = routers * p->net_dims[6];
    const long links = 2 * nodes + routers * (p->net_dims[4] + p->net_dims[2] + 1);
    if (nodes > TUNA_NET_MAX_NODES || links > TUNA_NET_MAX_LINKS)
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"network\": the model handles "
                                           "dragonflies of at most %d nodes and %d links",
                              path, TUNA_NET_MAX_NODES, TUNA_NET_MAX_LINKS);
    p->net_ndims = 7;
    return MPI_SUCCESS;
}

/* "network": {"topology": "torus", "dims": [X, Y, ...], "link_bandwidth": bytes/s} or
 * {"topology": "dragonfly", "groups": [G, GL], "chassis": [C, CL], "routers": [R, RL],
 * "nodes_per_router": n, "link_bandwidth": bytes/s} (see tuna_profile; absent: no network
 * term). */
static int load_network(json_t *root, tuna_profile *p, const char *path)
{
    static const char *const torus_keys[] = {"topology", "dims", "link_bandwidth", NULL};
    static const char *const dragonfly_keys[] = {"topology", "groups", "chassis", "routers",
                                                 "nodes_per_router", "link_bandwidth", NULL};
    json_t *o = json_object_get(root, "network");
    if (!o)
        return MPI_SUCCESS;
    if (!json_is_object(o))
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"network\" must be an object (keys: "
                                           "topology, its shape, link_bandwidth)",
                              path);
    json_t *topo = json_object_get(o, "topology");
    const char *name = json_is_string(topo) ? json_string_value(topo) : "";
    const bool torus = strcmp(name, "torus") == 0, dragonfly = strcmp(name, "dragonfly") == 0;
    if (!torus && !dragonfly)
        return tuna_error_set(MPI_ERR_ARG, "profile %s: \"network.topology\" must be \"torus\" "
                                           "or \"dragonfly\" (the networks the model describes; "
                                           "leave \"network\" out otherwise)",
                              path);
    tuna_profile q = *p; /* *p only on success */
    int rc = check_keys(o, torus ? torus_keys : dragonfly_keys, "network.", path);
    if (!rc)
        rc = torus ? load_torus(o, &q, path) : load_dragonfly(o, &q, path);
    if (!rc)
        rc = get_number(o, "network.", "link_bandwidth", true, true, &q.net_link_bandwidth, path);
    if (rc)
        return rc;
    q.net_topology = torus ? TUNA_NET_TORUS : TUNA_NET_DRAGONFLY;
    *p = q;
    return MPI_SUCCESS;
}

int tuna_profile_load(const char *path, tuna_profile *out)
{
    static const char *const keys[] = {"tuna_profile", "name",           "intra",
                                       "inter",        "nics_per_node",  "copy_bandwidth",
                                       "datatype_overhead", "datatype_block", "eager_limit",
                                       "call_overhead", "vendor_call_overhead", "measured", "vendor_alltoallv", "agreement", "network",
                                       NULL};
    json_error_t err;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return tuna_error_set(MPI_ERR_ARG, "profile %s: line %d: %s", path, err.line, err.text);
    tuna_profile p;
    tuna_profile_builtin(&p);
    int rc = MPI_SUCCESS;
    json_t *ver = json_object_get(root, "tuna_profile");
    if (!json_is_object(root))
        rc = tuna_error_set(MPI_ERR_ARG, "profile %s: the top level must be an object", path);
    else if (!json_is_integer(ver) || json_integer_value(ver) != 1)
        rc = tuna_error_set(MPI_ERR_ARG, "profile %s: \"tuna_profile\": 1 (format version) is "
                                         "missing or not 1",
                            path);
    if (!rc)
        rc = check_keys(root, keys, "", path);
    if (!rc) {
        json_t *name = json_object_get(root, "name");
        if (name && !json_is_string(name))
            rc = tuna_error_set(MPI_ERR_ARG, "profile %s: \"name\" must be a string", path);
        else
            snprintf(p.name, sizeof p.name, "%s", name ? json_string_value(name) : path);
    }
    if (!rc)
        rc = load_level(root, "intra", &p.intra, path);
    if (!rc)
        rc = load_level(root, "inter", &p.inter, path);
    if (!rc) {
        json_t *n = json_object_get(root, "nics_per_node");
        if (n && (!json_is_integer(n) || json_integer_value(n) < 1 ||
                  json_integer_value(n) > 1024))
            rc = tuna_error_set(MPI_ERR_ARG,
                                "profile %s: \"nics_per_node\" must be an integer in [1, 1024]",
                                path);
        else if (n)
            p.nics_per_node = (int)json_integer_value(n);
    }
    if (!rc)
        rc = get_number(root, "", "copy_bandwidth", false, true, &p.copy_bandwidth, path);
    if (!rc)
        rc = get_number(root, "", "datatype_overhead", false, false, &p.datatype_overhead, path);
    if (!rc)
        rc = get_number(root, "", "datatype_block", false, false, &p.datatype_block, path);
    if (!rc)
        rc = get_number(root, "", "eager_limit", false, false, &p.eager_limit, path);
    p.call_overhead = 0; /* a file describes a machine (or a simulator): only what it says */
    if (!rc)
        rc = get_number(root, "", "call_overhead", false, false, &p.call_overhead, path);
    if (!rc)
        rc = get_number(root, "", "vendor_call_overhead", false, false,
                        &p.vendor_call_overhead, path);
    if (!rc)
        rc = load_vendor_model(root, &p, path);
    if (!rc)
        rc = load_agreement(root, &p, path);
    if (!rc)
        rc = load_network(root, &p, path);
    json_decref(root);
    if (!rc)
        *out = p;
    return rc;
}
