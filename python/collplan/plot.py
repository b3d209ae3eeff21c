"""Plots: time vs size, one line per algorithm, the lower bound dashed."""
from __future__ import annotations

import io


def plot_estimates(rows, path: str, title: str = "") -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .cli import atomic_write

    from .api import row_labels

    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    names = row_labels(rows)
    for name in dict.fromkeys(names):
        pts = sorted((r.size_bytes, r.time_s) for n, r in zip(names, rows) if n == name)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=name)
    lb = sorted({(r.size_bytes, r.lower_bound_s) for r in rows if r.algorithm == rows[0].algorithm})
    ax.plot([p[0] for p in lb], [p[1] for p in lb], "k--", lw=1.2, label="lower bound")
    positive = all(p[0] > 0 for p in lb)
    ax.set_xscale("log", base=2) if positive else None
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("time (s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(path, buf.getvalue())
