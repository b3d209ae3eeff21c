"""Score machine files against the measurements already recorded in bench/planner/raw/ (every candidate timed by
`collplan plan --evaluator measure --prune 0` at P = 2, 4 and 8 on this 2-core machine; evaluate.py): per P and
collective, the median and worst regret of the estimate's choice on each file (measured time of the choice / the
measured best). Nothing is measured again, so files calibrated later are judged on the same data.

    .venv/bin/python bench/planner/rescore.py --abi openmpi --ranks 4 FILE [FILE ...]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import evaluate  # noqa: E402  (rows_of: the estimate's choice on a machine file against the measured times)

COLLECTIVES = ["allgather", "alltoall", "allreduce"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--abi", required=True, choices=["openmpi", "mpich"])
    ap.add_argument("--ranks", type=int, required=True, choices=[2, 4, 8])
    ap.add_argument("machines", nargs="+", help="machine files (or bundled names) to score")
    a = ap.parse_args()
    print(f"| machine file (P = {a.ranks}, {a.abi}) | " + " | ".join(COLLECTIVES) + " |")
    print("|---|" + "---:|" * len(COLLECTIVES))
    for m in a.machines:
        cells = []
        for c in COLLECTIVES:
            plan = json.loads((HERE / "raw" / f"{a.abi}-P{a.ranks}-{c}.json").read_text())
            r = [row["regret"] for row in evaluate.rows_of(plan, m)]
            cells.append(f"{statistics.median(r):.2f} / {max(r):.2f}")
        print(f"| {m} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
