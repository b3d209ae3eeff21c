"""Figures 2 and 3 of Nicol & Bokhari (1994): predicted complete-exchange time vs block size on the iPSC/860.

Shared by mce_d5 and mce_d6. Every curve is the analytic estimate of a schedule collplan generates (Direct
Exchange, Standard Exchange, and Multiphase Exchange with each partition that is optimal somewhere in 0..400 B),
priced with the bundled machine file; the crossovers come from the paper's closed forms (all costs are linear in
m), and the test that both agree is a required claim.
"""
from __future__ import annotations

from pathlib import Path

from .. import exchange
from ..api import estimate, schedule
from ..machines import load_machine
from . import Claim, Report

MAX_BYTES = 400


def _lines(d: int, machine: str) -> dict[str, tuple[float, float]]:
    """Every algorithm of the family as a line (intercept s, slope s/B): DE, SE and every partition of d."""
    def line(f):
        a = f(0.0)
        return a, f(1.0) - a
    out = {"DE": line(lambda m: exchange.cost("direct_exchange", d, m, machine=machine)),
           "SE": line(lambda m: exchange.cost("standard_exchange", d, m, machine=machine))}
    for p in exchange.integer_partitions(d):
        part = tuple(sorted(p))
        out[_name(part)] = line(lambda m, part=part: exchange.cost("multiphase", d, m, partition=part, machine=machine))
    return out


def _name(part) -> str:
    return "(" + ",".join(str(x) for x in part) + ")"


def _envelope(lines: dict[str, tuple[float, float]], lo: float, hi: float) -> list[tuple[float, str]]:
    """The cheapest line from lo to hi as [(m_from, name), ...] (exact: intersections of lines)."""
    def at(name, m):
        a, b = lines[name]
        return a + b * m
    cur = min(lines, key=lambda n: (at(n, lo), lines[n][1]))
    out, m = [(lo, cur)], lo
    while True:
        best, when = None, float("inf")
        for n, (a, b) in lines.items():
            if b < lines[cur][1]:
                x = max(m, (a - lines[cur][0]) / (lines[cur][1] - b))
                if x < when:
                    best, when = n, x
        if best is None or when > hi:
            return out
        out.append((when, best))
        cur, m = best, when


def _curves(d: int, machine: str, names: list[str], sizes: list[int]) -> dict[str, list[float]]:
    """Analytic estimates of the generated schedules on the machine's hypercube."""
    topo = load_machine(machine).topology
    out = {}
    for n in names:
        if n == "DE":
            s = schedule("alltoall/direct_exchange", topology=topo)
        elif n == "SE":
            s = schedule("alltoall/standard_exchange", topology=topo)
        else:
            s = schedule("alltoall/multiphase", topology=topo, params={"partition": n.strip("()")})
        out[n] = [r.time_s for r in estimate(s, sizes, machine=machine)]
    return out


def _plot(d: int, sizes, curves, env, path: Path) -> None:
    import numpy as np

    from ..plot import legend_outside, pyplot, save_figure
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(7.0, 4.6), dpi=110)
    bounds = [m for m, _ in env[1:]] + [MAX_BYTES]
    winners = {n: (m0, m1) for (m0, n), m1 in zip(env, bounds)}
    for i, (n, ys) in enumerate(curves.items()):
        color = f"C{i}"
        ax.plot(sizes, [y * 1e3 for y in ys], "--", color=color, lw=0.9, alpha=0.6)
        if n in winners:  # the curves are linear in m: interpolate the estimates up to the exact crossovers
            lo, hi = winners[n]
            xs = [lo] + [m for m in sizes if lo < m < hi] + [hi]
            ax.plot(xs, [y * 1e3 for y in np.interp(xs, sizes, ys)], "-", color=color, lw=2.4, label=f"{n} optimal")
        else:
            ax.plot([], [], "--", color=color, label=f"{n}" + (" (never optimal)" if n == "SE" else ""))
    ax.set_xlabel("message size m (bytes per destination)")
    ax.set_ylabel("predicted time (ms)")
    ax.set_title(f"Complete exchange on a {2 ** d}-node iPSC/860 (d = {d}): model of Nicol & Bokhari", fontsize=10)
    ax.set_xlim(0, MAX_BYTES)
    ax.set_ylim(0, 1.5 * curves["DE"][-1] * 1e3)  # like the paper's figures: SE leaves the plot
    ax.grid(True, alpha=0.3)
    legend_outside(ax)
    save_figure(fig, path)


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


def run_mce(d: int, machine: str, quick: bool, text_claims) -> Report:
    lines = _lines(d, machine)
    env = _envelope(lines, 0.0, MAX_BYTES)
    optimal = list(dict.fromkeys(n for _, n in env))
    names = ["DE", "SE"] + [n for n in optimal if n not in ("DE", "SE")]
    step = 50 if quick else 5
    sizes = sorted(set(range(0, MAX_BYTES + 1, step)) | {1, 32})
    curves = _curves(d, machine, names, sizes)

    def closed(n, m):
        a, b = lines[n]
        return a + b * m
    worst = max(_rel(y, closed(n, m)) for n, ys in curves.items() for m, y in zip(sizes, ys) if closed(n, m) > 0)
    rows = []
    for i, m in enumerate(sizes):
        best = min(names, key=lambda n: curves[n][i])
        rows.append([m] + [round(curves[n][i] * 1e3, 4) for n in names] + [best])
    claims = [Claim("the analytic estimate of every generated schedule equals the paper's closed form "
                    "(largest relative difference: rounding only)", (0.0, 1e-9), worst, "in", required=True),
              Claim("Standard Exchange is never optimal (0..400 B): sizes where it is optimal", 0,
                    sum(1 for _, n in env if n == "SE"), unit="intervals",
                    detail="optimal in turn: " + ", ".join(optimal), required=True),
              Claim("Direct Exchange is optimal for the largest blocks", "DE", env[-1][1],
                    detail=f"{env[-1][1]} optimal from {env[-1][0]:.1f} B", required=True)]
    claims += text_claims(lines, env, closed)
    de32, se32 = closed("DE", 32), closed("SE", 32)
    mce32 = min((n for n in lines if n.startswith("(")), key=lambda n: closed(n, 32))
    notes = [f"machine {machine}: {load_machine(machine).model}",
             "thresholds (lower hull over DE, SE and every partition of d): " +
             ", ".join(f"{n} from {m:.1f} B" for m, n in env),
             f"at 32 B: DE {de32 * 1e3:.2f} ms, SE {se32 * 1e3:.2f} ms, best multiphase {mce32} "
             f"{closed(mce32, 32) * 1e3:.2f} ms, DE / best multiphase = {de32 / closed(mce32, 32):.2f}",
             "predicted curves only: the measured (solid) lines of the paper's figure need an iPSC/860; the DE "
             "curve excludes the shuffle, as the paper's predicted DE line does",
             f"figure: mce-d{d}.png, dashed = whole curve, thick = where it is optimal"]
    figures = {f"mce-d{d}": lambda path: _plot(d, sizes, curves, env, path)}
    return Report(title=f"Nicol & Bokhari, Figure {2 if d == 5 else 3}: complete exchange, d = {d} "
                        f"({2 ** d} nodes), predicted time in ms",
                  columns=["m (B)"] + names + ["best"], rows=rows, claims=claims, notes=notes, figures=figures)


def crossover(env, first: str, then: str) -> float | None:
    """The size where `then` takes over from `first` on the envelope (None if it does not)."""
    for (m0, a), (m1, b) in zip(env, env[1:]):
        if a == first and b == then:
            return m1
    return None
