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


def test_reduction_operations_come_from_the_one_table():
    from collplan import _core, api
    table = _core.reduction_ops()
    assert api.OPS == [o["name"] for o in table]
    assert {"max", "min", "land", "lor", "band", "bor", "maxloc", "minloc"} == api.IDEMPOTENT_OPS
    assert {o["name"] for o in table if o["invertible"]} == {"sum", "bxor"}
    s = collplan.schedule("allreduce/recexch", ranks=7, params={"k": 3})
    for op in api.OPS:
        assert collplan.verify(s, op=op)["ok"], op
    with pytest.raises(CollplanError, match="unknown reduction operation 'avg' .allowed: sum, prod"):
        collplan.verify(s, op="avg")
    with pytest.raises(CollplanError, match="'avg'"):
        api.unsupported_op(s, "avg")
    plain = collplan.schedule("allreduce/nway_dissemination_plain", ranks=8, params={"n": 2})
    assert api.unsupported_op(plain, "land") == "" and "idempotent" in api.unsupported_op(plain, "lxor")
    inverse = collplan.schedule("allreduce/nway_dissemination", ranks=7, params={"n": 1, "takeout": "inverse"})
    assert inverse.needs_inverse and api.unsupported_op(inverse, "bxor") == ""
    assert "inverse" in api.unsupported_op(inverse, "prod")


def test_rank_consistency_in_verify_and_the_schedule():
    s = collplan.schedule("allreduce/recexch", ranks=10, params={"k": 3})
    v = collplan.verify(s)
    assert s.rank_consistent and v["ok"] and v["rank_consistent"] and v["consistency"] == ""
    t = collplan.schedule("allreduce/nway_dissemination", ranks=3, params={"n": 1})
    v = collplan.verify(t)
    assert not t.rank_consistent and v["ok"] and not v["rank_consistent"]
    assert v["consistency"] == "out[0]: rank 0 computes (x1+(x2+x0)), rank 1 computes (x2+(x0+x1))"
    u = collplan.schedule("allreduce/nway_dissemination", ranks=3, params={"n": 1, "forward": "contributions"})
    assert u.rank_consistent and collplan.verify(u, op="noncommutative")["rank_consistent"]
    assert collplan.Schedule.from_text(u.to_text()).rank_consistent and "rank_consistent" in u.to_text()
    assert collplan.verify(collplan.schedule("allgather/ring", ranks=4))["rank_consistent"]  # nothing computed
    params = {a["name"]: a["rank_consistent_params"] for a in collplan.algorithms("allreduce")}
    assert params["allreduce/nway_dissemination"] == {"forward": "contributions"}
    assert params["allreduce/recexch"] == {} and params["allreduce/nway_dissemination_plain"] == {}


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
