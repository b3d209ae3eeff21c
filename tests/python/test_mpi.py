"""The MPI runtime from Python, under both MPIs: the Python API (tests/mpi/mpi4py_api.py), its blocking calls'
request cache (mpi_blocking_cache.py), `collplan run`, and the PMPI library preloaded into an unmodified mpi4py
program. Every mpirun has a timeout: a hang fails the test.
(The C++ executor tests and the C program under the PMPI library run in ctest: cmake/mpi_runtime.cmake.)"""
from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import collplan
import mpi_launch
from collplan import mpi as cmpi

ROOT = Path(__file__).resolve().parents[2]
ABIS = ["openmpi", "mpich"]
TIMEOUT_S = 150


SITE = "debian_openmpi"  # Debian's Open MPI 4.1, which make test builds the package for too (the Makefile)


def _installation(name: str) -> dict:
    built = cmpi.installations()
    if name not in built:
        pytest.fail(f"collplan was built without the {name} runtime (make test builds it); built: {list(built)}")
    return built[name]


def mpirun(abi: str, n: int, args: list[str], env: dict | None = None,
           timeout: int = TIMEOUT_S) -> subprocess.CompletedProcess:
    info = _installation(abi)
    cmd = [info["mpiexec"], "-n", str(n)]
    if info["family"] == "openmpi":
        cmd.append("--oversubscribe")
        if info["version"].startswith("Open MPI 4."):  # its shared-memory transport is vader (Open MPI 5: sm)
            env = {"OMPI_MCA_btl": "self,vader", "OMPI_MCA_pml": "ob1", **(env or {})}
    full_env = {k: v for k, v in os.environ.items()  # the launcher decides (or env's COLLPLAN_MPI)
                if k not in ("MPI4PY_LIBMPI", "MPI4PY_MPIABI", "COLLPLAN_MPI")}
    full_env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                    OMPI_MCA_rmaps_base_oversubscribe="1", **(env or {}))
    try:
        return mpi_launch.run(cmd + args, timeout=timeout, env=full_env, cwd=ROOT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(cmd + args)} hung for {timeout} s\n{e.stdout}\n{e.stderr}")


def test_launch_is_repeated_only_when_the_launcher_failed_at_start_up(tmp_path):
    count = tmp_path / "launches"
    flaky = ("echo x >> launches; [ $(wc -l < launches) -ge 2 ] && { echo ran; exit 0; }; "
             "echo \"The PMIx server's listener thread failed to start. We cannot\" >&2; exit 213")
    r = mpi_launch.run(["sh", "-c", flaky], cwd=tmp_path, timeout=30)
    assert (r.returncode, r.stdout, count.read_text().count("x")) == (0, "ran\n", 2)
    count.unlink()
    always = "echo x >> launches; echo \"The PMIx server's listener thread failed to start.\" >&2; exit 213"
    r = mpi_launch.run(["sh", "-c", always], cwd=tmp_path, timeout=30)
    assert r.returncode == 213 and count.read_text().count("x") == 1 + mpi_launch.RETRIES
    count.unlink()
    r = mpi_launch.run(["sh", "-c", "echo x >> launches; echo 'rank 1: FAIL' >&2; exit 1"], cwd=tmp_path, timeout=30)
    assert r.returncode == 1 and count.read_text().count("x") == 1  # the program's own failure: reported at once


