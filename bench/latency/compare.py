#!/usr/bin/env python3
"""Runs bench/latency/latency.c in several configurations, alternated, and prints one Markdown table of the best
average latency per size with each configuration's ratio to the first one.

  compare.py --abi openmpi|mpich --ranks P --collective allreduce [--sizes 4:65536] [--iters 2000] [--rounds 3]
             [--mpi NAME --mpicc PATH] [--fortran] CONFIG...

--mpi NAME with --mpicc PATH: an installed MPI (its family in --abi) and build/cpp/lib/NAME/libcollplan_pmpi.so,
built for it (make test-cpp builds debian_openmpi and debian_mpich); its mpirun is the one beside mpicc (mpicc.openmpi
-> mpirun.openmpi). --fortran: the Fortran twin latency_f.f90 (MPI_Allreduce, use mpi), built with the mpifort beside
mpicc, instead of latency.c: what the library's Fortran entry points cost.

A CONFIG is NAME=SPEC where SPEC is one of
  native                      the MPI library's collective (no preload)
  preload                     libcollplan_pmpi.so preloaded, no COLLPLAN_* variable (pass-through)
  env:VAR=VALUE[,VAR=VALUE]   preloaded with those variables, e.g. env:COLLPLAN_ALLREDUCE=recursive_doubling
  hand:ALG[:isend|sendrecv]   the hand-written algorithm of latency.c (-a ALG -p ...), no preload
  tuning:FILE                 no preload, the library reads the tuning file of `collplan export-tuning` (Open MPI:
                              coll_tuned_dynamic_rules_filename; MPICH: the JSON and its .ch4 sibling)
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
TUNING = {  # as tests/conformance/run_conformance.py: shared memory only (Open MPI); a variable already set wins
    "openmpi": {"OMPI_MCA_btl": "self,sm", "OMPI_MCA_pml": "ob1"},
    "mpich": {},
}
OVERSUBSCRIBED = {  # more ranks than this machine's 2 cores: waiting ranks give their core away
    "openmpi": {"OMPI_MCA_mpi_yield_when_idle": "1"},
    "mpich": {"MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1", "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "1"},
}


def tools(a) -> tuple[str, str]:
    """(mpicc, mpirun) of the MPI: the wheel's in .mpi/<name>, or --mpicc and the mpirun beside it."""
    if not a.mpicc:
        return str(ROOT / ".mpi" / a.mpi / "bin" / "mpicc"), str(ROOT / ".mpi" / a.mpi / "bin" / "mpirun")
    mpicc = Path(a.mpicc)
    return str(mpicc), str(mpicc.with_name(mpicc.name.replace("mpicc", "mpirun")))


def build(a) -> Path:
    src = ROOT / "bench" / "latency" / ("latency_f.f90" if a.fortran else "latency.c")
    out = ROOT / "build" / "latency" / a.mpi / src.stem
    mpicc = tools(a)[0]
    compiler = mpicc.replace("mpicc", "mpifort") if a.fortran else mpicc
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([compiler, "-O2", str(src), "-o", str(out)], check=True, cwd=out.parent)
    return out


def run(a, binary: Path, spec: str, args: list[str]) -> dict[int, float]:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for k, v in {**TUNING[a.abi], **(OVERSUBSCRIBED[a.abi] if a.ranks > (os.cpu_count() or 1) else {})}.items():
        env.setdefault(k, v)
    lib = ROOT / "build" / "cpp" / "lib" / a.mpi / "libcollplan_pmpi.so"
    extra: list[str] = []
    pre: list[str] = []
    if spec == "preload" or spec.startswith("env:"):
        if not lib.exists():
            sys.exit(f"compare.py: {lib} is missing (make test-cpp builds it)")
        pre = ["env", f"LD_PRELOAD={lib}"] + (spec[4:].split(",") if spec.startswith("env:") else [])
    elif spec.startswith("hand:") and not a.fortran:
        alg, _, p2p = spec[5:].partition(":")
        extra = ["-a", alg, "-p", p2p or "isend"]
    elif spec.startswith("tuning:"):
        path = Path(spec[7:]).resolve()
        if a.abi == "openmpi":
            env.update(OMPI_MCA_coll_tuned_use_dynamic_rules="1", OMPI_MCA_coll_tuned_dynamic_rules_filename=str(path))
        else:
            env["MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"] = str(path)
            ch4 = path.with_name(f"{path.stem}.ch4{path.suffix}")
            if ch4.exists():
                env["MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE"] = str(ch4)
    elif spec != "native":
        sys.exit(f"compare.py: unknown configuration '{spec}' (allowed: native, preload, env:..., hand:... (C only), "
                 f"tuning:FILE)")
    cmd = [tools(a)[1], "-n", str(a.ranks)]
    if a.abi == "openmpi" and a.ranks > 2:
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
    ap.add_argument("--mpi", help="the installation's name (build/cpp/lib/NAME; default: --abi)")
    ap.add_argument("--mpicc", help="an installed MPI's C compiler wrapper (default: .mpi/<NAME>/bin/mpicc)")
    ap.add_argument("--fortran", action="store_true", help="time latency_f.f90 (MPI_Allreduce from Fortran)")
    ap.add_argument("configs", nargs="+")
    a = ap.parse_args()
    a.mpi = a.mpi or a.abi
    if a.fortran and a.collective != "allreduce":
        ap.error(f"--fortran times allreduce only, not {a.collective}")
    configs = [c.split("=", 1) if "=" in c.split(":")[0] else (c, c) for c in a.configs]
    binary = build(a)
    warmup = str(max(10, a.iters // 10))
    if a.fortran:
        args = a.sizes.split(":") + [str(a.iters), warmup]
    else:
        args = ["-c", a.collective, "-m", a.sizes, "-i", str(a.iters), "-x", warmup]
    best: list[dict[int, float]] = [{} for _ in configs]
    for rnd in range(a.rounds):
        for k, (_, spec) in enumerate(configs):
            for size, lat in run(a, binary, spec, args).items():
                best[k][size] = min(best[k].get(size, float("inf")), lat)
        print(f"round {rnd + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    print(f"{a.collective}{' (Fortran)' if a.fortran else ''}, {a.mpi}, P = {a.ranks}: average latency in us (best of {a.rounds} alternated rounds; "
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
