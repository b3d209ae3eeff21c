"""Property tests of the readers and the argument paths: random bytes and random mutations of valid input give a
result or a CollplanError -- never another exception (a traceback at the command line). What a reader accepts,
the core accepts too. Short runs (a few seconds in all); `--hypothesis-seed` reproduces a failure."""
from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collplan import _core, cli
from collplan._core import CollplanError
from collplan.commands._common import INT64_MAX, MAX_RANKS, float_arg, int_arg, read_schedule
from collplan.machines import load_machine
from collplan.output import printable
from collplan.unstructured import MAX_UNITS, matrix_from_spec, read_matrix, stats

from test_hostile import RING3

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DIR = Path(tempfile.mkdtemp(prefix="collplan-property-"))

MATRICES = {
    "csv": b"0,1,2\n3,0,4\n5,6,0\n",
    "mtx": b"%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 7\n3 1 1\n",
    "json": b'{"matrix": [[0, 1], [2, 0]]}',
}
MACHINE = Path(_core.__file__).parent.joinpath("machines", "ib-qdr.toml").read_bytes()


@st.composite
def mutated(draw, valid: bytes):
    """A valid file with a few bytes replaced, inserted or deleted (and sometimes cut short)."""
    data = bytearray(valid)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["replace", "insert", "delete"]))
        piece = draw(st.binary(min_size=1, max_size=6) | st.sampled_from(
            [b"-", b"9" * 25, b"nan", b"inf", b"[", b"{", b"\xff", b"\x00", b"\n", b" ", b"1e400", b'"']))
        if kind == "insert" or i == len(data):
            data[i:i] = piece
        elif kind == "replace":
            data[i:i + len(piece)] = piece
        else:
            del data[i:i + draw(st.integers(1, 8))]
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return bytes(data)


def _file(name: str, data: bytes) -> str:
    path = DIR / name
    path.write_bytes(data)
    return str(path)


def either(fn, *args):
    """fn(*args), or None when it raised CollplanError; any other exception fails the test."""
    try:
        return fn(*args)
    except CollplanError as e:
        assert str(e), repr(e)  # (the command line escapes what it echoes: one line)
        return None


# --------------------------------------------------------------------------------------------- schedules
@FAST
@given(st.binary(max_size=300) | mutated(RING3.encode()))
def test_schedule_reader(data):
    s = either(read_schedule, _file("s.sched", data))
    if s is not None:  # what the reader accepts round-trips
        assert _core.Schedule.from_text(s.to_text()) == s


# --------------------------------------------------------------------------------------------- matrices
@FAST
@given(st.sampled_from(sorted(MATRICES)).flatmap(
    lambda ext: st.tuples(st.just(ext), st.binary(max_size=200) | mutated(MATRICES[ext]))))
def test_matrix_readers(case):
    ext, data = case
    m = either(read_matrix, _file(f"m.{ext}", data))
    if m is not None:
        P = len(m)
        assert P >= 1 and all(len(r) == P for r in m)
        assert all(type(v) is int and 0 <= v <= MAX_UNITS for r in m for v in r)
        either(stats, m)  # the core takes what the reader gave (or says why not, in one line)


HOSTILE_INT = st.one_of(st.integers(-2**70, 2**70), st.sampled_from(["-0", "1.5", "1e3", "", "nan", " 4", "0x10"]))


@FAST
@given(st.sampled_from(["testset1", "testset2"]), st.one_of(st.integers(1, 24), st.integers(2**22 + 1, 2**70),
                                                            st.integers(-2**70, 0)),
       st.dictionaries(st.sampled_from(["d", "seed", "units", "max_units", "x", ""]), HOSTILE_INT, max_size=3))
def test_matrix_specs(kind, P, items):
    spec = f"{kind}:P={P}," + ",".join(f"{k}={v}" for k, v in items.items())
    m = either(matrix_from_spec, spec)
    if m is not None:
        assert len(m) == P


# --------------------------------------------------------------------------------------------- sizes, times
@FAST
@given(st.one_of(st.text(max_size=20), st.from_regex(r"-?[0-9]{1,25}(\.[0-9]+)?(e[0-9]{1,3})? ?(B|KiB|GiB|EiB|s|us|ms|ps)?",
                                                      fullmatch=True)))
def test_size_and_time_parsers(text):
    n = either(_core.parse_size, text)
    assert n is None or 0 <= n <= 2**64
    either(_core.parse_sizes, text)
    t = either(_core.parse_time, text)
    assert t is None or t >= 0


# --------------------------------------------------------------------------------------------- machine files
@FAST
@given(st.binary(max_size=200) | mutated(MACHINE))
def test_machine_reader(data):
    m = either(load_machine, _file("m.toml", data))
    if m is not None:
        _core.check_model(m.model)


# --------------------------------------------------------------------------------------------- arguments
@FAST
@given(st.one_of(st.text(max_size=12), st.integers(-2**70, 2**70).map(str)),
       st.integers(-5, 5), st.integers(0, INT64_MAX))
def test_integer_arguments(text, lo, span):
    parse = int_arg("--x", lo, lo + span)
    try:
        v = parse(text)
    except argparse.ArgumentTypeError as e:
        # the value as the terminal should show it: control characters escaped, at most 40 characters
        assert str(e).startswith(f"--x {printable(text, 40)} is invalid (allowed: an integer {lo}..")
    else:
        assert lo <= v <= lo + span and v == int(text)


@FAST
@given(st.one_of(st.text(max_size=12), st.floats(allow_nan=True, allow_infinity=True).map(str)))
def test_number_arguments(text):
    try:
        v = float_arg("--x", 0)(text)
    except argparse.ArgumentTypeError:
        return
    assert 0 <= v < float("inf")


ARGV = [  # command lines with one value left open: every value gives exit 0 or one error line and exit 2
    ["verify", "--collective", "allgather", "--algorithm", "ring", "--ranks", None],
    ["estimate", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", "--machine", "ib-qdr",
     "--sizes", None],
    ["simulate", "--collective", "allgather", "--algorithm", "ring", "--ranks", "3", "--model",
     "hockney:alpha=1us,beta=1ns/B", "--fidelity", "loggp", "--size", "1KiB", "--seed", None],
    ["verify", "--collective", "alltoall", "--algorithm", "bruck", "--ranks", "5", "--param", None],
    ["verify", "--collective", "allgather", "--algorithm", "ring", "--topology", None],
    ["matrix", "stats", None],
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(ARGV))), st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=16),
    # (no P in 65..2^22: a valid P that large is a big job, not hostile input -- --max-memory bounds it)
    st.integers(-2**70, 64).map(str), st.integers(2**22 + 1, 2**70).map(str),
    st.sampled_from(["k=99999999999999999999", "ring:0", "torus:2x0x2",
                                                          "testset1:P=3,d=1,seed=-1", "1..9EiB", "mesh:P=2x2"])))
def test_cli_values(which, value):
    argv = [value if a is None else a for a in ARGV[which]]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    assert code in (0, 2), (argv, code, err.getvalue())
    if code == 2:
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("collplan: error: "), (argv, err.getvalue())


def test_the_ranks_bound_is_the_core_s():
    assert _core.Topology.parse(f"full:{MAX_RANKS}").nodes == MAX_RANKS
    with pytest.raises(CollplanError):
        _core.Topology.parse(f"full:{MAX_RANKS + 1}")
