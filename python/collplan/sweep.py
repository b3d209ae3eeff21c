"""Sweeps over MPI: a job of independent pieces (the planner's candidates x sizes) started by mpirun on N > 1 ranks
splits them round-robin over the ranks and gathers every result on every rank, in job order, so rank 0 prints
exactly what one process would have (docs/planner.md, "Planning on several cores"). Without a launcher, or with
one rank, it runs every piece here and never starts MPI.

A piece that fails on one rank fails the sweep on every rank with the same error (the first failing piece's, in
job order) after the gather: no rank waits for one that gave up.
"""
from __future__ import annotations

from typing import Callable

from . import mpi as cmpi
from ._core import CollplanError, MemoryLimitError


class Sweep:
    """Which pieces this rank computes, and the gather of everybody's."""

    def __init__(self, comm=None):
        self.comm = comm
        self.rank = comm.Get_rank() if comm is not None else 0
        self.size = comm.Get_size() if comm is not None else 1

    def mine(self, n: int) -> range:
        return range(self.rank, n, self.size)

    def run(self, n: int, piece: Callable[[int], object], step: Callable[[], None] | None = None) -> list:
        """[piece(0), ..., piece(n - 1)], each computed on one rank, on every rank."""
        done: dict[int, object] = {}
        failed: tuple[int, str, str] | None = None
        for i in self.mine(n):
            try:
                done[i] = piece(i)
            except CollplanError as e:  # the same error on every rank, after the gather
                failed = (i, type(e).__name__, str(e))
                break
            if step is not None:
                step()
        if self.comm is None:
            parts = [(done, failed)]
        else:
            parts = self.comm.allgather((done, failed))
        errors = sorted(f for _, f in parts if f is not None)
        if errors:
            _, kind, message = errors[0]
            raise (MemoryLimitError if kind == "MemoryLimitError" else CollplanError)(message)
        merged: dict[int, object] = {}
        for d, _ in parts:
            merged.update(d)
        return [merged[i] for i in range(n)]


def world() -> Sweep:
    """The sweep of this process: every rank mpirun started (MPI initialised through collplan.mpi's choice of
    library), or this process alone."""
    if cmpi.launched_size() < 2:
        return Sweep()
    from .measure import backend_as_programs_run
    MPI, _ = backend_as_programs_run()
    return Sweep(MPI.COMM_WORLD)
