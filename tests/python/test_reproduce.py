"""Every registered reproduction runs in quick mode, holds its required claims and writes its files."""
from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from collplan import reproduce


def test_listing():
    p = subprocess.run([sys.executable, "-m", "collplan", "reproduce"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    for name in reproduce.names():
        assert name in p.stdout


def test_unknown_reproduction_is_one_line_error():
    p = subprocess.run([sys.executable, "-m", "collplan", "reproduce", "no-such-table"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "no-such-table" in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="session")
def quick_runs(tmp_path_factory):
    """quick_runs(name) -> (the finished `collplan reproduce NAME --quick`, its --out directory), run once."""
    done = {}

    def get(name: str):
        if name not in done:
            out = tmp_path_factory.mktemp(name)
            done[name] = (subprocess.run([sys.executable, "-m", "collplan", "reproduce", name, "--quick", "--out",
                                          str(out)], capture_output=True, text=True, timeout=600), out)
        return done[name]
    return get


@pytest.mark.parametrize("name", reproduce.names())
def test_quick_reproduction(name, quick_runs):
    p, out = quick_runs(name)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = list(csv.reader(open(out / f"{name}.csv")))
    assert len(rows) >= 2
    doc = json.loads((out / f"{name}.json").read_text())
    for c in doc["claims"]:
        assert c["holds"] or not c["required"], c
        assert {"paper", "collplan", "comparison", "holds"} <= set(c), c  # every claim prints both numbers
    CHECKS.get(name, lambda doc: None)(doc)
    written = [line.split(" ", 1)[1] for line in p.stderr.splitlines() if line.startswith("wrote ")]
    assert {f"{name}.csv", f"{name}.json"} <= {w.rsplit("/", 1)[-1] for w in written}
    for w in written:
        if w.endswith(".png"):
            assert open(w, "rb").read(4) == b"\x89PNG"


def test_a2at_torus_over_mpi_matches_one_process(quick_runs, tmp_path):
    """Under mpirun the simulations are split over the ranks (reproduce.cells) and rank 0 alone reports: the same
    table but for each cell's wall time, the same claims, notes and files as one process."""
    from test_mpi import mpirun
    _, one = quick_runs("a2at-torus")
    r = mpirun("openmpi", 2, [sys.executable, "-m", "collplan", "reproduce", "a2at-torus", "--quick", "--out",
                              str(tmp_path), "--no-progress"])
    assert r.returncode == 0, r.stdout + r.stderr
    a, b = (json.loads((d / "a2at-torus.json").read_text()) for d in (one, tmp_path))
    wall = a["columns"].index("wall_s")
    def strip(doc):
        return [row[:wall] + row[wall + 1:] for row in doc["rows"]]
    assert strip(a) == strip(b) and a["claims"] == b["claims"] and a["notes"] == b["notes"]
    assert sorted(f.name for f in one.iterdir()) == sorted(f.name for f in tmp_path.iterdir())
    assert r.stdout.count("# A2AT on 2D tori") == 1  # one report, rank 0's


def test_a_claims_verdict_comes_from_its_numbers():
    from collplan.reproduce import Claim, ranking
    assert not Claim("torgos 3.04 us/B", 3.04, 4.28, "~", 0.25).holds
    assert Claim("torgos 3.04 us/B", 3.04, 3.5, "~", 0.25).holds
    assert Claim("faster", 1.0, 0.99, "<").holds and not Claim("faster", 1.0, 1.0, "<").holds
    assert Claim("ranking", "a < b", ranking({"a": 1.0, "b": 2.0})).holds
    assert not Claim("ranking", "a < b", ranking({"a": 1.0, "b": 1.0})).holds  # a tie is not an order: 'a = b'
    assert Claim("in", (1, 2), 1.5, "in").holds and not Claim("in", (1, 2), 2.5, "in").holds
    with pytest.raises(TypeError):
        Claim("verdict passed in", 1.0, 2.0, holds=True)
    with pytest.raises(ValueError):
        Claim("bad comparison", 1.0, 2.0, "~=")
    d = Claim("x", 2.0, 1.0, ">=", 0.1, "ms", required=True).as_dict()
    assert (d["paper"], d["collplan"], d["holds"], d["required"], d["comparison"]) == (2.0, 1.0, False, True,
                                                                                      "collplan >= paper - 10%")



def _unstructured(doc):
    """The RS_NH phase counts of Table 5 are among the claims and agree within 10%; every 'fastest' claim names
    the paper's winner (RS_NH), whatever collplan's is."""
    t5 = [c for c in doc["claims"] if c["text"].startswith("RS_NH phases (Table 5")]
    assert [c["paper"] for c in t5] == [5.66, 19.1, 34.56] and all(c["holds"] for c in t5)
    fastest = [c for c in doc["claims"] if "the fastest of AC, LP" in c["text"]]
    assert fastest and all(c["paper"] == "RS_NH" for c in fastest)


def _a2at(doc):
    """The ratios are the times over the ideals of the same rows (computed, not typed); the per-group-paced A2AT
    without VOQs is within the report's 107.5% on 8x8 and 9x9 at 1 MiB; the mesh claim carries the step bound."""
    cols = doc["columns"]
    for row in doc["rows"]:
        r = dict(zip(cols, row))
        assert abs(r["ratio"] - r["time_ms"] / r["ideal_ms"]) < 2e-3, r
    target = [c for c in doc["claims"] if c["text"].startswith("A2AT with per-group pacing, ordinary input buffers")]
    assert len(target) == 2 and all(c["paper"] == 1.075 and c["holds"] for c in target)
    bound = [c for c in doc["claims"] if "not faster than its step bound" in c["text"]]
    assert len(bound) == 1 and abs(bound[0]["paper"] - 190 / 128) < 1e-3


def test_a2at_mesh_step_bound_by_hand():
    """mesh:3x3, A2AT with a barrier between its six groups: (1,0) puts 1 message on its busiest link, (1,1) 2 (the
    +X links of the middle row carry (1,1) and (1,-1)), (1,2), (2,0), (2,1), (2,2) 1 each: 7 blocks; the busiest
    link of the whole all-to-all carries 6 (the 2 x 3 messages across a middle link)."""
    from collplan.api import schedule
    from collplan.reproduce.a2at_torus import step_bound_units
    assert step_bound_units(schedule("alltoall/a2at", topology="mesh:3x3", params={"sync": "barrier"}), 3, 3) == (7, 6)


CHECKS = {"unstructured-cm5": _unstructured, "a2at-torus": _a2at}
