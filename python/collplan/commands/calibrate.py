"""`collplan calibrate` (launched with mpirun): measure this machine's parameters and write a machine file.

    mpirun -n 2 .venv/bin/collplan calibrate --out mymachine.toml [--model hockney|loggp] [--quick]

Ranks 0 and 1 run ping-pong, message bursts and the overhead kernel between them; every rank runs the local
reduction and copy kernels at the same time (as in a collective) and the barrier; the ranks on rank 0's host then
exchange in k pairs at once and reduce k at a time (what the host moves together: its channel); rank 0 fits,
reports and writes the file (collplan.calibrate does the fitting; docs/calibration.md explains the methods).
"""
from __future__ import annotations

import datetime
import json
import math
import os
import socket
import sys
import time
from pathlib import Path

from .. import calibrate as cal
from .. import mpi as cmpi
from ..measure import backend_as_programs_run
from .._core import CollplanError, format_bytes, parse_size
from ..output import atomic_write
from ._common import int_arg

MIN_SAMPLE_S = 20e-6     # a sample (a batch of iterations) lasts at least this long
ROUNDS = 5               # the size sweeps run this often, interleaved, so a burst of load elsewhere on the machine
                         # spreads over all sizes instead of spoiling a few (--quick: 1)
BURST_BYTES = 16 << 20   # bytes per burst at most (its count shrinks for large messages)


def register(sub) -> None:
    p = sub.add_parser("calibrate", help="measure this machine under mpirun (ping-pong, bursts, reductions) and "
                                         "write a machine file",
                       epilog="example:\n  mpirun -n 2 collplan calibrate --out mymachine.toml")
    p.add_argument("--out", help="machine file to write (TOML; rank 0 writes it atomically)")
    p.add_argument("--model", choices=["hockney", "loggp"], default="loggp",
                   help="which model goes into [model] (default loggp: its estimates chose the measured best more "
                        "often here, docs/planner.md; the other figures go to [network] and [calibration])")
    p.add_argument("--max-size", default="4MiB", help="largest message and local-operation size (default 4MiB)")
    p.add_argument("--reps", type=int_arg("--reps", 3, 100000), help="timed samples per size, over all rounds (default 100; --quick 7)")
    p.add_argument("--quick", action="store_true", help="few sizes and repetitions (seconds, for tests)")
    p.add_argument("--name", help="machine name in the file (default: the file's stem)")
    p.add_argument("--json", action="store_true", help="print the result as JSON instead of the report")
    p.set_defaults(func=cmd_calibrate)


# ------------------------------------------------------------------------------------------------ plan
def _sizes(max_size: int, quick: bool) -> list[int]:
    step = 8 if quick else 2
    out, m = [0], 1
    while m <= max_size:
        out.append(m)
        m *= step
    if out[-1] != max_size:
        out.append(max_size)
    return out


def _local_sizes(max_size: int, quick: bool) -> list[int]:
    """8 B (one double: the cost of a call, reduce_call and copy_call), then 1 KiB .. max_size (the slope)."""
    out, m = [8], 1024
    while m <= max_size:
        out.append(m)
        m *= 16 if quick else 4
    return out


def _batch(estimate_s: float) -> int:
    return max(1, min(1000, math.ceil(MIN_SAMPLE_S / max(estimate_s, 1e-9))))


