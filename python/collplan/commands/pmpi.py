"""`collplan pmpi`: where the drop-in PMPI library is, for LD_PRELOAD into unmodified MPI programs.

    mpirun -n 8 env LD_PRELOAD=$(collplan pmpi --mpi mpich) COLLPLAN_ALLREDUCE=rabenseifner ./app

Without --mpi: the MPI that launched this process, else every MPI collplan was built for (one line each:
ABI, library, mpirun).
"""
from __future__ import annotations

from pathlib import Path

from .. import mpi as cmpi


def register(sub) -> None:
    p = sub.add_parser("pmpi", help="print the path of libcollplan_pmpi.so (for LD_PRELOAD)",
                       epilog="example:\n  mpirun -n 4 -x LD_PRELOAD=$(collplan pmpi --mpi openmpi) ./my_app")
    p.add_argument("--mpi", choices=["openmpi", "mpich"], help="which MPI's library (default: all built)")
    p.set_defaults(func=cmd_pmpi)


def cmd_pmpi(args) -> int:
    if args.mpi:
        print(cmpi.pmpi_library(args.mpi))
        return 0
    for abi, home in cmpi.homes().items():
        print(f"{abi:8s} {cmpi.pmpi_library(abi)}  {Path(home) / 'bin' / 'mpirun'}")
    return 0
