"""Measuring collectives under mpirun: the data and checks of one call (`Case`), and the planner's `measure`
evaluator (`plan_measured`), used by `collplan run` and `collplan plan --evaluator measure`.

Timing follows src/collplan/measure/timing.hpp (the loop runs in C++, so Python's per-call cost stays out of
the figures), the discipline of the standard MPI micro-benchmarks: untimed warm-up calls, then each call timed
alone with a barrier after it; a repetition's figure is the average over ranks of their mean per call. The planner's repetitions are interleaved across the candidates
(candidate 1, 2, ..., then again), so a burst of load on the machine hits all of them alike, and a candidate's
time is the best of its repetitions: interference from other processes only ever adds time, so the minimum is
the most repeatable figure on a shared machine (every repetition is kept in the plan's samples). Sizes as
everywhere in collplan (docs/runtime.md, `collplan run`): allgather, gather and scatter bytes per rank, alltoall bytes
per destination, bcast the message, allreduce and reduce the vector, reduce_scatter_block each rank's result block
(float64 for sum/max/min; pairs of int64 for the non-commutative affine composition), allgatherv and
reduce_scatter the mean per rank (uneven counts, every third rank none), barrier none.
"""
from __future__ import annotations

import os
import sys

from . import _core
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
    """Buffers, the collplan request, the native call and the expected result of one (collective, size); `root` for
    the rooted collectives (buffers significant only at the root are None elsewhere). The buffers are set up per
    shape of collplan.mpi's table (`_setup_<shape>`), from the collective's descriptor and its layout."""

    def __init__(self, MPI, comm, collective: str, size: int, op: str, root: int = 0):
        import numpy as np

        self.np, self.MPI, self.comm = np, MPI, comm
        self.P, self.me = comm.Get_size(), comm.Get_rank()
        self.collective, self.size, self.op_name, self.op, self.datatype = collective, size, op, None, None
        self.spec = cmpi._SPECS[collective]
        self.rooted = self.spec.info["rooted"]
        self.root = cmpi._root(comm, root)
        self.mpi = getattr(comm, self.spec.info["mpi_name"][len("MPI_"):])  # mpi4py's blocking call, e.g. Allgather
        self.counts = self.displs = None  # allgatherv: bytes; reduce_scatter: elements
        self.scounts = self.rcounts = None  # alltoallv: bytes
        self.count = 0  # the reductions: elements of a result block
        self.keep_input = False  # bcast's root: the result is the message, kept between runs
        getattr(self, f"_setup_{self.spec.shape}")(size)

    def _pattern(self, key, n):
        """Byte i is (7 i + 131 key + 1) mod 251: one period of 251 bytes repeated (n bytes of memory, where the
        arithmetic on all n positions took 24 n in int64 temporaries)."""
        period = ((self.np.arange(251, dtype=self.np.int64) * 7 + key * 131 + 1) % 251).astype(self.np.uint8)
        return self.np.resize(period, n)

    def _concat(self, parts, n):
        return self.np.concatenate(parts) if n else self.np.zeros(0, self.np.uint8)

    def _setup_bytes(self, n):
        """n bytes per block; a buffer holds one block or one per rank (collective.hpp's layout), the side that holds
        one per rank of a rooted collective at the root only. Rank r's block for rank j is pattern r*P + j when r
        sends each rank its own block (alltoall, scatter), else pattern r (allgather, gather, bcast)."""
        P, me, root = self.P, self.me, self.root
        many_send, many_recv = cmpi._per_rank(self.spec, 0), cmpi._per_rank(self.spec, 1)

        def key(r, j):
            return r * P + j if many_send else r
        sources = range(P) if many_recv else [root]
        at = (root,) if self.rooted else ()
        want = self._concat([self._pattern(key(r, me), n) for r in sources], len(sources) * n)
        if self.spec.send_ix is None:  # bcast: one buffer, the message at the root
            self.send, self.want = None, want
            self.recv = want.copy() if me == root else self.np.zeros(n, self.np.uint8)
            self.keep_input = me == root
            self.native = lambda: self.mpi(self.recv, *at)
            return
        here = not self.rooted or me == root
        self.send = (self._concat([self._pattern(key(me, j), n) for j in range(P)], P * n) if many_send
                     else self._pattern(key(me, 0), n)) if here or not many_send else None
        self.recv = self.np.zeros(len(sources) * n, self.np.uint8) if here or not many_recv else None
        self.want = want if self.recv is not None else None
        self.native = lambda: self.mpi(self.send, self.recv, *at)

    def _counts(self, i, n):
        return [n * ((i + j) % 3) // 2 for j in range(self.P)]

    def _setup_alltoallv(self, n):
        np, P, me = self.np, self.P, self.me
        self.scounts = self._counts(me, n)
        self.rcounts = [self._counts(r, n)[me] for r in range(P)]
        self.send = self._concat([self._pattern(me * P + j, self.scounts[j]) for j in range(P)], sum(self.scounts))
        self.recv = np.zeros(sum(self.rcounts), np.uint8)
        self.want = self._concat([self._pattern(r * P + me, self.rcounts[r]) for r in range(P)], sum(self.rcounts))
        self.native = lambda: self.mpi([self.send, self.scounts], [self.recv, self.rcounts])

    def uneven(self, total: int) -> list[int]:
        """`total` units over the ranks in proportion to rank mod 3 (every third rank none; one rank: all)."""
        w = [j % 3 for j in range(self.P)] if self.P > 1 else [1]
        out = [total * x // sum(w) for x in w]
        out[max(j for j in range(self.P) if w[j])] += total - sum(out)
        return out

    def _setup_allgatherv(self, n):
        np = self.np
        self.counts = self.uneven(n * self.P)
        self.displs = [sum(self.counts[:j]) for j in range(self.P)]
        self.send = self._pattern(self.me, self.counts[self.me])
        self.recv = np.zeros(sum(self.counts), np.uint8)
        self.want = self._concat([self._pattern(j, c) for j, c in enumerate(self.counts)], sum(self.counts))
        self.native = lambda: self.mpi(self.send, [self.recv, self.counts, self.displs, self.MPI.BYTE])

    # ------------------------------------------------------------------------------------- reductions
    def _operands(self, nbytes: int):
        """(elements per `nbytes`, values(rank, count), the serial reduction of every rank's values(count)) for the
        operation: float64 for sum/max/min (integer-valued: exact in any order), pairs of int64 composed as affine
        maps in rank order for noncommutative. Sets op and datatype."""
        np, MPI = self.np, self.MPI
        if self.op_name in DOUBLE_OPS:
            def vals(r, count):  # (r*37 % 11 + 1) * 1000 + i % 977, computed in place (no int64 temporaries)
                v = np.arange(count, dtype=np.float64)
                np.fmod(v, 977, out=v)
                v += (r * 37 % 11 + 1) * 1000
                return v
            fold = {"sum": np.add, "max": np.maximum, "min": np.minimum}[self.op_name]
            self.op, item = getattr(MPI, self.op_name.upper()), 8
        elif self.op_name == "noncommutative":
            dtype = np.dtype([("a", np.int64), ("b", np.int64)])

            def vals(r, count):
                v = np.zeros(count, dtype)
                v["a"] = (r * 7 + np.arange(count) * 3 + 2) % PRIME
                v["b"] = (r * 11 + np.arange(count) + 5) % PRIME
                return v

            def fold(x, y):  # x o y
                out = np.zeros(len(x), dtype)
                out["a"], out["b"] = x["a"] * y["a"] % PRIME, (x["a"] * y["b"] + x["b"]) % PRIME
                return out
            self.op, item = _affine_op(MPI, np, dtype), 16
            from mpi4py.util import dtlib
            self.datatype = dtlib.from_numpy_dtype(dtype).Commit()
        else:
            raise CollplanError(f"cannot measure {self.collective} with op '{self.op_name}' (allowed: "
                                f"{', '.join(MEASURABLE_OPS)})")

        def total(count):  # one rank's operand at a time: memory of two vectors, whatever P
            want = vals(0, count)
            for r in range(1, self.P):
                want = fold(want, vals(r, count))
            return want
        return nbytes // item, vals, total

    def _typed(self, buf):
        return buf if buf is None or self.datatype is None else [buf, self.datatype]

    def _setup_reduction(self, nbytes):
        """A result block of nbytes (whole elements); sendbuf holds one block or one per rank (collective.hpp's
        layout: rank j's result is the reduction of every rank's block j); a rooted result at the root only."""
        count, vals, total = self._operands(nbytes)
        blocks = self.P if cmpi._per_rank(self.spec, 0) else 1
        k = self.me if blocks > 1 else 0
        here = not self.rooted or self.me == self.root
        self.send, self.count = vals(self.me, blocks * count), count
        self.recv = self.np.zeros_like(self.send[:count]) if here else None
        self.want = total(blocks * count)[k * count:(k + 1) * count].copy() if here else None  # not a view of P
        self.size = count * self.send.itemsize
        at = (self.root,) if self.rooted else ()
        self.native = lambda: self.mpi(self._typed(self.send), self._typed(self.recv), self.op, *at)

    def _setup_reduce_scatter(self, nbytes):
        count, vals, total = self._operands(nbytes)
        self.counts = self.uneven(count * self.P)
        off = sum(self.counts[:self.me])
        self.send = vals(self.me, sum(self.counts))
        self.recv = self.np.zeros_like(self.send[:self.counts[self.me]])
        self.want = total(sum(self.counts))[off:off + self.counts[self.me]].copy()
        self.size = count * self.send.itemsize
        self.native = lambda: self.mpi(self._typed(self.send), self._typed(self.recv), self.counts, self.op)

    def _setup_barrier(self, n):
        self.send = self.recv = self.want = None
        self.native = self.mpi

    def request(self, algorithm, params, mode):
        """The collplan request of this case (not started): the collective's `_init` with this case's buffers for
        its parameters (collplan.mpi's table)."""
        args = {"sendbuf": self.send, "recvbuf": self.recv, "buf": self.recv, "op": self.op, "root": self.root,
                "sendcounts": self.scounts, "recvcounts": self.counts if self.rcounts is None else self.rcounts,
                "displs": None}
        init = getattr(cmpi, f"{self.collective}_init")
        return init(self.comm, *[args[p] for p in self.spec.params], algorithm, mode=mode, **params)

    def correct(self) -> bool:
        """This rank's result equals the serial computation (ranks without a result: True); the result is cleared
        for the next run (bcast's root keeps its message)."""
        if self.recv is None or self.want is None:
            return True
        ok = bool(self.np.array_equal(self.recv, self.want))
        if not self.keep_input:
            self.recv[...] = 0
        return ok

    def free(self):
        """The MPI handles, and the buffers now rather than at the next cyclic collection (self.native refers to
        self): `run` over every algorithm at 64 MiB held each algorithm's buffers until the end, 6x the memory
        case_bytes estimates."""
        if self.op is not None and self.op_name == "noncommutative":
            self.op.Free()
        if self.datatype is not None:
            self.datatype.Free()
        self.send = self.recv = self.want = self.native = None

    def time_native(self, iters: int, warmup: int, reps: int) -> list[float]:
        """The MPI library's own collective on these buffers, timed in C++ (timing.hpp)."""
        MPI, mod = cmpi.backend()
        if self.spec.shape == "alltoallv":  # a count matrix: timed from Python, same discipline
            return _time_python(MPI, self.comm, self.native, iters, warmup, reps)
        h = MPI._handleof
        ref = self.send if self.send is not None else self.recv
        dt = self.datatype if self.datatype is not None else (
            MPI._typedict[ref.dtype.char] if self.spec.info["reduction"] else MPI.BYTE)
        op = self.op if self.op is not None else MPI.SUM
        return mod.time_native(h(self.comm), self.collective, cmpi._addr(self.send, 0), cmpi._addr(self.recv, 0),
                               self.size, self.count, h(dt), h(op), iters, warmup, reps, self.root,
                               self.counts or [], self.displs or [])


REDUCTIONS = tuple(c["name"] for c in _core.collectives() if c["reduction"])


def case_bytes(collective: str, P: int, size: int) -> int:
    """An upper bound on the bytes one rank adds at `size`: the Case's buffers (send, receive, expected result) and
    the transients that build them, the executor's staging and scratch, and the MPI library's own temporaries.
    The factors bound the peak resident memory measured at P = 2 and 4 over every algorithm at 16 MiB (measured
    / bound: 0.6-1.0; tests/python/test_mpi.py measures it again); a reduction's expected result folds one
    rank's operand at a time, so it holds three vectors of its send buffer's length at most."""
    factor = {"barrier": 0, "bcast": 4, "allreduce": 12, "reduce": 12, "allgather": 4 * P + 2,
              "allgatherv": 5 * P + 2, "gather": 4 * P + 1, "reduce_scatter_block": 6 * P + 4,
              "reduce_scatter": 6 * P + 4, "alltoall": 6 * P + 4}
    return factor.get(collective, 3 * P + 2) * size


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


def _measure_size(MPI, comm, plan, j: int, kept: list[int], reps: int, target_s: float, max_iters: int,
                  refused: dict[int, str]):
    """Best seconds per call over the repetitions (and the repetitions) of each kept candidate at plan.sizes[j].
    A candidate the runtime refuses for the measured call (e.g. a schedule that is not rank-consistent, on the
    doubles a max is measured with: the same answer on every rank) is left out, its reason in refused[i]."""
    case = Case(MPI, comm, plan.collective, plan.sizes[j], plan.op or "sum", plan.root)
    try:
        timers = {}
        for i in kept:
            c = plan.candidates[i]
            if c.algorithm == "native":
                timers[i] = lambda it, w, r: case.time_native(it, w, r)
                continue
            try:
                req = case.request(c.algorithm, c.param_dict, "auto")
            except CollplanError as e:
                refused[i] = str(e)
                continue
            req.start()
            req.wait()
            if not comm.allreduce(case.correct(), op=MPI.LAND):
                raise CollplanError(f"{c.label()} computed a wrong {plan.collective} at {plan.sizes[j]} bytes")
            timers[i] = lambda it, w, r, req=req: time_request(comm, req, it, w, r)
        iters = {i: _iterations(timer, target_s, max_iters) for i, timer in timers.items()}
        samples = {i: [] for i in timers}
        for _ in range(reps):  # interleaved: load bursts hit every candidate alike
            for i, timer in timers.items():
                samples[i] += timer(iters[i], 0, 1)
        return {i: (min(s), s) for i, s in samples.items()}
    finally:
        case.free()


def plan_measured(collective: str, machine: str, sizes="8B..1MiB", op: str = "sum", ranks: int | None = None,
                  root: int = 0, prune: float = 3.0, keep: int = 6, reps: int = 5, target_s: float = 2e-3, max_iters: int = 1000,
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
    if collective in REDUCTIONS and op not in MEASURABLE_OPS:
        raise CollplanError(f"cannot measure {collective} with op '{op}' (allowed: {', '.join(MEASURABLE_OPS)})")
    if reps < 1 or keep < 1 or target_s <= 0 or max_iters < 1:
        raise CollplanError(f"measure: reps {reps}, keep {keep}, target {target_s} s, max iters {max_iters} "
                            "(allowed: reps >= 1, keep >= 1, target > 0, max iters >= 1)")
    plan, scheds = setup(collective, P, None, machine, sizes, op, "measure", root=root)
    require_memory(MPI, comm, collective, plan.sizes)
    estimates = price_estimate(scheds, plan.sizes, plan.model, plan.topology, progress=False)
    plan.candidates = plan.candidates + ([candidate("native")] if native else [])
    plan.estimates = estimates + ([[None] * len(plan.sizes)] if native else [])
    plan.times = [[None] * len(plan.sizes) for _ in plan.candidates]
    plan.samples = [[None] * len(plan.sizes) for _ in plan.candidates]
    bar = Progress("measured sizes", len(plan.sizes), progress and me == 0)
    refused: dict[int, str] = {}
    for j in range(len(plan.sizes)):
        kept = _kept(estimates, j, prune, keep) + ([len(plan.candidates) - 1] if native else [])
        for i, (best, s) in _measure_size(MPI, comm, plan, j, kept, reps, target_s, max_iters, refused).items():
            plan.times[i][j], plan.samples[i][j] = best, s
        bar.step(j + 1)
    for i, why in sorted(refused.items()):  # declined, as the candidates loop declines what does not apply
        plan.declined.append({"algorithm": plan.candidates[i].label(), "reason": why})
    bar.done()
    plan.notes.append(f"measured under {cmpi.library_version(MPI)}: best of {reps} "
                      f"interleaved repetitions; pruned by the {plan.model.split(':')[0]} estimate"
                      + (f" (within {prune:g}x of the best, at most {keep})" if prune > 0 else " (none pruned)"))
    plan.ranges = threshold_table(plan)
    return plan
