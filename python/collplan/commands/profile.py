"""`collplan profile`: record the collectives of an MPI program, show a recorded profile, export it.

    collplan profile -o prof -- mpirun -n 4 ./app args       run ./app with the PMPI library recording into prof/
    collplan profile show prof [--json | --csv] [--plot t.png] [--by size|comm]
    collplan profile export prof --format simgrid-ti|liballprof -o OUTDIR [--flops-rate 1e9]

Recording sets COLLPLAN_PROFILE=DIR and LD_PRELOAD=<libcollplan_pmpi.so of that MPI> (before an LD_PRELOAD already
set) for the command, passes its exit code through and then summarises the profile (or says which ranks' files are
missing). Without --mpi the MPI is the installation whose launcher the command starts (its path, else what
`<launcher> --version` says), else the default of `collplan pmpi`. On several nodes the launcher must pass both
variables to the ranks (Open MPI: -x LD_PRELOAD -x COLLPLAN_PROFILE; MPICH's hydra passes the environment).
The format and the show/export rules: docs/profile.md.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

from .. import mpi as cmpi
from .. import profile as prof_mod
from .._core import CollplanError, format_bytes, format_time
from ..tables import render, wrap
from ._common import add_json_csv, add_max_memory, file_arg, float_arg, print_json_csv

ACTIONS = ("show", "export")


def register(sub) -> None:
    p = sub.add_parser("profile", help="record an MPI program's collectives (PMPI), show or export the profile",
                       description=__doc__.split("\n\n", 1)[1], usage="collplan profile -o DIR [--mpi NAME] [--force] "
                       "-- COMMAND ...\n       collplan profile show DIR [options]\n       collplan profile export DIR "
                       "--format simgrid-ti|liballprof -o OUTDIR",
                       epilog="example:\n  collplan profile -o prof -- mpirun -n 4 ./app\n  collplan profile show prof "
                       "--plot prof.png\n  collplan profile export prof --format simgrid-ti -o prof-ti")
    p.add_argument("-o", "--output", metavar="DIR", help="the directory the ranks' profiles go to (made if missing)")
    p.add_argument("--mpi", metavar="NAME", help="which MPI installation's PMPI library (collplan pmpi lists them)")
    p.add_argument("--force", action="store_true", help="replace the profile files already in DIR")
    add_max_memory(p)
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                   help="the program to record, with its launcher; or `show DIR ...`, `export DIR ...` "
                   "(collplan profile show --help)")
    p.set_defaults(func=cmd_profile)


def _show_parser() -> argparse.ArgumentParser:
    from ..cli import _Parser
    p = _Parser(prog="collplan profile show", description="A recorded profile per collective and size range (or "
                "communicator): calls, time in them, their share of the ranks' time, the ranks' imbalance at entry.",
                epilog="example:\n  collplan profile show prof --plot prof.png\n  collplan profile show prof --json")
    p.add_argument("dir", metavar="DIR", help="the profile's directory (COLLPLAN_PROFILE)")
    add_json_csv(p, "the summary (the header and one row per collective and size range or communicator)")
    p.add_argument("--plot", metavar="FILE", type=file_arg("--plot"), help="bars of time per collective: .png, "
                   ".svg or .pdf")
    p.add_argument("--by", choices=["size", "comm"], default="size",
                   help="rows per collective and power-of-two size range, or per collective and communicator")
    add_max_memory(p)
    return p


def _export_parser() -> argparse.ArgumentParser:
    from ..cli import _Parser
    p = _Parser(prog="collplan profile export", description="A recorded profile as SimGrid's time-independent "
                "traces (smpirun -replay) or LogGOPSim's liballprof text (Schedgen -p trace).",
                epilog="example:\n  collplan profile export prof --format simgrid-ti -o prof-ti --flops-rate 2e9\n"
                "  collplan profile export prof --format liballprof -o prof-allprof")
    p.add_argument("dir", metavar="DIR", help="the profile's directory (COLLPLAN_PROFILE)")
    p.add_argument("--format", required=True, choices=["simgrid-ti", "liballprof"], help="what to write")
    p.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="directory for the files (made if missing)")
    p.add_argument("--flops-rate", type=float_arg("--flops-rate", 1e-300), default=1e9,
                   help="simgrid-ti: flop/s that turn compute gaps into `compute <flops>`")
    add_max_memory(p)
    return p


def cmd_profile(args) -> int:
    rest = list(args.command)
    if rest and rest[0] in ACTIONS:
        if args.output or args.mpi or args.force:
            raise CollplanError(f"collplan profile {rest[0]}: give its options after '{rest[0]}' (collplan profile "
                                f"{rest[0]} --help)")
        sub = (_show_parser() if rest[0] == "show" else _export_parser()).parse_args(rest[1:])
        if args.max_memory and not sub.max_memory:
            sub.max_memory = args.max_memory
        return _show(sub) if rest[0] == "show" else _export(sub)
    if rest and rest[0] == "--":
        rest = rest[1:]
    if not rest:
        raise CollplanError("collplan profile: give the program to record after '--' (collplan profile -o DIR -- "
                            "mpirun -n 4 ./app), or show DIR, or export DIR")
    if not args.output:
        raise CollplanError("collplan profile: -o DIR is required (the directory the ranks' profiles go to)")
    return _record(args, rest)


# ------------------------------------------------------------------------------------------------ record
LAUNCHERS = ("mpirun", "mpiexec", "orterun", "prterun")


def launcher_installation(argv0: str) -> str | None:
    """The MPI installation whose launcher argv0 is (a program named mpirun, mpiexec, orterun or prterun, with any
    suffix): the one whose mpiexec is the same file; else of the family `argv0 --version` names, the one whose
    mpiexec is beside it or the family's first; else the one whose mpiexec is beside it. None for any other program
    or when it cannot be told."""
    built = cmpi.installations()
    exe = shutil.which(argv0)
    if not exe or not built or not os.path.basename(argv0).startswith(LAUNCHERS):
        return None
    real = os.path.realpath(exe)
    launchers = {name: os.path.realpath(info["mpiexec"]) for name, info in built.items() if info.get("mpiexec")}
    same = [name for name, path in launchers.items() if path == real]
    beside = [name for name, path in launchers.items() if os.path.dirname(path) == os.path.dirname(real)]
    if same:
        return same[0]
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
        text = out.stdout + out.stderr
    except (OSError, subprocess.SubprocessError):
        text = ""
    family = "openmpi" if ("Open MPI" in text or "OpenRTE" in text or "PRRTE" in text) else \
        "mpich" if ("HYDRA" in text or "MPICH" in text or "Intel(R) MPI" in text) else None
    if family is None:
        return beside[0] if beside else None
    ours = [name for name, info in built.items() if info["family"] == family]
    return next((n for n in ours if n in beside), ours[0] if ours else None)


def _record(args, command: list[str]) -> int:
    out = os.path.abspath(args.output)
    if os.path.exists(out) and not os.path.isdir(out):
        raise CollplanError(f"-o {args.output} is not a directory (allowed: a directory, made if missing)")
    old = sorted(n for n in (os.listdir(out) if os.path.isdir(out) else []) if prof_mod.FILE_RE.fullmatch(n))
    if old and not args.force:
        raise CollplanError(f"-o {args.output} already holds a profile ({old[0]}{' ...' if len(old) > 1 else ''}); "
                            "give --force to replace it, or another directory")
    name = args.mpi or launcher_installation(command[0])
    lib = cmpi.pmpi_library(name)
    try:
        os.makedirs(out, exist_ok=True)
        for n in old:
            os.unlink(os.path.join(out, n))
    except OSError as e:
        raise CollplanError(f"cannot prepare {args.output}: {e.strerror}") from None
    env = dict(os.environ, COLLPLAN_PROFILE=out)
    env["LD_PRELOAD"] = lib + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    try:
        child = subprocess.Popen(command, env=env)
    except OSError as e:
        raise CollplanError(f"cannot run '{command[0]}': {e.strerror}") from None
    try:
        rc = child.wait()
    except KeyboardInterrupt:  # the launcher had the Ctrl-C too: let it end its ranks
        rc = child.wait()
    if rc < 0:
        rc = 128 - rc
    try:
        p = prof_mod.load(out, args.max_memory)
    except CollplanError as e:
        print(f"collplan profile: {e}", file=sys.stderr)
        return rc or 2
    print(wrap(_paragraph(p, command, rc, name or "default"), ""), file=sys.stderr)
    return rc


def _paragraph(p: prof_mod.Profile, command: list[str], rc: int, mpi: str) -> str:
    s = prof_mod.summary(p)
    top = sorted(({r["collective"] for r in s["rows"]}), key=lambda c: -sum(r["time_s"] for r in s["rows"]
                                                                            if r["collective"] == c))[:3]
    text = (f"collplan profile: {' '.join(command[:1])} exited with {rc}; {p.world_size} ranks "
            f"({s['complete_ranks']} reached MPI_Finalize, PMPI library of {mpi}) made {s['calls']} collective calls "
            f"({s['instances']} collectives) in {format_time(s['wall_s'])}: {100 * s['collective_share']:.1f}% of "
            "the ranks' time in collectives")
    if top:
        text += f" (most: {', '.join(top)})"
    text += f". Profile in {p.path}; collplan profile show {p.path}"
    if s["warnings"]:
        text += f"; {len(s['warnings'])} warning(s): {s['warnings'][0]}"
    return text + "."


# ------------------------------------------------------------------------------------------------ show
def _show(args) -> int:
    if args.plot:
        from ..plot import check_plot_path
        check_plot_path(args.plot)
    p = prof_mod.load(args.dir, args.max_memory)
    s = prof_mod.summary(p, args.by)
    if args.plot:
        prof_mod.plot_summary(s, args.plot)
    if print_json_csv(args, s, s["rows"]):
        return 0
    ft = format_time
    hosts = s["hosts"]
    print(wrap(f"# profile {s['path']}: {s['world_size']} ranks on {len(hosts)} host(s) ({', '.join(hosts[:4])}"
               f"{', ...' if len(hosts) > 4 else ''}); MPI: {s['mpi']}", ""))
    print(wrap(f"# wall {ft(s['wall_s'])}; collectives {100 * s['collective_share']:.1f}% of the ranks' time "
               f"({ft(s['collective_s'])} of {ft(s['rank_wall_s'])} summed over ranks); {s['calls']} calls, "
               f"{s['instances']} collectives; point-to-point: {s['p2p_messages']} messages, "
               f"{format_bytes(s['p2p_bytes'])} sent", ""))
    if args.by == "size":
        head, first = ["collective", "size"], [lambda r: prof_mod.bucket_label((r["size_min_bytes"],
                                                                                 r["size_max_bytes"] + 1
                                                                                 if r["size_max_bytes"] else 0))]
    else:
        head, first = ["collective", "comm"], [lambda r: r["comm"]]
    rows = [[r["collective"], first[0](r), ",".join(map(str, r["comm_sizes"])), r["instances"], r["calls"],
             ft(r["time_s"]), ft(r["mean_s"]), f"{100 * r['share']:.2f}%",
             ft(r["imbalance_s"]) if r["imbalance_s"] is not None else "-"] for r in s["rows"]]
    if rows:
        print(render(head + ["ranks", "collectives", "calls", "time", "mean", "share", "imbalance"], rows, key=2,
                     left=(0, 1)))
    else:
        print("# no collective calls recorded")
    comms = [f"{c['key']}: {c['size']} ranks{' (inter)' if c['inter'] else ''}, {c['instances']} collectives"
             for c in s["comms"]]
    if comms:
        print(wrap("# communicators: " + "; ".join(comms), ""))
    print(wrap("# size: the power-of-two range of the collective's bytes; time: in the calls, summed over ranks "
               "(non-blocking: to the completion's return); share: of the ranks' time from MPI_Init to MPI_Finalize; "
               "imbalance: mean latest minus earliest arrival", ""))
    for w in s["warnings"]:
        print(wrap(f"# warning: {w}", ""))
    if args.plot:
        print(f"# plot written to {args.plot}")
    return 0


# ------------------------------------------------------------------------------------------------ export
def _export(args) -> int:
    p = prof_mod.load(args.dir, args.max_memory)
    if args.format == "simgrid-ti":
        res = prof_mod.export_simgrid_ti(p, args.output, args.flops_rate)
    else:
        res = prof_mod.export_liballprof(p, args.output)
    print(f"wrote {len(res['files'])} files to {args.output} ({args.format}, {p.world_size} ranks)")
    for n in res["notes"]:
        print(wrap(f"# {n}", ""))
    print(wrap(f"# run: {res['run']}", ""))
    return 0

