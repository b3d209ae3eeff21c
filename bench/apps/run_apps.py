#!/usr/bin/env python3
"""Real applications under collplan's drop-in library: LAMMPS and Quantum ESPRESSO's pw.x as Debian ships them
(built against Debian's Open MPI 4.1), run natively and with libcollplan_pmpi.so preloaded.

For each application and P, and --repeats times each (the configurations interleaved), it runs
  native        mpirun -n P <app>                                                    (no preload)
  pass-through  mpirun -n P env LD_PRELOAD=<lib> COLLPLAN_STATS=1 <app>               (no choice: the library's own)
  collplan      mpirun -n P env LD_PRELOAD=<lib> COLLPLAN_STATS=1 COLLPLAN_<C>=<alg>... <app>  (CHOICES below)
  wisdom        mpirun -n P env LD_PRELOAD=<lib> COLLPLAN_STATS=1 COLLPLAN_WISDOM=<file> <app>  (with --wisdom)
and reports per run the median wall time of mpirun, failures and timeouts, the application's result against the
native run at the same P (within what the application itself reproduces: README.md, "How results compare"), the
native result against the native one at the smallest P, and from the library's collplan-stats lines the share of
the intercepted collective calls that ran collplan's schedules, per MPI function (calls of MPI functions outside
collplan's twelve collectives, such as MPI_Scan or MPI_Gatherv, are not seen). Without --lib only the native runs
happen.

Prints a markdown table; writes results.json, results.md and the output of every run (logs/) to --out.
Standard library only; runs, timeouts and the statistics' format come from tests/conformance/run_conformance.py.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tests" / "conformance"))
from run_conformance import COLLECTIVES, STATS_CALLS, STATS_REASON, TWELVE, execute, parse_ranks, stop  # noqa: E402

MPIRUN = "/usr/bin/mpirun.openmpi"
# Open MPI 4.1: its shared-memory transport is called vader (sm in Open MPI 5).
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_btl": "self,vader",
           "OMPI_MCA_pml": "ob1"}
PEPTIDE_DATA = Path("/usr/share/lammps/examples/peptide/data.peptide")  # Debian's lammps-examples
# The collplan configuration's algorithm per collective: the drop-in library's defaults as docs/runtime.md lists
# them (MPICH's choices), alltoallv's async.
CHOICES = {"allgather": "ring", "alltoall": "pairwise", "alltoallv": "async", "allreduce": "recursive_doubling",
           "barrier": "dissemination", "bcast": "binomial", "reduce": "binomial", "reduce_scatter_block": "pairwise",
           "reduce_scatter": "pairwise", "allgatherv": "ring", "gather": "binomial", "scatter": "binomial"}
assert set(CHOICES) == set(TWELVE)


# ---- what an application prints ------------------------------------------------------------------------------
def lammps_final_row(out: str) -> dict[str, float] | None:
    """The last thermo row of the last run (thermo_modify format float %20.15g: 15 significant digits)."""
    header: list[str] | None = None
    row: dict[str, float] | None = None
    for line in out.splitlines():
        words = line.split()
        if words[:1] == ["Step"]:
            header, row = words, None
        elif header and len(words) == len(header):
            try:
                row = dict(zip(header, map(float, words)))
            except ValueError:
                continue
        elif line.startswith("Loop time"):
            header = None
    return row


PW_ENERGY = re.compile(r"^!\s+total energy\s+=\s+(-?\d+\.\d+) Ry", re.M)


def pw_energy(out: str) -> dict[str, float] | None:
    """The converged total energy (printed with 8 decimals, in Ry)."""
    m = PW_ENERGY.search(out)
    return {"total energy (Ry)": float(m.group(1))} if m and "convergence has been achieved" in out else None


def digits_agree(a: dict[str, float], b: dict[str, float]) -> float:
    """The significant digits a and b agree to, the fewest over their values: -log10(|a-b| / max(|a|,|b|)); inf
    where all are equal. Step must be equal."""
    if a.keys() != b.keys() or a.get("Step") != b.get("Step"):
        return -math.inf
    worst = math.inf
    for k in a:
        if a[k] != b[k]:
            worst = min(worst, -math.log10(abs(a[k] - b[k]) / max(abs(a[k]), abs(b[k]))))
    return worst


def abs_difference(a: dict[str, float], b: dict[str, float]) -> float:
    """The largest absolute difference over the values (inf where they name different values)."""
    return max(abs(a[k] - b[k]) for k in a) if a.keys() == b.keys() else math.inf


@dataclass(frozen=True)
class App:
    name: str
    what: str
    binaries: tuple[str, ...]  # the first found on PATH runs
    args: tuple[str, ...]
    result: Callable[[str], dict[str, float] | None]
    version: re.Pattern
    # digits: the values agree to at least `tolerance` significant digits; abs: they differ by at most `tolerance`.
    # What native runs of the application reproduce between P = 1, 2, 4 and 8 (README.md, "How results compare").
    kind: str
    tolerance: float

    def agreement(self, a: dict[str, float], b: dict[str, float]) -> float:
        return digits_agree(a, b) if self.kind == "digits" else abs_difference(a, b)

    def agrees(self, value: float) -> bool:
        return value >= self.tolerance if self.kind == "digits" else value <= self.tolerance

    def text(self, value: float) -> str:
        if self.kind == "digits":
            return "identical" if value == math.inf else f"{max(value, 0):.1f} digits"
        return "identical" if value == 0 else f"{value:.1e} Ry"


LAMMPS = ("lmp", "lmp_openmpi", "lmp_mpi")
LAMMPS_VERSION = re.compile(r"^LAMMPS \((.*?)\)", re.M)
PEPTIDE = ("-var", "data", str(PEPTIDE_DATA), "-in", str(HERE / "in.peptide-pppm"), "-log", "none")
APPS = {a.name: a for a in (
    App("lammps-lj", "LAMMPS Lennard-Jones melt, 16384 atoms, 250 steps", LAMMPS,
        ("-in", str(HERE / "in.lj-melt"), "-log", "none"), lammps_final_row, LAMMPS_VERSION, "digits", 12),
    App("lammps-pppm", "LAMMPS solvated peptide with PPPM, 2004 atoms, 100 steps (FFT transposes point-to-point)",
        LAMMPS, ("-var", "collective", "no") + PEPTIDE, lammps_final_row, LAMMPS_VERSION, "digits", 7),
    App("lammps-pppm-a2a", "the same with kspace_modify collective yes (FFT transposes by MPI_Alltoallv)",
        LAMMPS, ("-var", "collective", "yes") + PEPTIDE, lammps_final_row, LAMMPS_VERSION, "digits", 7),
    App("pw", "Quantum ESPRESSO pw.x (Fortran): SCF of silicon, 2 atoms, 30 Ry, 28 k-points", ("pw.x",),
        ("-in", str(HERE / "si.scf.in")), pw_energy, re.compile(r"Program PWSCF (v\.\S+)"), "abs", 1e-8),
)}


# ---- runs ----------------------------------------------------------------------------------------------------
def stats_of(out: str) -> dict | None:
    """The library's collplan-stats lines: per MPI function [collplan, native] calls, and the reasons to run the
    library's own; None where there are none."""
    calls: dict[str, list[int]] = {}
    reasons: dict[str, int] = {}
    for line in out.splitlines():
        if m := STATS_CALLS.search(line):
            calls[m.group(1)] = [int(m.group(2)), int(m.group(3))]
        elif m := STATS_REASON.search(line):
            reasons[f"{m.group(2)}: {m.group(3).strip()}"] = int(m.group(1))
    return {"calls": calls, "reasons": reasons} if calls or reasons else None


