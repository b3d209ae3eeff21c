"""Hostile input to every sub-command: one line on stderr starting 'collplan: error:', exit 2, no traceback, in
bounded memory and time. One table; each case is a command line (files it names are written first into a fresh
directory, `{d}` in an argument is that directory) and a fragment the error line must contain.

A case that fails here is a bug at the source: fix the reader or the option, not the table.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import collplan

ROOT = Path(__file__).resolve().parents[2]
MEMORY_LIMIT = 3 << 30   # RLIMIT_AS of every case (estimate --plot, mesh:P=32, run, packet all work in 600 MB)
TIMEOUT_S = 30

RING3 = collplan.schedule("allgather/ring", ranks=3).to_text()  # a valid schedule file to break
DEEP = 200_000
BINARY = bytes(range(256)) * 4
FILES = {
    "bin.sched": BINARY,
    "latin1.sched": RING3.replace("params \"\"", "params \"caf\xe9\"").encode("latin-1"),
    "noalg.sched": RING3.replace("algorithm allgather/ring\n", "").encode(),
    "noprefix.sched": RING3.replace("algorithm allgather/ring", "algorithm ring").encode(),
    # an extra eager send nobody receives: every simulator and the estimate must refuse it
    "unmatched.sched": RING3.replace("rank 1\n", "  5: | send to 1 tag 7 out[0+1]\nrank 1\n").encode(),
    "bin.csv": BINARY, "bin.json": BINARY, "bin.mtx": b"%%MatrixMarket matrix coordinate integer general\n\xff\n",
    "nan.csv": b"0,nan\n1,0\n", "inf.csv": b"0,inf\n1,0\n", "big.csv": b"0,1e400\n1,0\n", "neg.csv": b"0,-1\n1,0\n",
    "huge.csv": b"0,99999999999999999999999\n1,0\n", "bom.csv": b"\xef\xbb\xbf0,1\n1,0\n",
    "nan.json": b"[[0, NaN], [1, 0]]", "inf.json": b"[[0, Infinity], [1, 0]]",
    "nan.mtx": b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 nan\n",
    "deep.json": b"[" * DEEP + b"]" * DEEP,
    "frob.sched": RING3.replace("collective allgather", "collective frobnicate").encode(),
    # metadata strings: \xHH escapes are for control characters (a byte >= 0x80 made invalid UTF-8), and names
    # are names, not megabytes
    "xff.sched": RING3.replace("algorithm allgather/ring", 'algorithm "ring\\xff"').encode(),
    "xfftopo.sched": RING3.replace("topology full:3", 'topology "full:3\\xc3"').encode(),
    "longname.sched": RING3.replace("algorithm allgather/ring", "algorithm " + "a" * 10_000_000).encode(),
    "ansi.sched": RING3.replace("algorithm allgather/ring", 'algorithm "ring\\x1b[31m\\x00"').encode(),
    "wisdom-dup.json": b'{"format": "collplan-wisdom/1", "entries": [], "entries": []}',
    "wisdom-nul.json": b'{"format": "collplan-wisdom/1", "entries": [{"collective": "allreduce", '
                       b'"algorithm": "allreduce/ring", "note": "a\x00b"}]}',
    # entries of other keys that could not run: refused when read, not kept without a word
    "wisdom-unknown-alg.json": b'{"format": "collplan-wisdom/1", "entries": [{"collective": "bcast", '
                               b'"algorithm": "bcast/frobnicate"}]}',
    "wisdom-other-coll.json": b'{"format": "collplan-wisdom/1", "entries": [{"collective": "bcast", '
                              b'"algorithm": "allreduce/ring"}]}',
    "wisdom-bad-op.json": b'{"format": "collplan-wisdom/1", "entries": [{"collective": "allreduce", '
                          b'"op": "summ", "algorithm": "allreduce/ring"}]}',
    "wisdom-min-max.json": b'{"format": "collplan-wisdom/1", "entries": [{"collective": "bcast", '
                           b'"min_bytes": 100, "max_bytes": 10, "algorithm": "bcast/linear"}]}',
    "wisdom-bad-param.json": b'{"format": "collplan-wisdom/1", "entries": [{"collective": "bcast", '
                             b'"algorithm": "bcast/chain", "params": {"segments": 0}}]}',
    "deepobj.json": b'{"matrix": ' + b"[" * DEEP + b"]" * DEEP + b"}",
    "bin.toml": BINARY, "latin1.toml": b"name = \"caf\xe9\"\n[model]\nkind = \"hockney\"\n",
    "deep.toml": b"a = " + b"[" * DEEP + b"]" * DEEP + b"\n",
    "deeptable.toml": b"[" + b"a." * 50_000 + b"b]\n",
    "nanmodel.toml": b"[model]\nkind = \"hockney\"\nalpha = nan\nbeta = \"1ns/B\"\n",
    "wisdom.json": b"[" * DEEP + b"]" * DEEP,
    "binwisdom.json": BINARY,
}

VERIFY = ["verify", "--collective", "allgather", "--algorithm", "ring"]
EST = ["estimate", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", "--sizes", "1KiB"]
SIM = ["simulate", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", "--machine", "ib-qdr"]
PLAN = ["plan", "--collective", "allgather", "--ranks", "4", "--machine", "ib-qdr", "--sizes", "1KiB", "--no-progress"]
I64 = "9223372036854775808"  # 2^63
U64 = "18446744073709551616"  # 2^64

CASES = [  # (id, argv, fragment of the error line)
    # --- readers: binary, non-UTF-8, deep, NaN/inf ------------------------------------------------------------
    ("schedule-binary", ["verify", "--schedule", "{d}/bin.sched"], "offset"),
    ("schedule-latin1", ["estimate", "--schedule", "{d}/latin1.sched", "--machine", "ib-qdr"], "offset"),
    ("simulate-schedule-binary", ["simulate", "--schedule", "{d}/bin.sched", "--machine", "ib-qdr"], "bin.sched"),
    ("export-schedule-binary", ["export", "--schedule", "{d}/bin.sched", "-o", "-"], "bin.sched"),
    ("matrix-binary-csv", ["matrix", "stats", "{d}/bin.csv"], "offset"),
    ("matrix-binary-json", ["matrix", "stats", "{d}/bin.json"], "offset"),
    ("matrix-binary-mtx", ["matrix", "stats", "{d}/bin.mtx"], "offset"),
    ("estimate-matrix-binary", ["estimate", "--collective", "alltoallv", "--algorithm", "async", "--matrix",
                                "{d}/bin.csv", "--machine", "ib-qdr"], "bin.csv"),
    ("matrix-nan", ["matrix", "stats", "{d}/nan.csv"], "nan"),
    ("matrix-inf", ["matrix", "stats", "{d}/inf.csv"], "inf"),
    ("matrix-1e400", ["matrix", "stats", "{d}/big.csv"], "1e400"),
    ("matrix-negative", ["matrix", "stats", "{d}/neg.csv"], "negative"),
    ("matrix-beyond-64-bits", ["matrix", "stats", "{d}/huge.csv"], "99999999999999999999999"),
    ("matrix-json-nan", ["matrix", "stats", "{d}/nan.json"], "non-integer"),
    ("matrix-json-inf", ["matrix", "stats", "{d}/inf.json"], "non-integer"),
    ("matrix-mtx-nan", ["matrix", "stats", "{d}/nan.mtx"], "nan"),
    ("matrix-deep-json", ["matrix", "stats", "{d}/deep.json"], "nested"),
    ("matrix-deep-json-object", ["matrix", "stats", "{d}/deepobj.json"], "nested"),
    ("machine-binary", EST + ["--machine", "{d}/bin.toml"], "offset"),
    ("machine-latin1", SIM[:-2] + ["--machine", "{d}/latin1.toml"], "offset"),
    ("machine-deep-toml", EST + ["--machine", "{d}/deep.toml"], "nested"),
    ("machine-deep-table", EST + ["--machine", "{d}/deeptable.toml"], "deeptable.toml"),
    ("machine-nan", EST + ["--machine", "{d}/nanmodel.toml"], "nan"),
    ("wisdom-deep", PLAN + ["--wisdom", "{d}/wisdom.json"], "nested"),
    ("wisdom-binary", PLAN + ["--wisdom", "{d}/binwisdom.json"], "binwisdom.json"),
    # --- integers beyond 64 bits, negative where unsigned ---------------------------------------------------
    ("ranks-2^63", VERIFY + [f"--ranks={I64}"], I64),
    ("ranks-negative", VERIFY + ["--ranks=-1"], "-1"),
    ("ranks-float", VERIFY + ["--ranks=4.0"], "4.0"),
    ("estimate-ranks-2^64", EST[:5] + [f"--ranks={U64}", "--machine", "ib-qdr"], U64),
    ("simulate-ranks-2^63", SIM[:5] + [f"--ranks={I64}", "--machine", "ib-qdr"], I64),
    ("export-ranks-2^63", ["export", "--collective", "allgather", "--algorithm", "ring", f"--ranks={I64}", "-o", "-"],
     I64),
    ("plan-ranks-2^63", ["plan", "--collective", "allgather", f"--ranks={I64}", "--machine", "ib-qdr"], I64),
    ("simulate-seed-negative", SIM + ["--seed=-1"], "-1"),
    ("simulate-seed-2^64", SIM + [f"--seed={U64}"], U64),
    ("verify-max-ranks-2^63", ["verify", "--all", f"--max-ranks={I64}"], I64),
    ("testset-seed-negative", ["matrix", "stats", "testset1:P=4,d=2,seed=-1"], "seed=-1"),
    ("testset-units-negative", ["matrix", "stats", "testset1:P=4,d=2,units=-5"], "units=-5"),
    ("testset2-max-units-negative", ["matrix", "stats", "testset2:P=4,d=2,max_units=-5"], "max_units=-5"),
    ("testset-P-2^64", ["matrix", "stats", f"testset1:P={U64},d=2"], U64),
    ("testset-d-negative", ["matrix", "stats", "testset1:P=4,d=-2"], "d=-2"),
    ("testset-seed-float", ["matrix", "stats", "testset1:P=4,d=2,seed=1.5"], "1.5"),
    ("mesh-seed-2^64", ["matrix", "generate", f"mesh:P=4,refine=0,seed={U64}", "-o", "-"], U64),
    ("param-2^64", ["verify", "--collective", "alltoall", "--algorithm", "bruck", "--ranks", "8", "--param",
                    f"k={U64}"], U64),
    ("topology-2^64", VERIFY + ["--topology", f"torus:{U64}x2"], U64),
    ("sizes-2^64", EST[:-2] + ["--machine", "ib-qdr", "--sizes", f"{U64}B"], U64),
    ("plan-keep-negative", PLAN + ["--keep=-1"], "-1"),
    ("plan-reps-2^63", PLAN + [f"--reps={I64}"], I64),
    ("plan-prune-nan", PLAN + ["--prune=nan"], "nan"),
    ("plan-target-negative", PLAN + ["--evaluator", "measure", "--target=-1s"], "-1s"),
    ("tune-r-nan", ["tune", "--algorithm", "circgos", "--topology", "ring:8", "--r", "nan"], "nan"),
    # the parameter search indexed the grid's first side, which full: has not (SIGSEGV before)
    ("tune-circgos-full", ["tune", "--algorithm", "circgos", "--topology", "full:729", "--r", "10"], "full:729"),
    ("tune-torgos-full", ["tune", "--algorithm", "torgos", "--topology", "full:81", "--r", "50"], "full:81"),
    ("tune-max-memory", ["tune", "--algorithm", "circgos", "--topology", "ring:81", "--r", "10", "--max-memory",
                         "1KiB"], "(limit 1.00KiB, --max-memory)"),
    # flow and packet: the per-node port queues and the per-link arrays count (they ran in 1 MiB's estimate before)
    ("simulate-flow-max-memory", ["simulate", "--collective", "bcast", "--algorithm", "binomial", "--topology",
                                  "torus:32x32", "--fidelity", "flow", "--model", "hockney:alpha=1us,beta=1ns/B",
                                  "--max-memory", "2MiB"], "simulate flow of bcast/binomial at P=1024 needs about"),
    ("simulate-packet-max-memory", ["simulate", "--collective", "bcast", "--algorithm", "binomial", "--topology",
                                    "torus:32x32", "--fidelity", "packet", "--model", "hockney:alpha=1us,beta=1ns/B",
                                    "--max-memory", "2MiB"], "simulate packet of bcast/binomial at P=1024 needs about"),
    # --max-memory: argparse printed "invalid parse_max_memory value" and named no allowed form; TiB was refused
    ("max-memory-word", EST[:-2] + ["--machine", "ib-qdr", "--max-memory", "abc"],
     "argument --max-memory: size 'abc' is invalid (allowed: a non-negative integer with an optional unit B, KB, MB, "
     "GB, TB, KiB, MiB, GiB, TiB)"),
    ("max-memory-zero", EST[:-2] + ["--machine", "ib-qdr", "--max-memory", "0B"],
     "argument --max-memory: size '0B' is invalid (allowed: a size of at least 1 byte, such as 4GiB)"),
    ("dissemination-ranks-2^63", ["dissemination", f"--ranks={I64}"], I64),
    ("dissemination-n-max-negative", ["dissemination", "--ranks=4", "--n-max=-1"], "-1"),
    ("run-iters-2^63", ["run", "--collective", "barrier", f"--iters={I64}"], I64),
    ("run-warmup-negative", ["run", "--collective", "barrier", "--warmup=-1"], "-1"),
    ("run-sizes-64GiB", ["run", "--collective", "allgather", "--sizes", "64GiB", "--check-only"], "64GiB"),
    ("calibrate-reps-negative", ["calibrate", "--reps=-3"], "-3"),
    ("calibrate-max-size-negative", ["calibrate", "--max-size=-1"], "-1"),
    # --- valid-looking input that is wrong --------------------------------------------------------------------
    ("estimate-schedule-no-algorithm-line", ["estimate", "--schedule", "{d}/noalg.sched", "--machine", "ib-qdr",
                                             "--sizes", "1KiB"], None),
    ("estimate-schedule-no-prefix", ["estimate", "--schedule", "{d}/noprefix.sched", "--machine", "ib-qdr",
                                     "--sizes", "1KiB"], None),
    ("simulate-loggp-unmatched-send", ["simulate", "--schedule", "{d}/unmatched.sched", "--fidelity", "loggp",
                                       "--machine", "ib-qdr", "--size", "8B"], "rank 0 op 5 (send to 1 tag 7)"),
    ("machine-directory", EST + ["--machine", "{d}/dir.toml"], "Is a directory"),
    ("spec-key-twice", ["matrix", "stats", "testset1:P=4,d=2,P=5"], "P=5"),
    ("mesh-too-many-parts", ["matrix", "stats", "mesh:P=1000,refine=0"], "refine"),
    ("mesh-refine-6", ["matrix", "stats", "mesh:P=4,refine=6"], "refine=6"),
    ("param-twice", EST + ["--machine", "ib-qdr", "--param", "k=2", "--param", "k=3"],
     "--param k is given twice (k=2, k=3"),
    ("run-allreduce-7-bytes", ["run", "--collective", "allreduce", "--sizes", "7"], "multiples of 8 bytes"),
    ("estimate-plot-empty", EST + ["--machine", "ib-qdr", "--plot", ""], "--plot is empty"),
    ("export-output-folder", ["export", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4",
                              "-o", "{d}/x.goal/"], "names a folder"),
    ("plan-wisdom-empty", PLAN + ["--wisdom", ""], "--wisdom is empty"),
    ("estimate-model-overflows", EST + ["--model", "hockney:alpha=1e308s,beta=1ns/B"], "overflows"),
    ("tune-r-overflows", ["tune", "--algorithm", "circgos", "--topology", "ring:16", "--r", "1e308"],
     "r=1e+308 is too large"),
    ("verify-unknown-collective", ["verify", "--schedule", "{d}/frob.sched"], "reduce_scatter_block, reduce_scatter"),
    ("verify-escape-over-7f", ["verify", "--schedule", "{d}/xff.sched"], "control character"),
    ("estimate-escape-over-7f", ["estimate", "--schedule", "{d}/xfftopo.sched", "--machine", "ib-qdr"],
     "control character"),
    ("simulate-escape-over-7f", ["simulate", "--schedule", "{d}/xff.sched", "--machine", "ib-qdr"],
     "control character"),
    ("verify-10MB-name", ["verify", "--schedule", "{d}/longname.sched"], "at most 4096 bytes"),
    ("ranks-300-digits", ["verify", "--collective", "allgather", "--algorithm", "ring", "--ranks", "1" + "0" * 300],
     "(301 characters)"),
    ("size-300-digits", EST + ["--machine", "ib-qdr", "--sizes", "1" + "0" * 300 + "B"], "'1" + "0" * 36 + "...' is invalid"),
    ("plan-wisdom-key-twice", PLAN + ["--wisdom", "{d}/wisdom-dup.json"], "'entries' appears twice"),
    ("plan-wisdom-raw-nul", PLAN + ["--wisdom", "{d}/wisdom-nul.json"], "control character"),
    ("plan-wisdom-unknown-algorithm", PLAN + ["--wisdom", "{d}/wisdom-unknown-alg.json"], "bcast/frobnicate"),
    ("plan-wisdom-other-collective", PLAN + ["--wisdom", "{d}/wisdom-other-coll.json"], "is a allreduce algorithm"),
    ("plan-wisdom-bad-op", PLAN + ["--wisdom", "{d}/wisdom-bad-op.json"], "unknown reduction operation 'summ'"),
    ("plan-wisdom-min-over-max", PLAN + ["--wisdom", "{d}/wisdom-min-max.json"], "empty size range"),
    ("plan-wisdom-bad-param", PLAN + ["--wisdom", "{d}/wisdom-bad-param.json"], "segments=0 out of range"),
    ("export-tuning-bad-wisdom", ["export-tuning", "--format", "ompi-rules", "--wisdom",
                                  "{d}/wisdom-other-coll.json"], "entry 0"),
]
# Cases whose expected error line is not checked beyond the format (the output is valid: a table)
VALID = {"estimate-schedule-no-algorithm-line", "estimate-schedule-no-prefix"}


def _limits():  # in the child: bounded address space and CPU time
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (TIMEOUT_S, TIMEOUT_S))


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("hostile")
    for name, data in FILES.items():
        (d / name).write_bytes(data)
    (d / "dir.toml").mkdir()
    return d


def collplan(argv, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "collplan", *argv], capture_output=True, text=True, errors="replace",
                          timeout=TIMEOUT_S, preexec_fn=_limits, cwd=cwd, env=env)


def assert_one_line(p, needle):
    err = p.stderr
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert p.returncode == 2, f"exit {p.returncode}\nstdout: {p.stdout[:2000]}\nstderr: {err[:2000]}"
    assert len(lines) == 1 and lines[0].startswith("collplan: error: "), err[:2000]
    assert "\0" not in err and "\0" not in p.stdout
    if needle is not None:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("argv,needle", [c[1:] for c in CASES if c[0] not in VALID],
                         ids=[c[0] for c in CASES if c[0] not in VALID])
def test_hostile_input_is_one_line_exit_2(files, argv, needle):
    argv = [a.replace("{d}", str(files)) for a in argv]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI_", "PMIX_"))}
    assert_one_line(collplan(argv, files, env), needle)


def test_control_characters_of_a_schedule_are_shown_escaped(files):
    """An algorithm name with an ANSI escape and a NUL (written by export as \\x1b and \\x00) reaches the terminal
    escaped, from verify's line and from estimate's table alike."""
    for argv in (["verify", "--schedule", f"{files}/ansi.sched"],
                 ["estimate", "--schedule", f"{files}/ansi.sched", "--machine", "ib-qdr", "--sizes", "1KiB"]):
        p = collplan(argv, files)
        assert p.returncode == 0, p.stderr
        assert "\x1b" not in p.stdout and "\x00" not in p.stdout and "ring\\x1b[31m\\x00" in p.stdout, p.stdout


def test_a_byte_order_mark_is_not_data(files):
    p = collplan(["matrix", "stats", "--json", str(files / "bom.csv")], files)
    assert p.returncode == 0 and json.loads(p.stdout)["ranks"] == 2, p.stderr


def test_a_candidate_over_the_memory_limit_is_declined_and_the_rest_printed(files):
    """--algorithm all: the whole ring allreduce at P = 1024 needs ~230 MiB; under --max-memory 64MiB it is declined
    with its reason and the table of the others is printed (it used to end the whole run with exit 2). Simplex
    ports, so that no candidate is priced from rank 0's program alone (docs/models.md, "One rank for every rank");
    with duplex ports the ring is, and fits."""
    simplex = "hockney:alpha=1.6us,beta=0.3125ns/B,duplex=0"
    p = collplan(["estimate", "--collective", "allreduce", "--algorithm", "all", "--ranks", "1024", "--model",
                  simplex, "--sizes", "1KiB", "--max-memory", "64MiB", "--no-progress"], files)
    assert p.returncode == 0, p.stderr
    assert "recursive_doubling" in p.stdout and "# declined ring: the schedule of allreduce/ring at P=1024 needs" \
        in p.stdout.replace("\n   ", ""), p.stdout
    p = collplan(["estimate", "--collective", "allreduce", "--algorithm", "ring", "--ranks", "1024", "--model",
                  simplex, "--sizes", "1KiB", "--max-memory", "64MiB"], files)
    assert p.returncode == 2 and "needs about" in p.stderr, p.stderr  # one named algorithm still refuses
    p = collplan(["estimate", "--collective", "allreduce", "--algorithm", "ring", "--ranks", "1024", "--machine",
                  "ib-qdr", "--sizes", "1KiB", "--max-memory", "64MiB"], files)
    assert p.returncode == 0 and "ring" in p.stdout, p.stderr  # rank 0's program: a few KiB


@pytest.mark.parametrize("name", ["noalg.sched", "noprefix.sched"])
def test_a_schedule_without_a_registry_name_is_estimated(files, name):
    """A valid schedule need not name a registered algorithm: it is estimated under the name it has."""
    p = collplan(["estimate", "--schedule", str(files / name), "--machine", "ib-qdr", "--sizes", "1KiB"], files)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "1KiB" in p.stdout, p.stdout


# --- under mpirun: the error line must survive the launcher (Open MPI's ends the job at the first non-zero exit)
MPI_CASES = [
    ("openmpi", 2, ["calibrate", "--reps=-3"], "--reps -3"),
    ("openmpi", 3, ["calibrate", "--max-size=-1"], "'-1'"),
    ("openmpi", 2, ["plan", "--collective", "allgather", "--machine", "ib-qdr", "--evaluator", "measure",
                    "--target=-1s"], "-1s"),
    ("mpich", 2, ["calibrate", "--reps=-3"], "--reps -3"),
]


@pytest.mark.parametrize("abi,n,argv,needle", MPI_CASES, ids=[f"{c[0]}-{c[2][0]}-{c[2][-1]}" for c in MPI_CASES])
def test_hostile_input_under_mpirun_prints_its_line_once(abi, n, argv, needle):
    from test_mpi import mpirun
    r = mpirun(abi, n, [sys.executable, "-m", "collplan", *argv])
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("collplan: error: ")]
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_run_output_has_no_nul_byte_under_open_mpi():
    """Open MPI's MPI_Get_library_version ends in a NUL byte: it must not reach the table or the JSON."""
    from test_mpi import mpirun
    r = mpirun("openmpi", 2, [sys.executable, "-m", "collplan", "run", "--collective", "barrier", "--check-only",
                              "--json"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "\0" not in r.stdout and "\\u0000" not in r.stdout
    assert json.loads(r.stdout)["mpi"].startswith("Open MPI v")


def test_run_summarises_the_fastest_per_size_and_writes_csv(tmp_path):
    from test_mpi import mpirun
    csv_path = tmp_path / "run.csv"
    r = mpirun("openmpi", 2, [sys.executable, "-m", "collplan", "run", "--collective", "allgather", "--sizes",
                              "64,4KiB", "--iters", "3", "--warmup", "1", "--csv", str(csv_path)])
    assert r.returncode == 0, r.stdout + r.stderr
    summary = r.stdout.split("# fastest per size", 1)[1].splitlines()
    assert summary[1].split() == ["size", "fastest", "time", "native", "ratio"], r.stdout
    assert [ln.split()[0] for ln in summary[2:4]] == ["64B", "4KiB"], r.stdout
    lines = csv_path.read_text().splitlines()
    assert lines[0].startswith("algorithm,params,size_bytes") and len(lines) > 4, lines[:3]
    both = mpirun("openmpi", 2, [sys.executable, "-m", "collplan", "run", "--collective", "barrier", "--json",
                                 "--csv"])
    assert both.returncode == 2 and "cannot both write to standard output" in both.stderr


ALLTOALLV = """
import numpy as np
from collplan import CollplanError
from collplan import mpi as cmpi
MPI, _ = cmpi.backend()  # points mpi4py at the MPI collplan was built for
comm = MPI.COMM_SELF
x, y = np.arange(4.0), np.zeros(4)
for call, args, kw in [
        (cmpi.alltoallv, (x, [], y, [4]), {}),                      # shorter than P: was read past its end
        (cmpi.alltoallv, (x, [4], y, [4, 4]), {}),                  # longer than P
        (cmpi.alltoallv_init, (x, [-1], y, [4]), {}),               # negative
        (cmpi.alltoallv, (x, [4], y, [4]), {"sdispls": [1]}),       # beyond the send buffer
        (cmpi.alltoallv, (x, [2], y, [2]), {"rdispls": [3]}),       # beyond the receive buffer
        (cmpi.alltoallv, (None, None, y, [5]), {}),                 # in place, beyond the buffer
        (cmpi.alltoallv, (x, ["a"], y, [4]), {}),
        (cmpi.alltoallv, (x, [4.5], y, [4]), {}),                   # was cut to 4
        (cmpi.alltoallv, (x, [4], [0.0] * 4, [4]), {}),             # a list to receive: the result was lost
        (cmpi.alltoallv, (x, [4], y, [4]), {"algorithm": "auto", "wisdom": WISDOM}),
]:
    try:
        call(comm, *args, **kw)
        print("accepted", args, kw)
    except CollplanError as e:
        print("error:", e)
"""


def test_alltoallv_counts_are_validated(tmp_path):
    (tmp_path / "w.json").write_bytes(b"\xff\xfe")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI_", "PMIX_"))}
    script = f"WISDOM = {str(tmp_path / 'w.json')!r}\n" + ALLTOALLV
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT_S, env=env,
                       cwd=tmp_path, preexec_fn=_limits)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    out = r.stdout.splitlines()
    assert out[:-1] == [
        "error: sendcounts has 0 entries (allowed: one per rank, 1)",
        "error: recvcounts has 2 entries (allowed: one per rank, 1)",
        "error: sendcounts[0] = -1 is negative (allowed: >= 0)",
        "error: sdispls[0] + sendcounts[0] = 1 + 4 is beyond the buffer of 4 elements",
        "error: rdispls[0] + recvcounts[0] = 3 + 2 is beyond the buffer of 4 elements",
        "error: rdispls[0] + recvcounts[0] = 0 + 5 is beyond the buffer of 4 elements",
        "error: sendcounts[0] = 'a' is not an integer (allowed: integers >= 0)",
        "error: sendcounts[0] = 4.5 is not an integer (allowed: integers >= 0)",
        "error: recvbuf is a list, which the result cannot be written into (allowed: a writable object of the buffer "
        "protocol, e.g. a NumPy array)",
    ], r.stdout
    assert out[-1].startswith(f"error: wisdom file {tmp_path / 'w.json'}") and "offset 0" in out[-1], r.stdout


def test_numpy_integers_are_integers_and_bools_are_not():
    """ranks and root from NumPy (np.int64, np.int32) are integers to the API; True is not a rank count."""
    import numpy as np
    from collplan import CollplanError, schedule
    from collplan.planner import resolve_problem
    assert schedule("allgather/ring", ranks=np.int64(8)).ranks == 8
    s = schedule("bcast/binomial", ranks=np.int32(8), root=np.int64(3))
    assert (s.ranks, s.root) == (8, 3)
    assert resolve_problem("gather", np.int64(4), root=np.int64(2)).root == 2
    for bad in (True, 8.0, "8"):
        with pytest.raises(CollplanError, match="number of ranks"):
            schedule("allgather/ring", ranks=bad)


@pytest.mark.parametrize("call,needle", [
    (lambda c: c.schedule("allgather/ring", topology=8), "topology 8 is invalid"),
    (lambda c: c.verify(None), "verify needs a Schedule"),
    (lambda c: c.estimate(None, [8], machine="ib-qdr"), "estimate needs a Schedule"),
    (lambda c: c.sim.simulate(None, machine="ib-qdr"), "simulate needs a Schedule"),
    (lambda c: c.schedule("alltoallv/async", ranks=2, matrix=[[0, -1], [1, 0]]), "matrix entry -1 at (0, 1)"),
    (lambda c: c.schedule("allgatherv/ring", ranks=2, counts=[1, 4.5]), "counts entry 4.5 at 1"),
], ids=["topology-int", "verify-None", "estimate-None", "simulate-None", "matrix-negative", "counts-fraction"])
def test_the_api_names_the_bad_argument(call, needle):
    """A wrong argument to the Python API is a CollplanError naming it, never nanobind's signature dump."""
    import collplan.sim as _  # noqa: F401 (collplan.sim for the simulate case)
    from collplan import CollplanError
    with pytest.raises(CollplanError) as e:
        call(sys.modules["collplan"])  # (this file's collplan() runs the CLI)
    assert needle in str(e.value)


def test_a_plan_answers_for_a_size_string():
    from collplan.planner import plan
    p = plan("allreduce", ranks=4, machine="ib-qdr", sizes="8B..64KiB", progress=False)
    assert p.choice("4KiB") == p.choice(4096)


@pytest.mark.parametrize("call,needle", [
    (lambda u: u.testset1(2**70, 2), "P=1180591620717411303424"),
    (lambda u: u.testset2(4, 2, seed=-1), "seed=-1"),
    (lambda u: u.testset1(4, 2, units=0), "units=0"),
    (lambda u: u.mesh_matrix(0), "P=0"),
], ids=["testset1-P-2^70", "testset2-seed-negative", "testset1-units-0", "mesh-P-0"])
def test_generators_refuse_out_of_range_integers_from_python(call, needle):
    """The API is a boundary too: nanobind's TypeError/OverflowError for an int beyond the C type never escapes."""
    from collplan import CollplanError, unstructured
    with pytest.raises(CollplanError, match="invalid") as e:
        call(unstructured)
    assert needle in str(e.value)


def test_loggp_with_g_and_G_zero_is_logp(files):
    """g = 0 and G = 0 are a model, not an error (docs/models.md): LogGP at G = 0 is LogP, a message costs 2o + L
    at any size; the ring allgather on 4 ranks is 3 of them."""
    p = collplan(EST + ["--model", "loggp:L=1us,o=1us,g=0s,G=0s/B", "--sizes", "1KiB,1MiB", "--json"], files)
    assert p.returncode == 0, p.stderr
    times = [r["time_s"] for r in json.loads(p.stdout)["results"]]
    assert len(times) == 2 and all(abs(t - 9e-6) < 1e-12 for t in times), times
