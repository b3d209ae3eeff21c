"""`collplan algorithms`: the registered algorithms, their parameters, topologies and sources."""
from __future__ import annotations

import json

from ..api import algorithms
from ._common import COLLECTIVES


def register(sub) -> None:
    p = sub.add_parser("algorithms", help="list registered algorithms")
    p.add_argument("--collective", choices=COLLECTIVES)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_algorithms)


def cmd_algorithms(args) -> int:
    algs = algorithms(args.collective)
    if args.json:
        print(json.dumps({"algorithms": algs}, indent=2))
        return 0
    for a in algs:
        params = ", ".join(f"{p['name']}={p['default']} ({p['min']}..{p['max']})" if p["kind"] != "text"
                           else f"{p['name']}={p['default']}" for p in a["params"])
        print(f"{a['name']:32s} {a['summary']}")
        print(f"{'':32s}   params: {params or '-'}; topologies: {', '.join(a['topologies']) or 'any'}")
        print(f"{'':32s}   source: {a['source']}")
    return 0