def share(stats: dict | None) -> float | None:
    if not stats:
        return None
    c = sum(v[0] for v in stats["calls"].values())
    n = sum(v[1] for v in stats["calls"].values())
    return c / (c + n) if c + n else None


def configurations(lib: Path | None, wisdom: Path | None) -> dict[str, dict[str, str] | None]:
    """Each configuration's variables for the ranks (None: no preload)."""
    out: dict[str, dict[str, str] | None] = {"native": None}
    if lib:
        base = {"LD_PRELOAD": str(lib), "COLLPLAN_STATS": "1"}
        out["pass-through"] = base
        out["collplan"] = base | {COLLECTIVES[c][0]: alg for c, alg in CHOICES.items()}
        if wisdom:
            out["wisdom"] = base | {"COLLPLAN_WISDOM": str(wisdom)}
    return out


def run_once(args, app: App, binary: str, p: int, rank_env: dict[str, str] | None, scratch: Path, log: Path) -> dict:
    tmp = Path(tempfile.mkdtemp(dir=scratch))  # pw.x's outdir (ESPRESSO_TMPDIR)
    env_words = [f"{k}={v}" for k, v in ({"ESPRESSO_TMPDIR": str(tmp)} | (rank_env or {})).items()]
    cmd = [args.mpirun, "--oversubscribe", "-n", str(p), "env", *env_words, binary, *app.args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLLPLAN_") and k != "LD_PRELOAD"} | MPI_ENV
    rc, out, wall = execute(cmd, env, args.timeout)
    shutil.rmtree(tmp, ignore_errors=True)
    log.write_text(f"$ {shlex.join(cmd)}\n{out}")
    return {"rc": rc, "wall_s": wall, "result": app.result(out), "stats": stats_of(out),
            "version": (m.group(1) if (m := app.version.search(out)) else None),
            "tail": out.splitlines()[-15:] if rc != 0 else []}


def summarise(app: App, runs: list[dict], reference: dict[str, float] | None) -> dict:
    """One configuration at one P over its repeats: failures, median time, worst agreement with the reference."""
    failed = [("timeout" if r["rc"] is None else f"rc={r['rc']}") for r in runs if r["rc"] != 0]
    results = [r["result"] for r in runs]
    agreement = None
    if reference is not None and all(results):
        values = [app.agreement(x, reference) for x in results]
        agreement = min(values) if app.kind == "digits" else max(values)
    walls = [r["wall_s"] for r in runs]
    return {"failed": failed, "wall_s": statistics.median(walls), "walls_s": walls, "result": results[0],
            "agreement": agreement, "agrees": None if agreement is None else app.agrees(agreement),
            "no_result": sum(1 for x in results if x is None), "stats": runs[0]["stats"],
            "share": share(runs[0]["stats"]), "tail": next((r["tail"] for r in runs if r["tail"]), [])}


# ---- report --------------------------------------------------------------------------------------------------
def time_cell(s: dict) -> str:
    return f"FAILED ({', '.join(s['failed'])})" if s["failed"] else f"{s['wall_s']:.2f}"


def agreement_cell(app: App, s: dict) -> str:
    if s["failed"] or s["no_result"]:
        return "no result" if s["no_result"] else "-"
    if s["agreement"] is None:
        return "-"
    return f"{app.text(s['agreement'])} ({'ok' if s['agrees'] else 'DIFFERS'})"


def calls_cell(s: dict) -> str:
    if not s["stats"]:
        return "no collplan-stats lines"
    share_text = "-" if s["share"] is None else f"{100 * s['share']:.1f} %"
    calls = ", ".join(f"{f.removeprefix('MPI_')} {c}/{c + n}" for f, (c, n) in sorted(s["stats"]["calls"].items()))
    return f"{share_text}: {calls}"


def markdown(done: list[tuple[App, int]], first_p: int, configs: list[str], table: dict) -> list[str]:
    others = [c for c in configs if c != "native"]
    through = [c for c in others if c != "pass-through"] + [c for c in others if c == "pass-through"]
    head = (["app", "P"] + [f"{c} (s)" for c in configs] + [f"{c} vs native" for c in others]
            + [f"native vs native P={first_p}"] + [f"{c}: calls through collplan" for c in through])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for app, p in done:
        row = table[app.name][p]
        cells = [app.name, str(p)] + [time_cell(row[c]) for c in configs]
        cells += [agreement_cell(app, row[c]) for c in others]
        cells.append(agreement_cell(app, row["native-across-P"]) if p != first_p else "-")
        cells += [calls_cell(row[c]) for c in through]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def report(args, argv: list[str], lib: Path | None, configs: dict, apps: list[App], table: dict, versions: dict,
           load: float) -> tuple[list[str], list[str]]:
    """Writes results.md and results.json for the (app, P) runs done so far; returns the table with the reasons
    and problems below it, and the problems (failed runs, results missing or beyond the tolerance)."""
    names = list(configs)
    done = [(a, p) for a in apps for p in args.ranks if p in table.get(a.name, {})]
    lines = markdown(done, args.ranks[0], names, table)
    cells = [(a, p, c, table[a.name][p][c]) for a, p in done for c in names]
    reasons = [f"- {a.name}, P={p}, {c}: native {n} {why}" for a, p, c, s in cells
               for why, n in (s["stats"] or {}).get("reasons", {}).items()]
    problems = [f"- FAILED: {a.name} P={p} {c}: {', '.join(s['failed'])}" for a, p, c, s in cells if s["failed"]]
    problems += [f"- RESULT {'MISSING' if s['no_result'] else 'DIFFERS'}: {a.name} P={p} {c}" for a, p, c, s in cells
                 if not s["failed"] and (s["no_result"] or s["agrees"] is False)]
    command = "python3 bench/apps/run_apps.py " + shlex.join(argv)
    cpu = re.search(r"^model name\s*:\s*(.*)$", Path("/proc/cpuinfo").read_text(), re.M)
    machine = f"{platform.node()}: {os.cpu_count()} CPUs ({cpu.group(1) if cpu else platform.machine()})"
    header = [f"Command: `{command}`", "",
              f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine}; load average (1 min) "
              f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; mpirun: {args.mpirun}; "
              f"library: {lib or 'none (native only)'}; repeats: {args.repeats} (median wall time of mpirun)", "",
              "Applications: " + "; ".join(f"{a.name}: {a.what} ({versions.get(a.name) or '?'})" for a in apps), "",
              "collplan configuration: " + " ".join(f"{COLLECTIVES[c][0]}={alg}" for c, alg in CHOICES.items()), ""]
    (args.out / "results.md").write_text("\n".join(header + lines + [""] + reasons + problems) + "\n")
    (args.out / "results.json").write_text(json.dumps(finite(
        {"command": command, "machine": machine, "load_average_start": load, "mpirun": args.mpirun,
         "library": str(lib) if lib else None, "repeats": args.repeats, "timeout_s": args.timeout,
         "choices": CHOICES, "versions": versions, "configurations": configs,
         "apps": {a.name: {"what": a.what, "compare": a.kind, "tolerance": a.tolerance,
                           "runs": {str(p): table[a.name][p] for p in args.ranks if p in table.get(a.name, {})}}
                  for a in apps}}), indent=1) + "\n")
    return lines + reasons + problems, problems


