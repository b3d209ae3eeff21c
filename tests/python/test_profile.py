"""collplan.profile and `collplan profile`: the reader on profiles written here as text (docs/profile.md), the
summary computed by hand, show's JSON/CSV/plot, hostile files, and the SimGrid / liballprof exports read back. The
tests that record real MPI programs are in test_mpi.py."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from collplan import profile as pf
from collplan._core import CollplanError
from collplan.cli import main

HEADER = "collplan-profile 1\nrank {r} {P}\nmpi Open MPI v5.0.8, package: test\nhost node{h}\ninit -41230511 0\n"


class Rank:
    """Writes one rank's file line by line, computing seq, gap and the times the way the recorder does."""

    def __init__(self, r: int, P: int):
        self.r, self.P, self.seq, self.last = r, P, 0, 0
        self.lines = [HEADER.format(r=r, P=P, h=r // 2).rstrip("\n")]

    def comm(self, cid, members, inter=0):
        self.lines.append(f"comm {cid} {len(members)} {inter} " + " ".join(map(str, members)))

    def call(self, coll, kind, comm, cseq, start=0, root=-1, nbytes=0, ts=0, op="-", com="-", dur=1000,
             gap=1000, values=()):
        enter = self.last + gap
        ex = enter + dur
        vals = "".join(f" {v}" for v in values)
        self.lines.append(f"call {self.seq} {coll} {kind} {comm} {cseq} {start} {root} {nbytes} {ts} 1 {op} {com} "
                          f"{enter} {ex} {gap} {len(values)}{vals}")
        self.last = ex
        self.seq += 1
        return enter, ex

    def done(self, seq, enter, ex):
        self.lines.append(f"done {seq} {enter} {ex}")

    def close(self, p2p=(), fin_after=100000):
        for peer, m, b in p2p:
            self.lines.append(f"p2p {peer} {m} {b}")
        self.lines.append(f"finalize {self.last + fin_after}")
        self.lines.append(f"end {self.seq}")

    def text(self):
        return "\n".join(self.lines) + "\n"


def standard(P=4):
    """A 4-rank profile: an allreduce on the world (local 0), a non-blocking barrier and its wait, a bcast on a
    dup of the world (local 1), an allreduce on pairs {0,1} {2,3} (local 2), an allgatherv, an alltoallv, a
    persistent allreduce started twice."""
    out = {}
    for r in range(P):
        k = Rank(r, P)
        k.comm(0, range(P))
        k.call("allreduce", "b", 0, 0, nbytes=64, ts=8, op="sum", com=1, dur=5000 + 100 * r, gap=1000000 + 1000 * r)
        _, ex = k.call("barrier", "nb", 0, 1, dur=500, gap=2000)
        k.done(1, ex + 3000, ex + 4000)
        k.comm(1, range(P))
        k.call("bcast", "b", 1, 0, root=2, nbytes=4096, ts=1, dur=7000, gap=6000)
        k.comm(2, sorted([r, r ^ 1]))
        k.call("allreduce", "b", 2, 0, nbytes=8, ts=8, op="max", com=1, dur=3000)
        k.call("allgatherv", "b", 0, 2, nbytes=40, ts=4, dur=9000, gap=5000, values=[8, 16, 0, 16])
        sends = [[0, 8, 16, 24], [8, 0, 8, 8], [16, 16, 0, 0], [24, 8, 8, 0]][r]
        k.call("alltoallv", "b", 0, 3, nbytes=sum(sends), ts=8, dur=9000, gap=5000, values=sends)
        k.call("allreduce", "init", 0, 4, nbytes=1024, ts=8, op="sum", com=1, dur=100)
        for s, gap in ((1, 1000), (2, 10000)):
            _, ex = k.call("allreduce", "start", 0, 4, start=s, nbytes=1024, ts=8, op="sum", com=1, dur=200, gap=gap)
            k.done(k.seq - 1, ex + 500, ex + 9000)
        k.close(p2p=[((r + 1) % P, 12, 98304)])
        out[r] = k.text()
    return out


def write(d, files: dict) -> str:
    os.makedirs(d, exist_ok=True)
    for r, text in files.items():
        with open(os.path.join(d, f"collplan.{r}.prof"), "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
    return str(d)


@pytest.fixture
def std(tmp_path):
    return write(tmp_path / "prof", standard())


def test_every_field_read(std):
    p = pf.load(std)
    assert p.world_size == 4 and len(p.ranks) == 4 and p.warnings == []
    r1 = p.ranks[1]
    assert (r1.rank, r1.size, r1.host, r1.complete) == (1, 4, "node0", True)
    assert r1.mpi == "Open MPI v5.0.8, package: test"
    assert r1.init_enter_s == pytest.approx(-0.041230511) and r1.init_exit_s == 0.0
    assert r1.p2p == {2: (12, 98304)}
    c = r1.calls[4]
    assert (c.rank, c.seq, c.collective, c.kind, c.cseq, c.start, c.root, c.bytes, c.type_size, c.contiguous,
            c.op, c.commutative, c.values) == (1, 4, "allgatherv", "b", 2, 0, -1, 40, 4, True, "-", None,
                                               [8, 16, 0, 16])
    assert c.comm == r1.calls[0].comm
    a = r1.calls[0]
    assert (a.op, a.commutative, a.enter_s, a.exit_s, a.gap_s) == ("sum", True, pytest.approx(1001000e-9),
                                                                  pytest.approx(1006100e-9), pytest.approx(1001000e-9))
    nb = r1.calls[1]
    assert nb.done_enter_s == pytest.approx(nb.exit_s + 3000e-9) and nb.done_s == pytest.approx(nb.exit_s + 4000e-9)
    assert nb.time_s() == pytest.approx(4500e-9)  # done - enter
    assert r1.finalize_s == pytest.approx(r1.calls[-1].exit_s + 100000e-9)
    assert p.wall_s() == pytest.approx(max(r.finalize_s for r in p.ranks))


def test_communicators_matched(std):
    p = pf.load(std)
    # c0 the world (first used), c1 its dup, then the two pairs
    assert [(c.key, c.size, c.world_ranks) for c in p.comms.values()] == [
        ("c0", 4, [0, 1, 2, 3]), ("c1", 4, [0, 1, 2, 3]), ("c2", 2, [0, 1]), ("c3", 2, [2, 3])]
    for r in p.ranks:
        assert [c.comm for c in r.calls[:4]] == ["c0", "c0", "c1", "c2" if r.rank < 2 else "c3"]


def test_dups_matched_by_order_of_first_use(tmp_path):
    """Rank 1 numbers its communicators differently (a comm it used for point-to-point first took id 0): the
    dup is still matched by the order of first use among the communicators with the same members."""
    files = {}
    for r in range(2):
        k = Rank(r, 2)
        a, b = (0, 1) if r == 0 else (3, 1)
        k.comm(a, [0, 1])
        k.call("bcast", "b", a, 0, root=0, nbytes=8, ts=8)
        k.comm(b, [0, 1])
        k.call("bcast", "b", b, 0, root=1, nbytes=16, ts=8)
        k.call("bcast", "b", a, 1, root=0, nbytes=8, ts=8)
        k.close()
        files[r] = k.text()
    p = pf.load(write(tmp_path / "d", files))
    assert [c.comm for c in p.ranks[1].calls] == ["c0", "c1", "c0"]
    assert [(i.key, [c.root for c in i.calls]) for i in p.instances()] == [
        (("c0", 0, 0), [0, 0]), (("c1", 0, 0), [1, 1]), (("c0", 1, 0), [0, 0])]
    assert p.warnings == []


def test_instances(std):
    p = pf.load(std)
    insts = p.instances()
    assert len(insts) == 9  # 8 per rank on the world/dup/pairs, less the init, the pairs' allreduce twice
    assert all(i.collective != "init" and all(c.kind != "init" for c in i.calls) for i in insts)
    assert [i.enter_s() for i in insts] == sorted(i.enter_s() for i in insts)
    keys = [i.key for i in insts]
    assert ("c0", 4, 1) in keys and ("c0", 4, 2) in keys
    pair = next(i for i in insts if i.comm.key == "c3")
    assert [c.rank for c in pair.calls] == [2, 3] and pair.collective == "allreduce"
    first = insts[0]
    assert first.key == ("c0", 0, 0) and first.imbalance_s() == pytest.approx(3000e-9)


def test_mismatched_instance_warns(tmp_path):
    files = standard()
    files[3] = files[3].replace("call 2 bcast b 1 0 0 2 4096", "call 2 bcast b 1 0 0 2 2048")
    p = pf.load(write(tmp_path / "d", files))
    assert any("c1 cseq 0: rank 0 recorded bytes 4096, rank 3 2048" in w for w in p.warnings)


def tiny(tmp_path):
    """Two ranks, by hand: rank 0 allreduce 8B [10us, 30us), bcast 100B [50us, 60us); rank 1 allreduce [20us,
    30us), bcast [40us, 60us); finalize at 100us and 80us."""
    r0, r1 = Rank(0, 2), Rank(1, 2)
    for k in (r0, r1):
        k.comm(0, [0, 1])
    r0.call("allreduce", "b", 0, 0, nbytes=8, ts=8, op="sum", com=1, gap=10000, dur=20000)
    r0.call("bcast", "b", 0, 1, root=0, nbytes=100, ts=1, gap=20000, dur=10000)
    r1.call("allreduce", "b", 0, 0, nbytes=8, ts=8, op="sum", com=1, gap=20000, dur=10000)
    r1.call("bcast", "b", 0, 1, root=0, nbytes=100, ts=1, gap=10000, dur=20000)
    r0.close(fin_after=40000)
    r1.close(p2p=[(0, 3, 300)], fin_after=20000)
    return write(tmp_path / "tiny", {0: r0.text(), 1: r1.text()})


def test_summary_by_hand(tmp_path):
    s = pf.summary(pf.load(tiny(tmp_path)))
    # ranks' time: 100us + 80us; in collectives: 20+10 + 10+20 = 60us
    assert s["rank_wall_s"] == pytest.approx(180e-6) and s["collective_s"] == pytest.approx(60e-6)
    assert s["collective_share"] == pytest.approx(60 / 180)
    assert s["wall_s"] == pytest.approx(100e-6)
    assert (s["world_size"], s["calls"], s["instances"], s["p2p_messages"], s["p2p_bytes"]) == (2, 4, 2, 3, 300)
    assert s["hosts"] == ["node0"]
    ar, bc = s["rows"]
    assert (ar["collective"], ar["size_min_bytes"], ar["size_max_bytes"], ar["calls"], ar["instances"]) == \
        ("allreduce", 8, 15, 2, 1)
    assert ar["time_s"] == pytest.approx(30e-6) and ar["mean_s"] == pytest.approx(15e-6)
    assert ar["share"] == pytest.approx(30 / 180) and ar["imbalance_s"] == pytest.approx(10e-6)
    assert (bc["size_min_bytes"], bc["size_max_bytes"]) == (64, 127)
    assert bc["imbalance_s"] == pytest.approx(10e-6)  # arrivals 50us and 40us
    by_comm = pf.summary(pf.load(tiny(tmp_path)), by="comm")["rows"]
    assert [(r["collective"], r["comm"], r["comm_sizes"]) for r in by_comm] == [("allreduce", "c0", [2]),
                                                                               ("bcast", "c0", [2])]


def test_show_json_csv_plot(std, tmp_path, capsys):
    assert main(["profile", "show", std, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["world_size"] == 4 and doc["instances"] == 9 and {r["collective"] for r in doc["rows"]} == {
        "allreduce", "barrier", "bcast", "allgatherv", "alltoallv"}
    assert main(["profile", "show", std, "--csv", "--by", "comm"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("collective,comm,") and len(lines) == 1 + len(pf.summary(pf.load(std), "comm")["rows"])
    png = tmp_path / "t.png"
    assert main(["profile", "show", std, "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "allgatherv" in out and "c1: 4 ranks" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_truncated_file_loads_with_warning(tmp_path):
    files = standard()
    cut = files[2][:files[2].index("call 6 ")] + "call 6 allreduce in"  # cut mid-line, no end
    p = pf.load(write(tmp_path / "d", {**files, 2: cut}))
    assert not p.ranks[2].complete and p.ranks[2].finalize_s is None and len(p.ranks[2].calls) == 6
    assert any("collplan.2.prof: line" in w and "cut" in w for w in p.warnings)
    assert any("no 'end' line" in w for w in p.warnings)
    assert any("lack a member's call" in w for w in p.warnings)  # the two starts of rank 2
    assert p.ranks[2].last_s() == p.ranks[2].calls[-1].exit_s


def _swap(rank, old, new):
    def f(files):
        assert old in files[rank], old
        files[rank] = files[rank].replace(old, new, 1)
        return files
    return f


HOSTILE = [
    ("binary", lambda f: {**f, 1: bytes(range(256)) * 8}, "collplan.1.prof:1"),
    ("utf16", lambda f: {**f, 1: f[1].encode("utf-16")}, "collplan.1.prof:1"),
    ("nul", lambda f: {**f, 1: f[1].replace("host node0", "host no\0de")}, "NUL byte"),
    ("long line", lambda f: {**f, 1: f[1].replace("host node0", "host " + "x" * (2 << 20))}, "longer than 1 MiB"),
    ("2^64", _swap(1, "call 2 bcast b 1 0 0 2 4096", "call 2 bcast b 1 0 0 2 18446744073709551616"),
     "bytes 18446744073709551616 is out of range"),
    ("negative size", _swap(1, "call 2 bcast b 1 0 0 2 4096", "call 2 bcast b 1 0 0 2 -4096"),
     "bytes -4096 is out of range"),
    ("not an int", _swap(1, "call 2 bcast b 1 0 0 2 4096", "call 2 bcast b 1 0 0 2 4e3"), "is not an integer"),
    ("version", _swap(0, "collplan-profile 1", "collplan-profile 2"), "version 2 is not supported (allowed: 1)"),
    ("not a profile", _swap(0, "collplan-profile 1", "hello"), "collplan.0.prof:1"),
    ("collective", _swap(1, "bcast b 1 0", "bcastx b 1 0"), "collective 'bcastx' is unknown"),
    ("kind", _swap(1, "bcast b 1 0", "bcast q 1 0"), "kind 'q' is unknown"),
    ("op", _swap(1, "64 8 1 sum 1", "64 8 1 mean 1"), "op 'mean' is unknown"),
    ("undefined comm", _swap(1, "call 2 bcast b 1 ", "call 2 bcast b 7 "), "communicator 7 is not defined"),
    ("seq", _swap(1, "call 2 bcast", "call 3 bcast"), "call number 3 where 2 comes next"),
    ("cseq", _swap(1, "call 2 bcast b 1 0 ", "call 2 bcast b 1 5 "), "cseq 5 where 0 comes next"),
    ("root", _swap(1, "call 2 bcast b 1 0 0 2 ", "call 2 bcast b 1 0 0 9 "), "root 9 of bcast"),
    ("gap", _swap(1, "1014600 1021600 6000", "1014600 1021600 6001"), "gap 6001"),
    ("fields", _swap(1, "call 2 bcast b 1 0 0 2 4096 1 1", "call 2 bcast b 1 0 0 2 4096 1"), "collplan.1.prof:"),
    ("values sum", _swap(1, "4 8 16 0 16", "4 8 16 0 17"), "values add up to 41"),
    ("member", _swap(1, "comm 0 4 0 0 1 2 3", "comm 0 4 0 0 1 2 9"), "member 9 is out of range"),
    ("world size", _swap(3, "rank 3 4", "rank 3 5"), "world size 5"),
    ("end count", _swap(1, "end 9", "end 8"), "end counts 8 call records"),
    ("after end", lambda f: {**f, 1: f[1] + "call 9 barrier b 0 9 0 -1 0 0 1 - - 1 2 3 0\n"}, "after the 'end'"),
    ("missing rank", lambda f: {0: f[0], 1: f[1], 3: f[3]}, "no file of ranks 2 of 4"),
    ("extra rank", lambda f: {**f, 5: f[1]}, "files of ranks 5 in a profile of 4 ranks"),
    ("comm unused by a member", _swap(3, "comm 1 4 0 0 1 2 3", "comm 1 4 0 0 1 2 3\ncomm 9 2 0 0 3"),
     "member rank 0 never used"),
]


@pytest.mark.parametrize("name,mutate,fragment", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_files(tmp_path, capsys, name, mutate, fragment):
    d = write(tmp_path / "bad", mutate(standard()))
    with pytest.raises(CollplanError) as e:
        pf.load(d)
    assert fragment in str(e.value) and "\n" not in str(e.value)
    assert main(["profile", "show", d]) == 2
    err = capsys.readouterr().err
    assert err.startswith("collplan: error: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("what", ["missing", "empty", "file"])
def test_not_a_profile_directory(tmp_path, what):
    d = tmp_path / "x"
    if what == "empty":
        d.mkdir()
    elif what == "file":
        d.write_text("x")
    with pytest.raises(CollplanError, match="does not exist|holds no profile|is not a directory"):
        pf.load(str(d))


# ------------------------------------------------------------------------------------------------ exports
def read_simgrid_ti(outdir):
    """A reader of the export as SimGrid's replay reads it (xbt_replay.cpp: '#' lines skipped, fields split on
    blanks, the first the rank): per rank, its actions [name, args...]."""
    with open(os.path.join(outdir, pf.SIMGRID_INDEX)) as f:
        names = [n.strip() for n in f if n.strip()]
    out = []
    for r, n in enumerate(names):
        acts = []
        with open(os.path.join(outdir, n)) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                fields = line.split()
                assert fields[0] == str(r)
                acts.append(fields[1:])
        out.append(acts)
    return out


def test_simgrid_ti_export_reads_back(std, tmp_path):
    p = pf.load(std)
    res = pf.export_simgrid_ti(p, str(tmp_path / "ti"), flops_rate=2e9)
    assert res["skipped"] == 4 and any("MPI_COMM_WORLD" in n for n in res["notes"])
    ranks = read_simgrid_ti(tmp_path / "ti")
    for rank, acts in zip(p.ranks, ranks):
        assert acts[0] == ["init"] and acts[-1] == ["finalize"]
        computes = [float(a[1]) for a in acts if a[0] == "compute"]
        want = [g * 2e9 for g in pf.compute_gaps(rank) if g > 0]
        assert computes == pytest.approx(want, rel=1e-9)
        colls = [a for a in acts if a[0] not in ("init", "finalize", "compute")]
        expected = [c for c in rank.calls if c.kind != "init" and p.comms[c.comm].size == 4]
        assert len(colls) == len(expected)
        for a, c in zip(colls, expected):
            name = {"reduce_scatter": "reducescatter"}.get(c.collective, c.collective)
            assert a[0] == name
            if c.collective in ("allreduce", "bcast"):
                assert int(a[1]) == c.bytes
            if c.collective == "bcast":
                assert int(a[2]) == c.root
            if c.collective == "allgatherv":
                assert [int(x) for x in a[1:]] == [c.values[rank.rank]] + c.values
            if c.collective == "alltoallv":
                sent, recv = [int(x) for x in a[2:6]], [int(x) for x in a[7:11]]
                assert sent == c.values and int(a[1]) == sum(sent)
                assert recv == [p.ranks[w].calls[c.seq].values[rank.rank] for w in range(4)]


def read_liballprof(path):
    """Schedgen's view of a liballprof line (process_trace.cpp: the name, then fields split at ':' and ','):
    per line (name, start, fields between, end)."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            name, rest = line.split(":", 1)
            fields = rest.split(":")
            out.append((name, fields[0], fields[1:-1], fields[-1]))
    return out


def test_liballprof_export_reads_back(std, tmp_path):
    p = pf.load(std)
    res = pf.export_liballprof(p, str(tmp_path / "ap"))
    assert len(res["files"]) == 4
    base = min(r.init_exit_s for r in p.ranks)

    def us(t):
        return str(round((t - base) * 1e6))

    for rank in p.ranks:
        lines = read_liballprof(tmp_path / "ap" / pf.liballprof_file(rank.rank))
        assert lines[0] == ("MPI_Init", "-", ["0", "0"], us(rank.init_exit_s))
        assert lines[-1][0] == "MPI_Finalize" and lines[-1][3] == "-"
        body = lines[1:-1]
        calls = [c for c in rank.calls if c.kind != "init"]
        waits = [ln for ln in body if ln[0] == "MPI_Wait"]
        colls = [ln for ln in body if ln[0] != "MPI_Wait"]
        assert len(colls) == len(calls) and len(waits) == sum(c.done_s is not None for c in calls)
        for ln, c in zip(colls, calls):
            short = pf.LIBALLPROF_NAMES[c.collective]
            assert ln[0] == ("MPI_I" + short.lower() if c.kind != "b" else "MPI_" + short)
            assert (ln[1], ln[3]) == (us(c.enter_s), us(c.exit_s))
            comm = p.comms[c.comm]
            assert ln[2][-1 if c.kind == "b" else -2] == \
                f"{int(comm.key[1:])},{comm.world_ranks.index(rank.rank)},{comm.size}"
            if c.collective == "allreduce" and c.kind == "b":
                count, dt, op = ln[2][2], ln[2][3], ln[2][4]
                assert (int(count), dt, op) == (c.bytes // c.type_size, f"0,{c.type_size},{c.type_size}",
                                                str(pf.LIBALLPROF_OPS[c.op]))
            if c.collective == "allgatherv":
                assert ln[2][5] == ",".join(str(v // c.type_size) for v in c.values)
        for w, c in zip(waits, [c for c in calls if c.done_s is not None]):
            assert (w[1], w[3]) == (us(c.done_enter_s), us(c.done_s))


def test_export_command(std, tmp_path, capsys):
    assert main(["profile", "export", std, "--format", "simgrid-ti", "-o", str(tmp_path / "o1")]) == 0
    out = capsys.readouterr().out
    assert "wrote 5 files" in out and "skipped" in out and "smpirun -np 4" in out
    assert main(["profile", "export", std, "--format", "liballprof", "-o", str(tmp_path / "o2")]) == 0
    assert sorted(os.listdir(tmp_path / "o2")) == [f"pmpi-trace-rank-{r}.txt" for r in range(4)]


# ------------------------------------------------------------------------------------------------ recording
FAKE_APP = r"""
import os, sys, shutil
d = os.environ["COLLPLAN_PROFILE"]
assert os.path.isabs(d)
print("preload:" + os.environ["LD_PRELOAD"])
for r, text in enumerate(sys.argv[2:]):
    open(os.path.join(d, f"collplan.{r}.prof"), "w").write(open(text).read())
sys.exit(int(sys.argv[1]))
"""


def test_record_runs_the_command(std, tmp_path, capfd):
    """A stand-in for `mpirun ./app`: it writes the ranks' files where COLLPLAN_PROFILE says and exits 3; the
    exit code passes through, the summary names the ranks, and a second run into the same directory is refused
    without --force."""
    from collplan import mpi as cmpi
    if not cmpi.installations():
        pytest.skip("collplan was built without an MPI runtime")
    name = next(iter(cmpi.installations()))
    script = tmp_path / "fake.py"
    script.write_text(FAKE_APP)
    srcs = [os.path.join(std, f"collplan.{r}.prof") for r in range(4)]
    out = str(tmp_path / "rec")
    argv = ["profile", "-o", out, "--mpi", name, "--", sys.executable, str(script), "3"] + srcs
    env_preload = os.environ.pop("LD_PRELOAD", None)
    try:
        assert main(argv) == 3
        cap = capfd.readouterr()
        assert f"preload:{cmpi.pmpi_library(name)}" in cap.out
        assert "4 ranks" in cap.err and "36 collective calls" in cap.err
        assert main(argv) == 2
        assert "already holds a profile" in capfd.readouterr().err
        assert main(argv[:3] + ["--force"] + argv[3:]) == 3
        # a rank's file missing: said, and the run's failure passes through
        assert main(["profile", "-o", str(tmp_path / "rec2"), "--mpi", name, "--", sys.executable, str(script), "0"]
                    + srcs[:2]) == 2
        assert "no file of ranks 2-3 of 4" in capfd.readouterr().err
    finally:
        if env_preload is not None:
            os.environ["LD_PRELOAD"] = env_preload


def test_record_needs_a_command(tmp_path, capsys):
    assert main(["profile", "-o", str(tmp_path / "x")]) == 2
    assert "give the program to record" in capsys.readouterr().err
    assert main(["profile", "--", "true"]) == 2
    assert "-o DIR is required" in capsys.readouterr().err


def schedgen_get(line: str, k: int) -> str:
    """Field k of a trace line as Schedgen reads it (process_trace.cpp, htorMatch::get): the text after the
    (k-1)-th ':' or ',' of the line, up to the next one."""
    seps = [i for i, ch in enumerate(line) if ch in ":,"] + [len(line)]
    return line[seps[k - 1] + 1:seps[k]]


# per function, where Schedgen's reader takes (start, count, type size, comm, comm size, end, [root | request])
SCHEDGEN_FIELDS = {"MPI_Barrier": (1, None, None, 2, 4, 5, None), "MPI_Allreduce": (1, 4, 6, 9, 11, 12, None),
                   "MPI_Iallreduce": (1, 4, 6, None, 11, 13, 12), "MPI_Bcast": (1, 3, 5, 8, 10, 11, 7),
                   "MPI_Allgather": (1, 3, 5, 12, 14, 15, None), "MPI_Reduce": (1, 4, 6, 10, 12, 13, 9),
                   "MPI_Alltoall": (1, 3, 5, 12, 14, 15, None)}


def test_liballprof_fields_where_schedgen_reads_them(tmp_path):
    """Every call Schedgen models, read at the positions its reader uses: the times, count x type size = bytes,
    the communicator's number and size, the root, the request of the non-blocking allreduce and its MPI_Wait."""
    files = {}
    for r in range(2):
        k = Rank(r, 2)
        k.comm(0, [0, 1])
        k.call("barrier", "b", 0, 0)
        k.call("allreduce", "b", 0, 1, nbytes=4096, ts=8, op="sum", com=1)
        _, ex = k.call("allreduce", "nb", 0, 2, nbytes=64, ts=4, op="max", com=1)
        k.done(2, ex + 200, ex + 500)
        k.call("bcast", "b", 0, 3, root=1, nbytes=100, ts=1)
        k.call("allgather", "b", 0, 4, nbytes=48, ts=8)
        k.call("reduce", "b", 0, 5, root=0, nbytes=16, ts=8, op="sum", com=1)
        k.call("alltoall", "b", 0, 6, nbytes=24, ts=4)
        k.close()
        files[r] = k.text()
    p = pf.load(write(tmp_path / "d", files))
    pf.export_liballprof(p, str(tmp_path / "ap"))
    base = min(r.init_exit_s for r in p.ranks)
    for rank in p.ranks:
        text = (tmp_path / "ap" / pf.liballprof_file(rank.rank)).read_text().splitlines()
        lines = [ln for ln in text if ln.startswith("MPI_")]
        assert schedgen_get(lines[0], 4) == str(round((rank.init_exit_s - base) * 1e6))  # MPI_Init's end
        calls = iter(rank.calls)
        for ln in lines[1:-1]:
            name = ln.split(":", 1)[0]
            if name == "MPI_Wait":
                assert schedgen_get(ln, 2) == req and float(schedgen_get(ln, 4)) == round((c.done_s - base) * 1e6)
                continue
            c = next(calls)
            start, count, size, comm, psize, end, extra = SCHEDGEN_FIELDS[name]
            assert float(schedgen_get(ln, start)) == round((c.enter_s - base) * 1e6)
            assert float(schedgen_get(ln, end)) == round((c.exit_s - base) * 1e6)
            assert int(schedgen_get(ln, psize)) == 2
            if comm:
                assert int(schedgen_get(ln, comm)) == 0
            if count:
                assert int(schedgen_get(ln, count)) * int(schedgen_get(ln, size)) == c.bytes
            if name in ("MPI_Bcast", "MPI_Reduce"):
                assert int(schedgen_get(ln, extra)) == c.root
            if name == "MPI_Iallreduce":
                req = schedgen_get(ln, extra)
        assert next(calls, None) is None


@pytest.mark.skipif(shutil.which("smpirun") is None, reason="SimGrid's smpirun is not installed")
def test_simgrid_replays_the_export(std, tmp_path):
    """Where SimGrid is installed: smpirun -replay runs the export to its end."""
    pf.export_simgrid_ti(pf.load(std), str(tmp_path / "ti"))
    (tmp_path / "p.xml").write_text(
        "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        "<platform version=\"4.1\">\n  <cluster id=\"c\" prefix=\"node-\" suffix=\"\" radical=\"0-3\" speed=\"1Gf\" "
        "bw=\"10GBps\" lat=\"1us\"/>\n</platform>\n")
    (tmp_path / "hosts").write_text("".join(f"node-{i}\n" for i in range(4)))
    r = subprocess.run(["smpirun", "-np", "4", "-platform", str(tmp_path / "p.xml"), "-hostfile",
                        str(tmp_path / "hosts"), "-replay", pf.SIMGRID_INDEX], cwd=tmp_path / "ti",
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Simulation time" in r.stderr + r.stdout, r.stderr[-2000:]


def test_launcher_installation(tmp_path, monkeypatch):
    """Without --mpi: the installation whose mpiexec the command's launcher is, else the family its --version
    names; never a program that is not a launcher (it is not run with --version)."""
    from collplan.commands import profile as cmd
    dirs = {}
    for name, text in (("ompi", "mpirun (Open MPI) 5.0.8"), ("mp", "HYDRA build details:")):
        d = tmp_path / name / "bin"
        d.mkdir(parents=True)
        for n in ("mpirun", "mpiexec.x"):
            (d / n).write_text(f"#!/bin/sh\necho '{text}'\n")
            (d / n).chmod(0o755)
        dirs[name] = d
    monkeypatch.setattr(cmd.cmpi, "installations", lambda: {
        "ompi": {"family": "openmpi", "mpiexec": str(dirs["ompi"] / "mpirun")},
        "mp": {"family": "mpich", "mpiexec": str(dirs["mp"] / "mpirun")}})
    assert cmd.launcher_installation(str(dirs["ompi"] / "mpirun")) == "ompi"
    assert cmd.launcher_installation(str(dirs["mp"] / "mpiexec.x")) == "mp"
    elsewhere = tmp_path / "mpiexec"
    elsewhere.write_text("#!/bin/sh\necho 'Open MPI'\n")
    elsewhere.chmod(0o755)
    assert cmd.launcher_installation(str(elsewhere)) == "ompi"
    assert cmd.launcher_installation(sys.executable) is None
    assert cmd.launcher_installation(str(tmp_path / "mpirun-missing")) is None
