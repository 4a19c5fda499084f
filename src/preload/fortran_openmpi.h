/*
 * What the Open MPI Fortran bindings of the preload share (fortran_openmpi.c
 * defines these): the Fortran sentinels, and the five names Open MPI gives
 * every Fortran binding. Not exported (exports.map keeps only the MPI entry
 * points).
 */
#ifndef TUNA_FORTRAN_OPENMPI_H
#define TUNA_FORTRAN_OPENMPI_H

#include "preload.h"

/* A Fortran buffer address as C sees it: MPI_IN_PLACE / MPI_BOTTOM sentinels
 * converted. */
void *preload_f_buffer(void *buf);
/* Whether a Fortran status (array) argument is MPI_STATUS_IGNORE
 * (MPI_STATUSES_IGNORE). */
int preload_f_status_ignore(const MPI_Fint *status);
int preload_f_statuses_ignore(const MPI_Fint *statuses);

/*
 * One binding under every name Open MPI exports: mpif.h and `use mpi` (lo, lo_,
 * lo__, UP) and `use mpi_f08` (lo_f08_, whose TYPE(MPI_Comm) etc. arrive as a
 * reference to their INTEGER MPI_VAL, and whose ierror may be absent: NULL).
 * Each calls impl with args.
 */
#define PRELOAD_F_BIND(impl, params, args, name)                                                   \
    void name params;                                                                              \
    void name params                                                                               \
    {                                                                                              \
        impl args;                                                                                 \
    }
#define PRELOAD_F_NAMES(impl, params, args, lo, UP)                                                \
    PRELOAD_F_BIND(impl, params, args, lo)                                                         \
    PRELOAD_F_BIND(impl, params, args, lo##_)                                                      \
    PRELOAD_F_BIND(impl, params, args, lo##__)                                                     \
    PRELOAD_F_BIND(impl, params, args, UP)                                                         \
    PRELOAD_F_BIND(impl, params, args, lo##_f08_)

#endif /* TUNA_FORTRAN_OPENMPI_H */
