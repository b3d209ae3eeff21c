#!/usr/bin/env python3
"""From a real application to a plan and back (docs/profile.md): LAMMPS as Debian ships it, under Debian's Open MPI
4.1, recorded, replayed, planned for and rerun.

For each application (run_apps.py's inputs) and P:
  1. cost of recording: --repeats interleaved runs of native (no preload), pass-through (preloaded) and profile
     (preloaded, COLLPLAN_PROFILE): the median wall time of mpirun;
  2. accuracy of replay: the recorded time per rank in collective calls against `collplan replay --ranks P` of
     the same profile on the machine file `collplan calibrate` measured here, the native variant (the MPI
     library's own algorithm), loggp and flow;
  3. the loop: `collplan plan --profile --evaluator measure` under mpirun at P (a wisdom for exactly the recorded
     shapes), then --repeats more profiled runs with COLLPLAN_WISDOM: the recorded time in collectives with and
     without the wisdom (medians over the runs);
  4. at the largest P: `collplan replay --topology torus:16x16x16 --scaling weak --library mpich` (4,096 ranks),
     both variants.
--replays-only redoes steps 2 and 4 on the profiles recorded before.
Writes OUT/profile.md, OUT/profile.json and every run's output (OUT/logs/).

  python3 bench/apps/profile_apps.py --lib $(.venv/bin/collplan pmpi --mpi debian_openmpi) --ranks 2,4
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from run_apps import APPS, MPI_ENV, MPIRUN  # noqa: E402

COLLPLAN = [str(ROOT / ".venv" / "bin" / "collplan")]
CONFIGS = ("native", "pass-through", "profile")


def run(cmd: list[str], log: Path, env: dict | None = None, timeout: int = 900) -> tuple[str, float]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("COLLPLAN_") and k != "LD_PRELOAD"}
    full |= MPI_ENV | (env or {})
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=timeout, cwd=log.parent)
    wall = time.perf_counter() - t0
    log.write_text(f"$ {shlex.join(cmd)}\n{r.stdout}\n{r.stderr}")
    if r.returncode != 0:
        raise SystemExit(f"profile_apps: failed (rc {r.returncode}): {shlex.join(cmd)}; see {log}")
    return r.stdout, wall


def app_cmd(args, app, p: int, rank_env: dict[str, str]) -> list[str]:
    binary = next((b for b in app.binaries if (Path("/usr/bin") / b).exists()), app.binaries[0])
    return [args.mpirun, "--oversubscribe", "-n", str(p), "env", *(f"{k}={v}" for k, v in rank_env.items()),
            binary, *app.args]


def collective_s(prof: Path, log: Path, machine: Path) -> float:
    """Mean over ranks of the time spent in collective calls, as the replay counts it (blocked inside MPI: a
    non-blocking call's own time plus its completion call's): the `recorded` line of a replay at the recorded P."""
    out, _ = run(COLLPLAN + ["replay", str(prof), "--ranks", str(len(list(prof.glob("collplan.*.prof")))),
                             "--machine", str(machine), "--json", "--no-progress"], log)
    return json.loads(out)["recorded"]["collective_mean_s"]


def replay(prof: Path, machine: Path, where: list[str], fidelity: str, log: Path, extra=(), timeout=900) -> dict:
    out, wall = run(COLLPLAN + ["replay", str(prof), *where, "--machine", str(machine), "--fidelity", fidelity,
                                "--json", "--no-progress", *extra], log, timeout=timeout)
    d = json.loads(out)
    d["replay_wall_s"] = wall
    return d


def accuracy(prof: Path, machine: Path, p: int, log: Path) -> dict:
    """2. The profile replayed at its own P, loggp and flow, against its recorded times."""
    out = {}
    for f in ("loggp", "flow"):
        d = replay(prof, machine, ["--ranks", str(p)], f, log.with_name(f"{log.name}-replay-{f}.txt"))
        out[f] = {"native_s": variant(d, "native")["collective_mean_s"],
                  "collplan_s": variant(d, "collplan")["collective_mean_s"],
                  "total_native_s": variant(d, "native")["total_s"], "recorded_s": d["recorded"]["collective_mean_s"],
                  "recorded_total_s": d["recorded"]["total_s"], "wall_s": d["replay_wall_s"],
                  "per_collective_s": {"recorded": d["recorded"]["per_collective_s"],
                                       "native": variant(d, "native")["per_collective_s"]}}
    return out


def replay_4096(prof: Path, machine: Path, log: Path) -> dict:
    """4. The profile at 4,096 ranks on a torus (weak scaling), both variants. The native variant is MPICH's
    choice: Open MPI on several nodes runs coll/han, which has no collplan schedule (both variants would run
    collplan's: docs/profile.md, "Replaying at another scale")."""
    big = replay(prof, machine, ["--topology", "torus:16x16x16"], "loggp", log,
                 ["--scaling", "weak", "--library", "mpich"], timeout=3600)
    return {v["name"]: {"collective_mean_s": v["collective_mean_s"], "total_s": v["total_s"],
                        "per_collective_s": v["per_collective_s"]} for v in big["variants"]} | \
        {"wall_s": big["replay_wall_s"], "notes": big["notes"]}


def variant(d: dict, name: str) -> dict:
    return next(v for v in d["variants"] if v["name"] == name)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", help="libcollplan_pmpi.so built for Debian's Open MPI (all but --replays-only)")
    ap.add_argument("--apps", default="lammps-lj,lammps-pppm-a2a")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--mpirun", default=MPIRUN)
    ap.add_argument("--machine", help="a calibrated machine file (default: OUT/machine.toml, calibrated now if missing)")
    ap.add_argument("--out", default=str(HERE / "results" / "profile"))
    ap.add_argument("--big", default="lammps-lj", help="the applications replayed at 4,096 ranks (step 4: minutes "
                    "each; lammps-pppm-a2a's alltoallv, uniform at that scale, took more than 15)")
    ap.add_argument("--replays-only", action="store_true",
                    help="redo only steps 2 and 4 (the replays) on the profiles OUT/profile.json names")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.replays_only:
        rows = json.loads((out / "profile.json").read_text())
        top = max(r["ranks"] for r in rows)
        machine = Path(args.machine or out / "machine.toml")
        for r in rows:
            tag = f"{r['app']}-P{r['ranks']}"
            r["replay"] = accuracy(out / tag / "prof-0", machine, r["ranks"], out / "logs" / tag)
        big = [r for r in rows if r["ranks"] == top and r["app"] in args.big.split(",")]
        with ThreadPoolExecutor(2) as pool:  # the large replays side by side (one process each)
            done = pool.map(lambda r: replay_4096(out / f"{r['app']}-P{top}" / "prof-0", machine,
                                                  out / "logs" / f"{r['app']}-P{top}-replay-4096.txt"), big)
            for r, d in zip(big, done):
                r["replay_4096"] = d
        (out / "profile.json").write_text(json.dumps(rows, indent=1))
        (out / "profile.md").write_text(markdown(rows))
        print(markdown(rows))
        return 0
    if not args.lib:
        ap.error("--lib is required (the PMPI library to record with)")
    (out / "logs").mkdir(parents=True, exist_ok=True)
    lib = Path(args.lib).resolve()
    machine = Path(args.machine) if args.machine else out / "machine.toml"
    if not machine.exists():  # two ranks of this machine under the same MPI as the applications
        run([args.mpirun, "-n", "2", "env", "COLLPLAN_MPI=debian_openmpi"] + COLLPLAN +
            ["calibrate", "--out", str(machine.resolve())], out / "logs" / "calibrate.txt")
    ranks = [int(x) for x in args.ranks.split(",")]
    saved = out / "profile.json"  # rows of other applications and P stay
    results = json.loads(saved.read_text()) if saved.exists() else []
    for name in args.apps.split(","):
        app = APPS[name]
        for p in ranks:
            tag = f"{name}-P{p}"
            work = out / tag
            work.mkdir(exist_ok=True)
            walls = {c: [] for c in CONFIGS}
            coll = []
            for k in range(args.repeats):  # 1. the three configurations interleaved
                for c in CONFIGS:
                    env = {} if c == "native" else {"LD_PRELOAD": str(lib)}
                    prof = work / f"prof-{k}"
                    if c == "profile":
                        env["COLLPLAN_PROFILE"] = str(prof)
                    _, wall = run(app_cmd(args, app, p, env), out / "logs" / f"{tag}-{c}-{k}.txt")
                    walls[c].append(wall)
                    if c == "profile":
                        coll.append(collective_s(prof, out / "logs" / f"{tag}-show-{k}.txt", machine))
            prof = work / "prof-0"
            wisdom = work / "wisdom.json"  # 3. the loop
            wisdom.unlink(missing_ok=True)
            plan_out, plan_wall = run([args.mpirun, "--oversubscribe", "-n", str(p), "env",
                                       "COLLPLAN_MPI=debian_openmpi"] + COLLPLAN +
                                      ["plan", "--profile", str(prof), "--machine", str(machine), "--evaluator",
                                       "measure", "--wisdom", str(wisdom), "--no-progress"],
                                      out / "logs" / f"{tag}-plan.txt", timeout=3600)
            coll_w = []
            for k in range(args.repeats):
                prof_w = work / f"prof-wisdom-{k}"
                run(app_cmd(args, app, p, {"LD_PRELOAD": str(lib), "COLLPLAN_PROFILE": str(prof_w),
                                           "COLLPLAN_WISDOM": str(wisdom)}), out / "logs" / f"{tag}-wisdom-{k}.txt")
                coll_w.append(collective_s(prof_w, out / "logs" / f"{tag}-show-wisdom-{k}.txt", machine))
            row = {"app": name, "ranks": p, "wall_s": {c: statistics.median(w) for c, w in walls.items()},
                   "walls_s": walls, "collective_s": statistics.median(coll), "collectives_s": coll,
                   "replay": accuracy(prof, machine, p, out / "logs" / tag),
                   "plan_wall_s": plan_wall, "plan_tail": plan_out.splitlines()[-3:],
                   "wisdom_collective_s": statistics.median(coll_w), "wisdom_collectives_s": coll_w}
            if p == max(ranks) and name in args.big.split(","):
                row["replay_4096"] = replay_4096(prof, machine, out / "logs" / f"{tag}-replay-4096.txt")
            results = [r for r in results if (r["app"], r["ranks"]) != (name, p)] + [row]
            (out / "profile.json").write_text(json.dumps(results, indent=1))
            print(f"{tag}: done", file=sys.stderr, flush=True)
    results.sort(key=lambda r: (r["app"], r["ranks"]))
    (out / "profile.md").write_text(markdown(results))
    print(markdown(results))
    return 0


def markdown(rows: list[dict]) -> str:
    def us(x):
        return f"{x * 1e3:.1f} ms"
    lines = ["| app | P | wall native / pass-through / profile | in collectives: replayed run (median of runs) "
             "| replay loggp (ratio) | replay flow (ratio) | with the measured wisdom (change of the median) "
             "| 4,096 ranks on torus:16x16x16: native / collplan |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        w = r["wall_s"]
        rec = r["replay"]["loggp"]["recorded_s"]  # the replayed profile's own time in collective calls
        cells = [r["app"], str(r["ranks"]),
                 f"{w['native']:.2f} / {w['pass-through']:.2f} ({w['pass-through'] / w['native']:.2f}x) / "
                 f"{w['profile']:.2f} s ({w['profile'] / w['native']:.2f}x)", f"{us(rec)} ({us(r['collective_s'])})"]
        for f in ("loggp", "flow"):
            x = r["replay"][f]["native_s"]
            cells.append(f"{us(x)} ({x / r['replay'][f]['recorded_s']:.2f})")
        cw = r["wisdom_collective_s"]
        cells.append(f"{us(cw)} ({cw / r['collective_s'] - 1:+.0%})")
        big = r.get("replay_4096")
        cells.append(f"{us(big['native']['collective_mean_s'])} / {us(big['collplan']['collective_mean_s'])}"
                     if big else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
