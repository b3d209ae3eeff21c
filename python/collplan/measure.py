"""Measuring collectives under mpirun: the data and checks of one call (`Case`), and the planner's `measure`
evaluator (`plan_measured`), used by `collplan run` and `collplan plan --evaluator measure`.

Timing follows src/collplan/runtime/mpi/timing.hpp (the loop runs in C++, so Python's per-call cost stays out of
the figures), the discipline of the standard MPI micro-benchmarks: untimed warm-up calls, then each call timed
alone with a barrier after it; a repetition's figure is the average over ranks of their mean per call. The planner's repetitions are interleaved across the candidates
(candidate 1, 2, ..., then again), so a burst of load on the machine hits all of them alike, and a candidate's
time is the best of its repetitions: interference from other processes only ever adds time, so the minimum is
the most repeatable figure on a shared machine (every repetition is kept in the plan's samples). Sizes as everywhere in collplan: allgather bytes per rank, alltoall bytes
per destination, allreduce the vector (float64 for sum/max/min; pairs of int64 for the non-commutative affine
composition), barrier none.
"""
from __future__ import annotations

import os
import sys

from . import mpi as cmpi
from ._core import CollplanError

PRIME = 1000003
DOUBLE_OPS = ("sum", "max", "min")
MEASURABLE_OPS = DOUBLE_OPS + ("noncommutative",)


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
        if self.op_name in DOUBLE_OPS:
            count = nbytes // 8
            vals = lambda r: ((r * 37 % 11 + 1) * 1000 + np.arange(count) % 977).astype(np.float64)  # noqa: E731
            self.send, self.recv = vals(self.me), np.zeros(count)
            fold = {"sum": np.add, "max": np.maximum, "min": np.minimum}[self.op_name]
            self.want = fold.reduce([vals(r) for r in range(P)]) if count else self.recv.copy()
            self.op = getattr(MPI, self.op_name.upper())
        elif self.op_name == "noncommutative":
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
        else:
            raise CollplanError(f"cannot measure allreduce with op '{self.op_name}' (allowed: "
                                f"{', '.join(MEASURABLE_OPS)})")
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
        if self.op is not None and self.op_name == "noncommutative":
            self.op.Free()
        if self.datatype is not None:
            self.datatype.Free()

    def time_native(self, iters: int, warmup: int, reps: int) -> list[float]:
        """The MPI library's own collective on these buffers, timed in C++ (timing.hpp)."""
        MPI, mod = cmpi.backend()
        if self.collective == "alltoallv":  # counts and displacements: timed from Python, same discipline
            return _time_python(MPI, self.comm, self.native, iters, warmup, reps)
        h = MPI._handleof
        send = None if self.send is None else self.send.ctypes.data
        recv = 0 if self.recv is None else self.recv.ctypes.data
        count = 0 if self.recv is None else self.recv.size
        dt = self.datatype if self.datatype is not None else (
            MPI._typedict[self.recv.dtype.char] if self.collective == "allreduce" else MPI.BYTE)
        op = self.op if self.op is not None else MPI.SUM
        return mod.time_native(h(self.comm), self.collective, send, recv, self.size, count, h(dt), h(op),
                               iters, warmup, reps)


def case_bytes(collective: str, P: int, size: int) -> int:
    """About the bytes one rank's Case holds at `size`: send and receive buffers, the expected result and the
    per-rank parts that build it."""
    if collective == "barrier":
        return 0
    return (P + 3) * size if collective == "allreduce" else (3 * P + 2) * size


def require_memory(MPI, comm, collective: str, sizes) -> None:
    """Refuse sizes whose buffers the ranks on this node cannot hold (at most half the physical memory), before
    anything is allocated; collective (every rank decides alike)."""
    from ._core import format_bytes
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    ranks_here = node.Get_size()
    node.Free()
    allowed = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    for n in sizes:
        per_rank = case_bytes(collective, comm.Get_size(), n)
        if per_rank * ranks_here > allowed:
            raise CollplanError(f"size {format_bytes(n)} is too large: {collective} at P={comm.Get_size()} needs about "
                                f"{per_rank / 2**30:.1f} GiB per rank, {ranks_here} rank(s) on this node (allowed: "
                                f"at most half the physical memory for all of them, {allowed / 2**30:.1f} GiB)")


def _time_python(MPI, comm, fn, iters: int, warmup: int, reps: int) -> list[float]:
    """timing.hpp's discipline from Python: each call timed alone, a barrier after it, the average over ranks."""
    for _ in range(warmup):
        fn()
        comm.Barrier()
    out = []
    wtime, barrier = MPI.Wtime, comm.Barrier
    for _ in range(reps):
        total = 0.0
        for _ in range(iters):
            t0 = wtime()
            fn()
            total += wtime() - t0
            barrier()
        out.append(comm.allreduce(total / iters, op=MPI.SUM) / comm.Get_size())
    return out


def time_request(comm, req, iters: int, warmup: int, reps: int) -> list[float]:
    """Slowest-rank mean seconds per start()+wait() of a collplan request, per repetition (collective)."""
    MPI, mod = cmpi.backend()
    return mod.time_request(MPI._handleof(comm), req._native, iters, warmup, reps)


def backend_as_programs_run():
    """cmpi.backend(), with MPI started the way an ordinary MPI program starts it (MPI_Init: MPI_THREAD_SINGLE)
    unless MPI is imported already or MPI4PY_RC_THREAD_LEVEL says otherwise. mpi4py asks for MPI_THREAD_MULTIPLE
    by default, and then the MPI library locks on every call (a small MPI_Allreduce at P = 2 under Open MPI:
    +15-30 %), so timings would not be those of the programs the wisdom is for."""
    if "mpi4py.MPI" not in sys.modules and "MPI4PY_RC_THREAD_LEVEL" not in os.environ:
        import mpi4py
        mpi4py.rc.thread_level = "single"
    return cmpi.backend()


