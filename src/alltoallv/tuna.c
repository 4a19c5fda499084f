/*
 * tuna: TuNA, the tunable-radix logarithmic non-uniform all-to-all.
 * Parameters: radix r in [2, P] (default ceil(sqrt P)) and block, the rounds
 * of one digit in flight together (clamped to r-1; default all of them).
 * K = sum over digits of the non-empty rounds <= w(r-1), w = ceil(log_r P);
 * r = P is a linear exchange without temporary memory. The engine itself is
 * in tuna_engine.c; this file maps the user's buffers onto it.
 * Temporary memory (no global maximum needed): (P-(K+1))*m + S, where m is the
 * largest block this rank holds between hops and S the largest total of the
 * middle-hop blocks it stages in one batch (S = 0 when r >= sqrt P); details
 * and the cases that add to it in tuna_engine.c.
 */
#include "tuna_engine.h"

#include <stdlib.h>
#include <string.h>

int tuna_a2av_tuna(const tuna_a2av_args *a)
{
    tuna_timer tm;
    tuna_timer_start(&tm);
    const int P = a->size, me = a->rank;
    tuna_bytes_view v;
    int rc = tuna_bytes_view_open(a, &v);
    if (rc != MPI_SUCCESS)
        return rc;
    const char **sp = tuna_malloc(sizeof(char *) * (size_t)P);
    char **rp = tuna_malloc(sizeof(char *) * (size_t)P);
    if (!sp || !rp) {
        free(sp);
        free(rp);
        return tuna_bytes_view_close(a, &v, MPI_ERR_NO_MEM);
    }
    for (int j = 0; j < P; j++) {
        sp[j] = v.sbytes[j] ? v.sbase + v.soff[j] : NULL;
        rp[j] = v.rbytes[j] ? v.rbase + v.roff[j] : NULL;
    }
    tuna_engine e = {.comm = a->ctx->comm,
                     .scr = a->scr,
                     .n = P,
                     .me = me,
                     .members = NULL,
                     .nsub = 1,
                     .radix = (int)tuna_a2av_param(a, "radix"),
                     .batch = (int)tuna_a2av_param(a, "block"),
                     .tag_meta = TUNA_TAG_TUNA_META,
                     .tag_data = TUNA_TAG_TUNA_DATA,
                     .send_ptr = sp,
                     .send_bytes = v.sbytes,
                     .recv_ptr = rp,
                     .recv_cap = v.rbytes,
                     .recv_got = NULL,
                     .land_keep = -1,
                     .land_off = NULL};
    tuna_timer_stop(&tm, TUNA_PHASE_PREPARE);
    /* The own block: sbytes[me] <= rbytes[me] was checked by the core. */
    if (v.sbytes[me])
        memcpy(rp[me], sp[me], v.sbytes[me]);
    tuna_timer_stop(&tm, TUNA_PHASE_COPY);
    size_t temp = 0;
    rc = tuna_engine_run(&e, &tm, &temp);
    tuna_stats_temp(temp);
    free(sp);
    free(rp);
    rc = tuna_bytes_view_close(a, &v, rc);
    tuna_timer_stop(&tm, TUNA_PHASE_REARRANGE);
    return rc;
}
