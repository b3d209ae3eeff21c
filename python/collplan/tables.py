"""Text tables and CSV for every command: one formatter, so every table fits the terminal.

``render(columns, rows)`` right-aligns the columns (left-aligns those named in ``left``) with two spaces between
them. A table wider than the terminal (``COLUMNS``, else the terminal's width, else 100 when stdout is not a
terminal) is wrapped into blocks of columns, each block repeating the first ``key`` columns (the size, the
algorithm), so every line fits and each row can still be read across.
"""
from __future__ import annotations

import csv
import io
import json
import shutil
import textwrap

from .output import printable

SEP = "  "


def width() -> int:
    """The width to fit: $COLUMNS, the terminal's, or 100 when stdout is not a terminal."""
    return max(40, shutil.get_terminal_size((100, 24)).columns)


def cell(v) -> str:
    """A value as a table shows it; text that came from a file or a user (a schedule's algorithm name) with its
    control characters escaped, so a table stays a table."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return printable(v)


def render(columns: list[str], rows: list[list], key: int = 1, left: tuple[int, ...] = (), max_width: int | None = None,
           indent: str = "") -> str:
    cells = [[cell(v) for v in r] for r in rows]
    columns = [printable(c) for c in columns]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    limit = (max_width or width()) - len(indent)
    last = len(columns) - 1
    room = limit - sum(w + len(SEP) for w in widths[:-1])
    if last in left and sum(widths) + len(SEP) * last > limit and room >= 24:
        # a text column at the end (a description): its cells wrap within the line, other cells stay blank below
        wrapped = []
        for r in cells:
            parts = textwrap.wrap(r[last], room, break_on_hyphens=False) or [""]
            wrapped.append(r[:last] + [parts[0]])
            wrapped += [[""] * last + [p] for p in parts[1:]]
        cells, widths[last] = wrapped, min(widths[last], room)

    def line(values, idx):
        return indent + SEP.join(values[i].ljust(widths[i]) if i in left else values[i].rjust(widths[i])
                                 for i in idx).rstrip()

    key = min(key, len(columns))
    blocks, cur = [], list(range(key))
    base = sum(widths[i] + len(SEP) for i in cur)
    used = base
    for i in range(key, len(columns)):
        if used + widths[i] > limit and len(cur) > key:
            blocks.append(cur)
            cur, used = list(range(key)), base
        cur.append(i)
        used += widths[i] + len(SEP)
    blocks.append(cur)
    out = []
    for b, idx in enumerate(blocks):
        if b:
            out.append("")
        out.append(line(list(columns), idx))
        out += [line(r, idx) for r in cells]
    return "\n".join(out)


def wrap(text: str, indent: str, max_width: int | None = None) -> str:
    """A long line (a source, a reason) wrapped to the terminal, continuation lines indented a little more."""
    return textwrap.fill(text, width=max_width or width(), initial_indent=indent, subsequent_indent=indent + "    ",
                         break_on_hyphens=False)


def _flat(v):
    if isinstance(v, (dict, list, tuple)):
        if isinstance(v, (list, tuple)) and all(not isinstance(x, (dict, list, tuple)) for x in v):
            return ";".join(str(x) for x in v)
        return json.dumps(v, separators=(",", ":"))
    return "" if v is None else v


def csv_text(records: list[dict], columns: list[str] | None = None) -> str:
    """Records (the rows --json prints) as CSV with a header line; lists become a;b;c, nested objects JSON."""
    cols = columns or list(dict.fromkeys(k for r in records for k in r))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in records:
        w.writerow([_flat(r.get(c)) for c in cols])
    return buf.getvalue()
