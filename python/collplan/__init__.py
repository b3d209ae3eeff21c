"""collplan: plan, verify, simulate and run collective communication on parallel machines.

The Python API mirrors the command line::

    import collplan
    s = collplan.schedule("allgather/ring", ranks=8)               # or topology="torus:4x2"
    collplan.verify(s)                                              # {'ok': True, ...}
    collplan.estimate(s, machine="ib-qdr", sizes=["16B", "1MiB"])   # [EstimateRow(...), ...]
    collplan.simulate(s, machine="ib-qdr", fidelity="flow", size="1MiB")  # Simulation(...)
"""
from __future__ import annotations

from ._core import CollplanError, Schedule, Topology, format_bytes, format_time, parse_size, parse_sizes, parse_time
from .api import EstimateRow, algorithms, estimate, lower_bound, schedule, verify
from .machines import Machine, load_machine, machine_names
from .sim import Simulation, simulate

__all__ = [
    "CollplanError", "Schedule", "Topology", "EstimateRow", "Machine",
    "algorithms", "schedule", "verify", "estimate", "lower_bound", "load_machine", "machine_names",
    "parse_size", "parse_sizes", "parse_time", "format_bytes", "format_time", "Simulation", "simulate",
]
__version__ = "0.1.0"
