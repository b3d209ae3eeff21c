"""The gossip family from Python: the unit model, `collplan tune`, auto parameters, bounds in `estimate --json`,
and the Paragon machine file."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import collplan
from collplan import _core, gossip


def run(*args, check=0):
    p = subprocess.run([sys.executable, "-m", "collplan", *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == check, p.stdout + p.stderr
    return p


@pytest.mark.parametrize("n", [8, 9, 27])
@pytest.mark.parametrize("r", [0.5, 10.0])
def test_unit_model_gives_lemma_4(n, r):
    s = collplan.schedule("allgather/approach1", topology=f"ring:{n}")
    assert gossip.units(s, r) == pytest.approx((n // 2) * (r + 1))


def test_tune_command_json_and_table():
    out = json.loads(run("tune", "--algorithm", "circgos", "--topology", "ring:81", "--r", "10", "--r", "250",
                         "--json").stdout)["results"]
    assert [x["r"] for x in out] == [10.0, 250.0]
    for x in out:
        assert x["estimate_units"] >= x["lower_bound_units"]
        assert x["estimate_units"] == pytest.approx(x["formula_units"], rel=0.1)
    assert out[0]["a"] >= out[1]["a"]  # more bridgeheads for a smaller startup ratio
    table = run("tune", "--algorithm", "torgos", "--topology", "torus:9x9", "--r", "50").stdout
    assert "formula" in table and "torgos" in table


def test_tune_refuses_algorithms_without_parameters():
    p = run("tune", "--algorithm", "ring", "--topology", "ring:8", "--r", "1", check=2)
    assert "circgos" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_fixed_parameters_restrict_the_search():
    x = gossip.tune("circgos", "ring:27", 10, fixed={"a": 9})
    assert x["a"] == 9
    assert gossip.resolved("allgather/circgos", "ring:27", {"a": 3, "b": 3, "k": 1})[0]["a"] == 3


def test_auto_parameters_from_the_cli_and_lower_bound_in_json():
    out = json.loads(run("estimate", "--collective", "allgather", "--algorithm", "circgos", "--topology", "ring:27",
                         "--param", "a=auto", "--param", "r=10", "--machine", "paragon", "--sizes", "1KiB,64KiB",
                         "--json").stdout)["results"]
    for row in out:
        assert 0 < row["lower_bound_s"] <= row["time_s"]


def test_estimate_all_on_a_torus_stays_above_the_gossip_bound():
    model = "wormhole:startup=20us,flit=1B,flit_time=1ns,hop_time=0ns,ports=4"
    out = json.loads(run("estimate", "--collective", "allgather", "--algorithm", "all", "--topology", "torus:6x6",
                         "--model", model, "--sizes", "64B,4KiB,256KiB", "--json").stdout)
    names = {r["algorithm"] for r in out["results"]}
    assert {"allgather/torgos", "allgather/cubgos", "allgather/approach11"} <= names
    for r in out["results"]:
        assert r["time_s"] >= r["lower_bound_s"] * (1 - 1e-9)
    b = _core.gossip_bounds(36, "torus:6x6", model, 4096.0)
    assert b["applies"] and b["lower_bound_s"] >= b["lemma1_s"]


def test_paragon_machine():
    m = collplan.load_machine("paragon")
    assert "duplex=0" in m.model and "startup=150us" in m.model
    assert m.topology == "mesh:10x14"
    assert "Sec. 7" in m.sources["startup"]


def test_coloured_schedules_split_the_contribution():
    s = collplan.schedule("allgather/highdimgos_coloured", topology="torus:3x3x3")
    assert s.size_blocks == 3 and s.blocks("in") == 3 and s.blocks("out") == 81
    assert collplan.verify(s)["ok"]
    ports = {o["port"] for r in range(27) for o in s.ops(r) if o["kind"] in ("send", "recv")}
    assert ports == set(range(6))  # all-port: one port per axis and direction


@pytest.mark.parametrize("algorithm,topology", [("torgos", "full:81"), ("circgos", "full:729"),
                                                ("cubgos", "full:64"), ("circgos", "torus:4x4")])
def test_tune_refuses_topologies_the_algorithm_does_not_apply_to(algorithm, topology):
    # the search indexed the grid's sides, which full: has not: SIGSEGV before
    with pytest.raises(collplan.CollplanError, match=rf"allgather/{algorithm} does not apply to .* on {topology}"):
        gossip.tune(algorithm, topology, r=50)


def test_tune_has_a_memory_limit():
    with pytest.raises(collplan.CollplanError, match=r"\(limit 1.00KiB, --max-memory\)"):
        gossip.tune("circgos", "ring:81", 10, max_memory="1KiB")
