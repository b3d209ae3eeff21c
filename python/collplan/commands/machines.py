"""`collplan machines`: the bundled machine descriptions."""
from __future__ import annotations

from ..machines import load_machine, machine_names


def register(sub) -> None:
    p = sub.add_parser("machines", help="list bundled machine files")
    p.add_argument("-v", "--verbose", action="store_true", help="show model constants and their sources")
    p.set_defaults(func=cmd_machines)


def cmd_machines(args) -> int:
    for name in machine_names():
        m = load_machine(name)
        print(f"{m.name:16s} {m.topology:16s} {m.description}")
        if args.verbose:
            print(f"{'':16s} model: {m.model}")
            for k, v in m.sources.items():
                print(f"{'':16s}   {k}: {v}")
    return 0
