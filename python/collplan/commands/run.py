"""`collplan run` (launched with mpirun): run a collective with real data through collplan's executor, check every
rank's result against a plain serial computation, and time it against the MPI library's own collective in the same
run -- an OSU-style table (size, collplan time, native time, ratio) or JSON.

    mpirun -n 4 collplan run --collective allreduce --algorithm all --sizes 8B..1MiB

Sizes: allgather -- bytes per rank; alltoall -- bytes per destination; allreduce -- the vector (float64, so a
multiple of 8; MPI_SUM, or --op noncommutative: composition of affine maps, a user-defined MPI_Op that does not
commute); alltoallv -- the mean bytes per destination (rank i sends (i + j) mod 3 / 2 times it to rank j);
barrier -- none. Times are the mean per call over --iters calls (fewer above 64 KiB), the slowest rank's.
"""
from __future__ import annotations

import json
import sys

from .. import mpi as cmpi
from .._core import CollplanError, format_bytes, format_time, parse_sizes
from ..api import algorithms
from ..measure import Case, backend_as_programs_run, time_request
from ..output import atomic_write
from ._common import params_of

COLLECTIVES = ["allgather", "alltoall", "alltoallv", "allreduce", "barrier"]


def register(sub) -> None:
    p = sub.add_parser("run", help="run a collective for real under mpirun: check it, time it against native MPI",
                       epilog="example:\n  mpirun -n 4 collplan run --collective allreduce --algorithm all --sizes 8B..1MiB\n"
                       "  mpirun -n 2 collplan run --collective alltoall --algorithm bruck --format osu")
    p.add_argument("--collective", required=True, choices=COLLECTIVES, help="the collective to run")
    p.add_argument("--algorithm", default="all", help="registry name, or 'all' (every one that applies)")
    p.add_argument("--param", action="append", help="algorithm parameter NAME=VALUE (repeatable)")
    p.add_argument("--sizes", default="8B..1MiB", help="e.g. 8B..1MiB, or 0,13,4KiB")
    p.add_argument("--iters", type=int, default=100, help="timed calls per size (default 100)")
    p.add_argument("--warmup", type=int, default=5, help="untimed calls before timing")
    p.add_argument("--op", choices=["sum", "noncommutative"], default="sum", help="allreduce operation")
    p.add_argument("--mode", choices=["auto", "pack", "datatype"], default="auto",
                   help="how non-contiguous messages travel")
    p.add_argument("--check-only", action="store_true", help="check results, do not time")
    p.add_argument("--json", nargs="?", const="-", metavar="FILE", help="write the rows as JSON (default: stdout)")
    p.set_defaults(func=cmd_run)


# ------------------------------------------------------------------------------------------- timing
def _time(case, req, iters, warmup) -> float:
    """Mean seconds per call of the slowest rank (the loop runs in C++: runtime/mpi/timing.hpp)."""
    if req is None:
        return case.time_native(iters, warmup, 1)[0]
    return time_request(case.comm, req, iters, warmup, 1)[0]


def _candidates(args) -> list[str]:
    if args.algorithm != "all":
        return [cmpi._algorithm(args.collective, args.algorithm)]
    names = [a["name"] for a in algorithms(args.collective)]
    if not names:
        raise CollplanError(f"no {args.collective} algorithm is registered")
    return names


def _row(args, MPI, comm, name, params, size):
    case = Case(MPI, comm, args.collective, size, args.op)
    try:
        req = case.request(name, params, args.mode)
        req.start()
        req.wait()
        ok = comm.allreduce(case.correct(), op=MPI.LAND)
        row = {"algorithm": req.algorithm, "params": params, "size_bytes": case.size, "ok": bool(ok)}
        if not args.check_only:
            iters = args.iters if case.size < 65536 else max(3, args.iters // 8)
            row["collplan_s"] = _time(case, req, iters, args.warmup)
            row["native_s"] = _time(case, None, iters, args.warmup)
            row["ratio"] = row["collplan_s"] / row["native_s"] if row["native_s"] > 0 else float("nan")
        return row
    finally:
        case.free()


def _print_table(rows, header, file=sys.stdout):
    print(header, file=file)
    print(f"# {'algorithm':34s} {'size':>8s} {'collplan':>10s} {'native':>10s} {'ratio':>7s}  check", file=file)
    for r in rows:
        if "collplan_s" in r:
            times = f"{format_time(r['collplan_s']):>10s} {format_time(r['native_s']):>10s} {r['ratio']:7.2f}"
        else:
            times = f"{'-':>10s} {'-':>10s} {'-':>7s}"
        print(f"  {r['algorithm']:34s} {format_bytes(r['size_bytes']):>8s} {times}  {'ok' if r['ok'] else 'FAIL'}", file=file)


def cmd_run(args) -> int:
    MPI, _ = backend_as_programs_run()
    comm = MPI.COMM_WORLD
    P, me = comm.Get_size(), comm.Get_rank()
    params = params_of(args.param)
    if args.iters < 1 or args.warmup < 0:
        raise CollplanError(f"--iters {args.iters} / --warmup {args.warmup} invalid (allowed: iters >= 1, warmup >= 0)")
    sizes = [0] if args.collective == "barrier" else list(parse_sizes(args.sizes))
    rows, skipped = [], []
    for name in _candidates(args):
        why = cmpi.applies(args.collective, name, P, params)
        if why and args.algorithm == "all":
            skipped.append(f"{name}: {why}")
            continue
        try:
            for size in sizes:
                rows.append(_row(args, MPI, comm, name, params, size))
        except CollplanError as e:  # e.g. a schedule that needs a commutative operation (same on every rank)
            if args.algorithm != "all":
                raise
            skipped.append(f"{name}: {e}")
    library = MPI.Get_library_version().splitlines()[0].strip()
    if me == 0:
        report = {"collective": args.collective, "ranks": P, "mpi": library, "op": args.op, "rows": rows,
                  "skipped": skipped}
        header = f"# collplan run: {args.collective}, P={P}, {library}" + (f", op {args.op}" if args.collective == "allreduce" else "")
        if args.json:
            text = json.dumps(report, indent=1)
            if args.json == "-":
                print(text)
            else:
                atomic_write(args.json, text + "\n")
        if args.json != "-":
            _print_table(rows, header)
            for s in skipped:
                print(f"# skipped {s}")
    return 0 if all(r["ok"] for r in rows) else 1
