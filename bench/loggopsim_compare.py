#!/usr/bin/env python3
"""Compares collplan's loggp simulator with LogGOPSim (Hoefler et al.) on every registered algorithm.

LogGOPSim is NOT part of collplan: build it yourself outside the repository, e.g.
    (fetch the spcl/LogGOPSim sources to /tmp/lgs) ; apt-get install gengetopt re2c libgraphviz-dev
    cd /tmp/lgs/src/LogGOPSim && sed -i 's/-O0 -g/-O3 -g/' Makefile && make
then run (after `make install`):
    .venv/bin/python bench/loggopsim_compare.py /tmp/lgs/src/LogGOPSim [--max-ops 2000000] [--only NAME]

For every registered algorithm it takes a small shape (P <= 16) and a large one (the largest of a list of shapes up
to 4,096 ranks whose schedule has at most --max-ops ops), at an eager and a rendezvous size, exports the schedule to
GOAL, runs LogGOPSim's txt2bin and LogGOPSim, and simulates the same schedule with collplan's loggp engine; algorithms
whose schedules name ports run with that many NICs (A2AT: 4, torgos: 4, circgos: 2). Prints one line per case and
the number that agree to the nanosecond; exit code 1 when any differs. Schedules with barrier ops are listed as
not exportable (GOAL has no global barrier).

--speed: CPU time of both simulators on three large cases (65,536-rank recursive-doubling allreduce at 1 MiB,
rendezvous; 4,096-rank ring allgather at 1 KiB, eager; 4,096-rank pairwise all-to-all at 64 KiB, rendezvous) with
L=2500, o=1500, g=1000 ns, G=6 ns/B and S=65535 B (LogGOPSim's default): exports each to GOAL (the python module
is only the exporter here; collplan's simulator is measured through bench_sim), times LogGOPSim's txt2bin and its
simulator separately, and collplan's simulation alone (bench_sim prints it) and its whole process (schedule
generation included); CPU = user + sys of each child (getrusage). Runs collplan and LogGOPSim alternately
--runs times, and a second bench_sim (--old-bench-sim, e.g. a build of an earlier commit) alongside; checks that
every completion time is equal to the nanosecond and that both bench_sim builds print the same exact: line.
    .venv/bin/python bench/loggopsim_compare.py /tmp/lgs/src/LogGOPSim --speed --bench-sim build/bench/bench_sim
        [--old-bench-sim OTHER/bench_sim] [--runs 3] [--only ring] [--tmp DIR]
"""
from __future__ import annotations

import argparse
import gc
import os
import re
import resource
import subprocess
import sys
import tempfile

import collplan

L, O, G_GAP, G = 3000, 700, 900, 3  # ns, ns, ns, ns/B (the parameters; S below)
S = 8192
MODEL = f"loggp:L={L}ns,o={O}ns,g={G_GAP}ns,G={G}ns/B"
SMALL_SIZE, LARGE_SIZE = "1KiB", "64KiB"  # eager, rendezvous at most block sizes (S = 8 KiB)
LARGE = [4096, 2048, 1024, 729, 512, 256]  # P tried for the large shape, largest first


def shapes_for(P: int) -> list[str]:
    out = [f"full:{P}", f"ring:{P}", f"line:{P}"]
    if P & (P - 1) == 0:
        out.append(f"hypercube:{P.bit_length() - 1}")
    a = round(P ** 0.5)
    if a * a == P:
        out += [f"torus:{a}x{a}", f"mesh:{a}x{a}"]
    c = round(P ** (1 / 3))
    if c ** 3 == P:
        out.append(f"torus:{c}x{c}x{c}")
    return out


def counts_for(alg: dict, P: int) -> list[int] | None:
    if alg["collective"] == "alltoallv":
        return [(i * 7 + j * 3) % 5 for i in range(P) for j in range(P)]  # uneven, with zeros
    if alg["collective"] in ("allgatherv", "reduce_scatter"):
        return [(r * 5 + 3) % 4 for r in range(P)]
    return None


def ports_of(s) -> int:
    text = s.to_text()
    ports = [int(p) for p in re.findall(r"\bport (\d+)", text)]
    return max(ports) + 1 if ports else 1


