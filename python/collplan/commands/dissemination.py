"""`collplan dissemination`: the n-way dissemination allreduce's last-round plan and the cost of each n."""
from __future__ import annotations

from .. import dissemination
from ..tables import render
from .._core import format_time
from ._common import RANKS, add_json_csv, add_max_memory, int_arg, print_json_csv


def register(sub) -> None:
    p = sub.add_parser("dissemination", help="n-way dissemination allreduce: 5-tuple/fallback plan and cost per n",
                       epilog="example:\n  collplan dissemination --ranks 9 --size 8B")
    p.add_argument("--ranks", type=RANKS, required=True, help="number of ranks P")
    p.add_argument("--size", default="8B", help="vector size (default 8B)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--machine", help="bundled machine or TOML file (default: the LogGP model of n=auto)")
    g.add_argument("--model", help="model spec")
    p.add_argument("--takeout", default="keep", choices=["keep", "inverse", "none"],
                   help="taking out a partial result (docs/allreduce.md): inverse operation, keep a second buffer "
                   "(no inverse needed), or none (only plans that take nothing out)")
    p.add_argument("--n-max", type=int_arg("--n-max", 1, dissemination.MAX_N), default=dissemination.MAX_N, help="the largest n priced")
    add_json_csv(p, "the cost of every n")
    add_max_memory(p)
    p.set_defaults(func=cmd_dissemination)


def cmd_dissemination(args) -> int:
    rows = dissemination.costs(args.ranks, args.size, args.machine, args.model, args.n_max, args.takeout,
                               max_memory=args.max_memory)
    best = min(rows, key=lambda r: r["time_s"])["n"]
    flat = [{k: v for k, v in r.items() if k != "plan"} | {"rounds": r["plan"]["rounds"],
                                                           "takeout": r["plan"]["takeout"]} for r in rows]
    if print_json_csv(args, {"ranks": args.ranks, "best_n": best, "candidates": rows}, flat):
        return 0
    table = []
    for r in rows:
        t = r["plan"]["tuple"]
        how = (f"case {t['case']}" if t["case"] else "g_B") if t else "fallback"
        table.append([r["n"], r["plan"]["rounds"], "/".join(map(str, r["messages_per_round"])), int(r["bytes_sent"]),
                      r["reductions"], r["copies"], how, "+".join(map(str, r["plan"]["prefixes"])) or "-",
                      r["plan"]["takeout"], format_time(r["time_s"]) + (" *" if r["n"] == best else "")])
    print(render(["n", "rounds", "msgs/round", "bytes", "reductions", "copies", "last round", "prefixes",
                        "take out", "time"], table))
    print(f"best n = {best}")
    return 0
