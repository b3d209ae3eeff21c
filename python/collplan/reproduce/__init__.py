"""Reproductions of the papers' tables and figures: `collplan reproduce NAME [--out DIR] [--quick]`.

One module per reproduction in this package, defining::

    NAME = "mce-d5"                      # the CLI name
    SUMMARY = "one line"
    def run(quick: bool) -> Report: ...  # computes everything; never types in a result

The framework prints the report, writes ``<out>/<NAME>.csv`` (the table), one PNG per figure (drawn by a
function(path) that saves with collplan.plot.save_figure) and
``<out>/<NAME>.json`` (table, claims, notes), and exits 1 if a claim marked ``required`` does not hold.

A Claim carries the paper's value, collplan's value and how they are compared (``compare``); whether it holds is
computed from those alone. Statements over several cells are counts ("the paper: all 6 cells; collplan: 2").
"""
from __future__ import annotations

import csv
import importlib
import io
import json
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .._core import CollplanError


COMPARISONS = ("==", "~", "<", "<=", ">", ">=", "in")


def compare(ours, paper, cmp: str = "==", tol: float = 0.0) -> bool:
    """Does collplan's value stand in relation `cmp` to the paper's?

    ``==``  equal (numbers: within tol x |paper|; anything else: exactly equal)
    ``~``   the same as ``==`` for numbers, written where a tolerance is the point ("about N")
    ``<`` ``<=`` ``>`` ``>=``  ours against paper, ``<=``/``>=`` with a slack of tol x |paper|
    ``in``  paper is an interval (lo, hi): lo <= ours <= hi
    """
    if cmp not in COMPARISONS:
        raise ValueError(f"comparison '{cmp}' is invalid (allowed: {', '.join(COMPARISONS)})")
    if cmp == "in":
        lo, hi = paper
        return lo <= ours <= hi
    num = isinstance(ours, (int, float)) and isinstance(paper, (int, float)) and not isinstance(ours, bool) \
        and not isinstance(paper, bool)
    if cmp in ("==", "~"):
        if num:
            return abs(ours - paper) <= tol * abs(paper) + (0.0 if tol else 1e-12 * max(1.0, abs(paper)))
        return ours == paper
    if not num:
        raise ValueError(f"comparison '{cmp}' needs numbers (got {ours!r} and {paper!r})")
    slack = tol * abs(paper)
    return {"<": ours < paper, "<=": ours <= paper + slack, ">": ours > paper, ">=": ours >= paper - slack}[cmp]


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return "(" + ", ".join(_fmt(x) for x in v) + ")"
    return str(v)


@dataclass(frozen=True)
class Claim:
    """A statement of the paper, checked against what collplan computes: the paper's value, collplan's value and
    how they are compared; whether it holds is computed from those alone (never passed in).

    For a statement over several cells ("X is fastest at every large size") the values are counts: paper = the
    number of cells (the paper says all), ours = the cells where it holds in collplan, cmp ``==``; detail lists
    the cells. `required`: a failure is a failure of the reproduction (exit 1) -- for checks of collplan's own
    soundness (bounds, closed forms), not for the paper's measurements.
    """
    text: str                # what the paper says
    paper: object            # the paper's value (a number, a count of cells, a name or an ordering)
    ours: object             # collplan's value of the same kind
    cmp: str = "=="          # how ours is compared with paper (see compare)
    tol: float = 0.0         # relative tolerance of ==/~/<=/>=
    unit: str = ""           # unit of both values ("ms", "phases", "cells", ...)
    detail: str = ""         # the cells, or why it fails
    required: bool = False   # a failure of this claim is a failure of the reproduction (exit 1)

    def __post_init__(self):
        compare(self.ours, self.paper, self.cmp, self.tol)  # refuses a bad comparison when the claim is made

    @property
    def holds(self) -> bool:
        return compare(self.ours, self.paper, self.cmp, self.tol)

    def comparison(self) -> str:
        """The test in words: 'collplan <= paper + 10%', 'within 25%', 'equal'."""
        if self.cmp == "in":
            return f"collplan in [{_fmt(self.paper[0])}, {_fmt(self.paper[1])}]"
        if self.cmp in ("==", "~"):
            return f"within {self.tol:.0%}" if self.tol else "must equal"
        return f"collplan {self.cmp} paper" + (f" {'+' if self.cmp == '<=' else '-'} {self.tol:.0%}"
                                                if self.tol else "")

    def values(self) -> str:
        u = f" {self.unit}" if self.unit else ""
        return f"paper {_fmt(self.paper)}{u}, collplan {_fmt(self.ours)}{u} ({self.comparison()})"

    def as_dict(self) -> dict:
        return {"text": self.text, "paper": self.paper, "collplan": self.ours, "comparison": self.comparison(),
                "cmp": self.cmp, "tol": self.tol, "unit": self.unit, "holds": self.holds,
                "required": self.required, "detail": self.detail}