def large_case(alg: dict, max_ops: int):
    rooted = alg["collective"] in ("bcast", "reduce", "gather", "scatter")
    for P in LARGE:
        for topo in shapes_for(P):
            try:
                s = collplan.schedule(alg["name"], topology=topo, counts=counts_for(alg, P), root=P // 3 if rooted else 0)
            except collplan.CollplanError:
                continue
            if s.total_ops <= max_ops:
                return topo, s
    return None


def small_case(alg: dict):
    cases, _ = collplan._core.sweep_cases(alg["name"], 16)
    if not cases and alg["collective"] == "alltoallv":  # the sweep has no matrix: full:16 with an uneven one
        return "full:16", collplan.schedule(alg["name"], topology="full:16", counts=counts_for(alg, 16))
    if not cases:
        return None
    P, topo, _op, params, root, counts = max(cases, key=lambda c: c[0])
    if alg["collective"] == "alltoallv":
        counts = counts_for(alg, P)
    return topo, collplan.schedule(alg["name"], topology=topo, params=params, root=root, counts=counts or None)


def logopsim(lgs: str, goal: str, tmp: str) -> int:
    path_goal, path_bin = os.path.join(tmp, "s.goal"), os.path.join(tmp, "s.bin")
    with open(path_goal, "w") as f:
        f.write(goal)
    subprocess.run([os.path.join(lgs, "txt2bin"), "-i", path_goal, "-o", path_bin], check=True, capture_output=True)
    out = subprocess.run([os.path.join(lgs, "LogGOPSim"), "-f", path_bin, "-L", str(L), "-o", str(O), "-g", str(G_GAP),
                          "-G", str(G), "-O", "0", "-S", str(S), "-b"], check=True, capture_output=True, text=True).stdout
    m = re.search(r"Maximum finishing time at host \d+: (\d+)", out)
    if not m:
        raise RuntimeError("LogGOPSim printed no finishing time:\n" + out)
    return int(m.group(1))


SPEED_CASES = [("allreduce/recursive_doubling", "full:65536", "1MiB"),  # rendezvous (S = 65535 B)
               ("allgather/ring", "full:4096", "1KiB"),                 # eager
               ("alltoall/pairwise", "full:4096", "64KiB")]             # rendezvous
SPEED_L, SPEED_O, SPEED_G_GAP, SPEED_G = 2500, 1500, 1000, 6  # ns, ns, ns, ns/B; S: LogGOPSim's and bench_sim's 65535


def child_cpu(cmd: list[str]) -> tuple[float, str]:
    """Runs cmd; returns its CPU seconds (user + sys, from getrusage of the children) and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def bench_sim(path: str, alg: str, topo: str, size: str) -> tuple[float, float, str, int]:
    """(simulation CPU s as bench_sim prints it, whole process CPU s, its exact: line, completion time in ns)."""
    model = f"loggp:L={SPEED_L}ns,o={SPEED_O}ns,g={SPEED_G_GAP}ns,G={SPEED_G}ns/B"
    cpu, out = child_cpu([path, "loggp", alg, topo, size, "", model])
    sim = float(re.search(r"simulation [0-9.]+ s wall, ([0-9.]+) s CPU", out).group(1))
    exact = re.search(r"^exact: .*$", out, re.M).group(0)
    t = float(re.search(r"exact: time ([0-9.e+-]+) s", exact).group(1))
    return sim, cpu, exact, round(t * 1e9)


def span(xs: list[float]) -> str:
    return f"{min(xs):.2f}-{max(xs):.2f}" if len(xs) > 1 else f"{xs[0]:.2f}"


def speed(args) -> int:
    lgs = args.lgs
    params = ["-L", str(SPEED_L), "-o", str(SPEED_O), "-g", str(SPEED_G_GAP), "-G", str(SPEED_G), "-S", "65535", "-b"]
    rows, bad = [], 0
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        for alg, topo, size in SPEED_CASES:
            if args.only not in alg:
                continue
            path_goal, path_bin = os.path.join(tmp, "s.goal"), os.path.join(tmp, "s.bin")
            s = collplan.schedule(alg, topology=topo)
            with open(path_goal, "w") as f:
                f.write(s.to_goal(collplan._core.parse_size(size) / s.size_blocks, 0.0, 0.0))
            del s
            gc.collect()
            t2b, _ = child_cpu([os.path.join(lgs, "txt2bin"), "-i", path_goal, "-o", path_bin])
            os.remove(path_goal)
            lg_cpu, new_sim, new_cpu, old_sim, old_cpu, times, exacts = [], [], [], [], [], set(), set()
            for _ in range(args.runs):  # alternately, so that the machine's load touches all alike
                cpu, out = child_cpu([os.path.join(lgs, "LogGOPSim"), "-f", path_bin] + params)
                lg_cpu.append(cpu)
                times.add(int(re.search(r"Maximum finishing time at host \d+: (\d+)", out).group(1)))
                sim, cpu, exact, t = bench_sim(args.bench_sim, alg, topo, size)
                new_sim.append(sim), new_cpu.append(cpu), exacts.add(("new", exact)), times.add(t)
                if args.old_bench_sim:
                    sim, cpu, exact, t = bench_sim(args.old_bench_sim, alg, topo, size)
                    old_sim.append(sim), old_cpu.append(cpu), exacts.add(("old", exact)), times.add(t)
            os.remove(path_bin)
            same = len(times) == 1 and len({e for _, e in exacts}) == 1
            bad += not same
            rows.append((alg, topo, size, t2b, lg_cpu, new_sim, new_cpu, old_sim, old_cpu, times, same))
            print(f"# {alg} {topo} {size}: times {sorted(times)} ns; {sorted(exacts)}", flush=True)
    print(f"# CPU seconds (user + sys), {args.runs} runs each, min-max; L={SPEED_L} o={SPEED_O} g={SPEED_G_GAP} ns, "
          f"G={SPEED_G} ns/B, S=65535 B")
    print("| case | txt2bin | LogGOPSim | collplan simulation | collplan process | old simulation | old process | "
          "LogGOPSim / simulation | LogGOPSim / process | equal |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for alg, topo, size, t2b, lg, ns, nc, os_, oc, times, same in rows:
        ratio = lambda a, b: f"{min(a) / max(b):.1f}-{max(a) / min(b):.1f}"
        print(f"| {alg} {topo} {size} | {t2b:.1f} | {span(lg)} | {span(ns)} | {span(nc)} | "
              f"{span(os_) if os_ else '-'} | {span(oc) if oc else '-'} | {ratio(lg, ns)}x | {ratio(lg, nc)}x | "
              f"{'yes' if same else 'NO'} |")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lgs", help="directory holding LogGOPSim and txt2bin")
    ap.add_argument("--max-ops", type=int, default=2_000_000, help="largest schedule to export (ops)")
    ap.add_argument("--only", default="", help="only algorithms whose name contains this")
    ap.add_argument("--speed", action="store_true", help="time both simulators on three large cases (see above)")
    ap.add_argument("--bench-sim", default="build/bench/bench_sim", help="--speed: collplan's bench_sim")
    ap.add_argument("--old-bench-sim", default="", help="--speed: another bench_sim build to compare with")
    ap.add_argument("--runs", type=int, default=3, help="--speed: runs of each simulator per case")
    ap.add_argument("--tmp", default=None, help="--speed: directory for the GOAL and binary files (GBs)")
    args = ap.parse_args()
    if args.speed:
        return speed(args)
    agree = differ = skipped = 0
    print(f"# LogGOPSim vs collplan loggp: L={L} o={O} g={G_GAP} G={G} ns, S={S} B; times in ns")
    print(f"{'algorithm':44} {'topology':18} {'size':>6} {'nics':>4} {'LogGOPSim':>12} {'collplan':>12}  verdict")
    with tempfile.TemporaryDirectory() as tmp:
        for alg in collplan.algorithms():
            if args.only not in alg["name"]:
                continue
            for case in (small_case(alg), large_case(alg, args.max_ops)):
                if case is None:
                    continue
                topo, s = case
                for size in (SMALL_SIZE, LARGE_SIZE):
                    nics = ports_of(s)
                    block = collplan._core.parse_size(size) / s.size_blocks
                    try:
                        goal = s.to_goal(block, 0.0, 0.0)
                    except collplan.CollplanError as e:
                        print(f"{alg['name']:44} {topo:18} {size:>6} {nics:>4} {'-':>12} {'-':>12}  not exportable: {e}")
                        skipped += 1
                        break
                    lg = logopsim(args.lgs, goal, tmp)
                    r = collplan.simulate(s, model=MODEL, fidelity="loggp", size=size, topology=topo,
                                          network=f"eager={S}B,ports={nics}")
                    cp = round(r.time_s * 1e9)
                    ok = lg == cp
                    agree += ok
                    differ += not ok
                    why = " -- 0-byte messages: LogGOPSim charges them -G" if " 0b " in goal and not ok else ""
                    print(f"{alg['name']:44} {topo:18} {size:>6} {nics:>4} {lg:>12} {cp:>12}  "
                          f"{'equal' if ok else f'DIFFERS ({(cp - lg) / lg:+.2%}){why}'}", flush=True)
    print(f"# {agree} equal, {differ} differ, {skipped} not exportable")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
