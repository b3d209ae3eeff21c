"""Plan for a recorded application (`collplan plan --profile`) and replay it at another scale (`collplan replay`).

A profile (docs/profile.md, read by collplan.profile) holds every collective instance of every rank. Planning
groups the instances into shapes -- (collective, communicator size, op, root) over the sizes called -- plans each
group once with the planner's evaluators (python/collplan/planner.py, measure.py) and prices the MPI library's own
choice (collplan.native) the same way, so the table says what the plan saves per shape and in all.

Replaying runs each rank's sequence of compute gaps and collectives through a synchronising model: an instance
completes on member r at the latest arrival of its members plus r's completion time in the simulated schedule
(sim.simulate's rank_time_s), for two variants -- the MPI library's choice and collplan's (a wisdom file, or a plan
made now). Scaling from the recorded P to N = kP ranks: rank n replays recorded rank n // k, a communicator of s
members becomes the k s ranks of its members' blocks; weak scaling keeps the sizes and gaps, strong scaling keeps
the totals. docs/profile.md, "Planning for a profile" and "Replaying at another scale", has the rules.
"""
from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass

from . import _core
from ._core import CollplanError
from .api import COLLECTIVES, OPS, schedule
from .machines import Machine, resolve_machine
from .planner import PER_RANK_COUNTS, PLANNED, REDUCTIONS, ROOTED, NATIVE, Candidate, candidate, candidates, plan, \
    price_estimate, resolve_problem, wisdom_text
from .progress import Progress

# Collectives whose size is one rank's share of the data (a buffer holds one block per rank: collective.hpp's
# layout, blocks_at_2): strong scaling divides it by k. The others (allreduce, reduce, bcast, barrier) move one
# vector that every rank holds whole, kept as it is.
SHARES = tuple(c["name"] for c in COLLECTIVES if 2 in c["blocks_at_2"])
WEAK, STRONG = "weak", "strong"
SCALINGS = (WEAK, STRONG)
VARIANTS = ("native", "collplan")


# ------------------------------------------------------------------------------------------- shapes
def op_of(call) -> str | None:
    """The wisdom's name of a recorded call's reduction ('' for the other collectives): a user-defined operation is
    `user` when it commutes, else `noncommutative` (docs/runtime.md, "Wisdom files"); None for an operation no
    schedule computes (MPI_REPLACE, MPI_NO_OP)."""
    if call.collective not in REDUCTIONS:
        return ""
    if call.op == "user":
        return "user" if call.commutative else "noncommutative"
    return call.op if call.op in OPS else None


def _member_call(inst):
    """The call whose size and root speak for the instance: the root's for the rooted collectives (the others'
    buffers are not significant there), else member 0's."""
    c = inst.calls[0]
    return inst.calls[c.root] if inst.collective in ROOTED and 0 <= c.root < len(inst.calls) else c


def wisdom_size(collective: str, nbytes: int, members: int) -> int:
    """A call's size as the wisdom looks it up: allgatherv and reduce_scatter the mean bytes per rank (the profile
    records their sum), the others as recorded (docs/runtime.md, "Wisdom files")."""
    return nbytes // members if collective in PER_RANK_COUNTS else nbytes


