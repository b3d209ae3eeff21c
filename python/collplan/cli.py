"""The `collplan` command line: the parser and main(). Each sub-command is a module of collplan.commands; errors
print one line on stderr and exit with code 2."""
from __future__ import annotations

import argparse
import os
import sys

from ._core import CollplanError


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and examples as written; every option's default after its help text (unless the text
    already names it, or there is none: a flag, an option that is off unless given)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (action.default not in (None, False, argparse.SUPPRESS) and "default" not in text
                and action.option_strings and action.nargs != 0):
            text += " (default: %(default)s)"
        return text


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):  # one line, exit 2 (argparse's default prints the usage too)
        # "argument --ranks: --ranks -1 is invalid (...)": a type that names its option (commands/_common.int_arg)
        head, sep, rest = message.partition(": ")
        if sep and head.startswith("argument ") and rest.startswith(head[len("argument "):] + " "):
            message = rest
        raise CollplanError(f"{self.prog}: {message}")


def version_text() -> str:
    """collplan's version, and the MPI libraries its runtime was built for."""
    from importlib.metadata import PackageNotFoundError, version

    from . import __version__
    from .mpi import installations
    try:
        v = version("collplan")
    except PackageNotFoundError:
        v = __version__
    built = installations()
    mpis = "".join(f"\n  {name}: {info['version']} ({info['prefix']}); Fortran: {info['fortran']}"
                   for name, info in built.items()) or " none (no MPI runtime)"
    return f"collplan {v} (Python {sys.version.split()[0]}); MPI runtime built for:{mpis}"


class _Version(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="collplan", description="Plan, verify, simulate and run collective communication.",
                 epilog="example:\n  collplan estimate --collective allgather --algorithm all --machine ib-qdr\n"
                 "every command: collplan COMMAND --help; docs/*.md")
    ap.add_argument("--version", action=_Version, help="print the version and the MPIs of the runtime, then exit")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    from .commands import register_all
    register_all(sub)
    return ap


def _error(message: str) -> None:
    """The one-line error, once per run: under mpirun every rank fails alike, so only rank 0 says it."""
    from .mpi import launched_rank, wait_for_failing_ranks
    # one line whatever the user's input was: a newline or other control character it echoes is escaped
    from .output import printable
    message = printable(message)
    if launched_rank() == 0:
        print(f"collplan: error: {message}", file=sys.stderr, flush=True)
    wait_for_failing_ranks()


INTERRUPT_GRACE_S = 0.5  # Ctrl-C: time for KeyboardInterrupt to arrive before the process ends anyway


def program() -> int:
    """The `collplan` program (console script, python -m collplan): main() plus Ctrl-C that ends even C++ work
    that does not poll for it (python/bindings/interrupt.cpp). main() alone takes no signals: it is also called
    inside other programs (tests, notebooks)."""
    from . import _core
    _core.install_interrupt_backstop(INTERRUPT_GRACE_S)
    return main()


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe is found here, not at exit
        return code
    except BrokenPipeError:  # the reader went away (collplan ... | head): stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool the signal ended
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
        from . import _core
        _core.interrupt_handled()
        print("collplan: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(program())
