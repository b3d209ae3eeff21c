"""collplan.replay: planning for a recorded profile (`collplan plan --profile`) and replaying it at another scale
(`collplan replay`), on hand-written profiles (docs/profile.md's format) whose times can be worked out by hand."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import collplan
from collplan import _core, native, replay
from collplan._core import CollplanError
from collplan.profile import load

OMPI = "Open MPI v5.0.8, package: Open MPI test, repo rev: v5.0.8, Apr 18, 2025"
NS = 1e-9


def call(seq, coll, comm, cseq, enter, exit_, gap, nbytes=0, kind="b", root=-1, op="-", commutative="-",
         values=(), type_size=1, start=0):
    """A `call` line (times in ns)."""
    return (f"call {seq} {coll} {kind} {comm} {cseq} {start} {root} {nbytes} {type_size} 1 {op} {commutative} "
            f"{enter} {exit_} {gap} {len(values)}" + "".join(f" {v}" for v in values))


def write_profile(d, ranks, mpi=OMPI, init_exit=0, hosts=None):
    """ranks[r] = (comm lines, call/done lines, finalize ns): one collplan.<r>.prof per rank."""
    P = len(ranks)
    for r, (comms, lines, fin) in enumerate(ranks):
        host = hosts[r] if hosts else f"node{r}"  # one rank per node, as the simulator places them
        text = [f"collplan-profile 1", f"rank {r} {P}", f"mpi {mpi}", f"host {host}", f"init -1000 {init_exit}"]
        text += comms + lines + [f"finalize {fin}", f"end {sum(x.startswith('call') for x in lines)}"]
        (d / f"collplan.{r}.prof").write_text("\n".join(text) + "\n")
    return load(str(d))


def world(P):
    return f"comm 0 {P} 0 " + " ".join(str(i) for i in range(P))


def rank_times(algorithm, P, size, machine="ib-qdr", fidelity="loggp", topology=None, **kw):
    s = collplan.schedule(algorithm, ranks=P, topology=topology, **kw)
    return collplan.simulate(s, machine=machine, fidelity=fidelity, size=size, topology=topology).rank_time_s


def lib_choice(coll, P, nbytes, type_size=1, **kw):
    """What the replay's native variant runs: MPICH's choice, one rank per node (write_profile's hosts)."""
    c = native.choice("mpich", coll, P, nbytes, nodes=P, type_size=type_size, **kw)
    return c.algorithm, c.params


# ------------------------------------------------------------------------------------------- timeline rules
def test_blocking_barrier_two_ranks(tmp_path):
    """Rank 0 arrives at 1 us, rank 1 at 3 us: both complete at 3 us + T_r (the barrier's simulated completion of
    rank r), then compute until finalize."""
    prof = write_profile(tmp_path, [
        ([world(2)], [call(0, "barrier", 0, 0, 1000, 5000, 1000)], 9000),
        ([world(2)], [call(0, "barrier", 0, 0, 3000, 5000, 3000)], 6000)])
    rp = replay.replay(prof, "ib-qdr", library="mpich", ranks=2, progress=False)
    alg, params = lib_choice("barrier", 2, 0)
    T = rank_times(alg, 2, 0, params=params)
    native_v = rp.variants[0]
    assert native_v.name == "native"
    done = [3e-6 + T[0], 3e-6 + T[1]]
    coll = [done[0] - 1e-6, done[1] - 3e-6]
    assert native_v.collective_mean_s == pytest.approx(sum(coll) / 2)
    assert native_v.collective_max_s == pytest.approx(max(coll))
    assert native_v.total_s == pytest.approx(max(done[0] + 4e-6, done[1] + 1e-6))
    # at the recorded P the profile's own times stand beside (the accuracy check)
    assert rp.recorded.collective_mean_s == pytest.approx((4000 + 2000) * NS / 2)
    assert rp.recorded.total_s == pytest.approx(prof.wall_s())


def test_the_library_is_asked_with_the_recorded_nodes_at_the_recorded_scale(tmp_path):
    """Two ranks recorded on one host: MPICH there runs its shared-memory allreduce (no collplan schedule), so the
    native variant is not modelled at N = P; scaled to 4 ranks, every rank is a node and the MPIR rule applies."""
    lines = [call(0, "allreduce", 0, 0, 1000, 2000, 1000, 64, op="sum", commutative=1, type_size=8)]
    prof = write_profile(tmp_path, [([world(2)], lines, 3000), ([world(2)], lines, 3000)], hosts=["a", "a"])
    assert native.choice("mpich", "allreduce", 2, 64, nodes=1, type_size=8).algorithm is None
    same = replay.replay(prof, "ib-qdr", library="mpich", ranks=2, progress=False)
    assert any("not modelled" in n for n in same.notes), same.notes
    scaled = replay.replay(prof, "ib-qdr", library="mpich", ranks=4, progress=False)
    assert not any("not modelled" in n for n in scaled.notes), scaled.notes


def test_allreduce_then_nonblocking_two_ranks(tmp_path):
    """An allreduce, then an iallreduce whose wait comes after 2 us of overlapped compute: the rank goes on at the
    call's exit, waits at its done line's entry until the instance completes."""
    s8 = 64
    lines = [
        [call(0, "allreduce", 0, 0, 1000, 2000, 1000, s8, op="sum", commutative=1, type_size=8),
         call(1, "allreduce", 0, 1, 2500, 2600, 500, s8, kind="nb", op="sum", commutative=1, type_size=8),
         "done 1 4600 9000"],
        [call(0, "allreduce", 0, 0, 1500, 2000, 1500, s8, op="sum", commutative=1, type_size=8),
         call(1, "allreduce", 0, 1, 2200, 2300, 200, s8, kind="nb", op="sum", commutative=1, type_size=8),
         "done 1 2400 9000"]]
    prof = write_profile(tmp_path, [([world(2)], lines[0], 10000), ([world(2)], lines[1], 10000)])
    rp = replay.replay(prof, "ib-qdr", library="mpich", ranks=2, progress=False)
    alg, params = lib_choice("allreduce", 2, s8, 8, commutative=True)
    T = rank_times(alg, 2, s8, params=params)
    # allreduce: arrivals 1 us, 1.5 us
    d0 = [1.5e-6 + T[0], 1.5e-6 + T[1]]
    # iallreduce: arrival = d + gap, goes on after 100 ns, waits from its done entry (2 us or 0.1 us later)
    a = [d0[0] + 0.5e-6, d0[1] + 0.2e-6]
    wait_at = [a[0] + 0.1e-6 + 2.0e-6, a[1] + 0.1e-6 + 0.1e-6]
    end = [max(wait_at[r], max(a) + T[r]) for r in range(2)]
    coll = [(d0[r] - (1e-6, 1.5e-6)[r]) + 0.1e-6 + (end[r] - wait_at[r]) for r in range(2)]
    v = rp.variants[0]
    assert v.collective_mean_s == pytest.approx(sum(coll) / 2)
    assert v.total_s == pytest.approx(max(end[r] + 1e-6 for r in range(2)))  # finalize 1 us after the done exit
    assert v.per_collective_s["allreduce"] == pytest.approx(sum(coll) / 2)


def test_wait_after_a_blocking_call(tmp_path):
    """An ibarrier, a blocking allreduce, then the ibarrier's wait: the compute before the done line is its entry
    minus the allreduce's exit; the rank waits there until the barrier completes."""
    ar = dict(op="sum", commutative=1, type_size=8)
    prof = write_profile(tmp_path, [
        ([world(2)], [call(0, "barrier", 0, 0, 1000, 1100, 1000, kind="nb"),
                      call(1, "allreduce", 0, 1, 1500, 3000, 400, 8, **ar), "done 0 3500 3600"], 4000),
        ([world(2)], [call(0, "barrier", 0, 0, 2000, 2100, 2000, kind="nb"),
                      call(1, "allreduce", 0, 1, 2200, 3000, 100, 8, **ar), "done 0 3000 3600"], 4000)])
    rp = replay.replay(prof, "ib-qdr", library="mpich", ranks=2, progress=False)
    alg, params = lib_choice("barrier", 2, 0)
    Tb = rank_times(alg, 2, 0, params=params)
    alg, params = lib_choice("allreduce", 2, 8, 8, commutative=True)
    Ta = rank_times(alg, 2, 8, params=params)
    after_ar = [2.2e-6 + Ta[0], 2.2e-6 + Ta[1]]
    at_wait = [after_ar[0] + 0.5e-6, after_ar[1]]
    end = [max(at_wait[r], 2e-6 + Tb[r]) for r in range(2)]
    coll = [0.1e-6 + after_ar[0] - 1.5e-6 + end[0] - at_wait[0], 0.1e-6 + Ta[1] + end[1] - at_wait[1]]
    v = rp.variants[0]
    assert v.total_s == pytest.approx(max(end) + 0.4e-6)
    assert v.collective_mean_s == pytest.approx(sum(coll) / 2)
    assert v.per_collective_s["barrier"] == pytest.approx((0.2e-6 + end[0] - at_wait[0] + end[1] - at_wait[1]) / 2)


def four_rank_profile(tmp_path, nbytes=4096):
    """P = 4: a world allgather, then an allreduce on each half ({0, 1}, {2, 3}); a size-1 communicator's bcast."""
    out = []
    for r in range(4):
        half = f"comm 1 2 0 {r // 2 * 2} {r // 2 * 2 + 1}"
        lines = [call(0, "allgather", 0, 0, 1000 + 100 * r, 5000, 1000 + 100 * r, nbytes),
                 call(1, "allreduce", 1, 0, 6000, 7000, 1000, 2 * nbytes, op="sum", commutative=1, type_size=8),
                 call(2, "bcast", 2, 0, 7500, 7600, 500, 8, root=0)]
        out.append(([world(4), half, f"comm 2 1 0 {r}"], lines, 9000))
    return write_profile(tmp_path, out)


def test_four_ranks_sub_communicators(tmp_path):
    prof = four_rank_profile(tmp_path)
    rp = replay.replay(prof, "ib-qdr", library="mpich", ranks=4, progress=False)
    v = rp.variants[0]
    ag, agp = lib_choice("allgather", 4, 4096)
    ar, arp = lib_choice("allreduce", 2, 8192, 8, commutative=True)
    T4, T2 = rank_times(ag, 4, 4096, params=agp), rank_times(ar, 2, 8192, params=arp)
    arrive = [1000e-9 + 100e-9 * r for r in range(4)]
    d1 = [arrive[3] + T4[r] for r in range(4)]
    a2 = [d + 1e-6 for d in d1]
    d2 = [max(a2[r // 2 * 2], a2[r // 2 * 2 + 1]) + T2[r % 2] for r in range(4)]
    final = [d + 0.5e-6 + 1.4e-6 for d in d2]  # the size-1 bcast completes at its arrival; finalize 1.4 us after
    coll = [(d1[r] - arrive[r]) + (d2[r] - a2[r]) for r in range(4)]
    assert v.total_s == pytest.approx(max(final))
    assert v.collective_mean_s == pytest.approx(sum(coll) / 4)
    assert v.per_collective_s.get("bcast", 0.0) == 0.0
    assert any("size-1" in n for n in rp.notes)


def test_unmodelled_native_is_collplans(tmp_path):
    """Open MPI on several nodes runs coll/han (two-level, no collplan schedule): that instance is replayed with
    collplan's choice in both variants, and the notes say so."""
    prof = four_rank_profile(tmp_path)
    assert native.choice("openmpi", "allgather", 4, 4096, nodes=4).algorithm is None
    rp = replay.replay(prof, "ib-qdr", ranks=4, progress=False)   # the profile's mpi line: Open MPI
    assert rp.library == "openmpi"
    assert rp.variants[0].total_s == rp.variants[1].total_s
    assert all(s["native"] == s["collplan"] for s in rp.shapes)
    assert any("not modelled" in n and "han" in n for n in rp.notes)


# ------------------------------------------------------------------------------------------- scaling rules
def test_scaling_weak_and_strong(tmp_path):
    prof = four_rank_profile(tmp_path)
    weak = replay.replay(prof, "ib-qdr", library="mpich", ranks=16, scaling="weak", progress=False)
    strong = replay.replay(prof, "ib-qdr", library="mpich", ranks=16, scaling="strong", progress=False)
    by = {s["collective"]: s for s in weak.shapes}
    assert (by["allgather"]["ranks"], by["allgather"]["size_bytes"]) == (16, 4096)
    assert (by["allreduce"]["ranks"], by["allreduce"]["size_bytes"]) == (8, 8192)   # each half: 2 x 4 ranks
    assert by["allreduce"]["instances"] == 2
    by = {s["collective"]: s for s in strong.shapes}
    assert by["allgather"]["size_bytes"] == 1024       # a per-rank share: x 4 / 16
    assert by["allreduce"]["size_bytes"] == 8192       # a replicated vector: kept
    assert weak.recorded is None and strong.recorded is None


def test_scaled_communicators_and_gaps():
    class Comm:
        def __init__(self, ranks):
            self.size, self.world_ranks, self.inter = len(ranks), ranks, False

    class Call:
        def __init__(self, coll, nbytes, values=(), root=-1):
            self.collective, self.bytes, self.values, self.root = coll, nbytes, list(values), root
            self.type_size, self.op, self.commutative = 4, "-", None

    class Inst:
        def __init__(self, coll, comm, calls):
            self.collective, self.comm, self.calls = coll, comm, calls
    notes = {}
    # members 1 and 3 of 4, scaled by 2 to 8: the blocks of 1 and 3 -> ranks 2, 3, 6, 7
    inst = Inst("allgatherv", Comm([1, 3]), [Call("allgatherv", 12, [4, 8]), Call("allgatherv", 12, [4, 8])])
    weak = replay._scaled_shape(inst, 2, 8, "full:8", "weak", notes, 1)
    assert weak.ranks == 4 and weak.topology == "full:4"
    assert [c * weak.size for c in weak.counts] == [4, 4, 8, 8]
    strong = replay._scaled_shape(inst, 2, 8, "full:8", "strong", notes, 1)
    assert [c * strong.size for c in strong.counts] == [4, 4, 4, 4]   # 4/2 -> one element of 4 bytes at least
    root = Inst("bcast", Comm([0, 1, 2, 3]), [Call("bcast", 100, root=2)] * 4)
    sh = replay._scaled_shape(root, 2, 8, "torus:2x4", "strong", notes, 1)
    assert (sh.root, sh.size, sh.topology) == (4, 100, "torus:2x4")   # every rank in order: on the topology


def test_strong_scaling_divides_gaps(tmp_path):
    prof = write_profile(tmp_path, [
        ([world(2)], [call(0, "barrier", 0, 0, 4000, 5000, 4000)], 5000),
        ([world(2)], [call(0, "barrier", 0, 0, 4000, 5000, 4000)], 5000)])
    weak = replay.replay(prof, "ib-qdr", library="mpich", ranks=8, scaling="weak", progress=False)
    strong = replay.replay(prof, "ib-qdr", library="mpich", ranks=8, scaling="strong", progress=False)
    alg, params = lib_choice("barrier", 8, 0)
    T = rank_times(alg, 8, 0, params=params)
    assert weak.variants[0].total_s == pytest.approx(4e-6 + max(T))
    assert strong.variants[0].total_s == pytest.approx(1e-6 + max(T))


@pytest.mark.parametrize("ranks,topology,msg", [
    (6, None, "--ranks 6 is not a multiple of the recorded 4 ranks"),
    (2, None, "--ranks 2 is not a multiple of the recorded 4 ranks"),
    (None, "torus:3x3", "topology torus:3x3 has 9 nodes, not a multiple of the recorded 4 ranks")])
def test_not_a_multiple(tmp_path, ranks, topology, msg):
    prof = four_rank_profile(tmp_path)
    with pytest.raises(CollplanError, match=msg) as e:
        replay.replay(prof, "ib-qdr", ranks=ranks, topology=topology, progress=False)
    assert "\n" not in str(e.value)


def test_cli_replay_json_and_error(tmp_path):
    four_rank_profile(tmp_path)
    out = subprocess.run([sys.executable, "-m", "collplan", "replay", str(tmp_path), "--topology", "torus:4x4",
                          "--machine", "ib-qdr", "--json", "--no-progress", "--library", "mpich"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["ranks"] == 16 and doc["library"] == "mpich"
    assert [v["name"] for v in doc["variants"]] == ["native", "collplan"]
    assert any("full:S" in n for n in doc["notes"])   # the halves are not every rank: on their own full:8
    bad = subprocess.run([sys.executable, "-m", "collplan", "replay", str(tmp_path), "--ranks", "6",
                          "--machine", "ib-qdr"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not a multiple" in bad.stderr


# ------------------------------------------------------------------------------------------- plan --profile
def ring_profile(tmp_path, P=8, nbytes=64, calls=3):
    lines = [call(i, "allreduce", 0, i, 1000 * (i + 1), 1000 * (i + 1) + 500, 500 if i else 1000, nbytes, op="sum",
                  commutative=1, type_size=8) for i in range(calls)]
    return write_profile(tmp_path, [([world(P)], lines, 10000)] * P)


def test_plan_profile_saving(tmp_path, monkeypatch):
    """The library's choice (ring at 64 B on ib-qdr) is slower than the planned one: the saving is positive and
    each time is the estimate of that algorithm."""
    prof = ring_profile(tmp_path)
    monkeypatch.setattr(native, "choice", lambda library, coll, P, n, **kw: native.NativeChoice(
        library, "tuned allreduce 4 (ring)", "allreduce/ring", {}, "test"))
    pp = replay.plan_profile(prof, "ib-qdr", progress=False)
    (row,) = pp.rows
    assert (row.collective, row.ranks, row.size_bytes, row.calls, row.op) == ("allreduce", 8, 64, 3, "sum")
    est = collplan.estimate(collplan.schedule("allreduce/ring", ranks=8), [64], machine="ib-qdr")[0].time_s
    assert row.native_s == pytest.approx(est)
    planned = collplan.estimate(collplan.schedule(row.planned.algorithm, ranks=8, params=row.planned.param_dict),
                                [64], machine="ib-qdr")[0].time_s
    assert row.planned_s == pytest.approx(planned)
    assert row.planned.algorithm != "allreduce/ring" and row.native_s > row.planned_s
    assert pp.saving_s == pytest.approx(3 * (est - planned)) and pp.saving_s > 0


def test_cli_plan_profile_wisdom(tmp_path):
    prof_dir = tmp_path / "prof"
    prof_dir.mkdir()
    four_rank_profile(prof_dir)
    w = tmp_path / "w.json"
    out = subprocess.run([sys.executable, "-m", "collplan", "plan", "--profile", str(prof_dir), "--machine", "ib-qdr",
                          "--wisdom", str(w), "--no-progress"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "expected saving" in out.stdout and "size-1 communicator" in out.stdout
    text = w.read_text()
    _core.parse_wisdom(text)   # the reader the PMPI library uses
    e = _core.wisdom_lookup(text, "allgather", 4, 4096, "", "")
    assert e is not None and e["algorithm"].startswith("allgather/")
    assert _core.wisdom_lookup(text, "allreduce", 2, 8192, "sum", "") is not None
    doc = json.loads(subprocess.run([sys.executable, "-m", "collplan", "plan", "--profile", str(prof_dir),
                                     "--machine", "ib-qdr", "--json", "--no-progress"],
                                    capture_output=True, text=True, check=True).stdout)
    assert {r["collective"] for r in doc["rows"]} == {"allgather", "allreduce"}
    assert doc["saving_s"] == pytest.approx(sum(r["saving_s"] or 0 for r in doc["rows"]))
    bad = subprocess.run([sys.executable, "-m", "collplan", "plan", "--profile", str(prof_dir), "--collective",
                          "allreduce", "--machine", "ib-qdr"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--profile" in bad.stderr


def test_replay_follows_a_wisdom_file(tmp_path):
    """--wisdom: collplan's variant runs the entry the PMPI library would find; no entry keeps the library's."""
    prof_dir = tmp_path / "prof"
    prof_dir.mkdir()
    prof = four_rank_profile(prof_dir)
    w = tmp_path / "w.json"
    w.write_text('{"format": "collplan-wisdom/1", "entries": [\n'
                 ' {"collective": "allgather", "ranks": 4, "algorithm": "allgather/ring", "params": {}}]}\n')
    rp = replay.replay(prof, "ib-qdr", library="mpich", ranks=4, wisdom=str(w), progress=False)
    by = {s["collective"]: s for s in rp.shapes}
    assert by["allgather"]["collplan"]["algorithm"] == "allgather/ring"
    assert by["allgather"]["native"]["algorithm"] == lib_choice("allgather", 4, 4096)[0] != "allgather/ring"
    assert by["allreduce"]["collplan"] == by["allreduce"]["native"]
    assert rp.choice == f"wisdom {w}"
