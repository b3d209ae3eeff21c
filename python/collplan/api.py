"""The Python API over the C++ core: schedules, verification, estimates."""
from __future__ import annotations

import math
import operator

from dataclasses import asdict, dataclass

from . import _core
from ._core import CollplanError
from .limits import max_memory as _max_memory
from .machines import Machine, resolve_machine


# The collective descriptors (src/collplan/schedule/collective.hpp): name, mpi_name, rooted, reduction, counts
# ("none", "per_rank", "matrix"), in_place, size (what a message size means), in the core's order.
COLLECTIVES: list[dict] = _core.collectives()
COLLECTIVE_NAMES: list[str] = [c["name"] for c in COLLECTIVES]


def describe(collective: str) -> dict:
    """The descriptor of a collective (CollplanError naming the allowed ones for an unknown name)."""
    for c in COLLECTIVES:
        if c["name"] == collective:
            return c
    raise CollplanError(f"unknown collective '{collective}' (allowed: {', '.join(COLLECTIVE_NAMES)})")


def algorithms(collective: str | None = None) -> list[dict]:
    """Registered algorithms (name, collective, summary, source, params, topologies)."""
    algs = _core.algorithms()
    if collective is not None:
        describe(collective)
        algs = [a for a in algs if a["collective"] == collective]
    return algs


def resolve_name(algorithm: str, collective: str | None = None) -> str:
    """'ring' + collective 'allgather' -> 'allgather/ring'; full names pass through."""
    if "/" in algorithm or collective is None:
        return algorithm
    return f"{collective}/{algorithm}"


MAX_RANKS = 1 << 22  # the core's kMaxNodes (src/collplan/topology/topology.hpp): P of any topology


def integer(x) -> int | None:
    """x as an int where it is an integer (int, a NumPy integer: anything operator.index takes), else None; a bool
    is not one."""
    if isinstance(x, bool):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _ranks_and_topology(ranks: int | None, topology: str | None) -> tuple[int, str]:
    ranks = ranks if ranks is None or integer(ranks) is None else integer(ranks)
    if topology is not None and not isinstance(topology, str):
        raise CollplanError(f"topology {topology!r} is invalid (allowed: a spec such as ring:8 or torus:4x4)")
    if topology:
        t = _core.Topology.parse(topology)
        if ranks is not None:
            t.check_ranks(ranks)
        return t.nodes, t.spec
    if ranks is None:
        raise CollplanError("give the number of ranks or a topology")
    if isinstance(ranks, bool) or not isinstance(ranks, int) or not 1 <= ranks <= MAX_RANKS:
        raise CollplanError(f"number of ranks {ranks!r} is invalid (allowed: an integer 1..{MAX_RANKS})")
    return ranks, f"full:{ranks}"


def _units(rows, what: str) -> list[int]:
    """The entries of a matrix (rows) or of counts (one row), flat: each an integer 0 .. 2^64 - 1."""
    out = []
    for i, row in enumerate(rows):
        for j, x in enumerate(row):
            v = integer(x)
            if v is None or not 0 <= v < 1 << 64:
                where = f" at ({i}, {j})" if what == "matrix" else f" at {j}"
                raise CollplanError(f"{what} entry {x!r}{where} is invalid (allowed: integers 0..2^64-1)")
            out.append(v)
    return out


def _schedule_of(sched, who: str) -> _core.Schedule:
    if not isinstance(sched, _core.Schedule):
        raise CollplanError(f"{who} needs a Schedule (collplan.schedule(...) or read_schedule), got "
                            f"{type(sched).__name__}")
    return sched


def schedule(algorithm: str, ranks: int | None = None, topology: str | None = None, params: dict | None = None,
             matrix=None, collective: str | None = None, max_memory=None, counts=None, root: int = 0,
             only_rank: int | None = None) -> _core.Schedule:
    """Generate the schedule of a registered algorithm for P ranks (on a topology, default full:P). alltoallv takes
    its P x P `matrix` (rows = senders), allgatherv and reduce_scatter their P `counts` (units per rank), the rooted
    collectives (bcast, reduce, gather, scatter) a `root`. A schedule that would need more than max_memory bytes
    (default: a quarter of the RAM; "4GiB" accepted) is refused before it is generated (CollplanError naming the
    need and the limit). `only_rank`: that rank's program alone (what the MPI runtime builds; rank 0's of a
    symmetric schedule is what the estimate of every rank needs: schedule/symmetry.hpp)."""
    p, topo = _ranks_and_topology(ranks, topology)
    if matrix is not None and counts is not None:
        raise CollplanError("give a matrix (alltoallv) or counts (allgatherv, reduce_scatter), not both")
    flat = _units(matrix, "matrix") if matrix is not None else _units([counts or []], "counts")
    if integer(root) is None:
        raise CollplanError(f"root {root!r} is invalid (allowed: an integer 0..{p - 1})")
    return _core.make_schedule(resolve_name(algorithm, collective), p, topo,
                               {str(k): str(v) for k, v in (params or {}).items()}, flat, integer(root),
                               _max_memory(max_memory), -1 if only_rank is None else only_rank)


# The reduction operations: the one table of src/collplan/schedule/reduction.hpp (name, commutative, idempotent,
# invertible), in its order.
REDUCTION_OPS: list[dict] = _core.reduction_ops()
OPS: list[str] = [o["name"] for o in REDUCTION_OPS]
IDEMPOTENT_OPS: set[str] = {o["name"] for o in REDUCTION_OPS if o["idempotent"]}


