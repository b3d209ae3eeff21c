"""The estimate evaluator's plan at scale: CPU seconds and peak memory of `collplan plan` (every candidate, 18 sizes
8 B..1 MiB, machine ib-qdr) per collective and P, with the symmetric candidates priced from rank 0's program alone
(schedule/symmetry.hpp; what `collplan plan` does) and, where it fits, from every rank's program (the whole walk).
Each case runs in a fresh process; both give the same times to the bit (tests/python/test_planner.py).

    .venv/bin/python bench/planner/scale.py --ranks 1024 4096 65536 [--whole-up-to 1024] [--timeout 300]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

DRIVER = r"""
import json, resource, sys, time
from collplan import planner, _core
coll, P, one = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
t = time.process_time()
m = planner.resolve_machine("ib-qdr")
prob = planner.resolve_problem(coll, P, None)
sizes = [0] if coll == "barrier" else [int(x) for x in _core.parse_sizes("8B..1MiB")]
found, _ = planner.candidates(prob, m, sizes, one_rank=one)
times = planner.price_estimate([s for _, s in found], sizes, m.model, prob.topology, progress=False)
print(json.dumps({"cpu_s": time.process_time() - t, "candidates": len(found),
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "one_rank": sum(not s.whole for _, s in found)}))
"""


def run(coll: str, P: int, one: bool, timeout: float) -> dict:
    try:
        out = subprocess.run([sys.executable, "-c", DRIVER, coll, str(P), "1" if one else "0"], capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout:.0f} s"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:80]}
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[1024, 4096, 65536])
    ap.add_argument("--whole-up-to", type=int, default=1024, help="also the whole walk at P up to this")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--collectives", nargs="+")
    a = ap.parse_args()
    from collplan import planner
    print("| collective | P | one rank for all: CPU, peak | candidates (from one rank) | whole walk: CPU, peak |")
    print("|---|---:|---:|---:|---:|")
    fmt = lambda r: r["error"] if "error" in r else \
        f"{r['cpu_s']:.3g} s, {r['peak_mib']:.0f} MiB"  # noqa: E731
    for P in a.ranks:
        for coll in a.collectives or planner.PLANNED:
            one = run(coll, P, True, a.timeout)
            whole = run(coll, P, False, a.timeout) if P <= a.whole_up_to else {"error": "-"}
            n = "-" if "error" in one else f"{one['candidates']} ({one['one_rank']})"
            print(f"| {coll} | {P} | {fmt(one)} | {n} | {fmt(whole)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
