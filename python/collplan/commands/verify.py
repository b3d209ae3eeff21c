"""`collplan verify`: symbolic verification of one schedule, or of every registered algorithm (--all)."""
from __future__ import annotations

import json
import sys
import time

from .. import _core, limits
from ..api import OPS, algorithms, verify
from ._common import MAX_RANKS, add_problem, int_arg, schedule_from_args


def register(sub) -> None:
    p = sub.add_parser("verify", help="symbolically verify a schedule (or every algorithm with --all)")
    add_problem(p, need_algorithm=False)
    p.add_argument("--op", choices=OPS, help="reduction operation (allreduce); default sum")
    p.add_argument("--all", action="store_true", help="verify every registered algorithm for every P <= --max-ranks")
    p.add_argument("--max-ranks", type=int_arg("--max-ranks", 1, MAX_RANKS), default=64)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_verify)


def cmd_verify(args) -> int:
    if args.all:
        return _verify_all(args)
    s = schedule_from_args(args)
    op = args.op or ("max" if s.idempotent_only else "sum")
    r = verify(s, op, max_memory=args.max_memory)
    r.update(algorithm=s.algorithm, params=s.params, ranks=s.ranks, topology=s.topology, operation=op,
             ops=s.total_ops)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        status = "ok" if r["ok"] else f"FAILED ({r['reason']}): {r['message']}"
        if r["ok"] and s.collective == "allreduce":
            status += ", rank-consistent" if r["rank_consistent"] else f", not rank-consistent: {r['consistency']}"
        print(f"{s.algorithm} P={s.ranks} on {s.topology} op={op}: {s.total_ops} ops, {status}")
    return 0 if r["ok"] else 1


def _verify_all(args) -> int:
    algs = algorithms(args.collective)
    names = [a["name"] for a in algs]
    rows, failures, t0 = [], [], time.monotonic()
    for i, name in enumerate(names):
        cases, declined = _core.sweep_cases(name, args.max_ranks)
        passed = consistent = 0
        for ranks, topo, op, params in cases:
            r = _core.run_case(name, ranks, topo, op, params, max_memory=limits.max_memory(args.max_memory))
            passed += r["ok"]
            consistent += r["rank_consistent"]
            if not r["ok"]:
                failures.append({"algorithm": name, "ranks": ranks, "topology": topo, "op": op, "params": params, **r})
        rows.append({"algorithm": name, "cases": len(cases), "passed": passed, "declined": declined,
                     "rank_consistent": consistent})
        if not args.json and sys.stderr.isatty():
            print(f"\r[{i + 1}/{len(names)}] {name:40s}", end="", file=sys.stderr, flush=True)
    if not args.json and sys.stderr.isatty():
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    if args.json:
        print(json.dumps({"max_ranks": args.max_ranks, "algorithms": rows, "failures": failures}, indent=2))
    else:
        # consistent: allreduce cases whose every rank computes the same expression (verify.hpp)
        print(f"{'algorithm':36s} {'cases':>6s} {'passed':>7s} {'declined':>9s} {'consistent':>11s}")
        for r, a in zip(rows, algs):
            consistent = str(r["rank_consistent"]) if a["collective"] == "allreduce" else "-"
            print(f"{r['algorithm']:36s} {r['cases']:6d} {r['passed']:7d} {r['declined']:9d} {consistent:>11s}")
        total = sum(r["cases"] for r in rows)
        print(f"{len(names)} algorithms, {total} cases (P <= {args.max_ranks}), {len(failures)} failed, "
              f"{time.monotonic() - t0:.1f} s")
        for f in failures[:20]:
            params = ",".join(f"{k}={v}" for k, v in f["params"].items())
            print(f"FAILED {f['algorithm']} P={f['ranks']} {f['topology']} {params} {f['op']}: {f['reason']}: {f['message']}")
    return 0 if not failures else 1
