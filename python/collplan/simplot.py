"""Plots of simulations: per-direction link utilisation of a 2D torus (heat maps and bandwidth over time) and
time-vs-size curves."""
from __future__ import annotations

from . import _core
from ._core import CollplanError
from .plot import MAX_LINES, legend_outside, line_style, panels, save_figure
from .plot import pyplot as _plt


def link_grids(sim) -> dict:
    """Per direction (+X, -X, +Y, -Y) of a 2D torus or mesh, a rows x cols grid: the utilisation of the link that
    leaves node (x, y) in that direction (None where there is no link)."""
    topo = _core.Topology.parse(sim.topology)
    dims = list(topo.dims)
    if len(dims) != 2 or not sim.link_busy_s:
        raise CollplanError(f"a link heat map needs a 2D torus or mesh and a flow or packet run "
                            f"(got {sim.topology}, fidelity {sim.fidelity})")
    cols, rows = dims
    grids = {d: [[None] * cols for _ in range(rows)] for d in sim.directions}
    for lid, (a, _b) in enumerate(_core.topology_links(sim.topology)):
        name = sim.directions[sim.link_direction[lid]]
        grids[name][a // cols][a % cols] = sim.link_busy_s[lid] / sim.time_s if sim.time_s > 0 else 0.0
    return grids


def plot_links(sim, path: str, title: str = "") -> None:
    """Four heat maps (one per direction) above the mean bandwidth per link of each direction over time."""
    plt = _plt()
    grids = link_grids(sim)
    names = [d for d in ("+X", "-X", "+Y", "-Y") if d in grids]
    fig = plt.figure(figsize=(11, 6.6), dpi=100)
    gs = fig.add_gridspec(2, len(names) + 1, width_ratios=[1] * len(names) + [0.06], height_ratios=[1, 0.9])
    im = None
    for i, name in enumerate(names):
        ax = fig.add_subplot(gs[0, i])
        g = [[float("nan") if v is None else v for v in row] for row in grids[name]]
        im = ax.imshow(g, vmin=0, vmax=1, cmap="viridis", origin="lower")
        ax.set_title(f"{name} links", fontsize=9)
        ax.set_xlabel("x", fontsize=8)
        ax.set_ylabel("y", fontsize=8)
        ax.tick_params(labelsize=7)
    if im is not None:
        fig.colorbar(im, cax=fig.add_subplot(gs[0, len(names)]), label="utilisation (busy / total time)")
    ax = fig.add_subplot(gs[1, :])
    bw = sim.direction_bandwidth()
    for k, name in enumerate(names):
        series = [b for i, b in enumerate(bw.get(name, [])) if i * sim.bin_s < sim.time_s]
        st = line_style(k)
        ax.plot([(i + 0.5) * sim.bin_s * 1e3 for i in range(len(series))], [b / 1e9 for b in series], label=name, lw=1,
                color=st["color"], linestyle=st["linestyle"])
    if sim.link_s_per_byte:
        ax.axhline(1e-9 / sim.link_s_per_byte, color="k", ls="--", lw=0.8, label="link bandwidth")
    ax.set_xlabel("simulated time (ms)", fontsize=9)
    ax.set_ylabel("mean GB/s per link", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(True, alpha=0.3)
    legend_outside(ax)
    fig.suptitle(title or f"{sim.algorithm} on {sim.topology}, {_core.format_bytes(sim.size_bytes)} per block, "
                 f"{sim.fidelity}: {_core.format_time(sim.time_s)} ({sim.ratio:.3f} x ideal)", fontsize=10)
    fig.tight_layout()
    save_figure(fig, path)


def plot_times(sims, path: str, title: str = "") -> None:
    """Time vs size, one line per algorithm, the ideal dashed; more than MAX_LINES - 1 algorithms: several panels."""
    plt = _plt()
    algs = list(dict.fromkeys(s.algorithm for s in sims))
    groups = panels(algs, MAX_LINES - 1)
    fig, axes = plt.subplots(len(groups), 1, figsize=(8.5, 4.2 + 3.0 * (len(groups) - 1)), dpi=110, sharex=True,
                             squeeze=False)
    ideal = sorted({(s.size_bytes, s.ideal_s) for s in sims if s.algorithm == algs[0]})
    s0 = sims[0]
    for k, (ax, names) in enumerate(zip(axes[:, 0], groups)):
        for i, name in enumerate(names):
            pts = sorted((s.size_bytes, s.time_s) for s in sims if s.algorithm == name)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ms=3, label=name.split("/", 1)[-1], **line_style(i))
        ax.plot([p[0] for p in ideal], [p[1] for p in ideal], "k--", lw=1, label=f"ideal ({algs[0].split('/')[-1]})")
        if all(p[0] > 0 for p in ideal):
            ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_ylabel("simulated time (s)")
        ax.grid(True, which="both", alpha=0.3)
        legend_outside(ax)
        if k == 0:
            ax.set_title(title or f"{s0.collective}, P={s0.ranks} on {s0.topology}, {s0.fidelity} simulation",
                         fontsize=10)
    axes[-1, 0].set_xlabel("message size (bytes)")
    save_figure(fig, path)
