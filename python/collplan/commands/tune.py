"""`collplan tune`: the gossip paper's "small program" -- the best (a, b, k) of circgos, torgos or cubgos."""
from __future__ import annotations

import json

from ._common import float_arg, params_of


def register(sub) -> None:
    p = sub.add_parser("tune", help="best parameters (a, b, k) of circgos/torgos/cubgos for a startup ratio r")
    p.add_argument("--algorithm", required=True, help="circgos, torgos or cubgos")
    p.add_argument("--topology", required=True, help="ring:n / line:n (circgos), torus:AxB / mesh:AxB (torgos), "
                                                     "torus:AxBxC.. (cubgos)")
    p.add_argument("--r", type=float_arg("--r", 0), action="append", required=True,
                   help="startup time / transfer time of one PU's data (repeatable)")
    p.add_argument("--param", action="append", metavar="K=V", help="fix a parameter (a, b, k, colours, radix)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tune)


def cmd_tune(args) -> int:
    from ..gossip import tune
    fixed = params_of(args.param)
    rows = [tune(args.algorithm, args.topology, r, fixed) for r in args.r]
    if args.json:
        print(json.dumps({"results": rows}, indent=2))
        return 0
    print(f"# {rows[0]['algorithm']} on {rows[0]['topology']}; times in units of one PU's transfer time")
    print(f"{'r':>10s} {'a':>5s} {'b':>4s} {'k':>4s} {'formula':>10s} {'estimate':>10s} {'lower bound':>12s}")
    for x in rows:
        print(f"{x['r']:10.4g} {x['a']:5d} {x['b']:4d} {x['k']:4d} {x['formula_units']:10.1f} "
              f"{x['estimate_units']:10.1f} {x['lower_bound_units']:12.1f}")
    return 0
