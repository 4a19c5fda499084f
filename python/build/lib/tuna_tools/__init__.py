"""Command-line tools of the tuna MPI collectives library (the ``tuna`` command)."""

__version__ = "0.1.0"
