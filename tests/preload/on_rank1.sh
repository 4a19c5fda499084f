#!/bin/sh
# usage: on_rank1.sh VAR=VALUE program args...
# Exports VAR=VALUE on rank 1 only (Open MPI's or MPICH's rank variable), then runs the
# program: a launch whose ranks see different settings.
setting=$1
shift
if [ "$OMPI_COMM_WORLD_RANK$PMI_RANK" = 1 ]; then
  export "$setting"
fi
exec "$@"
