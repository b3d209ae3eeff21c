"""mpi4py's own collective tests, run with the PMPI library preloaded, under both MPIs.

mpi4py's source distribution (the version installed here, from the package index; downloaded once and kept in
build/mpi4py-suite/, nothing of it is copied into this repository) has a unittest suite, test/, with its runner
test/main.py. This runs its collective modules on intra-communicators

    test_cco_buf  test_cco_nb_buf  test_cco_pr_buf    blocking, non-blocking (MPI_I*), persistent (MPI_*_init)
    test_cco_vec  test_cco_nb_vec  test_cco_pr_vec    the same for the vector collectives (allgatherv, alltoallv)
    test_cco_obj                                      pickled Python objects (bcast, gather, ...: counts and bytes)

each on MPI_COMM_SELF, MPI_COMM_WORLD and duplicates of both, in place and not, with every datatype of the suite
and MPI_SUM/PROD/MAX/MIN (the reductions), under

    mpirun -n P env LD_PRELOAD=libcollplan_pmpi.so COLLPLAN_<COLLECTIVE>=... COLLPLAN_STATS=1 python ...

for P = 1, 2, 3, 4 and both choice sets of tests/conformance/run_conformance.py (NONBLOCKING_SETS: every one of the
twelve collectives set at once), and its inter-communicator modules (test_cco_buf_inter, test_cco_vec_inter,
test_cco_obj_inter: the library must leave those calls to the MPI library) once per set. A run passes when every
rank's unittest run passed, in time (a hang fails, after MPI4PY_SUITE_DUMP_AFTER printed every rank's stack), and,
for the intra-communicator modules, when collplan ran at least MIN_SHARE of the calls of each of the 36 intercepted
functions (12 collectives x blocking, MPI_I*, MPI_*_init; COLLPLAN_STATS, summed over the ranks).

Nothing of the suite is excluded: every chosen module passes natively (no preload) on both wheel MPIs (Open MPI
5.0, MPICH 5.0) at P = 1..6. Its tests of collectives the library does not intercept (Scan, Exscan, Gatherv,
Scatterv, Alltoallw, Reduce_local) stay in: they run between the intercepted ones on the same communicators.
mpi4py_suite_main.py runs one rank: its report and stderr go to build/mpi4py-suite/runs/<run>/rank<R>.log, and it
keeps one of the suite's buffer backends (NumPy: all 17 typecodes; the others repeat each case with the same host
memory, 4x the time).

The sdist comes from the package index pip uses (PIP_INDEX_URL, else pip's configured index-url, else PyPI), by
its "simple" API, checked against the index's sha256. (`pip download --no-binary :all:` would do the same but
first builds the package's metadata, which needs setuptools' bdist_wheel: not in every venv.) Without network the
tests fail with one line saying what to download and where to put it.

COLLPLAN_TEST_PMPI_DIR=<dir> takes the library from <dir>/<mpi>/libcollplan_pmpi.so (e.g. build/cpp/lib) instead
of the installed collplan's.
"""
from __future__ import annotations

import hashlib
import html.parser
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

import mpi_launch

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "mpi4py-suite"
ABIS = ["openmpi", "mpich"]
SONAME = {"openmpi": "libmpi.so.40", "mpich": "libmpi.so.12"}
TIMEOUT_S = 180         # one launch; a run takes 1-6 s on 2 idle cores (10x that on a loaded machine)
DUMP_AFTER_S = 150      # then every rank prints its Python stack (faulthandler): where a hung rank waits
MIN_SHARE = 0.8         # of the calls of each intercepted function, through collplan's schedules
RANKS = [1, 2, 3, 4]
INTRA_MODULES = ["test_cco_buf", "test_cco_nb_buf", "test_cco_pr_buf", "test_cco_vec", "test_cco_nb_vec",
                 "test_cco_pr_vec", "test_cco_obj"]
INTER_MODULES = ["test_cco_buf_inter", "test_cco_vec_inter", "test_cco_obj_inter"]
INTER_RANKS = {"set-a": 4, "set-b": 3}  # groups of 2 + 2 and 1 + 2
# Tests of mpi4py's that fail natively on these MPIs, excluded by name (main.py -x): none (checked at P = 1..6).
EXCLUDE: list[str] = []


