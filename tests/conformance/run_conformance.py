#!/usr/bin/env python3
"""Runs one conformance program of tests/conformance under every algorithm variant of its collective.

For one MPI (its mpirun) and the PMPI library built for it:

1. lists the variants with list_algorithms: one COLLPLAN_<COLLECTIVE> spec per entry of each registered
   algorithm's sweep_params, and for every P whether the algorithm applies and a hash of the schedule it makes;
2. runs the program natively (no preload) at every P, to validate the program itself;
3. runs `mpirun -n P [--oversubscribe] env LD_PRELOAD=<lib> COLLPLAN_<COLL>=<spec> COLLPLAN_STATS=1 <program>`
   for every spec and P, each with a timeout (the whole process tree is killed), and reads the library's
   statistics, printed at MPI_Finalize on rank 0 of MPI_COMM_WORLD to stderr (summed over all ranks):
       collplan-stats: MPI_Allreduce collplan=<n> native=<m>
       collplan-stats: native <count> MPI_Allreduce: <reason>
   no such line means no call ran collplan;
4. prints a table (spec x P), the fallback reasons with their counts, writes a markdown report (--report), and
   exits 1 when a run failed or timed out, when the native run failed, or when the share of the collective's calls
   that ran collplan is below --min-share in a run where the algorithm applies.

Not every (spec, P) cell is its own mpirun (see README.md, "What runs"):
  - specs whose schedules at P are identical (same hash: the same ops, peers, tags and flags) run once; the
    others are reported with the result of the one that ran (--no-dedup runs them all);
  - cells where the algorithm does not apply (the library must fall back to the MPI library's collective) run
    once per P with the first such spec as representative (--all-inapplicable runs them all);
  - the share is not enforced for schedules that are correct only for idempotent operations (the program's
    sums must fall back) or in cells where the algorithm does not apply.

Programs that call several collectives (MULTI_PROGRAMS: nb_lifetime, pers_order, vgaps, self_inplace, stress) run
under the zip of those collectives' specs instead: at each P, run #i sets every COLLPLAN_<C> to the i-th of C's
applicable specs with distinct schedules, cycling the shorter lists (README.md, "Programs of several collectives").

Standard library only. `--merge OUT REPORT...` joins reports into one with a summary table (make conformance).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

COLLECTIVES = {
    "allgather": ("COLLPLAN_ALLGATHER", ("MPI_Allgather", "MPI_Allgather_c")),
    "alltoall": ("COLLPLAN_ALLTOALL", ("MPI_Alltoall", "MPI_Alltoall_c")),
    "alltoallv": ("COLLPLAN_ALLTOALLV", ("MPI_Alltoallv", "MPI_Alltoallv_c")),
    "allreduce": ("COLLPLAN_ALLREDUCE", ("MPI_Allreduce", "MPI_Allreduce_c")),
    "barrier": ("COLLPLAN_BARRIER", ("MPI_Barrier",)),
    "bcast": ("COLLPLAN_BCAST", ("MPI_Bcast", "MPI_Bcast_c")),
    "reduce": ("COLLPLAN_REDUCE", ("MPI_Reduce", "MPI_Reduce_c")),
    "reduce_scatter_block": ("COLLPLAN_REDUCE_SCATTER_BLOCK", ("MPI_Reduce_scatter_block", "MPI_Reduce_scatter_block_c")),
    "reduce_scatter": ("COLLPLAN_REDUCE_SCATTER", ("MPI_Reduce_scatter", "MPI_Reduce_scatter_c")),
    "allgatherv": ("COLLPLAN_ALLGATHERV", ("MPI_Allgatherv", "MPI_Allgatherv_c")),
    "gather": ("COLLPLAN_GATHER", ("MPI_Gather", "MPI_Gather_c")),
    "scatter": ("COLLPLAN_SCATTER", ("MPI_Scatter", "MPI_Scatter_c")),
}
# nonblocking.c: the non-blocking and persistent versions of all twelve, run under NONBLOCKING_SETS (each sets a
# choice for every collective at once) instead of the registry's sweeps; its calls are the library's MPI_I<coll>
# and MPI_<Coll>_init statistics lines.
NONBLOCKING_SETS = {
    "set-a": {"COLLPLAN_ALLGATHER": "ring", "COLLPLAN_ALLTOALL": "pairwise", "COLLPLAN_ALLTOALLV": "linear_permutation",
              "COLLPLAN_ALLREDUCE": "recursive_doubling", "COLLPLAN_BARRIER": "dissemination:n=2",
              "COLLPLAN_BCAST": "binomial", "COLLPLAN_REDUCE": "binomial", "COLLPLAN_REDUCE_SCATTER_BLOCK": "pairwise",
              "COLLPLAN_REDUCE_SCATTER": "ring", "COLLPLAN_ALLGATHERV": "ring", "COLLPLAN_GATHER": "binomial",
              "COLLPLAN_SCATTER": "binomial"},
    "set-b": {"COLLPLAN_ALLGATHER": "bruck", "COLLPLAN_ALLTOALL": "bruck", "COLLPLAN_ALLTOALLV": "async",
              "COLLPLAN_ALLREDUCE": "rabenseifner", "COLLPLAN_BARRIER": "dissemination:n=3",
              "COLLPLAN_BCAST": "scatter_ring_allgather", "COLLPLAN_REDUCE": "rabenseifner",
              "COLLPLAN_REDUCE_SCATTER_BLOCK": "recursive_halving", "COLLPLAN_REDUCE_SCATTER": "recursive_halving",
              "COLLPLAN_ALLGATHERV": "bruck", "COLLPLAN_GATHER": "linear", "COLLPLAN_SCATTER": "linear"},
}
COLLECTIVES["nonblocking"] = ("", tuple(
    n for c, (_, (name, *_)) in COLLECTIVES.items()
    for n in ("MPI_I" + name[4].lower() + name[5:], name + "_init")))


def call_names(collective: str, blocking: bool = True) -> tuple[str, ...]:
    """The statistics names of a collective's calls: MPI_X and MPI_X_c (blocking), MPI_IX (non-blocking) and
    MPI_X_init (persistent), as the library prints them."""
    names = COLLECTIVES[collective][1]
    base = names[0]
    return (names if blocking else ()) + ("MPI_I" + base[4].lower() + base[5:], base + "_init")


# Programs of several collectives (README.md, "Programs of several collectives"): each lists the collectives it
# calls, those it calls with a non-commutative user operation, and the communicators it calls them on ("split":
# MPI_COMM_WORLD, duplicates and the odd/even split, sizes P, ceil(P/2), floor(P/2); "self": MPI_COMM_SELF and
# duplicates of MPI_COMM_WORLD, sizes 1 and P; "world": duplicates of MPI_COMM_WORLD). Their runs zip the registry's
# specs of those collectives: at each P, run i sets COLLPLAN_<C> to the i-th of C's specs with distinct schedules
# that apply at P (cycling the shorter lists), so every applicable algorithm of every collective runs at every P in
# max(len) runs. The library decides per communicator: where the spec of the run does not apply at one of the
# communicator sizes, or cannot run the program's operations there (idempotent_only; needs_commutative for a
# collective called with a non-commutative operation), the MPI library runs those calls. Such a collective is left
# out of the share and named in CONFORMANCE_NATIVE ("<coll>@<size>,...": the program skips what the MPI library
# itself gets wrong); the share counts the calls (MPI_X, MPI_X_c, MPI_IX, MPI_X_init) of the others.
TWELVE = tuple(COLLECTIVES)[:12]
MULTI_PROGRAMS: dict[str, tuple[tuple[str, ...], frozenset[str], str]] = {
    "nb_lifetime": (("allreduce", "reduce", "reduce_scatter_block", "allgather", "alltoall", "bcast", "gather",
                     "scatter"), frozenset({"allreduce", "reduce", "reduce_scatter_block"}), "split"),
    "pers_order": (TWELVE, frozenset(), "split"),
    "vgaps": (("allgatherv", "alltoallv", "reduce_scatter"), frozenset(), "split"),
    "self_inplace": (TWELVE, frozenset(), "self"),
    "stress": (TWELVE, frozenset(), "world"),
}


def comm_sizes(kind: str, p: int) -> list[int]:
    sizes = {"split": [p, (p + 1) // 2, p // 2], "self": [p, 1], "world": [p]}[kind]
    return sorted({q for q in sizes if q >= 1}, reverse=True)


for _prog, (_colls, *_) in MULTI_PROGRAMS.items():
    COLLECTIVES[_prog] = ("", tuple(n for c in _colls for n in call_names(c)))

# Environment for runs of many ranks on few cores (README.md, "MPI settings"); a variable already set wins.
MPI_TUNING = {
    # Open MPI: the shared-memory transport only (the libfabric BTL's start-up costs ~1 s per launch).
    "openmpi": {"OMPI_MCA_btl": "self,sm", "OMPI_MCA_pml": "ob1"},
    # MPICH: waiting ranks sleep instead of spinning (oversubscribed ranks otherwise wait for each other's time
    # slices: ms per collective), and its own collectives go through that progress engine too.
    "mpich": {"MPIR_CVAR_CH4_PROGRESS_THROTTLE": "1", "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT": "1",
              "MPIR_CVAR_DEVICE_COLLECTIVES": "none"},
}

STATS_CALLS = re.compile(r"collplan-stats: (MPI_\w+) collplan=(\d+) native=(\d+)")
STATS_REASON = re.compile(r"collplan-stats: native (\d+) (MPI_\w+): (.*)$")
PASSED = re.compile(r"conformance (\S+): (\d+) checks passed")
FAILED_CHECKS = re.compile(r"conformance (\S+): (\d+) of (\d+) checks FAILED")
FAIL_LINE = re.compile(r"conformance \S+: FAIL rank \d+ case '(.*?)' index")
TRACE = re.compile(r"conformance \S+: rank (\d+) [0-9.]+ s case (.*)$")
# mpirun --tag-output's prefix of a rank's line ("[1,0]<stderr>:"). Open MPI 4 forwards a rank's output in the
# chunks it reads from the rank's pipe and tags each chunk, so a prefix can also land inside a line, even one the
# program wrote with a single write ("collplan-stats: MPI_[1,0]<stderr>:Allreduce collplan=..."): it is dropped
# wherever it stands.
TAG = re.compile(r"\[\d+,\d+\]<std(?:out|err|diag)>:")


# ---- variants ------------------------------------------------------------------------------------------------
@dataclass
class Cell:
    spec: str
    ranks: int
    applies: bool
    flags: str = ""        # "needs_commutative", "idempotent_only" or ""
    reason: str = ""       # why not, when it does not apply
    schedule: str = ""     # schedule hash ("-": unknown)
    run: Run | None = None
    same_as: str = ""      # spec whose run stands for this cell
    # programs of several collectives: COLLPLAN_<C> of the run, the statistics names the share counts, and the
    # collectives the run leaves to the MPI library (CONFORMANCE_NATIVE)
    choices: dict[str, str] = field(default_factory=dict)
    calls: tuple[str, ...] = ()
    native: tuple[str, ...] = ()


def list_variants(lister: str, collective: str, ranks: list[int]) -> tuple[list[str], dict[tuple[str, int], Cell]]:
    if collective == "nonblocking":  # fixed sets of choices, each applicable at every P (no schedule hash)
        specs = list(NONBLOCKING_SETS)
        return specs, {(s, p): Cell(s, p, True, schedule="-") for s in specs for p in ranks}
    out = subprocess.run([lister, collective, "--ranks", f"{min(ranks)}-{max(ranks)}"], check=True,
                         capture_output=True, text=True).stdout
    specs: list[str] = []
    cells: dict[tuple[str, int], Cell] = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) < 3:
            continue
        spec, p, status = parts[0], int(parts[1]), parts[2]
        if p not in ranks:
            continue
        if spec not in specs:
            specs.append(spec)
        if status.startswith("ok"):
            cells[(spec, p)] = Cell(spec, p, True, flags=status[3:].strip(),
                                    schedule=parts[3] if len(parts) > 3 else "-")
        else:
            cells[(spec, p)] = Cell(spec, p, False, reason=status[4:].strip())
    return specs, cells


def list_multi(lister: str, program: str, ranks: list[int], no_dedup: bool = False,
               listing: dict[str, tuple[list[str], dict]] | None = None) -> tuple[list[str], dict[tuple[str, int], Cell]]:
    """The runs of a program of several collectives: labels #1, #2, ... and one cell per (label, P) with the choice
    of every collective (see MULTI_PROGRAMS). `listing` (collective -> list_variants' result for P = 1..max(ranks))
    replaces the lister (self-test)."""
    colls, noncomm, comm_kind = MULTI_PROGRAMS[program]
    every_p = list(range(1, max(ranks) + 1))  # the communicators' sizes: sub-communicators are smaller
    per: dict[str, dict[int, list[Cell]]] = {}
    first: dict[str, str] = {}
    all_cells: dict[str, dict] = {}
    for c in colls:
        specs, cells = listing[c] if listing else list_variants(lister, c, every_p)
        first[c], all_cells[c], per[c] = specs[0], cells, {}
        for p in ranks:
            seen: set = set()
            per[c][p] = []
            for spec in specs:
                cell = cells.get((spec, p))
                if cell is None or not cell.applies:
                    continue
                key = (cell.flags, cell.schedule) if (not no_dedup and cell.schedule != "-") else ("spec", spec)
                if key not in seen:
                    seen.add(key)
                    per[c][p].append(cell)
    labels: list[str] = []
    out: dict[tuple[str, int], Cell] = {}
    for p in ranks:
        n = max([len(per[c][p]) for c in colls] + [1])
        for i in range(n):
            label = f"#{i + 1}"
            if label not in labels:
                labels.append(label)
            choices, calls, native = {}, [], []
            for c in colls:
                avail = per[c][p]
                spec = avail[i % len(avail)].spec if avail else first[c]  # none applies at P: the first stands
                choices[COLLECTIVES[c][0]] = spec
                left, counted = [], True
                for q in comm_sizes(comm_kind, p):
                    cq = all_cells[c].get((spec, q))
                    if cq is None or not cq.applies or cq.flags == "idempotent_only":
                        left.append(q)
                    elif cq.flags == "needs_commutative" and c in noncomm:
                        counted = False
                native += [f"{c}@{q}" for q in left]
                if counted and not left:
                    calls.extend(call_names(c))
            out[(label, p)] = Cell(label, p, True, schedule="-", choices=choices, calls=tuple(calls),
                                   native=tuple(native))
    return labels, out


def multi_given(program: str, text: str, ranks: list[int]) -> tuple[list[str], dict[tuple[str, int], Cell]]:
    """--specs of a program of several collectives: 'coll=spec,coll=spec' sets (the collectives not named are left
    unset: the MPI library runs them), each run as given at every P; the share counts the collectives named."""
    colls = MULTI_PROGRAMS[program][0]
    labels, cells = [], {}
    for item in (t for t in text.split(";") if t):
        choices, calls = {}, []
        for kv in item.split(","):
            c, _, spec = kv.partition("=")
            if c not in colls or not spec:
                raise SystemExit(f"run_conformance: '{kv}' in --specs: want <collective>=<spec> with a collective of "
                                 f"{program}: {', '.join(colls)}")
            choices[COLLECTIVES[c][0]] = spec
            calls.extend(call_names(c))
        labels.append(item)
        native = tuple(c for c in colls if COLLECTIVES[c][0] not in choices)  # all sizes
        for p in ranks:
            cells[(item, p)] = Cell(item, p, True, schedule="-", choices=choices, calls=tuple(calls), native=native)
    return labels, cells


def choices_text(cell: Cell) -> str:
    return " ".join(f"{k[len('COLLPLAN_'):].lower()}={v}" for k, v in cell.choices.items())


# ---- running -------------------------------------------------------------------------------------------------
@dataclass
class Run:
    spec: str              # "" for the native validation run
    ranks: int
    status: str = "skip"   # pass | FAIL | TIMEOUT | skip
    why: str = ""          # one line: what failed
    seconds: float = 0.0
    collplan: int = 0      # calls of the collective that ran collplan (summed over ranks)
    native: int = 0
    has_stats: bool = False
    reasons: dict[str, int] = field(default_factory=dict)  # rank 0's fallback reasons
    last_case: str = ""    # where the run stopped: the last case of the rank that got least far
    where: str = ""        # each rank's last case, e.g. "ranks 0,2: a; rank 1: b"
    fail_lines: list[str] = field(default_factory=list)
    failed_cases: list[str] = field(default_factory=list)  # in the order they were printed
    tail: str = ""
    command: str = ""
    retries: int = 0       # launches that failed before the program started (e.g. PMIx could not start)
    detail: str = ""       # programs of several collectives: the run's choices ("allreduce=ring bcast=...")

    @property
    def share(self) -> float | None:
        total = self.collplan + self.native
        return self.collplan / total if total else None


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def kill_tree(proc: subprocess.Popen) -> None:
    pids = descendants(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the session the run was started in
    except OSError:
        pass
    for pid in pids:  # and whatever left it (daemons that call setsid)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


SKIP_EXIT = 77  # nothing failed, but the time budget left runs out (ctest: SKIP_RETURN_CODE)
ACTIVE: set[subprocess.Popen] = set()  # runs under way: killed with their process trees if we are stopped
ACTIVE_LOCK = threading.Lock()


def stop(signum, _frame) -> None:
    with ACTIVE_LOCK:
        for proc in list(ACTIVE):
            kill_tree(proc)
    print(f"run_conformance: stopped by signal {signum}", file=sys.stderr, flush=True)
    os._exit(128 + signum)


def execute(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[int | None, str, float]:
    start = time.monotonic()
    with ACTIVE_LOCK:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", start_new_session=True)
        ACTIVE.add(proc)
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        kill_tree(proc)
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            out = ""
        rc = None
    with ACTIVE_LOCK:
        ACTIVE.discard(proc)
    return rc, out or "", time.monotonic() - start


def analyse(run: Run, rc: int | None, out: str, calls: tuple[str, ...], program: str) -> None:
    passed = failed = None
    progress: dict[int, list[str]] = {}
    for line in out.splitlines():
        line = TAG.sub("", line).rstrip()
        # (Open MPI 4's launcher forwards stdout and stderr in chunks: the result line can land inside a trace line.)
        if m := PASSED.search(line):
            passed = int(m.group(2))
        if m := FAILED_CHECKS.search(line):
            failed = (int(m.group(2)), int(m.group(3)))
        if m := STATS_CALLS.search(line):
            run.has_stats = True
            if m.group(1) in calls:
                run.collplan += int(m.group(2))
                run.native += int(m.group(3))
        elif m := STATS_REASON.search(line):
            run.has_stats = True
            if m.group(2) in calls:
                reason = f"{m.group(2)}: {m.group(3).strip()}"
                run.reasons[reason] = run.reasons.get(reason, 0) + int(m.group(1))
        elif m := TRACE.search(line):
            rank = int(m.group(1))
            progress.setdefault(rank, []).append(m.group(2))
        elif m := FAIL_LINE.search(line):
            if m.group(1) not in run.failed_cases:
                run.failed_cases.append(m.group(1))
            if len(run.fail_lines) < 8:
                run.fail_lines.append(line[line.index("FAIL"):])
    if progress:
        behind = min(progress, key=lambda r: (len(progress[r]), r))
        run.last_case = progress[behind][-1]
        groups: dict[str, list[int]] = {}
        for r in sorted(progress):
            groups.setdefault(progress[r][-1], []).append(r)
        if len(groups) == 1:
            run.where = f"all ranks in '{run.last_case}'"
        else:
            run.where = "; ".join(f"rank{'s' if len(rs) > 1 else ''} {','.join(map(str, rs))} in '{c}'"
                                  for c, rs in sorted(groups.items(), key=lambda kv: kv[1][0]))
    lines = [ln for ln in out.splitlines() if not TRACE.search(ln)]
    run.tail = "\n".join(lines[-12:])
    if rc is None:
        run.status, run.why = "TIMEOUT", f"killed after {run.seconds:.0f} s: {run.where or 'no case started'}"
    elif rc == 0 and passed is not None:
        run.status = "pass"
    else:
        run.status = "FAIL"
        if failed:
            run.why = f"{failed[0]} of {failed[1]} checks failed"
        elif rc < 0:
            run.why = f"killed by signal {-rc}: {run.where}"
        else:
            run.why = f"exit code {rc} without the '{program}: N checks passed' line: {run.where}"


class Runner:
    def __init__(self, args: argparse.Namespace, abi: str, collective: str, program: str):
        self.args, self.abi, self.collective, self.program = args, abi, collective, program
        self.var, self.calls = COLLECTIVES[collective]
        self.multi: dict[tuple[str, int], Cell] = {}  # programs of several collectives: (label, P) -> its cell
        env = {k: v for k, v in os.environ.items() if not k.startswith("COLLPLAN_")}
        if not args.no_mpi_tuning:
            for k, v in MPI_TUNING.get(abi, {}).items():
                env.setdefault(k, v)
        if abi == "openmpi" and os.geteuid() == 0:
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        env["CONFORMANCE_TRACE"] = "1"
        if args.skip_cases:
            env["CONFORMANCE_SKIP"] = args.skip_cases
        self.env = env
        self.lock = threading.Lock()
        self.start = budget_start(args)
        self.timeouts = 0
        self.stopped = ""

    def command(self, spec: str, ranks: int) -> list[str]:
        cmd = [self.args.mpirun, "-n", str(ranks)] + self.args.mpirun_arg
        if self.abi == "openmpi":
            cmd.append("--oversubscribe")
        if spec:
            value = "native" if self.args.time_as_native else spec
            extra = []
            if (spec, ranks) in self.multi:
                cell = self.multi[(spec, ranks)]
                choices = dict(cell.choices)
                if cell.native:
                    extra.append(f"CONFORMANCE_NATIVE={','.join(cell.native)}")
            elif self.var:
                choices = {self.var: value}
            else:
                choices = dict(NONBLOCKING_SETS[spec])
            if self.args.time_as_native:
                choices = {k: "native" for k in choices}
            cmd += ["env", f"LD_PRELOAD={self.args.lib}", *(f"{k}={v}" for k, v in choices.items()), *extra,
                    "COLLPLAN_STATS=1"]
        return cmd + [self.program]

    def run(self, spec: str, ranks: int) -> Run:
        run = Run(spec, ranks)
        cmd = self.command(spec, ranks)
        run.command = " ".join(cmd)
        with self.lock:
            if not self.stopped:
                if self.args.budget and time.time() - self.start > self.args.budget:
                    self.stopped = f"time budget of {self.args.budget:.0f} s used up" + (
                        f" (counted from {self.args.budget_file})" if self.args.budget_file else "")
                elif self.args.max_timeouts and self.timeouts >= self.args.max_timeouts:
                    self.stopped = f"{self.timeouts} runs timed out (--max-timeouts)"
            if self.stopped:
                run.why = "not run: " + self.stopped
                return run
        cell = self.multi.get((spec, ranks))
        for attempt in range(2):
            while True:
                rc, out, run.seconds = execute(cmd, self.env, self.args.timeout)
                # The launcher failed before any rank started the program (Open MPI: "The PMIx server's listener
                # thread failed to start" when many jobs start at once): launch again, twice at most.
                started = "conformance " in out or "collplan" in out
                if rc in (0, None) or started or run.retries >= 2:
                    break
                run.retries += 1
                time.sleep(0.5)
            analyse(run, rc, out, cell.calls if cell else self.calls, os.path.basename(self.program))
            # The collplan-stats lines are the job's last output; now and then a passing run under Debian's Open
            # MPI 4.1 showed none (2 of some 3,000 runs), before TAG was dropped inside lines too. Should its output
            # be lost otherwise, such a run is made once more before it counts as "no calls".
            if attempt or not spec or run.status != "pass" or run.has_stats:
                break
            run = Run(spec, ranks)
            run.command = " ".join(cmd)
        if cell:
            run.detail = choices_text(cell)
        with self.lock:
            self.timeouts += run.status == "TIMEOUT"
        if self.args.verbose:
            print(f"  {run.status:7s} {run.seconds:5.2f}s P={ranks} {spec or 'native'} {run.why}"
                  + (f" [{run.detail}]" if run.detail and run.status != "pass" else ""), flush=True)
        return run

    def run_all(self, jobs: list[tuple[str, int]]) -> list[Run]:
        if self.args.jobs <= 1:
            return [self.run(s, p) for s, p in jobs]
        with ThreadPoolExecutor(self.args.jobs) as pool:
            return list(pool.map(lambda j: self.run(*j), jobs))


def budget_start(args: argparse.Namespace) -> float:
    """When the time budget started: the budget file's modification time -- the first runner creates it (ctest's
    fixture removes it before the set), so one budget covers the whole set -- else now."""
    if args.budget_file:
        try:
            return os.stat(args.budget_file).st_mtime
        except OSError:
            os.makedirs(os.path.dirname(os.path.abspath(args.budget_file)), exist_ok=True)
            with open(args.budget_file, "w"):
                pass
    return time.time()


# ---- one program ---------------------------------------------------------------------------------------------
def cell_text(cell: Cell, min_share: float | None) -> str:
    run = cell.run
    if run is None:
        return "n/a" if not cell.applies else "?"
    mark = "'" if cell.same_as else ""
    if run.status == "skip":
        return "skip"
    if run.status == "TIMEOUT":
        return "TIME" + mark
    if run.status == "FAIL":
        return "FAIL" + mark
    if not cell.applies:
        return "nat" + mark
    share = run.share
    if share is None or not run.has_stats:
        return ("LOW0" if min_share is not None and share_enforced(cell) else "ok?") + mark
    pct = int(share * 100)
    if min_share is not None and share_enforced(cell) and share < min_share:
        return f"LOW{pct}" + mark
    return ("ok" if pct >= 100 else f"ok{pct}") + mark


def share_enforced(cell: Cell) -> bool:
    if cell.choices and not cell.calls:  # several collectives, none of which the share counts in this run
        return False
    return cell.applies and cell.flags != "idempotent_only"


def share_ok(cell: Cell, min_share: float | None) -> bool:
    if min_share is None or not share_enforced(cell) or cell.run is None or cell.run.status != "pass":
        return True
    share = cell.run.share if cell.run.has_stats else 0.0
    return share is not None and share >= min_share


def run_program(args: argparse.Namespace, abi: str, program: str, collective: str) -> tuple[bool, str, dict]:
    ranks = args.ranks
    t0 = time.monotonic()
    multi = collective in MULTI_PROGRAMS
    if multi and args.specs and "=" in args.specs:
        specs, cells = multi_given(collective, args.specs, ranks)
    elif multi:
        specs, cells = list_multi(args.lister, collective, ranks, args.no_dedup)
    else:
        specs, cells = list_variants(args.lister, collective, ranks)
    if args.specs and not (multi and "=" in args.specs):
        wanted = [s for s in args.specs.split(";") if s]
        cells = {k: c for k, c in cells.items() if k[0] in wanted}
        for extra in (w for w in wanted if w not in specs and not multi):  # not from the registry: run as given
            for p in ranks:
                cells[(extra, p)] = Cell(extra, p, True, schedule="-")
        specs = [s for s in specs if s in wanted] + [w for w in wanted if w not in specs]
    runner = Runner(args, abi, collective, program)
    if multi:
        runner.multi = cells
    name = os.path.basename(program)
    print(f"conformance: {name} ({collective}) under {abi}: {len(specs)} specs x P={args.ranks_text}", flush=True)

    # native validation first
    natives = runner.run_all([("", p) for p in ranks]) if not args.skip_native else []

    # which cells run: one per (P, schedule hash) among the applicable ones, one per P among the others
    jobs: list[tuple[str, int]] = []
    leader: dict[tuple, str] = {}
    for spec in specs:
        for p in ranks:
            cell = cells.get((spec, p))
            if cell is None:
                continue
            if cell.applies:
                key = (p, cell.flags, cell.schedule) if (not args.no_dedup and cell.schedule != "-") else (p, spec)
            else:
                key = (p, "n/a") if not args.all_inapplicable else (p, spec, "n/a")
            if key in leader:
                cell.same_as = leader[key]
            else:
                leader[key] = spec
                jobs.append((spec, p))
    results = runner.run_all(jobs)
    by_job = {(r.spec, r.ranks): r for r in results}
    for (spec, p), cell in cells.items():
        cell.run = by_job.get((cell.same_as or spec, p))
    elapsed = time.monotonic() - t0

    # verdict
    # A run the time budget left out is not a failure (the machine was slow, not the library wrong): the verdict is
    # INCOMPLETE and the exit code SKIP_EXIT, which ctest reports as skipped; the report lists every such cell.
    problems: list[str] = []
    for r in natives:
        if r.status not in ("pass", "skip"):
            problems.append(f"native P={r.ranks}: {r.status} {r.why}")
    for r in results:
        if r.status in ("FAIL", "TIMEOUT"):
            problems.append(f"{r.spec} P={r.ranks}: {r.status} {r.why}" + (f" [{r.detail}]" if r.detail else ""))
    unrun = [f"{'native' if r in natives else r.spec} P={r.ranks}: {r.why}" for r in natives + results if r.status == "skip"]
    low = [c for c in cells.values() if c.same_as == "" and c.run and not share_ok(c, args.min_share)]
    for c in low:
        share = c.run.share if c.run.has_stats else None
        problems.append(f"{c.spec} P={c.ranks}: collplan ran "
                        f"{'no' if not share else f'{share:.0%} of the'} calls (--min-share {args.min_share:.0%})"
                        + (f" [{choices_text(c)}]" if c.choices else ""))
    ok = not problems

    # table
    width = max([len(s) for s in specs] + [20])
    applicable_specs = [s for s in specs if any(cells.get((s, p)) and cells[(s, p)].applies for p in ranks)]
    never = [s for s in specs if s not in applicable_specs]
    lines = []
    head = f"{'spec':{width}s} " + " ".join(f"{'P=' + str(p):>7s}" for p in ranks)
    lines.append(head)
    if natives:
        lines.append(f"{'(native, no preload)':{width}s} " + " ".join(
            f"{('ok' if r.status == 'pass' else r.status):>7s}" for r in natives))
    for s in applicable_specs:
        lines.append(f"{s:{width}s} " + " ".join(
            f"{cell_text(cells[(s, p)], args.min_share) if (s, p) in cells else '':>7s}" for p in ranks))
    table = "\n".join(lines)

    reasons: dict[str, list[int]] = {}
    for r in results:
        for reason, n in r.reasons.items():
            acc = reasons.setdefault(reason, [0, 0])
            acc[0] += n
            acc[1] += 1
    no_stats = sum(1 for r in results if r.status == "pass" and not r.has_stats)
    counts = {k: sum(1 for r in results if r.status == k) for k in ("pass", "FAIL", "TIMEOUT", "skip")}
    n_cells = len(cells)
    n_app = sum(1 for c in cells.values() if c.applies)
    summary = {
        "abi": abi, "program": name, "collective": collective, "specs": len(specs), "cells": n_cells,
        "applicable": n_app, "runs": len(results) + len(natives), "passed": counts["pass"],
        "failed": counts["FAIL"], "timeouts": counts["TIMEOUT"],
        "skipped": counts["skip"] + sum(1 for r in natives if r.status == "skip"),
        "native_failed": sum(1 for r in natives if r.status in ("FAIL", "TIMEOUT")), "low_share": len(low),
        "seconds": round(elapsed, 1), "ok": ok,
    }

    # console
    print(table)
    if never:
        print(f"never applicable for P in {args.ranks_text} (one fallback run per P stands for them): "
              + ", ".join(never))
    print(f"runs: {len(natives)} native + {len(results)} with the library for {n_cells} cells "
          f"({n_app} applicable); with the library: pass {counts['pass']}, FAIL {counts['FAIL']}, "
          f"TIMEOUT {counts['TIMEOUT']}, not run {counts['skip']}; native failures {summary['native_failed']}; "
          f"{elapsed:.1f} s")
    if reasons:
        print("fallback reasons (rank 0, summed over runs):")
        for reason, (n, nruns) in sorted(reasons.items(), key=lambda kv: -kv[1][0]):
            print(f"  {n:6d} in {nruns:3d} runs  {reason}")
    if no_stats:
        print(f"{no_stats} passing runs printed no collplan-stats lines: counted as 0 calls through collplan")
    for p in problems[:40]:
        print("  " + p)
    if len(problems) > 40:
        print(f"  ... {len(problems) - 40} more in the report")
    if unrun:
        print(f"  {len(unrun)} runs not run ({unrun[0].split(': ', 1)[1]}), first: {unrun[0].split(': ')[0]}; "
              "all of them in the report")
    verdict = "FAILED" if not ok else f"INCOMPLETE ({len(unrun)} runs not run)" if unrun else "OK"
    print(f"conformance {name} under {abi}: {verdict}", flush=True)

    md = markdown(args, abi, name, collective, specs, never, cells, natives, results, table, reasons, no_stats,
                  problems + unrun, summary)
    return ok, md, summary


COMMS = ("world", "dup", "split-odd-even", "split-reversed", "cart-periodic", "cart-open", "self")


def case_family(case: str) -> tuple[str, str]:
    """'mixed/double/n=61/inplace/dup' -> ('mixed/double/inplace', 'dup'); the sizes, roots, operation numbers and
    seeds of the later programs go too: 'op17/allgather/dup2/n4/root1/seed5' -> ('allgather', 'dup')"""
    parts = case.split("/")
    comm = parts.pop() if parts and parts[-1] in COMMS else ""
    if not comm and any(re.fullmatch(r"dup\d+", p) for p in parts):
        comm = "dup"
    parts = [p for p in parts if not re.fullmatch(r"(n|count)=\d+|(n|root|op|seed|dup|block)\d+", p)]
    return "/".join(parts), comm


def markdown(args, abi, name, collective, specs, never, cells, natives, results, table, reasons, no_stats,
             problems, summary) -> str:
    s = summary
    out = [f"## {name} ({collective}) under {abi}", "",
           f"<!-- conformance-summary: {' '.join(f'{k}={v}' for k, v in s.items())} -->", "",
           f"- library: `{args.lib}`", f"- mpirun: `{args.mpirun}`",
           *([f"- cases left out (--skip-cases): `{args.skip_cases}`"] if args.skip_cases else []),
           *(["- **--time-as-native**: every cell ran with the MPI library's collective (timing only)"]
             if args.time_as_native else []),
           f"- ranks: {args.ranks_text}; {args.jobs} run(s) at a time; per-run timeout {args.timeout:.0f} s; min share "
           f"{'off' if args.min_share is None else f'{args.min_share:.0%}'}; MPI settings: "
           + (", ".join(f"`{k}={v}`" for k, v in MPI_TUNING.get(abi, {}).items()) if not args.no_mpi_tuning
              else "none"),
           f"- {s['specs']} specs x {len(args.ranks)} rank counts = {s['cells']} cells, {s['applicable']} where "
           f"the algorithm applies; {s['runs']} mpirun launches ({len(natives)} native); wall time "
           f"{s['seconds']} s",
           f"- result: **{'OK' if s['ok'] else 'FAILED'}** -- runs with the library: pass {s['passed']}, FAIL "
           f"{s['failed']}, TIMEOUT {s['timeouts']}; not run {s['skipped']}; native failures {s['native_failed']}; "
           f"share below minimum {s['low_share']}", "",
           "Cells: `ok` passed and every call ran collplan, `okNN` passed with NN % of the calls through collplan, "
           "`LOWNN` passed but below the minimum share, `ok?` passed without statistics, `FAIL`, `TIME` (timeout), "
           "`nat` the algorithm does not apply and the run (native fallback) passed, `n/a` does not apply (not run: "
           "another inapplicable spec stands for it), `skip` not run (budget); a trailing `'` marks a cell that "
           "did not run itself because another spec has the identical schedule at that P (its result is shown).",
           "", "```", table, "```", ""]
    if never:
        out += [f"Never applicable for P in {args.ranks_text}: {', '.join(never)}.", ""]
    if collective in MULTI_PROGRAMS and any(c.choices for c in cells.values()):
        out += multi_summary(args.ranks, cells)
    timed = [r for r in natives + results if r.status != "skip"]
    if timed:
        out += ["Seconds per run (launch included), by P: " + "; ".join(
            f"P={p} mean {sum(r.seconds for r in rs) / len(rs):.2f} max {max(r.seconds for r in rs):.2f}"
            for p in args.ranks if (rs := [r for r in timed if r.ranks == p]))
            + f". Sum over runs {sum(r.seconds for r in timed):.0f} s.", ""]
        retried = [r for r in timed if r.retries]
        if retried:
            out += [f"Launches retried because the launcher failed before the program started: "
                    + ", ".join(f"{r.spec or 'native'} P={r.ranks} ({r.retries}x)" for r in retried) + ".", ""]
    if reasons or no_stats:
        out += ["### Fallback reasons", "", "| calls | runs | reason |", "|---:|---:|---|"]
        for reason, (n, nruns) in sorted(reasons.items(), key=lambda kv: -kv[1][0]):
            out.append(f"| {n} | {nruns} | {reason.replace('|', '/')} |")
        if no_stats:
            out.append(f"| - | {no_stats} | (passing runs without collplan-stats lines: 0 calls through collplan) |")
        out.append("")
    bad = [r for r in natives + results if r.status in ("FAIL", "TIMEOUT")]
    if bad:
        out += ["### Failures", ""]
        for r in bad:
            same = sorted({c.spec for c in cells.values() if c.same_as == r.spec and c.ranks == r.ranks})
            out.append(f"- **{r.spec or 'native'} P={r.ranks}**: {r.status} ({r.seconds:.1f} s) {r.why}"
                       + (f" -- choices: `{r.detail}`" if r.detail else "")
                       + (f"; same schedule: {', '.join(same)}" if same else ""))
            if r.failed_cases:
                more = len(r.failed_cases) - 12
                out.append(f"  - failed cases: {', '.join(r.failed_cases[:12])}" + (f" and {more} more" if more > 0 else ""))
            for ln in r.fail_lines[:3]:
                out.append(f"  - `{ln}`")
            if not r.fail_lines and r.tail.strip():
                tail = "\n".join("    " + t for t in r.tail.splitlines()[-6:])
                out.append(tail)
        out.append("")
    families: dict[str, tuple[set, set, list]] = {}  # family -> (communicators, specs, "spec P=n" of runs)
    for r in results:
        seen = set()
        named = [(c, "") for c in r.failed_cases]
        if r.status == "TIMEOUT" and r.last_case:
            named.append((r.last_case, " (hangs)"))
        for c, suffix in named:
            fam, comm = case_family(c)
            fam += suffix
            entry = families.setdefault(fam, (set(), set(), []))
            if comm:
                entry[0].add(comm)
            if fam not in seen:
                seen.add(fam)
                entry[1].add(r.spec)
                entry[2].append(f"{r.spec} P={r.ranks}")
    if families:
        out += ["### Failing cases", "",
                "Case names without the communicator and the sizes; runs = runs where some case of the family "
                "failed (or hung).", "", "| case family | communicators | runs | specs | e.g. |", "|---|---|---:|---:|---|"]
        for fam, (comms, fspecs, where) in sorted(families.items(), key=lambda kv: (-len(kv[1][2]), kv[0])):
            out.append(f"| {fam} | {', '.join(sorted(comms))} | {len(where)} | {len(fspecs)} | {', '.join(where[:3])} |")
        out.append("")
    if problems:
        out += ["### Problems and runs not run", ""] + [f"- {p}" for p in problems] + [""]
    return "\n".join(out)


def multi_summary(ranks: list[int], cells: dict[tuple[str, int], Cell]) -> list[str]:
    """A program of several collectives: runs per P and, per collective, the specs its runs cover at each P (the
    choices of every run that failed are listed with it)."""
    out = ["Runs `#i` zip the specs of the program's collectives (README.md, \"Programs of several collectives\"); "
           "specs per collective and P (the runs per P are the most of any collective):", "",
           "| collective | " + " | ".join(f"P={p}" for p in ranks) + " |", "|---|" + "---:|" * len(ranks)]
    at = {p: [c for c in cells.values() if c.ranks == p] for p in ranks}
    out.append("| (runs) | " + " | ".join(str(len(at[p])) for p in ranks) + " |")
    variables = list(dict.fromkeys(k for c in cells.values() for k in c.choices))
    for var in variables:
        row = []
        for p in ranks:
            specs = {c.choices.get(var) for c in at[p]} - {None}
            coll = var[len("COLLPLAN_"):].lower()
            left = sum(1 for c in at[p] if f"{coll}@{p}" in c.native or coll in c.native)
            row.append(f"{len(specs)}" + (f" ({left} nat)" if left else ""))
        out.append(f"| {var[len('COLLPLAN_'):].lower()} | " + " | ".join(row) + " |")
    return out + ["", "`(n nat)`: in n of the runs the collective's spec does not apply at P or cannot run the "
                  "program's operations (the MPI library runs those calls; CONFORMANCE_NATIVE tells the program). "
                  "Sub-communicators of other sizes are not counted here.", ""]


# ---- merge ---------------------------------------------------------------------------------------------------
def merge(out_path: str, inputs: list[str]) -> int:
    summaries, bodies = [], []
    for path in inputs:
        try:
            with open(path) as f:
                text = f.read()
        except OSError as e:
            bodies.append(f"## {path}\n\nmissing: {e}\n")
            summaries.append({"program": os.path.basename(path), "ok": "False", "seconds": "0"})
            continue
        found = re.findall(r"<!-- conformance-summary: (.*?) -->", text)
        summaries += [dict(kv.split("=", 1) for kv in m.split()) for m in found] or [
            {"program": os.path.basename(path), "ok": "False", "seconds": "0"}]
        bodies.append(text)
    total = sum(float(s.get("seconds", 0)) for s in summaries)
    per_abi: dict[str, float] = {}
    for s in summaries:
        per_abi[s.get("abi", "?")] = per_abi.get(s.get("abi", "?"), 0.0) + float(s.get("seconds", 0))
    lines = ["# collplan conformance report", "",
             f"Generated {time.strftime('%Y-%m-%d %H:%M:%S')}; total {total:.0f} s ("
             + ", ".join(f"{a} {t:.0f} s" for a, t in per_abi.items()) + ").", "",
             "Runs = mpirun launches (native validation included); pass/FAIL/TIMEOUT count the runs with the library.",
             "",
             "| MPI | program | result | runs | pass | FAIL | TIMEOUT | not run | native failures | low share | seconds |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in summaries:
        lines.append(f"| {s.get('abi', '?')} | {s.get('program', '?')} | "
                     f"{'OK' if s.get('ok') == 'True' else '**FAILED**'} | {s.get('runs', '-')} | "
                     f"{s.get('passed', '-')} | {s.get('failed', '-')} | {s.get('timeouts', '-')} | "
                     f"{s.get('skipped', '-')} | {s.get('native_failed', '-')} | {s.get('low_share', '-')} | "
                     f"{s.get('seconds', '-')} |")
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n\n" + "\n".join(bodies))
    print(f"conformance report: {out_path} ({total:.0f} s in all)")
    return 0 if all(s.get("ok") == "True" for s in summaries) else 1


# ---- self-test of the output parsing (ctest conformance_runner_selftest; no MPI needed) ---------------------------
def self_test() -> int:
    out = "\n".join([
        "conformance allreduce: rank 0 0.001 s case predef/int/sum",
        "conformance allreduce: rank 1 0.001 s case predef/int/sum",
        "conformance allreduce: rank 1 0.002 s case mixed/double/n=7/dup",
        "conformance allreduce: FAIL rank 1 case 'mixed/double/n=7/dup' index 3: got 00 expected 01",
        "collplan-stats: MPI_Allreduce collplan=90 native=6",
        "collplan-stats: MPI_Allreduce_c collplan=4 native=0",
        "collplan-stats: MPI_Allgather collplan=0 native=3",
        "collplan-stats: native 4 MPI_Allreduce: non-commutative operation",
        "collplan-stats: native 2 MPI_Allreduce: datatype has holes",
        "collplan-stats: native 3 MPI_Allgather: no algorithm chosen",
        "conformance allreduce: 1 of 10 checks FAILED",
    ])
    run = Run("ring", 2)
    analyse(run, 1, out, COLLECTIVES["allreduce"][1], "conformance_allreduce")
    checks = [
        (run.status == "FAIL" and run.why == "1 of 10 checks failed", f"status {run.status} {run.why}"),
        ((run.collplan, run.native) == (94, 6), f"calls {run.collplan} {run.native}"),
        (abs(run.share - 0.94) < 1e-9, f"share {run.share}"),
        (run.reasons == {"MPI_Allreduce: non-commutative operation": 4, "MPI_Allreduce: datatype has holes": 2},
         f"reasons {run.reasons}"),
        (run.failed_cases == ["mixed/double/n=7/dup"], f"failed cases {run.failed_cases}"),
        (run.last_case == "predef/int/sum" and "rank 0 in 'predef/int/sum'" in run.where, f"where {run.where}"),
        (case_family("mixed/double/n=7/inplace/dup") == ("mixed/double/inplace", "dup"), "case_family"),
    ]
    ok = Run("ring", 2)
    analyse(ok, 0, "conformance allreduce: 10 checks passed\n", COLLECTIVES["allreduce"][1], "x")
    checks.append((ok.status == "pass" and not ok.has_stats and ok.share is None, f"no stats: {ok}"))
    glued = Run("ring", 2)  # the result line inside a trace line (Open MPI 4's output forwarding)
    analyse(glued, 0, "conformance allreduce: rank 0 0.005 s case user-op datatypesconformance allreduce: 10 checks "
            "passed\n", COLLECTIVES["allreduce"][1], "x")
    checks.append((glued.status == "pass", f"glued: {glued}"))
    split = Run("ring", 2)  # a chunk's tag inside the stats line
    analyse(split, 0, "[1,0]<stderr>:conformance allreduce: 10 checks passed\n[1,0]<stderr>:collplan-stats: "
            "MPI_[1,0]<stderr>:Allreduce collplan=2702 native=2\n", COLLECTIVES["allreduce"][1], "x")
    checks.append(((split.collplan, split.native) == (2702, 2), f"tag inside a line: {split}"))
    timeout = Run("ring", 2)
    analyse(timeout, None, out.split("\ncollplan")[0], COLLECTIVES["allreduce"][1], "x")
    checks.append((timeout.status == "TIMEOUT" and timeout.last_case == "predef/int/sum", f"timeout: {timeout.why}"))
    for prog, coll in (("conformance_reduce_scatter_block", "reduce_scatter_block"),
                       ("conformance_reduce_scatter", "reduce_scatter"), ("conformance_reduce", "reduce"),
                       ("conformance_allgatherv", "allgatherv"), ("conformance_allgather", "allgather"),
                       ("conformance_gather", "gather"), ("conformance_scatter", "scatter")):
        checks.append((guess_collective(prog) == coll, f"collective of {prog}: {guess_collective(prog)}"))
    rs = Run("ring", 2)
    analyse(rs, 0, "\n".join(["collplan-stats: MPI_Reduce_scatter collplan=7 native=1",
                              "collplan-stats: MPI_Reduce_scatter_block collplan=50 native=0",
                              "collplan-stats: MPI_Reduce_scatter_c collplan=2 native=0",
                              "collplan-stats: MPI_Reduce collplan=9 native=9",
                              "collplan-stats: native 1 MPI_Reduce_scatter: non-commutative operation",
                              "conformance reduce_scatter: 10 checks passed"]),
            COLLECTIVES["reduce_scatter"][1], "x")
    checks.append(((rs.collplan, rs.native) == (9, 1) and list(rs.reasons) == ["MPI_Reduce_scatter: non-commutative "
                   "operation"], f"reduce_scatter stats: {rs.collplan} {rs.native} {rs.reasons}"))
    checks += self_test_multi()
    bad = [what for good, what in checks if not good]
    for what in bad:
        print(f"run_conformance self-test: wrong {what}")
    print(f"run_conformance self-test: {len(checks) - len(bad)} of {len(checks)} checks passed")
    return 1 if bad else 0


def self_test_multi() -> list[tuple[bool, str]]:
    """Programs of several collectives: the zip of the specs, the runs' environment and the share's calls, on a
    made-up listing."""
    def fake(rows):  # (spec, P, status, hash) as the lister prints them
        specs, cells = [], {}
        for spec, p, status, h in rows:
            if spec not in specs:
                specs.append(spec)
            cells[(spec, p)] = (Cell(spec, p, True, flags=status[3:].strip(), schedule=h) if status.startswith("ok")
                                else Cell(spec, p, False, reason=status[4:]))
        return specs, cells
    colls = MULTI_PROGRAMS["nb_lifetime"][0]
    listing = {c: fake([("only", p, "ok", f"h{p}") for p in range(1, 5)]) for c in colls}
    listing["allreduce"] = fake([(spec, p, st, h) for p in range(1, 5) for spec, st, h in (
        ("a", "ok", "x"), ("a2", "ok", "x"),  # the same schedule as a: no run of its own
        ("b", "ok needs_commutative", "y"), ("c", "ok idempotent_only", "z"),
        ("d", "ok" if p >= 3 else "n/a too few ranks", "w"))])
    listing["gather"] = fake([(g, p, "ok" if p != 2 or g == "g1" else "n/a no", f"{g}{p}")
                              for p in range(1, 5) for g in ("g1", "g2")])
    labels, cells = list_multi("", "nb_lifetime", [2, 4], listing=listing)
    at2 = sorted(lb for lb, p in cells if p == 2)
    c1, c2, c3, c4 = (cells[(f"#{i}", 4)] for i in range(1, 5))
    checks = [
        (labels == ["#1", "#2", "#3", "#4"] and at2 == ["#1", "#2", "#3"], f"multi runs {labels} at P=2 {at2}"),
        ([c.choices["COLLPLAN_ALLREDUCE"] for c in (c1, c2, c3, c4)] == ["a", "b", "c", "d"]
         and [c.choices["COLLPLAN_GATHER"] for c in (c1, c2, c3, c4)] == ["g1", "g2", "g1", "g2"]
         and cells[("#2", 2)].choices["COLLPLAN_GATHER"] == "g1", "multi zip of the specs"),
        (c1.native == () and "MPI_Iallreduce" in c1.calls and "MPI_Gather_init" in c1.calls
         and "MPI_Allreduce" in c1.calls, f"multi run #1: {c1.native} {c1.calls}"),
        (c2.native == ("gather@2",) and "MPI_Allreduce_init" not in c2.calls and "MPI_Igather" not in c2.calls
         and "MPI_Ibcast" in c2.calls, f"multi run #2 (needs_commutative, gather n/a at 2): {c2.native} {c2.calls}"),
        (c3.native == ("allreduce@4", "allreduce@2") and "MPI_Iallreduce" not in c3.calls,
         f"multi run #3 (idempotent_only): {c3.native}"),
        (c4.native == ("allreduce@2", "gather@2"), f"multi run #4: {c4.native}"),
    ]
    args = argparse.Namespace(mpirun="mpirun", mpirun_arg=[], lib="L.so", time_as_native=False, no_mpi_tuning=True,
                              skip_cases=None, budget_file=None)
    runner = Runner(args, "mpich", "nb_lifetime", "prog")
    runner.multi = cells
    cmd = runner.command("#4", 4)
    checks.append(("COLLPLAN_ALLREDUCE=d" in cmd and "COLLPLAN_GATHER=g2" in cmd and "COLLPLAN_BCAST=only" in cmd
                   and "CONFORMANCE_NATIVE=allreduce@2,gather@2" in cmd and cmd[-1] == "prog"
                   and "LD_PRELOAD=L.so" in cmd, f"multi command {cmd}"))
    run = Run("#1", 4)
    analyse(run, 0, "\n".join(["collplan-stats: MPI_Iallreduce collplan=5 native=1",
                               "collplan-stats: MPI_Allreduce_init collplan=3 native=0",
                               "collplan-stats: MPI_Igather collplan=2 native=2",
                               "collplan-stats: MPI_Ialltoallv collplan=0 native=9",  # not nb_lifetime's
                               "collplan-stats: native 2 MPI_Gather: datatype has holes",
                               "conformance nb_lifetime: 10 checks passed"]), c1.calls, "x")
    checks.append(((run.collplan, run.native) == (10, 3) and run.reasons == {"MPI_Gather: datatype has holes": 2},
                   f"multi stats {run.collplan} {run.native} {run.reasons}"))
    run2 = Run("#2", 4)
    analyse(run2, 0, "collplan-stats: MPI_Igather collplan=0 native=4\nconformance nb_lifetime: 1 checks passed",
            c2.calls, "x")
    checks.append((run2.share is None and share_enforced(c2) and not share_enforced(Cell("#9", 4, True, choices={
        "COLLPLAN_GATHER": "g"})), "multi share of a run whose counted collectives made no call"))
    given_labels, given = multi_given("vgaps", "allgatherv=ring,alltoallv=async", [3])
    g = given[("allgatherv=ring,alltoallv=async", 3)]
    checks.append((g.choices == {"COLLPLAN_ALLGATHERV": "ring", "COLLPLAN_ALLTOALLV": "async"}
                   and g.native == ("reduce_scatter",) and "MPI_Iallgatherv" in g.calls
                   and "MPI_Reduce_scatter" not in g.calls, f"--specs of a multi program: {g}"))
    for prog in MULTI_PROGRAMS:
        checks.append((guess_collective(f"build/conformance_{prog}") == prog, f"collective of conformance_{prog}"))
    checks += [(case_family("op17/allgather/dup2/n4/root1/seed5") == ("allgather", "dup"), "case_family of stress"),
               (case_family("a2av/pers/null/self") == ("a2av/pers/null", "self"), "case_family of self_inplace"),
               (comm_sizes("split", 5) == [5, 3, 2] and comm_sizes("split", 1) == [1]
                and comm_sizes("self", 4) == [4, 1], "comm_sizes")]
    return checks


# ---- command line --------------------------------------------------------------------------------------------
def parse_ranks(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-", 1)
            out += range(int(lo), int(hi) + 1)
        elif part:
            out.append(int(part))
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"bad rank list '{text}' (allowed: e.g. 1-8 or 1,2,4)")
    return sorted(set(out))


def guess_abi(mpirun: str) -> str:
    real = os.path.realpath(mpirun)
    for abi in ("openmpi", "mpich"):
        if abi in real or abi in mpirun:
            return abi
    try:
        text = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        text = ""
    return "openmpi" if ("Open MPI" in text or "OpenRTE" in text or "prterun" in text) else "mpich"


def guess_collective(program: str) -> str:
    base = os.path.basename(program)
    for c in sorted(COLLECTIVES, key=len, reverse=True):
        if re.search(rf"(^|_){c}(_|$|\.)", base):
            return c
    raise SystemExit(f"run_conformance: cannot tell the collective of '{program}' (give --collective: "
                     f"{', '.join(COLLECTIVES)})")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--self-test"]:
        return self_test()
    if argv[:1] == ["--merge"]:
        if len(argv) < 3:
            print("run_conformance: --merge OUT REPORT...", file=sys.stderr)
            return 2
        return merge(argv[1], argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpirun", required=True, help="the MPI's mpirun")
    ap.add_argument("--lib", required=True, help="libcollplan_pmpi.so built for that MPI")
    ap.add_argument("--lister", required=True, help="the list_algorithms program")
    ap.add_argument("--program", required=True, action="append", help="a conformance program (repeatable)")
    ap.add_argument("--collective", choices=sorted(COLLECTIVES), help="default: from the program's name")
    ap.add_argument("--abi", choices=("openmpi", "mpich"), help="default: guessed from mpirun")
    ap.add_argument("--mpirun-arg", action="append", default=[],
                    help="one more argument of mpirun (repeatable), e.g. --mpirun-arg=--tag-output")
    ap.add_argument("--ranks", default="1-8", help="rank counts, e.g. 1-8 or 1,2,4 (default 1-8)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per run (default 30)")
    ap.add_argument("--min-share", default="0.95",
                    help="least share of the collective's calls that must run collplan, or 'none' (default 0.95)")
    ap.add_argument("--report", help="write the markdown report here")
    ap.add_argument("--specs", help="only these specs, separated by ';' (specs the lister does not list run as given "
                    "at every P)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at the same time (default 1)")
    ap.add_argument("--budget", type=float, default=0, help="stop starting runs after this many seconds (0: no limit)")
    ap.add_argument("--budget-file", help="count the budget from this file's modification time (created if missing): "
                    "several runner invocations share one budget")
    ap.add_argument("--max-timeouts", type=int, default=0,
                    help="stop starting runs after this many timeouts (0: no limit)")
    ap.add_argument("--no-dedup", action="store_true", help="run specs with identical schedules separately")
    ap.add_argument("--all-inapplicable", action="store_true", help="run every cell where the algorithm does not apply")
    ap.add_argument("--skip-native", action="store_true", help="no native validation runs")
    ap.add_argument("--skip-cases", help="leave out the program's cases whose names contain one of these "
                    "comma-separated strings (CONFORMANCE_SKIP; for diagnosis)")
    ap.add_argument("--no-mpi-tuning", action="store_true", help="do not set the MPI settings for oversubscription")
    ap.add_argument("--time-as-native", action="store_true",
                    help="run every cell with COLLPLAN_<COLL>=native instead of its spec: what the same runs cost "
                         "with the MPI library's collectives (for sizing time budgets; says nothing about collplan)")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per run as it finishes")
    args = ap.parse_args(argv)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    args.ranks_text = args.ranks
    args.ranks = parse_ranks(args.ranks)
    args.min_share = None if args.min_share.lower() in ("none", "off", "0") else float(args.min_share)
    if args.time_as_native:
        args.min_share = None
    for path in [args.mpirun, args.lib, args.lister] + args.program:
        if not (os.path.exists(path) or shutil.which(path)):
            print(f"run_conformance: {path} not found", file=sys.stderr)
            return 2
    abi = args.abi or guess_abi(args.mpirun)
    all_ok, complete, mds = True, True, []
    for program in args.program:
        collective = args.collective or guess_collective(program)
        ok, md, summary = run_program(args, abi, os.path.abspath(program), collective)
        all_ok &= ok
        complete &= summary["skipped"] == 0
        mds.append(md)
    if args.report:
        os.makedirs(os.path.dirname(os.path.abspath(args.report)), exist_ok=True)
        with open(args.report, "w") as f:
            f.write("\n".join(mds))
    return 1 if not all_ok else 0 if complete else SKIP_EXIT


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
