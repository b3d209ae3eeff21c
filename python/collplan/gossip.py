"""The gossip family's Python side: the paper's unit model, its lower bounds and the parameter search.

Times of the paper (Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori") are in units of l t_l, the transfer time
of one PU's packet of l flits; r = t_s / (l t_l). `unit_model(r, ports)` is the wormhole model in which one PU's
6000-byte contribution takes exactly 1 unit (6 us) and the startup r units, so `units(schedule, r)` reads the
estimate in the paper's units. The planner and `collplan tune` use `tune()`.
"""
from __future__ import annotations

import math
import sys

from . import _core
from .api import schedule
from .limits import max_memory as limit_of

UNIT_BYTES = 6000          # divisible by 1, 2 and 3 colours: every chunk is a whole number of 1-byte flits
UNIT_SECONDS = 6e-6        # 6000 flits at 1 ns


def unit_model(r: float, ports: int = 2, duplex: bool = True) -> str:
    """Wormhole model in the paper's units: startup r units, one PU's data 1 unit, no hop time (the paper
    neglects distance)."""
    startup_us = r * UNIT_SECONDS * 1e6
    if not math.isfinite(startup_us):
        raise _core.CollplanError(f"r={r:g} is too large: the startup of r units overflows (allowed: r up to "
                                  f"{sys.float_info.max / (UNIT_SECONDS * 1e6):.3g})")
    return (f"wormhole:startup={startup_us:.9g}us,flit=1B,flit_time=1ns,hop_time=0ns,ports={ports}"
            + ("" if duplex else ",duplex=0"))


def units(sched, r: float, ports: int = 2, duplex: bool = True, max_memory=None) -> float:
    """The estimate of a schedule in the paper's units for ratio r."""
    t = _core.estimate(sched, sched.topology, unit_model(r, ports, duplex), [float(UNIT_BYTES)],
                       limit_of(max_memory))[0]
    return t / UNIT_SECONDS


def lower_bound_units(topology: str, r: float, ports: int = 2) -> float:
    p = _core.Topology.parse(topology).nodes
    return _core.lower_bound("allgather", p, topology, unit_model(r, ports), float(UNIT_BYTES)) / UNIT_SECONDS


def ports_of(topology: str) -> int:
    """All-port: the node degree of a grid (2 per dimension)."""
    return 2 * len(_core.Topology.parse(topology).dims)


def resolved(algorithm: str, topology: str, params: dict | None = None) -> list[dict]:
    """The parameters a generator chooses for 'auto' (per phase for highdimgos)."""
    return _core.gossip_resolved_params(algorithm, topology, {k: str(v) for k, v in (params or {}).items()})


def tune(algorithm: str, topology: str, r: float, fixed: dict | None = None, max_memory=None) -> dict:
    """The paper's "small program": the best parameters of circgos, torgos or cubgos for ratio r by the cost
    formulas (fixed parameters restrict the search). Returns the parameters, the formula's cost in units and the
    estimate of the generated schedule in units (all-port unit model). The schedule and its estimate are refused
    (CollplanError naming the need and the limit) when they would need more than max_memory (default: a quarter
    of the RAM)."""
    name = algorithm if "/" in algorithm else f"allgather/{algorithm}"
    params = {k: str(v) for k, v in (fixed or {}).items()}
    params["r"] = repr(float(r))
    for key in ("a", "b", "k"):
        params.setdefault(key, "auto")
    short = name.split("/", 1)[1]
    if short not in ("circgos", "torgos", "cubgos"):
        raise _core.CollplanError(f"tune: algorithm '{algorithm}' has no (a, b, k) to tune (allowed: circgos, "
                                  "torgos, cubgos)")
    chosen = resolved(name, topology, params)[0]
    t = _core.Topology.parse(topology)
    if short == "circgos":
        cost = _core.gossip_units("circgos", t.dims[0], "ring" in t.spec, r, 1.0, chosen["a"], chosen["b"],
                                  chosen["k"], chosen["radix"])
    else:
        cost = _core.gossip_best_diagonal(topology, r, short == "cubgos", chosen["colours"], chosen["a"],
                                          chosen["b"], chosen["k"], chosen["radix"])["cost"]
    final = {k: str(chosen[k]) for k in ("a", "b", "k")}
    final.update({k: v for k, v in params.items() if k not in ("a", "b", "k")})
    s = schedule(name, topology=topology, params=final, max_memory=max_memory)
    return {"algorithm": name, "topology": t.spec, "r": r, "a": chosen["a"], "b": chosen["b"], "k": chosen["k"],
            "formula_units": cost, "estimate_units": units(s, r, ports_of(topology), max_memory=max_memory),
            "lower_bound_units": lower_bound_units(t.spec, r, ports_of(topology))}


def best_circgos(n: int, r: float, wrap: bool = True) -> tuple[dict, float]:
    """The best circgos on a ring (or linear array) of n for ratio r, as the paper's Table 1 reports it: the
    small program's choice, checked against approach 1's (a = n) and circgos(n, 3, 1)'s settings by the estimate
    (the formula counts lock-step steps; the estimate is the judge). Returns (parameters, units)."""
    topo = f"{'ring' if wrap else 'line'}:{n}"
    f = _core.gossip_best_circgos(n, wrap, float(r))
    cands = [(f["a"], f["b"], f["k"]), (n, 2, 1)] + ([(3, 3, 1)] if n >= 3 else [])
    best = None
    for a, b, k in dict.fromkeys(cands):
        s = schedule("allgather/circgos", topology=topo, params={"a": a, "b": b, "k": k})
        u = units(s, r, 2)
        if best is None or u < best[1] - 1e-9:
            best = ({"a": a, "b": b, "k": k}, u)
    return best


def plot_series(path, x, series: dict, xlabel: str, ylabel: str, title: str, logx=True, logy=True,
                styles: dict | None = None) -> None:
    """One line per series (name -> y values, None = missing), saved in the format of path's extension."""
    from .plot import legend_outside, pyplot, save_figure
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 4.4), dpi=110)
    for name, ys in series.items():
        pts = [(a, b) for a, b in zip(x, ys) if b is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], (styles or {}).get(name, "-o"), ms=3, label=name)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(ax)
    save_figure(fig, path)
