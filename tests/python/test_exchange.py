"""The complete-exchange family from Python and the CLI: machine files, optimiser API, candidates in
`estimate --algorithm all`, partition=auto, A2AT link loads, the scattered and ring baselines."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

import collplan
import collplan.exchange as ex
from collplan import CollplanError


def run(*args, check=None):
    p = subprocess.run([sys.executable, "-m", "collplan", *args], capture_output=True, text=True, timeout=300)
    if check is not None:
        assert p.returncode == check, f"exit {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}"
    return p


@pytest.mark.parametrize("machine,d", [("ipsc860", 6), ("ipsc860-32", 5)])
def test_machine_files_are_the_papers_constants(machine, d):
    m = collplan.load_machine(machine)
    assert m.topology == f"hypercube:{d}"
    built_in, from_file = ex.costs(d), ex.costs(d, machine=machine)
    # the built-in default (C++) and the machine file agree: lambda + delta, tau, rho, Q(d)
    assert from_file["lambda_s"] + from_file["delta_s"] == pytest.approx(built_in["lambda_s"] + built_in["delta_s"])
    for k in ("tau_s_per_byte", "rho_s_per_byte", "barrier_s"):
        assert from_file[k] == pytest.approx(built_in[k]), k
    assert built_in["barrier_s"] == pytest.approx(150e-6 * d) and built_in["delta_s"] == pytest.approx(10.3e-6 * d)


def test_optimiser_api_matches_brute_force_and_closed_forms():
    for d in (5, 6, 8):
        for m in (1, 32, 100, 400):
            best = ex.optimal_partition(d, m)
            brute = min(ex.integer_partitions(d), key=lambda p: ex.cost("multiphase", d, m, partition=p))
            assert best["cost_s"] == pytest.approx(ex.cost("multiphase", d, m, partition=brute))
            assert best["evaluations"] <= 2 * (math.sqrt(d) + 1)
            assert tuple(best["partition"]) == ex.partition_for(ex.threshold_table(d), m)
    assert ex.optimal_partition(6, 32)["partition"] == [3, 3]
    with pytest.raises(CollplanError, match="partition"):
        ex.cost("multiphase", 5, 10)
    with pytest.raises(CollplanError):
        ex.costs(5, model="hockney:alpha=1us")


def test_generated_schedules_estimate_to_the_closed_forms():
    for alg, params in [("direct_exchange", {}), ("standard_exchange", {}), ("multiphase", {"partition": "2,3"})]:
        s = collplan.schedule(f"alltoall/{alg}", topology="hypercube:5", params=params)
        rows = collplan.estimate(s, [0, 32, 400], machine="ipsc860-32")
        for r in rows:
            want = ex.cost(alg, 5, r.size_bytes, partition=(2, 3) if alg == "multiphase" else None)
            assert r.time_s == pytest.approx(want, rel=1e-12)


def test_estimate_all_lists_the_partitions_optimal_in_the_range():
    p = run("estimate", "--collective", "alltoall", "--algorithm", "all", "--topology", "hypercube:6",
            "--machine", "ipsc860", "--sizes", "1B..400B", "--all-params", check=0)
    table = [part for m_from, part in ex.threshold_table(6, machine="ipsc860") if m_from <= 400]
    assert len(table) >= 2
    for part in table:
        assert f"multiphase[partition={','.join(map(str, part))}]" in p.stdout
    for name in ("direct_exchange", "standard_exchange", "pairwise", "scattered", "ring"):
        assert name in p.stdout
    j = json.loads(run("estimate", "--collective", "alltoall", "--algorithm", "all", "--topology", "hypercube:6",
                       "--machine", "ipsc860", "--sizes", "32B", "--json", check=0).stdout)
    mce = {r["params"]: r["time_s"] for r in j["results"] if r["algorithm"] == "alltoall/multiphase"}
    assert len(mce) == 1  # one size: only the partition of the table that covers it
    assert min(mce.values()) == pytest.approx(ex.optimal_partition(6, 32, machine="ipsc860")["cost_s"])


def test_partition_auto_and_explicit_from_the_cli(tmp_path):
    p = run("estimate", "--collective", "alltoall", "--algorithm", "multiphase", "--topology", "hypercube:5",
            "--machine", "ipsc860-32", "--param", "size=200B", "--sizes", "200B", "--json", check=0)
    r = json.loads(p.stdout)["results"][0]
    assert "partition=auto" in r["params"] and "size=200B" in r["params"]
    assert r["time_s"] == pytest.approx(ex.optimal_partition(5, 200)["cost_s"])
    p = run("verify", "--collective", "alltoall", "--algorithm", "multiphase", "--topology", "hypercube:6",
            "--param", "partition=1,2,3", check=0)
    assert "ok" in p.stdout
    p = run("verify", "--collective", "alltoall", "--algorithm", "multiphase", "--topology", "hypercube:6",
            "--param", "partition=2,3", check=2)
    assert "d=6" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_a2at_link_loads_reach_the_ideal():
    for k in (8, 9, 16):
        s = collplan.schedule("alltoall/a2at", topology=f"torus:{k}x{k}")
        ll = ex.link_loads(s)
        ideal = k ** 3 // 8 if k % 2 == 0 else k * (k * k - 1) // 8
        assert ll["max_units"] == ideal and min(ll["units"]) == ideal
    ring = ex.link_loads(collplan.schedule("alltoall/ring", topology="torus:8x8"))
    assert ring["max_units"] > 64
    assert all(o["port"] in (0, 1, 2, 3) for o in s.ops(0) if o["kind"] in ("send", "recv"))


def test_scattered_batches_and_baselines_verify():
    for P in (1, 2, 5, 8, 13):
        for b in (1, 2, 32, 0):
            s = collplan.schedule("alltoall/scattered", ranks=P, params={"batch": b})
            assert collplan.verify(s)["ok"], (P, b)
    s = collplan.schedule("alltoall/scattered", ranks=8, params={"batch": 3})
    assert sum(o["fence"] for o in s.ops(0)) == 2  # batches 0..2, 3..5, 6..7: a fence opens each later one
    one = collplan.estimate(s, [1000], model="hockney:alpha=1us,beta=1ns/B")[0].time_s
    many = collplan.estimate(s, [1000], model="hockney:alpha=1us,beta=1ns/B,ports=3")[0].time_s
    assert one == pytest.approx(7 * 2e-6) and many == pytest.approx(3 * 2e-6)
