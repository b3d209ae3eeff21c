"""`collplan algorithms`: the registered algorithms, their parameters, topologies and sources."""
from __future__ import annotations

from ..api import algorithms
from ..tables import wrap
from ._common import COLLECTIVES, add_json_csv, print_json_csv


def register(sub) -> None:
    p = sub.add_parser("algorithms", help="list registered algorithms",
                       description="The registered algorithms: summary, parameters with their ranges, "
                       "topologies and the paper each comes from.",
                       epilog="example:\n  collplan algorithms --collective allreduce")
    p.add_argument("--collective", choices=COLLECTIVES, help="only this collective's algorithms (default: all)")
    add_json_csv(p, "the algorithms")
    p.set_defaults(func=cmd_algorithms)


def _params(a) -> str:
    return ", ".join(f"{p['name']}={p['default']} ({p['min']}..{p['max']})" if p["kind"] != "text"
                     else f"{p['name']}={p['default']}" for p in a["params"])


def cmd_algorithms(args) -> int:
    algs = algorithms(args.collective)
    records = [{"name": a["name"], "collective": a["collective"], "summary": a["summary"], "params": _params(a),
                "topologies": a["topologies"], "source": a["source"]} for a in algs]
    if print_json_csv(args, {"algorithms": algs}, records):
        return 0
    for a in algs:
        print(wrap(f"{a['name']}: {a['summary']}", ""))
        print(wrap(f"params: {_params(a) or '-'}; topologies: {', '.join(a['topologies']) or 'any'}", "    "))
        print(wrap(f"source: {a['source']}", "    "))
    return 0
