/*
 * tuna: TuNA, the tunable-radix logarithmic non-uniform all-to-all.
 * Parameters: radix r in [2, P] (default ceil(sqrt P)) and block, the rounds
 * of one digit in flight together (clamped to r-1; default all of them).
 * K = sum over digits of the non-empty rounds <= w(r-1), w = ceil(log_r P);
 * r = P is a linear exchange without temporary memory. The rounds themselves are
 * in tuna_rounds.c; this file maps the user's buffers onto them.
 * Temporary memory (no global maximum needed): (P-(K+1))*m + S, where m is the
 * largest block this rank holds between hops and S the largest total of the
 * middle-hop blocks it stages in one batch (S = 0 when r >= sqrt P); details
 * and the cases that add to it in tuna_rounds.c.
 */
#include "tuna_rounds.h"

#include <stdlib.h>
#include <string.h>

/* Between its steps a call keeps this, with the block pointers after it: one allocation per
 * call (where a blocking call once had its two pointer arrays). */
typedef struct tuna_state {
    tuna_timer tm;
    tuna_bytes_view v;
    tuna_rounds e;
    tuna_rounds_state st;
    const char **sp;
    char **rp;
} tuna_state;

static void tuna_state_free(tuna_a2av_op *o)
{
    tuna_state *s = o->state;
    tuna_rounds_state_free(&s->st);
    tuna_a2av_state_release(o, &s->v);
}

/* The call's end: the view's unpacking, the statistics; the state goes with the operation. */
static int tuna_finish(tuna_a2av_op *o, int rc)
{
    tuna_state *s = o->state;
    tuna_stats_temp(s->st.temp_bytes);
    rc = tuna_bytes_view_close(o->a, &s->v, rc);
    tuna_timer_stop(&s->tm, TUNA_PHASE_REARRANGE);
    return tuna_a2av_step_done(o, rc);
}

/* The first step: the view, the rounds' set-up, the own block, their first posts. */
static int tuna_begin(tuna_a2av_op *o)
{
    const tuna_a2av_args *a = o->a;
    const int P = a->size, me = a->rank;
    tuna_state *s = tuna_calloc(1, sizeof *s + 2 * sizeof(char *) * (size_t)P);
    if (!s)
        return tuna_a2av_step_done(o, MPI_ERR_NO_MEM);
    int rc = tuna_a2av_state_attach(o, s, tuna_state_free, &s->tm, &s->v);
    if (rc != MPI_SUCCESS)
        return tuna_a2av_step_done(o, rc);
    const tuna_bytes_view *v = &s->v;
    s->sp = (const char **)(s + 1);
    s->rp = (char **)(s->sp + P);
    for (int j = 0; j < P; j++) {
        s->sp[j] = v->sbytes[j] ? v->sbase + v->soff[j] : NULL;
        s->rp[j] = v->rbytes[j] ? v->rbase + v->roff[j] : NULL;
    }
    s->e = (tuna_rounds){.comm = a->ctx->comm,
                         .tp = a->tp,
                         .scr = a->scr,
                         .n = P,
                         .me = me,
                         .members = NULL,
                         .nsub = 1,
                         .radix = (int)tuna_a2av_param(a, "radix"),
                         .batch = (int)tuna_a2av_param(a, "block"),
                         .tag_meta = TUNA_TAG_TUNA_META + a->tag_shift,
                         .tag_data = TUNA_TAG_TUNA_DATA + a->tag_shift,
                         .send_ptr = s->sp,
                         .send_bytes = v->sbytes,
                         .recv_ptr = s->rp,
                         .recv_cap = v->rbytes,
                         .recv_got = NULL,
                         .land_keep = -1,
                         .land_off = NULL,
                         /* A uniform all-to-all: every block's size is known, no metadata. */
                         .sizes_known = a->uniform,
                         .known_bytes = a->uniform ? (size_t)tuna_scount(a, 0) * a->ssize : 0};
    tuna_timer_stop(&s->tm, TUNA_PHASE_PREPARE);
    /* The own block: sbytes[me] <= rbytes[me] was checked by the front end (front.c). */
    if (v->sbytes[me])
        tuna_tp_copy(a->tp, s->rp[me], s->sp[me], v->sbytes[me]);
    tuna_timer_stop(&s->tm, TUNA_PHASE_COPY);
    MPI_Request *req;
    int n;
    o->i = 1;
    if (tuna_rounds_start(&s->st, &s->e, &s->tm, &req, &n) == TUNA_STEP_WAIT)
        return tuna_a2av_step_wait(o, req, n, MPI_SUCCESS);
    return tuna_finish(o, s->st.rc);
}

/* o->i: 0 before the first step, then 1 (the rounds' steps; its state at o->state). */
int tuna_a2av_tuna_step(tuna_a2av_op *o, int wait_rc)
{
    if (o->i == 0)
        return tuna_begin(o);
    tuna_state *s = o->state;
    MPI_Request *req;
    int n;
    if (tuna_rounds_step(&s->st, wait_rc, &req, &n) == TUNA_STEP_WAIT)
        return tuna_a2av_step_wait(o, req, n, MPI_SUCCESS);
    return tuna_finish(o, s->st.rc);
}
