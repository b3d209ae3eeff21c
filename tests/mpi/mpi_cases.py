"""What the mpi4py test scripts here share (mpi4py_api.py, mpi_blocking_cache.py; run by path under mpirun, so
this directory is on sys.path): the world communicator and a `case` decorator that runs a check on every rank and
records whether it passed everywhere."""
import sys

from collplan import mpi as cmpi

MPI, _ = cmpi.backend()
comm = MPI.COMM_WORLD
P, me = comm.Get_size(), comm.Get_rank()
results = []  # one bool per case: passed on every rank


def case(name):
    """Runs the decorated check now; it returns a reason (or raises) to fail. Every rank takes part."""
    def deco(fn):
        try:
            why = fn() or ""
        except Exception as e:  # noqa: BLE001 -- a failure of the case, reported below
            why = f"{type(e).__name__}: {e}"
        ok = comm.allreduce(0 if why else 1, op=MPI.MIN)
        if why:
            print(f"FAIL [rank {me}] {name}: {why}", file=sys.stderr, flush=True)
        results.append(bool(ok))
        return fn
    return deco
