#!/usr/bin/env python3
"""Runs bench/latency/latency.c in several configurations, alternated, and prints one Markdown table of the best
average latency per size with each configuration's ratio to the first one.

  compare.py --abi openmpi|mpich --ranks P --collective allreduce [--sizes 4:65536] [--iters 2000] [--rounds 3]
             CONFIG...

A CONFIG is NAME=SPEC where SPEC is one of
  native                      the MPI library's collective (no preload)
  preload                     libcollplan_pmpi.so preloaded, no COLLPLAN_* variable (pass-through)
  env:VAR=VALUE[,VAR=VALUE]   preloaded with those variables, e.g. env:COLLPLAN_ALLREDUCE=recursive_doubling
  hand:ALG[:isend|sendrecv]   the hand-written algorithm of latency.c (-a ALG -p ...), no preload
With more ranks than cores, OVERSUBSCRIBED's settings make waiting ranks yield (Open MPI) or sleep (MPICH).
Rounds alternate the configurations (1, 2, ..., then again), so load bursts on a shared machine hit all alike;
the figure is the best round (interference only adds time). The binary is compiled with the MPI's mpicc into
build/latency/<abi>/latency; the library is build/cpp/lib/<abi>/libcollplan_pmpi.so (make test-cpp builds it).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUNING = {  # as tests/conformance/run_conformance.py: shared memory only (Open MPI)
    "openmpi": {"OMPI_MCA_btl": "self,sm", "OMPI_MCA_pml": "ob1"},
    "mpich": {},
}
OVERSUBSCRIBED = {  # more ranks than this machine's 2 cores: waiting ranks give their core away
    "openmpi": {"OMPI_MCA_mpi_yield_when_idle": "1"},
    "mpich": {"MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1", "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "1"},
}


def build(abi: str) -> Path:
    out = ROOT / "build" / "latency" / abi / "latency"
    src = ROOT / "bench" / "latency" / "latency.c"
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(ROOT / ".mpi" / abi / "bin" / "mpicc"), "-O2", str(src), "-o", str(out)], check=True)
    return out


def run(abi: str, ranks: int, binary: Path, spec: str, args: list[str]) -> dict[int, float]:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **TUNING[abi],
               **(OVERSUBSCRIBED[abi] if ranks > (os.cpu_count() or 1) else {}))
    lib = ROOT / "build" / "cpp" / "lib" / abi / "libcollplan_pmpi.so"
    extra: list[str] = []
    pre: list[str] = []
    if spec == "preload" or spec.startswith("env:"):
        if not lib.exists():
            sys.exit(f"compare.py: {lib} is missing (make test-cpp builds it)")
        pre = ["env", f"LD_PRELOAD={lib}"] + (spec[4:].split(",") if spec.startswith("env:") else [])
    elif spec.startswith("hand:"):
        alg, _, p2p = spec[5:].partition(":")
        extra = ["-a", alg, "-p", p2p or "isend"]
    elif spec != "native":
        sys.exit(f"compare.py: unknown configuration '{spec}' (allowed: native, preload, env:..., hand:...)")
    cmd = [str(ROOT / ".mpi" / abi / "bin" / "mpirun"), "-n", str(ranks)]
    if abi == "openmpi" and ranks > 2:
        cmd.append("--oversubscribe")
    r = subprocess.run(cmd + pre + [str(binary)] + args + extra, capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        sys.exit(f"compare.py: {spec} failed: {r.stderr.strip()[-400:]}")
    out = {}
    for line in r.stdout.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        size, lat = line.split()[:2]
        out[int(size)] = float(lat)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--abi", required=True, choices=["openmpi", "mpich"])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--collective", default="allreduce")
    ap.add_argument("--sizes", default="4:65536")
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("configs", nargs="+")
    a = ap.parse_args()
    configs = [c.split("=", 1) if "=" in c.split(":")[0] else (c, c) for c in a.configs]
    binary = build(a.abi)
    args = ["-c", a.collective, "-m", a.sizes, "-i", str(a.iters), "-x", str(max(10, a.iters // 10))]
    best: list[dict[int, float]] = [{} for _ in configs]
    for rnd in range(a.rounds):
        for k, (_, spec) in enumerate(configs):
            for size, lat in run(a.abi, a.ranks, binary, spec, args).items():
                best[k][size] = min(best[k].get(size, float("inf")), lat)
        print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    print(f"{a.collective}, {a.abi}, P = {a.ranks}: average latency in us (best of {a.rounds} alternated rounds; "
          f"ratio to {configs[0][0]})\n")
    print("| size | " + " | ".join(name for name, _ in configs) + " |")
    print("|---|" + "---|" * len(configs))
    for size in sorted(best[0]):
        base = best[0][size]
        cells = [f"{best[0][size]:.2f}"] + [
            f"{b[size]:.2f} ({b[size] / base:.2f}x)" if size in b and base > 0 else "-" for b in best[1:]]
        print(f"| {size} B | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
