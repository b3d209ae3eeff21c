#!/usr/bin/env python3
"""collplan's algorithms of the rooted and vector collectives against the MPI library's own, under both MPIs.

Runs `collplan run --algorithm all --json` (every applicable algorithm, checked against a serial computation, timed
OSU-style beside the library's own collective in the same run: docs/runtime.md, "collplan run") for bcast, reduce,
reduce_scatter_block, reduce_scatter, allgatherv, gather and scatter, and prints one markdown table per (MPI, P,
collective): size, the library's time, collplan's best algorithm, its time and the ratio (< 1: collplan faster),
plus every algorithm's time. After `make install`:

    .venv/bin/python bench/mpi/collectives_vs_native.py [--ranks 4,8] [--sizes 8B,1KiB,64KiB,1MiB] [--abis openmpi,mpich]

The results recorded in bench/README.md ("The rooted and vector collectives against the MPI library") came from
this command; the machine is shared and has 2 cores, so P = 8 is oversubscribed: read the ratios, not the times.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIVES = ["bcast", "reduce", "reduce_scatter_block", "reduce_scatter", "allgatherv", "gather", "scatter"]
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_btl": "self,sm",
       "OMPI_MCA_pml": "ob1", "MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1",
       "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "1", "MPIR_CVAR_DEVICE_COLLECTIVES": "none"}


def fmt(s: float) -> str:
    return f"{s * 1e6:.2f}"


def run(abi: str, P: int, coll: str, sizes: str, out: str) -> dict:
    mpirun = os.path.join(ROOT, ".mpi", abi, "bin", "mpirun")
    cmd = [mpirun, "-n", str(P)] + (["--oversubscribe"] if abi == "openmpi" else []) + \
          [os.path.join(ROOT, ".venv", "bin", "collplan"), "run", "--collective", coll, "--algorithm", "all",
           "--sizes", sizes, "--json", out]
    subprocess.run(cmd, check=True, capture_output=True, env={**os.environ, **ENV}, timeout=1800)
    with open(out) as f:
        return json.load(f)


def table(d: dict) -> list[str]:
    by_size: dict[int, dict] = {}
    for row in d["rows"]:
        by_size.setdefault(row["size_bytes"], {})[row["algorithm"]] = row
    algs = sorted({r["algorithm"] for r in d["rows"]})
    short = [a.split("/", 1)[1] for a in algs]
    lines = ["| size | native (us) | best collplan | time (us) | best/native | " + " | ".join(short) + " |",
             "|---:|---:|---|---:|---:|" + "---:|" * len(algs)]
    for size in sorted(by_size):
        rows = by_size[size]
        native = next(iter(rows.values()))["native_s"]
        best = min(rows.values(), key=lambda r: r["collplan_s"])
        cells = [fmt(rows[a]["collplan_s"]) if a in rows else "-" for a in algs]
        lines.append(f"| {size} | {fmt(native)} | {best['algorithm'].split('/', 1)[1]} | {fmt(best['collplan_s'])} | "
                     f"{best['collplan_s'] / native:.2f} | " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="4,8")
    ap.add_argument("--sizes", default="8B,1KiB,64KiB,1MiB")
    ap.add_argument("--abis", default="openmpi,mpich")
    ap.add_argument("--collectives", default=",".join(COLLECTIVES))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for abi in args.abis.split(","):
            for P in (int(p) for p in args.ranks.split(",")):
                for coll in args.collectives.split(","):
                    d = run(abi, P, coll, args.sizes, os.path.join(tmp, "run.json"))
                    failed = [r for r in d["rows"] if not r.get("ok", True)]
                    print(f"\n### {abi} ({d['mpi'].split(',')[0]}), P={P}, {coll}" + (f", root {d['root']}" if d.get("root") is not None
                                                                           and coll in ("bcast", "reduce", "gather", "scatter") else ""))
                    print()
                    print("\n".join(table(d)))
                    if failed:
                        print(f"\n**{len(failed)} rows failed their check**")
                    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
