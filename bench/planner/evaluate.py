"""Evaluation of the planner on this machine (results in bench/planner/results-<abi>.md, docs/planner.md).

For each P and collective, one `collplan plan --evaluator measure --prune 0` run under mpirun times EVERY
candidate (and the MPI library's own collective) at every size, next to the estimate of each on the calibrated
machine file. From that one run:

  estimate choice   the candidate with the smallest estimate (what `collplan plan` picks without measuring)
  measured best     the collplan candidate with the smallest measured time (best of interleaved repetitions)
  regret            measured time of the estimate choice / measured time of the measured best (1 = perfect)
  vs native         measured time of the estimate choice / measured time of the MPI library's own collective

    .venv/bin/python bench/planner/evaluate.py --abi openmpi --compare bench/planner/localhost-openmpi.toml,ib-qdr
    .venv/bin/python bench/planner/evaluate.py --abi mpich --compare bench/planner/localhost-mpich.toml,ib-qdr
    .venv/bin/python bench/planner/evaluate.py --abi openmpi --summarise-only   # from the raw JSON again

Raw measurements go to bench/planner/raw/<abi>-P<P>-<collective>.json; every summary re-estimates the candidates
on its machine file, so other models can be scored against the same measurements (--compare, --summarise-only).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
COLLECTIVES = ["allgather", "alltoall", "allreduce", "barrier"]
SIZES = "8,32,128,512,2KiB,8KiB,32KiB,128KiB,512KiB,1MiB"


def measure(abi: str, machine: str, P: int, collective: str, reps: int) -> dict:
    home = ROOT / ".mpi" / abi
    # no binding: on a shared machine a rank pinned to a busy core waits a whole time slice
    cmd = [str(home / "bin" / "mpirun"), "-n", str(P)] + (["--oversubscribe", "--bind-to", "none"] if abi == "openmpi" else [])
    cmd += [sys.executable, "-m", "collplan", "plan", "--collective", collective, "--machine", machine,
            "--evaluator", "measure", "--prune", "0", "--reps", str(reps), "--sizes", SIZES, "--json", "--no-progress"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for k in ("MPI4PY_LIBMPI", "MPI4PY_MPIABI", "COLLPLAN_MPI"):
        env.pop(k, None)
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600, cwd=ROOT)
    if r.returncode != 0:
        sys.exit(f"evaluate: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    print(f"  P={P} {collective}: {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    return json.loads(r.stdout)


def estimates(plan: dict, machine: str) -> dict[str, list[float]]:
    """Each candidate's estimate at the plan's sizes on another machine file (label -> times)."""
    import collplan
    out = {}
    for c in plan["candidates"]:
        if c["algorithm"] == "native":
            continue
        s = collplan.schedule(c["algorithm"], ranks=plan["ranks"], params=c["params"])
        out[c["label"]] = [r.time_s for r in collplan.estimate(s, plan["sizes"], machine=machine)]
    return out


def rows_of(plan: dict, machine: str | None = None) -> list[dict]:
    """One row per size: estimate choice (on `machine`, default the one the plan was measured with), measured
    best, regret, ratio to native."""
    cands = [c for c in plan["candidates"] if c["algorithm"] != "native"]
    native = next((c for c in plan["candidates"] if c["algorithm"] == "native"), None)
    if machine is not None:
        other = estimates(plan, machine)
        cands = [dict(c, estimate_s=other[c["label"]]) for c in cands]
    out = []
    for j, n in enumerate(plan["sizes"]):
        est = min(cands, key=lambda c: c["estimate_s"][j])
        best = min(cands, key=lambda c: c["times_s"][j])
        t_est, t_best = est["times_s"][j], best["times_s"][j]
        t_nat = native["times_s"][j] if native else None
        out.append({"size": n, "choice": est["label"], "choice_s": t_est, "choice_estimate_s": est["estimate_s"][j],
                    "best": best["label"], "best_s": t_best, "best_estimate_s": best["estimate_s"][j],
                    "regret": t_est / t_best, "native_s": t_nat, "vs_native": t_est / t_nat if t_nat else None})
    return out


def fmt_t(s: float) -> str:
    return f"{s * 1e6:.1f}" if s < 1e-3 else f"{s * 1e6:.0f}"


def regret_summary(results: dict[tuple[int, str], dict], machine: str | None = None) -> list[str]:
    """The summary table (per P and overall) of the estimate choice on `machine`."""
    lines = ["| P | cases | median regret | worst regret | regret <= 1.05 | median choice / native |",
             "|---:|---:|---:|---:|---:|---:|"]
    by_p: dict[int, list[dict]] = {}
    for (P, _), plan in sorted(results.items()):
        by_p.setdefault(P, []).extend(rows_of(plan, machine))
    for P, rows in list(by_p.items()) + [("all", [r for rows in by_p.values() for r in rows])]:
        reg = [r["regret"] for r in rows]
        nat = [r["vs_native"] for r in rows if r["vs_native"]]
        lines.append(f"| {P} | {len(rows)} | {statistics.median(reg):.3f} | {max(reg):.2f} | "
                     f"{sum(x <= 1.05 for x in reg)}/{len(reg)} | {statistics.median(nat):.2f} |")
    return lines


def summarise(abi: str, machine: str, results: dict[tuple[int, str], dict], others: list[str]) -> str:
    lines = [f"# Planner evaluation: {abi}", "",
             f"Machine file `{machine}`; sizes {SIZES.replace(',', ', ')} (bytes per rank, per destination, or the "
             "vector); times in microseconds, best of interleaved repetitions, each the slowest rank's mean.", "",
             "| P | collective | size | estimate choice | measured | measured best | measured | regret | native | "
             "choice / native |", "|---:|---|---:|---|---:|---|---:|---:|---:|---:|"]
    for (P, coll), plan in sorted(results.items()):
        for r in rows_of(plan, machine):
            nat = f"{fmt_t(r['native_s'])} | {r['vs_native']:.2f}" if r["native_s"] else "- | -"
            lines.append(f"| {P} | {coll} | {r['size']} | {r['choice']} | {fmt_t(r['choice_s'])} | {r['best']} | "
                         f"{fmt_t(r['best_s'])} | {r['regret']:.2f} | {nat} |")
    lines += ["", f"## Summary: estimate choice on `{machine}`", ""] + regret_summary(results, machine)
    for other in others:
        lines += ["", f"## Summary: estimate choice on `{other}` (same measurements)", ""]
        lines += regret_summary(results, other)
    return "\n".join(lines) + "\n"


def plot(abi: str, results: dict[tuple[int, str], dict], machines: list[str], path: Path) -> None:
    """Regret against size, one panel per collective, a line per P (solid: the first machine file)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    for ax, coll in zip(axes, ["allgather", "alltoall", "allreduce"]):
        for k, machine in enumerate(machines[:2]):
            for P, colour in zip((2, 4, 8), ("C0", "C1", "C2")):
                if (P, coll) not in results:
                    continue
                rows = rows_of(results[(P, coll)], machine)
                ax.plot([r["size"] for r in rows], [r["regret"] for r in rows], colour, ls="-" if k == 0 else ":",
                        marker="o" if k == 0 else None, ms=3,
                        label=f"P={P}, {Path(machine).stem}" if coll == "allgather" else None)
        ax.axhline(1.05, color="grey", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_title(coll)
        ax.set_xlabel("size (bytes)")
    axes[0].set_ylabel("regret (chosen / measured best)")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"planner by estimate vs measured best, {abi}, this 2-core machine")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--abi", required=True, choices=["openmpi", "mpich"])
    ap.add_argument("--machine", help="calibrated machine file whose estimates prune the measurement and are "
                    "scored (default bench/planner/localhost-<abi>-loggp.toml)")
    ap.add_argument("--ranks", default="2,4,8")
    ap.add_argument("--collectives", default=",".join(COLLECTIVES))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--summarise-only", action="store_true", help="re-read bench/planner/raw/ instead of measuring")
    ap.add_argument("--compare", default="", help="more machine files whose estimate choice is scored against the "
                    "same measurements (comma list)")
    args = ap.parse_args()
    machine = args.machine or str(HERE / f"localhost-{args.abi}-loggp.toml")
    raw = HERE / "raw"
    raw.mkdir(exist_ok=True)
    results = {}
    for P in (int(x) for x in args.ranks.split(",")):
        for coll in args.collectives.split(","):
            path = raw / f"{args.abi}-P{P}-{coll}.json"
            if not args.summarise_only:
                path.write_text(json.dumps(measure(args.abi, machine, P, coll, args.reps), indent=1) + "\n")
            if path.exists():
                results[(P, coll)] = json.loads(path.read_text())
    out = HERE / f"results-{args.abi}.md"
    others = [m for m in args.compare.split(",") if m]
    out.write_text(summarise(args.abi, os.path.relpath(machine, ROOT), results, others))
    plot(args.abi, results, [machine] + others, ROOT / "docs" / "img" / f"planner-regret-{args.abi}.png")
    print(out.read_text()[out.read_text().index("## Summary"):])


if __name__ == "__main__":
    main()
