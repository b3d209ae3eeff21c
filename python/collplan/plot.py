"""Plots: time vs size, one line per algorithm (each with its best parameters unless asked for all), the lower
bound dashed; and the helpers every plot of collplan uses (simplot.py, the reproductions):

- the file format follows the extension: .png, .svg or .pdf (anything else is refused before any work is done);
- at most MAX_LINES lines per axes (more: one panel per group of algorithms), each line its own colour, line
  style and marker;
- the legend to the right of the axes, never over the data; files written atomically.
"""
from __future__ import annotations

import io
from pathlib import Path

from ._core import CollplanError

FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
MAX_LINES = 8
_LINESTYLES = ["-", "--", "-.", ":"]
_MARKERS = ["o", "s", "^", "v", "D", "<", ">", "p", "*", "h"]


def check_plot_path(path: str) -> str:
    """The matplotlib format for a plot file's extension; CollplanError naming the allowed ones otherwise."""
    fmt = FORMATS.get(Path(str(path)).suffix.lower())
    if fmt is None:
        raise CollplanError(f"plot file {path}: unknown extension (allowed: {', '.join(FORMATS)})")
    return fmt


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def line_style(i: int) -> dict:
    """The i-th line's colour, line style and marker: all three differ between neighbours, and no two of the
    first 20 lines look alike."""
    return dict(color=f"C{i % 10}", linestyle=_LINESTYLES[i % 4], marker=_MARKERS[i % len(_MARKERS)])


