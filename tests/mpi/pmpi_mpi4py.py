"""An ordinary mpi4py program (no collplan import): test_mpi.py runs it with libcollplan_pmpi.so in LD_PRELOAD and
checks from COLLPLAN_VERBOSE's log that collplan ran the collectives. Prints "pmpi_mpi4py: all checks passed"."""
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
P, me = comm.Get_size(), comm.Get_rank()
bad = []

x = np.arange(1001, dtype=np.float64) + 10 * (me + 1)
y = np.empty_like(x)
comm.Allreduce(x, y, op=MPI.SUM)
if not np.array_equal(y, P * np.arange(1001.0) + 10 * P * (P + 1) / 2):
    bad.append("Allreduce")

block = np.full(13, me, dtype=np.int32)
out = np.empty(13 * P, dtype=np.int32)
comm.Allgather(block, out)
if not np.array_equal(out, np.repeat(np.arange(P, dtype=np.int32), 13)):
    bad.append("Allgather")

send = np.array([me * 100 + j for j in range(P) for _ in range(3)], dtype=np.int64)
recv = np.empty_like(send)
comm.Alltoall(send, recv)
if not np.array_equal(recv, np.array([r * 100 + me for r in range(P) for _ in range(3)], dtype=np.int64)):
    bad.append("Alltoall")

comm.Barrier()
if comm.allreduce(len(bad), op=MPI.SUM) == 0:
    if me == 0:
        print("pmpi_mpi4py: all checks passed", flush=True)
else:
    print(f"pmpi_mpi4py: rank {me}: wrong: {', '.join(bad) or 'another rank'}", flush=True)
    raise SystemExit(1)
