"""Launch an MPI job for a test, again when the launcher itself failed before any rank ran the program.

Open MPI's launcher sometimes dies at start-up on a loaded machine ("The PMIx server's listener thread failed to
start", exit 213: a race in PMIx's listener set-up, reported upstream, e.g. open-mpi/ompi#1986). That is not a
failure of the program under test, and one such launch turned a whole CI run red. A launch is repeated (twice at
most, after a short pause) only when the job failed *and* its output carries one of the launcher's own start-up
failure messages below; every other failure is reported as it happened. tests/conformance/run_conformance.py does
the same for its launches (it tells from the programs' own output whether they started).

Used two ways:
  from mpi_launch import run                      # test_mpi.py: subprocess.run with the retry
  python tests/python/mpi_launch.py mpirun -n 2 prog     # ctest (cmake/mpi_runtime.cmake): output passed through
"""
from __future__ import annotations

import re
import subprocess
import sys
import time

LAUNCHER_FAILED = re.compile(
    r"The PMIx server's listener thread failed to start"
    r"|(?:ORTE|PRTE) was unable to reliably start one or more daemons")
RETRIES = 2


def launcher_failed(returncode: int | None, output: str) -> bool:
    """True when a finished job failed because its launcher did, before the program under test ran."""
    return returncode not in (0, None) and LAUNCHER_FAILED.search(output) is not None


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run(cmd, capture_output=True, text=True, **kwargs), launched again when the launcher failed."""
    for attempt in range(RETRIES + 1):
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kwargs)
        if attempt == RETRIES or not launcher_failed(r.returncode, r.stdout + r.stderr):
            return r
        print(f"mpi_launch: the launcher failed at start-up (exit {r.returncode}); launching again",
              file=sys.stderr, flush=True)
        time.sleep(0.5 * (attempt + 1))
    raise AssertionError("unreachable")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    r = run(argv)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    return r.returncode if r.returncode >= 0 else 128 - r.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
