"""The n-way dissemination allreduce's last-round plans, 5-tuples and per-n costs (End et al., "Adaption of the n-way
dissemination algorithm for GASPI split-phase allreduce").

    from collplan import dissemination
    dissemination.plan(8, 2)             # {'rounds': 2, 'window': 3, 'tuple': {'s': 2, ...}, 'prefixes': [3, 2], ...}
    dissemination.five_tuples(13, 1)     # [] -- no 5-tuple: the fallback is used
    dissemination.costs(64, size="2KiB") # one dict per n = 1..7 under the default LogGP model
    dissemination.best_n(64)             # what --param n=auto picks
"""
from __future__ import annotations

from . import _core
from .api import parse_size_any
from .machines import resolve_machine

DEFAULT_MODEL: str = _core.default_dissemination_model
MAX_N: int = _core.dissemination_max_n


def plan(ranks: int, n: int, takeout: str = "keep") -> dict:
    """The adapted last round: tuple (None where no 5-tuple exists), prefixes, distances, take-out."""
    return _core.nway_plan(ranks, n, takeout)


def five_tuples(ranks: int, n: int) -> list[dict]:
    """Every solution (s, l_snd, l_rcv, j_snd, j_rcv) of the paper's eq. (8); l_rcv = -1 is the base border."""
    return _core.nway_five_tuples(ranks, n)


def _spec(machine: str | None, model: str | None) -> str:
    return DEFAULT_MODEL if machine is None and model is None else resolve_machine(machine, model).model


# The last round's fallback is a coin change over 0..P (an int and an int64 per value: nway_common.cpp).
_FALLBACK_BYTES_PER_RANK = 12


def costs(ranks: int, size="8B", machine: str | None = None, model: str | None = None, n_max: int = MAX_N,
          takeout: str = "keep", max_memory=None) -> list[dict]:
    """Rounds, messages per round, bytes, reductions, copies and time for n = 1..n_max (default model: LogGP).
    Refused before it allocates when the plan's tables would exceed max_memory (default a quarter of the RAM)."""
    from .limits import require
    require(float(ranks) * _FALLBACK_BYTES_PER_RANK, f"the dissemination plan at P={ranks}", max_memory)
    return _core.nway_costs(ranks, _spec(machine, model), float(parse_size_any(size)), n_max, takeout)


def best_n(ranks: int, size="8B", machine: str | None = None, model: str | None = None, n_max: int = MAX_N,
           takeout: str = "keep") -> int:
    return _core.best_dissemination_n(ranks, _spec(machine, model), float(parse_size_any(size)), n_max, takeout)
