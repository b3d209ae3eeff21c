"""Complete exchange on hypercubes (Nicol & Bokhari's Direct, Standard and Multiphase exchange) and link loads.

The cost model is the paper's circuit model (docs/exchange.md)::

    import collplan.exchange as ex
    ex.optimal_partition(6, 32)            # {'partition': [3, 3], 'cost_s': 0.008774..., 'evaluations': 1, ...}
    ex.threshold_table(6)                  # [(0.0, (2, 2, 2)), (6.29..., (3, 3)), (200.97..., (6,))]
    ex.cost("direct_exchange", 6, 32)      # 0.016770... s

``model`` is ``"ipsc860"`` (the paper's iPSC/860 constants for the given d, the default), a model spec
(``"hockney:alpha=2us,beta=1ns/B"``), or ``machine=NAME`` for a bundled machine file's model.
"""
from __future__ import annotations

from . import _core
from ._core import CollplanError
from .machines import load_machine

ALGORITHMS = ("direct_exchange", "standard_exchange", "multiphase")


def _model(model: str | None, machine: str | None) -> str:
    if machine is not None and model is not None:
        raise CollplanError("give at most one of a model and a machine")
    if machine is not None:
        return load_machine(machine).model
    return model or "ipsc860"


def costs(d: int, model: str | None = None, machine: str | None = None) -> dict:
    """lambda_s, tau_s_per_byte, delta_s, rho_s_per_byte, barrier_s (= Q(d)) of the model for a d-cube."""
    return _core.multiphase_costs(_model(model, machine), d)


def cost(algorithm: str, d: int, size: float, partition=None, model: str | None = None,
         machine: str | None = None) -> float:
    """The paper's closed form: direct_exchange (sec. 2.2), standard_exchange (2.3) or multiphase (eq. 2)."""
    spec, name = _model(model, machine), algorithm.split("/")[-1]
    if name == "direct_exchange":
        return _core.direct_exchange_cost(spec, d, float(size))
    if name == "standard_exchange":
        return _core.standard_exchange_cost(spec, d, float(size))
    if name == "multiphase":
        if partition is None:
            raise CollplanError("multiphase needs a partition, e.g. partition=(3, 3)")
        return _core.multiphase_cost(spec, d, [int(x) for x in partition], float(size))
    raise CollplanError(f"unknown algorithm '{algorithm}' (allowed: {', '.join(ALGORITHMS)})")


def optimal_partition(d: int, size: float, model: str | None = None, machine: str | None = None) -> dict:
    """The cheapest multiphase partition for blocks of `size` bytes (at most 2 (sqrt(d) + 1) evaluations)."""
    return _core.optimal_partition(_model(model, machine), d, float(size))


def threshold_table(d: int, model: str | None = None, machine: str | None = None) -> list[tuple[float, tuple]]:
    """[(m_from, partition), ...]: partition is optimal from m_from bytes up to the next entry's m_from."""
    return [(m, tuple(p)) for m, p in _core.threshold_table(_model(model, machine), d)]


def partition_for(table: list[tuple[float, tuple]], size: float) -> tuple:
    """The partition of a threshold table that covers `size` bytes."""
    best = table[0][1]
    for m_from, part in table:
        if m_from <= size:
            best = part
    return best


def integer_partitions(d: int) -> list[tuple]:
    return [tuple(p) for p in _core.integer_partitions(d)]


def link_loads(schedule: _core.Schedule, topology: str | None = None) -> dict:
    """Units (blocks) per directed link when every send is routed over the topology (with its tie hint):
    {'units': [...], 'max_units', 'busiest_link', 'total_units'}. max_units * m * beta is the time the busiest
    link needs -- the "ideal time" of the A2AT study."""
    return _core.link_loads(schedule, topology or schedule.topology or f"full:{schedule.ranks}")
