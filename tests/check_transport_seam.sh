#!/bin/sh
# The transport seam stays whole (src/transport/transport.h, docs/testing.md): no algorithm
# file calls MPI point-to-point, request completion, MPI_Reduce_local, memcpy or memmove
# itself; they go through the transport (tuna_tp_*). Algorithm files: every .c and .h under
# the collective families' directories below and the NCCL path's rows (src/nccl). Not
# algorithm files, free to call MPI: the transports (src/transport), the engine and agreements
# (src/core), selection and learning (src/select), plans' set-up (src/plan), the drop-in
# library (src/preload).
# Usage: check_transport_seam.sh SOURCE_ROOT. Exit 1, naming each call, when one is found.
root=${1:?usage: check_transport_seam.sh SOURCE_ROOT}
dirs="src/alltoallv src/alltoall src/allgather src/allreduce src/allgather_allreduce src/neighbor src/nccl"
p2p='Isend|Irecv|Send|Recv|Sendrecv|Sendrecv_replace|Ssend|Issend|Bsend|Ibsend|Rsend|Irsend'
persistent='Send_init|Recv_init|Start|Startall'
completion='Wait|Waitall|Waitany|Waitsome|Test|Testall|Testany|Testsome|Cancel|Request_free'
calls="P?MPI_($p2p|$persistent|$completion|Reduce_local)|memcpy|memmove"
cd "$root" || exit 2
found=0
for d in $dirs; do
    [ -d "$d" ] || continue
    # A call is the name right before its parenthesis (comments name them with a space or
    # none, e.g. "MPI_Waitany (blocking)", "(memcpy)").
    if grep -rnE --include='*.c' --include='*.h' "(^|[^A-Za-z0-9_])($calls)\(" "$d"; then
        found=1
    fi
done
if [ "$found" = 1 ]; then
    echo "check_transport_seam: the calls above bypass the transport:" \
         "use tuna_tp_* (src/transport/transport.h)"
    exit 1
fi
echo "check_transport_seam: no direct MPI point-to-point, completion, reduction or copy in $dirs"
