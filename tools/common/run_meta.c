/* Run metadata of tuna-bench and the applications (see run_meta.h). */
#define _POSIX_C_SOURCE 200809L
#include "run_meta.h"

#include "tuna.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Host, MPI library and node topology (collective). */
static void machine(tuna_run_meta *m)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &m->P);
    if (gethostname(m->hostname, sizeof m->hostname - 1) != 0)
        strcpy(m->hostname, "unknown");
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    size_t cut = strcspn(lib, "\n\r,"); /* the first line names the library and version */
    lib[cut] = '\0';
    while (cut > 0 && (lib[cut - 1] == ' ' || lib[cut - 1] == '\t'))
        lib[--cut] = '\0';
    snprintf(m->library, sizeof m->library, "%.500s", lib);
    MPI_Get_version(&m->version, &m->subversion);

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
    int local, lrank;
    MPI_Comm_size(node, &local);
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_free(&node);
    int leader = lrank == 0, lo = local, hi = local;
    MPI_Allreduce(&leader, &m->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    m->rpn_physical = lo == hi ? lo : 0;
    const char *env = getenv("TUNA_RANKS_PER_NODE");
    m->rpn_env = env ? atoi(env) : 0;
    /* Timings on a shared machine depend on its load: record it (Linux; -1 elsewhere). */
    m->loadavg = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &m->loadavg) != 1)
            m->loadavg = -1;
        fclose(f);
    }
}

void tuna_run_meta_init(tuna_run_meta *m, const char *prefix, const char *run_name, int argc,
                        char **argv)
{
    memset(m, 0, sizeof *m);
    machine(m);
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(m->started, sizeof m->started, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    if (run_name)
        snprintf(m->name, sizeof m->name, "%s", run_name);
    else {
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tmv);
        snprintf(m->name, sizeof m->name, "%s%s%.64s-P%d-%s", prefix ? prefix : "",
                 prefix ? "-" : "", m->hostname, m->P, stamp);
    }
    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof m->command; i++) {
        int w = snprintf(m->command + used, sizeof m->command - used, "%s%s", i ? " " : "",
                         argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

json_t *tuna_run_meta_machine_json(const tuna_run_meta *m, int rpn_logical)
{
    char mpiver[32];
    snprintf(mpiver, sizeof mpiver, "%d.%d", m->version, m->subversion);
    json_t *j = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:i}", "hostname", m->hostname,
                          "mpi_library", m->library, "mpi_standard", mpiver, "P", m->P, "nodes",
                          m->nodes, "ranks_per_node_physical", m->rpn_physical, "ranks_per_node",
                          rpn_logical > 0 ? rpn_logical : m->rpn_physical);
    json_object_set_new(j, "loadavg_1min", m->loadavg >= 0 ? json_real(m->loadavg) : json_null());
    return j;
}

json_t *tuna_run_meta_run_json(const tuna_run_meta *m)
{
    char tver[32];
    snprintf(tver, sizeof tver, "%d.%d.%d", TUNA_VERSION_MAJOR, TUNA_VERSION_MINOR,
             TUNA_VERSION_PATCH);
    return json_pack("{s:s,s:s,s:s,s:s}", "name", m->name, "started", m->started, "command",
                     m->command, "tuna_version", tver);
}
