"""`collplan reproduce NAME`: recompute a paper's table or figure, check its claims, write CSV/JSON/PNG."""
from __future__ import annotations

import sys
from pathlib import Path

from .. import reproduce
from ..progress import Progress


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="reproduce a table or figure of the source papers",
                       description="Recompute a table or figure of the source papers and check the paper's claims "
                       "against it. Exit 1 when a claim marked 'required' does not hold (the report names them).",
                       epilog="example:\n  collplan reproduce                      # the list\n"
                       "  collplan reproduce mce-d6 --out rep     # rep/mce-d6.csv, .json, .png\n"
                       "  mpirun -n 4 collplan reproduce a2at-torus   # its simulations split over 4 ranks")
    p.add_argument("name", nargs="?", help="which one (omit to list them)")
    p.add_argument("--out", default="reproduce-out", help="directory for CSV, JSON and PNG files")
    p.add_argument("--quick", action="store_true", help="smaller sizes (what `make test` runs)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args) -> int:
    if not args.name:
        for n in reproduce.names():
            print(f"{n:24s} {reproduce.summary(n)}")
        return 0
    # under mpirun every rank runs the reproduction, its cells split over the ranks (reproduce.cells); rank 0 reports
    from ..sweep import world
    rank = world().rank
    with Progress(f"{args.name} running", 0, not args.no_progress and rank == 0, command="reproduce"):
        report = reproduce.run(args.name, quick=args.quick)
    if rank != 0:
        return 1 if reproduce.failed_required(report) else 0
    print(reproduce.render(report))
    for path in reproduce.write_outputs(args.name, report, Path(args.out)):
        print(f"wrote {path}", file=sys.stderr)
    bad = reproduce.failed_required(report)
    if bad:
        print(f"collplan: reproduce {args.name}: {len(bad)} required claim(s) failed: " +
              "; ".join(c.text for c in bad), file=sys.stderr)
    return 1 if bad else 0