def test_entry_points_come_from_the_collective_table():
    """Every collective of _core.collectives() has its blocking call, i<name> and <name>_init, real functions with
    the signature its shape gives (the arguments tests/mpi/*.py pass) and a docstring naming its MPI call."""
    shapes = {"allgather": "sendbuf, recvbuf", "alltoall": "sendbuf, recvbuf", "bcast": "buf, root=0",
              "gather": "sendbuf, recvbuf, root=0", "scatter": "sendbuf, recvbuf, root=0",
              "allreduce": "sendbuf, recvbuf, op=None", "reduce": "sendbuf, recvbuf, op=None, root=0",
              "reduce_scatter_block": "sendbuf, recvbuf, op=None", "reduce_scatter": "sendbuf, recvbuf, recvcounts, op=None",
              "allgatherv": "sendbuf, recvbuf, recvcounts, displs=None",
              "alltoallv": "sendbuf, sendcounts, recvbuf, recvcounts", "barrier": ""}
    assert sorted(shapes) == sorted(c["name"] for c in collplan._core.collectives())
    for c in collplan._core.collectives():
        for fn in (c["name"], "i" + c["name"], c["name"] + "_init"):
            f = getattr(cmpi, fn)
            params = str(inspect.signature(f)).replace("'", "")
            head = "(comm, " + (shapes[c["name"]] + ", " if shapes[c["name"]] else "") + "algorithm: str | None = None, *, "
            kwonly = "sdispls=None, rdispls=None, " if c["name"] == "alltoallv" else ""
            assert params.startswith(head + kwonly + "mode: str = auto, wisdom: str | None = None, **params)"), (fn, params)
            assert f.__module__ == "collplan.mpi" and c["mpi_name"] in f.__doc__ and "algorithm" in f.__doc__, fn
    assert set(cmpi.DEFAULT_ALGORITHMS) == {c["name"] for c in collplan._core.collectives()} - {"alltoallv"}