def planned_size(collective: str, nbytes: int) -> int:
    """The size a plan prices: the reductions plan vectors of doubles (planner.check_reduction_sizes), so a size
    that is not a multiple of 8 bytes is rounded up to one."""
    return -(-nbytes // 8) * 8 if collective in REDUCTIONS else nbytes


def _nodes(prof, world_ranks) -> int:
    return len({prof.ranks[w].host for w in world_ranks})


@dataclass
class ShapeRow:
    """One shape of a profile's plan: a (collective, P, op, root, size) with its calls, the MPI library's choice
    and the plan's, each priced by the plan's evaluator."""
    collective: str
    ranks: int
    op: str
    root: int
    size_bytes: int                  # the wisdom's size (allgatherv, reduce_scatter: mean bytes per rank)
    planned_bytes: int               # the size priced (reductions: rounded up to 8 bytes)
    calls: int                       # instances
    native: str                      # the library's own name for its algorithm
    native_algorithm: Candidate | None  # None: not modelled (native_reason says why)
    native_reason: str
    native_s: float | None
    planned: Candidate
    planned_s: float
    evaluator: str

    @property
    def saving_s(self) -> float | None:
        """calls x (native - planned); None where the library's choice is not modelled."""
        return None if self.native_s is None else self.calls * (self.native_s - self.planned_s)

    def as_dict(self) -> dict:
        def cand(c):
            return None if c is None else {"algorithm": c.algorithm, "params": c.param_dict, "label": c.label()}
        return {"collective": self.collective, "ranks": self.ranks, "op": self.op,
                **({"root": self.root} if self.collective in ROOTED else {}), "size_bytes": self.size_bytes,
                "planned_bytes": self.planned_bytes, "calls": self.calls, "native": self.native,
                "native_algorithm": cand(self.native_algorithm), "native_reason": self.native_reason,
                "native_s": self.native_s, "planned": cand(self.planned), "planned_s": self.planned_s,
                "saving_s": self.saving_s, "evaluator": self.evaluator}


@dataclass
class ProfilePlan:
    profile: str
    world_size: int
    machine: str
    model: str
    evaluator: str
    library: str
    rows: list[ShapeRow]
    plans: list                      # planner.Plan per (collective, P, op, root), in the rows' order
    skipped: dict[str, int]          # why -> instances
    notes: list[str]
    recorded_collective_s: tuple[float, float]   # (mean, max) over ranks of the time in collective calls
    recorded_wall_s: float

    @property
    def saving_s(self) -> float:
        return sum(r.saving_s for r in self.rows if r.saving_s is not None)

    def wisdom_plans(self) -> list:
        """The plans the wisdom records: one per (collective, P, op) -- wisdom has no root, so where several roots
        were planned, the plan of the root called most (planner.merge_wisdom replaces entries by that key)."""
        calls = Counter()
        for r in self.rows:
            calls[(r.collective, r.ranks, r.op, r.root)] += r.calls
        best: dict[tuple, tuple[int, object]] = {}
        for p in self.plans:
            n = calls[(p.collective, p.ranks, p.op, p.root)]
            key = (p.collective, p.ranks, p.op)
            if key not in best or n > best[key][0]:
                best[key] = (n, p)
        return [p for _, p in best.values()]

    def as_dict(self) -> dict:
        return {"profile": self.profile, "world_size": self.world_size, "machine": self.machine, "model": self.model,
                "evaluator": self.evaluator, "library": self.library, "rows": [r.as_dict() for r in self.rows],
                "saving_s": self.saving_s, "recorded_collective_s": {"mean": self.recorded_collective_s[0],
                                                                      "max": self.recorded_collective_s[1]},
                "recorded_wall_s": self.recorded_wall_s, "skipped": self.skipped, "notes": self.notes}


def call_time_s(call) -> float:
    """The time a rank spent inside a collective call: exit - enter, plus for a non-blocking or persistent start
    the time in the completion call that returned it (done - done's entry), when the profile has one."""
    t = call.exit_s - call.enter_s
    if call.done_s is not None and call.done_enter_s is not None:
        t += call.done_s - call.done_enter_s
    return t


def recorded_collective_s(prof) -> tuple[float, float]:
    per_rank = [sum(call_time_s(c) for c in rp.calls) for rp in prof.ranks]
    return sum(per_rank) / len(per_rank), max(per_rank)


def profile_shapes(prof) -> tuple[dict, dict[str, int]]:
    """{(collective, P, op, root): {size: [instances, nodes, type size]}} of every plannable instance (nodes: the
    most hosts an instance's members were on), and {why: instances}
    of those skipped (inter-communicators, size-1 communicators, alltoallv, operations no schedule computes)."""
    groups: dict[tuple, dict[int, list[int]]] = {}
    skipped: Counter = Counter()
    for inst in prof.instances():
        c = _member_call(inst)
        if inst.comm.inter:
            skipped["inter-communicator"] += 1
        elif inst.comm.size == 1:
            skipped["size-1 communicator"] += 1
        elif inst.collective not in PLANNED:
            skipped[f"{inst.collective} (not planned: its schedules follow the matrix)"] += 1
        elif op_of(c) is None:
            skipped[f"{inst.collective} op {c.op} (no schedule computes it)"] += 1
        else:
            P = inst.comm.size
            root = c.root if inst.collective in ROOTED else 0
            entry = groups.setdefault((inst.collective, P, op_of(c), root), {}).setdefault(
                wisdom_size(inst.collective, c.bytes, P), [0, 0, max(1, c.type_size)])
            entry[0] += 1
            entry[1] = max(entry[1], _nodes(prof, inst.comm.world_ranks))
    return groups, dict(skipped)


def _price(sched, machine: Machine, evaluator: str, fidelity: str, topology: str, size: int, max_memory=None) -> float:
    """One schedule at one size by the estimate or simulate evaluator (planner.price_estimate / price_simulate's
    computation for one candidate)."""
    if evaluator == "estimate":
        return price_estimate([sched], [size], machine.model, topology, progress=False, max_memory=max_memory)[0][0]
    from .sim import simulate
    return simulate(sched, machine=machine, fidelity=fidelity, size=size, topology=topology,
                    max_memory=max_memory).time_s


def plan_profile(prof, machine: str | Machine, evaluator: str = "estimate", fidelity: str = "loggp",
                 library: str | None = None, progress: bool = True, max_memory=None, measure: dict | None = None):
    """Plan every shape of a profile (profile_shapes) once per (collective, P, op, root) over its sizes, with the
    MPI library's own choice priced by the same evaluator. measure: plan_measured's options (under mpirun; a
    group is measured where P is mpirun's size and its operation is measurable, else estimated, said in notes)."""
    from . import native
    m = resolve_machine(machine)
    library = library or native.library_of(prof.ranks[0].mpi)
    groups, skipped = profile_shapes(prof)
    if not groups:
        raise CollplanError(f"profile {prof.path}: no instance to plan (skipped: " +
                            (", ".join(f"{n} {why}" for why, n in skipped.items()) or "none recorded") + ")")
    notes: list[str] = []
    world = None
    if evaluator == "measure":
        from .measure import MEASURABLE_OPS, backend_as_programs_run, plan_measured
        comm = backend_as_programs_run()[0].COMM_WORLD
        world, progress = comm.Get_size(), progress and comm.Get_rank() == 0
    rows, plans, estimated, rounded = [], [], [], 0
    with Progress("shapes planned", len(groups), progress) as bar:
        for (coll, P, op, root), by_size in sorted(groups.items()):
            sizes = sorted(by_size)
            plan_sizes = sorted({planned_size(coll, n) for n in sizes})
            rounded += sum(planned_size(coll, n) != n for n in sizes)
            measured = evaluator == "measure" and P == world and (coll not in REDUCTIONS or op in MEASURABLE_OPS)
            if measured:
                p = plan_measured(coll, m, plan_sizes, op or "sum", P, root=root, progress=False, **(measure or {}))
            else:
                if evaluator == "measure":
                    estimated.append(f"{coll} P={P}" + (f" op {op}" if op else ""))
                p = plan(coll, P, None, m, plan_sizes, op or "sum", "estimate" if evaluator == "measure" else evaluator,
                         fidelity, progress=False, max_memory=max_memory, root=root)
            plans.append(p)
            nat = next((i for i, c in enumerate(p.candidates) if c.algorithm == NATIVE), None)
            how = "estimate" if evaluator == "measure" and not measured else evaluator
            for n in sizes:
                calls, nodes, type_size = by_size[n]
                j = p.sizes.index(planned_size(coll, n))
                best = p.best(j)
                nc = native.choice(library, coll, P, n * P if coll in PER_RANK_COUNTS else n, type_size=type_size,
                                   commutative=op != "noncommutative", builtin_op=op not in ("user", "noncommutative"),
                                   root=root, nodes=nodes)
                cand = None if nc.algorithm is None else candidate(nc.algorithm, nc.params)
                native_s, reason = None, nc.reason
                if cand is not None and measured:  # the library's own collective, measured (unless --no-native)
                    native_s = None if nat is None else p.times[nat][j]
                    reason = reason if nat is not None else "not measured (--no-native)"
                elif cand is not None:
                    try:
                        s = schedule(cand.algorithm, ranks=P, topology=p.topology, params=cand.param_dict, root=root,
                                     counts=[1] * P if coll in PER_RANK_COUNTS else None, max_memory=max_memory)
                        native_s = _price(s, m, evaluator, fidelity, p.topology, p.sizes[j], max_memory)
                    except CollplanError as e:
                        cand, reason = None, f"{nc.algorithm}: {e}"
                rows.append(ShapeRow(coll, P, op, root, n, p.sizes[j], calls, nc.native, cand, reason, native_s,
                                     p.candidates[best], p.times[best][j], how if how != "simulate" else
                                     f"simulate ({fidelity})"))
            bar.step()
    if rounded:
        notes.append(f"{rounded} reduction size(s) priced at the next multiple of 8 bytes (plans are of vectors of "
                     "doubles)")
    if estimated:
        notes.append(f"estimated, not measured (P is not mpirun's {world}, or the operation is not one of "
                     f"{', '.join(MEASURABLE_OPS)}): {'; '.join(estimated)}")
    if any(r.native_s is None for r in rows):
        notes.append("a shape without the library's time counts no saving")
    return ProfilePlan(prof.path, prof.world_size, m.name, m.model, evaluator, library, rows, plans, skipped, notes,
                       recorded_collective_s(prof), prof.wall_s())


def format_profile_plan(pp: ProfilePlan) -> str:
    from .tables import render, wrap
    fb, ft = _core.format_bytes, _core.format_time
    lines = [wrap(f"# collplan plan: profile {pp.profile} (P={pp.world_size}), machine {pp.machine} ({pp.model}), "
                  f"evaluator {pp.evaluator}, native: {pp.library}", "")]
    rows = []
    for r in pp.rows:
        what = r.collective + (f" {r.op}" if r.op else "") + (f" root {r.root}" if r.collective in ROOTED else "")
        native = (r.native_algorithm.label() if r.native_algorithm else "not modelled")
        rows.append([what, r.ranks, fb(r.size_bytes), r.calls, native, "-" if r.native_s is None else ft(r.native_s),
                     r.planned.label(), ft(r.planned_s), "-" if r.saving_s is None else ft(r.saving_s)])
    lines.append(render(["collective", "P", "size", "calls", "native", "time", "planned", "time", "saving x calls"],
                        rows, key=3, left=(0, 4, 6)))
    mean, peak = pp.recorded_collective_s
    lines.append(f"# expected saving: {ft(pp.saving_s)} (sum over shapes of calls x (native - planned)); recorded "
                 f"time in collectives {ft(mean)} per rank (max {ft(peak)}), wall {ft(pp.recorded_wall_s)}")
    for r in pp.rows:
        if r.native_s is None:
            lines.append(wrap(f"# {'not modelled' if r.native_algorithm is None else 'not priced'}: {r.collective} "
                              f"P={r.ranks} {fb(r.size_bytes)}: {r.native}: {r.native_reason}", ""))
    if pp.skipped:
        lines.append(wrap("# skipped: " + ", ".join(f"{n} {why}" for why, n in pp.skipped.items()), ""))
    lines += [wrap(f"# {n}", "") for n in pp.notes]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- replay
def _share(nbytes: int, k: int, type_size: int) -> int:
    """nbytes / k in whole elements of type_size (a non-empty share keeps one element at least)."""
    if nbytes <= 0 or k == 1:
        return nbytes
    t = max(1, type_size)
    return max(t, nbytes // k // t * t)


def _units(values: list[int]) -> tuple[list[int], int]:
    """Byte counts as (units, bytes per unit): collplan's schedules take counts and matrices in units of the
    message size."""
    g = 0
    for v in values:
        g = math.gcd(g, v)
    g = g or 1
    return [v // g for v in values], g


@dataclass
class _Shape:
    """One collective at the replayed scale: what a schedule needs (collective, ranks, topology, size, root, counts
    or matrix) and what the choices look up (op, commutative, the wisdom's size)."""
    collective: str
    ranks: int
    topology: str
    size: int                 # the schedule's size (bytes per unit where counts or a matrix are given)
    root: int
    op: str
    commutative: bool
    wisdom_bytes: int         # the wisdom's size (alltoallv: the mean block, for the tables; its entries have none)
    native_bytes: int         # collplan.native's (the profile's convention: allgatherv, reduce_scatter the sum)
    type_size: int
    nodes: int                # the nodes the members are on (collplan.native's `nodes`)
    counts: tuple | None = None
    matrix: tuple | None = None

    def key(self) -> tuple:
        return (self.collective, self.ranks, self.topology, self.size, self.root, self.op, self.nodes, self.counts,
                self.matrix)


class _Instance:
    """One collective instance at the replayed scale and its members' progress through it."""
    __slots__ = ("shape", "index", "members", "count", "latest", "done", "waiters", "T")

    def __init__(self, shape: _Shape, index: dict[int, int]):
        self.shape, self.index = shape, index   # index: recorded world rank -> its recorded communicator rank
        self.members = shape.ranks
        self.T: dict[str, list] = {}            # variant -> the schedule's completion time per communicator rank
        self.reset()

    def reset(self) -> None:
        self.count, self.latest, self.done, self.waiters = 0, -math.inf, False, []

    def arrive(self, t: float, ready: list) -> None:
        """A member arrives at t; the last one releases the waiting members (onto `ready`)."""
        self.count += 1
        if t > self.latest:
            self.latest = t
        if self.count == self.members:
            self.done = True
            ready.extend(self.waiters)
            self.waiters = []


@dataclass
class VariantResult:
    name: str
    collective_mean_s: float      # sum over ranks of the time in collectives / N
    collective_max_s: float
    total_s: float                # max over ranks of the final t
    per_collective_s: dict        # collective -> sum over ranks of its time / N

    def as_dict(self) -> dict:
        return {"name": self.name, "collective_mean_s": self.collective_mean_s,
                "collective_max_s": self.collective_max_s, "total_s": self.total_s,
                "per_collective_s": self.per_collective_s}


@dataclass
class Replay:
    profile: str
    recorded_ranks: int
    ranks: int
    topology: str
    machine: str
    fidelity: str
    scaling: str
    library: str
    choice: str                   # where collplan's variant comes from: "wisdom FILE" or "plan (estimate)"
    variants: list[VariantResult]
    recorded: VariantResult | None   # at N == P: the profile's own times
    shapes: list[dict]
    notes: list[str]
    simulations: int
    cached: int
    wall_s: float = 0.0

    def as_dict(self) -> dict:
        return {"profile": self.profile, "recorded_ranks": self.recorded_ranks, "ranks": self.ranks,
                "topology": self.topology, "machine": self.machine, "fidelity": self.fidelity,
                "scaling": self.scaling, "library": self.library, "choice": self.choice,
                "variants": [v.as_dict() for v in self.variants],
                "recorded": None if self.recorded is None else self.recorded.as_dict(), "shapes": self.shapes,
                "notes": self.notes, "simulations": self.simulations, "cached": self.cached, "wall_s": self.wall_s}


def scale_of(recorded: int, ranks: int | None, topology: str | None) -> tuple[int, str, int]:
    """(N, topology, k = N / P): --ranks N is full:N; --topology T places rank i on node i. N must be a multiple
    of the recorded P."""
    if (ranks is None) == (not topology):
        raise CollplanError("replay needs --ranks N or --topology T (one of them)")
    if topology:
        t = _core.Topology.parse(topology)
        N, spec, what = t.nodes, t.spec, f"topology {t.spec} has {t.nodes} nodes,"
    else:
        N, spec, what = ranks, f"full:{ranks}", f"--ranks {ranks} is"
    if N % recorded:
        raise CollplanError(f"{what} not a multiple of the recorded {recorded} ranks (allowed: {recorded}, "
                            f"{2 * recorded}, {3 * recorded}, ...: rank n replays recorded rank n*{recorded}//N)")
    return N, spec, N // recorded


def _scaled_shape(inst, k: int, N: int, topology: str, scaling: str, notes: Counter, hosts: int) -> _Shape:
    """The instance at k times its communicator's size (scaling rules: docs/profile.md). hosts: the recorded
    members' hosts -- the nodes at the recorded scale (k = 1); scaled, every rank is a node of the topology."""
    c = _member_call(inst)
    coll, s = inst.collective, inst.comm.size
    S = s * k
    nodes = hosts if k == 1 else S
    members = [w * k + j for w in inst.comm.world_ranks for j in range(k)]
    if members == list(range(N)):
        topo = topology
    else:
        topo = f"full:{S}"
        if not topology.startswith("full:"):
            notes[f"a communicator that is not every rank in order runs on its own full:S (the simulator takes no "
                  f"placement of a subset on {topology})"] += 1
    div = k if scaling == STRONG and coll in SHARES else 1
    root = c.root * k if coll in ROOTED else 0
    op = op_of(c) or ""
    commutative = c.commutative is not False
    if coll in PER_RANK_COUNTS:
        per = [_share(v, div, c.type_size) for v in c.values for _ in range(k)] if c.values else \
            [_share(c.bytes // s, div, c.type_size)] * S
        units, g = _units(per)
        return _Shape(coll, S, topo, g, root, op, commutative, sum(per) // S, sum(per), c.type_size, nodes,
                      counts=tuple(units))
    if coll == "alltoallv":
        if k == 1 and all(len(x.values) == s for x in inst.calls):
            flat, g = _units([v for x in inst.calls for v in x.values])
            mean = sum(flat) * g // (s * s)
            return _Shape(coll, S, topo, g, 0, "", True, mean, mean * s, c.type_size, nodes,
                          matrix=tuple(tuple(flat[i * s:(i + 1) * s]) for i in range(s)))
        notes["alltoallv at N != P: a uniform alltoall of the mean block (the recorded matrix has no N-rank "
              "counterpart)"] += 1
        block = _share(sum(x.bytes for x in inst.calls) // (s * s), div, c.type_size)
        return _Shape("alltoall", S, topo, block, 0, "", True, block, block, c.type_size, nodes)
    n = _share(c.bytes, div, c.type_size)
    return _Shape(coll, S, topo, n, root, op, commutative, n, n, c.type_size, nodes)


class _Chooser:
    """The algorithm of each shape for each variant: native = the MPI library's choice (collplan.native); collplan =
    the wisdom's entry (as the PMPI library looks it up: no topology), or else a plan made now with the estimate
    evaluator (one per collective, P, op, root and topology over every size replayed). An entry `native` or no
    entry keeps the library's choice. A library choice that is not modelled is replayed with collplan's, a shape
    that cannot be planned (memory) with the library's."""

    def __init__(self, machine: Machine, library: str, wisdom_text: str | None, shapes: list[_Shape], max_memory):
        from . import native
        self.native, self.machine, self.library, self.wisdom = native, machine, library, wisdom_text
        self.max_memory = max_memory
        self.sizes: dict[tuple, set] = defaultdict(set)
        for sh in shapes:
            if sh.collective in PLANNED:
                self.sizes[self._plan_key(sh)].add(planned_size(sh.collective, sh.wisdom_bytes))
        self.plans: dict[tuple, object] = {}
        self.unmodelled: Counter = Counter()
        self.unplanned: Counter = Counter()

    @staticmethod
    def _plan_key(sh: _Shape) -> tuple:
        return sh.collective, sh.ranks, sh.op, sh.root, sh.topology

    def native_choice(self, sh: _Shape, weight: int) -> Candidate | None:
        counts = None if sh.counts is None else [x * sh.size for x in sh.counts]
        nc = self.native.choice(self.library, sh.collective, sh.ranks, sh.native_bytes, type_size=max(1, sh.type_size),
                                commutative=sh.commutative, builtin_op=sh.op not in ("user", "noncommutative"),
                                root=sh.root, nodes=sh.nodes, counts=counts)
        if nc.algorithm is None:
            self.unmodelled[f"{sh.collective} ({nc.native}: {nc.reason})"] += weight
            return None
        return candidate(nc.algorithm, nc.params)

    def planned(self, sh: _Shape, weight: int) -> Candidate | None:
        if sh.collective not in PLANNED:  # alltoallv on its matrix: the candidate with the smallest estimate
            key = ("alltoallv", sh.ranks, sh.topology, sh.matrix)
            if key not in self.plans:
                prob = resolve_problem("alltoallv", sh.ranks, sh.topology, matrix=[list(r) for r in sh.matrix])
                found, _ = candidates(prob, self.machine, [sh.size], self.max_memory)
                times = price_estimate([s for _, s in found], [sh.size], self.machine.model, sh.topology, False,
                                       self.max_memory)
                self.plans[key] = found[min(range(len(found)), key=lambda i: times[i][0])][0]
            return self.plans[key]
        key = self._plan_key(sh)
        if key not in self.plans:
            ranks, topo = (sh.ranks, None) if sh.topology.startswith("full:") else (None, sh.topology)
            try:
                self.plans[key] = plan(sh.collective, ranks, topo, self.machine, sorted(self.sizes[key]),
                                       sh.op or "sum", "estimate", progress=False, max_memory=self.max_memory,
                                       root=sh.root)
            except CollplanError as e:  # e.g. every candidate's schedule at once exceeds --max-memory
                self.plans[key] = str(e)
        p = self.plans[key]
        if isinstance(p, str):
            self.unplanned[f"{sh.collective} at P={sh.ranks} ({p})"] += weight
            return None
        return p.choice(sh.wisdom_bytes)

    def choose(self, sh: _Shape, weight: int) -> dict[str, Candidate]:
        """The two variants' candidates for a shape of `weight` instances (counted in the notes)."""
        nat = self.native_choice(sh, weight)
        mine = None
        if self.wisdom is not None:
            e = _core.wisdom_lookup(self.wisdom, sh.collective, sh.ranks, sh.wisdom_bytes, sh.op, "")
            mine = candidate(e["algorithm"], e["params"]) if e is not None and e["algorithm"] != NATIVE else nat
        mine = mine or self.planned(sh, weight) or nat
        if mine is None:
            raise CollplanError(f"replay: {sh.collective} at P={sh.ranks}: neither the MPI library's choice nor a "
                                "plan can be simulated (the notes of `collplan plan --profile` say why)")
        return {"native": nat or mine, "collplan": mine}


def _events(rp, gscale: float, replayed: set) -> list[tuple]:
    """One recorded rank's timeline: its call and done lines in the order they were entered, each as (kind,
    compute before it, duration, instance key or None, collective). The compute before a line is its entry minus
    the previous line's exit (a call's recorded gap where the previous line is a call), times gscale."""
    items = [(c.enter_s, 0, c.seq, c) for c in rp.calls]
    items += [(c.done_enter_s, 1, c.seq, c) for c in rp.calls
              if c.kind in ("nb", "start") and c.done_enter_s is not None and c.done_s is not None]
    items.sort(key=lambda x: x[:3])
    out, prev_exit, prev_call = [], rp.init_exit_s, True
    for enter, is_done, _, c in items:
        compute = (c.gap_s if prev_call and not is_done else max(0.0, enter - prev_exit)) * gscale
        key = (c.comm, c.cseq, c.start)
        how = key in replayed  # else no instance to replay (init, inter-communicator, dropped): its recorded time
        if is_done:
            out.append(("done" if how else "local", compute, c.done_s - c.done_enter_s, key, c.collective))
            prev_exit = max(prev_exit, c.done_s)
        else:
            kind = "local" if c.kind == "init" or not how else "b" if c.kind == "b" else "nb"
            out.append((kind, compute, c.exit_s - c.enter_s, key, c.collective))
            prev_exit = max(prev_exit, c.exit_s)
        prev_call = not is_done
    return out


def _timeline(N: int, k: int, events: list[list[tuple]], instances: dict, variant: str, tails: list[float]):
    """Every rank through its events: (final t per rank, time in collectives per rank, {collective: its time summed
    over the ranks}). A rank runs until it must wait for an instance whose members have not all arrived; the last
    arrival releases the waiting ones."""
    for inst in instances.values():
        inst.reset()
    t, coll, pos, entered = [0.0] * N, [0.0] * N, [0] * N, [False] * N
    per: dict[str, float] = defaultdict(float)
    ready = list(range(N - 1, -1, -1))
    while ready:
        n = ready.pop()
        r, j = divmod(n, k)
        evs, i, tn = events[r], pos[n], t[n]
        while i < len(evs):
            kind, compute, dur, key, name = evs[i]
            inst = instances.get(key)  # None: a local line, or a size-1 communicator's (complete at its arrival)
            if not entered[n]:
                tn += compute
                if kind in ("b", "nb") and inst is not None:
                    inst.arrive(tn, ready)
                if kind in ("local", "nb"):  # the call's own time; a non-blocking one goes on at its exit
                    tn += dur
                    coll[n] += dur
                    per[name] += dur
                if kind in ("local", "nb") or inst is None:
                    i += 1
                    continue
                entered[n] = True
            if not inst.done:
                inst.waiters.append(n)
                break
            end = inst.latest + inst.T[variant][inst.index[r] * k + j]
            if end > tn:
                coll[n] += end - tn
                per[name] += end - tn
                tn = end
            entered[n] = False
            i += 1
        pos[n], t[n] = i, tn
    stuck = next((n for n in range(N) if pos[n] < len(events[n // k])), None)
    if stuck is not None:
        raise CollplanError(f"replay: rank {stuck} waits forever at its {events[stuck // k][pos[stuck]][4]} (line "
                            f"{pos[stuck]} of its timeline): the profile's instances do not match")
    return [t[n] + tails[n // k] for n in range(N)], coll, per


def _result(name: str, N: int, final: list[float], coll: list[float], per: dict) -> VariantResult:
    return VariantResult(name, sum(coll) / N, max(coll), max(final), {c: v / N for c, v in sorted(per.items())})


def _recorded(prof) -> VariantResult:
    """The profile's own times, for the replay at N == P (the accuracy check)."""
    per: dict[str, float] = defaultdict(float)
    coll = []
    for rp in prof.ranks:
        coll.append(sum(call_time_s(c) for c in rp.calls))
        for c in rp.calls:
            per[c.collective] += call_time_s(c)
    return _result("recorded", prof.world_size, [prof.wall_s()], coll, per)


def replay(prof, machine: str | Machine, ranks: int | None = None, topology: str | None = None,
           fidelity: str = "loggp", scaling: str = WEAK, library: str | None = None, wisdom: str | None = None,
           progress: bool = True, max_memory=None) -> Replay:
    """Replay a profile at N ranks (--ranks N: full:N; --topology T: rank i on node i) for the MPI library's
    choice and collplan's (the wisdom file, else a plan made now by estimate), simulating every distinct
    (algorithm, parameters, topology, size) once."""
    from . import native
    from .sim import simulate
    if scaling not in SCALINGS:
        raise CollplanError(f"scaling '{scaling}' is unknown (allowed: {', '.join(SCALINGS)})")
    if fidelity not in ("loggp", "flow"):
        raise CollplanError(f"fidelity '{fidelity}' is not replayed (allowed: loggp, flow)")
    t0 = time.monotonic()
    m = resolve_machine(machine)
    P = prof.world_size
    N, topo, k = scale_of(P, ranks, topology)
    library = library or native.library_of(prof.ranks[0].mpi)
    gscale = 1.0 / k if scaling == STRONG else 1.0
    notes: Counter = Counter()
    instances: dict[tuple, _Instance] = {}
    replayed: set = set()
    for inst in prof.instances():
        if inst.comm.inter:
            notes["an inter-communicator's collective is replayed as its recorded time"] += 1
            continue
        if op_of(_member_call(inst)) is None:
            notes[f"{inst.collective} op {_member_call(inst).op} (no schedule computes it) is replayed as its "
                  "recorded time"] += 1
            continue
        replayed.add(inst.key)
        if inst.comm.size == 1:
            notes["a size-1 communicator's collective completes at its arrival (no messages)"] += 1
            continue
        sh = _scaled_shape(inst, k, N, topo, scaling, notes, _nodes(prof, inst.comm.world_ranks))
        instances[inst.key] = _Instance(sh, {w: i for i, w in enumerate(inst.comm.world_ranks)})
    chooser = _Chooser(m, library, None if wisdom is None else wisdom_text(wisdom),
                       [x.shape for x in instances.values()], max_memory)
    counts = Counter(x.shape.key() for x in instances.values())
    chosen: dict[tuple, dict] = {}
    jobs: dict[tuple, _Shape] = {}   # (candidate, shape key) -> the shape
    with Progress("shapes chosen", len(counts), progress, command="replay") as bar:
        for x in instances.values():
            key = x.shape.key()
            if key not in chosen:
                chosen[key] = chooser.choose(x.shape, counts[key])
                for c in chosen[key].values():
                    jobs.setdefault((c, key), x.shape)
                bar.step()
    times: dict[tuple, list] = {}
    failed: dict[tuple, str] = {}
    with Progress("simulations", len(jobs), progress, command="replay") as bar:
        for (cand, key), sh in jobs.items():
            try:
                s = schedule(cand.algorithm, ranks=sh.ranks, topology=sh.topology, params=cand.param_dict,
                             root=sh.root, counts=None if sh.counts is None else list(sh.counts),
                             matrix=None if sh.matrix is None else [list(r) for r in sh.matrix],
                             max_memory=max_memory)
                times[(cand, key)] = simulate(s, machine=m, fidelity=fidelity, size=sh.size, topology=sh.topology,
                                              max_memory=max_memory).rank_time_s
            except CollplanError as e:  # a generator that declines here, a schedule over --max-memory
                failed[(cand, key)] = str(e)
            bar.step()
    for key, ch in chosen.items():  # a variant whose schedule failed runs the other variant's
        bad = [v for v, c in ch.items() if (c, key) in failed]
        if len(bad) == 2 or (bad and ch["native"] == ch["collplan"]):
            raise CollplanError(f"replay: {ch['collplan'].label()}: {failed[(ch['collplan'], key)]}")
        for v in bad:
            other = ch["collplan" if v == "native" else "native"]
            notes[f"{ch[v].label()} cannot be simulated here ({failed[(ch[v], key)]}): the {v} variant runs "
                  f"{other.label()}"] += counts[key]
            ch[v] = other
    for x in instances.values():
        key = x.shape.key()
        for v, c in chosen[key].items():
            x.T[v] = times[(c, key)]
    for what, n in chooser.unmodelled.items():
        notes[f"not modelled, replayed with collplan's choice in both variants: {what}"] += n
    for what, n in chooser.unplanned.items():
        notes[f"not planned, replayed with the MPI library's choice in both variants: {what}"] += n
    events = [_events(rp, gscale, replayed) for rp in prof.ranks]
    tails = []   # the compute from the rank's last line to MPI_Finalize
    for rp in prof.ranks:
        last = max([rp.init_exit_s] + [c.exit_s for c in rp.calls] + [c.done_s for c in rp.calls
                                                                      if c.done_s is not None])
        tails.append(max(0.0, rp.last_s() - last) * gscale)
    variants = [_result(v, N, *_timeline(N, k, events, instances, v, tails)) for v in VARIANTS]
    shapes = []
    for key, ch in chosen.items():
        sh = next(x.shape for x in instances.values() if x.shape.key() == key)
        shapes.append({"collective": sh.collective, "ranks": sh.ranks, "topology": sh.topology,
                       "size_bytes": sh.wisdom_bytes, "op": sh.op, "instances": counts[key],
                       **{v: {"algorithm": c.algorithm, "params": c.param_dict, "label": c.label(),
                              "time_s": max(times[(c, key)], default=0.0)} for v, c in ch.items()}})
    shapes.sort(key=lambda d: (d["collective"], d["ranks"], d["size_bytes"]))
    return Replay(prof.path, P, N, topo, m.name, fidelity, scaling, library,
                  "plan (estimate)" if wisdom is None else f"wisdom {wisdom}", variants,
                  _recorded(prof) if N == P else None, shapes,
                  [f"{n} instance{'s' if n > 1 else ''}: {what}" for what, n in notes.items()], len(times),
                  2 * len(instances) - len(times), time.monotonic() - t0)


def format_replay(rp: Replay) -> str:
    from .tables import render, wrap
    fb, ft = _core.format_bytes, _core.format_time
    lines = [wrap(f"# collplan replay: {rp.profile} (P={rp.recorded_ranks}) at N={rp.ranks} on {rp.topology}, "
                  f"machine {rp.machine}, fidelity {rp.fidelity}, {rp.scaling} scaling; native: {rp.library}, "
                  f"collplan: {rp.choice}", ""),
             f"# {sum(s['instances'] for s in rp.shapes)} instances in {len(rp.shapes)} shapes; {rp.simulations} "
             f"simulations ({rp.cached} reused); {rp.wall_s:.1f} s"]
    rows = [[v.name, ft(v.collective_mean_s), ft(v.collective_max_s), ft(v.total_s)]
            for v in ([rp.recorded] if rp.recorded else []) + rp.variants]
    lines.append(render(["variant", "collectives mean", "collectives max", "total"], rows, left=(0,)))
    names = sorted({c for v in rp.variants for c in v.per_collective_s})
    cols = (["recorded"] if rp.recorded else []) + [v.name for v in rp.variants]
    src = ([rp.recorded] if rp.recorded else []) + rp.variants
    lines.append("")
    lines.append(render(["collective (mean per rank)"] + cols,
                        [[c] + [ft(v.per_collective_s.get(c, 0.0)) for v in src] for c in names], left=(0,)))
    lines.append("")
    lines.append(render(["collective", "P", "size", "instances", "native", "time", "collplan", "time"],
                        [[s["collective"] + (f" {s['op']}" if s["op"] else ""), s["ranks"], fb(s["size_bytes"]),
                          s["instances"], s["native"]["label"], ft(s["native"]["time_s"]), s["collplan"]["label"],
                          ft(s["collplan"]["time_s"])] for s in rp.shapes], key=3, left=(0, 4, 6)))
    lines += [wrap(f"# {n}", "") for n in rp.notes]
    return "\n".join(lines)
