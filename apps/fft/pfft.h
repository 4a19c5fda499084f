/*
 * The distributed 3-D (and 2-D) FFT engine of tuna-fft: a transform is a sequence of stages,
 * each a decomposition of the grid into one box per rank plus the 1-D transforms that are local
 * in it; between two stages a reshape moves every element from its box in one stage to its box
 * in the next with one all-to-all (tuna_alltoallv or a tuna plan) inside a communicator. A
 * reshape whose blocks are all equal in its communicator (every member sends and receives c
 * elements to and from every member: P dividing the split extents) is "uniform", decided once
 * at init, and runs tuna_alltoall (tuna_alltoall_init) where the caller gives TUNA_ALLTOALL
 * options.
 *
 *   slab:   [dim 0 split over P, FFTW blocks] --P ranks--> [dim 1 split]
 *   pencil: brick (3-D grid) --P ranks--> x-pencils --column of Pr--> y-pencils
 *           --row of Pc--> z-pencils   (grid Pr x Pc, rank = r Pc + c; pencil_input: the
 *           input already in x-pencils, no brick stage)
 *
 * Every box is stored row-major in global index order (dim 2 fastest); the 1-D transforms run
 * on it with FFTW guru plans (strided). real-to-complex: the first forward transform (pencil:
 * dim 0 as in HeFFTe, slab: the last dimension) is r2c and halves that dimension to n/2 + 1;
 * the reshapes before it move doubles. The forward output stays in the last stage's layout
 * (as FFTW's TRANSPOSED_OUT); backward returns to the first stage and scales by 1/(N0 N1 N2).
 */
#ifndef TUNA_APP_PFFT_H
#define TUNA_APP_PFFT_H

#include "tuna.h"

#include <complex.h>
#include <fftw3.h>
#include <stddef.h>

#define PFFT_MAX_STAGES 4

typedef struct pfft_box {
    long lo[3], n[3]; /* global offsets and extents */
} pfft_box;

/* A decomposition: dim d is split into parts[d] pieces; rank r holds piece
 * (r / stride[d]) % parts[d] of it (FFTW blocks of ceil(n/parts) if blocks, else the balanced
 * split n i / parts that HeFFTe uses). */
typedef struct pfft_layout {
    int parts[3], stride[3], blocks;
} pfft_layout;

typedef struct pfft_config {
    int nd;    /* 2 or 3 (2: n[2] == 1) */
    long n[3]; /* the grid */
    int pencil, r2c;
    int pencil_input; /* pencil: the input in x-pencils instead of bricks */
    int grid[2];      /* pencil: Pr x Pc */
    int brick[3];     /* pencil: the input's 3-D grid (filled in by pfft_init; 0 without) */
    int charge;    /* SMPI: charge local computation to the simulated rank (app_charge) */
} pfft_config;

typedef struct pfft_stage {
    pfft_layout lay;
    const char *name;
    int nfft, dims[2];       /* local transforms, forward order */
    pfft_box rbox, cbox;     /* my box of the real (before r2c) and complex grid */
    fftw_plan fwd[2], bwd[2]; /* NULL where this rank has nothing */
} pfft_stage;

typedef struct pfft_reshape {
    MPI_Comm comm;          /* comm of the engine or a row / column of the grid (owned) */
    int own_comm, q, real;  /* real: moves doubles (before the r2c transform) */
    int *cnt;               /* 4q: send counts, send displs, recv counts, recv displs */
    pfft_box *box;          /* 2q: what I send to member i, what I receive from it */
    int uniform;            /* every member of comm sends and receives `count` elements to
                               and from every member, displacements i * count (agreed) */
    int count;
    int uniform_ranks;      /* ranks of the engine whose communicator of this reshape is
                               uniform (rows / columns may differ) */
    double bytes;           /* global bytes moved per run (self included) */
    double t_a2a;           /* accumulated seconds in the all-to-all */
    long calls[2];          /* all-to-alls run: [0] tuna_alltoallv, [1] tuna_alltoall */
    char name[16];
} pfft_reshape;

/* A persistent all-to-all of one reshape and direction, and which init made it. */
typedef struct pfft_plan {
    tuna_plan plan;
    int alltoall; /* tuna_alltoall_init (else tuna_alltoallv_init) */
} pfft_plan;

typedef struct pfft {
    pfft_config cfg;
    MPI_Comm comm;
    int me, P;
    int nstages, r2c_stage; /* r2c_stage: where the r2c transform runs (-1: c2c) */
    long cext[3];           /* extents of the complex grid (r2c: one dimension halved) */
    pfft_stage st[PFFT_MAX_STAGES];
    pfft_reshape rs[PFFT_MAX_STAGES - 1];
    fftw_complex *data;     /* the current complex stage */
    double *rin, *rpen;     /* r2c: real input (stage 0) and real r2c-stage boxes */
    void *sbuf, *rbuf;      /* every reshape's send and receive buffers */
    pfft_plan *plans;       /* 2 per reshape (forward, backward), or NULL: blocking calls */
    double t_transpose, t_fft;
} pfft;

/* Sets up layouts, communicators, FFTW plans and buffers (collective over comm). Returns 0,
 * or -1 with a message, the same on every rank. */
int pfft_init(pfft *f, const pfft_config *cfg, MPI_Comm comm, char *err, size_t errlen);
void pfft_free(pfft *f);

/* The first stage's array (input and round-trip output): doubles if r2c, else complex. */
void *pfft_input(pfft *f, size_t *elems, size_t *elem_size);
/* The last stage's array (forward output, complex). */
fftw_complex *pfft_output(pfft *f, size_t *elems);

/* Forward / backward transform. When f->plans is NULL, uopt (TUNA_ALLTOALL options) runs the
 * uniform reshapes with tuna_alltoall and opt (TUNA_ALLTOALLV) the others; uopt NULL: every
 * reshape on tuna_alltoallv; opt NULL: the algorithm has no alltoallv form, and a non-uniform
 * reshape is an error. Every rank runs every reshape even after an error (no rank waits for
 * a missing peer). */
int pfft_forward(pfft *f, const tuna_options *opt, const tuna_options *uopt, char *err,
                 size_t errlen);
int pfft_backward(pfft *f, const tuna_options *opt, const tuna_options *uopt, char *err,
                  size_t errlen);

/* The 2 (nstages - 1) plans of one algorithm (opt, uopt as for pfft_forward), in f->sbuf /
 * f->rbuf (init errors agreed over f->comm; on error none is left). */
int pfft_make_plans(pfft *f, const tuna_options *opt, const tuna_options *uopt, unsigned flags,
                    pfft_plan *plans, char *err, size_t errlen);

/* Gathers stage s's array (real: the real grid) onto rank 0 as the whole grid, row-major.
 * Returns a fftw_malloc'd array on rank 0 (NULL elsewhere or on failure; agreed). */
void *pfft_gather(pfft *f, int s, int real, const void *local, int *ok);

/* A layout's box for one rank. */
void pfft_box_of(const pfft_layout *lay, const long ext[3], int rank, pfft_box *b);

#endif
