"""What several commands share: the problem options (--collective, --algorithm, --schedule, --ranks, --topology,
--param, --matrix, --counts, --root) and turning them into a problem (planner.Problem) or a schedule."""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

from .. import _core, limits
from .._core import CollplanError
from ..api import COLLECTIVE_NAMES as COLLECTIVES
from ..api import MAX_RANKS, schedule
from ..output import printable
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


def file_arg(option: str, stdout: bool = False):
    """An argparse type for an output file: not empty, not a folder (a trailing '/' or an existing directory);
    '-' is stdout where the option allows it."""
    def path(text: str) -> str:
        allowed = "a file path" + (", or - for stdout" if stdout else "")
        if text == "-" and stdout:
            return text
        if not text:
            raise argparse.ArgumentTypeError(f"{option} is empty (allowed: {allowed})")
        if text.endswith("/") or os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"{option} '{text}' names a folder (allowed: {allowed})")
        return text
    return path


def int_arg(option: str, lo: int, hi: int = INT64_MAX):
    """The argparse type of integer option `option`: a decimal integer in lo..hi. Anything else (2^64, -1 where
    unsigned, 4.0) is refused as "--x V is invalid (allowed: lo..hi)" while the arguments are parsed: before any
    work starts, and before MPI starts."""
    def integer(text: str) -> int:
        try:
            v = int(text.strip(), 10)
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{option} {printable(text, 40)} is invalid (allowed: an integer "
                                             f"{lo}..{hi})")
        return v
    return integer


