/*
 * Send/receive buffer overlap, checked by each rank on its own arguments (no collective):
 * MPICH checks only a rank's send buffer against its own receive slot, so a rank whose
 * buffers overlap elsewhere went undetected while an equal-pointer rank failed, leaving the
 * others waiting. Any overlap of the spans is reported, by extent.
 */
#include "tuna_internal.h"

#include <stdlib.h>
#include <string.h>

static tuna_span hull(const tuna_span *s, int n)
{
    tuna_span h = TUNA_SPAN_EMPTY_HULL;
    for (int i = 0; i < n; i++)
        tuna_span_extend(&h, s[i]);
    return h;
}

static int by_lo(const void *x, const void *y)
{
    const tuna_span *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Non-empty spans of s into out, sorted by start; returns how many. */
static int sorted(const tuna_span *s, int n, tuna_span *out)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (s[i].lo < s[i].hi)
            out[k++] = s[i];
    qsort(out, (size_t)k, sizeof *out, by_lo);
    return k;
}

int tuna_spans_overlap(const tuna_span *a, int na, const tuna_span *b, int nb)
{
    if (!tuna_spans_meet(hull(a, na), hull(b, nb)))
        return 0; /* the common case: separate buffers */
    if (na == 1 && nb == 1)
        return 1;
    tuna_span *sa = tuna_malloc(sizeof(tuna_span) * ((size_t)na + (size_t)nb));
    if (!sa)
        return -1;
    tuna_span *sb = sa + na;
    const int ka = sorted(a, na, sa), kb = sorted(b, nb, sb);
    /* Sweep: a span that ends before the other side's current one starts overlaps none of
     * that side's later spans (they start no earlier), so it is dropped. */
    int i = 0, j = 0, hit = 0;
    while (i < ka && j < kb && !hit) {
        if (sa[i].hi <= sb[j].lo)
            i++;
        else if (sb[j].hi <= sa[i].lo)
            j++;
        else
            hit = 1;
    }
    free(sa);
    return hit;
}

int tuna_check_overlap(const char *fn, int me, const tuna_span *a, int na, const tuna_span *b,
                       int nb)
{
    const int hit = tuna_spans_overlap(a, na, b, nb);
    if (hit < 0)
        return tuna_error_set(MPI_ERR_NO_MEM, "%s: no memory to check buffer overlap (rank %d)",
                              fn, me);
    if (hit)
        return tuna_error_set(MPI_ERR_BUFFER,
                              "%s: the send buffer overlaps the receive buffer (rank %d); MPI "
                              "requires them disjoint (use MPI_IN_PLACE to share one buffer)",
                              fn, me);
    return MPI_SUCCESS;
}
