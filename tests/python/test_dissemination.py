"""The n-way dissemination family from Python: plans and 5-tuples, the multiset interpreter, costs and the choice
of n, and the CLI (`collplan dissemination`, verify of the unadapted variant)."""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

import collplan
from collplan import dissemination
from collplan.symbolic import allreduce_rounds


def run(*args):
    return subprocess.run([sys.executable, "-m", "collplan", *args], capture_output=True, text=True, timeout=300)


def test_plan_of_the_papers_example_and_a_fallback():
    p = dissemination.plan(8, 2)
    assert (p["rounds"], p["window"], p["prefixes"], p["distances"], p["takeout"]) == (2, 3, [3, 2], [3, 6], 0)
    t = p["tuple"]
    assert (t["s"], t["l_snd"], t["j_snd"], t["l_rcv"], t["case"]) == (2, 1, 1, -1, 0)
    assert dissemination.five_tuples(13, 1) == []
    f = dissemination.plan(13, 1)
    assert f["tuple"] is None and 8 + sum(f["prefixes"]) == 13 + f["takeout"]
    with pytest.raises(collplan.CollplanError, match="takeout 'minus'"):
        dissemination.plan(8, 2, "minus")


@pytest.mark.parametrize("P,n", [(8, 2), (13, 1), (26, 2), (40, 2), (100, 3)])
@pytest.mark.parametrize("takeout", ["keep", "inverse", "none"])
def test_symbolic_rounds_are_exact_for_the_adapted_schedule(P, n, takeout):
    s = collplan.schedule("allreduce/nway_dissemination", ranks=P, params={"n": n, "takeout": takeout})
    rounds = allreduce_rounds(s)
    k = dissemination.plan(P, n, takeout)["rounds"]
    for rr in rounds:
        assert len(rr.states) == k + 1
        assert rr.states[-1] == Counter(range(P))
    assert collplan.verify(s)["ok"]


def test_symbolic_rounds_show_the_double_counting():
    s = collplan.schedule("allreduce/nway_dissemination_plain", ranks=8, params={"n": 2})
    rounds = allreduce_rounds(s)
    assert [m.source for m in rounds[0].received] == [7, 6, 5, 2]
    for p, rr in enumerate(rounds):
        assert rr.states[1] == Counter([p, (p - 1) % 8, (p - 2) % 8])
        assert rr.states[2] - Counter(range(8)) == Counter([p])  # its own x_p a second time


def test_costs_and_best_n():
    rows = dissemination.costs(64, "8B")
    assert [r["n"] for r in rows] == list(range(1, 8))
    best = dissemination.best_n(64)
    assert best == min(rows, key=lambda r: r["time_s"])["n"] and best > 1
    for r in rows:
        assert len(r["messages_per_round"]) == r["plan"]["rounds"]
        assert r["bytes_sent"] == 8 * r["messages"]
        assert r["time_s"] == pytest.approx(sum(r["time_per_round_s"]))
    # The model's time is the estimate of the generated schedule.
    s = collplan.schedule("allreduce/nway_dissemination", ranks=64, params={"n": 3})
    est = collplan.estimate(s, sizes=[8], model=dissemination.DEFAULT_MODEL)[0].time_s
    assert est == pytest.approx(rows[2]["time_s"], rel=1e-9)
    assert dissemination.best_n(64, "1MiB", model="hockney:alpha=1us,beta=1ns/B") == 1


def test_cli_dissemination_and_verify_of_the_plain_variant():
    p = run("dissemination", "--ranks", "8", "--json")
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    assert j["best_n"] == min(j["candidates"], key=lambda r: r["time_s"])["n"]
    t = run("dissemination", "--ranks", "13", "--n-max", "2")
    assert t.returncode == 0 and "fallback" in t.stdout and "best n =" in t.stdout
    bad = run("verify", "--collective", "allreduce", "--algorithm", "nway_dissemination_plain", "--ranks", "8",
              "--param", "n=2", "--op", "sum", "--json")
    assert bad.returncode == 1 and json.loads(bad.stdout)["reason"] == "double-count"
    ok = run("verify", "--collective", "allreduce", "--algorithm", "nway_dissemination_plain", "--ranks", "8",
             "--param", "n=2")  # the default operation of an idempotent-only schedule is max
    assert ok.returncode == 0, ok.stdout + ok.stderr
    e = run("dissemination", "--ranks", "0")
    assert e.returncode == 2 and len(e.stderr.strip().splitlines()) == 1


def test_estimate_all_includes_the_new_allreduces():
    p = run("estimate", "--collective", "allreduce", "--algorithm", "all", "--machine", "ib-qdr", "--ranks", "24",
            "--sizes", "8B", "--json")
    assert p.returncode == 0, p.stderr
    names = {r["algorithm"] for r in json.loads(p.stdout)["results"]}
    assert {"allreduce/nway_dissemination", "allreduce/recexch"} <= names
