"""The planner (python/collplan/planner.py, `collplan plan`) with the estimate and simulate evaluators, and wisdom.
The measure evaluator runs under mpirun in test_mpi.py."""
from __future__ import annotations

import json
import math

import pytest

import collplan
from collplan import _core, planner
from collplan.cli import main
from collplan.machines import load_machine


def _labels(p):
    return {c.label() for c in p.candidates}


def test_every_planned_size_is_won_by_the_cheapest_estimate():
    p = planner.plan("allreduce", ranks=8, machine="ib-qdr", sizes="8B..1MiB", progress=False)
    for j, n in enumerate(p.sizes):
        # price every candidate again through the public API; the plan's choice must be the cheapest
        times = {c: collplan.estimate(collplan.schedule(c.algorithm, ranks=8, params=c.param_dict), [n],
                                      machine="ib-qdr")[0].time_s for c in p.candidates}
        assert times[p.choice(n)] == pytest.approx(min(times.values()), rel=1e-12), n


def test_ranges_tile_all_sizes_and_boundaries_are_exact_crossovers():
    p = planner.plan("alltoall", ranks=8, machine="ib-qdr", sizes="8B..1MiB", progress=False)
    assert p.ranges[0].min_bytes == 0 and p.ranges[-1].max_bytes is None
    assert len(p.ranges) >= 2, "ib-qdr has a latency/bandwidth crossover for alltoall at P=8"
    for a, b in zip(p.ranges, p.ranges[1:]):
        assert a.max_bytes == b.min_bytes and a.winner != b.winner
        sa = collplan.schedule(a.winner.algorithm, ranks=8, params=a.winner.param_dict)
        sb = collplan.schedule(b.winner.algorithm, ranks=8, params=b.winner.param_dict)
        at = lambda s, m: _core.estimate(s, "full:8", p.model, [float(m)])[0]  # noqa: E731
        m = b.min_bytes
        assert at(sb, m) <= at(sa, m) and at(sb, m - 1) > at(sa, m - 1), m
    for r in p.ranges:
        assert r.runner_up is not None and r.runner_up != r.winner and r.margin[0] >= 0


def test_candidates_cover_the_parameters_of_each_family():
    ar = _labels(planner.plan("allreduce", ranks=8, machine="ib-qdr", sizes="8B", progress=False))
    assert {f"nway_dissemination[n={n}]" for n in range(1, 8)} <= ar
    assert {f"recexch[k={k}]" for k in range(2, 9)} <= ar
    a2a = _labels(planner.plan("alltoall", ranks=8, machine="ipsc860", sizes="8B..1KiB", progress=False))
    assert {f"bruck[k={k}]" for k in range(2, 9)} <= a2a
    assert any(x.startswith("multiphase[partition=") for x in a2a)
    ring = planner.plan("allgather", topology="ring:27", machine="paragon", sizes="8B..64KiB", progress=False)
    circ = [c for c in ring.candidates if c.algorithm == "allgather/circgos"]
    assert circ and all(set(c.param_dict) == {"a", "b", "k"} for c in circ)
    assert len(circ) >= 2, "the best (a, b, k) changes between 8 B and 64 KiB on the Paragon"
    bar = _labels(planner.plan("barrier", ranks=5, machine="ib-qdr", progress=False))
    assert bar == {f"dissemination[n={n}]" for n in range(1, 5)}  # never more peers than P - 1


def test_operation_decides_which_schedules_may_run():
    total = planner.plan("allreduce", ranks=8, machine="ib-qdr", sizes="8B", op="sum", progress=False)
    maximum = planner.plan("allreduce", ranks=8, machine="ib-qdr", sizes="8B", op="max", progress=False)
    assert not any(c.algorithm.endswith("_plain") for c in total.candidates)
    assert any(c.algorithm.endswith("_plain") for c in maximum.candidates)
    nc = planner.plan("allreduce", ranks=8, machine="ib-qdr", sizes="8B", op="noncommutative", progress=False)
    assert not any(c.algorithm in ("allreduce/ring", "allreduce/nway_dissemination") for c in nc.candidates)


