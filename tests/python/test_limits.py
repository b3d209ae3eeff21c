"""Memory limits (--max-memory, bounded readers) and Ctrl-C: hostile inputs are refused with one line and exit 2
before they allocate; SIGINT ends a long run with exit 130 and `collplan: interrupted`. Every case runs in a
subprocess whose address space is capped, so a regression fails the test instead of swapping the machine."""
from __future__ import annotations

import resource
import signal
import subprocess
import sys
import time

import pytest

import collplan
from collplan import limits

CAP = 3 << 30  # address space of each subprocess (Python + numpy + the extension take a few hundred MiB)


def _cap():
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def run(*args, env=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "collplan", *args], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=_cap, env=env)


def refused(p, *words):
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("collplan: error: "), p.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# (verify: no progress line, which a loaded machine prints before the refusal of the one-rank path: rank 0's
# program of a 4,194,304-rank ring is generated first)
@pytest.mark.parametrize("args,words", [
    (["verify", "--collective", "alltoall", "--algorithm", "pairwise", "--ranks", "1000000", "--no-progress"],
     ["alltoall/pairwise"]),
    (["verify", "--collective", "alltoall", "--algorithm", "bruck", "--ranks", "1000000", "--no-progress"],
     ["P=1000000"]),
    (["verify", "--collective", "allreduce", "--algorithm", "recursive_doubling", "--ranks", "1000000",
      "--no-progress"], ["allreduce"]),
    (["verify", "--collective", "allgather", "--algorithm", "ring", "--topology", "full:4194304", "--no-progress"],
     ["P=4194304"]),
    (["plan", "--collective", "allgather", "--ranks", "100000", "--machine", "paragon"], ["plan:"]),
    (["matrix", "stats", "testset1:P=20000,d=4"], ["20000 x 20000"]),
    (["dissemination", "--ranks", "4000000", "--n-max", "2"], ["P=4000000"]),
])
def test_huge_problems_are_refused_before_allocating(args, words):
    line = refused(run(*args, "--max-memory", "16MiB"), "needs about", "limit 16.0MiB, --max-memory", *words)
    assert "Traceback" not in line


def test_ranks_beyond_any_topology_are_refused_as_arguments():
    refused(run("dissemination", "--ranks", "1000000000"), "--ranks 1000000000 is invalid", "1..4194304")


def test_verify_refuses_huge_declared_blocks(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("collplan-schedule 1\ncollective alltoall\nranks 1\nblocks in=1 out=1 tmp=1073741823\n"
                 "algorithm x\nrank 0\n")
    refused(run("verify", "--schedule", str(f), "--max-memory", "1GiB"), "verify of", "needs about")


def test_readers_stop_at_a_bound():
    refused(run("verify", "--schedule", "/dev/zero", "--max-memory", "64MiB"), "/dev/zero is larger than 16.0MiB")
    refused(run("matrix", "stats", "/dev/zero", "--max-memory", "64MiB"), "/dev/zero is larger than")
    refused(run("plan", "--collective", "allgather", "--ranks", "8", "--machine", "paragon", "--wisdom", "/dev/zero"),
            "wisdom file /dev/zero is larger than 16.0MiB")


def test_matrix_market_header_is_checked_before_the_dense_matrix(tmp_path):
    f = tmp_path / "big.mtx"
    f.write_text("%%MatrixMarket matrix coordinate integer general\n100000 100000 0\n")
    refused(run("matrix", "stats", str(f)), "100000 x 100000", "needs about")


def test_python_api_takes_max_memory():
    with pytest.raises(collplan.CollplanError, match="needs about"):
        collplan.schedule("alltoall/pairwise", ranks=100000, max_memory="64MiB")
    s = collplan.schedule("allreduce/ring", ranks=4000)
    with pytest.raises(collplan.CollplanError, match="verify of allreduce/ring at P=4000 needs about"):
        collplan.verify(s, max_memory=1 << 20)
    assert collplan.verify(collplan.schedule("allgather/ring", ranks=8), max_memory="64MiB")["ok"]
    assert limits.max_memory() > 0 and limits.max_memory("4GiB") == 4 << 30
    assert limits.max_memory("2TiB") == 2 << 40 and limits.parse_max_memory("1TB") == 10**12
    with pytest.raises(collplan.CollplanError):
        limits.max_memory(-1)


def test_bad_max_memory_is_one_line():
    refused(run("verify", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", "--max-memory", "lots"))


@pytest.mark.parametrize("args", [
    ["verify", "--collective", "alltoall", "--algorithm", "pairwise", "--ranks", "3000", "--whole"],
    # rank 0 for every rank: the other 19,999 programs are compared one at a time
    ["verify", "--collective", "allgather", "--algorithm", "ring", "--ranks", "20000"],
    # simplex ports: the whole walk (with duplex ports rank 0's program stands for all and it ends at once)
    ["estimate", "--collective", "alltoall", "--algorithm", "pairwise", "--ranks", "4000", "--model",
     "hockney:alpha=1us,beta=1ns/B,duplex=0", "--sizes", "1KiB"],
    ["simulate", "--collective", "alltoall", "--algorithm", "pairwise", "--topology", "torus:32x32", "--fidelity",
     "packet", "--machine", "paragon", "--size", "64KiB", "--no-progress"],
    # generation and the gossip search poll nothing: the backstop (python/bindings/interrupt.cpp) ends these
    ["tune", "--algorithm", "torgos", "--topology", "torus:512x512", "--r", "10"],
    ["plan", "--collective", "allgather", "--topology", "torus:512x512", "--machine", "paragon", "--sizes", "1KiB",
     "--no-progress", "--wisdom", "w.json"],
])
def test_sigint_ends_a_long_run(args, tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "collplan", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=_cap, cwd=tmp_path)
    time.sleep(2.5)
    assert p.poll() is None, "the run ended before the signal: make the problem larger"
    p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    try:
        _, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("SIGINT did not end the run")
    took = time.monotonic() - t0
    assert took < 1.5, f"SIGINT took {took:.2f} s (allowed: about 1 s)"  # 0.02-0.6 s here
    assert p.returncode == 130, err
    assert err.strip().splitlines()[-1] == "collplan: interrupted" and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_the_api_refuses_out_of_range_integers_with_collplan_error():
    from collplan import sim
    for ranks in (2**70, 0, 1 << 23, True, 4.0):
        with pytest.raises(collplan.CollplanError, match="number of ranks"):
            collplan.schedule("allgather/ring", ranks=ranks)
    s = collplan.schedule("allgather/ring", ranks=4)
    for seed in (-1, 1 << 64):
        with pytest.raises(collplan.CollplanError, match="seed"):
            sim.simulate(s, model="hockney:alpha=1us,beta=1ns/B", fidelity="loggp", seed=seed)
