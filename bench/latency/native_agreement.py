#!/usr/bin/env python3
"""Does the planner's native figure agree with an OSU-style benchmark? Alternates, for --rounds rounds,
bench/latency/latency.c (MPI_Allreduce of floats, no preload) and the measure evaluator's own timer of the MPI
library's MPI_Allreduce (collplan.measure: float64 data, the autorange and repetitions of `collplan plan
--evaluator measure`), at P = --ranks, and prints the best of each per size with the ratio planner / latency.c.

  native_agreement.py --abi openmpi|mpich [--ranks 2] [--sizes 8:262144] [--rounds 3]

Needs `make install` (the Python package) and the MPIs in .mpi (make mpi).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402  (build(), run(), TUNING)

ROOT = compare.ROOT
PLANNER = """
import sys
from collplan.measure import Case, backend_as_programs_run, _iterations
MPI, _ = backend_as_programs_run()
comm = MPI.COMM_WORLD
for size in [int(x) for x in sys.argv[1:]]:
    case = Case(MPI, comm, "allreduce", size, "sum")
    timer = lambda it, w, r: case.time_native(it, w, r)
    iters = _iterations(timer, 2e-3, 1000)
    best = min(timer(iters, 0, 5))
    case.free()
    if comm.Get_rank() == 0:
        print(size, best * 1e6, flush=True)
"""


def planner(abi: str, ranks: int, sizes: list[int]) -> dict[int, float]:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **compare.TUNING[abi])
    cmd = [str(ROOT / ".mpi" / abi / "bin" / "mpirun"), "-n", str(ranks)] + (["--oversubscribe"] if abi == "openmpi" and ranks > 2 else [])
    r = subprocess.run(cmd + [str(ROOT / ".venv" / "bin" / "python"), "-c", PLANNER] + [str(s) for s in sizes],
                       capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        sys.exit(f"native_agreement.py: the planner's timer failed: {r.stderr.strip()[-400:]}")
    return {int(a): float(b) for a, b in (line.split() for line in r.stdout.splitlines() if line.strip())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--abi", required=True, choices=["openmpi", "mpich"])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--sizes", default="8:262144")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.sizes.split(":"))
    sizes = [s for s in (2 ** k for k in range(0, 40)) if lo <= s <= hi]
    binary = compare.build(a.abi)
    best_osu: dict[int, float] = {}
    best_plan: dict[int, float] = {}
    for rnd in range(a.rounds):
        for size, lat in compare.run(a.abi, a.ranks, binary, "native", ["-c", "allreduce", "-m", a.sizes, "-i", "1000", "-x", "100"]).items():
            best_osu[size] = min(best_osu.get(size, float("inf")), lat)
        for size, lat in planner(a.abi, a.ranks, sizes).items():
            best_plan[size] = min(best_plan.get(size, float("inf")), lat)
        print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    print(f"MPI_Allreduce, {a.abi}, P = {a.ranks}: native latency in us, best of {a.rounds} alternated rounds\n")
    print("| size | latency.c (OSU-style) | planner's measure timer | planner / latency.c |")
    print("|---|---|---|---|")
    for size in sizes:
        if size in best_osu and size in best_plan:
            print(f"| {size} B | {best_osu[size]:.2f} | {best_plan[size]:.2f} | {best_plan[size] / best_osu[size]:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
