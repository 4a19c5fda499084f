/*
 * Under SimGrid SMPI with --cfg=smpi/privatization:no every simulated rank shares the
 * program's globals, tuna's among them: tuna must then refuse, on every rank, with the same
 * error naming the setting, instead of aborting or hanging (docs/simulation.md).
 *
 *   smpirun ... --cfg=smpi/privatization:no privatization-check refused smpi/privatization:no
 *   smpirun ... privatization-check ok
 *
 * Calls tuna_alltoallv (spreadout, tuna, auto), tuna_allreduce (auto) and tuna_allgather
 * (ring) on MPI_COMM_WORLD, twice each; "refused": each call must return MPI_ERR_OTHER with a
 * message naming the setting given and smpi/privatization:dlopen; "ok": each must succeed
 * with the right data. Exit 0 when every rank saw what it expected. No globals here: they
 * would be shared as well.
 */
#include "tuna.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether rc is what the mode expects; data_ok: the call's result was checked correct. */
static bool as_expected(const char *refused, int rc, bool data_ok, const char *what, int me)
{
    if (refused) {
        const char *msg = tuna_error_string(rc);
        if (rc == MPI_ERR_OTHER && strstr(msg, refused) &&
            strstr(msg, "smpi/privatization:dlopen"))
            return true;
        fprintf(stderr, "rank %d: %s returned %d (%s), expected MPI_ERR_OTHER naming %s\n", me,
                what, rc, msg, refused);
        return false;
    }
    if (rc == MPI_SUCCESS && data_ok)
        return true;
    fprintf(stderr, "rank %d: %s returned %d (%s)%s\n", me, what, rc, tuna_error_string(rc),
            rc == MPI_SUCCESS ? " with wrong data" : "");
    return false;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    /* The setting the refusal must name, or NULL: every call must succeed. */
    const char *refused = argc > 2 && strcmp(argv[1], "refused") == 0 ? argv[2] : NULL;
    if (argc < 2 || (!refused && strcmp(argv[1], "ok") != 0)) {
        if (me == 0)
            fprintf(stderr, "usage: privatization-check ok | refused SETTING\n");
        MPI_Finalize();
        return 2;
    }
    int *cnt = malloc(sizeof(int) * (size_t)P), *dsp = malloc(sizeof(int) * (size_t)P);
    int *sbuf = malloc(sizeof(int) * (size_t)P), *rbuf = malloc(sizeof(int) * (size_t)P);
    if (!cnt || !dsp || !sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int j = 0; j < P; j++) {
        cnt[j] = 1;
        dsp[j] = j;
        sbuf[j] = 1000 * me + j;
    }
    static const char *const a2av[] = {"spreadout", "tuna:radix=2", "auto"};
    int good = 1;
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < 3; k++) {
            tuna_options opt;
            if (tuna_options_parse(a2av[k], TUNA_ALLTOALLV, &opt) != MPI_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 2);
            memset(rbuf, 0xff, sizeof(int) * (size_t)P);
            int rc = tuna_alltoallv(sbuf, cnt, dsp, MPI_INT, rbuf, cnt, dsp, MPI_INT,
                                    MPI_COMM_WORLD, &opt);
            bool data = true;
            for (int j = 0; j < P; j++)
                data = data && rbuf[j] == 1000 * j + me;
            good &= as_expected(refused, rc, data, a2av[k], me);
        }
        int sum = 0, one = me + 1;
        int rc = tuna_allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL);
        good &= as_expected(refused, rc, sum == P * (P + 1) / 2, "tuna_allreduce auto", me);
        tuna_options ring;
        if (tuna_options_parse("ring", TUNA_ALLGATHER, &ring) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 2);
        rc = tuna_allgather(&one, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD, &ring);
        bool data = true;
        for (int j = 0; j < P; j++)
            data = data && rbuf[j] == j + 1;
        good &= as_expected(refused, rc, data, "tuna_allgather ring", me);
    }
    int all = 0;
    MPI_Allreduce(&good, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (me == 0)
        printf("privatization check (%s expected): %s\n", refused ? "refusal" : "success",
               all ? "PASS" : "FAIL");
    free(cnt), free(dsp), free(sbuf), free(rbuf);
    MPI_Finalize();
    return all ? 0 : 1;
}
