"""`collplan estimate`: analytic times of one algorithm or all of a collective over a range of sizes."""
from __future__ import annotations

import json

from .. import _core
from .._core import CollplanError
from ..api import OPS, _model_of, algorithms, estimate, row_labels, schedule, unsupported_op
from ..machines import load_machine, machine_names
from ._common import add_problem, matrix_of, ranks_topology, schedule_from_args


def register(sub) -> None:
    p = sub.add_parser("estimate", help="analytic time of algorithms over a range of sizes")
    add_problem(p)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--machine", help=f"bundled machine ({', '.join(machine_names())}) or a TOML file")
    g.add_argument("--model", help="model spec, e.g. hockney:alpha=1us,beta=1ns/B")
    p.add_argument("--sizes", default="16B..1MiB", help="16B..1MiB (powers of two), 1B..400B:50B, or 8,1KiB,...")
    p.add_argument("--op", choices=OPS, default="sum",
                   help="allreduce operation: with --algorithm all, algorithms that cannot compute it are declined")
    p.add_argument("--json", action="store_true")
    p.add_argument("--plot", metavar="FILE.png", help="write time vs size, one line per algorithm")
    p.set_defaults(func=cmd_estimate)


def cmd_estimate(args) -> int:
    machine_topo = load_machine(args.machine).topology if args.machine else ""
    sizes = _core.parse_sizes(args.sizes)
    if args.schedule or args.algorithm != "all":
        s = schedule_from_args(args, machine_topo)
        why = unsupported_op(s, args.op)
        if why:
            raise CollplanError(f"{s.algorithm} cannot compute --op {args.op}: {why}")
        rows = estimate(s, sizes, machine=args.machine, model=args.model, topology=args.topology or None,
                        max_memory=args.max_memory)
        return _report_estimates(rows, [], args)
    if not args.collective:
        raise CollplanError("estimate needs --collective with --algorithm all")
    if args.param:
        raise CollplanError("--param applies to one algorithm; give --algorithm NAME instead of all")
    matrix = matrix_of(args)
    ranks, topo = ranks_topology(args, machine_topo)
    p = ranks if ranks is not None else _core.Topology.parse(topo).nodes
    spec, _ = _model_of(args.machine, args.model)
    rows, declined = [], []
    for a in algorithms(args.collective):
        why = _core.applies(a["name"], p, topo or "", {})
        if why:
            declined.append({"algorithm": a["name"], "reason": why})
            continue
        # every parameter set the algorithm proposes for this model and size range (e.g. multiphase partitions)
        for params in _core.candidates(a["name"], p, topo or "", spec, float(min(sizes)), float(max(sizes))):
            s = schedule(a["name"], ranks=ranks, topology=topo, params=params, matrix=matrix, max_memory=args.max_memory)
            why = unsupported_op(s, args.op)
            if why:
                declined.append({"algorithm": a["name"], "reason": why})
                break
            rows += estimate(s, sizes, machine=args.machine, model=args.model, max_memory=args.max_memory)
    if not rows:
        raise CollplanError(f"no {args.collective} algorithm applies here: " +
                            "; ".join(f"{d['algorithm']}: {d['reason']}" for d in declined))
    return _report_estimates(rows, declined, args)


def _report_estimates(rows, declined, args) -> int:
    if args.plot:
        from ..plot import plot_estimates
        plot_estimates(rows, args.plot, title=_title(rows, args))
    if args.json:
        print(json.dumps({"results": [r.as_dict() for r in rows], "declined": declined}, indent=2))
        return 0
    _print_table(rows, declined, args)
    return 0


def _title(rows, args) -> str:
    where = args.machine or args.model
    return f"{rows[0].collective}, P={rows[0].ranks} on {rows[0].topology}, {where}"


def _print_table(rows, declined, args) -> None:
    names = row_labels(rows)
    algs = list(dict.fromkeys(names))
    sizes = list(dict.fromkeys(r.size_bytes for r in rows))
    by = {(name, r.size_bytes): r for name, r in zip(names, rows)}
    print(f"# {_title(rows, args)}; times are analytic estimates")
    widths = [max(10, len(a) + 2) for a in algs]
    print(f"{'size':>8s} " + "".join(f"{a:>{w}s}" for a, w in zip(algs, widths)) + f"{'lower bound':>13s}  best")
    for n in sizes:
        cells = [by[(a, n)].time_s for a in algs]
        best = algs[min(range(len(algs)), key=lambda i: cells[i])]
        lb = by[(algs[0], n)].lower_bound_s
        print(f"{_core.format_bytes(n):>8s} " + "".join(f"{_core.format_time(t):>{w}s}" for t, w in zip(cells, widths))
              + f"{_core.format_time(lb):>13s}  {best}")
    for d in declined:
        print(f"# declined {d['algorithm']}: {d['reason']}")
    if args.plot:
        print(f"# plot written to {args.plot}")
