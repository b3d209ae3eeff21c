"""The planner: which algorithm, with which parameters, for each message size of a collective on a machine.

Like FFTW's planner: every registered generator is asked whether it applies and for its candidate parameter sets
(the registry's `candidates` hook: n for the dissemination algorithms, (a, b, k) for circgos/torgos/cubgos, the
multiphase partitions, the Bruck and recursive-exchange radix); a generator that does not apply declines with its
reason. One evaluator prices every candidate at every size -- `estimate` (the analytic critical path, fast),
`simulate` (one of the simulators) or `measure` (real runs under mpirun, python/collplan/measure.py) -- and the
winners form a threshold table: size ranges, each with its winner, the runner-up and the margin between them.
Wisdom files (docs/runtime.md) record the table for the PMPI library and for ``collplan.mpi``'s
``algorithm="auto"``. docs/planner.md has the details and the evaluation.
"""
from __future__ import annotations

import json
import math
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import _core
from ._core import CollplanError
from .api import (COLLECTIVES, _ranks_and_topology, algorithms, describe, integer, parse_size_any, resolve_name, schedule,
                  unsupported_op)
from .limits import max_memory as limit_of
from .machines import Machine, resolve_machine
from .progress import Progress
from .sweep import Sweep

EVALUATORS = ("estimate", "simulate", "measure")
# From the collective descriptors (api.COLLECTIVES: src/collplan/schedule/collective.hpp), in the core's order.
ROOTED = tuple(c["name"] for c in COLLECTIVES if c["rooted"])
REDUCTIONS = tuple(c["name"] for c in COLLECTIVES if c["reduction"])
PER_RANK_COUNTS = tuple(c["name"] for c in COLLECTIVES if c["counts"] == "per_rank")  # compared with even counts
PLANNED = tuple(c["name"] for c in COLLECTIVES if c["counts"] != "matrix")  # not those whose schedules follow a matrix
NATIVE = "native"
NOISE_FLOOR = 0.05  # a measured schedule replaces native only when it is faster by more than this plus the noise


@dataclass(frozen=True)
class Candidate:
    """One algorithm with explicit parameters (or the MPI library's own collective, algorithm "native")."""
    algorithm: str
    params: tuple = ()  # sorted (name, value) pairs

    @property
    def param_dict(self) -> dict:
        return dict(self.params)

    def label(self) -> str:
        short = self.algorithm.split("/", 1)[-1]
        return short + ("[" + ",".join(f"{k}={v}" for k, v in self.params) + "]" if self.params else "")


def candidate(algorithm: str, params: dict | None = None) -> Candidate:
    return Candidate(algorithm, tuple(sorted((str(k), str(v)) for k, v in (params or {}).items())))


@dataclass
class Range:
    """Sizes [min_bytes, max_bytes) won by `winner`; max_bytes None = unbounded."""
    min_bytes: int
    max_bytes: int | None
    winner: Candidate
    winner_s: list[float]            # the winner's time at each planned size in the range
    runner_up: Candidate | None
    margin: tuple[float, float]       # (min, max) over the range's sizes of runner-up time / winner time - 1
    sizes: list[int] = field(default_factory=list)


