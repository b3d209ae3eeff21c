"""`collplan tune`: the gossip paper's "small program" -- the best (a, b, k) of circgos, torgos or cubgos."""
from __future__ import annotations

from ..progress import Progress
from ..tables import render
from ._common import add_json_csv, add_max_memory, float_arg, params_of, print_json_csv


def register(sub) -> None:
    p = sub.add_parser("tune", help="best parameters (a, b, k) of circgos/torgos/cubgos for a startup ratio r",
                       epilog="example:\n  collplan tune --algorithm torgos --topology torus:16x16 --r 10 --r 100")
    p.add_argument("--algorithm", required=True, help="circgos, torgos or cubgos")
    p.add_argument("--topology", required=True, help="ring:n / line:n (circgos), torus:AxB / mesh:AxB (torgos), "
                                                     "torus:AxBxC.. (cubgos)")
    p.add_argument("--r", type=float_arg("--r", 0), action="append", required=True,
                   help="startup time / transfer time of one PU's data (repeatable)")
    p.add_argument("--param", action="append", metavar="K=V", help="fix a parameter (a, b, k, colours, radix)")
    add_max_memory(p)
    p.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    add_json_csv(p, "the best parameters per r")
    p.set_defaults(func=cmd_tune)


def cmd_tune(args) -> int:
    from ..gossip import tune
    fixed = params_of(args.param)
    rows = []
    with Progress("r values", len(args.r), not args.no_progress, command="tune") as bar:
        for r in args.r:
            rows.append(tune(args.algorithm, args.topology, r, fixed, max_memory=args.max_memory))
            bar.step()
    if print_json_csv(args, {"results": rows}, rows):
        return 0
    print(f"# {rows[0]['algorithm']} on {rows[0]['topology']}; times in units of one PU's transfer time")
    print(render(["r", "a", "b", "k", "formula", "estimate", "lower bound"],
                 [[f"{x['r']:.4g}", x["a"], x["b"], x["k"], f"{x['formula_units']:.1f}", f"{x['estimate_units']:.1f}",
                   f"{x['lower_bound_units']:.1f}"] for x in rows]))
    return 0
