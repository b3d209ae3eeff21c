#!/usr/bin/env python3
"""Compares collplan's flow simulator with SimGrid's SMPI on pairwise all-to-all and smaller cases on tori.

SimGrid is NOT part of collplan: install Debian's package outside the repository (as root):
    apt-get install -y libsimgrid-dev        # smpicc, smpirun; bookworm ships SimGrid 3.32 this way
then run (after `make install`):
    .venv/bin/python bench/simgrid_compare.py [--quick] [--smpirun smpirun] [--smpicc smpicc]

Everything SimGrid needs -- the platform XML (a TORUS cluster, 4 GB/s and 10 ns per link, SimGrid's default
SPLITDUPLEX links), the host file and a plain C MPI program (MPI_Alltoall, or a set of messages sent at once) -- is
written to a temporary directory and built there with smpicc. SMPI runs with network/model:CM02, smpi/alltoall:pair
(the same XOR order as collplan's alltoall/pairwise for P = 2^d), smpi/simulate-computation:no and smpi/wtime:0
(no time injected for the program's own code and timer calls). Times are simulated completion times from time 0;
"first"/"last" are the earliest/latest completion among the ranks that communicate.

Each case runs in five SimGrid settings, each against the collplan flow simulation that models the same thing:

  cm02        SimGrid's CM02 as it is (the issue's setting): TCP-like sharing weighted by 1/route latency, 5% of
              each flow's rate on its reverse route (network/crosstraffic, default on), 10 ns per link.
              collplan: plain max-min (the issue's comparison), and `sharing=rtt,crosstraffic=0.05` with SimGrid's
              tie rule for half-ring offsets as send hints (`ties`).
  nocross     SimGrid with --cfg=network/crosstraffic:0.  collplan: `sharing=rtt` and SimGrid's tie rule.
  ... Full    the same with --cfg=network/optim:Full. SimGrid's default, Lazy (lazy action updates with selective
              re-solving), leaves some allocations that are not max-min -- pairwise step k = 34 on 8x8 gives 14 of its
              64 flows 3 GB/s at 60 ns, where max-min gives 1 or 2 -- while Full re-solves the whole system.
  plain       SimGrid with crosstraffic off and 0 link latency (CM02 then weights every flow alike: plain max-min).
              collplan: plain max-min, alpha = 0.

collplan's model is wormhole:startup=0,flit=1B,flit_time=0.25ns,hop_time=10ns (a message pays 10 ns per hop before
it flows, as SimGrid's route latency) -- hockney:alpha=0 for `plain` -- with node_contention=0 (SimGrid has no
limit on concurrent messages per host), and every collplan message carries 16 bytes more than the MPI message:
SMPI sends an envelope of 16 bytes with each message (its smpi_request.cpp). Exit code 1 when a row that must
agree (Full and plain) differs by more than 1%; the issue's row and the Lazy rows may differ, with the reason printed.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

import collplan

BW, LAT = "4GBps", "10ns"  # per link, both directions (SPLITDUPLEX)
MODEL_LAT = "wormhole:startup=0ns,flit=1B,flit_time=0.25ns,hop_time=10ns"
MODEL_PLAIN = "hockney:alpha=0ns,beta=0.25ns/B"
ENVELOPE = 16  # bytes SMPI adds to every message (smpi_request.cpp: "MPI envelope size (tag+dest+communicator)")

PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* alltoall M: MPI_Alltoall of M bytes per destination. pairs M FILE: every message "src dst" of FILE (M bytes) at
   once (MPI_Isend/MPI_Irecv, MPI_Waitall). Every communicating rank prints its completion time. */
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int P, r; MPI_Comm_size(MPI_COMM_WORLD, &P); MPI_Comm_rank(MPI_COMM_WORLD, &r);
  long m = atol(argv[2]);
  double t = -1;
  if (strcmp(argv[1], "alltoall") == 0) {
    char* s = SMPI_SHARED_MALLOC((size_t)m * P);
    char* d = SMPI_SHARED_MALLOC((size_t)m * P);
    MPI_Alltoall(s, (int)m, MPI_BYTE, d, (int)m, MPI_BYTE, MPI_COMM_WORLD);
    t = MPI_Wtime();
    SMPI_SHARED_FREE(s); SMPI_SHARED_FREE(d);
  } else {
    FILE* f = fopen(argv[3], "r");
    int a, b, n = 0;
    MPI_Request req[1024];
    char* buf = SMPI_SHARED_MALLOC((size_t)m * 1024);
    while (fscanf(f, "%d %d", &a, &b) == 2 && n < 1022) {
      if (a == r) MPI_Isend(buf + (size_t)m * n, (int)m, MPI_BYTE, b, 0, MPI_COMM_WORLD, &req[n]), n++;
      if (b == r) MPI_Irecv(buf + (size_t)m * n, (int)m, MPI_BYTE, a, 0, MPI_COMM_WORLD, &req[n]), n++;
    }
    fclose(f);
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    if (n > 0) t = MPI_Wtime();
    SMPI_SHARED_FREE(buf);
  }
  if (t >= 0) printf("rank %d %.12f\n", r, t);  /* no reduction: its messages would share links with late flows */
  MPI_Finalize();
  return 0;
}
"""