@dataclass
class Plan:
    collective: str
    ranks: int
    topology: str
    machine: str
    model: str
    op: str
    evaluator: str
    sizes: list[int]
    candidates: list[Candidate]
    times: list[list[float | None]]   # [candidate][size]; None = not priced (pruned, or failed)
    declined: list[dict]
    ranges: list[Range] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    estimates: list[list[float | None]] | None = None   # measure: the model's estimate of each candidate
    samples: list[list[list[float] | None]] | None = None  # measure: every repetition
    root: int = 0                                         # bcast, reduce, gather, scatter
    bounds: list[list[float | None]] | None = None        # estimate above PRUNE_ABOVE: a lower bound where not walked

    def best(self, j: int) -> int:
        """Index of the fastest candidate at size index j -- except that a measured plan keeps the MPI library's
        own collective unless a schedule beat it by more than the noise margin (native_margin)."""
        priced = [(t[j], i) for i, t in enumerate(self.times) if t[j] is not None]
        if not priced:
            raise CollplanError(f"no candidate could be priced at {self.sizes[j]} bytes")
        i = min(priced)[1]
        nat = next((k for k, c in enumerate(self.candidates) if c.algorithm == NATIVE), None)
        if nat is None or i == nat or self.times[nat][j] is None:
            return i
        return i if self.times[i][j] < self.times[nat][j] * (1 - self.native_margin(j)) else nat

    def native_margin(self, j: int) -> float:
        """How much faster than native a schedule must measure at size index j to be chosen: NOISE_FLOOR plus the
        spread of native's own repetitions there (median over best - 1), the run-to-run noise of this run."""
        nat = next((k for k, c in enumerate(self.candidates) if c.algorithm == NATIVE), None)
        if nat is None or not self.samples or not self.samples[nat][j]:
            return NOISE_FLOOR if nat is not None else 0.0
        s = sorted(self.samples[nat][j])
        return NOISE_FLOOR + (s[len(s) // 2] / s[0] - 1 if s[0] > 0 else 0.0)

    def choice(self, size) -> Candidate:
        """The winner at `size` (bytes, or a size such as "4KiB")."""
        size = parse_size_any(size)
        for r in self.ranges:
            if size >= r.min_bytes and (r.max_bytes is None or size < r.max_bytes):
                return r.winner
        raise CollplanError(f"size {size} is outside the plan")

    def as_dict(self) -> dict:
        def cand(c):
            return None if c is None else {"algorithm": c.algorithm, "params": c.param_dict, "label": c.label()}
        return {
            "collective": self.collective, "ranks": self.ranks, "topology": self.topology, "machine": self.machine,
            "model": self.model, "op": self.op, **({"root": self.root} if self.collective in ROOTED else {}),
            "evaluator": self.evaluator, "sizes": self.sizes,
            "ranges": [{"min_bytes": r.min_bytes, "max_bytes": r.max_bytes, "winner": cand(r.winner),
                        "winner_s": r.winner_s, "runner_up": cand(r.runner_up), "margin_min": r.margin[0],
                        "margin_max": r.margin[1], "sizes": r.sizes} for r in self.ranges],
            "candidates": [dict(cand(c), times_s=t, **({} if self.estimates is None else
                                                        {"estimate_s": self.estimates[i], "samples_s": self.samples[i]}),
                                **({} if self.bounds is None else {"lower_bound_s": self.bounds[i]}))
                           for i, (c, t) in enumerate(zip(self.candidates, self.times))],
            "declined": self.declined, "notes": self.notes}


@dataclass
class Deferred:
    """A whole candidate not generated yet (the estimate above PRUNE_ABOVE ranks: candidates(defer=True)): a lower
    bound of its estimate at each planned size (_deferred) may rule it out everywhere (price_estimate_pruned), and
    then its schedule is never built."""
    name: str
    params: dict
    bounds: list[float]
    problem: "Problem"
    ops: int                  # about its total ops: the probed ranks' mean times P - 1, plus the root's
    probe: _core.Schedule     # one rank's program: what the schedule says of itself (its operations, ...)
    whole = True

    def make(self, max_memory=None) -> _core.Schedule:
        p = self.problem
        return schedule(self.name, ranks=p.ranks, topology=p.topology, params=self.params, counts=p.counts,
                        root=p.root, max_memory=max_memory)


# ------------------------------------------------------------------------------------------- the problem
@dataclass
class Problem:
    """One collective problem, resolved once where a command or call starts (resolve_problem), then passed on."""
    collective: str
    ranks: int
    topology: str                            # canonical spec (full:P when none was given)
    algorithm: str = "all"                   # a registry name, or "all": every algorithm of the collective
    params: dict = field(default_factory=dict)  # parameters of every candidate (NAME: VALUE strings)
    root: int = 0                            # bcast, reduce, gather, scatter; 0 elsewhere
    op: str = "sum"                          # the reductions' operation ("": any)
    counts: list[int] | None = None          # allgatherv, reduce_scatter: units per rank
    matrix: list | None = None               # alltoallv: P x P units, rows = senders


def check_reduction_sizes(collective: str, sizes) -> None:
    """The reductions plan and run vectors of doubles: a size that is not a multiple of 8 bytes is refused (it would
    be cut to whole elements without a word)."""
    if collective in REDUCTIONS and any(n % 8 for n in sizes):
        raise CollplanError(f"{collective} sizes must be multiples of 8 bytes (vectors of doubles), got "
                            f"{next(n for n in sizes if n % 8)}")


def resolve_problem(collective: str, ranks: int | None = None, topology: str | None = None, algorithm: str = "all",
                    params: dict | None = None, root: int = 0, op: str = "sum", counts=None, matrix=None) -> Problem:
    """A Problem, checked: P and the topology (one of them at least), the root (a rank of P for the rooted
    collectives, 0 elsewhere). allgatherv and reduce_scatter compared over every algorithm without counts get one
    unit per rank (a size is then the bytes of each rank's part, as the planner compares them)."""
    info = describe(collective)
    ranks, topology = _ranks_and_topology(ranks, topology)
    if info["rooted"] and (integer(root) is None or not 0 <= root < ranks):
        raise CollplanError(f"root {root!r} is not a rank of P={ranks} (allowed: 0..{ranks - 1})")
    root = integer(root) if info["rooted"] else root
    if not info["rooted"] and root != 0:
        raise CollplanError(f"root {root!r} is invalid for {collective} (allowed: 0; it has no root)")
    if counts is None and algorithm == "all" and info["counts"] == "per_rank":
        counts = [1] * ranks
    return Problem(collective, ranks, topology, algorithm, {str(k): str(v) for k, v in (params or {}).items()}, root,
                   op, None if counts is None else list(counts), matrix)


# ------------------------------------------------------------------------------------------- candidates
def candidates(problem: Problem, machine: Machine | None, sizes, max_memory=None, bar: Progress | None = None,
               runtime=None, one_rank: bool = False,
               defer: bool = False) -> tuple[list[tuple[Candidate, _core.Schedule | Deferred | None]], list[dict]]:
    """The one search loop of estimate, simulate, plan and run (FFTW's planner): ([(candidate, its schedule)],
    declined [{algorithm, reason}]).

    With algorithm "all", every registered algorithm of the collective is asked whether it applies, then generated
    with each parameter set it proposes for the machine's model and the size range (the registry's candidates
    hook; without a machine, the problem's params); one whose generation fails, or whose schedule cannot compute
    the problem's operation ("" = any), declines with the generator's reason. A named algorithm is generated with
    the problem's params and its errors are raised (its operation is the caller's to check). The schedules
    together stay within max_memory. `runtime(name) -> reason` is `collplan run`'s check instead: the MPI runtime
    builds the schedule itself (and picks the topology), so its candidates carry no schedule (None). `bar` steps
    once per algorithm. `one_rank` (only the estimate will price them): a schedule whose algorithm declares a rank
    symmetry that the machine's model and topology keep is rank 0's program alone, which the estimate walks for
    every rank with the same result (schedule/symmetry.hpp): one rank's ops instead of P times them. `defer`
    (the pruned estimate above PRUNE_ABOVE ranks: price_estimate_pruned): a candidate that would be generated
    whole is not, but left as a Deferred with its bounds at `sizes` (_deferred)."""
    every = problem.algorithm == "all"
    if every and runtime is None and describe(problem.collective)["counts"] == "matrix" and problem.matrix is None:
        raise CollplanError(f"{problem.collective} needs its communication matrix to compare algorithms "
                            "(a P x P matrix: --matrix FILE|SPEC)")
    names = [a["name"] for a in algorithms(problem.collective)] if every else \
        [resolve_name(problem.algorithm, problem.collective)]
    P, topo = problem.ranks, problem.topology
    limit, used = limit_of(max_memory), 0
    out, declined = [], []
    for name in names:
        if bar is not None:
            bar.step()
        why = "" if not every else runtime(name) if runtime is not None else _core.applies(name, P, topo, {})
        if why:
            declined.append({"algorithm": name, "reason": why})
            continue
        if runtime is not None:
            out.append((candidate(name, problem.params), None))
            continue
        sets = _core.candidates(name, P, topo, machine.model, float(min(sizes)), float(max(sizes))) \
            if every and machine is not None else [problem.params]
        for params in sets:
            try:
                s = _symmetric(name, problem, params, machine) if one_rank and machine is not None else None
                if s is None and defer and P > PRUNE_ABOVE and machine is not None and problem.matrix is None:
                    s = _deferred(name, problem, params, machine, sizes)
                s = s or schedule(name, ranks=P, topology=topo, params=params, matrix=problem.matrix,
                                  counts=problem.counts, root=problem.root, max_memory=max(1, limit - used))
            except _core.MemoryLimitError as e:
                held = f" (with {_core.approx_bytes(used)} held by the {len(out)} candidates before it)" if out else ""
                if not every:
                    raise _core.MemoryLimitError(f"{e}{held}") from None
                # one candidate that does not fit is declined like any other; the rest of the table stands
                declined.append({"algorithm": candidate(name, params).label(), "reason": f"{e}{held}"})
                continue
            except CollplanError as e:  # a parameter set that does not apply here
                if not every:
                    raise
                declined.append({"algorithm": candidate(name, params).label(), "reason": str(e)})
                continue
            why = unsupported_op(s.probe if isinstance(s, Deferred) else s, problem.op) \
                if every and problem.op and problem.collective in REDUCTIONS else ""
            if why:  # the parameter sets after it are variants of the same kind (e.g. reduce/binomial relative=1)
                kept = any(c.algorithm == name for c, _ in out)
                declined.append({"algorithm": candidate(name, params).label() if kept else name, "reason": why})
                break
            out.append((candidate(name, params), s))
            used += 0 if isinstance(s, Deferred) else s.memory_bytes
    if not out:
        raise CollplanError(f"no {problem.collective} algorithm applies to P={P} on {topo}: " +
                            "; ".join(f"{d['algorithm']}: {d['reason']}" for d in declined))
    return out, declined


def _deferred(name: str, problem: Problem, params: dict, machine: Machine, sizes) -> Deferred:
    """A whole candidate not generated yet: bounded at every size by the programs of ranks 0, P/2, P-1 and the root,
    each generated alone (the walk ends no sooner than any of them: _core.estimate_lower_bounds), and by its
    algorithm's closed form where it has one (Algorithm::bound)."""
    P, fs = problem.ranks, [float(n) for n in sizes]
    bound, ops, probe = [0.0] * len(sizes), {}, None
    for r in sorted({0, P // 2, P - 1, problem.root}):
        probe = schedule(name, ranks=P, topology=problem.topology, params=params, counts=problem.counts,
                         root=problem.root, only_rank=r)
        ops[r] = probe.total_ops
        bound = [max(a, b) for a, b in zip(bound, _core.estimate_lower_bounds(probe, problem.topology,
                                                                                machine.model, fs))]
    closed = _core.algorithm_bounds(name, P, problem.topology, {str(k): str(v) for k, v in params.items()},
                                    problem.counts or [], problem.root, machine.model, fs)
    bound = [max(a, b) for a, b in zip(bound, closed or bound)]
    rest = [n for r, n in ops.items() if r != problem.root]  # the root (rank 0 if none) counted once
    return Deferred(name, params, bound, problem, round((P - 1) * sum(rest) / len(rest)) + ops[problem.root], probe)


def _symmetric(name: str, problem: Problem, params: dict, machine: Machine) -> _core.Schedule | None:
    """Rank 0's program of `name` when it stands for every rank in the machine's estimate, else None."""
    if problem.ranks < 2 or problem.matrix is not None:
        return None
    s = schedule(name, ranks=problem.ranks, topology=problem.topology, params=params, counts=problem.counts,
                 root=problem.root, only_rank=0)
    ok = s.symmetry != "none" and not _core.symmetric_estimate_refusal(s.symmetry, problem.topology, machine.model)
    return s if ok else None


# ------------------------------------------------------------------------------------------- evaluators
class Walks:
    """The estimate walks of one plan: each schedule's partners are matched once (a _core.Estimator, made when the
    schedule is first walked and kept), however many sizes and crossover steps walk it afterwards. Matching is
    about as long as a walk, and above PRUNE_ABOVE a schedule is walked size by size. Threads may share it."""

    def __init__(self, topology: str, model: str, max_memory=None):
        self.topology, self.model, self.limit = topology, model, limit_of(max_memory)
        self._made: dict[int, _core.Estimator] = {}
        self._lock = threading.Lock()

    def __call__(self, sched: _core.Schedule, sizes, threads: int = 0) -> list[float]:
        with self._lock:  # made once, even when two sizes' threads need it at once
            est = self._made.get(id(sched))
            if est is None:
                est = self._made[id(sched)] = _core.Estimator(sched, self.topology, self.model, self.limit)
        return est.estimate([float(n) for n in sizes], self.limit, threads)


def price_estimate(scheds, sizes, model: str, topology: str, progress: bool = True,
                   max_memory=None, sweep: Sweep | None = None) -> list[list[float]]:
    """Every candidate's estimate at every size. Under mpirun (sweep) the (candidate, size) estimates are split
    over the ranks: one walk per size either way, and the largest candidate (the ring, at large P) spreads too."""
    limit, sweep, k = limit_of(max_memory), sweep or Sweep(), len(sizes)
    if sweep.size == 1:
        with Progress("candidates estimated", len(scheds), progress) as bar:
            return sweep.run(len(scheds), lambda i: list(_core.estimate(scheds[i], topology, model,
                                                                        [float(n) for n in sizes], limit)), bar.step)
    mine = len(sweep.mine(len(scheds) * k))
    with Progress(f"estimates (this rank's {mine} of {len(scheds) * k})", mine, progress and sweep.rank == 0) as bar:
        flat = sweep.run(len(scheds) * k, lambda x: _core.estimate(scheds[x // k], topology, model,
                                                                    [float(sizes[x % k])], limit)[0], bar.step)
    return [flat[i * k:(i + 1) * k] for i in range(len(scheds))]


# Above this P the estimate evaluator walks a whole (non-symmetric) schedule with many ops only at the sizes where
# it can still be the winner or the runner-up: see price_estimate_pruned. At or below it every candidate is walked
# at every size (the reference, and what --all-estimates asks for at any P).
PRUNE_ABOVE = 1024


def price_estimate_pruned(scheds, sizes, model: str, topology: str, progress: bool = True, max_memory=None,
                          sweep: Sweep | None = None, walks: Walks | None = None) -> tuple[list, list, dict[int, str]]:
    """(times, bounds, too_big): every candidate's estimate at the sizes where it can place first or second, None elsewhere,
    where bounds holds the lower bound that ruled it out. First the candidates that are cheap to walk are walked at
    every size: those priced from rank 0's program alone, those of at most 8 ops per rank (trees, linear, one-
    segment chains) and, whatever their size, the two with the fewest ops. Every other candidate has a lower bound
    at each size, as a Deferred (not generated yet: candidates(defer=True)): that of a few of its ranks' programs
    (_core.estimate_lower_bounds: each rank's own port, CPU and group times, model/estimate.hpp) and its
    algorithm's closed form. Then, size by size, best first: the candidate of the lowest bound is walked while that
    bound is at most the second-best time walked so far; the others could only come behind both. A Deferred is
    generated (in place in `scheds`) when a size first needs its walk; one that exceeds the memory limit is left
    out (too_big: candidate index -> the error). Each size's walks depend on the values alone, so threads (one process) or mpirun's ranks (sweep) may take the sizes in any order: the plan is the
    same."""
    sweep, k, limit = sweep or Sweep(), len(sizes), limit_of(max_memory)
    walk = walks or Walks(topology, model, max_memory)
    ops = [s.ops if isinstance(s, Deferred) else s.total_ops for s in scheds]
    ranks = [s.problem.ranks if isinstance(s, Deferred) else s.ranks for s in scheds]
    fewest = set(sorted(range(len(scheds)), key=lambda i: (ops[i], i))[:2])
    first = [i for i, s in enumerate(scheds) if not s.whole or ops[i] <= 8 * ranks[i] or i in fewest]
    too_big: dict[int, str] = {}  # a Deferred whose schedule exceeds the memory limit: not priced, as before
    lock = threading.Lock()

    def made_schedule(i: int) -> _core.Schedule | None:
        with lock:  # sizes on threads may need it at once: generated once
            if isinstance(scheds[i], Deferred) and i not in too_big:
                try:
                    scheds[i] = scheds[i].make(limit)
                except _core.MemoryLimitError as e:
                    too_big[i] = str(e)
            return None if i in too_big else scheds[i]
    first = [i for i in first if made_schedule(i) is not None]
    others = [i for i in range(len(scheds)) if i not in first and i not in too_big]
    times: list[list[float | None]] = [[None] * k for _ in scheds]
    for i, row in zip(first, price_estimate([scheds[i] for i in first], sizes, model, topology, progress,
                                            max_memory, sweep)):
        times[i] = row
    lower = {i: scheds[i].bounds for i in others}  # every whole candidate is a Deferred (candidates(defer=True))

    stop = threading.Event()  # the main thread was interrupted: the threads start no further walk

    def walks_at(z: int) -> dict[int, float]:
        walked = sorted(times[i][z] for i in first)[:2]
        out = {}
        for b, i in sorted((lower[i][z], i) for i in others):
            if (len(walked) == 2 and b > walked[1]) or stop.is_set():
                break  # every later bound is at least b: behind the two best
            if (s := made_schedule(i)) is not None:
                out[i] = walk(s, [sizes[z]], threads=1)[0]
                walked = sorted(walked + [out[i]])[:2]
        return out
    mine = len(sweep.mine(k))
    what = "the other candidates, size by size, where their bounds can place" + (
        f" (this rank's {mine} of {k} sizes)" if sweep.size > 1 else "")
    with Progress(what, mine, progress and sweep.rank == 0) as bar:
        if sweep.size == 1:  # the walks release the GIL: the sizes on threads
            from concurrent.futures import ThreadPoolExecutor
            pool = ThreadPoolExecutor(max(1, min(k, os.cpu_count() or 1)))
            try:
                found = list(pool.map(lambda z: (walks_at(z), bar.step())[0], range(k)))
            except BaseException:  # Ctrl-C (only this thread sees it): the walks under way end, no other starts
                stop.set()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown()
        else:
            found = sweep.run(k, walks_at, bar.step)
    bounds: list[list[float | None]] = [[None] * k for _ in scheds]
    for z, out in enumerate(found):
        for i in others:
            if i in out:
                times[i][z] = out[i]
            elif i not in too_big:
                bounds[i][z] = lower[i][z]
    for i in others:  # under mpirun another rank may have walked it: every rank holds the winners' schedules
        if any(t is not None for t in times[i]):
            made_schedule(i)
    return times, bounds, too_big


def price_simulate(scheds, sizes, machine: str | Machine, fidelity: str, topology: str, progress: bool = True,
                   max_memory=None, sweep: Sweep | None = None):
    """Every candidate simulated at every size; under mpirun (sweep) the (candidate, size) runs are split."""
    from .sim import simulate
    sweep, k = sweep or Sweep(), len(sizes)
    mine = len(sweep.mine(len(scheds) * k))
    label = f"simulated ({fidelity})" + (f", this rank's {mine} of {len(scheds) * k}" if sweep.size > 1 else "")
    with Progress(label, mine, progress and sweep.rank == 0) as bar:
        flat = sweep.run(len(scheds) * k, lambda x: simulate(
            scheds[x // k], machine=machine, fidelity=fidelity, size=sizes[x % k], topology=topology,
            max_memory=max_memory).time_s, bar.step)
    return [flat[i * k:(i + 1) * k] for i in range(len(scheds))]


# ------------------------------------------------------------------------------------------- thresholds
def _crossover(lo: int, hi: int, slower_at_hi, gap=None) -> int:
    """Smallest m in (lo, hi] where the later winner is at least as fast (slower_at_hi(m) is False), by bisection.
    With gap(m) (the later winner's time less the earlier's: > 0 where it is slower), by regula falsi instead: the
    next point is where the gap, taken as linear between the bracket's ends, reaches 0 -- it is (piecewise)
    linear in m, so two or three walks find the crossover that bisection finds in log2(hi - lo) -- and a halving
    follows any step that did not halve the bracket, so it never takes more than twice bisection's steps. Both
    keep a bracket with the later winner slower at lo and not at hi, and agree where the gap changes sign once."""
    if gap is None:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if slower_at_hi(mid):
                lo = mid
            else:
                hi = mid
        return hi
    g_lo, g_hi, halve = gap(lo), gap(hi), False
    while hi - lo > 1:
        if halve or not g_lo > 0 >= g_hi:
            mid = (lo + hi) // 2
        else:
            mid = min(max(lo + int((hi - lo) * (g_lo / (g_lo - g_hi))), lo + 1), hi - 1)
        width, g = hi - lo, gap(mid)
        if g > 0:
            lo, g_lo = mid, g
        else:
            hi, g_hi = mid, g
        halve = not halve and 2 * (hi - lo) > width
    return hi


def threshold_table(plan: Plan, refine=None, interpolate: bool = False) -> list[Range]:
    """Consecutive sizes with the same winner form a range. A boundary lies between two planned sizes: with
    `refine(a, b, m) -> (time_a, time_b)` (the estimate evaluator) it is the exact crossover of the two winners
    (found by bisection, or with `interpolate` by regula falsi: _crossover), otherwise the geometric middle. The
    first range starts at 0 and the last is unbounded."""
    n = len(plan.sizes)
    winners = [plan.best(j) for j in range(n)]
    groups: list[list[int]] = []
    for j in range(n):
        if groups and winners[groups[-1][0]] == winners[j]:
            groups[-1].append(j)
        else:
            groups.append([j])
    ranges = []
    for g, idx in enumerate(groups):
        w = winners[idx[0]]
        lo = 0
        if g > 0:
            a, b = plan.sizes[groups[g - 1][-1]], plan.sizes[idx[0]]
            prev = winners[groups[g - 1][0]]
            if refine is not None:
                def gap(m, prev=prev, w=w):  # the later winner's time less the earlier's
                    ta, tb = refine(prev, w, m)
                    return tb - ta
                lo = _crossover(a, b, lambda m: gap(m) > 0, gap if interpolate else None)
            else:
                lo = max(a + 1, int(round(math.sqrt(max(a, 1) * b))))
        ranges.append(_range(plan, lo, w, idx))
    for r, nxt in zip(ranges, ranges[1:]):
        r.max_bytes = nxt.min_bytes
    return ranges


def _range(plan: Plan, lo: int, w: int, idx: list[int]) -> Range:
    others = [i for i in range(len(plan.candidates)) if i != w and all(plan.times[i][j] is not None for j in idx)]
    runner, margin = None, (math.inf, math.inf)
    if others:
        def gap(i):  # geometric mean of the ratio to the winner over the range
            return sum(math.log(plan.times[i][j] / plan.times[w][j]) for j in idx if plan.times[w][j] > 0)
        r = min(others, key=gap)
        ratios = [plan.times[r][j] / plan.times[w][j] - 1 for j in idx if plan.times[w][j] > 0]
        runner, margin = plan.candidates[r], (min(ratios, default=0.0), max(ratios, default=0.0))
    return Range(lo, None, plan.candidates[w], [plan.times[w][j] for j in idx], runner, margin,
                 [plan.sizes[j] for j in idx])


# ------------------------------------------------------------------------------------------- the planner
def plan(collective: str, ranks: int | None = None, topology: str | None = None, machine: str = "",
         sizes="8B..1MiB", op: str = "sum", evaluator: str = "estimate", fidelity: str = "loggp",
         progress: bool = True, max_memory=None, root: int = 0, sweep: Sweep | None = None,
         prune: bool = True) -> Plan:
    """Plan a collective by `estimate` or `simulate` (measure needs MPI: collplan.measure.plan_measured). Sizes
    as collective.hpp's descriptors say (allgatherv and reduce_scatter: the bytes of each rank's part, planned
    with even counts); `root` for bcast, reduce, gather and scatter; `op` for the reductions. `sweep`
    (collplan.sweep.world() under mpirun) splits the pricing over the ranks; every rank returns the same plan.
    Above PRUNE_ABOVE ranks the estimate skips the walks that cannot place first or second (`prune`; the plan's
    times are None there and its bounds say why), with the same winners."""
    if evaluator not in ("estimate", "simulate"):
        raise CollplanError(f"evaluator '{evaluator}' is unknown here (allowed: estimate, simulate; measure runs "
                            "under mpirun: collplan plan --evaluator measure)")
    m = resolve_machine(machine) if machine else machine  # read once; setup refuses none
    plan_, scheds = setup(collective, ranks, topology, m, sizes, op, evaluator, max_memory, root,
                          defer=prune and evaluator == "estimate")
    if evaluator == "estimate":
        one = sum(not s.whole for s in scheds)
        if one:
            plan_.notes.append(f"{one} of {len(scheds)} candidates priced from rank 0's program alone, the same times "
                               "as every rank's (symmetric schedules: docs/models.md, \"One rank for every rank\")")
        walks = Walks(plan_.topology, plan_.model, max_memory)
        if prune and plan_.ranks > PRUNE_ABOVE:
            plan_.times, plan_.bounds, too_big = price_estimate_pruned(scheds, plan_.sizes, plan_.model,
                                                                       plan_.topology, progress, max_memory, sweep,
                                                                       walks)
            big = [{"algorithm": plan_.candidates[i].label(), "reason": too_big[i]} for i in sorted(too_big)]
            for i in sorted(too_big, reverse=True):  # declined as candidates() declines a schedule too large
                for v in (plan_.candidates, plan_.times, plan_.bounds, scheds):
                    del v[i]
            plan_.declined += big
            if not plan_.candidates:
                raise CollplanError(f"plan: no {collective} candidate fits in memory: " + "; ".join(
                    f"{d['algorithm']}: {d['reason']}" for d in big))
            skipped = sum(b is not None for row in plan_.bounds for b in row)
            if skipped:
                plan_.notes.append(f"{skipped} of {len(scheds) * len(plan_.sizes)} estimates not walked: the "
                                   f"candidate's lower bound there exceeds the runner-up's time (P > {PRUNE_ABOVE}; "
                                   "--all-estimates walks them)")
        else:
            plan_.times = price_estimate(scheds, plan_.sizes, plan_.model, plan_.topology, progress, max_memory,
                                         sweep)
        by = {c: s for c, s in zip(plan_.candidates, scheds)}

        at = {n: j for j, n in enumerate(plan_.sizes)}

        def refine(a: int, b: int, m: int):  # the planned sizes' times are known where they were walked
            def time(i):
                known = plan_.times[i][at[m]] if m in at else None
                return known if known is not None else walks(by[plan_.candidates[i]], [m], threads=1)[0]
            return time(a), time(b)
        plan_.ranges = threshold_table(plan_, refine, interpolate=plan_.bounds is not None)
    else:
        plan_.times = price_simulate(scheds, plan_.sizes, m, fidelity, plan_.topology, progress, max_memory, sweep)
        plan_.evaluator = f"simulate ({fidelity})"
        plan_.ranges = threshold_table(plan_)
    return plan_


def setup(collective, ranks, topology, machine: str | Machine, sizes, op, evaluator, max_memory=None,
          root: int = 0, defer: bool = False) -> tuple[Plan, list]:
    """The problem with its candidates (a Plan without times yet) and the candidates' schedules."""
    if not machine:
        raise CollplanError("plan needs --machine (a bundled name or a .toml file, e.g. from `collplan calibrate`)")
    m = resolve_machine(machine)
    if collective not in PLANNED:
        raise CollplanError(f"cannot plan {collective} (allowed: {', '.join(PLANNED)}; alltoallv schedules depend "
                            "on the matrix: compare them with `collplan estimate --matrix`)")
    if not topology and ranks is None:
        if not m.topology:
            raise CollplanError(f"give the number of ranks (--ranks P) or a topology (--topology T): machine "
                                f"{m.name} has no topology of its own")
        topology = m.topology  # the machine's own network (e.g. paragon: mesh:10x14)
    size_list = [0] if collective == "barrier" else sorted(set(
        int(x) for x in (sizes if isinstance(sizes, (list, tuple)) else _core.parse_sizes(str(sizes)))))
    check_reduction_sizes(collective, size_list)
    prob = resolve_problem(collective, ranks, topology, root=root, op=op)
    try:
        found, declined = candidates(prob, m, size_list, max_memory, one_rank=evaluator == "estimate", defer=defer)
    except _core.MemoryLimitError as e:
        raise CollplanError(f"plan: {e}") from None
    plan_ = Plan(collective, prob.ranks, prob.topology, m.name, m.model, op if collective in REDUCTIONS else "",
                 evaluator, size_list, [c for c, _ in found], [], declined, root=prob.root)
    return plan_, [s for _, s in found]


# ------------------------------------------------------------------------------------------- output
def format_table(p: Plan) -> str:
    """The threshold table, fitted to the terminal (collplan.tables)."""
    from .tables import render, wrap
    fb, ft = _core.format_bytes, _core.format_time
    lines = [wrap(f"# collplan plan: {p.collective}, P={p.ranks} on {p.topology}, machine {p.machine} ({p.model})" +
                  (f", root {p.root}" if p.collective in ROOTED else "") + (f", op {p.op}" if p.op else "") +
                  f", evaluator {p.evaluator}", ""),
             f"# {len(p.candidates)} candidates from {len({c.algorithm for c in p.candidates})} algorithms; "
             f"{len(p.declined)} declined"]
    rows = []
    for r in p.ranges:
        t = ft(r.winner_s[0]) + ("" if len(r.winner_s) == 1 else ".." + ft(r.winner_s[-1]))
        # signed: a measured plan keeps native unless beaten by the noise margin, so its runner-up may be faster
        margin = "-" if r.runner_up is None else (f"{r.margin[0]:+.0%}" if abs(r.margin[1] - r.margin[0]) < 0.005
                                                   else f"{r.margin[0]:+.0%}..{r.margin[1]:+.0%}")
        rows.append([fb(r.min_bytes), "-" if r.max_bytes is None else fb(r.max_bytes), r.winner.label(), t,
                     r.runner_up.label() if r.runner_up else "-", margin])
    lines.append(render(["from", "below", "winner", "time", "runner-up", "margin"], rows, key=2, left=(2, 4)))
    by_reason: dict[str, list[str]] = {}
    for d in p.declined:
        by_reason.setdefault(d["reason"], []).append(d["algorithm"].split("/", 1)[-1])
    for reason, names in by_reason.items():
        lines.append(wrap(f"# declined {', '.join(names)}: {reason}", ""))
    lines += [wrap(f"# {n}", "") for n in p.notes]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- wisdom
def wisdom_entries(p: Plan) -> list[dict]:
    out = []
    for r in p.ranges:
        e = {"collective": p.collective, "ranks": p.ranks}
        if not p.topology.startswith("full:"):
            e["topology"] = p.topology
        if p.op:
            e["op"] = p.op
        e["min_bytes"] = r.min_bytes
        if r.max_bytes is not None:
            e["max_bytes"] = r.max_bytes
        e.update(algorithm=r.winner.algorithm, params=r.winner.param_dict, evaluator=p.evaluator, machine=p.machine)
        out.append(e)
    return out


def _key(e: dict) -> tuple:
    return e["collective"], e.get("ranks"), e.get("topology", ""), e.get("op", "")


def _no_duplicate_keys(pairs) -> dict:
    keys = [k for k, _ in pairs]
    for k in keys:
        if keys.count(k) > 1:
            raise ValueError(f"key {k!r} appears twice in one object (allowed: once)")
    return dict(pairs)


def wisdom_text(path: str) -> str:
    """The text of wisdom file `path`, checked by the parser the PMPI library uses."""
    from .limits import WISDOM_MAX_BYTES, read_text
    try:
        text = read_text(path, WISDOM_MAX_BYTES, "wisdom file", from_limit=False)
    except OSError as e:
        raise CollplanError(f"cannot read wisdom file {path}: {e.strerror}") from None
    try:
        _core.parse_wisdom(text)
    except CollplanError as e:
        raise CollplanError(f"wisdom file {path}: {e}") from None
    return text


def read_wisdom(path: str) -> list[dict]:
    """The entries of wisdom file `path` (wisdom_text), checked also for what the PMPI library's parser takes but
    JSON does not keep (a key twice: which one wins?; raw control characters)."""
    text = wisdom_text(path)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)["entries"]
    except ValueError as e:
        raise CollplanError(f"wisdom file {path}: {e}") from None


def merge_wisdom(path: str, p: Plan) -> str:
    """The text of wisdom file `path` with this plan's entries replacing those of the same collective, ranks,
    topology and operation (the file need not exist). Checked by the same parser the PMPI library uses."""
    entries = read_wisdom(path) if Path(path).exists() else []  # a clear error before anything is replaced
    new = wisdom_entries(p)
    keys = {_key(e) for e in new}
    entries = [e for e in entries if _key(e) not in keys] + new
    text = "{\"format\": \"collplan-wisdom/1\",\n \"entries\": [\n" + \
        ",\n".join("  " + json.dumps(e) for e in entries) + "\n]}\n"
    _core.parse_wisdom(text)
    return text
