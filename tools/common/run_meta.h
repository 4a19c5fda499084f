/*
 * Run metadata shared by tuna-bench and the applications: the "machine" and "run" objects of
 * their JSON lines (host, MPI library, node topology, load, run name, start time, command).
 */
#ifndef TUNA_RUN_META_H
#define TUNA_RUN_META_H

#include <jansson.h>
#include <mpi.h>

typedef struct tuna_run_meta {
    char name[256];
    char started[64]; /* UTC, ISO 8601 */
    char command[4096];
    char hostname[256];
    char library[512]; /* first line of MPI_Get_library_version */
    int P, version, subversion;
    int nodes;
    int rpn_physical; /* ranks per node if equal on every node, else 0 */
    int rpn_env;      /* TUNA_RANKS_PER_NODE at start-up (0: unset) */
    double loadavg;   /* rank 0's 1-minute load average at the start (-1: unknown) */
} tuna_run_meta;

/*
 * Collective over MPI_COMM_WORLD. The run is named run_name, or by default
 * "[PREFIX-]HOST-PP-YYYYmmdd-HHMMSS" (prefix NULL: none).
 */
void tuna_run_meta_init(tuna_run_meta *m, const char *prefix, const char *run_name, int argc,
                        char **argv);

/* The "machine" object; ranks_per_node is rpn_logical if > 0, else the physical value. */
json_t *tuna_run_meta_machine_json(const tuna_run_meta *m, int rpn_logical);

/* The "run" object: name, started, command, tuna_version. */
json_t *tuna_run_meta_run_json(const tuna_run_meta *m);

#endif /* TUNA_RUN_META_H */
