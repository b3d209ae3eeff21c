"""`collplan run` (launched with mpirun): run a collective with real data through collplan's executor, check every
rank's result against a plain serial computation, and time it against the MPI library's own collective in the same
run -- an OSU-style table (size, collplan time, native time, ratio) or JSON.

    mpirun -n 4 collplan run --collective allreduce --algorithm all --sizes 8B..1MiB
    mpirun -n 4 collplan run --collective bcast --root 3 --sizes 8B..1MiB

Sizes: allgather, gather and scatter -- bytes per rank; alltoall -- bytes per destination; bcast -- the message;
allreduce and reduce -- the vector; reduce_scatter_block -- each rank's result block (the reductions: float64, so
a multiple of 8, with MPI_SUM; or --op noncommutative: composition of affine maps in pairs of int64, a user-defined
MPI_Op that does not commute); alltoallv -- the mean bytes per destination (rank i sends (i + j) mod 3 / 2 times it
to rank j); allgatherv and reduce_scatter -- the mean bytes per rank: P times it in all, spread over the ranks in
proportion to rank mod 3 (every third rank, rank 0 first, contributes or receives nothing); barrier -- none.
--root: the root of bcast, reduce, gather and scatter (default 0). Times are the mean per call over --iters calls
(fewer above 64 KiB), averaged over the ranks.
"""
from __future__ import annotations

import json
import sys

from .. import mpi as cmpi
from .._core import CollplanError, format_bytes, format_time, parse_sizes
from ..api import COLLECTIVE_NAMES as COLLECTIVES
from ..measure import Case, backend_as_programs_run, require_memory, time_request
from ..output import atomic_write
from ..planner import REDUCTIONS, ROOTED, candidates, check_reduction_sizes, resolve_problem
from ._common import file_arg, int_arg, params_of


def register(sub) -> None:
    p = sub.add_parser("run", help="run a collective for real under mpirun: check it, time it against native MPI",
                       epilog="example:\n"
                       "  mpirun -n 4 collplan run --collective allreduce --algorithm all --sizes 8B..1MiB\n"
                       "  mpirun -n 2 collplan run --collective alltoall --algorithm bruck --format osu\n"
                       "  mpirun -n 4 collplan run --collective reduce --root 2 --op noncommutative --sizes 0,16,4KiB")
    p.add_argument("--collective", required=True, choices=COLLECTIVES, help="the collective to run")
    p.add_argument("--algorithm", default="all", help="registry name, or 'all' (every one that applies)")
    p.add_argument("--param", action="append", help="algorithm parameter NAME=VALUE (repeatable)")
    p.add_argument("--sizes", default="8B..1MiB", help="e.g. 8B..1MiB, or 0,13,4KiB")
    p.add_argument("--iters", type=int_arg("--iters", 1, 10**9), default=100, help="timed calls per size (default 100)")
    p.add_argument("--warmup", type=int_arg("--warmup", 0, 10**9), default=5, help="untimed calls before timing")
    p.add_argument("--op", choices=["sum", "noncommutative"], default="sum",
                   help="the reductions' operation (allreduce, reduce, reduce_scatter_block, reduce_scatter)")
    p.add_argument("--root", type=int_arg("--root", 0, 2**31 - 1), default=0,
                   help="root rank of bcast, reduce, gather, scatter (default 0; below the number of ranks)")
    p.add_argument("--mode", choices=["auto", "pack", "datatype"], default="auto",
                   help="how non-contiguous messages travel")
    p.add_argument("--check-only", action="store_true", help="check results, do not time")
    p.add_argument("--json", nargs="?", const="-", metavar="FILE", type=file_arg("--json", stdout=True), help="write the rows as JSON (default: stdout)")
    p.add_argument("--csv", nargs="?", const="-", metavar="FILE", type=file_arg("--csv", stdout=True),
                   help="write the rows as CSV, one per algorithm and size (default: stdout)")
    p.add_argument("--format", choices=["table", "osu"], default="table",
                   help="table: collplan vs native per algorithm and size; osu: the OSU micro-benchmarks' layout "
                   "(size, avg/min/max latency in us, iterations), one block per algorithm and one for native MPI")
    p.set_defaults(func=cmd_run)


# ------------------------------------------------------------------------------------------- timing
def _time(case, req, iters, warmup, reps=1) -> list[float]:
    """Per repetition, the mean seconds per call averaged over the ranks (the loop runs in C++:
    measure/timing.hpp)."""
    if req is None:
        return list(case.time_native(iters, warmup, reps))
    return list(time_request(case.comm, req, iters, warmup, reps))


OSU_REPS = 5  # --format osu: the timed calls in this many repetitions; min and max are over them


