"""The planner's regret on the measurements of a 16-core node (../shared/data/node16/, README there): for each
collective and size, the algorithm the estimate (or a simulator) chooses on a machine file, timed as that node
measured it, against the fastest collplan algorithm measured there -- and against the MPI library's own collective.

    .venv/bin/python bench/planner/node16.py [--machine FILE] [--evaluator estimate|loggp|flow] [--data DIR]
                                             [--mpi openmpi|mpich] [--ranks P] [--measured-only] [--cpu] [--refit]

--data bench/planner/node16 --mpi mpich --ranks 8 scores the lent node's own runs (bench/planner/device.sh), whose
files are named the same way (run_<collective>_<mpi>_P<P>.json, calibrate_<mpi>_P<P>.toml).

The node measured every applicable algorithm once, with its default parameters (`collplan run ... --json`), so a
choice is timed by its algorithm's measurement (a choice of nway_dissemination[n=3] is timed as the measured
nway_dissemination[n=auto]); sizes the node did not measure for the chosen algorithm are left out and counted.
The machine file defaults to the node's own calibration (calibrate_<mpi>_P2.toml: one pair of ranks). --refit scores
it with the breakpoint and rendezvous jump that `collplan calibrate` now derives from the same ping-pong medians
(kept in the file's [calibration]): eager and rndv in [model], eager in [network].
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DATA = ROOT.parent / "shared" / "data" / "node16"
COLLECTIVES = ["allreduce", "allgather", "alltoall", "bcast", "reduce_scatter_block"]


def measured(path: Path) -> tuple[dict, dict, list[int]]:
    """({algorithm: {size: seconds}}, {size: native seconds}, sizes) of one `collplan run --json`, or the best of it
    and its repetition (the same name with _rep2) where the node ran the sweep twice."""
    times: dict[str, dict[int, float]] = {}
    native: dict[int, float] = {}
    for p in (path, path.with_name(path.stem + "_rep2.json")):
        if p != path and not p.exists():
            continue
        for r in json.loads(p.read_text())["rows"]:
            n = r["size_bytes"]
            if r.get("ok") and r.get("collplan_s"):
                t = times.setdefault(r["algorithm"], {})
                t[n] = min(t.get(n, float("inf")), r["collplan_s"])
            if r.get("native_s"):
                native[n] = min(native.get(n, float("inf")), r["native_s"])
    sizes = sorted({s for t in times.values() for s in t})
    return times, native, sizes


def choices(collective: str, ranks: int, machine: str, sizes: list[int], evaluator: str,
            measured_only: list[str] | None = None) -> dict[int, str]:
    """The algorithm the planner picks at each size: among every candidate and parameter set (`collplan plan`), or
    with measured_only, among those algorithms with their default parameters -- what the node measured, so that a
    choice is timed as what it is (nway_dissemination[n=1] is recursive doubling, not the measured n=auto)."""
    import collplan
    from collplan.planner import plan
    fidelity = evaluator if evaluator in ("loggp", "flow") else "loggp"
    if measured_only is None:
        p = plan(collective, ranks, None, machine, sizes, "sum", "estimate" if evaluator == "estimate" else "simulate",
                 fidelity, progress=False)
        return {n: p.choice(n).algorithm for n in sizes}
    times = {}
    for name in measured_only:
        try:
            s = collplan.schedule(name, ranks=ranks)
        except collplan.CollplanError:  # e.g. the gossip algorithms want a grid: the planner on full:P declines them
            continue
        times[name] = ([r.time_s for r in collplan.estimate(s, sizes, machine=machine)] if evaluator == "estimate"
                       else [collplan.simulate(s, machine=machine, fidelity=fidelity, size=n).time_s for n in sizes])
    return {n: min(times, key=lambda a: times[a][j]) for j, n in enumerate(sizes)}


def rows(collective: str, machine: str, evaluator: str, data: Path, measured_only: bool = False,
         mpi: str = "openmpi", ranks: int = 16) -> list[dict]:
    times, native, sizes = measured(data / f"run_{collective}_{mpi}_P{ranks}.json")
    chosen = choices(collective, ranks, machine, sizes, evaluator, sorted(times) if measured_only else None)
    out = []
    for n in sizes:
        best = min((t[n], a) for a, t in times.items() if n in t)
        t = times.get(chosen[n], {}).get(n)
        out.append({"size": n, "choice": chosen[n], "choice_s": t, "best": best[1], "best_s": best[0],
                    "regret": None if t is None else t / best[0], "native_s": native.get(n),
                    "vs_native": None if t is None or not native.get(n) else t / native[n]})
    return out


def summary(machine: str, evaluator: str, data: Path, measured_only: bool = False, mpi: str = "openmpi",
            ranks: int = 16) -> str:
    among = "the measured algorithms with their default parameters" if measured_only else "every candidate"
    lines = [f"Regret of `{evaluator}` on `{Path(machine).name}` choosing among {among}, against the node's "
             f"measurements (P = {ranks}, {mpi}):",
             "", "| collective | median | worst | sizes over 1.25 (chosen, measured best) | slower than native |",
             "|---|---:|---:|---|---:|"]
    for c in COLLECTIVES:
        if not (data / f"run_{c}_{mpi}_P{ranks}.json").exists():
            lines.append(f"| {c} | - | - | not measured | - |")
            continue
        rs = rows(c, machine, evaluator, data, measured_only, mpi, ranks)
        reg = [r["regret"] for r in rs if r["regret"] is not None]
        bad = [f"{r['size']} B ({r['choice'].split('/')[1]}, {r['best'].split('/')[1]} {r['regret']:.2f}x)"
               for r in rs if r["regret"] is not None and r["regret"] > 1.25]
        slower = sum(1 for r in rs if r["vs_native"] and r["vs_native"] > 1.05)
        missing = sum(1 for r in rs if r["regret"] is None)
        lines.append(f"| {c} | {statistics.median(reg):.2f} | {max(reg):.2f} | {'; '.join(bad) or '-'}"
                     f"{f' ({missing} sizes not measured for the choice)' if missing else ''} | "
                     f"{slower}/{len(rs)} |")
    return "\n".join(lines)


def refit(text: str) -> str:
    """The machine file with eager and rndv as calibrate derives them now from the ping-pong medians it recorded."""
    import re
    import tomllib
    from collplan import calibrate as cal
    from collplan.calibrate import fmt_time
    c = tomllib.loads(text)["calibration"]
    pw = cal.fit_piecewise(c["pingpong_sizes_bytes"], c["pingpong_oneway_median_s"])
    text = re.sub(r'(\[network\][^\[]*?)eager = "\d+B"', lambda m: m.group(1) + f'eager = "{int(pw.eager_bytes)}B"',
                  text, flags=re.S) if pw else text
    if pw and pw.jump() > 0 and "\nrndv = " not in text:
        text = text.replace("[model]\n", f'[model]\neager = "{int(pw.eager_bytes)}B"\nrndv = "{fmt_time(pw.jump())}"\n', 1)
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA), help="the node's measurements (default ../shared/data/node16)")
    ap.add_argument("--mpi", default="openmpi", help="which MPI's measurements (default openmpi)")
    ap.add_argument("--ranks", type=int, default=16, help="which P's measurements (default 16)")
    ap.add_argument("--machine", help="machine file (default: the node's calibrate_<mpi>_P2.toml)")
    ap.add_argument("--evaluator", default="estimate", choices=["estimate", "loggp", "flow"])
    ap.add_argument("--cpu", action="store_true", help="score the machine file with cpu = 1 in its [model], as "
                    "`collplan calibrate` writes it now (the node's file predates the key)")
    ap.add_argument("--refit", action="store_true", help="score the machine file with the breakpoint and rendezvous "
                    "jump calibrate derives now from the ping-pong it recorded (eager, rndv)")
    ap.add_argument("--measured-only", action="store_true", help="choose among the measured algorithms with their "
                    "default parameters only (what the node timed), not every parameter set")
    a = ap.parse_args()
    data = Path(a.data)
    if not data.is_dir():
        sys.exit(f"node16.py: no measurements at {data}")
    machine = a.machine or str(data / f"calibrate_{a.mpi}_P2.toml")
    if a.cpu or a.refit:
        import tempfile
        text = Path(machine).read_text()
        if a.cpu and ("[model]\n" not in text or "\ncpu = " in text):
            sys.exit(f"node16.py: --cpu needs a machine file with a [model] table and no cpu key: {machine}")
        if a.cpu:
            text = text.replace("[model]\n", '[model]\ncpu = "1"\n', 1)
        tmp = Path(tempfile.mkdtemp()) / Path(machine).name
        tmp.write_text(refit(text) if a.refit else text)
        machine = str(tmp)
    print(summary(machine, a.evaluator, data, a.measured_only, a.mpi, a.ranks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
