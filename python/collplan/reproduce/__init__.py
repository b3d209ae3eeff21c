"""Reproductions of the papers' tables and figures: `collplan reproduce NAME [--out DIR] [--quick]`.

One module per reproduction in this package, defining::

    NAME = "mce-d5"                      # the CLI name
    SUMMARY = "one line"
    def run(quick: bool) -> Report: ...  # computes everything; never types in a result

The framework prints the report, writes ``<out>/<NAME>.csv`` (the table), one PNG per figure (drawn by a
function(path) that saves with collplan.plot.save_figure) and
``<out>/<NAME>.json`` (table, claims, notes), and exits 1 if a claim marked ``required`` does not hold.
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


@dataclass
class Claim:
    """A statement of the paper, checked against what collplan computes."""
    text: str          # what the paper says
    holds: bool        # does it hold under collplan's model/simulation?
    detail: str = ""   # by how much, or why not
    required: bool = False  # a failure of this claim is a failure of the reproduction (exit 1)


@dataclass
class Report:
    title: str
    columns: list[str]
    rows: list[list]                     # the table (numbers or strings)
    claims: list[Claim] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Figures: name -> function(path) that draws and saves a PNG at path.
    figures: dict[str, Callable[[Path], None]] = field(default_factory=dict)


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
           "claims": [c.__dict__ for c in report.claims], "notes": report.notes}
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
        lines.append("Claims of the paper, checked (required: the reproduction fails, exit 1, if it does not hold):")
        for c in report.claims:
            mark = ("holds" if c.holds else "FAILS") + (", required" if c.required else "")
            lines.append(wrap(f"  [{mark}] {c.text}" + (f" -- {c.detail}" if c.detail else ""), ""))
    for n in report.notes:
        lines.append(wrap(f"note: {n}", ""))
    bad = failed_required(report)
    if bad:
        lines.append(wrap(f"FAILED: {len(bad)} required claim(s) do not hold: " + "; ".join(c.text for c in bad), ""))
    return "\n".join(lines)
