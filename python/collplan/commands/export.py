"""`collplan export`: a schedule as collplan's text form or as LogGOPSim's GOAL."""
from __future__ import annotations

import sys

from .. import _core
from ..machines import resolve_machine
from ..output import atomic_write
from ._common import add_problem, file_arg, schedule_from_args


def register(sub) -> None:
    p = sub.add_parser("export", help="write a schedule as collplan text or LogGOPSim GOAL",
                       epilog="example:\n"
                       "  collplan export --collective allgather --algorithm ring --ranks 8 -o ring8.txt\n"
                       "  collplan export --collective alltoall --algorithm bruck --ranks 16 --format goal --size 4KiB "
                       "-o -")
    add_problem(p)
    p.add_argument("--format", choices=["text", "goal"], default="text",
                   help="text: collplan's schedule format (docs/schedule.md); goal: LogGOPSim's input")
    p.add_argument("--size", default="1KiB", help="collective message size for GOAL byte counts")
    p.add_argument("--machine", help="machine whose gamma/rho price reductions and copies in GOAL")
    p.add_argument("--model", help="model spec instead of a machine")
    p.add_argument("-o", "--output", required=True, type=file_arg("-o", stdout=True), help="output file, or - for stdout")
    p.set_defaults(func=cmd_export)


def cmd_export(args) -> int:
    s = schedule_from_args(args)
    if args.format == "text":
        out = s.to_text()
    else:
        gamma = rho = 0.0
        if args.machine or args.model:
            spec = resolve_machine(args.machine, args.model).model
            gamma, rho = _per_byte(spec, "gamma"), _per_byte(spec, "rho")
        block = _core.parse_size(args.size) / s.size_blocks
        out = s.to_goal(block, gamma, rho)
    if args.output == "-":
        sys.stdout.write(out)
    else:
        atomic_write(args.output, out)
        print(f"wrote {args.output} ({s.total_ops} ops, {args.format})", file=sys.stderr)
    return 0


def _per_byte(spec: str, key: str) -> float:
    for kv in spec.split(":", 1)[1].split(","):
        if kv.startswith(key + "="):
            v = kv.split("=", 1)[1]
            return _core.parse_time(v[:-2]) if v.endswith("/B") else 0.0
    return 0.0
