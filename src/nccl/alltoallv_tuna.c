/*
 * alltoallv, TuNA on NCCL (radix r): Bruck without padding or rotation. The block from s to d
 * has offset o = d - s (mod P), 1 <= o < P; w = ceil(log_r P) rounds. In round x a block whose
 * base-r digit x of o is z != 0 moves z*r^x ranks forward, so before round x it is at
 * s + (o mod r^x) and at the end at d. Each rank holds exactly one block per offset at any
 * time; the host keeps, per offset, where it is (device pointer) and its size.
 *
 * Round x is one group: for z = 1..r-1 with blocks, for each offset o of digit z in
 * increasing order, the slot pair "receive offset o from r - z*r^x, send offset o to
 * r + z*r^x" (one NCCL operation per block; the partner's pair of the same index is the same
 * offset). A block whose digits above x are zero arrives at its destination: it goes straight
 * to recvbuf, its size the rank's recvcounts. Any other block goes to the round's temporary
 * (stream-ordered), and its size only its origin knew: so before the data, a round with such
 * blocks exchanges their sizes (docs/nccl.md, "TuNA's sizes"): the sender packs the sizes it
 * holds on the host, copies them to the device and sends them in a group of their own; the
 * receiver copies what it got to the host and waits for the stream (one host wait per such
 * round: every round but the last, when r < P; none for alltoall, whose sizes are all the
 * same). The rank's own block is a copy on the stream.
 */
#include "nccl_rows.h"

#include <stdlib.h>

static int digit(int o, int R, int r)
{
    return (o / R) % r;
}

int tuna_nccl_a2av_tuna(const tuna_nccl_args *a)
{
    const int P = a->size, me = a->rank;
    const size_t es = a->esize;
    const int r = (int)(a->k < 2 ? 2 : a->k > P ? P : a->k);
    tuna_tp_copy(a->tp, a->rbuf + a->rdispls[me] * es, a->sbuf + a->sdispls[me] * es,
                 a->rcounts[me] * es);
    if (P == 1)
        return tuna_nccl_step_end(a);
    int w = 0;
    for (long pw = 1; pw < P; pw *= r)
        w++;
    /* Host state per offset, and the size messages (host and device, P entries each way). */
    size_t *size = tuna_malloc(4 * (size_t)P * sizeof *size);
    const char **where = tuna_malloc((size_t)P * sizeof *where);
    int *base = tuna_malloc(((size_t)r + 1) * sizeof *base);
    char *tmp[64] = {0}; /* one temporary per round (w <= 63) */
    size_t *dsz = NULL;
    int rc = size && where && base ? MPI_SUCCESS
                           : tuna_error_set(MPI_ERR_NO_MEM, "tuna (NCCL): no memory for %d ranks",
                                            P);
    if (rc == MPI_SUCCESS)
        rc = tuna_nccl_tp_alloc(a->t, 2 * (size_t)P * sizeof *dsz, (void **)&dsz);
    size_t *hsend = size + P, *hrecv = size + 2 * P;
    if (rc == MPI_SUCCESS)
        for (int o = 1; o < P; o++) {
            int d = (me + o) % P;
            size[o] = a->scounts[d] * es;
            where[o] = a->sbuf + a->sdispls[d] * es;
        }
    long R = 1;
    for (int x = 0; x < w && rc == MPI_SUCCESS; x++, R *= r) {
        /* Entries of sub-round z: the offsets of digit z, in increasing order, from base[z]. */
        bool sizes = false;
        base[1] = 0;
        for (int z = 1; z < r; z++) {
            int n = 0;
            for (int o = 1; o < P; o++)
                if (digit(o, (int)R, r) == z) {
                    hsend[base[z] + n++] = size[o];
                    sizes |= o >= R * r; /* not final: its size is the origin's */
                }
            base[z + 1] = base[z] + n;
        }
        if (sizes && a->uniform) { /* alltoall: every block's size is known */
            for (int i = 0; i < base[r]; i++)
                hrecv[i] = a->scounts[0] * es;
        } else if (sizes) {
            tuna_nccl_tp_to_device(a->t, dsz, hsend, (size_t)base[r] * sizeof *dsz);
            for (int z = 1; z < r && rc == MPI_SUCCESS; z++) {
                size_t n = (size_t)(base[z + 1] - base[z]);
                if (n == 0)
                    continue;
                int src = (int)((me - z * R) % P + P) % P, dst = (int)((me + z * R) % P);
                rc = tuna_nccl_pair(a, dsz + P + base[z], n * sizeof *dsz, src, dsz + base[z],
                                    n * sizeof *dsz, dst);
            }
            rc = tuna_nccl_step_close(a, rc);
            if (rc == MPI_SUCCESS) {
                tuna_nccl_tp_to_host(a->t, hrecv, dsz + P, (size_t)base[r] * sizeof *dsz);
                rc = tuna_nccl_tp_wait(a->t); /* the host needs the sizes to post receives */
            }
        }
        /* The round's temporary: the blocks that go on. */
        size_t bytes = 0;
        for (int z = 1; z < r && sizes; z++)
            for (int i = base[z], o = 1; o < P; o++)
                if (digit(o, (int)R, r) == z) {
                    if (o >= R * r)
                        bytes += hrecv[i];
                    i++;
                }
        if (rc == MPI_SUCCESS)
            rc = tuna_nccl_tp_alloc(a->t, bytes, (void **)&tmp[x]);
        size_t at = 0;
        for (int z = 1; z < r && rc == MPI_SUCCESS; z++) {
            int src = (int)((me - z * R) % P + P) % P, dst = (int)((me + z * R) % P);
            for (int i = base[z], o = 1; o < P && rc == MPI_SUCCESS; o++) {
                if (digit(o, (int)R, r) != z)
                    continue;
                char *into;
                size_t in;
                if (o >= R * r) { /* goes on in a later round */
                    in = hrecv[i];
                    into = tmp[x] + at;
                    at += in;
                } else { /* arrives: from me - o */
                    int s = (me - o + P) % P;
                    in = a->rcounts[s] * es;
                    into = a->rbuf + a->rdispls[s] * es;
                }
                i++;
                rc = tuna_nccl_pair(a, into, in, src, where[o], size[o], dst);
                where[o] = into;
                size[o] = in;
            }
        }
        rc = tuna_nccl_step_close(a, rc);
    }
    for (int x = 0; x < w; x++)
        tuna_nccl_tp_free(a->t, tmp[x]);
    tuna_nccl_tp_free(a->t, dsz);
    free(size);
    free(where);
    free(base);
    return tuna_nccl_step_close(a, rc);
}