class Run:
    """The measurements of one calibrate run (every rank holds one; rank 0 keeps the samples)."""

    def __init__(self, MPI, comm, kernels, args):
        self.MPI, self.comm, self.k, self.args = MPI, comm, kernels, args
        self.me, self.P = comm.Get_rank(), comm.Get_size()
        self.h = MPI._handleof(comm)
        self.reps = args.reps or (7 if args.quick else 100)
        self.rounds = 1 if args.quick else min(ROUNDS, self.reps // 3)
        self.per_round = -(-self.reps // self.rounds)
        self.data: dict = {"pingpong": {}, "burst1": {}, "burstn": {}, "burst_count": {}, "o_send": {},
                           "o_recv": {}, "reduce": {}, "copy": {}, "streams": {}, "stream_count": {},
                           "reduce_busy": {}, "host_ranks": 0, "hosts": 1}
        self.t0 = time.monotonic()

    def progress(self, text: str) -> None:
        if self.me == 0:
            print(f"calibrate [{time.monotonic() - self.t0:5.1f} s] {text}", file=sys.stderr, flush=True)

    def pair(self) -> bool:
        return self.me in (0, 1)

    def warmup(self, max_size: int) -> None:
        """Connections, buffers and caches: untimed ping-pong and bursts at a small and the largest size."""
        if self.pair():
            for m, n in ((8, 2000), (max_size, 20)):
                self.k.pingpong(self.h, 1 - self.me, m, 1, n, 0)
                self.k.burst(self.h, 1 - self.me, m, 8, 1, 1, 1)
        self.comm.Barrier()

    def pingpong(self, sizes) -> None:
        batch = {}
        for m in sizes:
            est = None
            if self.pair():
                probe = self.k.pingpong(self.h, 1 - self.me, m, 3, 1, 2)
                est = min(probe) if probe else None
            batch[m] = _batch(self.comm.bcast(est, root=0))
        for rnd in range(self.rounds):
            for m in sizes:
                if self.pair():
                    s = self.k.pingpong(self.h, 1 - self.me, m, self.per_round, batch[m], 3)
                    if self.me == 0:
                        self.data["pingpong"].setdefault(m, []).extend(t / 2 for t in s)  # one way
                self.comm.Barrier()
            self.progress(f"ping-pong round {rnd + 1}/{self.rounds}: {len(sizes)} sizes "
                          f"{format_bytes(sizes[0])}..{format_bytes(sizes[-1])}")

    def bursts(self, sizes) -> None:
        for rnd in range(self.rounds):
            for m in sizes:
                n = max(4, min(64, BURST_BYTES // max(m, 1)))
                if self.pair():
                    one = self.k.burst(self.h, 1 - self.me, m, 1, self.per_round, 1, 2)
                    many = self.k.burst(self.h, 1 - self.me, m, n, self.per_round, 1, 1)
                    if self.me == 0:
                        self.data["burst1"].setdefault(m, []).extend(one)
                        self.data["burstn"].setdefault(m, []).extend(many)
                        self.data["burst_count"][m] = n
                self.comm.Barrier()
            self.progress(f"bursts round {rnd + 1}/{self.rounds}: {len(sizes)} sizes "
                          f"{format_bytes(sizes[0])}..{format_bytes(sizes[-1])} ({BURST_BYTES >> 20} MiB or 64 "
                          "messages per burst, at least 4)")

    def overheads(self, sizes) -> None:
        for m in sizes:
            delay = None
            if self.me == 0:
                med = lambda s: cal.summarize(self.data["pingpong"][s])["median"]  # noqa: E731
                delay = 2 * med(0) + 4 * med(m) + 5e-6  # the message has surely arrived when the receive starts
            delay = self.comm.bcast(delay, root=0)
            if self.pair():
                snd, rcv = self.k.overhead(self.h, 1 - self.me, m, delay, self.reps, 5)
                if self.me == 0:
                    self.data["o_send"][m], self.data["o_recv"][m] = snd, rcv
            self.comm.Barrier()
        self.progress(f"overheads at {len(sizes)} sizes (up to {format_bytes(max(sizes))})")

    def local(self, sizes) -> None:
        for name, kernel in (("reduce", self.k.reduce_local), ("copy", self.k.copy)):
            for m in sizes:
                est = min(kernel(m, 3, 1, 1))
                self.comm.Barrier()  # every rank works at once, as in a collective
                s = kernel(m, self.reps, _batch(est), 2)
                if self.me == 0:
                    self.data[name][m] = s
            self.progress(f"{'MPI_Reduce_local (double, sum)' if name == 'reduce' else 'memmove'} at "
                          f"{len(sizes)} sizes")

    def host(self, max_size: int) -> None:
        """The ranks on rank 0's host (n of them): k pairs (i, n/2 + i), i < k, exchange `count` messages each way at
        once, k = 1 .. n/2 (powers of two and n/2 beyond 16 pairs), at 64 KiB and 1 MiB (at most --max-size); then
        MPI_Reduce_local on k ranks at once, k = 1, n/4, n/2, n. Rank 0 keeps, per size and k, the bytes per second
        the host moved (2 k count m over the slowest pair's median time) and, per k, the reduction's seconds per
        byte (the slowest rank's median)."""
        MPI = self.MPI
        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.me)
        try:
            hosts = self.comm.gather(node.Get_size() if node.Get_rank() == 0 else 0, root=0)
            mine = node.allreduce(1 if self.me == 0 else 0, op=MPI.SUM) > 0  # rank 0's host
            n, lr, h = node.Get_size(), node.Get_rank(), MPI._handleof(node)
            if self.me == 0:
                self.data["host_ranks"], self.data["hosts"] = n, sum(1 for x in hosts if x)
            half = n // 2
            ks = list(range(1, half + 1)) if half <= 16 else sorted({1 << i for i in range(half.bit_length())} | {half})
            samples = 2 if self.args.quick else 5
            sizes = sorted({min(m, max_size) for m in ((1 << 20,) if self.args.quick else (64 << 10, 1 << 20))})
            if mine and half >= 1:
                for m in sizes:
                    count = max(2, min(16, BURST_BYTES // max(m, 1)))
                    for k in ks:
                        node.Barrier()
                        peer = lr + half if lr < k else lr - half if half <= lr < half + k else -1
                        t = self.k.exchange(h, peer, m, count, samples, 1, 1) if peer >= 0 else []
                        worst = node.reduce(cal.summarize(t)["median"] if t else 0.0, op=MPI.MAX, root=0)
                        if self.me == 0:
                            self.data["streams"].setdefault(m, {})[k] = 2 * k * count * m / worst
                            self.data["stream_count"][m] = count
                big = min(max_size, 4 << 20)
                for k in sorted({1, max(1, n // 4), max(1, half), n}):
                    node.Barrier()
                    t = self.k.reduce_local(big, samples, 1, 1) if lr < k else []
                    worst = node.reduce(cal.summarize(t)["median"] if t else 0.0, op=MPI.MAX, root=0)
                    if self.me == 0:
                        self.data["reduce_busy"][k] = worst / big
        finally:
            node.Free()
        self.comm.Barrier()
        self.progress(f"host: k pairs exchanging at once, k = 1..{max(1, self.data['host_ranks'] // 2)}; "
                      "MPI_Reduce_local on k ranks at once")

    def barrier(self) -> None:
        self.data["barrier"] = self.k.barrier(self.h, self.reps, 10, 10)
        self.data["timer"] = self.k.timer(self.reps, 1000)
        self.progress("MPI_Barrier and clock")


def _refine(data: dict, sizes: list[int]) -> list[int]:
    """Sizes between the two sizes around the coarse breakpoint (geometric), to place it more precisely."""
    xs = sorted(data)
    pw = cal.fit_piecewise(xs, [cal.summarize(data[m])["median"] for m in xs])
    if pw is None:
        return []
    lo, hi = int(pw.eager_bytes), int(pw.next_bytes)
    if hi - lo < 2:
        return []
    k = 6
    out = sorted({int(round(lo * (hi / max(lo, 1)) ** (j / (k + 1)))) for j in range(1, k + 1)} - set(sizes))
    return [m for m in out if lo < m < hi]


def measure(MPI, comm, kernels, args, max_size: int) -> Run:
    run = Run(MPI, comm, kernels, args)
    sizes = _sizes(max_size, args.quick)
    run.progress(f"P={run.P}, ranks 0 and 1 measure; {len(sizes)} sizes 0..{format_bytes(max_size)}, "
                 f"{run.reps} samples each")
    run.warmup(max_size)
    run.pingpong(sizes)
    extra = comm.bcast(_refine(run.data["pingpong"], sizes) if run.me == 0 else None, root=0)
    if extra:
        run.progress(f"refining the breakpoint: {len(extra)} more sizes "
                     f"{format_bytes(extra[0])}..{format_bytes(extra[-1])}")
        run.pingpong(extra)
    run.coarse = sizes
    eager = comm.bcast(_eager(run) if run.me == 0 else None, root=0)
    run.bursts([m for m in sizes if m > 0])
    osizes = [m for m in sizes if m <= (eager if eager is not None else 4096)]
    run.overheads(osizes[:: 2 if len(osizes) > 8 else 1])
    run.local(_local_sizes(max_size, args.quick))
    run.host(max_size)
    run.barrier()
    return run


def _eager(run: Run):
    xs = sorted(run.data["pingpong"])
    pw = cal.fit_piecewise(xs, [cal.summarize(run.data["pingpong"][m])["median"] for m in xs]) if len(xs) >= 6 else None
    return int(pw.eager_bytes) if pw else None


# ------------------------------------------------------------------------------------------------ command
def _fit_and_write(run: Run, args, library: str, load_before: list) -> dict:
    """Rank 0: the fits, checked (a fit its own residuals call wrong is neither written nor reported), and the
    machine file."""
    result = cal.build(run.data, run.coarse, run.P, library, cmpi._state.get("abi", ""), run.reps, args.quick,
                       host=socket.gethostname(),
                       date=datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                       elapsed_s=time.monotonic() - run.t0)
    result.update(loadavg_before=load_before, loadavg_after=list(os.getloadavg()), cpus=os.cpu_count())
    cal.check_fit(result, args.model)
    if args.out:
        text = cal.machine_toml(result, args.model, args.name or Path(args.out).stem)
        cal.check_machine_text(text, args.out)  # nothing is written unless load_machine would accept it
        atomic_write(args.out, text)
        result["out"] = args.out
    return result


def cmd_calibrate(args) -> int:
    max_size = parse_size(args.max_size)
    if not 1024 <= max_size <= 1 << 30:
        raise CollplanError(f"--max-size {args.max_size} is invalid (allowed: 1KiB..1GiB)")
    MPI, module = backend_as_programs_run()
    comm = MPI.COMM_WORLD
    if comm.Get_size() < 2:
        raise CollplanError(f"calibrate needs at least 2 ranks (got P={comm.Get_size()}); run it as "
                            "`mpirun -n 2 collplan calibrate --out FILE`")
    load_before = list(os.getloadavg())
    run = measure(MPI, comm, module.calibrate, args, max_size)
    library = cmpi.library_version(MPI).split(",")[0]
    result, error = None, None
    if run.me == 0:  # rank 0 fits and writes; every rank fails with its error (one line, nobody left waiting)
        try:
            result = _fit_and_write(run, args, library, load_before)
        except CollplanError as e:
            error = str(e)
    error = comm.bcast(error, root=0)
    if error is not None:
        raise CollplanError(error)
    if run.me != 0:
        return 0
    if args.json:
        print(json.dumps(result, indent=1, default=lambda o: o.as_dict()))
    else:
        print(cal.report_text(result, args.model))
    return 0
