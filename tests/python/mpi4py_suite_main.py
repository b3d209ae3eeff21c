"""One rank of mpi4py's own test suite (its sdist's test/main.py), as test_mpi4py_suite.py launches it:

    mpirun -n P env LD_PRELOAD=... python mpi4py_suite_main.py TESTDIR LOGDIR [main.py arguments: -v MODULE ...]

What it adds to mpi4py's runner (no test of mpi4py's is changed or copied):
  - each rank writes everything -- unittest's report, Python tracebacks, the library's own stderr (collplan's
    messages, rank 0's `collplan-stats` lines) -- to LOGDIR/rank<R>.log (file descriptors 1 and 2), so the
    reports of the ranks do not interleave and a crash or a hang shows which test each rank was in (-v prints a
    test's name before it runs);
  - faulthandler: a crash prints the Python stack; MPI4PY_SUITE_DUMP_AFTER=<s> prints every thread's stack once
    after s seconds (set a little below the launch's timeout: where a hung rank waits);
  - arrayimpl's buffer backends are cut down to those named by MPI4PY_SUITE_BACKENDS (comma-separated class
    names; default ArrayNumPy). The suite repeats every case for each backend (array, NumPy, DLPack views of
    both, and "fake GPU" views of both): all of them are host memory handed to MPI as the same (pointer, count,
    datatype), so for a PMPI library they are repeats; NumPy alone has every typecode (17 datatypes).
"""
from __future__ import annotations

import faulthandler
import os
import sys


def main(argv: list[str]) -> None:
    testdir, logdir, args = argv[0], argv[1], argv[2:]
    rank = os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ.get("PMI_RANK") or "0"
    fd = os.open(os.path.join(logdir, f"rank{rank}.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)
    faulthandler.enable(all_threads=True)
    dump_after = float(os.environ.get("MPI4PY_SUITE_DUMP_AFTER") or 0)
    if dump_after > 0:
        faulthandler.dump_traceback_later(dump_after, exit=False)

    sys.dont_write_bytecode = True
    sys.path.insert(0, testdir)
    import arrayimpl  # mpi4py's test helper (initialises MPI, as main.py would with its default settings)

    keep = {b for b in (os.environ.get("MPI4PY_SUITE_BACKENDS") or "ArrayNumPy").split(",") if b}
    kept = [b for b in arrayimpl.ArrayBackends if b.__name__ in keep]
    if not kept:
        sys.exit(f"mpi4py_suite_main: none of the backends {sorted(keep)} is among arrayimpl's "
                 f"{[b.__name__ for b in arrayimpl.ArrayBackends]}")
    arrayimpl.ArrayBackends[:] = kept
    print(f"mpi4py_suite_main: rank {rank}: backends {[b.__name__ for b in kept]}", flush=True)

    import main as mpi4py_main  # test/main.py
    sys.argv = [os.path.join(testdir, "main.py"), *args]
    mpi4py_main.main(module=None)  # exits with the result


if __name__ == "__main__":
    main(sys.argv[1:])
