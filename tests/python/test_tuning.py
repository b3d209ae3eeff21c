"""collplan export-tuning: a wisdom file as Open MPI's rules file and MPICH's JSON trees. The files are read back
the way each library reads them (a rule for P never leaks to other sizes; every case without a rule keeps the
library's default), and each library, given the file and no preload library, sends the messages of the exported
collplan schedule (native_pairs.py: Open MPI's pml monitoring, MPICH's ucx receives) at P = 1..8."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from native_pairs import ROOT, Mpich, OpenMPI, schedule_pairs

from collplan import CollplanError, api, native, tuning


def entry(collective, ranks, algorithm, lo=0, hi=None, params=None, **kw):
    e = {"collective": collective, "ranks": ranks, "min_bytes": lo, "algorithm": algorithm, "params": params or {}}
    if hi is not None:
        e["max_bytes"] = hi
    return e | kw


def wisdom_file(tmp_path, entries, name="w.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"format": "collplan-wisdom/1", "entries": entries}))
    return str(path)


@pytest.fixture(scope="module")
def ompi_target():
    if not (ROOT / ".mpi/openmpi/bin/ompi_info").exists():
        pytest.skip("no .mpi/openmpi (make install)")
    return tuning.openmpi_target(str(ROOT / ".mpi/openmpi/bin/ompi_info"))


@pytest.fixture(scope="module")
def mpich_target():
    if not (ROOT / ".mpi/mpich/lib/libmpi.so.12").exists():
        pytest.skip("no .mpi/mpich (make install)")
    return tuning.mpich_target(str(ROOT / ".mpi/mpich/lib/libmpi.so.12"))


MIXED = [
    entry("allreduce", 8, "allreduce/recursive_doubling", 0, 4096, op="sum"),
    entry("allreduce", 8, "allreduce/rabenseifner", 4096, 65536, op="sum"),
    entry("allreduce", 8, "allreduce/ring", 65536, op="sum"),
    entry("allreduce", 8, "allreduce/ring", 0, op="max"),
    entry("allreduce", 4, "allreduce/nway_dissemination", params={"n": 2}),
    entry("allgather", 6, "allgather/bruck", 0, 1024), entry("allgather", 6, "allgather/ring", 1024),
    entry("alltoall", 5, "alltoall/bruck", 0, 256, {"k": 2}), entry("alltoall", 5, "native", 256),
    entry("barrier", 7, "barrier/dissemination", params={"n": 1}),
    entry("gather", 8, "gather/binomial", 0, 100), entry("gather", 8, "gather/linear", 100),
    entry("allgather", 16, "allgather/torgos", params={"a": 2, "b": 2, "k": 1}, topology="torus:4x4"),
]


def by(rules, collective, ranks):
    return [(r.min_bytes, r.max_bytes, r.algorithm, r.native) for r in rules
            if r.collective == collective and r.ranks == ranks]


def reasons(left, collective, ranks):
    return " | ".join(lf.reason for lf in left if lf.entry["collective"] == collective and lf.entry["ranks"] == ranks)


def test_mixed_wisdom_for_open_mpi(ompi_target):
    rules, left, kept = tuning.map_wisdom(MIXED, ompi_target)
    assert by(rules, "allreduce", 8) == [
        (0, 4096, "allreduce/recursive_doubling", "tuned allreduce 3 (recursive_doubling)"),
        (4096, 65536, "allreduce/rabenseifner", "tuned allreduce 6 (rabenseifner)")]
    assert "commutative ones only" in reasons(left, "allreduce", 8)          # ring: every op, so not by default
    assert "cannot tell op max from op sum" in reasons(left, "allreduce", 8)  # one op's rules per collective
    assert "no Open MPI" in reasons(left, "allreduce", 4)                    # collplan's own algorithm
    assert by(rules, "allgather", 6) == [(0, 1024, "allgather/bruck", "tuned allgather 2 (bruck)"),
                                         (1024, None, "allgather/ring", "tuned allgather 4 (ring)")]
    assert by(rules, "alltoall", 5) == [(0, 256, "alltoall/bruck", "tuned alltoall 3 (modified_bruck)")]
    assert [e["algorithm"] for e in kept] == ["native"]
    assert by(rules, "barrier", 7) == [(0, None, "barrier/dissemination", "tuned barrier 4 (bruck)")]
    assert not by(rules, "gather", 8) and "not the same on every rank" in reasons(left, "gather", 8)
    assert "topology-specific" in reasons(left, "allgather", 16)
    ring = tuning.map_wisdom(MIXED, ompi_target, assume_commutative=True)[0]
    assert by(ring, "allreduce", 8)[-1][:3] == (65536, None, "allreduce/ring")


def test_a_range_is_cut_where_the_library_falls_back(ompi_target):
    """Open MPI's ring allreduce runs recursive doubling below P elements: with 16-byte elements the rule starts at
    16 x P bytes, and the part below stays with the preload library, with the reason."""
    rules, left, _ = tuning.map_wisdom([entry("allreduce", 6, "allreduce/ring", 0)], ompi_target,
                                       assume_commutative=True)
    assert [(r.min_bytes, r.max_bytes) for r in rules] == [(16 * 6, None)]
    assert [(lf.min_bytes, lf.max_bytes) for lf in left] == [(0, 96)] and "recursive_doubling" in left[0].reason


def test_the_first_matching_entry_wins_as_in_the_pmpi_library(ompi_target):
    rules, left, _ = tuning.map_wisdom([entry("allgather", 6, "allgather/ring", 100, 50),
                                        entry("allgather", 6, "allgather/bruck", 512, 1024),
                                        entry("allgather", 6, "allgather/ring", 0),
                                        entry("allgather", 6, "allgather/bruck", 600, 700)], ompi_target)
    assert [(r.min_bytes, r.max_bytes, r.algorithm) for r in rules] == [
        (0, 512, "allgather/ring"), (512, 1024, "allgather/bruck"), (1024, None, "allgather/ring")]
    assert sorted(lf.reason.split(" (")[0] for lf in left) == ["an empty range",
                                                               "earlier entries match all its sizes first"]


def ompi_lookup(text, coll_id, ranks, dsize):
    """The algorithm id coll_tuned_dynamic_file.c and coll_tuned_dynamic_rules.c give (0: the fixed rules)."""
    nums = [int(line.split("#")[0].split()[i]) for line in text.splitlines() if line.split("#")[0].strip()
            for i in range(len(line.split("#")[0].split()))]
    it = iter(nums)
    found = None
    for _ in range(next(it)):
        cid, blocks = next(it), []
        for _ in range(next(it)):
            size, rules = next(it), []
            for _ in range(next(it)):
                rules.append((next(it), next(it), next(it), next(it)))
            assert rules[0][0] == 0, "the first message size must be 0"
            blocks.append((size, rules))
        if cid == coll_id:
            found = blocks
    if found is None:
        return 0
    block = found[0]
    for b in found:
        if b[0] <= ranks:
            block = b
    alg = block[1][0][1]
    for size, a, _, _ in block[1]:
        if size <= dsize:
            alg = a
    return alg


def test_ompi_rules_hold_at_p_only(ompi_target):
    text = tuning.ompi_rules_text(tuning.map_wisdom(MIXED, ompi_target)[0], ompi_target, "w.json")
    allreduce, alltoall, barrier = (tuning.OMPI_COLLTYPE[c] for c in ("allreduce", "alltoall", "barrier"))
    assert [ompi_lookup(text, allreduce, 8, b) for b in (0, 4095, 4096, 65535, 65536)] == [3, 3, 6, 6, 0]
    for P in (1, 7, 9, 64):
        assert ompi_lookup(text, allreduce, P, 100) == 0
    # alltoall compares type size x count x P: the wisdom's 256 bytes per destination are 1280 at P = 5
    assert [ompi_lookup(text, alltoall, 5, b * 5) for b in (0, 255, 256)] == [3, 3, 0]
    assert [ompi_lookup(text, barrier, P, 0) for P in (6, 7, 8)] == [0, 4, 0]


def _tree(node):
    """MPICH's JSON as collplan.native's tree (conditions in order; a leaf is the algorithm's name)."""
    if len(node) == 1 and next(iter(node)).startswith("algorithm="):
        return next(iter(node))[len("algorithm="):]
    return [(k, _tree(v)) for k, v in node.items()]


def mpich_leaf(tree, collective, ranks, nbytes, commutative):
    intra = tree[f"collective={collective}"]["comm_type=intra"]
    total = nbytes * ranks if collective in ("allgatherv", "reduce_scatter") else nbytes
    call = native._Call(collective, ranks, total, commutative, commutative, 1, ranks, None)
    return native._search(_tree(intra), call)[0]


def test_mpich_trees_keep_every_other_choice(mpich_target):
    """Where no rule applies, the spliced tree reaches the leaf the installed default reaches (csel.c's search, as
    collplan.native models it); where one applies, its algorithm."""
    rules = tuning.map_wisdom(MIXED, mpich_target)[0]
    spliced = json.loads(tuning.mpich_json_texts(rules, mpich_target)["main"])
    default = mpich_target.trees["mpir"]
    checked = 0
    for collective in ("allreduce", "allgather", "alltoall", "bcast", "reduce_scatter_block"):
        for P in range(1, 11):
            for nbytes in (0, 1, 8, 255, 256, 1023, 1024, 4095, 4096, 65535, 65536, 1 << 20):
                for commutative in (True, False):
                    got = mpich_leaf(spliced, collective, P, nbytes, commutative)
                    want = [r.ident for r in rules if r.collective == collective and r.ranks == P
                            and r.min_bytes <= nbytes and (r.max_bytes is None or nbytes < r.max_bytes)
                            and r.commutative in ("any", "yes" if commutative else "no")]
                    assert got == (want[0] if want else mpich_leaf(default, collective, P, nbytes, commutative)), \
                        (collective, P, nbytes, commutative)
                    checked += bool(want)
    assert checked >= 10


def test_mpich_ch4_tree_routes_rules_to_the_algorithm_trees(mpich_target):
    rules = tuning.map_wisdom([entry("allreduce", 8, "allreduce/recursive_doubling", 0, 4096)], mpich_target)[0]
    ch4 = json.loads(tuning.mpich_json_texts(rules, mpich_target)["ch4"])["collective=allreduce"]["comm_type=intra"]
    assert list(ch4) == ["comm_size<=7", "comm_size<=8", "comm_size=any"]
    assert ch4["comm_size<=8"]["avg_msg_size<=4095"] == {"composition=MPIDI_Allreduce_intra_composition_beta": {}}
    assert ch4["comm_size=any"] == mpich_target.trees["ch4"]["collective=allreduce"]["comm_type=intra"]


# --- the libraries follow the files (no preload library) --------------------------------------------------------

# (P, collective, bytes per rank as coll.c takes them, the collplan algorithm and parameters exported); each differs
# from the library's default there (asserted), so the messages show the file was followed.
OMPI_CASES = [(1, "allreduce", 100, "allreduce/recursive_doubling", {}), (2, "allgather", 100, "allgather/ring", {}),
              (3, "allgather", 100, "allgather/ring", {}), (4, "allreduce", 10000, "allreduce/recursive_doubling", {}),
              (5, "bcast", 1000, "bcast/linear", {}), (6, "alltoall", 20000, "alltoall/bruck", {"k": "2"}),
              (7, "reduce", 1000, "reduce/linear", {}),
              (8, "bcast", 100000, "bcast/scatter_recursive_doubling_allgather", {})]
MPICH_CASES = [(1, "barrier", 0, "barrier/dissemination", {"n": "1"}),
               (2, "allreduce", 100, "allreduce/recursive_doubling", {}), (3, "allgather", 100, "allgather/ring", {}),
               (4, "alltoall", 100, "alltoall/bruck", {"k": "2"}),
               (5, "bcast", 100, "bcast/scatter_ring_allgather", {}),
               (6, "reduce_scatter_block", 100, "reduce_scatter_block/pairwise", {}),
               (7, "allgather", 1000, "allgather/ring", {}), (8, "allreduce", 100, "allreduce/recursive_doubling", {})]


def _wisdom_for(tmp_path, P, collective, nbytes, algorithm, params):
    """The case's entry from nbytes / 2 up, and one collplan-only entry (left for the preload library)."""
    return wisdom_file(tmp_path, [entry(collective, P, algorithm, nbytes // 2, params=params),
                                  entry("allreduce", P, "allreduce/nway_dissemination", 0, params={"n": 2})],
                       f"w{P}.json")


def _check_export(result, P, collective, nbytes, algorithm, library):
    assert {(r.collective, r.ranks, r.algorithm) for r in result.rules} == {(collective, P, algorithm)}, \
        result.report()
    assert any(lf.entry["algorithm"] == "allreduce/nway_dissemination" for lf in result.left)
    if P > 2:
        default = native.choice(library, collective, P, nbytes, nodes=P if library == "mpich" else 1)
        assert default.algorithm != algorithm, default


def _follow(tmp_path, library, cases, fmt, where, files_env, count):
    """Export each case's wisdom, run it with the files and no preload, and compare the library's message pairs
    with the exported collplan schedule's."""
    for P, collective, nbytes, algorithm, params in cases:
        result = tuning.export(_wisdom_for(tmp_path, P, collective, nbytes, algorithm, params), fmt, where)
        _check_export(result, P, collective, nbytes, algorithm, library)
        paths = {}
        for kind, text in result.files.items():
            paths[kind] = tmp_path / f"{kind}{P}.txt"
            paths[kind].write_text(text)
        root = P - 1 if api.describe(collective)["rooted"] else 0
        got = count(P, collective, nbytes, root, files_env(paths))
        mapped = native.NativeChoice(library, "", algorithm, params)
        assert got == schedule_pairs(mapped, P, root, "send" if library == "openmpi" else "recv"), \
            (P, collective, result.report())


def test_openmpi_follows_the_rules_file(tmp_path):
    ompi = OpenMPI(tmp_path)
    _follow(tmp_path, "openmpi", OMPI_CASES, "ompi-rules", str(ROOT / ".mpi/openmpi/bin/ompi_info"),
            lambda paths: ["--mca", "coll_tuned_use_dynamic_rules", "1",
                           "--mca", "coll_tuned_dynamic_rules_filename", str(paths["main"])],
            lambda P, c, n, root, mca: ompi.pairs(P, c, n, root, mca=mca))


def test_mpich_follows_the_json_files(tmp_path):
    mpich = Mpich(tmp_path)
    _follow(tmp_path, "mpich", MPICH_CASES, "mpich-json", str(ROOT / ".mpi/mpich/lib/libmpi.so.12"),
            lambda paths: [("MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", paths["main"]),
                           ("MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE", paths["ch4"])],
            lambda P, c, n, root, env: mpich.pairs(P, c, n, root, env=env))


# Debian's Open MPI 4.1 and MPICH 4.0 (the site MPIs make test installs): their own ids, names and default trees
SITE_CASES = [(4, "allreduce", 10000, "allreduce/recursive_doubling", {}),
              (8, "bcast", 100, "bcast/scatter_ring_allgather", {})]


def test_site_open_mpi_follows_its_file(tmp_path):
    ompi = OpenMPI(tmp_path, "/usr/bin/mpicc.openmpi", "/usr/bin/mpirun.openmpi", btl="self,vader")
    _follow(tmp_path, "openmpi", SITE_CASES[:1], "ompi-rules", "/usr/bin/ompi_info",
            lambda paths: ["--mca", "coll_tuned_use_dynamic_rules", "1",
                           "--mca", "coll_tuned_dynamic_rules_filename", str(paths["main"])],
            lambda P, c, n, root, mca: ompi.pairs(P, c, n, root, mca=mca))


def test_site_mpich_follows_its_files(tmp_path):
    mpich = Mpich(tmp_path, "/usr/bin/mpicc.mpich", "/usr/bin/mpiexec.mpich")
    _follow(tmp_path, "mpich", SITE_CASES[1:], "mpich-json", "/usr/lib/x86_64-linux-gnu/libmpich.so.12",
            lambda paths: [("MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", paths["main"]),
                           ("MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE", paths["ch4"])],
            lambda P, c, n, root, env: mpich.pairs(P, c, n, root, env=env))


# --- the command ----------------------------------------------------------------------------------------------

def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "collplan", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)


def test_cli_writes_both_mpich_files_and_says_how_to_use_them(tmp_path, mpich_target):
    w = wisdom_file(tmp_path, MIXED)
    r = cli("export-tuning", "--wisdom", w, "--format", "mpich-json", "-o", tmp_path / "t.json",
            "--mpi", mpich_target.where)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "t.json").read_text()) and json.loads((tmp_path / "t.ch4.json").read_text())
    assert "MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE=" in r.stdout
    assert re.search(r"^left +allgather P=16 .*topology-specific", r.stdout, re.M)
    r = cli("export-tuning", "--wisdom", w, "--format", "ompi-rules", "--json")
    if r.returncode == 0:  # stdout: the rules file; stderr: the report
        assert r.stdout.splitlines()[2].strip() and json.loads(r.stderr)["rules"]