def legend_outside(ax, fontsize: float = 8, below: bool = False, **kw):
    """The legend right of the axes, top-aligned, or (below=True) under the x axis label, in columns;
    save_figure keeps it inside the image."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    if below:
        return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), borderaxespad=0.0, fontsize=fontsize,
                         frameon=False, ncol=kw.pop("ncol", 3), **kw)
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=fontsize,
                     frameon=False, **kw)


def save_figure(fig, path) -> None:
    """Write the figure in the format of its extension, legends included, atomically (errors name `path`)."""
    plt = pyplot()
    from .output import atomic_write
    fmt = check_plot_path(str(path))
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format=fmt, bbox_inches="tight")
    finally:
        plt.close(fig)
    atomic_write(str(path), buf.getvalue())


def _size_axis(ax, sizes) -> None:
    if sizes and all(n > 0 for n in sizes):
        from matplotlib.ticker import FuncFormatter

        from ._core import format_bytes
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_bytes(x) if x >= 1 else ""))
    ax.set_xlabel("message size (bytes)")


def panels(series: list, per_panel: int = MAX_LINES, group=lambda name: name) -> list[list]:
    """Split the series into panels of at most per_panel lines each: the lines of one group (one algorithm's
    parameter sets) stay together where they fit, a group larger than a panel is split evenly."""
    groups: dict = {}
    for name in series:
        groups.setdefault(group(name), []).append(name)
    out: list[list] = []
    open_panel = False  # may the last panel take more groups? (not a piece of a split group)
    for names in groups.values():
        if len(names) > per_panel:
            n = -(-len(names) // per_panel)
            size = -(-len(names) // n)
            out += [names[i:i + size] for i in range(0, len(names), size)]
            open_panel = False
        elif open_panel and len(out[-1]) + len(names) <= per_panel:
            out[-1] += names
        else:
            out.append(list(names))
            open_panel = True
    return out or [[]]


def plot_estimates(rows, path: str, title: str = "", all_params: bool = False) -> None:
    """Time vs size: per algorithm its best parameter set at each size (all_params: every set, as its own line),
    the lower bound dashed black. More than MAX_LINES - 1 lines: several panels, one above the other."""
    from .api import row_labels, short_name

    labels = row_labels(rows)
    series: dict[str, dict[int, float]] = {}
    for r, lab in zip(rows, labels):
        short = short_name(r.algorithm)
        name = lab if all_params or lab == short else f"{short} (best {_param_names(lab)})"
        pts = series.setdefault(name, {})
        pts[r.size_bytes] = min(pts.get(r.size_bytes, r.time_s), r.time_s)
    lb = sorted({(r.size_bytes, r.lower_bound_s) for r in rows if r.algorithm == rows[0].algorithm})
    groups = panels(list(series), MAX_LINES - 1, group=lambda name: name.split("[", 1)[0].split(" ", 1)[0])
    plt = pyplot()
    fig, axes = plt.subplots(len(groups), 1, figsize=(8.5, 4.2 + 3.0 * (len(groups) - 1)), dpi=120, sharex=True,
                             squeeze=False)
    for k, (ax, names) in enumerate(zip(axes[:, 0], groups)):
        for i, name in enumerate(names):
            pts = sorted(series[name].items())
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ms=3, lw=1.3, label=name, **line_style(i))
        ax.plot([p[0] for p in lb], [p[1] for p in lb], color="k", ls="--", lw=1.2, label="lower bound")
        ax.set_yscale("log")
        ax.set_ylabel("time (s)")
        ax.grid(True, which="both", alpha=0.3)
        legend_outside(ax)
        if k == 0:
            ax.set_title(title, fontsize=10)
    _size_axis(axes[-1, 0], [p[0] for p in lb])
    for ax in axes[:-1, 0]:
        ax.set_xlabel("")
    save_figure(fig, path)


def _param_names(label: str) -> str:
    inner = label[:-1].split("[", 1)[1]
    return " ".join(kv.split("=", 1)[0] for kv in inner.split(" "))


def plot_plan(plan, path: str) -> None:
    """A plan at a glance (plan_figure), written to `path`."""
    save_figure(plan_figure(plan), path)


def plan_figure(plan):
    """Each candidate's time relative to the best at every size (log scale): the winners, then the runner-ups, in
    colour (at most MAX_LINES - 1 lines), every other candidate as one grey band from its fastest to its slowest;
    the ranges of the threshold table as bands, each named above the plot, in as many rows as the names need not to
    overlap."""
    plt = pyplot()
    sizes = [max(n, 1) for n in plan.sizes]
    best = [min(t[j] for t in plan.times if t[j] is not None) for j in range(len(sizes))]
    ordered = list(dict.fromkeys([r.winner for r in plan.ranges] + [r.runner_up for r in plan.ranges if r.runner_up]))
    shown = ordered[:MAX_LINES - 1]
    fig, ax = plt.subplots(figsize=(8.5, 4.8), dpi=120)
    bands = []
    for k, r in enumerate(plan.ranges):  # bands: the ranges of the table
        lo, hi = max(r.min_bytes, sizes[0]), r.max_bytes or sizes[-1]
        ax.axvspan(lo, hi, color="0.93" if k % 2 else "white", zorder=0)
        bands.append(((lo * hi) ** 0.5, r.winner.label()))
    curves = [(c, [(n, x / b) for n, x, b in zip(sizes, t, best) if x is not None and b > 0])
              for c, t in zip(plan.candidates, plan.times)]
    for c, pts in curves:  # winners and runner-ups first (the legend's order)
        if pts and c in shown:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ms=3, lw=1.5, label=c.label(), zorder=2,
                    **line_style(shown.index(c)))
    others = [dict(pts) for c, pts in curves if pts and c not in shown]
    at = [n for n in sizes if any(n in o for o in others)]
    if at:  # one band, not a line per candidate
        ax.fill_between(at, [min(o[n] for o in others if n in o) for n in at],
                        [max(o[n] for o in others if n in o) for n in at], color="0.85", zorder=1, lw=0,
                        label=f"{len(others)} other candidates (fastest..slowest)")
    ax.set_yscale("log")
    ax.set_ylabel("time / best time at that size")
    ax.grid(True, which="both", alpha=0.3)
    if len(sizes) > 1 and sizes[-1] > sizes[0]:
        _size_axis(ax, sizes)
    else:
        ax.set_xlabel("message size (bytes)")
    rows = _name_bands(fig, ax, bands)
    ax.set_title(f"{plan.collective}, P={plan.ranks} on {plan.topology}, {plan.machine}, {plan.evaluator}",
                 fontsize=10, pad=16 + 11 * rows)
    legend_outside(ax, fontsize=7)
    return fig


def _name_bands(fig, ax, bands) -> int:
    """Each (x, name) above the axes at x, in the lowest row where it overlaps no name already placed; the rows."""
    renderer = fig.canvas.get_renderer()
    placed: list[list] = []  # per row, the window extents of its names
    for x, name in bands:
        for row in range(len(bands)):
            text = ax.text(x, 1.01 + 0.055 * row, name, fontsize=7, ha="center", va="bottom",
                           transform=ax.get_xaxis_transform())
            box = text.get_window_extent(renderer).expanded(1.05, 1.0)
            if row == len(placed):
                placed.append([])
            if not any(box.overlaps(b) for b in placed[row]):
                placed[row].append(box)
                break
            text.remove()
    return len(placed)
