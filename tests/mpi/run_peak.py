"""`collplan run ARGS...` in this process, then one line per rank: `peak <rank> <VmHWM bytes>` (the peak resident
memory of the whole run). tests/python/test_mpi.py compares it with measure.case_bytes, the guard's estimate."""
import sys

from collplan.cli import main

rc = main(sys.argv[1:])
from mpi4py import MPI  # noqa: E402  (initialised by the run)

with open("/proc/self/status") as f:
    hwm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
print(f"peak {MPI.COMM_WORLD.Get_rank()} {hwm}", flush=True)
sys.exit(rc)
