/*
 * The MPI host transport through its table (src/transport/transport.h): code that holds a
 * transport without knowing which calls the table, while tuna's own calls take the inline
 * path for this one, so the table is checked here. On a ring (P ranks, any P >= 1): byte
 * posts settled all at once, typed posts completed one at a time (`any`), the blocking typed
 * exchange, copy, overlapping move and reduce, against what they must produce.
 */
#include "tuna_internal.h"
#include "support/test_expect.h"

#include <string.h>

enum { N = 64 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const tuna_transport *tp = &tuna_transport_mpi_host;
    const char *name = tp->name;
    const int right = (me + 1) % P, left = (me - 1 + P) % P;
    expect(tuna_tp_takes_datatypes(tp), "the MPI host transport takes datatypes", name,
           MPI_SUCCESS);

    /* Byte posts, settled together (blocking). */
    unsigned char out[N], in[N];
    for (int i = 0; i < N; i++)
        out[i] = (unsigned char)(me * 7 + i);
    MPI_Request req[2];
    int rc = tp->irecv(tp, in, N, left, 1, MPI_COMM_WORLD, &req[0]);
    if (rc == MPI_SUCCESS)
        rc = tp->isend(tp, out, N, right, 1, MPI_COMM_WORLD, &req[1]);
    int flag = 0;
    if (rc == MPI_SUCCESS)
        rc = tp->settle(tp, 2, req, NULL, true, &flag);
    int ok = rc == MPI_SUCCESS && flag;
    for (int i = 0; i < N && ok; i++)
        ok = in[i] == (unsigned char)(left * 7 + i);
    expect(ok, "isend/irecv of bytes, settle", name, rc);

    /* Typed posts, completed one at a time: polled, then waited for. */
    int tout[N], tin[N];
    for (int i = 0; i < N; i++)
        tout[i] = me * 1000 + i;
    rc = tp->irecv_typed(tp, tin, N, MPI_INT, left, 2, MPI_COMM_WORLD, &req[0]);
    if (rc == MPI_SUCCESS)
        rc = tp->isend_typed(tp, tout, N, MPI_INT, right, 2, MPI_COMM_WORLD, &req[1]);
    for (int done = 0; rc == MPI_SUCCESS && done < 2; done++) {
        int index = MPI_UNDEFINED;
        rc = tp->any(tp, 2, req, &index, done == 1, &flag);
        while (rc == MPI_SUCCESS && done == 0 && !flag)
            rc = tp->any(tp, 2, req, &index, false, &flag);
        if (rc == MPI_SUCCESS && (index < 0 || index > 1 || req[index] != MPI_REQUEST_NULL))
            rc = MPI_ERR_REQUEST;
    }
    ok = rc == MPI_SUCCESS;
    for (int i = 0; i < N && ok; i++)
        ok = tin[i] == left * 1000 + i;
    expect(ok, "isend_typed/irecv_typed, any", name, rc);

    /* The blocking typed exchange, the other way round. */
    memset(tin, 0, sizeof tin);
    rc = tp->sendrecv_typed(tp, tout, N, MPI_INT, left, 3, tin, N, MPI_INT, right, 3,
                            MPI_COMM_WORLD);
    ok = rc == MPI_SUCCESS;
    for (int i = 0; i < N && ok; i++)
        ok = tin[i] == right * 1000 + i;
    expect(ok, "sendrecv_typed", name, rc);

    /* Local data: copy, overlapping move, reduce (inout = in + inout). */
    tp->copy(tp, in, out, N);
    ok = memcmp(in, out, N) == 0;
    tp->move(tp, in + 1, in, N - 1);
    ok = ok && in[0] == out[0];
    for (int i = 1; i < N && ok; i++)
        ok = in[i] == out[i - 1];
    expect(ok, "copy, move", name, MPI_SUCCESS);
    for (int i = 0; i < N; i++)
        tin[i] = i;
    rc = tp->reduce(tp, tout, tin, N, MPI_INT, MPI_SUM);
    ok = rc == MPI_SUCCESS;
    for (int i = 0; i < N && ok; i++)
        ok = tin[i] == me * 1000 + 2 * i;
    expect(ok, "reduce", name, rc);

    /* A failed step's clean-up: complete what is pending, ignoring errors. */
    rc = tp->irecv(tp, in, N, left, 4, MPI_COMM_WORLD, &req[0]);
    if (rc == MPI_SUCCESS)
        rc = tp->isend(tp, out, N, right, 4, MPI_COMM_WORLD, &req[1]);
    if (rc == MPI_SUCCESS)
        tp->complete(tp, 2, req);
    expect(rc == MPI_SUCCESS && req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL,
           "complete", name, rc);

    /* A receive whose sender never posts, cancelled and completed; a send freed while
     * active (MPI lets it complete on its own). */
    rc = tp->irecv(tp, in, N, left, 5, MPI_COMM_WORLD, &req[0]);
    if (rc == MPI_SUCCESS) {
        tp->cancel(tp, &req[0]);
        tp->complete(tp, 1, &req[0]);
    }
    expect(rc == MPI_SUCCESS && req[0] == MPI_REQUEST_NULL, "cancel", name, rc);
    rc = tp->irecv(tp, in, N, left, 6, MPI_COMM_WORLD, &req[0]);
    if (rc == MPI_SUCCESS)
        rc = tp->isend(tp, out, N, right, 6, MPI_COMM_WORLD, &req[1]);
    if (rc == MPI_SUCCESS) {
        tp->release(tp, &req[1]);
        rc = tp->settle(tp, 1, req, NULL, true, &flag);
    }
    ok = rc == MPI_SUCCESS && req[1] == MPI_REQUEST_NULL;
    for (int i = 0; i < N && ok; i++)
        ok = in[i] == (unsigned char)(left * 7 + i);
    expect(ok, "release", name, rc);

    if (me == 0)
        printf("%s: %s\n", name, failures ? "FAILED" : "ok");
    MPI_Finalize();
    return failures != 0;
}