def _load_conformance():
    """tests/conformance/run_conformance.py: its choice sets, MPI settings, statistics patterns and launcher."""
    if "run_conformance" in sys.modules:
        return sys.modules["run_conformance"]
    spec = importlib.util.spec_from_file_location(
        "run_conformance", ROOT / "tests" / "conformance" / "run_conformance.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


conf = _load_conformance()
SETS = conf.NONBLOCKING_SETS
TWELVE = [names[0] for _, names in list(conf.COLLECTIVES.values())[:12]]  # MPI_Allgather ... MPI_Scatter
INTERCEPTED = [n for base in TWELVE for n in (base, "MPI_I" + base[4].lower() + base[5:], base + "_init")]


# ---- mpi4py's test suite ---------------------------------------------------------------------------------------
class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links += [v for k, v in attrs if k == "href" and v]


def _index_url() -> str:
    url = os.environ.get("PIP_INDEX_URL")
    if not url:
        for key in ("global.index-url", "download.index-url"):
            r = subprocess.run([sys.executable, "-m", "pip", "config", "get", key], capture_output=True, text=True)
            if r.returncode == 0 and r.stdout.strip():
                url = r.stdout.strip()
                break
    return (url or "https://pypi.org/simple").rstrip("/") + "/"


def _sdist_url(index: str, filename: str) -> tuple[str, str | None]:
    """(URL, sha256 or None) of `filename` on the index's project page of mpi4py (PEP 691 JSON or PEP 503 HTML)."""
    page = urllib.parse.urljoin(index, "mpi4py/")
    req = urllib.request.Request(page, headers={
        "Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1", "User-Agent": "collplan-tests"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        body = resp.read()
        kind = resp.headers.get("Content-Type", "")
    if "json" in kind:
        for f in json.loads(body)["files"]:
            if f["filename"] == filename:
                return urllib.parse.urljoin(page, f["url"]), f.get("hashes", {}).get("sha256")
    else:
        links = _Links()
        links.feed(body.decode("utf-8", "replace"))
        for link in links.links:
            url, _, frag = link.partition("#")
            if url.rsplit("/", 1)[-1] == filename:
                return urllib.parse.urljoin(page, url), frag[7:] if frag.startswith("sha256=") else None
    raise LookupError(f"{page} lists no {filename}")


def _download(path: Path, version: str) -> None:
    index = _index_url()
    reason = ""
    try:
        url, sha256 = _sdist_url(index, path.name)
        with urllib.request.urlopen(urllib.request.Request(url, headers={"User-Agent": "collplan-tests"}),
                                    timeout=120) as resp:
            data = resp.read()
        if sha256 and hashlib.sha256(data).hexdigest() != sha256:
            raise ValueError(f"sha256 of {url} is not the index's {sha256}")
    except Exception as e:  # noqa: BLE001 -- any failure: one line that says what to do
        reason = " ".join(f"{type(e).__name__}: {e}".split())
    if reason:
        pytest.fail(f"mpi4py's test suite: cannot download {path.name} (mpi4py {version}'s sdist) from {index} "
                    f"({reason}); put that file at {path} (e.g. from a machine with network access)", pytrace=False)
    tmp = path.with_name(path.name + f".{os.getpid()}.part")
    tmp.write_bytes(data)
    tmp.replace(path)


@pytest.fixture(scope="session")
def mpi4py_testdir() -> Path:
    """mpi4py's test/ directory for the installed mpi4py, from its sdist (downloaded once into build/)."""
    version = importlib.metadata.version("mpi4py")
    testdir = CACHE / f"mpi4py-{version}" / "test"
    if (testdir / "main.py").exists():
        return testdir
    CACHE.mkdir(parents=True, exist_ok=True)
    sdist = CACHE / f"mpi4py-{version}.tar.gz"
    if not sdist.exists():
        _download(sdist, version)
    tmp = CACHE / f"extract.{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    prefix = f"mpi4py-{version}/test/"
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix) and (m.isfile() or m.isdir())]
        if not any(m.name == prefix + "main.py" for m in members):
            pytest.fail(f"{sdist} has no {prefix}main.py: not mpi4py's sdist? (delete it to download it again)",
                        pytrace=False)
        tar.extractall(tmp, members=members, filter="data")
    target = CACHE / f"mpi4py-{version}"
    shutil.rmtree(target, ignore_errors=True)
    (tmp / f"mpi4py-{version}").replace(target)
    shutil.rmtree(tmp, ignore_errors=True)
    return testdir


# ---- the MPI and the library -----------------------------------------------------------------------------------
def _mpi_home(abi: str) -> Path:
    try:
        from collplan import mpi as cmpi
        homes = {name: info["prefix"] for name, info in cmpi.installations().items()}
    except ImportError:  # collplan not installed: the MPIs of this checkout (make mpi)
        homes = {a: str(ROOT / ".mpi" / a) for a in ABIS if (ROOT / ".mpi" / a / "bin" / "mpirun").exists()}
    if abi not in homes:
        pytest.fail(f"no {abi} runtime (collplan built for {sorted(homes)}; make install builds both)", pytrace=False)
    return Path(homes[abi])


def _pmpi_library(abi: str) -> str:
    override = os.environ.get("COLLPLAN_TEST_PMPI_DIR")
    if override:
        path = Path(override).resolve() / abi / "libcollplan_pmpi.so"
        if not path.exists():
            pytest.fail(f"COLLPLAN_TEST_PMPI_DIR: {path} does not exist", pytrace=False)
        return str(path)
    from collplan import mpi as cmpi
    return cmpi.pmpi_library(abi)


# ---- one run and what it says ----------------------------------------------------------------------------------
TEST_START = re.compile(r"(\w+) \(((?:\w+\.)+\w+)\) \.\.\. ")  # unittest -v, before a test runs
RESULT = re.compile(r"^(ERROR|FAIL): \w+ \(((?:\w+\.)+\w+)\)(.*)$", re.M)  # (.*): a subtest's parameters
RAN = re.compile(r"^Ran (\d+) tests? in [0-9.]+s$", re.M)
VERDICT = re.compile(r"^(OK|FAILED)\b.*$", re.M)
FATAL = re.compile(r"Fatal Python error: (.*)")
TEST_FRAME = re.compile(r'File "[^"]*/(test_\w+\.py)", line (\d+) in (\w+)')
COLLPLAN_MSG = re.compile(r"(collplan: .*)")


def _ranges(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ",".join(map(str, ranks))


def _rank_report(text: str) -> dict:
    """What one rank's log says: tests run, verdict, failed tests with their last traceback line, the test it
    was in when it stopped (no verdict), a crash or stack dump, and collplan's own messages."""
    rep: dict = {"ran": None, "verdict": None, "failed": [], "current": None, "fatal": None, "where": None,
                 "collplan": [], "modules": set()}
    for m in TEST_START.finditer(text):
        rep["modules"].add(m.group(2).split(".")[0])
        rep["current"] = m.group(2)
    if m := RAN.search(text):
        rep["ran"] = int(m.group(1))
    if m := VERDICT.search(text, RAN.search(text).end() if rep["ran"] is not None else len(text)):
        rep["verdict"] = m.group(0).strip()
    for m in RESULT.finditer(text):  # header, a line of dashes, the traceback, then a line of '=' or '-'
        body = []
        for ln in text[m.end():].splitlines()[2:]:
            if len(ln) >= 20 and set(ln) <= {"=", "-"}:
                break
            if ln.strip():
                body.append(ln.strip())
        rep["failed"].append((m.group(1), m.group(2) + m.group(3).rstrip(), body[-1] if body else "?"))
    if m := FATAL.search(text):
        rep["fatal"] = m.group(1).strip()
    dump = text.find("Timeout (")  # faulthandler's stacks after MPI4PY_SUITE_DUMP_AFTER seconds
    if rep["fatal"] or dump >= 0:
        frame = TEST_FRAME.search(text, FATAL.search(text).end() if rep["fatal"] else dump)
        if frame:
            rep["where"] = f"{frame.group(1)}:{frame.group(2)} in {frame.group(3)}"
    for m in COLLPLAN_MSG.finditer(text):
        if not m.group(1).startswith("collplan-stats"):
            rep["collplan"].append(m.group(1).strip())
    return rep


def _stats(text: str) -> tuple[dict[str, tuple[int, int]], dict[str, int]]:
    calls = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in conf.STATS_CALLS.finditer(text)}
    reasons: dict[str, int] = {}
    for line in text.splitlines():
        if m := conf.STATS_REASON.search(line):
            key = f"{m.group(2)}: {m.group(3).strip()}"
            reasons[key] = reasons.get(key, 0) + int(m.group(1))
    return calls, reasons


def _run_suite(abi: str, set_name: str, ranks: int, modules: list[str], testdir: Path, logdir: Path):
    home = _mpi_home(abi)
    lib = _pmpi_library(abi)
    shutil.rmtree(logdir, ignore_errors=True)
    logdir.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("COLLPLAN_") and k not in ("MPI4PY_LIBMPI", "MPI4PY_MPIABI", "LD_PRELOAD")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1",
               PYTHONDONTWRITEBYTECODE="1")
    for k, v in conf.MPI_TUNING.get(abi, {}).items():
        env.setdefault(k, v)
    choices = {**SETS[set_name], "COLLPLAN_STATS": "1"}
    cmd = [str(home / "bin" / "mpirun"), "-n", str(ranks)] + (["--oversubscribe"] if abi == "openmpi" else [])
    cmd += ["env", f"LD_PRELOAD={lib}", f"MPI4PY_LIBMPI={home / 'lib' / SONAME[abi]}",
            f"MPI4PY_SUITE_DUMP_AFTER={DUMP_AFTER_S}", *(f"{k}={v}" for k, v in choices.items()),
            sys.executable, str(Path(__file__).with_name("mpi4py_suite_main.py")), str(testdir), str(logdir),
            "-v", *(a for x in EXCLUDE for a in ("-x", x)), *modules]
    (logdir / "command.txt").write_text(" ".join(cmd) + "\n")
    for attempt in range(mpi_launch.RETRIES + 1):
        rc, out, seconds = conf.execute(cmd, env, TIMEOUT_S)
        if attempt == mpi_launch.RETRIES or not mpi_launch.launcher_failed(rc, out) or any(logdir.glob("rank*.log")):
            break
        time.sleep(0.5 * (attempt + 1))
    (logdir / "mpirun.log").write_text(out)
    logs = {r: (logdir / f"rank{r}.log").read_text(errors="replace") if (logdir / f"rank{r}.log").exists() else ""
            for r in range(ranks)}
    return rc, out, seconds, logs


