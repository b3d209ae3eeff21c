"""The alltoallv family from Python: matrix files and their errors, test sets 1-3, every static schedule verified
on random and mesh-partition matrices (alltoallv's own sweep), DRS_N, Generate_Recv, the CM-5 calibration, CLI."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

import collplan
from collplan import unstructured as u
from collplan._core import CollplanError

STATIC = [a["name"] for a in collplan.algorithms("alltoallv")]


def _schedule(name, m, seed=1):
    params = {"seed": seed} if any(p["name"] == "seed" for a in collplan.algorithms("alltoallv")
                                   if a["name"] == name for p in a["params"]) else {}
    return collplan.schedule(name, ranks=len(m), params=params, matrix=m)


def run(*args):
    return subprocess.run([sys.executable, "-m", "collplan", *args], capture_output=True, text=True, timeout=120)


# ------------------------------------------------------------------------------------------------- files
def test_formats_round_trip(tmp_path):
    m = u.testset2(6, 3, seed=2)
    for ext in ("csv", "mtx", "json", "txt"):
        path = tmp_path / f"m.{ext}"
        u.write_matrix(str(path), m, None if ext != "txt" else "csv")
        assert u.read_matrix(str(path)) == m, ext
    (tmp_path / "blank.txt").write_text("# a comment\n0 1  2\n\n3 0 4 # trailing\n5 6 0\n")
    assert u.read_matrix(str(tmp_path / "blank.txt")) == [[0, 1, 2], [3, 0, 4], [5, 6, 0]]


@pytest.mark.parametrize("name,text,needle", [
    ("ragged.csv", "0,1\n1\n", "row 1 has 1 entries"),
    ("rect.csv", "0,1,2\n1,0,2\n", "row 0 has 3 entries but there are 2 rows"),
    ("neg.csv", "0,-1\n1,0\n", "COM(0,1) = -1 is negative"),
    ("diag.csv", "0,1\n1,7\n", "diagonal traffic COM(1,1) = 7"),
    ("word.csv", "0,x\n1,0\n", "'x' is not an integer"),
    ("empty.csv", "# nothing\n", "empty matrix"),
    ("rect.mtx", "%%MatrixMarket matrix coordinate integer general\n2 3 1\n1 2 5\n", "2 x 3"),
    ("range.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n3 1 5\n", "outside 1..2"),
    ("count.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 5\n", "size line says 2"),
    ("bad.json", "[[0, 1], [1, 0.5]]", "non-integer"),
    ("syntax.json", "[[0, 1], ", "invalid JSON"),
])
def test_bad_files_are_one_line_errors(tmp_path, name, text, needle):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(CollplanError) as e:
        u.read_matrix(str(path))
    assert needle in str(e.value) and name in str(e.value) and "\n" not in str(e.value)
    p = run("matrix", "stats", str(path))
    assert p.returncode == 2 and needle in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_matrix_market_pattern_and_specs():
    assert u.parse_matrix_market("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n") == [[0, 1], [0, 0]]
    assert u.matrix_from_spec("testset1:P=8,d=3,seed=4") == u.testset1(8, 3, 4)
    assert u.matrix_from_spec("testset2:d=2", ranks=5) == u.testset2(5, 2)
    with pytest.raises(CollplanError, match="bad item 'q=1'"):
        u.matrix_from_spec("testset1:q=1")


# ------------------------------------------------------------------------------------------------- test sets
def test_testsets_statistics():
    st = u.stats(u.testset1(32, 4, 1))
    assert (st["max_sent"], st["min_sent"], st["avg_sent"], st["max_len"], st["degree"]) == (4, 4, 4, 1, 4)
    st2 = u.stats(u.testset2(32, 16, 3))
    assert st2["min_len"] >= 1 and st2["max_len"] <= 32 and 10 < st2["avg_len"] < 23
    assert u.testset2(32, 16, 3) == u.testset2(32, 16, 3) != u.testset2(32, 16, 4)


def test_mesh_partition_matrix():
    m, info = u.mesh_matrix(16, refine=1)
    assert info["points"] > 1000 and len(m) == 16
    st = u.stats(m)
    assert st["min_sent"] >= 1 and st["max_sent"] < 16 and st["max_len"] > st["min_len"] >= 1
    # The boundary relation is symmetric in pattern: q needs values from p exactly when p needs values from q.
    assert all((m[i][j] > 0) == (m[j][i] > 0) for i in range(16) for j in range(16))
    assert all(m[i][i] == 0 for i in range(16))


def test_mesh_3d_wing_rcb_has_the_papers_statistics():
    # Test set 3 of the reproduction: the paper's 2800-point sample has 9.25 messages per processor (max 15, min 3)
    # of 14.2 units on average (max 36); the 2-D partition has about 4.8.
    m, info = u.mesh_matrix(32, refine=0, layers=9, part="rcb")
    st = u.stats(m)
    assert info["points"] == 322 * 9
    assert abs(st["avg_sent"] - 9.25) / 9.25 < 0.25 and abs(st["avg_len"] - 14.2) / 14.2 < 0.25
    assert st["max_sent"] >= 12 and st["min_len"] == 1
    assert u.stats(u.mesh_matrix(32, refine=2)[0])["avg_sent"] < 6  # the 2-D mesh: about 5 neighbours a part
    assert all((m[i][j] > 0) == (m[j][i] > 0) and m[i][i] == 0 for i in range(32) for j in range(32))
    assert u.matrix_from_spec("mesh:P=32,refine=0,layers=9,part=rcb") == m
    with pytest.raises(CollplanError, match="part=kway is invalid"):
        u.matrix_from_spec("mesh:P=32,refine=0,part=kway")
    with pytest.raises(CollplanError, match="layers=0"):
        u.mesh_matrix(32, refine=0, layers=0)


def test_rs_nh_cutoff_keeps_test_set_2_whole_and_splits_the_mesh():
    # Table 5: RS_NH's phases on test set 2 are what heap order needs without splitting (the cut-off, twice the
    # mean length, is above nearly every message of 1..32 units); the meshes' long boundaries are split (Table 6).
    for d in (4, 16):
        for seed in (1, 2):
            m = u.testset2(32, d, seed)
            whole = len(u.plan("random_schedule_heap", m, seed=seed, cutoff_pct=0)["phases"])
            assert len(u.plan("random_schedule_heap", m, seed=seed)["phases"]) <= whole + 1
    m, _ = u.mesh_matrix(32, refine=0, layers=9, part="rcb")
    plan = u.plan("random_schedule_heap", m, seed=1)
    pieces = sum(len(ph) for ph in plan["phases"])
    assert plan["check"] == "" and pieces > u.stats(m)["messages"]
    cut = -(-2 * u.stats(m)["total_units"] // u.stats(m)["messages"])
    assert max(x[2] for ph in plan["phases"] for x in ph) <= cut


# ------------------------------------------------------------------------------------------------- the sweep
@pytest.mark.parametrize("name", STATIC)
def test_every_static_schedule_verifies_on_mesh_matrices(name):
    for P, refine in ((8, 1), (32, 2)):
        m, _ = u.mesh_matrix(P, refine=refine)
        for seed in (1, 2):
            r = collplan.verify(_schedule(name, m, seed))
            assert r["ok"], (name, P, r)


@pytest.mark.parametrize("name", STATIC)
def test_every_static_schedule_verifies_on_random_matrices(name):
    for P in (1, 2, 3, 9, 16, 33, 64):
        for seed in (1, 2):
            d = min(P - 1, 2 + 3 * seed)
            r = collplan.verify(_schedule(name, u.testset2(P, d, seed), seed))
            assert r["ok"], (name, P, seed, r)


def test_text_round_trip_keeps_pieces():
    m = u.testset2(8, 4, 1, max_units=100)
    s = collplan.schedule("alltoallv/random_schedule_heap", ranks=8, matrix=m)
    t = collplan.Schedule.from_text(s.to_text())
    assert t == s and collplan.verify(t)["ok"] and "units" in s.to_text()


def test_rsn_phases_close_to_d_plus_log_d():
    for d in (4, 8, 16):
        avg = sum(len(u.plan("random_schedule", u.testset1(32, d, 50 + t), seed=t)["phases"]) for t in range(10)) / 10
        assert d <= avg <= d + math.log2(d) + 1, (d, avg)


def test_plans_are_valid_and_edge_coloring_reaches_delta():
    m = u.testset2(24, 7, 5)
    for name in ("linear_permutation", "random_schedule", "random_schedule_heap", "edge_coloring"):
        assert u.plan(name, m)["check"] == "", name
    assert len(u.plan("edge_coloring", m)["phases"]) == u.stats(m)["degree"] == 7
    with pytest.raises(CollplanError, match="allowed: linear_permutation"):
        u.plan("async", m)


# ------------------------------------------------------------------------------------------------- models
def test_drs_n_is_deterministic_and_serialises_receivers():
    m = u.testset1(32, 8, 1)
    a, b = u.drs_n(m, 1024, "cm5-32", seed=3), u.drs_n(m, 1024, "cm5-32", seed=3)
    assert a == b and a["inquiries"] >= 32 * 8 and a["time_s"] > 0
    # One message at a time into a node: at least 8 messages' worth of receive time on a busy node.
    one = u.drs_n([[0, 1], [0, 0]], 1024, "cm5-32")["time_s"]
    assert a["time_s"] > 8 * one * 0.5


def test_generate_recv_both_ways():
    m = u.testset1(32, 4, 1)
    c = u.generate_recv_cost(m, machine="cm5-32")
    assert 0 < c["am_s"] < c["concat_s"] and c["concat_bytes"] == 32 * 32 * 4 and c["am_bytes"] < c["concat_bytes"]
    big = u.generate_recv_cost(u.testset1(128, 16, 1), machine="cm5-32")
    assert big["concat_s"] > 5 * big["am_s"]  # the concatenate grows as P^2


def test_cm5_machine_matches_the_fits():
    from collplan.reproduce import unstructured_cm5 as rep
    fit = rep.fit_table2()
    spec = collplan.load_machine("cm5-32").model
    vals = dict(kv.split("=") for kv in spec.split(":", 1)[1].split(","))
    two_o_plus_l = 2 * collplan.parse_time(vals["o"]) + collplan.parse_time(vals["L"])
    assert two_o_plus_l == pytest.approx(fit["A"], rel=0.01)
    assert collplan.parse_time(vals["g"]) == pytest.approx(fit["g"], rel=0.01)
    assert collplan.parse_time(vals["G"].removesuffix("/B")) == pytest.approx(fit["G"], rel=0.01)
    assert rep._machine_step() == pytest.approx(rep.fit_schedule_step(), rel=0.05)
    # The machine reproduces Table 2's receiver times within 17% (the worst residual of the fit: 4096 B, d = 1).
    for m_bytes, col in rep.TABLE2_RECV_MS.items():
        for d, paper_ms in zip(rep.TABLE2_D, col):
            assert rep._recv_time(d, m_bytes) * 1e3 == pytest.approx(paper_ms, rel=0.17), (m_bytes, d)


# ------------------------------------------------------------------------------------------------- CLI
def test_cli_matrix_stats_generate_verify_estimate(tmp_path):
    p = run("matrix", "stats", "testset2:P=16,d=4,seed=2", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["max_sent"] == 4
    p = run("matrix", "stats", "testset1:P=16,d=4")
    assert "messages sent per processor:  max 4  min 4  average 4" in p.stdout
    path = tmp_path / "m.mtx"
    assert run("matrix", "generate", "testset2:P=12,d=3", "-o", str(path)).returncode == 0
    p = run("verify", "--collective", "alltoallv", "--algorithm", "random_schedule_heap", "--matrix", str(path))
    assert p.returncode == 0 and "ok" in p.stdout and "P=12" in p.stdout
    p = run("estimate", "--collective", "alltoallv", "--algorithm", "all", "--machine", "cm5-32",
            "--matrix", "testset1:d=4", "--sizes", "16B..1KiB", "--json")
    assert p.returncode == 0, p.stderr
    algs = {r["algorithm"] for r in json.loads(p.stdout)["results"]}
    assert algs == set(STATIC)
    p = run("verify", "--collective", "alltoallv", "--algorithm", "async", "--ranks", "4")
    assert p.returncode == 2 and "4x4 communication matrix" in p.stderr