def _row(args, MPI, comm, name, params, size):
    case = Case(MPI, comm, args.collective, size, args.op, args.root if args.collective in ROOTED else 0)
    try:
        req = case.request(name, params, args.mode)
        req.start()
        req.wait()
        ok = comm.allreduce(case.correct(), op=MPI.LAND)
        # the schedule's own parameters: `n=measure` shows the n it chose
        row = {"algorithm": req.algorithm, "params": req.params or params, "size_bytes": case.size, "ok": bool(ok)}
        if not args.check_only:
            iters = args.iters if case.size < 65536 else max(3, args.iters // 8)
            reps = min(OSU_REPS, iters) if args.format == "osu" else 1
            for key, r in (("collplan", req), ("native", None)):
                t = _time(case, r, -(-iters // reps), args.warmup, reps)
                row[f"{key}_s"] = sum(t) / len(t)
                if args.format == "osu":
                    row[f"{key}_min_s"], row[f"{key}_max_s"] = min(t), max(t)
            if args.format == "osu":
                row["iterations"] = -(-iters // reps) * reps
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
    _print_fastest(rows, file)


def _print_fastest(rows, file=sys.stdout):
    """With several algorithms: per size the fastest one, its time, the MPI library's and their ratio."""
    timed = [r for r in rows if "collplan_s" in r]
    if len({r["algorithm"] for r in timed}) < 2:
        return
    from ..tables import render
    table = []
    for size in dict.fromkeys(r["size_bytes"] for r in timed):
        best = min((r for r in timed if r["size_bytes"] == size), key=lambda r: r["collplan_s"])
        table.append([format_bytes(size), best["algorithm"].split("/", 1)[-1], format_time(best["collplan_s"]),
                      format_time(best["native_s"]), f"{best['ratio']:.2f}"])
    print("\n# fastest per size", file=file)
    print(render(["size", "fastest", "time", "native", "ratio"], table, left=(1,)), file=file)


def _print_osu(rows, args, library, P, file=sys.stdout):
    """The OSU micro-benchmarks' layout: a block per algorithm, then the MPI library's own collective."""
    name = args.collective.capitalize()
    print(f"# OSU MPI {name} Latency Test layout (collplan run, {' '.join(library.split(',')[0].split())})", file=file)
    print(f"# P={P}; latency: mean per call averaged over the ranks; Min/Max: the fastest and slowest of "
          f"{OSU_REPS} repetitions", file=file)
    blocks = list(dict.fromkeys((r["algorithm"], str(r["params"])) for r in rows))
    for key in [(b, "collplan") for b in blocks] + [(blocks[0] if blocks else None, "native")]:
        (alg, params), who = key
        label = f"{alg} {params if params != '{}' else ''}".strip() if who == "collplan" else "native (MPI library)"
        print(f"\n# {label}", file=file)
        print(f"# {'Size':<10s}{'Avg Latency(us)':>18s}{'Min Latency(us)':>18s}{'Max Latency(us)':>18s}"
              f"{'Iterations':>12s}", file=file)
        for r in rows:
            if (r["algorithm"], str(r["params"])) != (alg, params) or f"{who}_s" not in r:
                continue
            print(f"{r['size_bytes']:<12d}{r[f'{who}_s'] * 1e6:>18.2f}{r[f'{who}_min_s'] * 1e6:>18.2f}"
                  f"{r[f'{who}_max_s'] * 1e6:>18.2f}{r['iterations']:>12d}", file=file)
    for r in rows:
        if not r["ok"]:
            print(f"# check FAILED: {r['algorithm']} at {r['size_bytes']} bytes", file=file)


def cmd_run(args) -> int:
    if args.json == "-" and args.csv == "-":
        raise CollplanError("--json and --csv cannot both write to standard output (give one of them a FILE)")
    params = params_of(args.param)
    sizes = [0] if args.collective == "barrier" else list(parse_sizes(args.sizes))  # checked before MPI starts
    check_reduction_sizes(args.collective, sizes)
    MPI, _ = backend_as_programs_run()
    comm = MPI.COMM_WORLD
    P, me = comm.Get_size(), comm.Get_rank()
    require_memory(MPI, comm, args.collective, sizes)
    root = cmpi._root(comm, args.root) if args.collective in ROOTED else 0
    # the MPI runtime decides whether an algorithm applies (it picks the topology) and builds the schedules itself
    problem = resolve_problem(args.collective, P, algorithm=args.algorithm, params=params, root=root, op=args.op)
    found, declined = candidates(problem, None, sizes, runtime=lambda name: cmpi.applies(
        problem.collective, name, P, problem.params, problem.root))
    rows, skipped = [], [f"{d['algorithm']}: {d['reason']}" for d in declined]
    for c, _ in found:
        try:
            for size in sizes:
                rows.append(_row(args, MPI, comm, c.algorithm, problem.params, size))
        except CollplanError as e:  # e.g. a schedule that needs a commutative operation (same on every rank)
            if args.algorithm != "all":
                raise
            skipped.append(f"{c.algorithm}: {e}")
    library = cmpi.library_version(MPI)
    if me == 0:
        report = {"collective": args.collective, "ranks": P, "mpi": library, "op": args.op, "rows": rows,
                  "skipped": skipped, **({"root": root} if args.collective in ROOTED else {})}
        header = (f"# collplan run: {args.collective}, P={P}, {library.split(',')[0]}" +
                  (f", root {root}" if args.collective in ROOTED else "") +
                  (f", op {args.op}" if args.collective in REDUCTIONS else ""))
        if args.json:
            text = json.dumps(report, indent=1)
            if args.json == "-":
                print(text)
            else:
                atomic_write(args.json, text + "\n")
        if args.csv:
            from ..tables import csv_text
            atomic_write(args.csv, csv_text(rows))
        if "-" not in (args.json, args.csv):  # else standard output holds the JSON or the CSV alone
            if args.format == "osu" and not args.check_only:
                _print_osu(rows, args, library, P)
            else:
                _print_table(rows, header)
                for s in skipped:
                    print(f"# skipped {s}")
    return 0 if all(r["ok"] for r in rows) else 1