@pytest.mark.parametrize("args, word", [
    (["--format", "lam-rules"], "invalid choice"),
    (["--format", "ompi-rules", "--mpi", "nosuchmpi"], "nosuchmpi"),
    (["--format", "ompi-rules", "--mpi", "mpich"], "allowed: a openmpi installation"),
])
def test_cli_errors_name_the_value(tmp_path, args, word):
    w = wisdom_file(tmp_path, MIXED)
    r = cli("export-tuning", "--wisdom", w, *args)
    if "mpich" in args and "mpich" not in r.stderr and r.returncode == 0:
        pytest.skip("no mpich installation")
    assert r.returncode == 2 and word in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_bad_wisdom_and_library_files_are_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "collplan-wisdom/1", "entries": [], "entries": []}')
    with pytest.raises(CollplanError, match="bad.json"):
        tuning.export(str(bad), "ompi-rules")
    with pytest.raises(CollplanError, match="cannot read wisdom file"):
        tuning.export(str(tmp_path / "missing.json"), "mpich-json")
    notlib = tmp_path / "libmpi.so"
    notlib.write_bytes(b"\x7fELF nothing here")
    with pytest.raises(CollplanError, match="holds no MPICH collective selection tree"):
        tuning.mpich_target(str(notlib))
    r = cli("plan", "--collective", "allreduce", "--ranks", "4", "--machine", "ib-qdr", "--tuning",
            tmp_path / "r.txt")
    assert r.returncode == 2 and "--tuning-format" in r.stderr


