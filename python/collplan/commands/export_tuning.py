"""`collplan export-tuning`: a wisdom file as the MPI library's own tuning file, for programs run without collplan
(docs/planner.md, "Using a plan without collplan at run time").

    collplan export-tuning --wisdom w.json --format ompi-rules -o rules.txt
    mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename rules.txt ./app
    collplan export-tuning --wisdom w.json --format mpich-json -o tuning.json     (also writes tuning.ch4.json)
    MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=tuning.json \
        MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE=tuning.ch4.json mpiexec ./app
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .._core import CollplanError
from ..output import atomic_write
from ..tuning import FORMATS, export
from ._common import file_arg


def register(sub) -> None:
    p = sub.add_parser("export-tuning", help="write a wisdom file as Open MPI's rules file or MPICH's JSON selection",
                       epilog="example:\n  collplan export-tuning --wisdom w.json --format ompi-rules -o rules.txt")
    p.add_argument("--wisdom", metavar="FILE", help="the wisdom file (collplan plan --wisdom)")
    p.add_argument("--table", action="store_true", help="print which collplan algorithm each of the library's "
                   "algorithms sends the messages of (at P = 2, 6, 8; 64 B and 64 KiB), and nothing else")
    add_tuning_options(p, "--format", required=True)
    p.add_argument("-o", "--output", metavar="FILE", type=file_arg("-o", stdout=True), default="-",
                   help="the tuning file (default: standard output; mpich-json also writes FILE's .ch4 sibling, "
                        "MPICH's ch4-level tree, which needs -o)")
    p.add_argument("--json", action="store_true", help="print what was exported and left as JSON")
    p.set_defaults(func=cmd_export_tuning)


def add_tuning_options(p, format_option: str, required: bool = False) -> None:
    p.add_argument(format_option, dest="tuning_format", choices=FORMATS, required=required,
                   help="ompi-rules: Open MPI coll/tuned's rules file; mpich-json: MPICH's JSON selection trees")
    p.add_argument("--mpi", dest="tuning_mpi", metavar="NAME|PATH",
                   help="the MPI installation to read algorithm ids and default trees from: a name collplan was built "
                        "for (collplan pmpi) or the path of its ompi_info / libmpi.so (default: the format's first)")
    p.add_argument("--assume-commutative", action="store_true",
                   help="Open MPI: also export algorithms it runs for commutative operations only (its rules apply "
                        "to every operation): say so only when every reduction of the program commutes")


def ch4_path(path: str) -> str:
    p = Path(path)
    return str(p.with_name(f"{p.stem}.ch4{p.suffix or '.json'}"))


def write_tuning(result, path: str) -> list[str]:
    """Write the export's files (the main one to `path`, '-': standard output); the lines that tell the user."""
    atomic_write(path, result.files["main"])
    ch4 = None
    if "ch4" in result.files and path != "-":
        ch4 = ch4_path(path)
        atomic_write(ch4, result.files["ch4"])
    if path == "-":
        return []
    lines = [f"# {result.format} written to {path}" + (f" and {ch4}" if ch4 else ""),
             f"# use: {result.usage(path, ch4)}"]
    if result.format == "mpich-json" and not ch4:
        lines.append("# the ch4 tree was not written (-o FILE writes it): on one node MPICH may not reach these rules")
    return lines


def export_from_args(args, wisdom: str, entries=None):
    return export(wisdom, args.tuning_format, args.tuning_mpi, args.assume_commutative, entries=entries)


def cmd_export_tuning(args) -> int:
    if args.table:
        from ..tuning import equivalents, mpich_target, openmpi_target
        target = (openmpi_target if args.tuning_format == "ompi-rules" else mpich_target)(args.tuning_mpi)
        print(f"| collective | {target.version} | collplan algorithm |\n|---|---|---|")
        for r in equivalents(target):
            print(f"| {r['collective']} | {r['native']} | {r['collplan'] or '- (' + r['reason'] + ')'} |")
        return 0
    if not args.wisdom:
        raise CollplanError("export-tuning needs --wisdom FILE (or --table)")
    result = export_from_args(args, args.wisdom)
    lines = write_tuning(result, args.output)
    out = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        print(json.dumps(result.as_dict(), indent=1), file=out)
    else:
        print(result.report(), file=out)
    for line in lines:
        print(line, file=out)
    return 0
