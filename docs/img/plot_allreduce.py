"""Draws docs/img/allreduce_nway.png: estimated allreduce time vs P under the default LogGP model of n=auto
(collplan.dissemination.DEFAULT_MODEL), for an 8-byte and a 2040-byte vector (the GASPI maximum of 255 doubles),
and the n that n=auto picks.   .venv/bin/python docs/img/plot_allreduce.py"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import collplan  # noqa: E402
from collplan import dissemination  # noqa: E402

MODEL = dissemination.DEFAULT_MODEL
PS = list(range(2, 129))
SIZES = [8, 2040]
ALGS = [("allreduce/nway_dissemination", "nway_dissemination (n = auto, keep)", {}),
        ("allreduce/recexch", "recexch k=2", {"k": 2}),
        ("allreduce/recexch", "recexch k=4", {"k": 4}),
        ("allreduce/recursive_doubling", "recursive_doubling", {}),
        ("allreduce/rabenseifner", "rabenseifner", {})]


def time_us(alg: str, P: int, size: int, params: dict) -> float:
    if alg.endswith("nway_dissemination"):
        params = {"n": dissemination.best_n(P, size)}
    s = collplan.schedule(alg, ranks=P, params=params)
    return collplan.estimate(s, sizes=[size], model=MODEL)[0].time_s * 1e6


def main() -> None:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for ax, size in zip(axes, SIZES):
        for alg, label, params in ALGS:
            ax.plot(PS, [time_us(alg, P, size, params) for P in PS], label=label, lw=1.2)
        ax.set_title(f"allreduce of {size} B, LogGP default model")
        ax.set_xlabel("P")
        ax.set_ylabel("estimated time (us)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    for size, style in zip(SIZES, ["o", "x"]):
        axes[2].plot(PS, [dissemination.best_n(P, size) for P in PS], style, ms=3, label=f"{size} B")
    axes[2].set_title("n chosen by n=auto")
    axes[2].set_xlabel("P")
    axes[2].set_ylabel("n")
    axes[2].legend(fontsize=8)
    axes[2].grid(alpha=0.3)
    fig.tight_layout()
    out = Path(__file__).with_name("allreduce_nway.png")
    fig.savefig(out, dpi=80)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