# ------------------------------------------------------------------------------------------- the measure evaluator
def _kept(estimates: list[list[float]], j: int, prune: float, keep: int) -> list[int]:
    """Candidates worth measuring at size index j: estimated within `prune` times the best estimate, at most
    `keep` of them (prune <= 0: every candidate)."""
    order = sorted(range(len(estimates)), key=lambda i: estimates[i][j])
    if prune <= 0:
        return order
    best = estimates[order[0]][j]
    return [i for i in order if estimates[i][j] <= prune * best][:max(1, keep)]


def _iterations(timer, target_s: float, max_iters: int) -> int:
    """Calls per repetition so that one repetition lasts about target_s: like Python's timeit autorange, grow
    the count by 4 until a repetition lasts a quarter of the target (the growing runs also warm the caches and
    the MPI library's connections up). The decision rests on times averaged over the ranks, so every rank agrees."""
    iters = 1
    timer(1, 2, 1)  # warm-up: first-touch page faults, connection set-up
    while True:
        t = timer(iters, 0, 1)[0]
        if t * iters >= target_s / 4 or iters >= max_iters:
            return max(1, min(max_iters, int(target_s / max(t, 1e-9))))
        iters = min(max_iters, iters * 4)


def _measure_size(MPI, comm, plan, j: int, kept: list[int], reps: int, target_s: float, max_iters: int):
    """Best seconds per call over the repetitions (and the repetitions) of each kept candidate at plan.sizes[j]."""
    case = Case(MPI, comm, plan.collective, plan.sizes[j], plan.op or "sum")
    try:
        timers = {}
        for i in kept:
            c = plan.candidates[i]
            if c.algorithm == "native":
                timers[i] = lambda it, w, r: case.time_native(it, w, r)
                continue
            req = case.request(c.algorithm, c.param_dict, "auto")
            req.start()
            req.wait()
            if not comm.allreduce(case.correct(), op=MPI.LAND):
                raise CollplanError(f"{c.label()} computed a wrong {plan.collective} at {plan.sizes[j]} bytes")
            timers[i] = lambda it, w, r, req=req: time_request(comm, req, it, w, r)
        iters = {i: _iterations(timers[i], target_s, max_iters) for i in kept}
        samples = {i: [] for i in kept}
        for _ in range(reps):  # interleaved: load bursts hit every candidate alike
            for i in kept:
                samples[i] += timers[i](iters[i], 0, 1)
        return {i: (min(s), s) for i, s in samples.items()}
    finally:
        case.free()


def plan_measured(collective: str, machine: str, sizes="8B..1MiB", op: str = "sum", ranks: int | None = None,
                  prune: float = 3.0, keep: int = 6, reps: int = 5, target_s: float = 2e-3, max_iters: int = 1000,
                  native: bool = True, progress: bool = True):
    """The planner's measure evaluator, collective over MPI.COMM_WORLD (every rank returns the same Plan).

    Every candidate is first estimated on the machine's model; at each size only those within `prune` times
    the best estimate (at most `keep`) are run, plus the MPI library's own collective (`native`). Measured
    candidates are checked against a serial computation once before they are timed."""
    from .planner import Progress, candidate, price_estimate, setup, threshold_table
    MPI, _ = backend_as_programs_run()
    comm = MPI.COMM_WORLD
    P, me = comm.Get_size(), comm.Get_rank()
    if ranks is not None and ranks != P:
        raise CollplanError(f"--ranks {ranks} differs from the {P} ranks mpirun started (measure times this run)")
    if collective == "allreduce" and op not in MEASURABLE_OPS:
        raise CollplanError(f"cannot measure allreduce with op '{op}' (allowed: {', '.join(MEASURABLE_OPS)})")
    if reps < 1 or keep < 1 or target_s <= 0 or max_iters < 1:
        raise CollplanError(f"measure: reps {reps}, keep {keep}, target {target_s} s, max iters {max_iters} "
                            "(allowed: reps >= 1, keep >= 1, target > 0, max iters >= 1)")
    plan, scheds = setup(collective, P, None, machine, sizes, op, "measure")
    require_memory(MPI, comm, collective, plan.sizes)
    estimates = price_estimate(scheds, plan.sizes, plan.model, plan.topology, progress=False)
    plan.candidates = plan.candidates + ([candidate("native")] if native else [])
    plan.estimates = estimates + ([[None] * len(plan.sizes)] if native else [])
    plan.times = [[None] * len(plan.sizes) for _ in plan.candidates]
    plan.samples = [[None] * len(plan.sizes) for _ in plan.candidates]
    bar = Progress("measured sizes", len(plan.sizes), progress and me == 0)
    for j in range(len(plan.sizes)):
        kept = _kept(estimates, j, prune, keep) + ([len(plan.candidates) - 1] if native else [])
        for i, (best, s) in _measure_size(MPI, comm, plan, j, kept, reps, target_s, max_iters).items():
            plan.times[i][j], plan.samples[i][j] = best, s
        bar.step(j + 1)
    bar.done()
    plan.notes.append(f"measured under {cmpi.library_version(MPI)}: best of {reps} "
                      f"interleaved repetitions; pruned by the {plan.model.split(':')[0]} estimate"
                      + (f" (within {prune:g}x of the best, at most {keep})" if prune > 0 else " (none pruned)"))
    plan.ranges = threshold_table(plan)
    return plan