@pytest.mark.parametrize("abi", ABIS)
@pytest.mark.parametrize("n", [1, 3, 4])
def test_python_api(abi, n):
    r = mpirun(abi, n, [sys.executable, str(ROOT / "tests" / "mpi" / "mpi4py_api.py")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"mpi4py_api P={n}:" in r.stdout and " 0 failed" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("abi", ABIS)
@pytest.mark.parametrize("n", [2, 5, 6, 7, 8])
def test_rooted_and_vector_collectives(abi, n):
    """bcast, gather, scatter, allgatherv, reduce, reduce_scatter(_block), and alltoallv by DRS_N's protocol
    (algorithm="drs_n": real data, in place, a freed communicator, the refusals of its request forms) alone for the P
    that test_python_api (P = 1, 3, 4, which runs them too) does not cover: P = 1..8 in all."""
    r = mpirun(abi, n, [sys.executable, str(ROOT / "tests" / "mpi" / "mpi4py_collectives.py")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"mpi4py_collectives P={n}:" in r.stdout and " 0 failed" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("abi", ABIS)
@pytest.mark.parametrize("n", [2, 3])
def test_hostile_arguments_are_refused_alike_on_every_rank(abi, n):
    """collplan.mpi refuses outputs that are not writable buffers, blocks that cut elements, counts that are not
    integers, and sizes, roots or algorithms that differ between ranks; a buffer wrong at the root only fails every
    rank with the root's error (before: results lost or cut, and the other ranks waited forever -- a hang fails here
    by the timeout)."""
    r = mpirun(abi, n, [sys.executable, str(ROOT / "tests" / "mpi" / "mpi_hostile.py")], timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"mpi_hostile P={n}:" in r.stdout and " 0 failed" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("abi", ABIS)
@pytest.mark.parametrize("n", [2, 3])
def test_blocking_call_cache(abi, n):
    r = mpirun(abi, n, [sys.executable, str(ROOT / "tests" / "mpi" / "mpi_blocking_cache.py")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"blocking_cache P={n}:" in r.stdout and " 0 failed" in r.stdout, r.stdout + r.stderr
    assert "leaked" not in r.stderr, r.stderr  # the cached requests are freed before the extension module


def _peaks(n: int, argv: list[str]) -> list[int]:
    r = mpirun("openmpi", n, [sys.executable, str(ROOT / "tests/mpi/run_peak.py"), *argv])
    assert r.returncode == 0, r.stdout + r.stderr
    peaks = [int(line.split()[2]) for line in r.stdout.splitlines() if line.startswith("peak ")]
    assert len(peaks) == n, r.stdout
    return peaks


@pytest.mark.parametrize("collective", ["allreduce", "alltoall", "reduce_scatter_block", "allgather", "gather"])
def test_the_memory_guard_bounds_the_real_peak(collective):
    """`run --check-only` over every algorithm at 16 MiB, P = 3: what each rank grows by (its peak resident memory
    less that of the same run at 8 bytes) stays within measure.case_bytes, the estimate the guard refuses sizes by,
    and is not far below it (an estimate 6x too low let `run --sizes 1GiB` reach the OOM killer: the buffers of
    every algorithm were held to the end)."""
    from collplan.measure import case_bytes
    size, P = 16 << 20, 3
    argv = ["run", "--collective", collective, "--check-only", "--json", "-", "--sizes"]
    base = max(_peaks(P, argv + ["8"]))
    grown = max(_peaks(P, argv + [str(size)])) - base
    bound = case_bytes(collective, P, size)
    assert 0.35 * bound <= grown <= bound, f"{collective}: grew {grown / 2**20:.0f} MiB, bound {bound / 2**20:.0f} MiB"


@pytest.mark.parametrize("abi", ABIS)
@pytest.mark.parametrize("collective,extra", [
    ("allgather", []), ("alltoall", []), ("allreduce", []), ("allreduce", ["--op", "noncommutative"]), ("barrier", []),
    ("bcast", ["--root", "2"]), ("reduce", ["--root", "1", "--op", "noncommutative"]), ("reduce_scatter_block", []),
    ("reduce_scatter", []), ("allgatherv", []), ("gather", ["--root", "1"]), ("scatter", ["--root", "2"])])
def test_collplan_run(abi, collective, extra):
    r = mpirun(abi, 3, [sys.executable, "-m", "collplan", "run", "--collective", collective, "--algorithm", "all",
                        "--sizes", "0,24,1000", "--iters", "2", "--warmup", "1", "--json", *extra])
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert report["ranks"] == 3 and report["collective"] == collective
    assert ("Open MPI" in report["mpi"]) == (abi == "openmpi")
    assert report["rows"] and all(row["ok"] for row in report["rows"])
    assert all(row["collplan_s"] > 0 and row["native_s"] > 0 for row in report["rows"])
    names = {row["algorithm"] for row in report["rows"]}
    if collective == "allreduce" and extra:  # only the schedules that keep the operand order ran
        assert "allreduce/ring" not in names and "allreduce/recursive_doubling" in names
    if "--root" in extra:
        assert report["root"] == int(extra[extra.index("--root") + 1])
    if collective in ("bcast", "gather", "scatter", "allgatherv", "reduce_scatter", "reduce_scatter_block", "reduce"):
        assert names == {a["name"] for a in collplan.algorithms(collective)} - {s.split(":")[0] for s in report["skipped"]}
        assert len(report["rows"]) == 3 * len(names)


@pytest.mark.parametrize("abi", ABIS)
def test_collplan_run_table(abi):
    r = mpirun(abi, 2, [sys.executable, "-m", "collplan", "run", "--collective", "allgather", "--algorithm", "ring",
                        "--sizes", "8B,4KiB", "--iters", "3"])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("  allgather/ring")]
    assert len(lines) == 2 and all(ln.endswith("ok") for ln in lines), r.stdout


@pytest.mark.parametrize("abi", ABIS)
def test_collplan_run_measured_parameter(abi):
    """`--param n=measure`: the row names the n the runtime chose (a candidate, the same on every rank)."""
    r = mpirun(abi, 3, [sys.executable, "-m", "collplan", "run", "--collective", "barrier", "--algorithm",
                        "dissemination", "--param", "n=measure", "--iters", "2", "--warmup", "1", "--json"])
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert rows and all(row["ok"] for row in rows)
    assert all(row["params"]["n"] in {"1", "2"} for row in rows), rows  # P = 3: n = 1 .. P - 1


@pytest.mark.parametrize("abi", ABIS)
def test_pmpi_with_mpi4py(abi):
    lib = cmpi.pmpi_library(abi)
    script = str(ROOT / "tests" / "mpi" / "pmpi_mpi4py.py")
    env = {"COLLPLAN_VERBOSE": "1", "COLLPLAN_ALLREDUCE": "rabenseifner", "COLLPLAN_ALLGATHER": "bruck",
           "COLLPLAN_ALLTOALL": "pairwise", "COLLPLAN_BARRIER": "dissemination:n=3"}
    r = mpirun(abi, 3, ["env", f"LD_PRELOAD={lib}", sys.executable, script], env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pmpi_mpi4py: all checks passed" in r.stdout
    # mpi4py calls the MPI-4 large-count functions (MPI_Allreduce_c, ...) where the library has them (MPICH)
    for fn, rest in (("MPI_Allreduce", "P=3 8008B -> allreduce/rabenseifner"), ("MPI_Allgather", "P=3 52B -> allgather/bruck"),
                     ("MPI_Alltoall", "P=3 24B -> alltoall/pairwise"), ("MPI_Barrier", "P=3 0B -> barrier/dissemination")):
        assert re.search(f"^collplan: {fn}(_c)? {re.escape(rest)}(:\\S+)? on full:3$", r.stderr, re.M), r.stderr


@pytest.mark.parametrize("abi", ABIS)
@pytest.mark.parametrize("allgatherv,alltoallv", [("ring", "async"), ("bruck", "linear_permutation")])
def test_pmpi_vector_edges_with_mpi4py(abi, allgatherv, alltoallv):
    """mpi4py's count arrays live only during the call: the library keeps copies for MPI_Iallgatherv (gaps in the
    receive buffer), MPI_Ialltoallv and the persistent vector calls (in place on MPI_COMM_SELF); before, the
    finish read freed arrays (wrong values, truncation) and MPI_Start an uncaught collplan::Error (abort)."""
    lib = cmpi.pmpi_library(abi)
    script = str(ROOT / "tests" / "mpi" / "pmpi_mpi4py_vector.py")
    env = {"COLLPLAN_STATS": "1", "COLLPLAN_ALLGATHERV": allgatherv, "COLLPLAN_ALLTOALLV": alltoallv}
    r = mpirun(abi, 3, ["env", f"LD_PRELOAD={lib}", sys.executable, script], env)
    assert r.returncode == 0 and "pmpi_mpi4py_vector: all checks passed" in r.stdout, r.stdout + r.stderr
    ran = {m.group(1): (int(m.group(2)), int(m.group(3)))
           for m in re.finditer(r"collplan-stats: (MPI_\w+) collplan=(\d+) native=(\d+)", r.stderr)}
    for fn, calls in (("MPI_Iallgatherv", 6), ("MPI_Allgatherv_init", 18), ("MPI_Ialltoallv", 3),
                      ("MPI_Alltoallv_init", 18)):
        assert ran.get(fn) == (calls, 0), (fn, ran, r.stderr)


@pytest.mark.parametrize("abi", ABIS)
def test_pmpi_wisdom_and_fallback(abi, tmp_path):
    wisdom = tmp_path / "wisdom.json"
    wisdom.write_text(json.dumps({"format": "collplan-wisdom/1", "entries": [
        {"collective": "allreduce", "ranks": 3, "max_bytes": 4096, "algorithm": "allreduce/ring"},
        # the call is MPI_SUM and the PMPI library declares no topology: neither of these two may match
        {"collective": "allreduce", "ranks": 3, "op": "max", "algorithm": "allreduce/recursive_doubling"},
        {"collective": "allreduce", "ranks": 3, "topology": "ring:3", "algorithm": "allreduce/ring"},
        {"collective": "allreduce", "ranks": 3, "op": "sum", "algorithm": "native"}]}))
    r = mpirun(abi, 3, ["env", f"LD_PRELOAD={cmpi.pmpi_library(abi)}", sys.executable,
                        str(ROOT / "tests" / "mpi" / "pmpi_mpi4py.py")],
               {"COLLPLAN_VERBOSE": "1", "COLLPLAN_WISDOM": str(wisdom)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^collplan: MPI_Allreduce(_c)? P=3 8008B -> native \(native requested\)$", r.stderr, re.M), r.stderr
    assert re.search(r"^collplan: MPI_Allgather(_c)? P=3 52B -> native \(no algorithm chosen\)$", r.stderr, re.M), r.stderr


@pytest.mark.parametrize("abi", ABIS)
def test_pmpi_with_a_deeply_nested_wisdom_file_warns_and_runs_natively(abi, tmp_path):
    wisdom = tmp_path / "wisdom.json"
    wisdom.write_text("[" * 1000000 + "]" * 1000000)  # crashed every program that read it, before nesting was bounded
    r = mpirun(abi, 2, ["env", f"LD_PRELOAD={cmpi.pmpi_library(abi)}", sys.executable,
                        str(ROOT / "tests" / "mpi" / "pmpi_mpi4py.py")], {"COLLPLAN_WISDOM": str(wisdom)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pmpi_mpi4py: all checks passed" in r.stdout
    assert re.search(r"^collplan: warning: wisdom: .*at most 64 nested.*the MPI library's collectives run instead$",
                     r.stderr, re.M), r.stderr


@pytest.mark.parametrize("abi", ABIS)
def test_pmpi_with_an_endless_wisdom_file_warns_once_per_job(abi):
    r = mpirun(abi, 2, ["env", f"LD_PRELOAD={cmpi.pmpi_library(abi)}", sys.executable,
                        str(ROOT / "tests" / "mpi" / "pmpi_mpi4py.py")], {"COLLPLAN_WISDOM": "/dev/zero"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pmpi_mpi4py: all checks passed" in r.stdout
    warnings = re.findall(r"^collplan: warning: wisdom: file '/dev/zero' is larger than 16 MiB.*$", r.stderr, re.M)
    assert len(warnings) == 1, r.stderr  # rank 0 of MPI_COMM_WORLD only


@pytest.mark.parametrize("abi", ABIS)
def test_pmpi_settings_it_does_not_understand_are_said_once(abi):
    """COLLPLAN_VERBOSE=abc was on; COLLPLAN_NONCONTIG=foo was silently automatic; a parameter given twice in
    COLLPLAN_<COLLECTIVE> silently took the last. Now: one warning line per job, the flag off, and the collective
    with a doubled parameter runs natively with the reason (COLLPLAN_STATS)."""
    env = {"COLLPLAN_VERBOSE": "abc", "COLLPLAN_NONCONTIG": "foo", "COLLPLAN_STATS": "yes",
           "COLLPLAN_ALLREDUCE": "recexch:k=2,k=3"}
    r = mpirun(abi, 2, ["env", f"LD_PRELOAD={cmpi.pmpi_library(abi)}", sys.executable,
                        str(ROOT / "tests" / "mpi" / "pmpi_mpi4py.py")], env)
    assert r.returncode == 0 and "pmpi_mpi4py: all checks passed" in r.stdout, r.stdout + r.stderr
    warnings = re.findall(r"^collplan: warning: .*$", r.stderr, re.M)
    assert warnings == ["collplan: warning: COLLPLAN_VERBOSE=abc is not a flag (allowed: 1, yes, true, on; 0, no, "
                        "false, off), taken as off; COLLPLAN_NONCONTIG=foo is not a mode (allowed: pack, datatype, "
                        "auto), taken as auto"], r.stderr
    assert not re.search(r"^collplan: MPI_", r.stderr, re.M), r.stderr  # verbose is off
    assert re.search(r"^collplan-stats: native \d+ MPI_Allreduce(_c)?: .*parameter k is given twice", r.stderr, re.M), \
        r.stderr  # COLLPLAN_STATS=yes is on


def test_pmpi_command_prints_the_libraries():
    r = subprocess.run([sys.executable, "-m", "collplan", "pmpi"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for abi in ABIS:
        assert any(ln.startswith(abi) and ln.split()[1].endswith("libcollplan_pmpi.so") for ln in r.stdout.splitlines())


def test_site_mpi_runs_collplan_and_its_drop_in_library_for_fortran(tmp_path):
    """The package built against an installed MPI from its compiler wrapper (make install MPICC=/usr/bin/mpicc.openmpi
    MPI_NAME=debian_openmpi, as make test does): collplan run under it, and its drop-in library in a Fortran program."""
    info = _installation(SITE)
    assert info["family"] == "openmpi" and info["version"].startswith("Open MPI 4."), info
    r = mpirun(SITE, 2, [sys.executable, "-m", "collplan", "run", "--collective", "allreduce", "--algorithm",
                         "recursive_doubling", "--sizes", "8,4KiB"], env={"COLLPLAN_MPI": SITE})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Open MPI v4.1" in r.stdout and re.findall(r"allreduce/recursive_doubling .* ok$", r.stdout, re.M), r.stdout
    source = tmp_path / "sum.f90"  # an ordinary Fortran program: use mpi, in place, MPI_Finalize from Fortran
    source.write_text("program sum\n  use mpi\n  implicit none\n  integer :: ierr, me, p, x(3)\n"
                      "  call MPI_Init(ierr)\n  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)\n"
                      "  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)\n  x = me + 1\n"
                      "  call MPI_Allreduce(MPI_IN_PLACE, x, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)\n"
                      "  if (me == 0 .and. all(x == p * (p + 1) / 2)) print '(a)', 'sum: right'\n"
                      "  call MPI_Finalize(ierr)\nend program\n")
    mpifort = Path(info["prefix"]).with_name(Path(info["prefix"]).name.replace("mpicc", "mpifort"))
    subprocess.run([str(mpifort), "-o", str(tmp_path / "sum"), str(source)], check=True, timeout=120)
    lib = cmpi.pmpi_library(SITE)
    r = mpirun(SITE, 3, ["env", f"LD_PRELOAD={lib}", "COLLPLAN_STATS=1", "COLLPLAN_ALLREDUCE=recursive_doubling",
                         str(tmp_path / "sum")])
    assert r.returncode == 0 and "sum: right" in r.stdout, r.stdout + r.stderr
    assert "collplan-stats: MPI_Allreduce collplan=3 native=0" in r.stdout + r.stderr, r.stdout + r.stderr


def test_plan_by_measurement_declines_what_the_runtime_refuses():
    """allreduce --op max: nway_dissemination_plain n=1 is not rank-consistent on the doubles a max is measured with;
    the runtime refuses it alike on every rank, and the measure evaluator declines it (it ended the plan before)."""
    r = mpirun("openmpi", 2, [sys.executable, "-m", "collplan", "plan", "--collective", "allreduce", "--op", "max",
                              "--machine", "ib-qdr", "--evaluator", "measure", "--sizes", "8,64", "--reps", "2",
                              "--target", "100us", "--json", "--no-progress"])
    assert r.returncode == 0, r.stdout + r.stderr
    plan = json.loads(r.stdout)
    refused = [d for d in plan["declined"] if d["algorithm"].startswith("nway_dissemination_plain")]
    assert refused and all("not rank-consistent" in d["reason"] for d in refused), plan["declined"]
    assert all(r["winner"]["label"] for r in plan["ranges"])


def test_version_and_pmpi_name_every_mpi_installation():
    built = cmpi.installations()
    assert set(ABIS) <= set(built) and all(built[a]["family"] == a for a in ABIS), built
    r = subprocess.run([sys.executable, "-m", "collplan", "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for name, info in built.items():  # e.g. "openmpi: Open MPI 5.0.8 (MPI 3.1) (<prefix>); Fortran: ..."
        assert re.search(rf"^  {re.escape(name)}: (Open MPI|MPICH) [0-9.]+ \(MPI [0-9]+\.[0-9]+\) .*Fortran: ", r.stdout,
                         re.M), r.stdout
    r = subprocess.run([sys.executable, "-m", "collplan", "pmpi", "--mpi", "nosuch"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0 and "no collplan MPI runtime for 'nosuch' (built for: " in r.stderr, r.stderr


@pytest.mark.parametrize("abi", ABIS)
def test_plan_by_measurement_writes_wisdom_the_runtime_follows(abi, tmp_path):
    wisdom = tmp_path / "wisdom.json"
    r = mpirun(abi, 2, [sys.executable, "-m", "collplan", "plan", "--collective", "allreduce", "--machine", "ib-qdr",
                        "--evaluator", "measure", "--sizes", "8,4KiB", "--reps", "2", "--target", "200us",
                        "--json", "--wisdom", str(wisdom), "--no-progress"])
    assert r.returncode == 0, r.stdout + r.stderr
    plan = json.loads(r.stdout)
    assert plan["evaluator"] == "measure" and plan["ranks"] == 2
    native = [c for c in plan["candidates"] if c["algorithm"] == "native"]
    assert len(native) == 1 and all(t > 0 for t in native[0]["times_s"])
    measured = [c for c in plan["candidates"] if any(t is not None for t in c["times_s"])]
    assert len(measured) >= 2 and all(len(c["samples_s"][0] or [0, 0]) == 2 for c in measured)
    for rng in plan["ranges"]:  # every range's winner is the fastest measured candidate at its sizes -- or native,
        for n in rng["sizes"]:  # kept when the fastest did not beat it by more than the noise margin
            j = plan["sizes"].index(n)
            best = min(c["times_s"][j] for c in measured if c["times_s"][j] is not None)
            won = rng["winner_s"][rng["sizes"].index(n)]
            assert won == (native[0]["times_s"][j] if rng["winner"]["algorithm"] == "native" else best)
    entries = json.loads(wisdom.read_text())["entries"]
    assert {e["evaluator"] for e in entries} == {"measure"} and all(e["op"] == "sum" for e in entries)
    # the PMPI library follows the measured wisdom
    r = mpirun(abi, 2, ["env", f"LD_PRELOAD={cmpi.pmpi_library(abi)}", sys.executable,
                        str(ROOT / "tests" / "mpi" / "pmpi_mpi4py.py")],
               {"COLLPLAN_VERBOSE": "1", "COLLPLAN_WISDOM": str(wisdom)})
    assert r.returncode == 0, r.stdout + r.stderr
    chosen = next(e for e in entries if e["min_bytes"] <= 8008 < e.get("max_bytes", 1 << 62))["algorithm"]
    want = "native \\(native requested\\)" if chosen == "native" else re.escape(chosen) + r"(:\S+)? on \S+"
    assert re.search(rf"^collplan: MPI_Allreduce(_c)? P=2 8008B -> {want}$", r.stderr, re.M), r.stderr


@pytest.mark.parametrize("abi", ABIS)
def test_plan_by_measurement_of_a_rooted_reduction(abi, tmp_path):
    wisdom = tmp_path / "wisdom.json"
    r = mpirun(abi, 3, [sys.executable, "-m", "collplan", "plan", "--collective", "reduce", "--root", "2", "--machine",
                        "ib-qdr", "--evaluator", "measure", "--sizes", "8,4KiB", "--reps", "2", "--target", "200us",
                        "--json", "--wisdom", str(wisdom), "--no-progress"])
    assert r.returncode == 0, r.stdout + r.stderr
    plan = json.loads(r.stdout)
    assert (plan["collective"], plan["root"], plan["op"], plan["evaluator"]) == ("reduce", 2, "sum", "measure")
    assert any(c["algorithm"] == "native" and all(t > 0 for t in c["times_s"]) for c in plan["candidates"])
    entries = json.loads(wisdom.read_text())["entries"]
    assert entries and all((e["collective"], e["ranks"], e["op"]) == ("reduce", 3, "sum") for e in entries)
    collplan._core.parse_wisdom(wisdom.read_text())


@pytest.mark.parametrize("abi", ABIS)
@pytest.mark.parametrize("level,want", [(None, "THREAD_SINGLE"), ("multiple", "THREAD_MULTIPLE")])
def test_measuring_starts_mpi_as_programs_do(abi, level, want):
    code = ("from collplan.measure import backend_as_programs_run as b; MPI, _ = b(); "
            "print({getattr(MPI, n): n for n in ('THREAD_SINGLE', 'THREAD_FUNNELED', 'THREAD_SERIALIZED', "
            "'THREAD_MULTIPLE')}[MPI.Query_thread()])")
    r = mpirun(abi, 1, [sys.executable, "-c", code], env={"MPI4PY_RC_THREAD_LEVEL": level} if level else None)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == [want], r.stdout + r.stderr
