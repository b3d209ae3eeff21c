"""The simulators from Python and the CLI: every fidelity runs every registered algorithm, results are sane, errors
are one line, plots and JSON are written."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import collplan
from collplan import CollplanError

FIDELITIES = ["loggp", "flow", "packet"]


def _cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "collplan", *args], capture_output=True, text=True, timeout=timeout)


def _case(alg: dict) -> tuple[str, dict, int, list]:
    """The largest case (P <= 16) of the algorithm's own verification sweep: a topology it applies to."""
    cases, _ = collplan._core.sweep_cases(alg["name"], 16)
    assert cases, f"{alg['name']} applies to no P <= 16"
    rank = {"torus": 0, "hypercube": 1, "full": 2, "ring": 3, "mesh": 4, "line": 5}
    _ranks, topo, _op, params, root, counts = min(cases, key=lambda c: (rank.get(c[1].split(":")[0], 9), -c[0]))
    return topo, params, root, counts


@pytest.mark.parametrize("fidelity", FIDELITIES)
def test_every_algorithm_every_fidelity(fidelity):
    for alg in collplan.algorithms():
        if alg["collective"] == "alltoallv":
            continue
        t, params, root, counts = _case(alg)
        s = collplan.schedule(alg["name"], topology=t, params=params, root=root, counts=counts or None)
        r = collplan.simulate(s, machine="a2at-torus", fidelity=fidelity, size="4KiB", topology=t)
        assert r.time_s > 0, alg["name"]
        assert len(r.rank_time_s) == s.ranks and max(r.rank_time_s) == pytest.approx(r.time_s)
        assert r.ideal_s > 0 and r.ratio >= 0.99, (alg["name"], fidelity, r.ratio)
        if fidelity != "loggp" and alg["collective"] != "barrier":  # a barrier's messages carry no bytes
            assert sum(r.link_bytes) > 0


def test_flow_equals_estimate_without_contention():
    s = collplan.schedule("allgather/ring", topology="ring:6")
    est = collplan.estimate(s, model="hockney:alpha=1us,beta=0.5ns/B", sizes=[65536])[0].time_s
    sim = collplan.simulate(s, model="hockney:alpha=1us,beta=0.5ns/B", fidelity="flow", size=65536)
    assert sim.time_s == pytest.approx(est, abs=1e-10)


def test_network_override_and_errors():
    s = collplan.schedule("alltoall/pairwise", topology="torus:4x4")
    base = collplan.simulate(s, machine="a2at-torus", fidelity="packet", size="16KiB")
    paced = collplan.simulate(s, machine="a2at-torus", fidelity="packet", size="16KiB",
                              network="pacing=gap,pacing_gap=2us")
    assert paced.time_s > base.time_s
    with pytest.raises(CollplanError, match="unknown network parameter"):
        collplan.simulate(s, machine="a2at-torus", network="warp=9")
    with pytest.raises(CollplanError, match="fidelity"):
        collplan.simulate(s, machine="a2at-torus", fidelity="exact")
    with pytest.raises(CollplanError, match="nodes"):
        collplan.simulate(s, machine="a2at-torus", topology="torus:4x2")


