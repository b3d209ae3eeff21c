"""`collplan estimate`: analytic times of one algorithm or all of a collective over a range of sizes."""
from __future__ import annotations

from .. import _core
from .._core import CollplanError
from ..api import OPS, algorithms, estimate, row_labels, short_name, unsupported_op
from ..machines import machine_names, resolve_machine
from ..output import printable
from ..planner import candidates
from ..plot import check_plot_path
from ..progress import Progress
from ..tables import render, wrap
from ._common import add_json_csv, add_problem, file_arg, print_json_csv, problem_of, read_schedule


def register(sub) -> None:
    p = sub.add_parser("estimate", help="analytic time of algorithms over a range of sizes",
                       description="Analytic time of one algorithm, or of every algorithm of a collective "
                       "(--algorithm all: each with its best parameters per size), with the lower bound.",
                       epilog="example:\n  collplan estimate --collective alltoall --algorithm all --machine ib-qdr "
                       "--sizes 16B..1MiB --plot a2a.png")
    add_problem(p)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--machine", help=f"bundled machine ({', '.join(machine_names())}) or a TOML file")
    g.add_argument("--model", help="model spec, e.g. hockney:alpha=1us,beta=1ns/B")
    p.add_argument("--sizes", default="16B..1MiB", help="16B..1MiB (powers of two), 1B..400B:50B, or 8,1KiB,...")
    p.add_argument("--op", choices=OPS, default="sum",
                   help="allreduce operation: with --algorithm all, algorithms that cannot compute it are declined")
    p.add_argument("--all-params", action="store_true",
                   help="table and plot: every parameter set of every algorithm (default: each algorithm's best "
                   "per size); --json and --csv always hold every parameter set")
    add_json_csv(p, "every estimate (each algorithm and parameter set at each size)")
    p.add_argument("--plot", metavar="FILE", type=file_arg("--plot"), help="time vs size, one line per algorithm: .png, .svg or .pdf")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_estimate)


def cmd_estimate(args) -> int:
    if args.plot:
        check_plot_path(args.plot)
    machine = resolve_machine(args.machine, args.model)
    sizes = _core.parse_sizes(args.sizes)
    if args.schedule or args.algorithm != "all":
        with Progress(args.algorithm or "schedule", 0, not args.no_progress, command="estimate"):  # P = 10^6: a minute
            s = read_schedule(args.schedule, args.max_memory) if args.schedule else \
                candidates(problem_of(args, machine.topology), machine, sizes, args.max_memory, one_rank=True)[0][0][1]
            why = unsupported_op(s, args.op)
            if why:
                raise CollplanError(f"{s.algorithm} cannot compute --op {args.op}: {why}")
            rows = estimate(s, sizes, machine=machine, topology=args.topology or None, max_memory=args.max_memory)
        return _report_estimates(rows, [], args)
    prob = problem_of(args, machine.topology)
    rows = []
    with Progress("algorithms", len(algorithms(prob.collective)), not args.no_progress, command="estimate") as bar:
        # every parameter set each algorithm proposes for this model and size range (e.g. multiphase partitions)
        found, declined = candidates(prob, machine, sizes, args.max_memory, bar, one_rank=True)
        for _, s in found:
            rows += estimate(s, sizes, machine=machine, max_memory=args.max_memory)
    return _report_estimates(rows, declined, args)


def _report_estimates(rows, declined, args) -> int:
    if args.plot:
        from ..plot import plot_estimates
        plot_estimates(rows, args.plot, title=_title(rows, args), all_params=args.all_params)
    if print_json_csv(args, {"results": [r.as_dict() for r in rows], "declined": declined},
                      [r.as_dict() for r in rows]):
        return 0
    _print_table(rows, declined, args)
    return 0


def _title(rows, args) -> str:
    where = args.machine or args.model
    return f"{rows[0].collective}, P={rows[0].ranks} on {printable(rows[0].topology)}, {where}"


def _print_table(rows, declined, args) -> None:
    """One column per algorithm (its best parameters per size, in parentheses) or, with --all-params, per
    parameter set; the best of the row (its time beside it) first, the lower bound last. Too wide for the terminal:
    blocks of columns, each repeating the size and the best."""
    fb, ft = _core.format_bytes, _core.format_time
    sizes = list(dict.fromkeys(r.size_bytes for r in rows))
    labels = row_labels(rows)
    best_of = {n: min((r for r in rows if r.size_bytes == n), key=lambda r: r.time_s) for n in sizes}
    label_of = {id(r): lab.replace("[", " (").replace("]", ")") for r, lab in zip(rows, labels)}
    if args.all_params:
        cols = list(dict.fromkeys(labels))
        by = {(lab, r.size_bytes): ft(r.time_s) for r, lab in zip(rows, labels)}
    else:
        cols = list(dict.fromkeys(short_name(r.algorithm) for r in rows))
        by = {}
        for r, lab in zip(rows, labels):
            key = (short_name(r.algorithm), r.size_bytes)
            if key not in by or r.time_s < by[key][0]:
                by[key] = (r.time_s, lab[len(key[0]) + 1:-1] if lab.endswith("]") else "")
        by = {k: ft(t) + (f" ({v})" if v else "") for k, (t, v) in by.items()}
    # the winner with its time, then every algorithm, then the bound apart (next to "best" it read as the winner's
    # time); a table split into column blocks repeats the size and the winner in each
    table = [[fb(n), f"{label_of[id(best_of[n])]} {ft(best_of[n].time_s)}"] + [by.get((c, n), "-") for c in cols] +
             [ft(best_of[n].lower_bound_s)] for n in sizes]
    print(f"# {_title(rows, args)}; times are analytic estimates")
    print(render(["size", "best"] + cols + ["lower bound"], table, key=2))
    if not args.all_params and any(lab.endswith("]") for lab in labels):
        print("# (..): the algorithm's best parameters at that size; every parameter set: --all-params")
    for d in declined:
        print(wrap(f"# declined {d['algorithm']}: {d['reason']}", ""))
    if args.plot:
        print(f"# plot written to {args.plot}")