def test_simulate_evaluator_agrees_with_its_own_prices():
    p = planner.plan("allgather", ranks=4, machine="ib-qdr", sizes="64B,64KiB", evaluator="simulate",
                     fidelity="loggp", progress=False)
    assert p.evaluator == "simulate (loggp)"
    for j in range(len(p.sizes)):
        assert p.times[p.best(j)][j] == min(t[j] for t in p.times)


def test_wisdom_merge_replaces_the_same_key_only(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"format": "collplan-wisdom/1", "entries": [
        {"collective": "allreduce", "ranks": 8, "op": "sum", "algorithm": "native"},
        {"collective": "allreduce", "ranks": 4, "algorithm": "allreduce/ring"}]}))
    p = planner.plan("allreduce", ranks=8, machine="ib-qdr", sizes="8B..1MiB", progress=False)
    text = planner.merge_wisdom(str(path), p)
    entries = _core.parse_wisdom(text)
    assert sum(e.get("ranks") == 4 for e in entries) == 1
    assert all(e["algorithm"] != "native" for e in entries)
    for n in p.sizes + [0, 3, 1 << 30]:
        e = _core.wisdom_lookup(text, "allreduce", 8, n, "sum", "")
        assert (e["algorithm"], e["params"]) == (p.choice(n).algorithm, p.choice(n).param_dict), n
    assert _core.wisdom_lookup(text, "allreduce", 8, 64, "max", "") is None  # planned for sum only


