/*
 * auto's size and sparsity buckets and the vendor models, read from the generated
 * tuna_selection_tables.h: python/tuna_tools/data/selection.json is their one definition,
 * which `tuna tune` reads too, so the library and the tools cannot disagree.
 */
#include "tuna_select.h"
#include "tuna_selection_tables.h"

#include <string.h>

int tuna_select_size_bucket(double max_block)
{
    int b = 0;
    while (b < TUNA_SIZE_BUCKETS - 1 && max_block > tuna_size_bucket_upper_bytes[b])
        b++;
    return b;
}

int tuna_select_sparsity_bucket(double zero_fraction)
{
    int b = 0;
    while (b < TUNA_SPARSITY_EDGES && zero_fraction >= tuna_sparsity_bucket_lower_edges[b])
        b++;
    return b;
}

int tuna_select_size_bucket_count(void)
{
    return TUNA_SIZE_BUCKETS;
}

const char *tuna_vendor_alltoallv_rule(const char *library, int P, bool *by_P)
{
    const char *found = NULL;
    int rules = 0;
    for (size_t i = 0; i < sizeof tuna_vendor_alltoallv_rules / sizeof *tuna_vendor_alltoallv_rules;
         i++) {
        const tuna_vendor_rule *r = &tuna_vendor_alltoallv_rules[i];
        if (strcmp(r->library, library) != 0)
            continue;
        rules++;
        if (!found && (r->below_P == 0 || P < r->below_P))
            found = r->algorithm;
    }
    *by_P = rules > 1;
    return found;
}
