"""The command line: outputs, JSON fields, and one-line errors with exit code 2."""
from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import collplan

ROOT = Path(__file__).resolve().parents[2]


def run(*args, check=None):
    p = subprocess.run([sys.executable, "-m", "collplan", *args], capture_output=True, text=True, timeout=300)
    if check is not None:
        assert p.returncode == check, f"exit {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}"
    return p


def test_algorithms_json_lists_every_collective_and_parameter_ranges():
    out = json.loads(run("algorithms", "--json", check=0).stdout)["algorithms"]
    names = {a["name"] for a in out}
    for required in ["allgather/ring", "allgather/recursive_doubling", "allgather/bruck", "alltoall/pairwise",
                     "alltoall/bruck", "allreduce/recursive_doubling", "allreduce/ring", "allreduce/rabenseifner",
                     "barrier/dissemination"]:
        assert required in names
    bruck = next(a for a in out if a["name"] == "alltoall/bruck")
    k = next(p for p in bruck["params"] if p["name"] == "k")
    assert (k["default"], k["min"]) == ("2", 2)
    for a in out:
        assert set(a) >= {"name", "collective", "summary", "source", "params", "topologies"}


@pytest.mark.parametrize("alg", [a["name"] for a in collplan.algorithms()])
def test_every_algorithm_file_has_the_design_header(alg):
    path = ROOT / "src" / "collplan" / "algorithms" / (alg + ".cpp")
    assert path.exists(), f"{alg} must live in {path}"
    head = path.read_text().split("#include")[0]
    for field in ["Source:", "Preconditions:", "Rounds:", "Cost:", "Memory:", "Example:"]:
        assert field in head, f"{path.name} header lacks {field}"


def test_verify_one_algorithm_text_and_json():
    p = run("verify", "--collective", "allreduce", "--algorithm", "recursive_doubling", "--ranks", "6",
            "--op", "noncommutative", check=0)
    assert "ok" in p.stdout and "allreduce/recursive_doubling" in p.stdout
    r = json.loads(run("verify", "--collective", "allgather", "--algorithm", "bruck", "--topology", "ring:7",
                       "--json", check=0).stdout)
    assert r["ok"] and r["ranks"] == 7 and r["topology"] == "ring:7"


def test_verify_at_scale_walks_rank_zero_for_every_rank_and_says_so():
    """Above 1,024 ranks a symmetric allgather or alltoall is verified from rank 0's program, every other rank's
    compared with rank 0's moved (verify_by_symmetry): the same answer as the whole walk (--whole), which names every
    rank's ops; recursive doubling's data does not move with its ranks, so it falls back to the whole walk."""
    for coll, alg in [("allgather", "ring"), ("alltoall", "pairwise"), ("alltoall", "bruck")]:
        one = json.loads(run("verify", "--collective", coll, "--algorithm", alg, "--ranks", "1100", "--json",
                             "--no-progress", check=0).stdout)
        whole = json.loads(run("verify", "--collective", coll, "--algorithm", alg, "--ranks", "1100", "--json",
                               "--whole", check=0).stdout)
        assert one["ok"] and whole["ok"] and one["one_rank"] and not whole["one_rank"], (one, whole)
        assert one["ops"] == whole["ops"]
    p = run("verify", "--collective", "allgather", "--algorithm", "ring", "--ranks", "1100", "--no-progress", check=0)
    assert "rank 0's program walked for every rank under cyclic symmetry" in p.stdout, p.stdout
    p = run("verify", "--collective", "allgather", "--algorithm", "recursive_doubling", "--ranks", "2048",
            "--no-progress", "--json", check=0)
    assert json.loads(p.stdout)["ok"] and not json.loads(p.stdout)["one_rank"]
    assert "cannot stand for every rank" in p.stderr and "walking every rank's program" in p.stderr, p.stderr


def test_verify_reports_a_real_failure_with_exit_1():
    # The ring allreduce reduces in rotated order: not valid for a non-commutative operation.
    p = run("verify", "--collective", "allreduce", "--algorithm", "ring", "--ranks", "4", "--op", "noncommutative",
            "--json", check=1)
    r = json.loads(p.stdout)
    assert not r["ok"] and r["reason"] == "order"


def test_verify_all_passes_and_summarises():
    p = run("verify", "--all", "--max-ranks", "24", check=0)
    assert re.search(r"\d+ algorithms, \d+ cases \(P <= 24\), 0 failed", p.stdout), p.stdout
    j = json.loads(run("verify", "--all", "--max-ranks", "12", "--json", check=0).stdout)
    assert j["failures"] == [] and all(r["passed"] == r["cases"] for r in j["algorithms"])