def ranking(values: dict, rel: float = 0.0) -> str:
    """The names of `values` from the smallest value up, 'a < b = c': '=' where two values are equal (within rel
    of the larger), so that a tie never reads as an order."""
    order = sorted(values, key=lambda k: (values[k], str(k)))
    out = str(order[0]) if order else ""
    for a, b in zip(order, order[1:]):
        tie = abs(values[b] - values[a]) <= rel * max(abs(values[a]), abs(values[b]))
        out += (" = " if tie else " < ") + str(b)
    return out


def count(cells: dict, ok) -> tuple[int, int, str]:
    """For a claim over cells: (number of cells, cells where ok(value) holds, the failing cells by name)."""
    bad = [str(k) for k, v in cells.items() if not ok(v)]
    return len(cells), len(cells) - len(bad), ("not in: " + ", ".join(bad)) if bad else "in every cell"


@dataclass
class Report:
    title: str
    columns: list[str]
    rows: list[list]                     # the table (numbers or strings)
    claims: list[Claim] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Figures: name -> function(path) that draws and saves a PNG at path.
    figures: dict[str, Callable[[Path], None]] = field(default_factory=dict)


def cells(n: int, piece: Callable[[int], object]) -> list:
    """[piece(0), ..., piece(n - 1)]: a reproduction's independent cells, split over the ranks when `collplan
    reproduce` runs under mpirun (collplan.sweep; each result must pickle), all here otherwise."""
    from ..sweep import world
    return world().run(n, piece)


def names() -> list[str]:
    return sorted(_modules())


def _modules() -> dict:
    mods = {}
    for info in pkgutil.iter_modules(__path__):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "NAME") and hasattr(mod, "run"):
            mods[mod.NAME] = mod
    return mods


def summary(name: str) -> str:
    return _modules()[name].SUMMARY


def run(name: str, quick: bool = False) -> Report:
    mods = _modules()
    if name not in mods:
        raise CollplanError(f"unknown reproduction '{name}' (allowed: {', '.join(sorted(mods)) or 'none'})")
    return mods[name].run(quick)


def write_outputs(name: str, report: Report, out: Path) -> list[Path]:
    """Write CSV, JSON and figures; each file appears complete or not at all."""
    from ..output import atomic_write
    out.mkdir(parents=True, exist_ok=True)  # --out names a directory: created, as the reproduce docs say
    written = []
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(report.columns)
    w.writerows(report.rows)
    atomic_write(str(out / f"{name}.csv"), buf.getvalue())
    written.append(out / f"{name}.csv")
    doc = {"title": report.title, "columns": report.columns, "rows": report.rows,
           "claims": [c.as_dict() for c in report.claims], "notes": report.notes}
    atomic_write(str(out / f"{name}.json"), json.dumps(doc, indent=2, default=str))
    written.append(out / f"{name}.json")
    for fig, draw in report.figures.items():
        path = out / f"{fig}.png"
        draw(path)  # through collplan.plot.save_figure: atomic, errors name the file itself
        written.append(path)
    return written


def failed_required(report: Report) -> list[Claim]:
    """The required claims that do not hold: any makes the reproduction fail (exit 1)."""
    return [c for c in report.claims if c.required and not c.holds]


def render(report: Report) -> str:
    """The table (fitted to the terminal), the claims -- each marked required or not -- and the notes."""
    from ..tables import render as table, wrap
    lines = [wrap(f"# {report.title}", ""), table(report.columns, report.rows)]
    if report.claims:
        lines.append("")
        lines.append(wrap("Claims of the paper, checked: the paper's value, collplan's, the comparison; holds/FAILS "
                          "from those alone (required: the reproduction fails, exit 1, if it does not hold):", ""))
        for c in report.claims:
            mark = ("holds" if c.holds else "FAILS") + (", required" if c.required else "")
            lines.append(wrap(f"  [{mark}] {c.text} -- {c.values()}" + (f"; {c.detail}" if c.detail else ""), ""))
    for n in report.notes:
        lines.append(wrap(f"note: {n}", ""))
    bad = failed_required(report)
    if bad:
        lines.append(wrap(f"FAILED: {len(bad)} required claim(s) do not hold: " + "; ".join(c.text for c in bad), ""))
    return "\n".join(lines)
