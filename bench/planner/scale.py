"""The estimate evaluator's plan at scale: wall and CPU seconds and peak memory of `collplan plan` (every
candidate, 18 sizes 8 B..1 MiB, machine ib-qdr, the threshold table's crossovers included) per collective and P.
The default plan prices the symmetric candidates from rank 0's program alone (schedule/symmetry.hpp) and, above
planner.PRUNE_ABOVE ranks, walks the others only where their lower bounds can place them (docs/planner.md,
"Planning at tens of thousands of ranks"); `--all-estimates` walks every candidate at every size. Each case runs
in a fresh process; CPU counts every thread.

    .venv/bin/python bench/planner/scale.py --ranks 4096 65536 [--all-up-to 4096] [--timeout 300]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

DRIVER = r"""
import json, resource, sys, time
from collplan import planner
coll, P, prune = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
t, w = time.process_time(), time.time()
p = planner.plan(coll, P, machine="ib-qdr", progress=False, prune=prune)
print(json.dumps({"wall_s": time.time() - w, "cpu_s": time.process_time() - t, "candidates": len(p.candidates),
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "skipped": sum(b is not None for row in (p.bounds or []) for b in row),
                  "cells": len(p.candidates) * len(p.sizes),
                  "winners": [(r.winner.label(), r.min_bytes) for r in p.ranges]}))
"""


def run(coll: str, P: int, prune: bool, timeout: float) -> dict:
    try:
        out = subprocess.run([sys.executable, "-c", DRIVER, coll, str(P), "1" if prune else "0"], capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout:.0f} s"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:80]}
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[4096, 65536])
    ap.add_argument("--all-up-to", type=int, default=4096, help="also --all-estimates at P up to this")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--collectives", nargs="+")
    a = ap.parse_args()
    from collplan import planner
    print("| collective | P | plan: wall, CPU, peak | walks skipped | --all-estimates: wall, CPU, peak | same winners |")
    print("|---|---:|---:|---:|---:|---|")
    fmt = lambda r: r["error"] if "error" in r else \
        f"{r['wall_s']:.3g} s, {r['cpu_s']:.3g} s, {r['peak_mib']:.0f} MiB"  # noqa: E731
    for P in a.ranks:
        for coll in a.collectives or planner.PLANNED:
            cut = run(coll, P, True, a.timeout)
            full = run(coll, P, False, a.timeout) if P <= a.all_up_to else {"error": "-"}
            skipped = "-" if "error" in cut else f"{cut['skipped']} of {cut['cells']}"
            same = "-" if "error" in cut or "error" in full else \
                ("yes" if [w for w, _ in cut["winners"]] == [w for w, _ in full["winners"]] else "NO")
            print(f"| {coll} | {P} | {fmt(cut)} | {skipped} | {fmt(full)} | {same} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
