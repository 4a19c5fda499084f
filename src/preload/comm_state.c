/*
 * The drop-in's per-communicator state (comm_state: the choices, the statistics record) kept
 * as an attribute of the communicator: created on first use, copied by MPI_Comm_dup when it
 * holds info-key choices (as MPI-4 dup keeps the info hints), freed by the attribute's delete
 * callback. Live states are listed so that MPI_Finalize can release the ones on
 * communicators the application never freed.
 */
#include "preload_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static int state_keyval = MPI_KEYVAL_INVALID;
static comm_state *live_states;

/*
 * Each thread remembers the last communicator whose state it used, with the facts a call's
 * start asks the library for (inter, size): a repeated call on it skips MPI_Initialized,
 * MPI_Finalized, the attribute lookup and the size calls (P = 2, 16 B: the drop-in added
 * 0.05-0.14 us to a 0.16 us MPI_Alltoall). Valid while no state has been freed since (a
 * freed communicator's handle may come back as another communicator) and before
 * MPI_Finalize (preload_states_release bumps the generation too).
 */
static atomic_uint state_generation;
static _Thread_local struct {
    MPI_Comm comm;
    comm_state *s;
    unsigned generation;
    int inter, size;
} last_state;

comm_state *preload_state_cached(MPI_Comm comm, int *inter, int *size)
{
    const unsigned gen = atomic_load_explicit(&state_generation, memory_order_acquire);
    if (!last_state.s || last_state.comm != comm || last_state.generation != gen)
        return NULL;
    *inter = last_state.inter;
    *size = last_state.size;
    return last_state.s;
}

void preload_state_remember(MPI_Comm comm, comm_state *s, int inter, int size)
{
    last_state.comm = comm;
    last_state.s = s;
    last_state.inter = inter;
    last_state.size = size;
    last_state.generation = atomic_load_explicit(&state_generation, memory_order_acquire);
}

/* Take s off the live list. */
static void state_unlink(comm_state *s)
{
    TUNA_LIST_UNLINK(live_states, s);
}

static void state_unlink_free(comm_state *s)
{
    state_unlink(s);
    free(s);
}

static comm_state *state_new(MPI_Comm comm)
{
    comm_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->comm = comm;
    TUNA_LIST_PUSH(live_states, s);
    return s;
}

static int state_delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    comm_state *s = attr;
    atomic_fetch_add_explicit(&state_generation, 1, memory_order_acq_rel);
    if (s->detached)
        free(s);
    else
        state_unlink_free(s);
    return MPI_SUCCESS;
}

/* Take s off the live list but leave it to the attribute's delete callback. */
static void state_detach(comm_state *s)
{
    state_unlink(s);
    s->detached = 1;
}

/* MPI_Comm_dup keeps an info-key choice, as MPI-4 dup keeps the info hints. */
static int state_copy_fn(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    (void)extra;
    const comm_state *src = in;
    *flag = 0;
    int any = 0;
    for (int c = 0; c < NCOLL; c++)
        any |= src->ch[c].has_override;
    if (!any)
        return MPI_SUCCESS;
    /* The new communicator's handle is not known here; it is set on first use. */
    comm_state *s = state_new(MPI_COMM_NULL);
    if (!s)
        return MPI_ERR_NO_MEM;
    for (int c = 0; c < NCOLL; c++)
        if (src->ch[c].has_override) {
            memcpy(s->ch[c].override, src->ch[c].override, sizeof s->ch[c].override);
            s->ch[c].has_override = 1;
        }
    *(void **)out = s;
    *flag = 1;
    return MPI_SUCCESS;
}

int preload_keyval_init(void)
{
    if (state_keyval != MPI_KEYVAL_INVALID)
        return MPI_SUCCESS;
    return PMPI_Comm_create_keyval(state_copy_fn, state_delete_fn, &state_keyval, NULL);
}

/* State of comm, created empty if absent; NULL on failure. */
comm_state *preload_state_get(MPI_Comm comm)
{
    if (preload_keyval_init() != MPI_SUCCESS)
        return NULL;
    void *val = NULL;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, state_keyval, &val, &flag) != MPI_SUCCESS)
        return NULL;
    if (flag) {
        comm_state *s = val;
        s->comm = comm;
        return s;
    }
    comm_state *s = state_new(comm);
    if (!s)
        return NULL;
    if (PMPI_Comm_set_attr(comm, state_keyval, s) != MPI_SUCCESS) {
        state_unlink_free(s);
        return NULL;
    }
    return s;
}

/* At MPI_Finalize (finalize_fn, init_finalize.c), after the statistics are written. */
void preload_states_release(void)
{
    atomic_fetch_add_explicit(&state_generation, 1, memory_order_acq_rel);
    /* Detach states from communicators the application never freed. */
    while (live_states) {
        comm_state *s = live_states;
        int rc = s->comm == MPI_COMM_NULL ? MPI_ERR_COMM
                                          : PMPI_Comm_delete_attr(s->comm, state_keyval);
        /* On success the delete callback has freed s and moved the list head. */
        if (rc != MPI_SUCCESS || live_states == s)
            state_detach(s);
    }
    if (state_keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&state_keyval);
}
