/*
 * The helpers every registry shares: finding a row by kind and reading a row's parameters by
 * name. The list of the collectives' registries (tuna_registry_of) is src/collectives.c.
 */
#include "tuna_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tuna_registry_find_kind(const tuna_registry *r, tuna_row_kind kind)
{
    for (int i = 0; i < r->n; i++)
        if (tuna_registry_row(r, i)->kind == kind)
            return i;
    return -1;
}

long tuna_param_resolve(const tuna_param_info *p, long v, int P)
{
    if (v == TUNA_PARAM_P)
        v = P;
    else if (v == TUNA_PARAM_SQRTP) {
        long s = (long)ceil(sqrt((double)P));
        while (s * s < P)
            s++;
        while (s > 1 && (s - 1) * (s - 1) >= P)
            s--;
        v = s;
    }
    long max = p->max == TUNA_PARAM_P ? P : p->max;
    if (v > max)
        v = max;
    if (v < p->min)
        v = p->min;
    return v;
}

void tuna_params_resolve(const tuna_algorithm_info *info, const long *value, int P,
                         long out[TUNA_MAX_PARAMS])
{
    /* On every call's path: two stores for the rows without parameters. */
    memset(out, 0, sizeof(long) * TUNA_MAX_PARAMS);
    for (int i = 0; i < info->nparams; i++)
        out[i] = tuna_param_resolve(&info->params[i], value[i], P);
}

int tuna_param_index(const tuna_algorithm_info *info, const char *name)
{
    for (int i = 0; i < info->nparams; i++)
        if (strcmp(info->params[i].name, name) == 0)
            return i;
    /* A registry bug, not an input: say which and stop before reading a wrong value. */
    fprintf(stderr, "tuna: internal error: algorithm '%s' has no parameter '%s' in its registry "
                    "row\n",
            info->name, name);
    abort();
}
