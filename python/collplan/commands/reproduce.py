"""`collplan reproduce NAME`: recompute a paper's table or figure, check its claims, write CSV/JSON/PNG."""
from __future__ import annotations

import sys
from pathlib import Path

from .. import reproduce


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="reproduce a table or figure of the source papers")
    p.add_argument("name", nargs="?", help="which one (omit to list them)")
    p.add_argument("--out", default="reproduce-out", help="directory for CSV, JSON and PNG files")
    p.add_argument("--quick", action="store_true", help="smaller sizes (what `make test` runs)")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args) -> int:
    if not args.name:
        for n in reproduce.names():
            print(f"{n:24s} {reproduce.summary(n)}")
        return 0
    report = reproduce.run(args.name, quick=args.quick)
    print(reproduce.render(report))
    for path in reproduce.write_outputs(args.name, report, Path(args.out)):
        print(f"wrote {path}", file=sys.stderr)
    return 1 if any(c.required and not c.holds for c in report.claims) else 0
