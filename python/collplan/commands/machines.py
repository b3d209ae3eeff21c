"""`collplan machines`: the bundled machine descriptions."""
from __future__ import annotations

from ..machines import load_machine, machine_names
from ..tables import render, wrap
from ._common import add_json_csv, print_json_csv


def register(sub) -> None:
    p = sub.add_parser("machines", help="list bundled machine files",
                       description="The machine files bundled with collplan: topology, model and where every "
                       "constant comes from.", epilog="example:\n  collplan machines -v\n  collplan machines --csv")
    p.add_argument("-v", "--verbose", action="store_true", help="show model constants and their sources")
    add_json_csv(p, "every machine (name, topology, model, network, description, sources)")
    p.set_defaults(func=cmd_machines)


def cmd_machines(args) -> int:
    machines = [load_machine(name) for name in machine_names()]
    records = [{"name": m.name, "topology": m.topology, "model": m.model, "network": m.network,
                "description": m.description, "sources": m.sources} for m in machines]
    if print_json_csv(args, {"machines": records}, records):
        return 0
    if not args.verbose:
        print(render(["name", "topology", "description"], [[m.name, m.topology or "-", m.description]
                                                            for m in machines], left=(0, 1, 2)))
        return 0
    for i, m in enumerate(machines):
        if i:
            print()
        print(wrap(f"{m.name} ({m.topology or 'no topology'}): {m.description}", ""))
        print(wrap(f"model: {m.model}", "  "))
        if m.network:
            print(wrap(f"network: {m.network}", "  "))
        for k, v in m.sources.items():
            print(wrap(f"{k}: {v}", "    "))
    return 0
