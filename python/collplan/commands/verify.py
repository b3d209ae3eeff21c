"""`collplan verify`: symbolic verification of one schedule, or of every registered algorithm (--all)."""
from __future__ import annotations

import sys
import time

from .. import _core, limits
from .._core import CollplanError
from ..api import OPS, _ranks_and_topology, algorithms, describe, schedule, verify, verify_by_symmetry
from ..output import printable
from ..progress import Progress
from ._common import (MAX_RANKS, add_json_csv, add_problem, int_arg, params_of, print_json_csv, ranks_topology,
                      schedule_from_args)


def register(sub) -> None:
    p = sub.add_parser("verify", help="symbolically verify a schedule (or every algorithm with --all)",
                       epilog="example:\n  collplan verify --collective allreduce --algorithm rabenseifner --ranks 12\n"
                       "  collplan verify --all --max-ranks 32")
    add_problem(p, need_algorithm=False)
    p.add_argument("--op", choices=OPS, help="reduction operation (allreduce); default sum")
    p.add_argument("--all", action="store_true", help="verify every registered algorithm for every P <= --max-ranks")
    p.add_argument("--max-ranks", type=int_arg("--max-ranks", 1, MAX_RANKS), default=64, help="with --all: the largest P tried")
    add_json_csv(p, "the result (--all: one row per algorithm)")
    p.add_argument("--whole", action="store_true",
                   help=f"walk every rank's program even where rank 0's stands for all (P > {ONE_RANK_ABOVE} of a "
                   "symmetric allgather, alltoall or barrier)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_verify)


# Above this P, a symmetric allgather, alltoall or barrier is verified from rank 0's program, and every other rank's
# program is checked to be rank 0's moved, one at a time (verify.hpp; sweep.hpp: verify_by_symmetry): the whole
# verification's answer in the memory of two programs. At or below it, every rank's program is walked: the reference,
# whose failures name any rank.
ONE_RANK_ABOVE = 1024


def _one_rank(args):
    """Rank 0's schedule when it stands for every rank here (the verification by symmetry applies), else None."""
    if (args.whole or args.schedule or not args.algorithm or not args.collective or getattr(args, "matrix", None)
            or getattr(args, "counts", None)):
        return None  # the v-collectives' P comes from their matrix or counts, and none is symmetric
    try:
        ranks, topo = _ranks_and_topology(*ranks_topology(args))
        if ranks <= ONE_RANK_ABOVE:
            return None
        s = schedule(args.algorithm, ranks=ranks, topology=topo, params=params_of(args.param),
                     collective=args.collective, root=args.root, max_memory=args.max_memory, only_rank=0)
    except CollplanError:
        return None  # the whole verification reports the problem's error
    return None if _core.one_rank_verify_refusal(s) else s


def cmd_verify(args) -> int:
    if args.all:
        return _verify_all(args)
    s, r = _one_rank(args), None
    if s is not None:
        op = args.op or "sum"
        try:
            with Progress(f"ranks' programs compared with rank 0's ({s.algorithm}, P={s.ranks})", s.ranks,
                          not args.no_progress, "verify") as prog:
                r = verify_by_symmetry(s.algorithm, s.ranks, s.topology, params_of(args.param), op,
                                       max_memory=args.max_memory, progress=prog.step)
            ops = s.total_ops * s.ranks
        except CollplanError as e:
            if "cannot stand for every rank" not in str(e):
                raise
            print(f"collplan: verify: {e}; walking every rank's program", file=sys.stderr)  # data not moved
    if r is None:
        s = schedule_from_args(args)
        op = args.op or ("max" if s.idempotent_only else "sum")
        r = verify(s, op, max_memory=args.max_memory)
        ops = s.total_ops
    r.update(algorithm=s.algorithm, params=s.params, ranks=s.ranks, topology=s.topology, operation=op, ops=ops)
    if not print_json_csv(args, r, [r]):
        status = "ok" if r["ok"] else f"FAILED ({r['reason']}): {r['message']}"
        if r["ok"] and describe(s.collective)["reduction"]:
            status += ", rank-consistent" if r["rank_consistent"] else f", not rank-consistent: {r['consistency']}"
        if r["one_rank"]:
            status += (f" (rank 0's program walked for every rank under {s.symmetry} symmetry"
                       + (", and every rank's program checked to be rank 0's moved)" if r["ok"] or r["reason"] == "asymmetric" else ")"))
        print(f"{printable(s.algorithm)} P={s.ranks} on {printable(s.topology)} op={op}: {ops} ops, {status}")
    return 0 if r["ok"] else 1


def _verify_all(args) -> int:
    """Every case of every algorithm; under mpirun the cases are split over the ranks (collplan.sweep) and rank 0
    reports what one process would."""
    from ..sweep import world
    sweep = world()
    algs = algorithms(args.collective)
    names = [a["name"] for a in algs]
    t0 = time.monotonic()
    swept = [_core.sweep_cases(name, args.max_ranks) for name in names]
    jobs = [(name, case) for name, (cases, _) in zip(names, swept) for case in cases]
    limit = limits.max_memory(args.max_memory)

    def run(x: int) -> dict:
        name, (ranks, topo, op, params, root, counts) = jobs[x]
        return _core.run_case(name, ranks, topo, op, params, root, counts, max_memory=limit)
    mine = len(sweep.mine(len(jobs)))
    what = "cases" + (f" (this rank's {mine} of {len(jobs)})" if sweep.size > 1 else "")
    with Progress(what, mine, not args.no_progress and sweep.rank == 0, command="verify") as bar:
        results = sweep.run(len(jobs), run, bar.step)
    if sweep.rank != 0:
        return 0
    rows, failures, result = [], [], iter(results)
    for name, (cases, declined) in zip(names, swept):
        passed = consistent = 0
        for ranks, topo, op, params, root, counts in cases:
            r = next(result)
            passed += r["ok"]
            consistent += r["rank_consistent"]
            if not r["ok"]:
                failures.append({"algorithm": name, "ranks": ranks, "topology": topo, "op": op, "params": params,
                                 "root": root, "counts": counts, **r})
        rows.append({"algorithm": name, "cases": len(cases), "passed": passed, "declined": declined,
                     "rank_consistent": consistent})
    if not print_json_csv(args, {"max_ranks": args.max_ranks, "algorithms": rows, "failures": failures}, rows):
        # consistent: allreduce cases whose every rank computes the same expression (verify.hpp)
        print(f"{'algorithm':36s} {'cases':>6s} {'passed':>7s} {'declined':>9s} {'consistent':>11s}")
        for r, a in zip(rows, algs):
            consistent = str(r["rank_consistent"]) if describe(a["collective"])["reduction"] else "-"
            print(f"{r['algorithm']:36s} {r['cases']:6d} {r['passed']:7d} {r['declined']:9d} {consistent:>11s}")
        total = sum(r["cases"] for r in rows)
        print(f"{len(names)} algorithms, {total} cases (P <= {args.max_ranks}), {len(failures)} failed, "
              f"{time.monotonic() - t0:.1f} s")
        for f in failures[:20]:
            params = ",".join(f"{k}={v}" for k, v in f["params"].items())
            where = f" root={f['root']}" if f["root"] else ""
            print(f"FAILED {f['algorithm']} P={f['ranks']}{where} {f['topology']} {params} {f['op']}: {f['reason']}: "
                  f"{f['message']}")
    return 0 if not failures else 1
