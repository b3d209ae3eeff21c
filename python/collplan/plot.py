"""Plots: time vs size, one line per algorithm, the lower bound dashed."""
from __future__ import annotations

import io


def _finish(fig, ax, path: str, ylabel: str, title: str, legend_size: int) -> None:
    """Log time axis, labels, grid and legend; the PNG written atomically."""
    import matplotlib.pyplot as plt

    from .output import atomic_write

    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=legend_size)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(path, buf.getvalue())


def plot_estimates(rows, path: str, title: str = "") -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .api import row_labels

    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    names = row_labels(rows)
    for name in dict.fromkeys(names):
        pts = sorted((r.size_bytes, r.time_s) for n, r in zip(names, rows) if n == name)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=name)
    lb = sorted({(r.size_bytes, r.lower_bound_s) for r in rows if r.algorithm == rows[0].algorithm})
    ax.plot([p[0] for p in lb], [p[1] for p in lb], "k--", lw=1.2, label="lower bound")
    if all(p[0] > 0 for p in lb):
        from matplotlib.ticker import FuncFormatter
        from ._core import format_bytes
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_bytes(x) if x >= 1 else ""))
    _finish(fig, ax, path, "time (s)", title, legend_size=8)


def plot_plan(plan, path: str) -> None:
    """A plan at a glance: each candidate's time relative to the best at every size (log scale), the winners and
    runner-ups in colour and every other candidate in grey, the ranges of the threshold table as bands."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    from ._core import format_bytes
    sizes = [max(n, 1) for n in plan.sizes]
    best = [min(t[j] for t in plan.times if t[j] is not None) for j in range(len(sizes))]
    shown = {r.winner for r in plan.ranges} | {r.runner_up for r in plan.ranges if r.runner_up}
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=120)
    for k, r in enumerate(plan.ranges):  # bands: the ranges of the table
        lo, hi = max(r.min_bytes, sizes[0]), r.max_bytes or sizes[-1]
        ax.axvspan(lo, hi, color="0.93" if k % 2 else "white", zorder=0)
        ax.text((lo * hi) ** 0.5, 1.0, r.winner.label(), rotation=90, fontsize=7, ha="center", va="bottom", zorder=3)
    for c, t in zip(plan.candidates, plan.times):
        pts = [(n, x / b) for n, x, b in zip(sizes, t, best) if x is not None and b > 0]
        if not pts:
            continue
        style = dict(marker="o", ms=3, lw=1.5, label=c.label(), zorder=2) if c in shown else \
            dict(color="0.75", lw=0.8, zorder=1)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], **style)
    if len(sizes) > 1 and sizes[-1] > sizes[0]:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_bytes(x) if x >= 1 else ""))
    _finish(fig, ax, path, "time / best time at that size",
            f"{plan.collective}, P={plan.ranks} on {plan.topology}, {plan.machine}, {plan.evaluator}", legend_size=7)
