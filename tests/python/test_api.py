"""The Python API: schedules, verification, estimates, machine files, topology."""
from __future__ import annotations

import tomllib

import pytest

import collplan
from collplan import CollplanError


def test_schedule_and_verify():
    s = collplan.schedule("allreduce/rabenseifner", ranks=12)
    assert s.ranks == 12 and s.algorithm == "allreduce/rabenseifner"
    assert collplan.verify(s, op="sum")["ok"]
    ops = s.ops(1)  # rank 0 sits out (P = 12 is not a power of two): it only sends and receives
    assert {o["kind"] for o in ops} >= {"send", "recv", "reduce"}


def test_short_names_with_collective_and_errors():
    s = collplan.schedule("ring", ranks=5, collective="allgather")
    assert s.algorithm == "allgather/ring"
    with pytest.raises(CollplanError, match="unknown algorithm"):
        collplan.schedule("ring", ranks=5)  # ambiguous without a collective
    with pytest.raises(CollplanError, match="ranks"):
        collplan.schedule("allgather/ring")


def test_estimate_matches_closed_form_and_bound():
    s = collplan.schedule("allgather/ring", ranks=8)
    rows = collplan.estimate(s, sizes=[0, 1024, "64KiB"], model="hockney:alpha=1us,beta=1ns/B")
    for r in rows:
        assert r.time_s == pytest.approx(7 * (1e-6 + r.size_bytes * 1e-9))
        assert r.lower_bound_s <= r.time_s
    assert rows[2].size_bytes == 65536


def test_estimate_needs_exactly_one_model_source():
    s = collplan.schedule("allgather/ring", ranks=4)
    with pytest.raises(CollplanError):
        collplan.estimate(s, sizes=[8])
    with pytest.raises(CollplanError):
        collplan.estimate(s, sizes=[8], machine="ib-qdr", model="hockney:alpha=1us,beta=1ns/B")
    with pytest.raises(CollplanError, match="-5"):
        collplan.estimate(s, sizes=[-5], machine="ib-qdr")


def test_bundled_machines_have_units_and_sources():
    names = collplan.machine_names()
    assert "ib-qdr" in names
    for name in names:
        m = collplan.load_machine(name)
        raw = tomllib.loads(open(m.path).read())
        for key, value in raw["model"].items():
            if key == "kind":
                continue
            assert key in raw["sources"], f"{name}: constant {key} has no source"
            if key in ("ports", "duplex"):  # a count and a flag: no unit, but a source like every constant
                continue
            assert isinstance(value, str) and any(c.isalpha() for c in value), f"{name}: {key} lacks a unit"
        for key in raw.get("network", {}):  # simulator parameters (docs/simulation.md)
            assert key in raw["sources"], f"{name}: network parameter {key} has no source"
        if m.topology:
            collplan.Topology.parse(m.topology)


def test_machine_file_errors(tmp_path):
    bad = tmp_path / "m.toml"
    bad.write_text('name = "x"\n[model]\nkind = "hockney"\nalpha = "1us"\nbeta = "fast"\n')
    with pytest.raises(CollplanError, match="fast"):
        collplan.load_machine(str(bad))
    bad.write_text("name = ")
    with pytest.raises(CollplanError, match="cannot read"):
        collplan.load_machine(str(bad))


def test_topology_api():
    t = collplan.Topology.parse("torus:4x4")
    assert t.nodes == 16 and t.distance(0, 10) == 4 and len(t.route(0, 10)) == 4
    with pytest.raises(CollplanError, match="valid"):
        collplan.Topology.parse("torus:4y4")


def test_units():
    assert collplan.parse_size("4KiB") == 4096
    assert collplan.parse_sizes("16B..64B") == [16, 32, 64]
    assert collplan.parse_time("1.5us") == pytest.approx(1.5e-6)
    with pytest.raises(CollplanError):
        collplan.parse_size("1.5B")


def test_text_round_trip_of_every_algorithm():
    for a in collplan.algorithms():
        if a["collective"] == "alltoallv":
            continue
        for p in (1, 5, 8):
            try:
                s = collplan.schedule(a["name"], ranks=p)
            except CollplanError:
                continue  # declined
            t = collplan.Schedule.from_text(s.to_text())
            assert t == s and t.to_text() == s.to_text(), a["name"]


@pytest.mark.parametrize("name,P,formula", [
    ("allgather/recursive_doubling", 16, lambda P, m, a, b: 4 * a + (P - 1) * m * b),
    ("allgather/ring", 9, lambda P, m, a, b: (P - 1) * (a + m * b)),
    ("alltoall/pairwise", 8, lambda P, m, a, b: (P - 1) * (a + m * b)),
    ("alltoall/pairwise", 7, lambda P, m, a, b: (P - 1) * (a + m * b)),
    ("allreduce/recursive_doubling", 8, lambda P, n, a, b: 3 * (a + n * b)),
])
def test_baselines_match_their_closed_forms(name, P, formula):
    a, b = 3e-6, 2e-9
    s = collplan.schedule(name, ranks=P)
    for row in collplan.estimate(s, sizes=[8, 4096, 1 << 20], model=f"hockney:alpha=3us,beta=2ns/B"):
        assert row.time_s == pytest.approx(formula(P, row.size_bytes, a, b), rel=1e-9)