def platform(dims: list[int], lat: str) -> str:
    n = 1
    for d in dims:
        n *= d
    return f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="torus" prefix="n" suffix="" radical="0-{n - 1}" speed="1Gf" bw="{BW}" lat="{lat}"
           topology="TORUS" topo_parameters="{','.join(map(str, dims))}"/>
</platform>
"""


class SimGrid:
    def __init__(self, tmp: str, smpirun: str, smpicc: str):
        self.tmp, self.smpirun = tmp, smpirun
        src = os.path.join(tmp, "a2a.c")
        with open(src, "w") as f:
            f.write(PROGRAM)
        self.exe = os.path.join(tmp, "a2a")
        subprocess.run([smpicc, "-O2", "-o", self.exe, src], check=True, capture_output=True)

    def run(self, dims: list[int], setting: str, m: int, pairs: list[tuple[int, int]] | None) -> tuple[float, float]:
        P = 1
        for d in dims:
            P *= d
        lat = "0" if setting.startswith("plain") else LAT
        plat = os.path.join(self.tmp, f"torus-{'x'.join(map(str, dims))}-{setting}.xml")
        with open(plat, "w") as f:
            f.write(platform(dims, lat))
        hosts = os.path.join(self.tmp, f"hosts-{P}")
        with open(hosts, "w") as f:
            f.write("".join(f"n{i}\n" for i in range(P)))
        args = [self.smpirun, "-np", str(P), "-platform", plat, "-hostfile", hosts,
                "--cfg=network/model:CM02", "--cfg=smpi/alltoall:pair", "--cfg=smpi/simulate-computation:no",
                "--cfg=smpi/wtime:0", f"--cfg=network/crosstraffic:{1 if setting.startswith('cm02') else 0}"]
        if setting.endswith("Full"):
            args.append("--cfg=network/optim:Full")
        args.append(self.exe)
        if pairs is None:
            args += ["alltoall", str(m)]
        else:
            pf = os.path.join(self.tmp, "pairs.txt")
            with open(pf, "w") as f:
                f.write("".join(f"{a} {b}\n" for a, b in pairs))
            args += ["pairs", str(m), pf]
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
        times = [float(t) for t in re.findall(r"^rank \d+ (\S+)$", out, re.M)]
        if not times:
            raise RuntimeError("smpirun printed no result:\n" + out)
        return min(times), max(times)


def simgrid_ties(a: int, b: int, dims: list[int]) -> int:
    """SimGrid's torus routing (TorusZone) takes the shorter way in each dimension, lowest dimension first, as
    collplan does; a half-ring offset on an even side goes the + way except from coordinate side/2, which goes the
    - way. This is the `ties` hint that makes collplan route a->b the same way."""
    mask, prod = 0, 1
    for i, n in enumerate(dims):
        ca, cb = (a // prod) % n, (b // prod) % n
        if n % 2 == 0 and (cb - ca) % n == n // 2 and ca == n // 2:
            mask |= 1 << i
        prod *= n
    return mask


def with_ties(text: str, dims: list[int]) -> str:
    out, rank = [], None
    for line in text.splitlines():
        x = re.match(r"rank (\d+)$", line)
        if x:
            rank = int(x.group(1))
        x = re.match(r"(\s+\d+: (?:\| )?send to (\d+) tag \d+ \S+)(.*)$", line)
        if x and rank is not None:
            mask = simgrid_ties(rank, int(x.group(2)), dims)
            if mask:
                line = f"{x.group(1)} ties {mask}{x.group(3)}"
        out.append(line)
    return "\n".join(out) + "\n"


def pairs_schedule(P: int, topo: str, pairs: list[tuple[int, int]]):
    lines = ["collplan-schedule 1", "collective alltoall", f"ranks {P}", f"blocks in={P} out={P} tmp=0",
             "algorithm pairs", 'params ""', f"topology {topo}", "flags"]
    for r in range(P):
        lines.append(f"rank {r}")
        k = 0
        for a, b in pairs:
            if a == r:
                lines.append(f"  {k}: send to {b} tag 0 in[{b}+1]")
                k += 1
            if b == r:
                lines.append(f"  {k}: recv from {a} tag 0 out[{a}+1]")
                k += 1
    return collplan.Schedule.from_text("\n".join(lines) + "\n")


def collplan_times(sched, topo: str, m: int, model: str, net: str) -> tuple[float, float]:
    r = collplan.simulate(sched, model=model, fidelity="flow", size=m, topology=topo, network=net)
    busy = [t for i, t in enumerate(r.rank_time_s) if sched.num_ops(i) > 0]
    return min(busy), max(busy)


def cases(quick: bool):
    xor = lambda P, k: [(r, r ^ k) for r in range(P)]  # noqa: E731
    out = [
        ("1 message, 1 hop (0->1)", [8, 8], [(0, 1)]),
        ("1 message, 4 hops, tie (4->0)", [8, 8], [(4, 0)]),
        ("2 flows share 1->2 (0->2, 1->2)", [8, 8], [(0, 2), (1, 2)]),
        ("opposite flows 0->1, 1->0", [8, 8], [(0, 1), (1, 0)]),
        ("pairwise step k=3 (1 and 3 hops)", [8, 8], xor(64, 3)),
        ("pairwise step k=4 (half ring, ties)", [8, 8], xor(64, 4)),
        ("pairwise step k=63 (2..8 hops)", [8, 8], xor(64, 63)),
        ("pairwise step k=34 (x 2, y half ring)", [8, 8], xor(64, 34)),
        ("alltoall/pairwise", [8, 8], None),
    ]
    if not quick:
        out.append(("alltoall/pairwise", [16, 16], None))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smpirun", default="smpirun")
    ap.add_argument("--smpicc", default="smpicc")
    ap.add_argument("--size", default="64KiB", help="bytes per message (per destination for the all-to-all)")
    ap.add_argument("--quick", action="store_true", help="8x8 only (the 16x16 all-to-all takes ~25 s per setting)")
    args = ap.parse_args()
    m = int(collplan.parse_size(args.size))
    bad = 0
    print(f"# SimGrid SMPI (CM02, TORUS, {BW} and {LAT} per link, SPLITDUPLEX) vs collplan flow; {m} B per message")
    print("# times in us: first / last completion among communicating ranks; diff = (collplan - SimGrid) / SimGrid "
          "of the last")
    hdr = f"{'case':38} {'torus':6} {'SimGrid setting':16} {'SimGrid first/last':>22} {'collplan setting':34} " \
          f"{'collplan first/last':>22} {'diff':>8}  verdict"
    print(hdr)
    with tempfile.TemporaryDirectory(prefix="collplan-simgrid-") as tmp:
        sg = SimGrid(tmp, args.smpirun, args.smpicc)
        for name, dims, pairs in cases(args.quick):
            P = dims[0] * dims[1]
            topo = "torus:" + "x".join(map(str, dims))
            if pairs is None:
                plain = collplan.schedule("alltoall/pairwise", topology=topo)
            else:
                plain = pairs_schedule(P, topo, pairs)
            tied = collplan.Schedule.from_text(with_ties(plain.to_text(), dims))
            # (SimGrid setting, collplan setting, schedule, model, network, tolerance, why a larger difference is
            # expected -- empty: the row must agree to 1%, else the script fails)
            issue = "cross-traffic and 1/latency weights"
            lazy = "SimGrid's Lazy update, see Full"
            rows = [("cm02", "plain max-min (the issue's)", plain, MODEL_LAT, "node_contention=0", 0.05, issue),
                    ("cm02", "rtt, crosstraffic=0.05, ties", tied, MODEL_LAT,
                     "node_contention=0,sharing=rtt,crosstraffic=0.05", 0.01, lazy),
                    ("cm02 Full", "rtt, crosstraffic=0.05, ties", tied, MODEL_LAT,
                     "node_contention=0,sharing=rtt,crosstraffic=0.05", 0.01, ""),
                    ("nocross", "rtt, ties", tied, MODEL_LAT, "node_contention=0,sharing=rtt", 0.01, lazy),
                    ("nocross Full", "rtt, ties", tied, MODEL_LAT, "node_contention=0,sharing=rtt", 0.01, ""),
                    ("plain", "plain max-min, alpha=0", plain, MODEL_PLAIN, "node_contention=0", 0.01, "")]
            sg_cache = {}
            for setting, cp_name, sched, model, net, tol, why in rows:
                if setting not in sg_cache:
                    sg_cache[setting] = sg.run(dims, setting, m, pairs)
                s_first, s_last = sg_cache[setting]
                c_first, c_last = collplan_times(sched, topo, m + ENVELOPE, model, net)
                diff = (c_last - s_last) / s_last
                ok = abs(diff) <= tol and abs(c_first - s_first) <= tol * s_first
                bad += not ok and not why
                verdict = f"agree (within {tol:.0%})" if ok else f"DIFFER (> {tol:.0%})" + (f": {why}" if why else "")
                print(f"{name:38} {'x'.join(map(str, dims)):6} {setting:16} "
                      f"{s_first * 1e6:10.3f}/{s_last * 1e6:11.3f} {cp_name:34} "
                      f"{c_first * 1e6:10.3f}/{c_last * 1e6:11.3f} {diff:+8.3%}  {verdict}", flush=True)
    print(f"# {bad} rows that must agree differ by more than 1%")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
