"""The `collplan` command line. Errors print one line on stderr and exit with code 2."""
from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tempfile
import time
from pathlib import Path

from . import _core
from ._core import CollplanError
from .api import OPS, _model_of, algorithms, estimate, resolve_name, row_labels, schedule, unsupported_op, verify
from .machines import load_machine, machine_names

COLLECTIVES = ["allgather", "alltoall", "alltoallv", "allreduce", "barrier"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's default prints the usage too)
        raise CollplanError(f"{self.prog}: {message}")


def atomic_write(path: str, data: str | bytes) -> None:
    """Write an output file completely or not at all, the way its user expects:

    - ``-`` is standard output;
    - a symbolic link is followed: its target is written and the link stays;
    - a device, FIFO or other non-regular file is written through, never replaced by a regular file;
    - a regular file, or a new one, is written beside itself and renamed into place, keeping the old file's
      permissions;
    - a missing directory, a read-only file (no owner write bit: refused even as root), a directory, or a write
      that fails (ENOSPC, EIO) is a CollplanError that names the path and the reason; nothing is half-written.
    """
    raw = data.encode() if isinstance(data, str) else data
    if path == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(raw)
        sys.stdout.buffer.flush()
        return
    target = Path(os.path.realpath(path))
    try:
        st = target.stat()
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise CollplanError(f"cannot write {path}: {e.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise CollplanError(f"cannot write {path}: it is a directory (allowed: a file, a device or -)")
    if st is not None and not stat.S_ISREG(st.st_mode):  # a device, FIFO or socket: written through
        try:
            with open(target, "wb") as f:
                f.write(raw)
        except OSError as e:
            raise CollplanError(f"cannot write {path}: {e.strerror}") from None
        return
    if not target.parent.is_dir():
        raise CollplanError(f"cannot write {path}: directory {target.parent} does not exist")
    if st is not None and not st.st_mode & stat.S_IWUSR:
        raise CollplanError(f"cannot write {path}: the file is read-only (allowed: a writable file or a new one)")
    umask = os.umask(0)
    os.umask(umask)
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    except OSError as e:
        raise CollplanError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise CollplanError(f"cannot write {path}: {e.strerror}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _params(pairs: list[str] | None) -> dict:
    out = {}
    for p in pairs or []:
        if "=" not in p or p.startswith("="):
            raise CollplanError(f"--param '{p}' is not of the form NAME=VALUE")
        k, v = p.split("=", 1)
        out[k] = v
    return out


def _matrix(args):
    """alltoallv: the --matrix (a file or a generator spec; its P defaults to --ranks), else None."""
    if not getattr(args, "matrix", None):
        return None
    from .unstructured import matrix_from_spec
    m = matrix_from_spec(args.matrix, args.ranks)
    if args.ranks is None and not args.topology:
        args.ranks = len(m)
    return m


def _ranks_topology(args, machine_topology: str = "") -> tuple[int | None, str | None]:
    if args.ranks is None and not args.topology and not machine_topology:
        raise CollplanError("give --ranks P or --topology T")
    return args.ranks, args.topology or (None if args.ranks is not None else machine_topology)


def read_schedule(path: str) -> _core.Schedule:
    """A schedule from its text form (docs/schedule.md); errors name the file and line."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise CollplanError(f"cannot read schedule file {path}: {e.strerror}") from None
    try:
        return _core.Schedule.from_text(text)
    except CollplanError as e:
        raise CollplanError(f"{path}: {e}") from None


def _schedule_from_args(args, machine_topology: str = "") -> _core.Schedule:
    if args.schedule:
        return read_schedule(args.schedule)
    if not args.algorithm or not args.collective:
        raise CollplanError(f"{args.command} needs --collective and --algorithm (or --schedule FILE)")
    matrix = _matrix(args)
    ranks, topo = _ranks_topology(args, machine_topology)
    return schedule(args.algorithm, ranks=ranks, topology=topo, params=_params(args.param), collective=args.collective,
                    matrix=matrix)


# ----------------------------------------------------------------------------------------------------- algorithms
def cmd_algorithms(args) -> int:
    algs = algorithms(args.collective)
    if args.json:
        print(json.dumps({"algorithms": algs}, indent=2))
        return 0
    for a in algs:
        params = ", ".join(f"{p['name']}={p['default']} ({p['min']}..{p['max']})" if p["kind"] != "text"
                           else f"{p['name']}={p['default']}" for p in a["params"])
        print(f"{a['name']:32s} {a['summary']}")
        print(f"{'':32s}   params: {params or '-'}; topologies: {', '.join(a['topologies']) or 'any'}")
        print(f"{'':32s}   source: {a['source']}")
    return 0


# ----------------------------------------------------------------------------------------------------- verify
def cmd_verify(args) -> int:
    if args.all:
        return _verify_all(args)
    s = _schedule_from_args(args)
    op = args.op or ("max" if s.idempotent_only else "sum")
    r = verify(s, op)
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
            r = _core.run_case(name, ranks, topo, op, params)
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


# ----------------------------------------------------------------------------------------------------- estimate
def cmd_estimate(args) -> int:
    machine_topo = load_machine(args.machine).topology if args.machine else ""
    sizes = _core.parse_sizes(args.sizes)
    if args.schedule or args.algorithm != "all":
        s = _schedule_from_args(args, machine_topo)
        why = unsupported_op(s, args.op)
        if why:
            raise CollplanError(f"{s.algorithm} cannot compute --op {args.op}: {why}")
        rows = estimate(s, sizes, machine=args.machine, model=args.model, topology=args.topology or None)
        return _report_estimates(rows, [], args)
    if not args.collective:
        raise CollplanError("estimate needs --collective with --algorithm all")
    if args.param:
        raise CollplanError("--param applies to one algorithm; give --algorithm NAME instead of all")
    matrix = _matrix(args)
    ranks, topo = _ranks_topology(args, machine_topo)
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
            s = schedule(a["name"], ranks=ranks, topology=topo, params=params, matrix=matrix)
            why = unsupported_op(s, args.op)
            if why:
                declined.append({"algorithm": a["name"], "reason": why})
                break
            rows += estimate(s, sizes, machine=args.machine, model=args.model)
    if not rows:
        raise CollplanError(f"no {args.collective} algorithm applies here: " +
                            "; ".join(f"{d['algorithm']}: {d['reason']}" for d in declined))
    return _report_estimates(rows, declined, args)


def _report_estimates(rows, declined, args) -> int:
    if args.plot:
        from .plot import plot_estimates
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


# ----------------------------------------------------------------------------------------------------- export
def cmd_export(args) -> int:
    s = _schedule_from_args(args)
    if args.format == "text":
        out = s.to_text()
    else:
        gamma = rho = 0.0
        if args.machine or args.model:
            spec, _ = _model_of(args.machine, args.model)
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


# ----------------------------------------------------------------------------------------------------- machines
def cmd_machines(args) -> int:
    for name in machine_names():
        m = load_machine(name)
        print(f"{m.name:16s} {m.topology:16s} {m.description}")
        if args.verbose:
            print(f"{'':16s} model: {m.model}")
            for k, v in m.sources.items():
                print(f"{'':16s}   {k}: {v}")
    return 0


# ----------------------------------------------------------------------------------------------------- main
def _add_problem(p, need_algorithm=True):
    p.add_argument("--collective", choices=COLLECTIVES)
    p.add_argument("--algorithm", help="name, e.g. ring or allgather/ring" + (" or all" if need_algorithm else ""))
    p.add_argument("--schedule", metavar="FILE", help="a schedule in collplan's text form instead of an algorithm")
    p.add_argument("--ranks", type=int, help="number of ranks P (topology full:P unless --topology)")
    p.add_argument("--topology", help="line:P, ring:P, mesh:AxB[xC..], torus:AxB[xC..], hypercube:d, full:P, fattree:k,n")
    p.add_argument("--param", action="append", metavar="K=V", help="algorithm parameter (repeatable)")
    p.add_argument("--matrix", metavar="FILE|SPEC", help="alltoallv communication matrix: a .csv/.txt, .mtx or .json "
                   "file, or testset1:P=32,d=4,seed=1, testset2:P=32,d=4,seed=1, mesh:P=32,refine=2 (sizes in units "
                   "of the message size)")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="collplan", description="Plan, verify, simulate and run collective communication.")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("algorithms", help="list registered algorithms")
    p.add_argument("--collective", choices=COLLECTIVES)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_algorithms)

    p = sub.add_parser("verify", help="symbolically verify a schedule (or every algorithm with --all)")
    _add_problem(p, need_algorithm=False)
    p.add_argument("--op", choices=OPS, help="reduction operation (allreduce); default sum")
    p.add_argument("--all", action="store_true", help="verify every registered algorithm for every P <= --max-ranks")
    p.add_argument("--max-ranks", type=int, default=64)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("estimate", help="analytic time of algorithms over a range of sizes")
    _add_problem(p)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--machine", help=f"bundled machine ({', '.join(machine_names())}) or a TOML file")
    g.add_argument("--model", help="model spec, e.g. hockney:alpha=1us,beta=1ns/B")
    p.add_argument("--sizes", default="16B..1MiB", help="16B..1MiB (powers of two), 1B..400B:50B, or 8,1KiB,...")
    p.add_argument("--op", choices=OPS, default="sum",
                   help="allreduce operation: with --algorithm all, algorithms that cannot compute it are declined")
    p.add_argument("--json", action="store_true")
    p.add_argument("--plot", metavar="FILE.png", help="write time vs size, one line per algorithm")
    p.set_defaults(func=cmd_estimate)

    p = sub.add_parser("export", help="write a schedule as collplan text or LogGOPSim GOAL")
    _add_problem(p)
    p.add_argument("--format", choices=["text", "goal"], default="text")
    p.add_argument("--size", default="1KiB", help="collective message size for GOAL byte counts")
    p.add_argument("--machine", help="machine whose gamma/rho price reductions and copies in GOAL")
    p.add_argument("--model", help="model spec instead of a machine")
    p.add_argument("-o", "--output", required=True, help="output file, or - for stdout")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("machines", help="list bundled machine files")
    p.add_argument("-v", "--verbose", action="store_true", help="show model constants and their sources")
    p.set_defaults(func=cmd_machines)

    from .commands import register_all
    register_all(sub)
    return ap


def _error(message: str) -> None:
    """The one-line error, once per run: under mpirun every rank fails alike, so only rank 0 says it."""
    rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0"))
    if rank == "0":
        print(f"collplan: error: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if getattr(args, "max_ranks", 1) < 1:
            raise CollplanError(f"--max-ranks {args.max_ranks} is invalid (allowed: >= 1)")
        return args.func(args)
    except CollplanError as e:
        _error(str(e))
        return 2
    except OSError as e:
        _error(f"{e.filename or ''}: {e.strerror}")
        return 2
    except KeyboardInterrupt:
        print("collplan: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
