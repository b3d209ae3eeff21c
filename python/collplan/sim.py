"""Simulation of schedules (loggp, flow, packet): the Python face of src/collplan/sim (docs/simulation.md).

    import collplan
    s = collplan.schedule("alltoall/pairwise", topology="torus:8x8")
    r = collplan.simulate(s, machine="a2at-torus", fidelity="packet", size="64KiB")
    r.time_s, r.ratio, r.link_utilisation()
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import _core
from ._core import CollplanError
from .api import _schedule_of, parse_size_any
from .limits import max_memory as limit_of
from .machines import Machine, resolve_machine

FIDELITIES = ["loggp", "flow", "packet"]
# Bins of the per-direction link use over time: a plot shows a few thousand at most (kMaxTimeBins in
# src/collplan/sim/simulate.hpp, which the core checks as well).
MAX_BINS = 1_000_000


@dataclass
class Simulation:
    """One simulated run. Times in seconds; link arrays are indexed by the topology's directed link ids."""
    collective: str
    algorithm: str
    params: str
    ranks: int
    topology: str
    fidelity: str
    size_bytes: int
    model: str
    network: str
    time_s: float
    critical_rank: int
    rank_time_s: list
    lower_bound_s: float        # the analytic lower bound (docs/models.md)
    link_bound_s: float         # the busiest directed link's bytes at link bandwidth (flow, packet; 0 for loggp)
    ideal_s: float              # max(lower_bound_s, link_bound_s)
    events: int
    messages: int
    packets: int
    wall_s: float
    state_bytes: int
    link_s_per_byte: float = 0.0
    link_bytes: list = field(default_factory=list, repr=False)
    link_busy_s: list = field(default_factory=list, repr=False)
    link_direction: list = field(default_factory=list, repr=False)
    directions: list = field(default_factory=list)
    bin_s: float = 0.0
    direction_bytes: list = field(default_factory=list, repr=False)

    @property
    def ratio(self) -> float:
        """Simulated time over the ideal (lower bound or busiest link, whichever is larger)."""
        return self.time_s / self.ideal_s if self.ideal_s > 0 else float("nan")

    def link_utilisation(self) -> dict:
        """Per direction class and over all links: mean and max of busy time / completion time."""
        if not self.link_busy_s or self.time_s <= 0:
            return {}
        util = [b / self.time_s for b in self.link_busy_s]
        out = {"all": {"mean": sum(util) / len(util), "max": max(util)}}
        for d, name in enumerate(self.directions):
            u = [x for x, c in zip(util, self.link_direction) if c == d]
            if u:
                out[name] = {"mean": sum(u) / len(u), "max": max(u)}
        return out

    def direction_bandwidth(self) -> dict:
        """Per direction class, the mean bandwidth per link (bytes/s) in each time bin."""
        if not self.bin_s:
            return {}
        counts = [self.link_direction.count(d) for d in range(len(self.directions))]
        return {name: [b / self.bin_s / max(1, counts[d]) for b in self.direction_bytes[d]]
                for d, name in enumerate(self.directions)}

    def as_dict(self, links: bool = False) -> dict:
        d = {k: getattr(self, k) for k in ("collective", "algorithm", "params", "ranks", "topology", "fidelity",
                                           "size_bytes", "model", "network", "time_s", "critical_rank",
                                           "lower_bound_s", "link_bound_s", "ideal_s", "events", "messages",
                                           "packets", "wall_s", "state_bytes")}
        d["ratio"] = self.ratio
        d["rank_time_s"] = {"min": min(self.rank_time_s, default=0.0), "max": max(self.rank_time_s, default=0.0)}
        d["link_utilisation"] = self.link_utilisation()
        if links:
            d["rank_time_s"] = self.rank_time_s
            d["link_bytes"] = self.link_bytes
            d["link_busy_s"] = self.link_busy_s
            d["link_direction"] = self.link_direction
            d["directions"] = self.directions
            d["bin_s"] = self.bin_s
            d["direction_bytes"] = self.direction_bytes
        return d