def test_plan_writes_the_tuning_file_beside_its_table(tmp_path):
    if not (ROOT / ".mpi/openmpi/bin/ompi_info").exists():
        pytest.skip("no .mpi/openmpi (make install)")
    r = cli("plan", "--collective", "allreduce", "--ranks", "8", "--machine", "ib-qdr", "--sizes", "8B..64KiB",
            "--no-progress", "--tuning", tmp_path / "r.txt", "--tuning-format", "ompi-rules")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^rule +allreduce P=8 \d+\.\. B: allreduce/rabenseifner", r.stdout, re.M), r.stdout
    text = (tmp_path / "r.txt").read_text()
    assert ompi_lookup(text, tuning.OMPI_COLLTYPE["allreduce"], 8, 1 << 20) == 6


@pytest.mark.parametrize("fmt", ["ompi-rules", "mpich-json"])
def test_the_planner_page_has_the_installed_librarys_table(fmt):
    """docs/planner.md's tables are `collplan export-tuning --table` of the wheels: computed, and kept so."""
    r = cli("export-tuning", "--table", "--format", fmt)
    if r.returncode != 0 and "no " in r.stderr and "installation" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    page = (ROOT / "docs" / "planner.md").read_text()
    missing = [row for row in r.stdout.splitlines() if row not in page]
    assert not missing, f"docs/planner.md lacks (rerun collplan export-tuning --table --format {fmt}):\n" + \
        "\n".join(missing[:5])