def test_cli_json_plot_and_errors(tmp_path):
    png = tmp_path / "links.png"
    p = _cli("simulate", "--collective", "alltoall", "--algorithm", "pairwise", "--topology", "torus:4x4",
             "--machine", "a2at-torus", "--fidelity", "flow", "--size", "32KiB", "--json", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    r = doc["results"][0]
    assert r["fidelity"] == "flow" and r["ratio"] >= 1 and set(r["link_utilisation"]) >= {"+X", "-X", "+Y", "-Y"}
    assert png.read_bytes()[:4] == b"\x89PNG"
    curves = tmp_path / "times.png"
    p = _cli("simulate", "--collective", "allgather", "--algorithm", "all", "--ranks", "8", "--model",
             "loggp:L=1us,o=0.5us,g=1us,G=0.1ns/B", "--fidelity", "loggp", "--sizes", "1KiB..16KiB", "--plot", str(curves))
    assert p.returncode == 0, p.stderr
    assert "allgather/ring" in p.stdout and curves.read_bytes()[:4] == b"\x89PNG"
    for bad in (["--machine", "nowhere"], ["--machine", "a2at-torus", "--set", "vcs=99"],
                ["--machine", "a2at-torus", "--fidelity", "quantum"]):
        p = _cli("simulate", "--collective", "alltoall", "--algorithm", "pairwise", "--topology", "torus:4x4", *bad)
        assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_machine_network_table():
    m = collplan.load_machine("a2at-torus")
    # The canonical spec lists what differs from the defaults (mtu 2 KiB, 2 VCs, 8 KiB buffers are the defaults).
    assert "header=32B" in m.network and "ports=4" in m.network and "mtu" not in m.network
    assert m.topology == "torus:8x8"


@pytest.mark.parametrize("fidelity", FIDELITIES)
def test_cli_runs_every_applicable_algorithm(fidelity):
    p = _cli("simulate", "--collective", "alltoall", "--algorithm", "all", "--topology", "torus:4x4", "--machine",
             "a2at-torus", "--fidelity", fidelity, "--size", "2KiB", "--json")
    assert p.returncode == 0, p.stderr
    names = {r["algorithm"] for r in json.loads(p.stdout)["results"]}
    applicable = {a["name"] for a in collplan.algorithms("alltoall")
                  if not collplan._core.applies(a["name"], 16, "torus:4x4", {})}
    assert names == applicable and {"alltoall/a2at", "alltoall/pairwise", "alltoall/ring"} <= names


@pytest.mark.parametrize("bins", [0, -1, 10**9, True, 2.5])
def test_bins_out_of_range_are_refused(bins):
    s = collplan.schedule("bcast/binomial", topology="torus:4x4")
    with pytest.raises(CollplanError, match=r"bins .* is out of range \(allowed: an integer 1\.\.1000000\)"):
        collplan.simulate(s, model="hockney:alpha=1us,beta=1ns/B", bins=bins)
    assert collplan.simulate(s, model="hockney:alpha=1us,beta=1ns/B", bins=1).time_s > 0


@pytest.mark.parametrize("fidelity", ["flow", "packet"])
def test_flow_and_packet_count_their_per_node_and_per_link_state(fidelity):
    # 1024 nodes, 4096 links: about 5 MiB (the port queues of every node); the estimate said 0.6-1.3 MiB before
    s = collplan.schedule("bcast/binomial", topology="torus:32x32")
    with pytest.raises(CollplanError, match=rf"simulate {fidelity} of bcast/binomial at P=1024 needs about .*"
                                            r"\(limit 2.00MiB, --max-memory\)"):
        collplan.simulate(s, model="hockney:alpha=1us,beta=1ns/B", fidelity=fidelity, max_memory="2MiB")


MODEL = "hockney:alpha=1us,beta=1ns/B"


def test_cli_all_takes_the_matrix_and_the_counts():
    """--algorithm all builds every schedule from the problem's inputs (it used to drop --matrix and --counts)."""
    from collplan.unstructured import matrix_from_spec
    p = _cli("simulate", "--collective", "alltoallv", "--algorithm", "all", "--matrix", "testset1:P=8,d=3", "--model",
             MODEL, "--fidelity", "loggp", "--size", "1KiB", "--json", "--links", "--no-progress")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["results"]
    assert {r["algorithm"] for r in rows} == {a["name"] for a in collplan.algorithms("alltoallv")}
    m = matrix_from_spec("testset1:P=8,d=3", None)
    for r in rows:
        want = collplan.simulate(collplan.schedule(r["algorithm"], ranks=8, matrix=m), model=MODEL, fidelity="loggp",
                                 size="1KiB")
        assert r["ranks"] == 8 and r["rank_time_s"] == want.rank_time_s, r["algorithm"]
    p = _cli("simulate", "--collective", "allgatherv", "--algorithm", "all", "--counts", "3,0,5,1", "--model", MODEL,
             "--fidelity", "loggp", "--size", "1KiB", "--json", "--links", "--no-progress")
    assert p.returncode == 0, p.stderr
    for r in json.loads(p.stdout)["results"]:
        want = collplan.simulate(collplan.schedule(r["algorithm"], ranks=4, counts=[3, 0, 5, 1]), model=MODEL,
                                 fidelity="loggp", size="1KiB")
        assert r["rank_time_s"] == want.rank_time_s, r["algorithm"]


@pytest.mark.parametrize("collective", ["bcast", "gather"])
def test_cli_all_honours_the_root(collective):
    """--algorithm all at --root 2: every schedule is rooted at 2 (the root used to be 0 silently)."""
    p = _cli("simulate", "--collective", collective, "--algorithm", "all", "--ranks", "8", "--root", "2", "--model",
             MODEL, "--fidelity", "loggp", "--size", "1KiB", "--json", "--links", "--no-progress")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["results"]
    moved = 0
    for r in rows:
        def times(root):
            s = collplan.schedule(r["algorithm"], ranks=8, root=root)
            return collplan.simulate(s, model=MODEL, fidelity="loggp", size="1KiB").rank_time_s
        assert r["rank_time_s"] == times(2), r["algorithm"]
        moved += times(2) != times(0)
    assert rows and moved == len(rows)  # at root 0 every one of them finishes its ranks at other times


@pytest.mark.parametrize("fidelity", FIDELITIES)
def test_simulate_defaults_to_the_algorithms_own_ports(fidelity):
    """torgos names 4 ports (its GOAL export has them); on ib-qdr, whose file names none, simulate uses 4 and says
    so, the lower bound divides by them too (ratio >= 1); --set ports=1 and a machine that states its ports
    (a2at-torus: 4 ports, and a2at itself) are kept as given."""
    s = collplan.schedule("allgather/torgos", topology="torus:4x4")
    assert s.ports == 4 and collplan.schedule("allgather/ring", ranks=4).ports == 0
    base = ["simulate", "--collective", "allgather", "--algorithm", "torgos", "--topology", "torus:4x4", "--machine",
            "ib-qdr", "--fidelity", fidelity, "--size", "64KiB", "--no-progress"]
    own = _cli(*base)
    assert own.returncode == 0, own.stderr
    assert "# allgather/torgos: 4 ports per node, the algorithm's own" in own.stdout
    one = _cli(*base, "--set", "ports=1", "--json")
    four = _cli(*base, "--set", "ports=4", "--json")
    t_one, t_four = (json.loads(p.stdout)["results"][0] for p in (one, four))
    assert t_four["time_s"] < t_one["time_s"] and t_four["ratio"] >= 1 and t_one["ratio"] >= 1
    assert f"{collplan._core.format_time(t_four['time_s'])} " in own.stdout  # the default is the 4-port run
    kept = _cli(*[a if a != "ib-qdr" else "paragon" for a in base], "--json")  # paragon: ports = 1, stated
    assert kept.returncode == 0, kept.stderr
    assert json.loads(kept.stdout)["results"][0]["network"].count("ports") == 0  # nothing added to its network