def test_cli_plan_json_and_wisdom(tmp_path, capsys):
    w = tmp_path / "wisdom.json"
    assert main(["plan", "--collective", "barrier", "--ranks", "6", "--machine", "ib-qdr", "--json",
                 "--wisdom", str(w), "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ranges"][0]["winner"]["algorithm"] == "barrier/dissemination"
    assert len(out["candidates"]) == 5 and all(len(c["times_s"]) == 1 for c in out["candidates"])
    assert _core.wisdom_lookup(w.read_text(), "barrier", 6, 0, "", "")["algorithm"] == "barrier/dissemination"
    assert main(["plan", "--collective", "allgather", "--topology", "torus:4x4", "--machine", "paragon",
                 "--sizes", "16B..4KiB", "--wisdom", str(w), "--no-progress"]) == 0
    table = capsys.readouterr().out
    assert "evaluator estimate" in table and "winner" in table and "runner-up" in table
    assert any(e.get("topology") == "torus:4x4" for e in _core.parse_wisdom(w.read_text()))


def test_the_machine_topology_is_the_default(tmp_path):
    p = planner.plan("allgather", machine="paragon", sizes="1KiB", progress=False)
    assert p.topology == load_machine("paragon").topology and p.ranks == 140
    bare = tmp_path / "bare.toml"
    bare.write_text('[model]\nkind = "hockney"\nalpha = "1us"\nbeta = "1ns/B"\n')
    with pytest.raises(collplan.CollplanError, match="has no topology of its own"):
        planner.plan("allgather", machine=str(bare), progress=False)


def test_cli_plan_plot(tmp_path, capsys):
    png = tmp_path / "plan.png"
    assert main(["plan", "--collective", "alltoall", "--ranks", "16", "--machine", "ipsc860", "--sizes", "1B..1KiB",
                 "--plot", str(png), "--no-progress"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
    assert f"plot written to {png}" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["--collective", "alltoallv", "--ranks", "4"], "invalid choice"),
    (["--collective", "allreduce", "--ranks", "4", "--sizes", "12B"], "multiples of 8"),
    (["--collective", "allreduce", "--ranks", "0"], "--ranks 0 is invalid"),
    (["--collective", "allgather", "--ranks", "4", "--machine", "nowhere"], "unknown machine 'nowhere'"),
    (["--collective", "allreduce", "--topology", "ring:3", "--evaluator", "measure"], "give no --topology"),
])
def test_cli_plan_errors_are_one_line(argv, message, capsys):
    if "--machine" not in argv:
        argv = argv + ["--machine", "ib-qdr"]
    assert main(["plan", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) <= 3, err


def test_a_bad_wisdom_file_is_left_alone(tmp_path, capsys):
    w = tmp_path / "w.json"
    w.write_text('{"format": "collplan-wisdom/1", "entries": [{"collective": "gather"}]}')
    before = w.read_text()
    assert main(["plan", "--collective", "barrier", "--ranks", "4", "--machine", "ib-qdr", "--wisdom", str(w)]) == 2
    assert "wisdom" in capsys.readouterr().err and w.read_text() == before


def test_a_deeply_nested_wisdom_file_is_one_line_not_a_crash(tmp_path, capsys):
    w = tmp_path / "w.json"
    w.write_text("[" * 1000000 + "]" * 1000000)  # crashed the reader's stack (segfault) before it bounded nesting
    before = w.read_text()
    assert main(["plan", "--collective", "barrier", "--ranks", "4", "--machine", "ib-qdr", "--wisdom", str(w)]) == 2
    err = capsys.readouterr().err
    assert "at most 64 nested" in err and len(err.strip().splitlines()) == 1 and w.read_text() == before



def _measured(times, samples):
    """A measured plan of two sizes: candidate 0 a schedule, candidate 1 the MPI library's own collective."""
    from collplan.planner import Plan, candidate
    return Plan("allreduce", 2, "full:2", "m", "loggp", "sum", "measure", [8, 65536],
                [candidate("allreduce/ring"), candidate("native")], times, [], samples=samples)


def test_a_measured_schedule_must_beat_native_by_more_than_the_noise():
    from collplan.planner import NOISE_FLOOR
    # size 0: the schedule is 3 % faster, within the noise floor -> native; size 1: 30 % faster -> the schedule
    quiet = [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    p = _measured([[0.97, 0.7], [1.0, 1.0]], [[quiet[0], quiet[0]], [quiet[1], quiet[1]]])
    assert p.native_margin(0) == pytest.approx(NOISE_FLOOR)
    assert p.best(0) == 1 and p.best(1) == 0
    # a noisy native (median 20 % above its best) raises the bar: 22 % faster is not enough, 30 % is
    noisy = [1.0, 1.2, 1.3]
    p = _measured([[0.78, 0.7], [1.0, 1.0]], [[noisy, noisy], [noisy, noisy]])
    assert p.native_margin(0) == pytest.approx(NOISE_FLOOR + 0.2)
    assert p.best(0) == 1 and p.best(1) == 0


# ----------------------------------------------------------------------- the rooted and vector collectives
NEW = ("bcast", "reduce", "reduce_scatter_block", "reduce_scatter", "allgatherv", "gather", "scatter")


@pytest.mark.parametrize("collective", NEW)
def test_new_collectives_are_planned_by_their_cheapest_estimate(collective):
    root = 5 if collective in planner.ROOTED else 0
    p = planner.plan(collective, ranks=8, machine="ib-qdr", sizes="8B..64KiB", root=root, progress=False)
    assert p.ranges[0].min_bytes == 0 and p.ranges[-1].max_bytes is None
    assert (p.root, p.op) == (root, "sum" if collective in planner.REDUCTIONS else "")
    inputs = {"root": root} if root else {"counts": [1] * 8} if collective in planner.PER_RANK_COUNTS else {}
    # every registered algorithm that applies on full:8 is a candidate (bcast/torus needs a torus)
    assert {c.algorithm for c in p.candidates} == {a["name"] for a in collplan.algorithms(collective)} - \
        {d["algorithm"] for d in p.declined}
    for n in p.sizes:
        times = {c: collplan.estimate(collplan.schedule(c.algorithm, ranks=8, params=c.param_dict, **inputs), [n],
                                      machine="ib-qdr")[0].time_s for c in p.candidates}
        assert times[p.choice(n)] == pytest.approx(min(times.values()), rel=1e-12), n


def test_the_root_and_the_operation_decide_the_rooted_reductions():
    at0 = _labels(planner.plan("reduce", ranks=8, machine="ib-qdr", sizes="8B", op="noncommutative", progress=False))
    at3 = planner.plan("reduce", ranks=8, machine="ib-qdr", sizes="8B", op="noncommutative", root=3, progress=False)
    assert "binomial[relative=1]" in at0  # rooted at 0 the relative tree is the plain one: any operation
    assert "binomial[relative=1]" not in _labels(at3) and "binomial[relative=0]" in _labels(at3)
    assert {"algorithm": "binomial[relative=1]", "reason": "needs a commutative operation"} in at3.declined
    nc = planner.plan("reduce_scatter", ranks=8, machine="ib-qdr", sizes="8B", op="noncommutative", progress=False)
    assert {c.algorithm for c in nc.candidates} == {"reduce_scatter/linear"}
    with pytest.raises(collplan.CollplanError, match=r"root 8 is not a rank of P=8 \(allowed: 0..7\)"):
        planner.plan("gather", ranks=8, machine="ib-qdr", root=8, progress=False)


def test_wisdom_of_the_new_collectives_is_what_the_runtime_reads(tmp_path):
    w = str(tmp_path / "w.json")
    plans = {c: planner.plan(c, ranks=8, machine="ib-qdr", sizes="8B..1MiB", progress=False) for c in NEW}
    for p in plans.values():
        (tmp_path / "w.json").write_text(planner.merge_wisdom(w, p))
    text = (tmp_path / "w.json").read_text()
    assert {e["collective"] for e in _core.parse_wisdom(text)} == set(NEW)
    for c, p in plans.items():
        op = "sum" if c in planner.REDUCTIONS else ""
        for n in p.sizes + [0, 1 << 30]:
            e = _core.wisdom_lookup(text, c, 8, n, op, "")
            assert (e["algorithm"], e["params"]) == (p.choice(n).algorithm, p.choice(n).param_dict), (c, n)
        if op:
            assert _core.wisdom_lookup(text, c, 8, 64, "max", "") is None  # planned for sum only


def test_cli_plan_bcast_prints_a_threshold_table(capsys):
    assert main(["plan", "--collective", "bcast", "--ranks", "64", "--machine", "ib-qdr", "--sizes", "8B..1MiB",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# collplan plan: bcast, P=64 on full:64") and "root 0" in out
    rows = [ln.split() for ln in out.splitlines() if ln.split()[:1] == ["0B"]]  # the first range, winner and runner-up
    assert rows and rows[0][2] == "binomial" and " winner " in out
    assert main(["plan", "--collective", "scatter", "--ranks", "6", "--machine", "ib-qdr", "--root", "6"]) == 2
    assert "root 6 is not a rank of P=6" in capsys.readouterr().err


def test_margins_carry_their_sign():
    """A measured plan keeps native unless beaten by the noise margin, so a range's runner-up may be faster: its
    margin prints as -46%, never +-46%."""
    p = planner.plan("allreduce", 8, None, "ib-qdr", [64, 4096], "sum", "estimate", progress=False)
    r = p.ranges[0]
    p.ranges = [planner.Range(r.min_bytes, None, r.winner, r.winner_s, r.runner_up or r.winner, (-0.46, 0.12))]
    text = planner.format_table(p)
    assert "-46%..+12%" in text and "+-" not in text


def test_the_plan_figure_keeps_its_promises():
    """README: at most 8 lines per panel; the names of the ranges above the plot never overlap (a plan of six
    ranges, three of them narrow, as docs/planner.md's alltoall on the iPSC/860)."""
    from collplan.plot import MAX_LINES, plan_figure
    p = planner.plan("alltoall", 64, None, "ipsc860", "1B..4KiB", "sum", "estimate", progress=False)
    assert len(p.ranges) >= 5 and len(p.candidates) > MAX_LINES
    fig = plan_figure(p)
    ax = fig.axes[0]
    assert len(ax.get_lines()) <= MAX_LINES
    renderer = fig.canvas.get_renderer()
    names = [t for t in ax.texts if t.get_position()[1] > 1]
    assert sorted(t.get_text() for t in names) == sorted(r.winner.label() for r in p.ranges)
    boxes = [t.get_window_extent(renderer) for t in names]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


# --- under mpirun: the candidates split over the ranks (collplan.sweep) ------------------------------------------
@pytest.mark.parametrize("evaluator,ranks", [(["--evaluator", "estimate"], 24), (["--evaluator", "estimate"], 2048),
                                             (["--evaluator", "simulate", "--fidelity", "loggp"], 24)])
def test_plan_under_mpirun_prints_what_one_process_prints(evaluator, ranks):
    """`mpirun -n 3 collplan plan` prices a third of the candidates (or candidate x size runs) on each rank and
    rank 0 alone prints the plan: the same JSON as one process (above PRUNE_ABOVE, the same walks skipped)."""
    import subprocess
    import sys

    from test_mpi import mpirun
    argv = ["plan", "--collective", "allreduce", "--ranks", str(ranks), "--machine", "ib-qdr", "--sizes", "8B..64KiB",
            "--json", "--no-progress", *evaluator]
    one = subprocess.run([sys.executable, "-m", "collplan", *argv], capture_output=True, text=True, timeout=300)
    assert one.returncode == 0, one.stderr
    r = mpirun("openmpi", 3, [sys.executable, "-m", "collplan", *argv])
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout) == json.loads(one.stdout)  # one document: ranks 1 and 2 print nothing


def test_verify_all_under_mpirun_reports_what_one_process_reports():
    """`mpirun -n 3 collplan verify --all` runs a third of the cases on each rank; rank 0's JSON is one process's."""
    import subprocess
    import sys

    from test_mpi import mpirun
    argv = ["verify", "--all", "--max-ranks", "9", "--json", "--no-progress"]
    one = subprocess.run([sys.executable, "-m", "collplan", *argv], capture_output=True, text=True, timeout=300)
    assert one.returncode == 0, one.stderr
    r = mpirun("openmpi", 3, [sys.executable, "-m", "collplan", *argv])
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout) == json.loads(one.stdout) and json.loads(one.stdout)["algorithms"]


def test_a_failed_piece_fails_the_sweep_on_every_rank():
    """A CollplanError in rank 1's piece reaches every rank after the gather (none waits for a rank that gave up);
    without MPI the same sweep runs every piece here."""
    import sys

    from collplan.sweep import Sweep
    from test_mpi import mpirun
    assert Sweep().run(5, lambda i: i * i) == [0, 1, 4, 9, 16]
    prog = ("from collplan.sweep import world\nfrom collplan import CollplanError\ns = world()\n"
            "print(s.rank, s.run(6, lambda i: i + 10), flush=True)\n"
            "def piece(i):\n    if i == 3:\n        raise CollplanError(f'piece {i} failed')\n    return i\n"
            "try:\n    s.run(6, piece)\nexcept CollplanError as e:\n    print(s.rank, 'raised', e, flush=True)\n")
    r = mpirun("openmpi", 2, [sys.executable, "-c", prog])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = sorted(r.stdout.splitlines())
    assert lines == ["0 [10, 11, 12, 13, 14, 15]", "0 raised piece 3 failed",
                     "1 [10, 11, 12, 13, 14, 15]", "1 raised piece 3 failed"], r.stdout


# ------------------------------------------------------------------------------------------- one rank for all
def _priced(collective, P, machine, one_rank):
    """Every candidate's estimate at 8 B..4 MiB, from rank 0's programs where they stand for all (one_rank) or
    from the whole schedules."""
    m = planner.resolve_machine(model=machine) if ":" in machine else planner.resolve_machine(machine)
    prob = planner.resolve_problem(collective, P, None)
    sizes = [0] if collective == "barrier" else [8, 1000, 65536, 4 << 20]
    found, declined = planner.candidates(prob, m, sizes, one_rank=one_rank)
    times = planner.price_estimate([s for _, s in found], sizes, m.model, prob.topology, progress=False)
    return [c.label() for c, _ in found], times, sum(not s.whole for _, s in found)


# this machine's Open MPI calibration at P = 4 (bench/planner/host/openmpi-P4.toml) without its host channel
LOGGP_CPU = "loggp:L=590.562ns,o=137.75ns,g=74.373ns,G=56.8085ps/B,O=37.8061ps/B,cpu=1,gamma=19.399ps/B,rho=10.2443ps/B"


@pytest.mark.parametrize("machine,symmetric", [("ib-qdr", True), (LOGGP_CPU, True), ("paragon", False)])
def test_one_rank_estimates_price_every_candidate_as_the_whole_walk(machine, symmetric):
    # the planner's fast path (schedule/symmetry.hpp): rank 0's program alone of every symmetric candidate gives the
    # whole walk's times to the bit, so the same choices; hockney (ib-qdr) and loggp with cpu = 1. The Paragon's
    # ports are simplex: there every candidate is walked whole
    singles = 0
    for collective in planner.PLANNED:
        for P in (*range(2, 18), 31, 32, 33, 64, 100, 128, 256) if symmetric else range(2, 10):
            one = _priced(collective, P, machine, True)
            whole = _priced(collective, P, machine, False)
            assert one[:2] == whole[:2], (collective, P)
            assert whole[2] == 0
            singles += one[2]
    # the rings, Bruck, recursive doubling, dissemination ... were priced from one rank
    assert singles > 400 if symmetric else singles == 0


def test_the_plan_says_how_many_candidates_one_rank_priced():
    p = planner.plan("allreduce", ranks=64, machine="ib-qdr", progress=False)
    assert any(n.startswith(f"{sum(c.algorithm != 'allreduce/recexch' or c.param_dict.get('k') == '2' for c in p.candidates)}"
                            f" of {len(p.candidates)} candidates priced from rank 0's program") for n in p.notes), p.notes
    simplex = planner.plan("allreduce", ranks=64, machine="paragon", progress=False)
    assert not any("rank 0's program" in n for n in simplex.notes)


def test_one_rank_estimates_at_1024_ranks():
    one, whole = _priced("allreduce", 1024, "ib-qdr", True), _priced("allreduce", 1024, "ib-qdr", False)
    assert one[:2] == whole[:2] and one[2] >= 4


def test_an_estimator_walks_again_what_estimate_walks_once():
    # _core.Estimator (model/estimate.hpp): the partners matched once, then any sizes, to the bit; what the planner's
    # Walks keeps per schedule. It holds the schedule, and refuses what estimate refuses.
    sizes = [0.0, 8.0, 3000.0, 1 << 20]
    for name, P, model in [("bcast/scatter_recursive_doubling_allgather", 48, "ib-qdr"),
                           ("alltoall/pairwise", 33, LOGGP_CPU), ("reduce/rabenseifner", 40, "paragon")]:
        spec = load_machine(model).model if not model.startswith("loggp") else model
        s = _core.make_schedule(name, P, f"full:{P}")
        est = _core.Estimator(s, f"full:{P}", spec)
        del s  # kept alive by the estimator
        again = _core.make_schedule(name, P, f"full:{P}")
        assert est.estimate(sizes, threads=2) == _core.estimate(again, f"full:{P}", spec, sizes)
        assert [est.estimate([m])[0] for m in reversed(sizes)] == est.estimate(list(reversed(sizes)), threads=1)
        assert est.memory_bytes >= 12 * again.total_ops
    s = _core.make_schedule("bcast/binomial", 16, "full:16")
    with pytest.raises(_core.CollplanError, match="has 8 nodes but the schedule has 16 ranks"):
        _core.Estimator(s, "full:8", "hockney:alpha=1us,beta=1ns/B")
    with pytest.raises(_core.MemoryLimitError):
        _core.Estimator(s, "full:16", "hockney:alpha=1us,beta=1ns/B", max_memory=100)
    walks = planner.Walks("full:16", "hockney:alpha=1us,beta=1ns/B")
    assert walks(s, [8, 64]) == _core.estimate(s, "full:16", "hockney:alpha=1us,beta=1ns/B", [8.0, 64.0])
    assert walks(s, [64]) == [walks(s, [8, 64])[1]] and len(walks._made) == 1  # one estimator per schedule


# --- above PRUNE_ABOVE: walks that cannot place are skipped (planner.price_estimate_pruned) ----------------------
@pytest.mark.parametrize("machine", ["ib-qdr", LOGGP_CPU, "paragon"])
def test_a_pruned_plan_has_the_whole_plans_winners_and_times(machine, monkeypatch):
    """With the threshold lowered to 8 ranks, every plan of every collective at P = 9..40 keeps the winners of the
    plan that walks every candidate at every size, and its boundaries but where the gap between two winners
    changes sign several times (then another crossover is found); each time it walked is that plan's, and each
    skipped one has a bound that is below that plan's time and above the runner-up's."""
    monkeypatch.setattr(planner, "PRUNE_ABOVE", 8)
    machine = planner.resolve_machine(model=machine) if ":" in machine else machine
    skipped = 0
    for collective in planner.PLANNED:
        for P in (9, 12, 16, 33, 40) if machine != "paragon" else (9, 12):
            kw = dict(ranks=P, machine=machine, sizes="8B..1MiB", progress=False)
            full = planner.plan(collective, **kw, prune=False)
            cut = planner.plan(collective, **kw)
            assert full.bounds is None and cut.bounds is not None
            assert [r.winner for r in cut.ranges] == [r.winner for r in full.ranges], (collective, P)
            for a, b, prev in zip(cut.ranges[1:], full.ranges[1:], full.ranges):
                if a.min_bytes != b.min_bytes:  # where the winners' gap changes sign more than once (a tie to
                    # rounding, a model's steps): regula falsi's boundary is another crossover than bisection's
                    plan_, scheds = planner.setup(collective, P, None, machine, "8B..1MiB", "sum", "estimate")
                    by = dict(zip(plan_.candidates, scheds))
                    t = {m: [_core.estimate(by[c], full.topology, full.model, [float(m)])[0]
                             for c in (prev.winner, b.winner)] for m in (a.min_bytes - 1, a.min_bytes)}
                    assert t[a.min_bytes - 1][1] > t[a.min_bytes - 1][0] and t[a.min_bytes][1] <= t[a.min_bytes][0]
            for j in range(len(full.sizes)):
                second = sorted(t[j] for t in full.times)[1] if len(full.times) > 1 else math.inf
                for i, t in enumerate(cut.times):
                    if t[j] is None:
                        skipped += 1
                        assert second < cut.bounds[i][j] <= full.times[i][j] * (1 + 1e-12), (collective, P, i, j)
                    else:
                        assert t[j] == full.times[i][j] and cut.bounds[i][j] is None
    assert skipped > 100


def test_regula_falsi_finds_bisections_crossover():
    import random
    rng = random.Random(5)
    for _ in range(2000):
        lo, hi = rng.randrange(0, 1000), 0
        hi = lo + rng.randrange(2, 5000)
        cross = rng.randrange(lo + 1, hi + 1)  # the later winner is slower below cross
        slope, kink = rng.choice([1.0, 0.01, 3.0]), rng.randrange(lo, hi + 1)
        calls = []

        def gap(m):  # piecewise linear, decreasing, 0 at cross - 0.5
            calls.append(m)
            return slope * (cross - 0.5 - m) * (1 if m < kink else rng.choice([1, 4]))
        bisect = planner._crossover(lo, hi, lambda m: gap(m) > 0)
        n = len(calls)
        calls.clear()
        assert planner._crossover(lo, hi, lambda m: gap(m) > 0, gap) == bisect == cross
        assert len(calls) <= 2 * n + 2


def test_cli_all_estimates_walks_what_the_pruned_plan_skips(capsys):
    argv = ["plan", "--collective", "allreduce", "--ranks", "2048", "--machine", "ib-qdr", "--json", "--no-progress"]
    assert main(argv) == 0
    cut = json.loads(capsys.readouterr().out)
    assert main(argv + ["--all-estimates"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert cut["ranges"] == full["ranges"] and "lower_bound_s" not in full["candidates"][0]
    gaps = [(c["label"], j) for c in cut["candidates"] for j, t in enumerate(c["times_s"]) if t is None]
    assert gaps and all(c["lower_bound_s"][j] is not None for c in cut["candidates"] for j, t in enumerate(c["times_s"])
                        if t is None)
    assert any("estimates not walked" in n for n in cut["notes"])
    assert all(t is not None for c in full["candidates"] for t in c["times_s"])
