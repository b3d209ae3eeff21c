"""`collplan simulate`: run a schedule through the loggp, flow or packet simulator (docs/simulation.md)."""
from __future__ import annotations

import sys

from .. import _core
from .._core import CollplanError
from ..machines import machine_names, resolve_machine
from ..output import printable
from ..planner import candidates
from ..sim import FIDELITIES, simulate, spec_items
from ..plot import check_plot_path
from ..progress import Progress
from ..tables import render
from ._common import UINT64_MAX, add_json_csv, add_problem, file_arg, int_arg, print_json_csv, problem_of, read_schedule


# The network keys each fidelity reads (src/collplan/sim/common/params.cpp; docs/simulation.md, "Network
# parameters", has units and defaults); tests/python/test_ux.py checks the list against the simulators' own.
NETWORK_KEYS = {
    "every fidelity": ["ports"],
    "loggp": ["L", "o", "g", "G", "O", "eager", "cpus"],
    "flow": ["link_bw", "node_contention", "sharing", "crosstraffic"],
    "packet": ["link_bw", "mtu", "header", "flit", "link_latency", "router_latency", "buffer", "vcs", "dateline",
               "switching", "voq", "inject_bw", "eject_bw", "overhead", "pacing", "pacing_gap", "pacing_factor",
               "arbitration"],
}


def register(sub) -> None:
    keys = "".join(f"\n  {who}: {', '.join(names)}" for who, names in NETWORK_KEYS.items())
    p = sub.add_parser("simulate", help="simulate a schedule: LogGP events, network flows or packets",
                       epilog="example:\n"
                       "  collplan simulate --collective alltoall --algorithm a2at --machine a2at-torus "
                       "--fidelity packet --size 64KiB --plot links.png\n"
                       f"network keys (--set K=V, --network K=V,...; units and defaults: docs/simulation.md):{keys}")
    add_problem(p)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--machine", help=f"bundled machine ({', '.join(machine_names())}) or a TOML file")
    g.add_argument("--model", help="model spec, e.g. hockney:alpha=1us,beta=0.25ns/B")
    p.add_argument("--fidelity", choices=FIDELITIES, default="flow",
                   help="loggp (events per message), flow (max-min fair link sharing) or packet (MTU packets)")
    p.add_argument("--network", default="", help="network parameters key=value,... (override the machine's)")
    p.add_argument("--set", action="append", metavar="K=V", help="one network parameter (repeatable)")
    p.add_argument("--size", default=None, help="collective message size (default 1MiB)")
    p.add_argument("--sizes", default=None, help="several sizes: 16B..1MiB, 8,1KiB,... (time-vs-size)")
    p.add_argument("--seed", type=int_arg("--seed", 0, UINT64_MAX), default=0, help="seed (packet: arbitration=random)")
    add_json_csv(p, "one row per algorithm and size")
    p.add_argument("--links", action="store_true", help="with --json: per-link and per-rank arrays too")
    p.add_argument("--plot", metavar="FILE", type=file_arg("--plot"), help="one size: per-direction link utilisation (2D torus heat maps); "
                   "several: time vs size (.png, .svg or .pdf)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_simulate)


def _network(args) -> str:
    parts = [args.network] if args.network else []
    for kv in args.set or []:
        if "=" not in kv or kv.startswith("="):
            raise CollplanError(f"--set '{kv}' is not of the form KEY=VALUE")
        parts.append(kv)
    return ",".join(parts)


def cmd_simulate(args) -> int:
    if args.size and args.sizes:
        raise CollplanError("give --size or --sizes, not both")
    machine = resolve_machine(args.machine, args.model)
    sizes = _core.parse_sizes(args.sizes) if args.sizes else [_core.parse_size(args.size or "1MiB")]
    net = _network(args)
    if args.plot:
        check_plot_path(args.plot)
    if args.schedule:
        scheds = [read_schedule(args.schedule, args.max_memory)]
    else:  # one algorithm, or every one that applies with its default parameters (no machine to propose sets for:
        # a simulation per parameter set would multiply the runs; `collplan estimate --all-params` compares them)
        scheds = [s for _, s in candidates(problem_of(args, machine.topology), None, sizes, args.max_memory)[0]]
    # one run on a terminal: the simulator's own progress line (events, simulated time); else ours
    own = len(scheds) * len(sizes) == 1 and not args.no_progress and sys.stderr.isatty()
    rows, own_ports = [], {}
    named = _names_ports(machine, net)
    with Progress("simulations", len(scheds) * len(sizes), not args.no_progress and not own,
                  command="simulate") as bar:
        for s in scheds:
            ports = 1 if named else max(1, s.ports)
            if ports > 1:
                own_ports[s.algorithm] = ports
            for n in sizes:
                rows.append(simulate(s, machine=machine, fidelity=args.fidelity, size=n,
                                     network=",".join(x for x in (net, f"ports={ports}" if ports > 1 else "") if x),
                                     topology=args.topology or None, seed=args.seed, progress=own,
                                     max_memory=args.max_memory))
                bar.step()
    if args.plot:
        from ..simplot import plot_links, plot_times
        if len(rows) == 1:
            plot_links(rows[0], args.plot)
        else:
            plot_times(rows, args.plot)
    if print_json_csv(args, {"results": [r.as_dict(links=args.links) for r in rows]},
                      [r.as_dict(links=False) for r in rows]):
        return 0
    _print(rows, args, own_ports)
    return 0


def _names_ports(machine, net: str) -> bool:
    """Whether --set/--network or the machine file state the ports a node has (a2at-torus 4, paragon 1). Where
    none does, a node simulates with the ports the algorithm's ops use (an all-port torgos or A2AT sends on
    several at once, as its GOAL export says), 1 for an algorithm that names none."""
    return ("ports" in spec_items(net) or "ports" in machine.sources or "ports" in spec_items(machine.network)
            or "ports" in spec_items(machine.model.partition(":")[2], "model spec"))


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _print(rows, args, own_ports: dict) -> None:
    r0 = rows[0]
    where = args.machine or args.model
    print(f"# {r0.collective}, P={r0.ranks} on {printable(r0.topology)}, {where}, fidelity {r0.fidelity}")
    table = []
    for r in rows:
        u = r.link_utilisation().get("all")
        table.append([r.algorithm, _core.format_bytes(r.size_bytes), _core.format_time(r.time_s),
                      _core.format_time(r.ideal_s), f"{r.ratio:.3f}",
                      f"{_pct(u['mean'])}/{_pct(u['max'])}" if u else "-", r.events, f"{r.wall_s:.2f}s"])
    print(render(["algorithm", "size", "time", "ideal", "ratio", "links mean/max", "events", "wall"], table,
                 left=(0,)))
    if len(rows) == 1 and r0.directions:
        util = r0.link_utilisation()
        print("# link utilisation by direction (mean/max): " +
              ", ".join(f"{d} {_pct(util[d]['mean'])}/{_pct(util[d]['max'])}" for d in r0.directions if d in util))
    if len(rows) == 1:
        print(f"# per-rank completion: min {_core.format_time(min(r0.rank_time_s))}, "
              f"max {_core.format_time(max(r0.rank_time_s))} (rank {r0.critical_rank})")
    for name, ports in own_ports.items():
        print(f"# {printable(name)}: {ports} ports per node, the algorithm's own (the machine names none; "
              "--set ports=N to change)")
    if args.plot:
        print(f"# plot written to {args.plot}")