def test_verify_says_whether_an_allreduce_is_rank_consistent(tmp_path):
    p = run("verify", "--collective", "allreduce", "--algorithm", "recexch", "--ranks", "9", "--param", "k=3", check=0)
    assert len(p.stdout.splitlines()) == 1 and p.stdout.rstrip().endswith("ops, ok, rank-consistent"), p.stdout
    nway = ["verify", "--collective", "allreduce", "--algorithm", "nway_dissemination", "--ranks", "3", "--param", "n=1"]
    p = run(*nway, check=0)
    assert len(p.stdout.splitlines()) == 1 and p.stdout.rstrip().endswith(
        "ops, ok, not rank-consistent: out[0]: rank 0 computes (x1+(x2+x0)), rank 1 computes (x2+(x0+x1))"), p.stdout
    r = json.loads(run(*nway, "--json", check=0).stdout)
    assert r["ok"] and r["rank_consistent"] is False and r["consistency"].startswith("out[0]: rank 0 computes")
    r = json.loads(run(*nway, "--param", "forward=contributions", "--op", "noncommutative", "--json", check=0).stdout)
    assert r["ok"] and r["rank_consistent"] is True and r["consistency"] == ""
    p = run("verify", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", check=0)
    assert "rank-consistent" not in p.stdout
    # A schedule file that claims rank_consistent falsely fails.
    text = collplan.schedule("allreduce/nway_dissemination", ranks=3, params={"n": 1}).to_text()
    f = tmp_path / "claims.txt"
    f.write_text(text.replace("\nflags needs_commutative", "\nflags needs_commutative rank_consistent", 1))
    p = run("verify", "--schedule", str(f), check=1)
    assert "FAILED (rank-inconsistent): the schedule declares rank_consistent but out[0]" in p.stdout, p.stdout


def test_verify_op_accepts_every_operation_of_the_table():
    for op in collplan.api.OPS:
        run("verify", "--collective", "allreduce", "--algorithm", "rabenseifner", "--ranks", "5", "--op", op, check=0)
    p = run("verify", "--collective", "allreduce", "--algorithm", "rabenseifner", "--ranks", "5", "--op", "avg")
    assert p.returncode == 2 and "maxloc" in p.stderr


def test_verify_all_counts_the_rank_consistent_cases():
    p = run("verify", "--all", "--max-ranks", "6", "--collective", "allreduce", check=0)
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["algorithm", "cases", "passed", "declined", "consistent"]
    rows = {ln.split()[0]: [int(x) for x in ln.split()[1:]] for ln in lines[1:] if ln.startswith("allreduce/")}
    assert rows["allreduce/recexch"][3] == rows["allreduce/recexch"][0] > 0
    assert 0 < rows["allreduce/nway_dissemination"][3] < rows["allreduce/nway_dissemination"][0]
    assert rows["allreduce/nway_dissemination_plain"][3] == 7  # P = 1 only, n = 1..7
    j = json.loads(run("verify", "--all", "--max-ranks", "4", "--json", check=0).stdout)
    got = {r["algorithm"]: (r["rank_consistent"], r["cases"]) for r in j["algorithms"]}
    assert got["allreduce/ring"][0] == got["allreduce/ring"][1] > 0
    assert got["allgather/ring"][0] == got["allgather/ring"][1] > 0  # nothing computed: consistent


def test_estimate_json_fields_and_bounds():
    p = run("estimate", "--collective", "allgather", "--algorithm", "all", "--topology", "ring:12",
            "--model", "hockney:alpha=2us,beta=1ns/B", "--sizes", "16B..64KiB", "--json", check=0)
    res = json.loads(p.stdout)["results"]
    assert {r["algorithm"] for r in res} >= {"allgather/ring", "allgather/bruck"}
    for r in res:
        assert set(r) == {"collective", "algorithm", "params", "ranks", "topology", "size_bytes", "time_s",
                          "lower_bound_s"}
        assert r["time_s"] >= r["lower_bound_s"] * (1 - 1e-12) > 0
    ring = {r["size_bytes"]: r["time_s"] for r in res if r["algorithm"] == "allgather/ring"}
    assert ring[1024] == pytest.approx(11 * (2e-6 + 1024e-9))  # (P-1)(alpha + m beta)
    declined = json.loads(p.stdout)["declined"]
    assert "allgather/recursive_doubling" in [d["algorithm"] for d in declined]  # P = 12 is no power of two
    assert all(d["reason"] for d in declined)  # (the 2-D gossip algorithms decline a ring too)


def test_estimate_of_a_symmetric_schedule_at_65536_ranks_walks_one_rank():
    # the ring allreduce at P = 65,536 is 17 billion ops whole; its estimate walks rank 0's 4 P ops for every rank
    # (docs/models.md, "One rank for every rank") and gives the header's cost, 2 (P-1)(alpha + m beta) plus the
    # (P-1) reductions and copies of m bytes (m = n / P)
    p = run("estimate", "--collective", "allreduce", "--algorithm", "ring", "--ranks", "65536", "--sizes", "1MiB",
            "--model", "hockney:alpha=1.6us,beta=0.3125ns/B,gamma=0.2ns/B,rho=0.1ns/B", "--json", check=0)
    P, m = 65536, (1 << 20) / 65536
    want = 2 * (P - 1) * (1.6e-6 + m * 0.3125e-9) + (P - 1) * m * (0.2e-9 + 0.1e-9)
    assert json.loads(p.stdout)["results"][0]["time_s"] == pytest.approx(want, rel=1e-9)


def test_estimate_table_and_plot(tmp_path):
    png = tmp_path / "sub" / "a2a.png"
    args = ("estimate", "--collective", "alltoall", "--algorithm", "all", "--machine", "ib-qdr", "--sizes", "16B..4KiB",
            "--plot", str(png))
    p = run(*args, check=2)  # a missing directory is an error, not created behind the user's back
    assert "does not exist" in p.stderr and len(p.stderr.strip().splitlines()) == 1 and not png.parent.exists()
    png.parent.mkdir()
    p = run(*args, check=0)
    assert "lower bound" in p.stdout and "pairwise" in p.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_output_files_are_written_as_their_users_expect(tmp_path, capsysbinary):
    from collplan.output import atomic_write
    from collplan._core import CollplanError
    real = tmp_path / "real.txt"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic_write(str(link), "new")  # a symlink is followed: the target is written, the link stays
    assert link.is_symlink() and real.read_text() == "new" and (real.stat().st_mode & 0o777) == 0o640
    ro = tmp_path / "ro.json"
    ro.write_text("keep")
    ro.chmod(0o444)
    with pytest.raises(CollplanError, match="read-only"):  # refused even as root, mode and content kept
        atomic_write(str(ro), "x")
    assert ro.read_text() == "keep" and (ro.stat().st_mode & 0o777) == 0o444
    with pytest.raises(CollplanError, match="is a directory"):
        atomic_write(str(tmp_path), "x")
    if os.path.exists("/dev/full"):  # a device is written through, never replaced; a failed write is an error
        with pytest.raises(CollplanError, match="cannot write /dev/full"):
            atomic_write("/dev/full", "x" * 100000)
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    atomic_write(str(fifo), "through the fifo")
    assert reader.communicate(timeout=30)[0] == b"through the fifo" and stat.S_ISFIFO(os.stat(fifo).st_mode)
    atomic_write("-", "to stdout")
    assert capsysbinary.readouterr().out == b"to stdout"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link.txt", "real.txt", "ro.json"]  # no temp files


def test_export_text_round_trips_and_goal(tmp_path):
    f = tmp_path / "s.txt"
    run("export", "--collective", "alltoall", "--algorithm", "bruck", "--param", "k=3", "--ranks", "7", "-o", str(f),
        check=0)
    s = collplan.Schedule.from_text(f.read_text())
    assert s == collplan.schedule("alltoall/bruck", ranks=7, params={"k": 3})
    v = json.loads(run("verify", "--schedule", str(f), "--json", check=0).stdout)
    assert v["ok"]
    g = tmp_path / "s.goal"
    run("export", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", "--format", "goal",
        "--size", "1KiB", "-o", str(g), check=0)
    text = g.read_text()
    assert text.startswith("num_ranks 4")
    assert len(re.findall(r"send 1024b to", text)) == 4 * 3


BAD = [
    (["verify", "--collective", "allgather", "--algorithm", "nope", "--ranks", "4"], "unknown algorithm 'allgather/nope'"),
    (["verify", "--collective", "allgather", "--algorithm", "ring", "--ranks", "0"], "ranks 0"),
    (["verify", "--collective", "alltoall", "--algorithm", "pairwise", "--topology", "hypercube:3x"], "hypercube:3x"),
    (["verify", "--collective", "alltoall", "--algorithm", "pairwise", "--topology", "torus:4x4", "--ranks", "15"], "15"),
    (["estimate", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", "--model",
      "hockney:alpha=1us,beta=1ns/B", "--sizes=-16B"], "-16B"),
    (["estimate", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", "--model",
      "hockney:alpha=1us,beta=1ns/B", "--sizes", "12 parsecs"], "12 parsecs"),
    (["estimate", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", "--model",
      "hockney:alpha=1us"], "beta"),
    (["estimate", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", "--machine", "cray-9"], "cray-9"),
    (["verify", "--collective", "alltoall", "--algorithm", "bruck", "--ranks", "8", "--param", "k=1"], "k=1"),
    (["verify", "--collective", "alltoall", "--algorithm", "bruck", "--ranks", "8", "--param", "radix=2"], "radix"),
    (["verify", "--collective", "allgather", "--algorithm", "recursive_doubling", "--ranks", "6"], "power of two"),
    (["verify", "--all", "--max-ranks", "0"], "--max-ranks 0"),
    (["verify", "--collective", "gossip", "--algorithm", "ring", "--ranks", "4"], "gossip"),
    (["frobnicate"], "frobnicate"),
]


@pytest.mark.parametrize("args,needle", BAD)
def test_bad_input_is_one_line_exit_2(args, needle):
    p = run(*args)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "Traceback" not in p.stderr and needle in lines[0]


def test_malformed_schedule_file(tmp_path):
    f = tmp_path / "bad.txt"
    f.write_text("collplan-schedule 1\ncollective allgather\nranks two\n")
    p = run("verify", "--schedule", str(f))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert str(f) in p.stderr and "line 3" in p.stderr
    p = run("verify", "--schedule", str(tmp_path / "missing.txt"))
    assert p.returncode == 2 and "missing.txt" in p.stderr


def test_export_does_not_leave_half_written_files(tmp_path):
    out = tmp_path / "x.txt"
    p = run("export", "--collective", "allgather", "--algorithm", "recursive_doubling", "--ranks", "6", "-o", str(out))
    assert p.returncode == 2 and not out.exists() and list(tmp_path.iterdir()) == []


def test_estimate_declines_algorithms_that_cannot_compute_the_operation():
    base = ["estimate", "--collective", "allreduce", "--ranks", "8", "--model", "hockney:alpha=1us,beta=1ns/B",
            "--sizes", "8,1KiB", "--json"]
    out = json.loads(run(*base, "--algorithm", "all", check=0).stdout)
    declined = {d["algorithm"] for d in out["declined"]}
    assert "allreduce/nway_dissemination_plain" in declined
    assert "allreduce/nway_dissemination_plain" not in {r["algorithm"] for r in out["results"]}
    out = json.loads(run(*base, "--algorithm", "all", "--op", "noncommutative", check=0).stdout)
    assert "allreduce/ring" in {d["algorithm"] for d in out["declined"]}
    assert "allreduce/recursive_doubling" in {r["algorithm"] for r in out["results"]}
    p = run(*base, "--algorithm", "nway_dissemination_plain")
    assert p.returncode == 2 and "idempotent" in p.stderr


def test_estimate_all_prices_every_candidate_at_the_given_root():
    # reduce/binomial relative=1 (tree rooted at the root) saves relative=0's final forward to a root != 0
    base = ["estimate", "--collective", "reduce", "--ranks", "8", "--model", "hockney:alpha=1us,beta=1ns/B",
            "--sizes", "8", "--json", "--all-params"]
    for root, cheaper in (("0", False), ("5", True)):
        out = json.loads(run(*base, "--algorithm", "all", "--root", root, check=0).stdout)
        t = {r["params"]: r["time_s"] for r in out["results"] if r["algorithm"] == "reduce/binomial"}
        assert (t["relative=1"] < t["relative=0"]) == cheaper, (root, t)


def test_a_closed_pipe_ends_the_command_quietly():
    """collplan ... | head: the reader has gone away; no error line, no traceback, exit 141 (SIGPIPE)."""
    r, w = os.pipe()
    os.close(r)  # no reader at all: the first write fails with EPIPE
    p = subprocess.run([sys.executable, "-m", "collplan", "estimate", "--collective", "alltoall", "--algorithm", "all",
                        "--machine", "ib-qdr", "--sizes", "1KiB..1MiB", "--csv"], stdout=w, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    os.close(w)
    assert p.returncode == 141 and p.stderr == "", p.stderr