def _verdict(abi, set_name, ranks, modules, rc, out, seconds, logs, logdir, inter: bool) -> list[str]:
    """The problems of one run, one line each (empty: it passed)."""
    problems: list[str] = []
    reps = {r: _rank_report(t) for r, t in logs.items()}
    if rc is None:
        problems.append(f"TIMEOUT: no end after {TIMEOUT_S} s (killed)")
    elif rc != 0:
        sig = f" (signal {rc - 128 if rc > 128 else -rc})" if rc > 128 or rc < 0 else ""
        problems.append(f"mpirun exit {rc}{sig} after {seconds:.1f} s")
    failed: dict[tuple[str, str, str], list[int]] = {}
    for r, rep in reps.items():
        for item in rep["failed"]:
            failed.setdefault(item, []).append(r)
    for (kind, test, symptom), rs in sorted(failed.items()):
        problems.append(f"{kind} {test} ({_ranges(rs)}): {symptom}")
    stopped: dict[str, list[int]] = {}
    for r, rep in reps.items():
        if not logs[r]:
            stopped.setdefault("no output (did not start)", []).append(r)
        elif rep["ran"] is None:
            what = f"stopped in {rep['current'] or 'start-up'}"
            if rep["fatal"]:
                what = f"crashed ({rep['fatal']}) in {rep['current']}"
            if rep["where"] and rep["fatal"]:
                what += f" at {rep['where']}"
            elif rep["where"] and rc is None:  # the stacks dumped before the timeout
                what += f"; its stack after {DUMP_AFTER_S} s: {rep['where']}"
            stopped.setdefault(what, []).append(r)
    for what, rs in stopped.items():
        problems.append(f"{_ranges(rs)}: {what}")
    if rc is None and not stopped:
        problems.append("every rank had finished its tests: the job stopped in MPI_Finalize or at exit")
    ran = {rep["ran"] for rep in reps.values() if rep["ran"] is not None}
    if len(ran) > 1:
        problems.append(f"the ranks ran different numbers of tests: {sorted(ran)}")
    for r, rep in reps.items():
        if rep["ran"] is not None and not rep["verdict"]:
            problems.append(f"rank {r}: no verdict after 'Ran {rep['ran']} tests'")
        elif rep["verdict"] and not rep["verdict"].startswith("OK") and not rep["failed"]:
            problems.append(f"rank {r}: {rep['verdict']}")
        if rep["ran"] is not None and not set(modules) <= rep["modules"]:
            problems.append(f"rank {r}: ran no test of {sorted(set(modules) - rep['modules'])}")
    msgs: dict[str, list[int]] = {}
    for r, rep in reps.items():
        for msg in rep["collplan"]:
            msgs.setdefault(re.sub(r"\d{6,}", "N", msg), []).append(r)
    calls, reasons = _stats(logs.get(0, ""))
    if not problems:
        if not calls and not reasons:
            problems.append("no collplan-stats lines from rank 0: was the library preloaded?")
        elif inter:
            other = {k: n for k, n in reasons.items() if "inter-communicator" not in k}
            if other:
                problems.append(f"native for reasons other than the inter-communicator: {other}")
        else:
            for name in INTERCEPTED:
                c, n = calls.get(name, (0, 0))
                if c + n == 0:
                    problems.append(f"{name}: no call counted (the suite calls it)")
                elif c < MIN_SHARE * (c + n):
                    problems.append(f"{name}: collplan ran {c} of {c + n} calls ({100 * c / (c + n):.0f} %, "
                                    f"minimum {100 * MIN_SHARE:.0f} %)")
    total_c = sum(c for c, _ in calls.values())
    total_n = sum(n for _, n in calls.values())
    summary = [f"{abi} {set_name} P={ranks} {'inter ' if inter else ''}{seconds:.1f} s, exit {rc}; "
               f"tests per rank {sorted(ran) or '-'}; collplan ran {total_c} of {total_c + total_n} intercepted calls",
               *(f"  {name}: collplan={c} native={n}" for name, (c, n) in calls.items()),
               *(f"  native {n} {k}" for k, n in reasons.items())]
    (logdir / "summary.txt").write_text("\n".join(summary + ["problems:"] + problems) + "\n")
    if problems:
        problems += [f"collplan said ({_ranges(rs)}): {m}" for m, rs in list(msgs.items())[:8]]
        if rc is not None and rc != 0 and not any(logs.values()):
            problems.append("mpirun: " + " | ".join(out.strip().splitlines()[-5:]))
        problems.append(f"native reasons (rank 0): {reasons or 'none'}")
        problems.append(f"logs: {logdir}")
    return problems