def reduction_op(name: str) -> dict:
    """The table entry of reduction operation `name`."""
    for o in REDUCTION_OPS:
        if o["name"] == name:
            return o
    raise CollplanError(f"unknown reduction operation '{name}' (allowed: {', '.join(OPS)})")


def unsupported_op(sched: _core.Schedule, op: str) -> str:
    """Why a schedule cannot compute reduction `op` ("" if it can), from what the schedule declares."""
    o = reduction_op(op)
    if sched.idempotent_only and not o["idempotent"]:
        return f"correct only for idempotent operations ({', '.join(sorted(IDEMPOTENT_OPS))}), not {op}"
    if sched.needs_commutative and not o["commutative"]:
        return "needs a commutative operation"
    if sched.needs_inverse and not o["invertible"]:
        return f"takes contributions out with the inverse operation, which {op} does not have"
    return ""


def verify(sched: _core.Schedule, op: str = "sum", check_races: bool = True, max_memory=None) -> dict:
    """Symbolically verify a schedule; returns {'ok', 'reason', 'message', 'rank', 'op', 'rank_consistent',
    'consistency'}: rank_consistent (allreduce) says every rank computes the same expression, consistency names
    the first difference where it does not."""
    return _core.verify(_schedule_of(sched, "verify"), op, check_races, _max_memory(max_memory))


def verify_by_symmetry(algorithm: str, ranks: int | None = None, topology: str | None = None,
                       params: dict | None = None, op: str = "sum", collective: str | None = None,
                       max_memory=None, progress=None) -> dict:
    """Verify a symmetric allgather, alltoall or barrier at P ranks from rank 0's program, checking every other
    rank's program, generated one at a time, to be rank 0's moved (docs/verify.md, "One rank for every rank"):
    verify's answer in the memory of two programs. `progress(done)` is called about once a second.
    CollplanError where rank 0 cannot stand for every rank (the collective, or data that does not move with the
    ranks)."""
    p, topo = _ranks_and_topology(ranks, topology)
    return _core.verify_by_symmetry(resolve_name(algorithm, collective), p, topo,
                                    {str(k): str(v) for k, v in (params or {}).items()}, op, True,
                                    _max_memory(max_memory), progress)


@dataclass
class EstimateRow:
    collective: str
    algorithm: str
    params: str
    ranks: int
    topology: str
    size_bytes: int
    time_s: float
    lower_bound_s: float

    def as_dict(self) -> dict:
        return asdict(self)


def short_name(algorithm: str) -> str:
    """An algorithm's name without its collective ("alltoall/bruck" -> "bruck"); a schedule read from a file may
    name none, or none with a collective."""
    return algorithm.split("/", 1)[-1] or "(unnamed)"


def row_labels(rows: list[EstimateRow]) -> list[str]:
    """A short label per row: the algorithm without its collective, plus the parameters that differ between
    that algorithm's rows (``multiphase[partition=3,3]``) when it was priced with several parameter sets."""
    def parsed(params: str) -> dict:
        return dict(kv.split("=", 1) for kv in params.split(";") if "=" in kv)
    variants: dict[str, list[dict]] = {}
    for r in rows:
        seen = variants.setdefault(r.algorithm, [])
        if parsed(r.params) not in seen:
            seen.append(parsed(r.params))
    out = []
    for r in rows:
        short, sets = short_name(r.algorithm), variants[r.algorithm]
        keys = sorted({k for d in sets for k in d if len({x.get(k) for x in sets}) > 1})
        mine = parsed(r.params)
        out.append(short + ("[" + " ".join(f"{k}={mine.get(k, '')}" for k in keys) + "]" if keys else ""))
    return out


def estimate(sched: _core.Schedule, sizes, machine: str | Machine | None = None, model: str | None = None,
             topology: str | None = None, max_memory=None) -> list[EstimateRow]:
    """Analytic time of a schedule for each size (allgather: bytes per rank; alltoall: per destination;
    allreduce: the whole vector) with the lower bound next to it. `machine`: a Machine, or a bundled name or TOML
    file (machines.resolve_machine); or `model`, a model spec."""
    _schedule_of(sched, "estimate")
    spec = resolve_machine(machine, model).model
    topo = topology or sched.topology or f"full:{sched.ranks}"
    sizes = [parse_size_any(x) for x in (sizes if isinstance(sizes, (list, tuple)) else _core.parse_sizes(sizes))]
    times = _core.estimate(sched, topo, spec, [float(n) for n in sizes], _max_memory(max_memory))
    for n, t in zip(sizes, times):
        if not math.isfinite(t):
            raise CollplanError(f"model {spec}: the estimate at {n} bytes overflows ({t} s; allowed: finite times, "
                                "so constants well below 1e308)")
    return [EstimateRow(sched.collective, sched.algorithm, sched.params, sched.ranks, topo, n, t,
                        _core.lower_bound(sched.collective, sched.ranks, topo, spec, float(n)))
            for n, t in zip(sizes, times)]


def lower_bound(collective: str, ranks: int, size, machine: str | Machine | None = None, model: str | None = None,
                topology: str | None = None) -> float:
    m = resolve_machine(machine, model)
    return _core.lower_bound(collective, ranks, topology or m.topology or f"full:{ranks}", m.model,
                             float(parse_size_any(size)))


def parse_size_any(x) -> int:
    if isinstance(x, int):
        if x < 0:
            raise CollplanError(f"size {x} is invalid (allowed: >= 0 bytes)")
        return x
    return _core.parse_size(str(x))
