"""The ``tuna`` command: one module per subcommand.

Each subcommand module exposes ``register(subparsers)``, which adds its parser and sets
``func`` (called with the parsed arguments, returning an exit code). A new subcommand
(``tuna sim``, ``tuna tune``) is a new module listed in ``SUBCOMMANDS``.
"""
import argparse
import importlib
import sys

from tuna_tools import __version__

SUBCOMMANDS = ["tuna_tools.plot", "tuna_tools.sim", "tuna_tools.tune"]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="tuna", description="Tools of the tuna MPI collectives library.")
    parser.add_argument("--version", action="version", version=f"tuna-tools {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in SUBCOMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except (OSError, ValueError) as err:
        print(f"tuna {args.command}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
