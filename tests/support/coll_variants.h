/*
 * The option strings test_allgather and test_allreduce run, from the collective's registry
 * (tuna_algorithm_get): first every row without parameters, in table order, then every row
 * with parameters, its first parameter at min, min + 1, min + 2 (those in its range) and (where
 * its range reaches the communicator size) P. A new row is tested without touching the tests.
 */
#ifndef TUNA_TEST_COLL_VARIANTS_H
#define TUNA_TEST_COLL_VARIANTS_H

#include "tuna.h"

#include <stdio.h>

#define COLL_VARIANT_LEN 48

/* Fills algs[0..max) and returns their number. */
static int coll_variants(tuna_collective coll, char (*algs)[COLL_VARIANT_LEN], int max)
{
    int n = 0;
    const int rows = tuna_algorithm_count(coll);
    for (int pass = 0; pass < 2; pass++)
        for (int a = 0; a < rows; a++) {
            const tuna_algorithm_info *info = tuna_algorithm_get(coll, a);
            if ((info->nparams > 0) != (pass == 1))
                continue;
            if (info->nparams == 0) {
                if (n < max)
                    snprintf(algs[n++], COLL_VARIANT_LEN, "%s", info->name);
                continue;
            }
            const tuna_param_info *p = &info->params[0];
            for (int i = 0; i < 4 && n < max; i++) {
                if (i < 3 && p->max >= 0 && p->min + i > p->max)
                    break; /* a fixed range shorter than three values */
                if (i < 3)
                    snprintf(algs[n++], COLL_VARIANT_LEN, "%s:%s=%ld", info->name, p->name,
                             p->min + i);
                else if (p->max == TUNA_PARAM_P)
                    snprintf(algs[n++], COLL_VARIANT_LEN, "%s:%s=P", info->name, p->name);
            }
        }
    return n;
}

#endif /* TUNA_TEST_COLL_VARIANTS_H */
