"""An ordinary mpi4py program (no collplan import) of the vector collectives' edges: test_mpi.py runs it with
libcollplan_pmpi.so preloaded. mpi4py hands the MPI library count and displacement arrays that it builds for the
call and frees when the call returns -- legal for a blocking call, and for a non-blocking or persistent one only
where the library keeps what it needs (MPI 4.1 lets the program free nothing it passed, but mpi4py's arrays are
its own): MPI_Iallgatherv into a receive buffer with gaps (displacements j*P, counts 1-2), NumPy and array.array
buffers; MPI_Ialltoallv with gaps; MPI_Allgatherv_init with gaps; MPI_Alltoallv_init in place on MPI_COMM_SELF and
on a duplicate of MPI_COMM_WORLD, each started three times with new data. Prints "pmpi_mpi4py_vector: all checks
passed" (every rank's result against a serial computation)."""
import array

import numpy as np
from mpi4py import MPI

world = MPI.COMM_WORLD
P, me = world.Get_size(), world.Get_rank()
bad = []


def check(name, got, want):
    if list(got) != list(want):
        bad.append(f"{name}: got {list(got)[:8]} want {list(want)[:8]}")


counts = [j % 2 + 1 for j in range(P)]
displs = [j * P for j in range(P)]  # gaps of P - count elements after each block
gapped = [j * 100 + i if i < counts[j] else -1 for j in range(P) for i in range(P)]
for kind in ("numpy", "array"):
    for mode in ("blocking", "nonblocking", "persistent"):
        mine = [me * 100 + i for i in range(counts[me])]
        if kind == "numpy":
            send, recv = np.array(mine, dtype="i"), np.full(P * P, -1, dtype="i")
        else:
            send, recv = array.array("i", mine), array.array("i", [-1] * (P * P))
        spec = (recv, counts, displs, MPI.INT)
        if mode == "blocking":
            world.Allgatherv(send, spec)
        elif mode == "nonblocking":
            world.Iallgatherv(send, spec).Wait()
        else:
            req = world.Allgatherv_init(send, spec)
            for _ in range(3):
                req.Start()
                req.Wait()
            req.Free()
        check(f"allgatherv/{kind}/{mode}", recv, gapped)

# Ialltoallv: rank me sends (j + me) % 2 + 1 ints to rank j, at send displacements j*4, receive displacements i*4.
sc = [(j + me) % 2 + 1 for j in range(P)]
rc = [(me + i) % 2 + 1 for i in range(P)]
send = np.full(4 * P, -5, dtype="i")
for j in range(P):
    send[4 * j:4 * j + sc[j]] = [me * 1000 + j * 10 + k for k in range(sc[j])]
recv = np.full(4 * P, -1, dtype="i")
world.Ialltoallv([send, sc, [4 * j for j in range(P)], MPI.INT], [recv, rc, [4 * i for i in range(P)], MPI.INT]).Wait()
want = [i * 1000 + me * 10 + k if k < rc[i] else -1 for i in range(P) for k in range(4)]
check("ialltoallv/gaps", recv, want)

# Persistent in-place alltoallv: MPI_COMM_SELF (P = 1 in a larger job) and a duplicate of world.
dup = world.Dup()
for comm in (MPI.COMM_SELF, dup):
    n = comm.Get_size()
    buf = np.zeros(3 * n, dtype="i")
    req = comm.Alltoallv_init(MPI.IN_PLACE, [buf, [3] * n, [3 * i for i in range(n)], MPI.INT])
    r = comm.Get_rank()
    for step in range(3):
        buf[:] = [r * 100 + j * 10 + step for j in range(n) for _ in range(3)]
        req.Start()
        req.Wait()
        check(f"alltoallv_init/in-place/P={n}/step{step}", buf, [i * 100 + r * 10 + step for i in range(n) for _ in range(3)])
    req.Free()
dup.Free()

failed = world.allreduce(len(bad), op=MPI.SUM)
if failed == 0:
    if me == 0:
        print("pmpi_mpi4py_vector: all checks passed", flush=True)
else:
    for b in bad:
        print(f"pmpi_mpi4py_vector: rank {me}: {b}", flush=True)
    raise SystemExit(1)