def _resolve(machine, model, network, topology, sched) -> tuple[str, str, str]:
    m = resolve_machine(machine, model)  # a machine file is read once, for its model and its network
    spec, net = m.model, m.network
    if network:
        net = ",".join(x for x in (net, network) if x)
        net = _override(net)
    topo = topology or sched.topology or f"full:{sched.ranks}"
    return spec, _core.check_network(net), topo


def _with_ports(spec: str, net: str) -> str:
    """The model spec with the network's `ports` (what the simulation ran with), for the lower bound: a node's
    bandwidth bound divides by its ports."""
    ports = spec_items(net, "network spec").get("ports")
    if ports is None:
        return spec
    kind, _, keys = spec.partition(":")
    kept = {k: v for k, v in spec_items(keys, "model spec").items() if k != "ports"}
    return _core.check_model(f"{kind}:" + ",".join(f"{k}={v}" for k, v in {**kept, "ports": ports}.items()))


def spec_items(spec: str, what: str = "network spec") -> dict[str, str]:
    """"a=1,b=2,a=3" -> {"b": "2", "a": "3"}: the keys of a spec string, later ones winning (machine defaults
    overridden by the caller)."""
    items: dict[str, str] = {}
    for kv in spec.split(","):
        if not kv.strip():
            continue
        if "=" not in kv:
            raise CollplanError(f"{what}: expected key=value, got '{kv.strip()}'")
        k, v = kv.split("=", 1)
        items.pop(k.strip(), None)
        items[k.strip()] = v.strip()
    return items


def _override(spec: str) -> str:
    """Later keys win: "a=1,b=2,a=3" -> "b=2,a=3"."""
    return ",".join(f"{k}={v}" for k, v in spec_items(spec).items())


def simulate(sched: _core.Schedule, machine: str | Machine | None = None, model: str | None = None,
             fidelity: str = "flow", size=0, network: str = "", topology: str | None = None, seed: int = 0,
             progress: bool = False, bins: int = 200, max_memory=None) -> Simulation:
    """Simulate a schedule on a machine (a Machine, a bundled name or a TOML file) or a model spec plus network
    parameters.

    size: the collective's message size (int bytes or "64KiB"); network: "key=value,..." overriding the machine's
    [network] table; fidelity: loggp, flow or packet; max_memory: the limit (default a quarter of the RAM)."""
    _schedule_of(sched, "simulate")
    if fidelity not in FIDELITIES:
        raise CollplanError(f"unknown fidelity '{fidelity}' (allowed: {', '.join(FIDELITIES)})")
    spec, net, topo = _resolve(machine, model, network, topology, sched)
    n = parse_size_any(size)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 64:
        raise CollplanError(f"seed {seed!r} is invalid (allowed: an integer 0..{(1 << 64) - 1})")
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= MAX_BINS:
        raise CollplanError(f"bins {bins!r} is out of range (allowed: an integer 1..{MAX_BINS})")
    r = _core.simulate(sched, topo, spec, net, fidelity, float(n), int(seed), bool(progress), int(bins),
                       limit_of(max_memory))
    lb = _core.lower_bound(sched.collective, sched.ranks, topo, _with_ports(spec, net), float(n))
    link_bound = max(r["link_bytes"], default=0) * r["link_s_per_byte"]
    return Simulation(collective=sched.collective, algorithm=sched.algorithm, params=sched.params, ranks=sched.ranks,
                      topology=topo, fidelity=fidelity, size_bytes=n, model=spec, network=net,
                      time_s=r["time_s"], critical_rank=r["critical_rank"], rank_time_s=r["rank_time_s"],
                      lower_bound_s=lb, link_bound_s=link_bound, ideal_s=max(lb, link_bound),
                      events=r["events"], messages=r["messages"], packets=r["packets"], wall_s=r["wall_s"],
                      state_bytes=r["state_bytes"], link_s_per_byte=r["link_s_per_byte"],
                      link_bytes=r["link_bytes"], link_busy_s=r["link_busy_s"], link_direction=r["link_direction"],
                      directions=r["directions"], bin_s=r["bin_s"], direction_bytes=r["direction_bytes"])
