/*
 * tuna_alltoallw's pieces, shared by its blocking (alltoallw.c), nonblocking (ialltoallw.c) and
 * persistent (alltoallw_init.c) forms: the checks and way of a call, its layout (counts and displacements
 * for tuna_alltoallv_c, the packed buffers), the exchange, the unpacking.
 */
#ifndef TUNA_ALLTOALLW_H
#define TUNA_ALLTOALLW_H

#include "tuna.h"
#include "tuna_internal.h"

#include <stdbool.h>

/* One side of the call: counts, byte displacements, a type per peer. */
typedef struct tuna_w_side {
    const void *buf;
    const int *counts, *displs;
    const MPI_Datatype *types;
} tuna_w_side;

/* A call laid out for tuna_alltoallv_c. */
typedef struct tuna_w_call {
    int P;
    bool inplace;
    bool packed;            /* the packed way (else one type per side, no copy) */
    tuna_w_side snd, rcv;   /* in place: snd is rcv */
    MPI_Datatype st, rt;    /* one type per side */
    MPI_Count *n;           /* 2P: send then receive counts (elements, or packed bytes) */
    MPI_Aint *d;            /* 2P: displacements (extents, or packed offsets) */
    char *spack, *rpack;    /* the packed way's buffers */
} tuna_w_call;

/* Options (NULL: the alltoallv default), the communicator and this rank's arguments checked;
 * *library where the library's own call serves the call (vendor, device memory), else c is
 * ready for tuna_w_prepare. */
int tuna_w_begin(const char *who, const void *sendbuf, const int sendcounts[],
                 const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                 const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm, const tuna_options **opt, tuna_options *def, bool *library,
                 tuna_w_call *c);
/* This side's arguments are valid for P peers (this rank's own errors, as MPI reports). */
int tuna_w_check_side(const char *what, const tuna_w_side *s, int P);
/* The layout (which way; counts, displacements, the packed buffers allocated), then the send
 * blocks packed on the packed way (local); tuna_w_prepare is both. */
int tuna_w_layout(tuna_w_call *c);
int tuna_w_pack(const tuna_w_call *c, MPI_Comm comm);
int tuna_w_prepare(tuna_w_call *c, MPI_Comm comm);
/* The exchange: blocking (req NULL) or started (tuna_ialltoallv_c into *req). */
int tuna_w_exchange_c(const tuna_w_call *c, MPI_Comm comm, const tuna_options *opt,
                      tuna_request *req);
/* After the exchange: the received blocks unpacked into place (packed way). */
int tuna_w_finish(const tuna_w_call *c, MPI_Comm comm);
void tuna_w_free(tuna_w_call *c);

#endif