def float_arg(option: str, lo: float, hi: float = math.inf):
    """The argparse type of number option `option`: a finite number in lo..hi (nan and inf are refused)."""
    def number(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        if not (math.isfinite(v) and lo <= v <= hi):
            allowed = f"a number >= {lo:g}" if hi == math.inf else f"a number {lo:g}..{hi:g}"
            raise argparse.ArgumentTypeError(f"{option} {printable(text, 40)} is invalid (allowed: {allowed})")
        return v
    return number


RANKS = int_arg("--ranks", 1, MAX_RANKS)


def params_of(pairs: list[str] | None) -> dict:
    out = {}
    for p in pairs or []:
        if "=" not in p or p.startswith("="):
            raise CollplanError(f"--param '{p}' is not of the form NAME=VALUE")
        k, v = p.split("=", 1)
        if k in out:
            raise CollplanError(f"--param {k} is given twice ({k}={out[k]}, {k}={v}; allowed: each parameter once)")
        out[k] = v
    return out


def matrix_of(args):
    """alltoallv: the --matrix (a file or a generator spec; its P defaults to --ranks), else None."""
    if not getattr(args, "matrix", None):
        return None
    from ..unstructured import matrix_from_spec
    m = matrix_from_spec(args.matrix, args.ranks, max_memory=args.max_memory)
    if args.ranks is None and not args.topology:
        args.ranks = len(m)
    return m


def counts_of(args) -> list[int] | None:
    """allgatherv, reduce_scatter: --counts "3,0,5,..." (units per rank; P defaults to their number), else None."""
    text = getattr(args, "counts", None)
    if not text:
        return None
    try:
        counts = [int(x, 10) for x in text.split(",")]
    except ValueError:
        counts = []
    if not counts or any(not 0 <= c <= UINT64_MAX for c in counts):
        raise CollplanError(f"--counts {text} is invalid (allowed: comma-separated integers 0..2^64-1, one per rank)")
    if args.ranks is None and not args.topology:
        args.ranks = len(counts)
    return counts


def ranks_topology(args, machine_topology: str = "") -> tuple[int | None, str | None]:
    if args.ranks is None and not args.topology and not machine_topology:
        raise CollplanError("give --ranks P or --topology T")
    return args.ranks, args.topology or (None if args.ranks is not None else machine_topology)


def problem_of(args, machine_topology: str = ""):
    """The command line's problem, resolved once (planner.resolve_problem): --collective, --algorithm NAME or all, --param,
    --ranks or --topology (default: the machine's topology), --root, --matrix, --counts, and --op where the command
    has one ('' where it has none: no schedule is declined for its operation)."""
    from ..planner import resolve_problem
    if args.algorithm == "all" and not args.collective:
        raise CollplanError(f"{args.command} needs --collective with --algorithm all")
    if not args.algorithm or not args.collective:
        raise CollplanError(f"{args.command} needs --collective and --algorithm (or --schedule FILE)")
    if args.algorithm == "all" and args.param:
        raise CollplanError("--param applies to one algorithm; give --algorithm NAME instead of all")
    matrix, counts = matrix_of(args), counts_of(args)
    ranks, topo = ranks_topology(args, machine_topology)
    return resolve_problem(args.collective, ranks, topo, args.algorithm, params_of(args.param), args.root,
                           getattr(args, "op", ""), counts, matrix)


def read_schedule(path: str, max_memory=None) -> _core.Schedule:
    """A schedule from its text form (docs/schedule.md), ``-`` = standard input; errors name the file and line. A
    file larger than the memory limit allows is refused before it is read whole."""
    limit = limits.max_memory(max_memory)
    try:
        text = limits.read_text("/dev/stdin" if path == "-" else path, limit // limits.SCHEDULE_TEXT_FACTOR,
                                "schedule file")
    except OSError as e:
        raise CollplanError(f"cannot read schedule file {path}: {e.strerror}") from None
    try:
        return _core.Schedule.from_text(text, limit)
    except CollplanError as e:
        raise CollplanError(f"{'standard input' if path == '-' else path}: {e}") from None


def schedule_from_args(args, machine_topology: str = "") -> _core.Schedule:
    if args.schedule:
        return read_schedule(args.schedule, args.max_memory)
    if not args.algorithm or not args.collective:
        raise CollplanError(f"{args.command} needs --collective and --algorithm (or --schedule FILE)")
    matrix, counts = matrix_of(args), counts_of(args)
    ranks, topo = ranks_topology(args, machine_topology)
    return schedule(args.algorithm, ranks=ranks, topology=topo, params=params_of(args.param), collective=args.collective,
                    matrix=matrix, counts=counts, root=args.root, max_memory=args.max_memory)


def add_max_memory(p) -> None:
    """--max-memory SIZE: every command that builds schedules or reads inputs has it (once)."""
    p.add_argument("--max-memory", type=limits.parse_max_memory, metavar="SIZE",
                   help="refuse jobs that would need more memory than SIZE, e.g. 4GiB (default: a quarter of the RAM, "
                        f"{_core.approx_bytes(limits.max_memory())} here)")


def add_problem(p, need_algorithm=True):
    p.add_argument("--collective", choices=COLLECTIVES, help="the collective operation")
    p.add_argument("--algorithm", help="name, e.g. ring or allgather/ring" + (" or all" if need_algorithm else ""))
    p.add_argument("--schedule", metavar="FILE", help="a schedule in collplan's text form instead of an algorithm "
                   "(- reads standard input)")
    p.add_argument("--ranks", type=RANKS, help="number of ranks P (topology full:P unless --topology)")
    p.add_argument("--topology", help="line:P, ring:P, mesh:AxB[xC..], torus:AxB[xC..], hypercube:d, full:P, fattree:k,n")
    p.add_argument("--param", action="append", metavar="K=V", help="algorithm parameter (repeatable)")
    add_max_memory(p)
    p.add_argument("--matrix", metavar="FILE|SPEC", help="alltoallv communication matrix: a .csv/.txt, .mtx or .json "
                   "file, or testset1:P=32,d=4,seed=1, testset2:P=32,d=4,seed=1, mesh:P=32,refine=2 (sizes in units "
                   "of the message size)")
    p.add_argument("--counts", metavar="C0,C1,..", help="allgatherv, reduce_scatter: units per rank (one per rank, in "
                   "units of the message size)")
    p.add_argument("--root", type=int_arg("--root", 0, MAX_RANKS - 1), default=0,
                   help="bcast, reduce, gather, scatter: the root rank (default 0)")


def add_json_csv(p, what: str = "the rows") -> None:
    """--json and --csv (one of them): the same rows, as JSON or as CSV with a header line, on stdout."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help=f"print {what} as JSON instead of the table")
    g.add_argument("--csv", action="store_true", help=f"print {what} as CSV (the rows of --json) instead of the table")


def print_json_csv(args, doc: dict, records: list[dict], columns: list[str] | None = None) -> bool:
    """Print `doc` (--json) or `records` (--csv; the rows of doc); False when neither was asked for."""
    if getattr(args, "json", False):
        print(json.dumps(doc, indent=2))
        return True
    if getattr(args, "csv", False):
        from ..tables import csv_text
        sys.stdout.write(csv_text(records, columns))
        return True
    return False
