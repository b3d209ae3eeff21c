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

COLLECTIVES = ["allgather", "alltoall", "alltoallv", "allreduce", "barrier"]
PRIME = 1000003


def register(sub) -> None:
    p = sub.add_parser("run", help="run a collective for real under mpirun: check it, time it against native MPI")
    p.add_argument("--collective", required=True, choices=COLLECTIVES)
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


# ------------------------------------------------------------------------------------------- data and checks
def _affine_op(MPI, np, dtype):
    def compose(inbuf, inoutbuf, datatype):  # inout = in o inout, (a1,b1) o (a2,b2) = (a1 a2, a1 b2 + b1)
        x = np.frombuffer(inbuf, dtype=dtype)
        y = np.frombuffer(inoutbuf, dtype=dtype)
        a = x["a"] * y["a"] % PRIME
        b = (x["a"] * y["b"] + x["b"]) % PRIME
        y["a"], y["b"] = a, b
    return MPI.Op.Create(compose, commute=False)


class Case:
    """Buffers, the collplan request, the native call and the expected result of one (collective, size)."""

    def __init__(self, MPI, comm, collective: str, size: int, op: str):
        import numpy as np

        self.np, self.MPI, self.comm = np, MPI, comm
        self.P, self.me = comm.Get_size(), comm.Get_rank()
        self.collective, self.size, self.op_name, self.op, self.datatype = collective, size, op, None, None
        getattr(self, f"_setup_{collective}")(size)

    def _pattern(self, key, n):
        return ((self.np.arange(n, dtype=self.np.int64) * 7 + key * 131 + 1) % 251).astype(self.np.uint8)

    def _setup_allgather(self, n):
        np, P = self.np, self.P
        self.send = self._pattern(self.me, n)
        self.recv = np.zeros(P * n, np.uint8)
        self.want = np.concatenate([self._pattern(r, n) for r in range(P)]) if P * n else self.recv.copy()
        self.native = lambda: self.comm.Allgather(self.send, self.recv)

    def _setup_alltoall(self, n):
        np, P = self.np, self.P
        self.send = np.concatenate([self._pattern(self.me * P + j, n) for j in range(P)]) if n else np.zeros(0, np.uint8)
        self.recv = np.zeros(P * n, np.uint8)
        self.want = np.concatenate([self._pattern(r * P + self.me, n) for r in range(P)]) if n else self.recv.copy()
        self.native = lambda: self.comm.Alltoall(self.send, self.recv)

    def _counts(self, i, n):
        return [n * ((i + j) % 3) // 2 for j in range(self.P)]

    def _setup_alltoallv(self, n):
        np, P, me = self.np, self.P, self.me
        self.scounts = self._counts(me, n)
        self.rcounts = [self._counts(r, n)[me] for r in range(P)]
        parts = [self._pattern(me * P + j, self.scounts[j]) for j in range(P)]
        self.send = np.concatenate(parts) if sum(self.scounts) else np.zeros(0, np.uint8)
        self.recv = np.zeros(sum(self.rcounts), np.uint8)
        want = [self._pattern(r * P + me, self.rcounts[r]) for r in range(P)]
        self.want = np.concatenate(want) if sum(self.rcounts) else self.recv.copy()
        self.native = lambda: self.comm.Alltoallv([self.send, self.scounts], [self.recv, self.rcounts])

    def _setup_allreduce(self, nbytes):
        np, MPI, P = self.np, self.MPI, self.P
        if self.op_name == "sum":
            count = nbytes // 8
            vals = lambda r: ((r + 1) * 1000 + np.arange(count) % 977).astype(np.float64)  # noqa: E731
            self.send, self.recv = vals(self.me), np.zeros(count)
            self.want = sum(vals(r) for r in range(P)) if count else self.recv.copy()
            self.op = MPI.SUM
        else:
            dtype = np.dtype([("a", np.int64), ("b", np.int64)])
            count = nbytes // 16
            def vals(r):
                v = np.zeros(count, dtype)
                v["a"] = (r * 7 + np.arange(count) * 3 + 2) % PRIME
                v["b"] = (r * 11 + np.arange(count) + 5) % PRIME
                return v
            self.send, self.recv = vals(self.me), np.zeros(count, dtype)
            want = vals(0)
            for r in range(1, P):
                x = vals(r)
                want["a"], want["b"] = want["a"] * x["a"] % PRIME, (want["a"] * x["b"] + want["b"]) % PRIME
            self.want = want
            self.op = _affine_op(MPI, np, dtype)
            from mpi4py.util import dtlib
            self.datatype = dtlib.from_numpy_dtype(dtype).Commit()
        self.size = self.send.nbytes
        if self.datatype is None:
            self.native = lambda: self.comm.Allreduce(self.send, self.recv, op=self.op)
        else:
            self.native = lambda: self.comm.Allreduce([self.send, self.datatype], [self.recv, self.datatype], op=self.op)

    def _setup_barrier(self, n):
        self.send = self.recv = self.want = None
        self.native = self.comm.Barrier

    def request(self, algorithm, params, mode):
        c = self.collective
        if c == "barrier":
            return cmpi.barrier_init(self.comm, algorithm, mode=mode, **params)
        if c == "allreduce":
            return cmpi.allreduce_init(self.comm, self.send, self.recv, self.op, algorithm, mode=mode, **params)
        if c == "alltoallv":
            return cmpi.alltoallv_init(self.comm, self.send, self.scounts, self.recv, self.rcounts, algorithm,
                                       mode=mode, **params)
        init = cmpi.allgather_init if c == "allgather" else cmpi.alltoall_init
        return init(self.comm, self.send, self.recv, algorithm, mode=mode, **params)

    def correct(self) -> bool:
        if self.recv is None:
            return True
        ok = bool(self.np.array_equal(self.recv, self.want))
        self.recv[...] = 0
        return ok

    def free(self):
        if self.op is not None and self.op != self.MPI.SUM:
            self.op.Free()
        if self.datatype is not None:
            self.datatype.Free()


# ------------------------------------------------------------------------------------------- timing
def _time(MPI, comm, fn, iters, warmup) -> float:
    for _ in range(warmup):
        fn()
    comm.Barrier()
    t0 = MPI.Wtime()
    for _ in range(iters):
        fn()
    return comm.allreduce((MPI.Wtime() - t0) / iters, op=MPI.MAX)


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
            row["collplan_s"] = _time(MPI, comm, lambda: (req.start(), req.wait()), iters, args.warmup)
            row["native_s"] = _time(MPI, comm, case.native, iters, args.warmup)
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
    MPI, _ = cmpi.backend()
    comm = MPI.COMM_WORLD
    P, me = comm.Get_size(), comm.Get_rank()
    from ..cli import _params
    params = _params(args.param)
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
                from ..cli import atomic_write
                atomic_write(args.json, text + "\n")
        if args.json != "-":
            _print_table(rows, header)
            for s in skipped:
                print(f"# skipped {s}")
    return 0 if all(r["ok"] for r in rows) else 1