def finite(x):
    """x for JSON: an agreement of inf digits (identical results) as the string "inf"."""
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [finite(v) for v in x]
    return str(x) if isinstance(x, float) and math.isinf(x) else x


def fail(message: str) -> None:
    print(f"run_apps.py: {message}", file=sys.stderr)
    sys.exit(2)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", type=Path,
                    help="libcollplan_pmpi.so built for Debian's Open MPI (without it: native runs only)")
    ap.add_argument("--ranks", type=parse_ranks, default=[2, 4, 8], help="P values, e.g. 2,4,8 (default)")
    ap.add_argument("--apps", default=",".join(APPS), help=f"comma-separated, of {', '.join(APPS)} (default: all)")
    ap.add_argument("--wisdom", type=Path, help="a wisdom file: adds the configuration COLLPLAN_WISDOM=FILE")
    ap.add_argument("--repeats", type=int, default=3, help="runs per configuration and P; the median time counts")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per run before it is killed (default 300)")
    ap.add_argument("--mpirun", default=MPIRUN, help=f"default {MPIRUN}")
    ap.add_argument("--out", type=Path, default=HERE / "results", help="results folder (default bench/apps/results)")
    args = ap.parse_args(argv)

    unknown = [a for a in args.apps.split(",") if a not in APPS]
    if unknown:
        fail(f"unknown app '{unknown[0]}' (allowed: {', '.join(APPS)})")
    apps = [APPS[a] for a in dict.fromkeys(args.apps.split(","))]
    if args.repeats < 1:
        fail(f"--repeats {args.repeats} (allowed: 1 or more)")
    if args.timeout <= 0:
        fail(f"--timeout {args.timeout:g} (allowed: seconds > 0)")
    for name, path in (("--lib", args.lib), ("--wisdom", args.wisdom)):
        if path and not path.is_file():
            fail(f"{name} {path} is not a file")
    if args.wisdom and not args.lib:
        fail("--wisdom needs --lib")
    if not shutil.which(args.mpirun):
        fail(f"--mpirun {args.mpirun} is not an executable (allowed: Debian's Open MPI, apt-get install openmpi-bin)")
    binaries = {}
    for app in apps:
        found = next((b for b in app.binaries if shutil.which(b)), None)
        if not found:
            fail(f"{app.name}: none of {', '.join(app.binaries)} on PATH (allowed: Debian's lammps, quantum-espresso)")
        binaries[app.name] = shutil.which(found)
    if any(a.name.startswith("lammps-pppm") for a in apps) and not PEPTIDE_DATA.is_file():
        fail(f"{PEPTIDE_DATA} is missing (allowed: Debian's lammps-examples installed)")
    lib = args.lib.resolve() if args.lib else None
    args.out, args.mpirun = args.out.resolve(), shutil.which(args.mpirun)
    configs = configurations(lib, args.wisdom.resolve() if args.wisdom else None)
    logs = args.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)  # kills the runs under way with their process trees

    table: dict[str, dict[int, dict]] = {}
    versions: dict[str, str | None] = {}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="collplan-apps-") as scratch_dir:
        scratch = Path(scratch_dir)
        os.chdir(scratch)  # whatever an application writes where it runs (pw.x's CRASH file) lands here
        for app in apps:
            table[app.name] = {}
            for p in args.ranks:
                runs: dict[str, list[dict]] = {c: [] for c in configs}
                for rep in range(args.repeats):
                    for c, rank_env in configs.items():
                        log = logs / f"{app.name}-P{p}-{c}-{rep}.log"
                        r = run_once(args, app, binaries[app.name], p, rank_env, scratch, log)
                        runs[c].append(r)
                        versions.setdefault(app.name, r["version"])
                        state = "timeout" if r["rc"] is None else f"rc={r['rc']}"
                        print(f"{app.name} P={p} {c} #{rep + 1}: {state} {r['wall_s']:.2f} s", file=sys.stderr,
                              flush=True)
                reference = runs["native"][0]["result"]
                row = {c: summarise(app, rs, reference) for c, rs in runs.items()}
                first = table[app.name].get(args.ranks[0], row)["native"]["result"]
                row["native-across-P"] = summarise(app, runs["native"], first)
                table[app.name][p] = row
                report(args, argv, lib, configs, apps, table, versions, load)

    lines, problems = report(args, argv, lib, configs, apps, table, versions, load)
    print("\n".join(lines))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