CASES = [(abi, s, p) for abi in ABIS for s in SETS for p in RANKS]


@pytest.mark.parametrize("abi,set_name,ranks", CASES, ids=[f"{a}-{s}-P{p}" for a, s, p in CASES])
def test_mpi4py_collective_suite(abi, set_name, ranks, mpi4py_testdir):
    logdir = CACHE / "runs" / f"{abi}-{set_name}-P{ranks}"
    result = _run_suite(abi, set_name, ranks, INTRA_MODULES, mpi4py_testdir, logdir)
    problems = _verdict(abi, set_name, ranks, INTRA_MODULES, *result, logdir, inter=False)
    if problems:
        pytest.fail(f"mpi4py suite, {abi} {set_name} P={ranks}:\n  " + "\n  ".join(problems), pytrace=False)


INTER_CASES = [(abi, s, INTER_RANKS[s]) for abi in ABIS for s in SETS]


@pytest.mark.parametrize("abi,set_name,ranks", INTER_CASES, ids=[f"{a}-{s}-P{p}" for a, s, p in INTER_CASES])
def test_mpi4py_intercommunicator_suite(abi, set_name, ranks, mpi4py_testdir):
    logdir = CACHE / "runs" / f"{abi}-{set_name}-P{ranks}-inter"
    result = _run_suite(abi, set_name, ranks, INTER_MODULES, mpi4py_testdir, logdir)
    problems = _verdict(abi, set_name, ranks, INTER_MODULES, *result, logdir, inter=True)
    if problems:
        pytest.fail(f"mpi4py suite (inter-communicators), {abi} {set_name} P={ranks}:\n  " + "\n  ".join(problems),
                    pytrace=False)
