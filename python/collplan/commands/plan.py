"""`collplan plan`: the best algorithm and parameters per message size, as a threshold table (docs/planner.md).

    collplan plan --collective allreduce --ranks 64 --machine ib-qdr --sizes 8B..1MiB
    collplan plan --collective allgather --topology torus:8x8 --machine paragon --evaluator simulate
    collplan plan --collective bcast --ranks 64 --machine ib-qdr --sizes 8B..1MiB --root 5
    mpirun -n 4 collplan plan --collective alltoall --machine my.toml --evaluator measure --wisdom w.json
    collplan plan --profile prof/ --machine ib-qdr --wisdom w.json      (every shape a recorded application called)
    collplan plan --collective allreduce --ranks 8 --machine m.toml --tuning rules.txt --tuning-format ompi-rules
"""
from __future__ import annotations

import json

from .._core import CollplanError
from ..api import OPS
from ..machines import machine_names
from ..native import LIBRARIES
from ..output import atomic_write
from ..planner import EVALUATORS, PLANNED, PRUNE_ABOVE, format_table, merge_wisdom, plan
from ..sim import FIDELITIES
from ._common import RANKS, add_max_memory, file_arg, float_arg, int_arg
from .export_tuning import add_tuning_options, export_from_args, write_tuning


def register(sub) -> None:
    p = sub.add_parser("plan", help="pick the best algorithm and parameters per size (estimate, simulate or measure)",
                       epilog="example:\n  collplan plan --collective allreduce --ranks 64 --machine ib-qdr "
                       "--sizes 8B..1MiB --plot plan.png")
    p.add_argument("--collective", choices=PLANNED, help="the collective to plan (or --profile)")
    p.add_argument("--profile", metavar="DIR", help="plan every shape a recorded application called (a profile "
                   "directory, docs/profile.md): instead of --collective, --ranks, --sizes")
    p.add_argument("--library", choices=LIBRARIES, help="--profile: the MPI library whose choice the "
                   "plan is compared with (default: the profile's mpi line)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--ranks", type=RANKS, help="number of ranks P (topology full:P); measure: mpirun's size")
    g.add_argument("--topology", help="topology spec, e.g. torus:8x8 (its node count is P; default: the machine's)")
    p.add_argument("--machine", required=True, help=f"bundled machine ({', '.join(machine_names())}) or a TOML file")
    p.add_argument("--sizes", help="sizes to plan for: 8B..1MiB (doubling), 8,1KiB,... (default 8B..1MiB)")
    p.add_argument("--op", default="sum", choices=OPS,
                   help="the reductions' operation: allreduce, reduce, reduce_scatter(_block) (default sum)")
    p.add_argument("--root", type=int_arg("--root", 0, 2**31 - 1), default=0,
                   help="root rank of bcast, reduce, gather, scatter (default 0)")
    p.add_argument("--evaluator", choices=EVALUATORS, default="estimate",
                   help="estimate (analytic, default), simulate (--fidelity), measure (under mpirun)")
    p.add_argument("--fidelity", choices=FIDELITIES, default="loggp", help="simulator for --evaluator simulate")
    p.add_argument("--all-estimates", action="store_true",
                   help=f"estimate: walk every candidate at every size (above {PRUNE_ABOVE} ranks a candidate is "
                   "not walked at the sizes where its lower bound already exceeds the runner-up's time)")
    m = p.add_argument_group("measure")
    m.add_argument("--prune", type=float_arg("--prune", 0), default=3.0,
                   help="measure only candidates estimated within this factor of the best (0: measure all)")
    m.add_argument("--keep", type=int_arg("--keep", 1, 1000), default=6, help="measure at most this many candidates per size")
    m.add_argument("--reps", type=int_arg("--reps", 1, 100000), default=5, help="interleaved repetitions per candidate (the best is used)")
    m.add_argument("--target", default="2ms", help="length of one repetition (calls per repetition follow)")
    m.add_argument("--no-native", action="store_true", help="do not offer the MPI library's own collective")
    p.add_argument("--wisdom", metavar="FILE", type=file_arg("--wisdom"), help="record the table in a wisdom file (entries of the same "
                   "collective, ranks, topology and op are replaced)")
    add_max_memory(p)
    f = p.add_mutually_exclusive_group()
    f.add_argument("--json", action="store_true", help="print the plan as JSON (every candidate's times too)")
    f.add_argument("--csv", action="store_true", help="print the threshold table as CSV (the ranges of --json)")
    t = p.add_argument_group("tuning file (docs/planner.md, \"Using a plan without collplan at run time\")")
    t.add_argument("--tuning", metavar="FILE", type=file_arg("--tuning"),
                   help="also write the plan (with --wisdom: the whole wisdom file) as the MPI library's tuning file")
    add_tuning_options(t, "--tuning-format")
    p.add_argument("--plot", metavar="FILE", type=file_arg("--plot"), help="each candidate's time relative to the best, per size "
                   "(.png, .svg or .pdf)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_plan)


def cmd_plan(args) -> int:
    from .._core import parse_time
    target_s = parse_time(args.target)
    if not 0 < target_s <= 60:
        raise CollplanError(f"--target {args.target} is invalid (allowed: a time in 0s..1min, e.g. 2ms)")
    if bool(args.tuning) != bool(args.tuning_format):
        raise CollplanError("--tuning FILE and --tuning-format FORMAT go together")
    if args.profile:
        return _plan_profile(args, target_s)
    if args.library:
        raise CollplanError("--library goes with --profile DIR (the plan of a recorded application)")
    if not args.collective:
        raise CollplanError("plan needs --collective (or --profile DIR)")
    args.sizes = args.sizes or "8B..1MiB"
    if args.plot:
        from ..plot import check_plot_path
        check_plot_path(args.plot)
    if args.evaluator == "measure":
        from ..measure import plan_measured
        if args.topology:
            raise CollplanError("--evaluator measure times the ranks mpirun started: give no --topology")
        result = plan_measured(args.collective, args.machine, args.sizes, args.op, args.ranks, root=args.root,
                               prune=args.prune,
                               keep=args.keep, reps=args.reps, target_s=target_s,
                               native=not args.no_native, progress=not args.no_progress)
        from ..mpi import backend
        if backend()[0].COMM_WORLD.Get_rank() != 0:
            return 0
    else:  # under mpirun the candidates are priced on every rank, a share each; rank 0 reports
        from ..sweep import world
        sweep = world()
        result = plan(args.collective, args.ranks, args.topology, args.machine, args.sizes, args.op, args.evaluator,
                      args.fidelity, progress=not args.no_progress, max_memory=args.max_memory, root=args.root,
                      sweep=sweep, prune=not args.all_estimates)
        if sweep.rank != 0:
            return 0
    if args.wisdom:
        atomic_write(args.wisdom, merge_wisdom(args.wisdom, result))
    tuning = _tuning(args, [result])
    if args.plot:
        from ..plot import plot_plan
        plot_plan(result, args.plot)
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    elif args.csv:
        from ..tables import csv_text
        print(csv_text([{k: v for k, v in r.items() if k not in ("winner", "runner_up")} |
                        {"winner": r["winner"]["label"], "runner_up": (r["runner_up"] or {}).get("label", "")}
                        for r in result.as_dict()["ranges"]]), end="")
    else:
        print(format_table(result))
        if args.wisdom:
            print(f"# wisdom written to {args.wisdom}")
        if args.plot:
            print(f"# plot written to {args.plot}")
        print("\n".join(tuning))
    return 0


def _tuning(args, plans) -> list[str]:
    """--tuning: the wisdom file (or the plans' entries) as the library's tuning file; the report lines."""
    if not args.tuning:
        return []
    from ..planner import wisdom_entries
    entries = None if args.wisdom else [e for p in plans for e in wisdom_entries(p)]
    result = export_from_args(args, args.wisdom or "the plan", entries)
    return [result.report()] + write_tuning(result, args.tuning)


def _plan_profile(args, target_s: float) -> int:
    """plan --profile DIR: every shape of the recorded application (collplan.replay.plan_profile)."""
    from ..profile import load
    from ..replay import format_profile_plan, plan_profile
    given = [o for o, v in (("--collective", args.collective), ("--ranks", args.ranks), ("--sizes", args.sizes),
                            ("--topology", args.topology), ("--plot", args.plot)) if v]
    if given:
        raise CollplanError(f"--profile plans the shapes the profile recorded: give no {', '.join(given)}")
    measure = None if args.evaluator != "measure" else dict(prune=args.prune, keep=args.keep, reps=args.reps,
                                                             target_s=target_s, native=not args.no_native)
    result = plan_profile(load(args.profile, max_memory=args.max_memory), args.machine, args.evaluator,
                          args.fidelity, args.library, progress=not args.no_progress, max_memory=args.max_memory,
                          measure=measure)
    if args.evaluator == "measure":
        from ..mpi import backend
        if backend()[0].COMM_WORLD.Get_rank() != 0:
            return 0
    if args.wisdom:
        for p in result.wisdom_plans():
            atomic_write(args.wisdom, merge_wisdom(args.wisdom, p))
    tuning = _tuning(args, result.wisdom_plans())
    if args.json:
        print(json.dumps(result.as_dict(), indent=1))
    elif args.csv:
        from ..tables import csv_text
        print(csv_text([r.as_dict() | {"native_algorithm": r.native_algorithm.label() if r.native_algorithm else "",
                                       "planned": r.planned.label()} for r in result.rows]), end="")
    else:
        print(format_profile_plan(result))
        if args.wisdom:
            print(f"# wisdom written to {args.wisdom}")
        print("\n".join(tuning))
    return 0
