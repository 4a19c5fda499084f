"""The MPI launcher the tools and tests start local ranks with, and tuna-bench's workload
arguments that `tuna sim run` and `tuna tune run` pass alike."""
import os
import shutil
import subprocess


def mpiexec(nprocs=None):
    """[mpiexec, flags..., (-n N)]: TUNA_MPIEXEC and TUNA_MPIEXEC_FLAGS (CTest sets both to the
    configured launcher), else mpiexec on PATH with the flags Open MPI needs on a small
    machine as root (--oversubscribe --allow-run-as-root) and none for other libraries."""
    exe = os.environ.get("TUNA_MPIEXEC") or shutil.which("mpiexec") or "mpiexec"
    flags = os.environ.get("TUNA_MPIEXEC_FLAGS")
    if flags is None:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        flags = "--oversubscribe --allow-run-as-root" if "Open MPI" in out or "OpenRTE" in out \
            else ""
    return [exe] + flags.split() + (["-n", str(nprocs)] if nprocs is not None else [])


# tuna-bench --collective values (alltoallv first: the default).
COLLECTIVES = ("alltoallv", "alltoall", "allgather", "allreduce", "neighbor_alltoallv")


def bench_workload(collective, dists):
    """tuna-bench's -c/-d arguments: distributions are alltoallv's (uniform if none given)
    and neighbor_alltoallv's (spmv:FILE.mtx halos, required); the other collectives take a
    size only."""
    if collective == "alltoallv":
        return [a for d in dists or ["uniform"] for a in ("-d", d)]
    if collective == "neighbor_alltoallv":
        if not dists:
            raise ValueError("--collective neighbor_alltoallv needs --dist spmv:FILE.mtx")
        return ["-c", collective] + [a for d in dists for a in ("-d", d)]
    if dists:
        raise ValueError("--dist applies to --collective alltoallv only")
    return ["-c", collective]
