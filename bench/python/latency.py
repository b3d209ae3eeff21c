"""Per-call cost of the Python API: mpi4py's blocking collective vs collplan.mpi's blocking call vs a
collplan persistent request (start + wait), side by side in one run, OSU style.

    mpirun -n 2 .venv/bin/python bench/python/latency.py [--iters 2000] [--reps 7]

For every collective and size the three calls are timed in turn, `reps` rounds (interleaved, so load changes hit
all three alike): a barrier, `warmup` calls, a barrier, `iters` back-to-back calls; a row shows the mean per call
of the slowest rank (max over ranks of the per-rank average), the best round's, in microseconds, and the ratios to
mpi4py. collplan runs recursive_doubling (allreduce), ring (allgather), pairwise (alltoall), linear_permutation
(alltoallv) and dissemination (barrier). Not a test: bench/README.md ("Python API per-call cost") has results.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

from collplan import mpi as cmpi

MPI, _ = cmpi.backend()


def timed(comm, call, iters: int, warmup: int) -> float:
    comm.Barrier()
    for _ in range(warmup):
        call()
    comm.Barrier()
    t0 = MPI.Wtime()
    for _ in range(iters):
        call()
    per_call = (MPI.Wtime() - t0) / iters
    return comm.allreduce(per_call, op=MPI.MAX)


def cases(comm):
    """(collective, size label, mpi4py call, collplan blocking call, collplan persistent request)."""
    P, me = comm.Get_size(), comm.Get_rank()
    for nbytes in (8 << k for k in range(14)):  # 8 B .. 64 KiB
        x, y = np.full(nbytes // 8, me + 1.0), np.zeros(nbytes // 8)
        yield ("allreduce", nbytes, lambda x=x, y=y: comm.Allreduce(x, y, MPI.SUM),
               lambda x=x, y=y: cmpi.allreduce(comm, x, y, MPI.SUM, algorithm="recursive_doubling"),
               cmpi.allreduce_init(comm, x, y, MPI.SUM, algorithm="recursive_doubling"))
    for nbytes in (8, 64, 512):  # per block
        block, out = np.full(nbytes, me, np.uint8), np.zeros(P * nbytes, np.uint8)
        yield ("allgather", nbytes, lambda b=block, o=out: comm.Allgather(b, o),
               lambda b=block, o=out: cmpi.allgather(comm, b, o, algorithm="ring"),
               cmpi.allgather_init(comm, block, out, algorithm="ring"))
        send = np.full(P * nbytes, me, np.uint8)
        yield ("alltoall", nbytes, lambda s=send, o=out: comm.Alltoall(s, o),
               lambda s=send, o=out: cmpi.alltoall(comm, s, o, algorithm="pairwise"),
               cmpi.alltoall_init(comm, send, out, algorithm="pairwise"))
        counts, displs = [nbytes] * P, [nbytes * j for j in range(P)]
        yield ("alltoallv", nbytes, lambda s=send, o=out: comm.Alltoallv([s, (counts, displs)], [o, (counts, displs)]),
               lambda s=send, o=out: cmpi.alltoallv(comm, s, counts, o, counts, algorithm="linear_permutation"),
               cmpi.alltoallv_init(comm, send, counts, out, counts, algorithm="linear_permutation"))
    yield ("barrier", 0, comm.Barrier, lambda: cmpi.barrier(comm, algorithm="dissemination"),
           cmpi.barrier_init(comm, algorithm="dissemination"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=2000, help="calls per timing block up to 8 KiB (larger: a fifth)")
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--reps", type=int, default=7, help="interleaved rounds; the best is reported")
    args = ap.parse_args()
    comm = MPI.COMM_WORLD
    me = comm.Get_rank()
    if me == 0:
        print(f"# {MPI.Get_library_version().splitlines()[0].replace(chr(0), '').strip()}; P={comm.Get_size()}; "
              f"load average at start {os.getloadavg()[0]:.2f}")
        print("| collective | size | mpi4py us | collplan blocking us | persistent start+wait us | blocking / mpi4py "
              "| persistent / mpi4py |")
        print("|---|---|---|---|---|---|---|")
    for k, (name, nbytes, native, blocking, req) in enumerate(cases(comm)):
        iters = args.iters if nbytes <= 8192 else max(1, args.iters // 5)

        def persistent(req=req):
            req.start()
            req.wait()

        best = [float("inf")] * 3
        for _ in range(args.reps + (k == 0)):  # the first case once more: the first round warms the process up
            for i, call in enumerate((native, blocking, persistent)):
                best[i] = min(best[i], timed(comm, call, iters, args.warmup))
        if me == 0:
            us = [b * 1e6 for b in best]
            size = f"{nbytes} B" if name != "barrier" else "-"
            print(f"| {name} | {size} | {us[0]:.2f} | {us[1]:.2f} | {us[2]:.2f} | {us[1] / us[0]:.2f} "
                  f"| {us[2] / us[0]:.2f} |", flush=True)
    if me == 0:
        print(f"# load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
