"""The `collplan` command line: the parser and main(). Each sub-command is a module of collplan.commands; errors
print one line on stderr and exit with code 2."""
from __future__ import annotations

import argparse
import os
import sys

from ._core import CollplanError


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's default prints the usage too)
        # "argument --ranks: --ranks -1 is invalid (...)": a type that names its option (commands/_common.int_arg)
        head, sep, rest = message.partition(": ")
        if sep and head.startswith("argument ") and rest.startswith(head[len("argument "):] + " "):
            message = rest
        raise CollplanError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="collplan", description="Plan, verify, simulate and run collective communication.")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    from .commands import register_all
    register_all(sub)
    return ap


def _error(message: str) -> None:
    """The one-line error, once per run: under mpirun every rank fails alike, so only rank 0 says it."""
    rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0"))
    # one line whatever the user's input was: a newline or other control character it echoes is escaped
    message = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in message)
    if rank == "0":
        print(f"collplan: error: {message}", file=sys.stderr, flush=True)
    from .mpi import wait_for_failing_ranks
    wait_for_failing_ranks()


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except CollplanError as e:
        _error(str(e))
        return 2
    except OSError as e:
        _error(f"{e.filename or ''}: {e.strerror}")
        return 2
    except MemoryError:
        _error("out of memory (try a smaller problem or raise --max-memory)")
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the C++ loops poll for it (src/collplan/common/job.hpp)
        print("collplan: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
