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
"""
from __future__ import annotations

import argparse
import os
import re
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lgs", help="directory holding LogGOPSim and txt2bin")
    ap.add_argument("--max-ops", type=int, default=2_000_000, help="largest schedule to export (ops)")
    ap.add_argument("--only", default="", help="only algorithms whose name contains this")
    args = ap.parse_args()
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
