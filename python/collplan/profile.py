"""Profiles recorded by libcollplan_pmpi.so (COLLPLAN_PROFILE=DIR, one DIR/collplan.<rank>.prof per rank; the
format: docs/profile.md): load() reads and checks them into the data model below, summary() reduces them to the
table of `collplan profile show`, and export_simgrid_ti() / export_liballprof() write them as SimGrid's
time-independent traces and as the text LogGOPSim's Schedgen reads (liballprof's).

load() is a strict reader: every line is checked (its fields, integers and names, a communicator defined before a
call names it, call numbers in order, the same world size in every file, every rank's file there) and anything
else is a CollplanError of one line naming the file, the line and what is allowed. A file without its `end` line
(a rank that did not reach MPI_Finalize) loads with a warning in Profile.warnings.

Communicators are matched across the ranks as docs/profile.md says: by member list, and communicators with the
same members (MPI_Comm_dup) by the order in which each rank first used them; they get global names c0, c1, ... in
the order of their first collective in time. One collective made by all its members is an Instance: (comm, cseq,
start); its members' calls are checked to agree (collective, kind, root, op, and bytes where MPI has them equal)
with a warning where they do not.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

from . import limits
from .output import printable
from ._core import CollplanError
from .api import COLLECTIVE_NAMES

VERSION = 1
FILE_RE = re.compile(r"collplan\.(0|[1-9][0-9]{0,9})\.prof")
MAX_LINE_BYTES = 1 << 20      # one line; a hostile file cannot make the reader hold more
PROFILE_TEXT_FACTOR = 12      # a call held as a Call takes at most about 12x its line's text
KINDS = ("b", "nb", "init", "start")
OPS = ("sum", "prod", "max", "min", "land", "lor", "lxor", "band", "bor", "bxor", "maxloc", "minloc", "replace",
       "no_op", "user")
ROOTED = ("bcast", "gather", "scatter", "reduce")
REDUCTIONS = ("allreduce", "reduce", "reduce_scatter_block", "reduce_scatter")
PER_MEMBER_VALUES = ("allgatherv", "reduce_scatter", "alltoallv")
# the collectives whose `bytes` every member records alike (alltoallv: what each rank sends, which differs)
SAME_BYTES = tuple(c for c in COLLECTIVE_NAMES if c != "alltoallv")
INT64 = (-(1 << 63), (1 << 63) - 1)
UINT64 = (0, (1 << 64) - 1)
_INT = re.compile(r"-?[0-9]{1,20}")
NS = 1e-9


@dataclass
class Comm:
    key: str                  # global name, "c0", "c1", ... in order of first use across the profile
    size: int
    inter: bool
    world_ranks: list[int]    # members' MPI_COMM_WORLD ranks in communicator rank order


@dataclass
class Call:
    rank: int                 # world rank that made it
    seq: int
    collective: str
    kind: str                 # "b", "nb", "init", "start"
    comm: str                 # Comm.key (global)
    cseq: int
    start: int
    root: int                 # -1 where none
    bytes: int
    type_size: int
    contiguous: bool
    op: str                   # "-" where none
    commutative: bool | None
    enter_s: float            # seconds from time zero
    exit_s: float
    gap_s: float
    values: list[int]         # per member (allgatherv/reduce_scatter: bytes per rank; alltoallv: sent per peer)
    done_enter_s: float | None = None   # from the `done` line
    done_s: float | None = None

    def time_s(self) -> float:
        """Time in the call: exit - enter; a non-blocking call or a persistent start whose completion was recorded:
        from its entry to the return of the completion call (done_s - enter_s)."""
        if self.kind in ("nb", "start") and self.done_s is not None:
            return self.done_s - self.enter_s
        return self.exit_s - self.enter_s


@dataclass
class RankProfile:
    rank: int
    size: int
    mpi: str
    host: str
    init_enter_s: float
    init_exit_s: float
    finalize_s: float | None          # None: the file has no `end` (rank did not finalize, or cut)
    calls: list[Call]
    p2p: dict[int, tuple[int, int]]   # peer -> (messages, bytes)
    complete: bool

    def last_s(self) -> float:
        """The rank's end: MPI_Finalize's entry, or (a cut file) the last time it recorded."""
        if self.finalize_s is not None:
            return self.finalize_s
        times = [self.init_exit_s] + [c.exit_s for c in self.calls] + [c.done_s for c in self.calls
                                                                       if c.done_s is not None]
        return max(times)

    def wall_s(self) -> float:
        return self.last_s() - self.init_exit_s


@dataclass
class Instance:          # one collective as all its members made it: (comm, cseq, start)
    comm: Comm
    collective: str
    calls: list[Call]    # one per member, in communicator rank order

    @property
    def key(self) -> tuple:
        return (self.comm.key, self.calls[0].cseq, self.calls[0].start)

    def enter_s(self) -> float:
        return min(c.enter_s for c in self.calls)

    def imbalance_s(self) -> float:
        """The slowest member's arrival minus the fastest's."""
        arrivals = [c.enter_s for c in self.calls]
        return max(arrivals) - min(arrivals)


@dataclass
class Profile:
    path: str
    world_size: int
    ranks: list[RankProfile]          # by world rank, all present
    comms: dict[str, Comm]
    warnings: list[str] = field(default_factory=list)
    _instances: list[Instance] = field(default_factory=list, repr=False)

    def instances(self) -> list[Instance]:
        """Every collective instance (kinds b, nb and start; an `init` is not one), ordered by earliest enter."""
        return list(self._instances)

    def wall_s(self) -> float:
        """Max over ranks of finalize_s (or last exit) minus min init_exit_s (time zero)."""
        return max(r.last_s() for r in self.ranks) - min(r.init_exit_s for r in self.ranks)

    def calls(self) -> list[Call]:
        return [c for r in self.ranks for c in r.calls]


# ------------------------------------------------------------------------------------------------ reading
def _show(token) -> str:
    """A token as an error message quotes it: printable, at most 40 characters."""
    return printable(token, 40)


class _Lines:
    """The lines of one rank's file, read one at a time (at most MAX_LINE_BYTES each), as text."""

    def __init__(self, path: str, name: str):
        self.path, self.name, self.no = path, name, 0
        self.cut_mid_line = False

    def error(self, what: str) -> CollplanError:
        return CollplanError(f"{self.name}:{self.no}: {what}")

    def __iter__(self):
        try:
            f = open(self.path, "rb")
        except OSError as e:
            raise CollplanError(f"cannot read {self.name}: {e.strerror}") from None
        with f:
            while True:
                try:
                    raw = f.readline(MAX_LINE_BYTES + 1)
                except OSError as e:
                    raise CollplanError(f"cannot read {self.name}: {e.strerror}") from None
                if not raw:
                    return
                self.no += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise self.error(f"line longer than {MAX_LINE_BYTES >> 20} MiB (allowed: a record of "
                                     "docs/profile.md)")
                if not raw.endswith(b"\n"):  # the last line, cut (a rank that died while writing)
                    self.cut_mid_line = True
                if b"\0" in raw:
                    raise self.error("a NUL byte: not a text file (allowed: collplan's profile text, "
                                     "docs/profile.md)")
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise self.error(f"byte 0x{raw[e.start]:02x} is not UTF-8: not a text file (allowed: "
                                     "collplan's profile text, docs/profile.md)") from None
                yield text.rstrip("\n")


def _int(lines: _Lines, token: str, what: str, lo: int, hi: int) -> int:
    if not _INT.fullmatch(token):
        raise lines.error(f"{what} '{_show(token)}' is not an integer (allowed: {lo}..{hi})")
    v = int(token)
    if not lo <= v <= hi:
        raise lines.error(f"{what} {_show(token)} is out of range (allowed: {lo}..{hi})")
    return v


def _flag(lines: _Lines, token: str, what: str) -> bool:
    if token not in ("0", "1"):
        raise lines.error(f"{what} '{_show(token)}' is invalid (allowed: 0 or 1)")
    return token == "1"


def _choice(lines: _Lines, token: str, what: str, allowed) -> str:
    if token not in allowed:
        raise lines.error(f"{what} '{_show(token)}' is unknown (allowed: {', '.join(allowed)})")
    return token


def _fields(lines: _Lines, parts: list[str], n: int, form: str) -> None:
    if len(parts) != n:
        raise lines.error(f"'{parts[0]}' has {len(parts) - 1} fields (allowed: {form})")


@dataclass
class _LocalComm:
    id: int
    size: int
    inter: bool
    members: tuple[int, ...]
    order: int            # the rank's order of first use (its comm lines' order)
    rank: int             # the world rank whose file defines it
    cseq: int = 0         # the next b/nb/init call's place
    inits: dict = field(default_factory=dict)   # cseq -> [collective, starts so far]
    key: str = ""


CALL_FORM = ("call <seq> <collective> <kind> <comm> <cseq> <start> <root> <bytes> <type size> <contiguous> <op> "
             "<commutative> <enter> <exit> <gap> <n> <v_1> ... <v_n>")


def _read_rank(path: str, name: str, rank: int):
    """One rank's file: its RankProfile (calls naming local communicator ids for now), its local communicators by
    id, and warnings."""
    lines = _Lines(path, name)
    it = iter(lines)
    warnings: list[str] = []

    def header(keyword: str, form: str) -> list[str]:
        for text in it:
            if text.startswith("#"):
                continue
            parts = text.split(" ")
            if parts[0] != keyword:
                raise lines.error(f"'{_show(parts[0])}' where the header's '{keyword}' line belongs (allowed: "
                                  f"{form})")
            return parts
        raise CollplanError(f"{name}: the file ends in its header, before its '{keyword}' line (a rank that did "
                            "not reach MPI_Init's end)")

    first = header("collplan-profile", "collplan-profile 1")
    if len(first) != 2 or not _INT.fullmatch(first[1]):
        raise lines.error(f"'{_show(' '.join(first))}' is not a profile's first line (allowed: collplan-profile 1)")
    if first[1] != str(VERSION):
        raise lines.error(f"profile version {_show(first[1])} is not supported (allowed: {VERSION})")
    parts = header("rank", "rank <world rank> <world size>")
    _fields(lines, parts, 3, "rank <world rank> <world size>")
    size = _int(lines, parts[2], "world size", 1, 1 << 31)
    r = _int(lines, parts[1], "rank", 0, size - 1)
    if r != rank:
        raise lines.error(f"rank {r} in the file of rank {rank} (allowed: {rank}, the number in its name)")
    parts = header("mpi", "mpi <the MPI library's version string>")
    mpi = " ".join(parts[1:])
    parts = header("host", "host <host name>")
    _fields(lines, parts, 2, "host <host name>")
    host = parts[1]
    parts = header("init", "init <MPI_Init entry> <MPI_Init exit>")
    _fields(lines, parts, 3, "init <MPI_Init entry> <MPI_Init exit>")
    init_enter = _int(lines, parts[1], "MPI_Init entry", *INT64)
    init_exit = _int(lines, parts[2], "MPI_Init exit", *INT64)

    comms: dict[int, _LocalComm] = {}
    calls: list[Call] = []
    by_seq: dict[int, Call] = {}
    p2p: dict[int, tuple[int, int]] = {}
    finalize = None
    end = None
    stage = "body"  # body -> close (p2p) -> finalized -> ended
    last_exit = init_exit
    for text in it:
        if text.startswith("#"):
            continue
        try:
            parts = text.split(" ")
            kw = parts[0]
            if stage == "ended":
                raise lines.error(f"'{_show(kw)}' after the 'end' line (allowed: nothing)")
            if kw in ("comm", "call", "done") and stage != "body":
                after = "p2p" if stage == "close" else "finalize"
                raise lines.error(f"'{kw}' after the '{after}' lines (allowed: comm, call and done lines before "
                                  "p2p, finalize and end)")
            if kw == "comm":
                if len(parts) < 4:
                    raise lines.error("'comm' has too few fields (allowed: comm <id> <size> <inter> <world rank of "
                                      "member 0> ... <world rank of member size-1>)")
                cid = _int(lines, parts[1], "communicator id", 0, (1 << 32) - 1)
                if cid in comms:
                    raise lines.error(f"communicator {cid} is defined twice (allowed: one comm line per id)")
                csize = _int(lines, parts[2], "communicator size", 1, size)
                inter = _flag(lines, parts[3], "inter")
                if len(parts) != 4 + csize:
                    raise lines.error(f"communicator {cid} of size {csize} lists {len(parts) - 4} members (allowed: "
                                      f"{csize} world ranks)")
                members = tuple(_int(lines, t, "member", 0, size - 1) for t in parts[4:])
                if len(set(members)) != csize:
                    raise lines.error(f"communicator {cid} lists a member twice (allowed: {csize} distinct world "
                                      "ranks)")
                if rank not in members:
                    raise lines.error(f"communicator {cid} does not list rank {rank}, whose file this is (allowed: "
                                      "the members of a communicator the rank used)")
                comms[cid] = _LocalComm(cid, csize, inter, members, len(comms), rank)
            elif kw == "call":
                if len(parts) < 17:
                    raise lines.error(f"'call' has {len(parts) - 1} fields (allowed: {CALL_FORM})")
                seq = _int(lines, parts[1], "call number", 0, UINT64[1])
                if seq != len(calls):
                    raise lines.error(f"call number {seq} where {len(calls)} comes next (allowed: 0, 1, 2, ... in "
                                      "order)")
                coll = _choice(lines, parts[2], "collective", COLLECTIVE_NAMES)
                kind = _choice(lines, parts[3], "kind", KINDS)
                cid = _int(lines, parts[4], "communicator id", 0, (1 << 32) - 1)
                if cid not in comms:
                    raise lines.error(f"communicator {cid} is not defined (allowed: the id of a comm line before it)")
                c = comms[cid]
                cseq = _int(lines, parts[5], "cseq", 0, UINT64[1])
                start = _int(lines, parts[6], "start", 0, UINT64[1])
                if kind == "start":
                    init = c.inits.get(cseq)
                    if init is None or init[0] != coll:
                        raise lines.error(f"a start of {coll} at cseq {cseq} of communicator {cid} without its init "
                                          "(allowed: the cseq of an earlier init call of the same collective)")
                    if start != init[1] + 1:
                        raise lines.error(f"start {start} where {init[1] + 1} comes next (allowed: 1, 2, ... per "
                                          "persistent request)")
                    init[1] = start
                else:
                    if cseq != c.cseq:
                        raise lines.error(f"cseq {cseq} where {c.cseq} comes next on communicator {cid} (allowed: "
                                          "0, 1, ... per communicator)")
                    if start != 0:
                        raise lines.error(f"start {start} on a '{kind}' call (allowed: 0)")
                    c.cseq += 1
                    if kind == "init":
                        c.inits[cseq] = [coll, 0]
                root = _int(lines, parts[7], "root", -(1 << 31), (1 << 31) - 1)
                if not c.inter:
                    if coll in ROOTED and not 0 <= root < c.size:
                        raise lines.error(f"root {root} of {coll} (allowed: 0..{c.size - 1}, a rank of communicator "
                                          f"{cid})")
                    if coll not in ROOTED and root != -1:
                        raise lines.error(f"root {root} of {coll} (allowed: -1, {coll} has no root)")
                nbytes = _int(lines, parts[8], "bytes", *UINT64)
                type_size = _int(lines, parts[9], "type size", 0, INT64[1])
                contiguous = _flag(lines, parts[10], "contiguous")
                if coll in REDUCTIONS:
                    op = _choice(lines, parts[11], "op", OPS)
                    commutative = _flag(lines, parts[12], "commutative")
                else:
                    if parts[11] != "-" or parts[12] != "-":
                        raise lines.error(f"op '{_show(parts[11])}' and commutative '{_show(parts[12])}' on {coll} "
                                          "(allowed: - and -, it is not a reduction)")
                    op, commutative = "-", None
                enter = _int(lines, parts[13], "enter", *INT64)
                exit_ = _int(lines, parts[14], "exit", *INT64)
                gap = _int(lines, parts[15], "gap", *INT64)
                if exit_ < enter:
                    raise lines.error(f"exit {exit_} before enter {enter} (allowed: exit >= enter)")
                if gap != enter - last_exit:
                    raise lines.error(f"gap {gap} is not enter minus the previous call's exit ({enter - last_exit}; "
                                      "allowed: that difference)")
                last_exit = exit_
                n = _int(lines, parts[16], "n", 0, size)
                if len(parts) != 17 + n:
                    raise lines.error(f"'call' has {len(parts) - 17} values where n is {n} (allowed: {CALL_FORM})")
                values = [_int(lines, t, "value", *UINT64) for t in parts[17:]]
                if not c.inter:
                    want = c.size if coll in PER_MEMBER_VALUES else 0
                    if n != want:
                        raise lines.error(f"{coll} with {n} values (allowed: {want}"
                                          f"{', one per member' if want else ''})")
                    if values and sum(values) != nbytes:
                        raise lines.error(f"{coll}'s values add up to {sum(values)}, not its bytes {nbytes} (allowed: "
                                          "values whose sum is bytes)")
                if type_size > 0 and (nbytes % type_size or any(v % type_size for v in values)):
                    raise lines.error(f"bytes {nbytes} (or a value) is not a multiple of the type size {type_size} "
                                      "(allowed: whole elements)")
                call = Call(rank, seq, coll, kind, str(cid), cseq, start, root, nbytes, type_size, contiguous, op,
                            commutative, enter * NS, exit_ * NS, gap * NS, values)
                calls.append(call)
                by_seq[seq] = call
            elif kw == "done":
                _fields(lines, parts, 4, "done <seq> <enter> <exit>")
                seq = _int(lines, parts[1], "call number", 0, UINT64[1])
                call = by_seq.get(seq)
                if call is None or call.kind not in ("nb", "start"):
                    raise lines.error(f"done of call {seq}, which is not an earlier nb or start call (allowed: the seq "
                                      "of one)")
                if call.done_s is not None:
                    raise lines.error(f"a second done of call {seq} (allowed: one)")
                enter = _int(lines, parts[2], "enter", *INT64)
                exit_ = _int(lines, parts[3], "exit", *INT64)
                if exit_ < enter or enter * NS < call.exit_s:
                    raise lines.error(f"done of call {seq} from {enter} to {exit_} (allowed: enter >= the call's exit, "
                                      "exit >= enter)")
                call.done_enter_s, call.done_s = enter * NS, exit_ * NS
            elif kw == "p2p":
                if stage == "finalized":
                    raise lines.error("'p2p' after 'finalize' (allowed: p2p lines, then finalize, then end)")
                stage = "close"
                _fields(lines, parts, 4, "p2p <peer world rank> <messages> <bytes>")
                peer = _int(lines, parts[1], "peer", 0, size - 1)
                if peer in p2p:
                    raise lines.error(f"a second p2p line for peer {peer} (allowed: one per peer)")
                p2p[peer] = (_int(lines, parts[2], "messages", *UINT64), _int(lines, parts[3], "bytes", *UINT64))
            elif kw == "finalize":
                if finalize is not None:
                    raise lines.error("a second finalize line (allowed: one)")
                _fields(lines, parts, 2, "finalize <MPI_Finalize entry>")
                finalize = _int(lines, parts[1], "MPI_Finalize entry", *INT64)
                stage = "finalized"
            elif kw == "end":
                if finalize is None:
                    raise lines.error("'end' before 'finalize' (allowed: finalize, then end)")
                _fields(lines, parts, 2, "end <number of call records>")
                end = _int(lines, parts[1], "number of call records", 0, UINT64[1])
                if end != len(calls):
                    raise lines.error(f"end counts {end} call records, the file has {len(calls)} (allowed: "
                                      f"{len(calls)})")
                stage = "ended"
            else:
                raise lines.error(f"unknown record '{_show(kw)}' (allowed: comm, call, done, p2p, finalize, end, or a "
                                  "# comment)")
        except CollplanError:
            if not lines.cut_mid_line:
                raise
            warnings.append(f"{name}: line {lines.no} is cut (the file ends inside it); it is left out")
            break
    complete = end is not None
    if not complete:
        warnings.append(f"{name}: no 'end' line: rank {rank} did not reach MPI_Finalize or its file is cut; its "
                        f"{len(calls)} calls are read")
    prof = RankProfile(rank, size, mpi, host, init_enter * NS, init_exit * NS,
                       finalize * NS if complete else None, calls, p2p, complete)
    return prof, comms, warnings


def _rank_files(path: str) -> dict[int, str]:
    if not os.path.exists(path):
        raise CollplanError(f"profile directory {path} does not exist")
    if not os.path.isdir(path):
        raise CollplanError(f"{path} is not a directory (allowed: the directory COLLPLAN_PROFILE named, holding "
                            "collplan.<rank>.prof files)")
    try:
        names = os.listdir(path)
    except OSError as e:
        raise CollplanError(f"cannot read profile directory {path}: {e.strerror}") from None
    files = {}
    for n in names:
        m = FILE_RE.fullmatch(n)
        if m:
            files[int(m.group(1))] = os.path.join(path, n)
    if not files:
        raise CollplanError(f"{path} holds no profile (no collplan.<rank>.prof file; record one with `collplan "
                            "profile -o DIR -- mpirun ...` or COLLPLAN_PROFILE=DIR)")
    return files


def _ranges(ranks: list[int]) -> str:
    out, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        out.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ", ".join(out)


def load(path: str, max_memory=None) -> Profile:
    """The profile in directory `path` (every collplan.<rank>.prof of ranks 0..P-1), checked; CollplanError (one
    line: file, line number, what is wrong) on any bad input. Profiles larger than the memory limit allows
    (--max-memory) are refused before they are read."""
    path = os.fspath(path)
    files = _rank_files(path)
    total = 0
    for f in files.values():
        try:
            total += os.stat(f).st_size
        except OSError as e:
            raise CollplanError(f"cannot read {f}: {e.strerror}") from None
    limits.require(total * PROFILE_TEXT_FACTOR, f"reading the profile in {path}", max_memory)
    ranks: list[RankProfile] = []
    local: list[dict[int, _LocalComm]] = []
    warnings: list[str] = []
    first = min(files)
    for rank in sorted(files):
        prof, comms, warn = _read_rank(files[rank], os.path.join(path, os.path.basename(files[rank])), rank)
        if ranks and prof.size != ranks[0].size:
            raise CollplanError(f"{files[rank]}: world size {prof.size}, but collplan.{first}.prof says "
                                f"{ranks[0].size} (allowed: one world size in every file)")
        extra = sorted(r for r in files if r >= prof.size)
        if extra:
            raise CollplanError(f"{path}: files of ranks {_ranges(extra)} in a profile of {prof.size} ranks "
                                f"(allowed: collplan.0.prof .. collplan.{prof.size - 1}.prof; a file left from "
                                "another run?)")
        ranks.append(prof)
        local.append(comms)
        warnings += warn
    size = ranks[0].size
    missing = [r for r in range(size) if r not in files]
    if missing:
        raise CollplanError(f"{path}: no file of ranks {_ranges(missing)} of {size} (collplan.<rank>.prof; a rank "
                            "that did not reach MPI_Init, or an incomplete copy)")
    prof = Profile(path, size, ranks, {}, warnings)
    _match_comms(prof, local)
    _match_instances(prof)
    return prof


def _match_comms(prof: Profile, local: list[dict[int, _LocalComm]]) -> None:
    """Global communicators: one per (members, inter, k-th use among the rank's communicators with those members),
    named c0, c1, ... by their first call in time; every call's comm becomes the global name."""
    first_use: list[dict[str, float]] = []
    for r in prof.ranks:
        seen: dict[str, float] = {}
        for call in r.calls:
            seen.setdefault(call.comm, call.enter_s)
        first_use.append(seen)
    groups: dict[tuple, dict[int, list[_LocalComm]]] = {}
    for rank, comms in enumerate(local):
        for c in sorted(comms.values(), key=lambda c: c.order):
            groups.setdefault((c.members, c.inter), {}).setdefault(rank, []).append(c)
    found: list[tuple[float, tuple, list[_LocalComm]]] = []
    for (members, inter), per_rank in groups.items():
        count = max(len(v) for v in per_rank.values())
        for k in range(count):
            instances = []
            for m in members:
                mine = per_rank.get(m, [])
                if k < len(mine):
                    instances.append(mine[k])
                elif prof.ranks[m].complete:
                    holder = next(r for r in per_rank if len(per_rank[r]) > k)
                    raise CollplanError(
                        f"{prof.path}: rank {holder} used a communicator of ranks {_ranges(sorted(members))}"
                        f"{' (its #' + str(k + 1) + ' with those members)' if k else ''} that member rank {m} "
                        f"never used, and rank {m}'s file is complete (allowed: communicators whose members all "
                        "record them)")
            first = min((first_use[c.rank].get(str(c.id), math.inf) for c in instances), default=math.inf)
            found.append((first, (members, inter, k), instances))
    found.sort(key=lambda f: (f[0], f[1][0], f[1][2]))
    for i, (_, (members, inter, _k), instances) in enumerate(found):
        key = f"c{i}"
        prof.comms[key] = Comm(key, len(members), inter, list(members))
        for c in instances:
            c.key = key
    for rank, comms in enumerate(local):
        for call in prof.ranks[rank].calls:
            call.comm = comms[int(call.comm)].key


def _match_instances(prof: Profile) -> None:
    groups: dict[tuple, dict[int, Call]] = {}
    for r in prof.ranks:
        for c in r.calls:
            if c.kind != "init":
                groups.setdefault((c.comm, c.cseq, c.start), {})[r.rank] = c
    instances = []
    dropped: list[tuple] = []
    disagree: list[str] = []
    for key, by_rank in groups.items():
        comm = prof.comms[key[0]]
        if len(by_rank) != comm.size:
            dropped.append(key)
            continue
        calls = [by_rank[w] for w in comm.world_ranks]
        inst = Instance(comm, calls[0].collective, calls)
        why = _disagreement(inst)
        if why:
            disagree.append(why)
        instances.append(inst)
    if dropped:
        dropped.sort()
        shown = ", ".join(f"{k[0]} cseq {k[1]}" + (f" start {k[2]}" if k[2] else "") for k in dropped[:5])
        more = f" and {len(dropped) - 5} more" if len(dropped) > 5 else ""
        prof.warnings.append(f"{len(dropped)} collective(s) lack a member's call (a cut file) and are left out of "
                             f"the instances: {shown}{more}")
    prof.warnings += disagree[:5]
    if len(disagree) > 5:
        prof.warnings.append(f"... and {len(disagree) - 5} more collectives whose members disagree")
    instances.sort(key=lambda i: (i.enter_s(), i.key))
    prof._instances = instances


def _disagreement(inst: Instance) -> str | None:
    """Where the members' calls of one instance disagree on what MPI has them agree on: the first difference."""
    first = inst.calls[0]
    where = f"{inst.comm.key} cseq {first.cseq}" + (f" start {first.start}" if first.start else "")
    fields = ["collective", "kind"]
    if not inst.comm.inter:
        fields += ["root", "op"]
        if first.collective in SAME_BYTES:
            fields += ["bytes"]
        if first.collective in ("allgatherv", "reduce_scatter"):
            fields += ["values"]
    for c in inst.calls[1:]:
        for f in fields:
            a, b = getattr(first, f), getattr(c, f)
            if a != b:
                return (f"{where}: rank {first.rank} recorded {f} {_short(a)}, rank {c.rank} {_short(b)} (the "
                        "members of one collective agree on it)")
    return None


def _short(v) -> str:
    if isinstance(v, list) and len(v) > 6:
        return "[" + ", ".join(map(str, v[:6])) + ", ...]"
    return str(v)


# ------------------------------------------------------------------------------------------------ summary
def size_bucket(nbytes: int) -> tuple[int, int]:
    """The power-of-two range [lo, 2 lo) that holds nbytes; (0, 0) for 0."""
    if nbytes <= 0:
        return (0, 0)
    lo = 1 << (nbytes.bit_length() - 1)
    return (lo, 2 * lo)


def bucket_label(bucket: tuple[int, int]) -> str:
    """[lo,hi) of a size_bucket(): "[1KiB,2KiB)"; "0B" for 0."""
    from ._core import format_bytes
    lo, hi = bucket
    return "0B" if hi == 0 else f"[{format_bytes(lo)},{format_bytes(hi)})"


def summary(prof: Profile, by: str = "size") -> dict:
    """What `collplan profile show` prints (and --json writes): the header and one row per collective and size
    range (by="size": power-of-two ranges of the instance's bytes, the largest member's for alltoallv) or per
    collective and communicator (by="comm").

    Header keys: path, world_size, mpi (rank 0's library), hosts (distinct, sorted), wall_s (Profile.wall_s),
    rank_wall_s (sum over ranks of each rank's MPI_Init exit to MPI_Finalize entry), collective_s (sum over ranks
    of the time in collective calls: Call.time_s), collective_share (collective_s / rank_wall_s), calls (call
    lines, init included), instances, p2p_messages, p2p_bytes (sent, all ranks), complete_ranks, comms (key,
    size, inter, world_ranks, instances), warnings, by, rows.
    Row keys: collective, size_min_bytes and size_max_bytes (by size; both 0 for 0 bytes) or comm (by comm),
    comm_sizes, instances, calls (per-rank call lines, init included), time_s (sum of Call.time_s), mean_s (per
    call), share (time_s / rank_wall_s), imbalance_s (mean over the instances of the slowest member's arrival
    minus the fastest's; None without instances)."""
    if by not in ("size", "comm"):
        raise CollplanError(f"summary by '{by}' (allowed: size, comm)")
    insts = prof.instances()
    instance_of = {(c.rank, c.seq): inst for inst in insts for c in inst.calls}
    rank_wall = sum(r.wall_s() for r in prof.ranks)

    def group(call: Call, inst: Instance | None):
        if by == "comm":
            return call.comm
        return size_bucket(max(c.bytes for c in inst.calls) if inst else call.bytes)

    rows: dict[tuple, dict] = {}
    coll_s = 0.0
    for call in prof.calls():
        inst = instance_of.get((call.rank, call.seq))
        row = rows.setdefault((call.collective, group(call, inst)),
                              {"calls": 0, "time_s": 0.0, "instances": 0, "imbalance": 0.0, "sizes": set()})
        t = call.time_s()
        row["calls"] += 1
        row["time_s"] += t
        row["sizes"].add(prof.comms[call.comm].size)
        coll_s += t
    for inst in insts:
        row = rows[(inst.collective, group(inst.calls[0], inst))]
        row["instances"] += 1
        row["imbalance"] += inst.imbalance_s()
    out_rows = []
    for (coll, g), row in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1] if by == "size"
                                                              else int(kv[0][1][1:]))):
        r = {"collective": coll}
        if by == "size":
            r["size_min_bytes"], r["size_max_bytes"] = g[0], max(g[1] - 1, 0)
        else:
            r["comm"] = g
        r.update({"comm_sizes": sorted(row["sizes"]), "instances": row["instances"], "calls": row["calls"],
                  "time_s": row["time_s"], "mean_s": row["time_s"] / row["calls"],
                  "share": row["time_s"] / rank_wall if rank_wall > 0 else 0.0,
                  "imbalance_s": row["imbalance"] / row["instances"] if row["instances"] else None})
        out_rows.append(r)
    count = {}
    for inst in insts:
        count[inst.comm.key] = count.get(inst.comm.key, 0) + 1
    return {
        "path": prof.path, "world_size": prof.world_size, "mpi": prof.ranks[0].mpi,
        "hosts": sorted({r.host for r in prof.ranks}), "wall_s": prof.wall_s(), "rank_wall_s": rank_wall,
        "collective_s": coll_s, "collective_share": coll_s / rank_wall if rank_wall > 0 else 0.0,
        "calls": sum(len(r.calls) for r in prof.ranks), "instances": len(insts),
        "p2p_messages": sum(m for r in prof.ranks for m, _ in r.p2p.values()),
        "p2p_bytes": sum(b for r in prof.ranks for _, b in r.p2p.values()),
        "complete_ranks": sum(r.complete for r in prof.ranks),
        "comms": [{"key": c.key, "size": c.size, "inter": c.inter, "world_ranks": c.world_ranks,
                   "instances": count.get(c.key, 0)} for c in prof.comms.values()],
        "warnings": list(prof.warnings), "by": by, "rows": out_rows,
    }


def plot_summary(doc: dict, path: str) -> None:
    """Horizontal bars: the time in each collective (summed over ranks and sizes), its share of the ranks' time at
    the bar's end."""
    from .plot import pyplot, save_figure
    per: dict[str, float] = {}
    for r in doc["rows"]:
        per[r["collective"]] = per.get(r["collective"], 0.0) + r["time_s"]
    names = sorted(per, key=per.get)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8.5, 1.2 + 0.4 * max(len(names), 1)), dpi=120)
    bars = ax.barh(names, [per[n] for n in names], color=[f"C{i % 10}" for i in range(len(names))])
    for bar, n in zip(bars, names):
        share = per[n] / doc["rank_wall_s"] if doc["rank_wall_s"] > 0 else 0.0
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {100 * share:.1f}%", va="center",
                fontsize=8)
    ax.set_xlabel("time in the collective, summed over ranks (s)")
    ax.set_title(f"{doc['world_size']} ranks, {100 * doc['collective_share']:.1f}% of the ranks' time in "
                 f"collectives", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    ax.margins(x=0.15)
    save_figure(fig, path)


# ------------------------------------------------------------------------------------------------ exports
def compute_gaps(rank: RankProfile) -> list[float]:
    """Per call of the rank, the time it computed before the call: its gap less the completion calls (done lines)
    that fell in it (waiting on a collective is not computing); then one more, from the last call to MPI_Finalize
    (or the rank's last record). Never negative."""
    dones = sorted((c.done_enter_s, c.done_s) for c in rank.calls if c.done_s is not None)
    spans = [(c.enter_s, c.exit_s) for c in rank.calls] + [(rank.last_s(), None)]
    out, k, prev = [], 0, rank.init_exit_s
    for enter, exit_ in spans:
        waited = 0.0
        while k < len(dones) and dones[k][0] < enter:
            lo, hi = max(dones[k][0], prev), min(dones[k][1], enter)
            waited += max(hi - lo, 0.0)
            k += 1
        out.append(max(enter - prev - waited, 0.0))
        if exit_ is not None:
            prev = exit_
    return out


def _world_view(comm: Comm, world_size: int, call: Call) -> tuple[int, list[int]] | None:
    """A call on a communicator of every world rank (MPI_COMM_WORLD, a dup, a reordering) as a call on
    MPI_COMM_WORLD: its root and per-member values in world rank order; None for any other communicator."""
    if comm.inter or comm.size != world_size:
        return None
    root = comm.world_ranks[call.root] if call.root >= 0 else call.root
    values = [0] * world_size
    for i, v in enumerate(call.values):
        values[comm.world_ranks[i]] = v
    return root, values if call.values else []


def _received(prof: Profile, instance_of: dict, call: Call) -> list[int]:
    """alltoallv: the bytes `call`'s rank receives from each member (each member's value for it), in communicator
    rank order; zeros where the instance is incomplete."""
    inst = instance_of.get((call.rank, call.seq))
    comm = prof.comms[call.comm]
    if inst is None:
        return [0] * comm.size
    me = comm.world_ranks.index(call.rank)
    return [c.values[me] if c.values else 0 for c in inst.calls]


def _write_files(outdir: str, files: dict[str, str]) -> list[str]:
    from .output import atomic_write
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        raise CollplanError(f"cannot create {outdir}: {e.strerror}") from None
    if not os.path.isdir(outdir):
        raise CollplanError(f"{outdir} is not a directory (allowed: a directory, made if missing)")
    paths = []
    for name, text in files.items():
        p = os.path.join(outdir, name)
        atomic_write(p, text)
        paths.append(p)
    return paths


SIMGRID_INDEX = "simgrid-ti.txt"


def _flops(gap_s: float, rate: float) -> str:
    """gap_s * rate, the gap taken in whole nanoseconds (what the profile records), 15 significant digits."""
    return f"{round(gap_s * 1e9) * (rate * 1e-9):.15g}"
_INT_MAX = (1 << 31) - 1   # SimGrid's replay reads counts as int (smpi_replay.cpp: parse_integer<int>, std::stoi)


def export_simgrid_ti(prof: Profile, outdir: str, flops_rate: float = 1e9) -> dict:
    """SimGrid's time-independent traces (src/smpi/internals/smpi_replay.cpp, SimGrid 3.x): rank-<r>.txt per rank
    and the index SIMGRID_INDEX that `smpirun -replay` takes (one trace per line, in rank order, relative to the
    directory: run smpirun there). Sizes are in MPI_BYTE (`init` without a datatype argument), compute gaps become
    `compute <gap_s * flops_rate>`. What the format cannot express is left out and said (comment lines and the
    returned notes): collectives on communicators other than all the world ranks (SimGrid's time-independent
    collectives run on MPI_COMM_WORLD), the time inside them; non-blocking collectives and persistent starts run
    as blocking ones where they started; the reductions' computation (comp size 0); point-to-point messages (the
    profile has per-peer totals only: their time stays in the compute gaps)."""
    if not (flops_rate > 0 and math.isfinite(flops_rate)):
        raise CollplanError(f"flops rate {flops_rate} is invalid (allowed: a number > 0)")
    instance_of = {(c.rank, c.seq): inst for inst in prof.instances() for c in inst.calls}
    files, skipped, nonblocking, actions = {}, 0, 0, 0
    P = prof.world_size

    def count(v: int, call: Call) -> str:
        if v > _INT_MAX:
            raise CollplanError(f"simgrid-ti: {call.collective} of {v} bytes (rank {call.rank}, call {call.seq}) "
                                f"is more than SimGrid's replay reads (allowed: up to {_INT_MAX} bytes per count)")
        return str(v)

    for rank in prof.ranks:
        r = rank.rank
        lines = [f"# collplan profile {prof.path}, rank {r} of {P}: SimGrid time-independent trace "
                 f"(sizes in bytes, compute at {flops_rate:g} flop/s)", f"{r} init"]
        gaps = compute_gaps(rank)
        for call, gap in zip(rank.calls, gaps):
            if gap > 0:
                lines.append(f"{r} compute {_flops(gap, flops_rate)}")
            comm = prof.comms[call.comm]
            view = _world_view(comm, P, call)
            what = f"{call.collective} {call.kind} call {call.seq} on {comm.key}"
            if call.kind == "init":
                lines.append(f"# {what}: a persistent request made, nothing to replay")
                continue
            if view is None:
                skipped += 1
                lines.append(f"# {what} ({comm.size} of {P} ranks{', inter' if comm.inter else ''}): skipped, "
                             "SimGrid's time-independent collectives run on MPI_COMM_WORLD")
                continue
            root, values = view
            n, c = call.bytes, call.collective
            if c == "barrier":
                act = "barrier"
            elif c == "bcast":
                act = f"bcast {count(n, call)} {root}"
            elif c == "allreduce":
                act = f"allreduce {count(n, call)} 0"
            elif c == "reduce":
                act = f"reduce {count(n, call)} 0 {root}"
            elif c in ("allgather", "alltoall"):
                act = f"{c} {count(n, call)} {count(n, call)}"
            elif c in ("gather", "scatter"):
                act = f"{c} {count(n, call)} {count(n, call)} {root}"
            elif c == "allgatherv":
                act = f"allgatherv {count(values[r], call)} " + " ".join(count(v, call) for v in values)
            elif c == "reduce_scatter":
                act = "reducescatter " + " ".join(count(v, call) for v in values) + " 0"
            elif c == "reduce_scatter_block":
                act = "reducescatter " + " ".join([count(n, call)] * P) + " 0"
            else:  # alltoallv
                recv = [0] * P
                for i, v in enumerate(_received(prof, instance_of, call)):
                    recv[comm.world_ranks[i]] = v
                act = (f"alltoallv {count(sum(values), call)} " + " ".join(count(v, call) for v in values) +
                       f" {count(sum(recv), call)} " + " ".join(count(v, call) for v in recv))
            if call.kind != "b":
                nonblocking += 1
                lines.append(f"# {what}: replayed as blocking")
            lines.append(f"{r} {act}")
            actions += 1
        if gaps[-1] > 0:
            lines.append(f"{r} compute {_flops(gaps[-1], flops_rate)}")
        lines.append(f"{r} finalize")
        files[f"rank-{r}.txt"] = "\n".join(lines) + "\n"
    files[SIMGRID_INDEX] = "".join(f"rank-{r}.txt\n" for r in range(P))
    notes = []
    if skipped:
        notes.append(f"{skipped} call lines (of all ranks) on communicators other than all {P} ranks are skipped "
                     "(SimGrid's time-independent collectives run on MPI_COMM_WORLD); the compute before them is "
                     "kept, the time in them is not")
    if nonblocking:
        notes.append(f"{nonblocking} non-blocking call lines or persistent starts (of all ranks) replay as blocking "
                     "collectives where they started (the format has no non-blocking collectives)")
    notes.append("reductions replay without computation (comp size 0); point-to-point messages are not in the "
                 "trace (the profile has per-peer totals only), their time is in the compute")
    return {"format": "simgrid-ti", "files": _write_files(outdir, files), "index": SIMGRID_INDEX,
            "actions": actions, "skipped": skipped, "notes": notes,
            "run": f"cd {outdir} && smpirun -np {P} -platform PLATFORM.xml -hostfile HOSTFILE -replay "
                   f"{SIMGRID_INDEX}"}


# liballprof (LogGOPSim's src/liballprof: gencode.py, numbers.h) writes one line per MPI call,
# `MPI_<Name>:<start us>:<each argument in the C prototype's order>:<end us>`: pointers as numbers, a datatype as
# `<id>,<size>,<extent>`, a communicator as `<handle>,<rank>,<size>`, an op as its numbers.h code, and the count
# arrays named *sendcounts, *recvcounts, *displs, *sdispls, *rdispls as `<pointer>:<c_0>,<c_1>,...` (an array
# written `name[]`, as MPI_Reduce_scatter's and the non-blocking collectives', as its pointer only). Schedgen's
# trace reader (src/Schedgen/process_trace.cpp) reads the fields by position.
LIBALLPROF_OPS = {"min": 1, "max": 2, "sum": 3, "prod": 4, "land": 5, "band": 6, "lor": 7, "bor": 8, "lxor": 9,
                  "bxor": 10, "minloc": 11, "maxloc": 12}
LIBALLPROF_NAMES = {"allgather": "Allgather", "allgatherv": "Allgatherv", "allreduce": "Allreduce",
                    "alltoall": "Alltoall", "alltoallv": "Alltoallv", "barrier": "Barrier", "bcast": "Bcast",
                    "gather": "Gather", "reduce": "Reduce", "reduce_scatter": "Reduce_scatter",
                    "reduce_scatter_block": "Reduce_scatter_block", "scatter": "Scatter"}


def liballprof_file(rank: int) -> str:
    """The trace file of a rank, as Schedgen opens it (process_trace.cpp: the '-0' of the mask replaced by the
    rank; Schedgen2: "pmpi-trace-rank-" + str(rank)): liballprof pads the rank with zeros to the width of the
    world size, Schedgen reads it unpadded."""
    return f"pmpi-trace-rank-{rank}.txt"


def export_liballprof(prof: Profile, outdir: str) -> dict:
    """LogGOPSim's liballprof text, one pmpi-trace-rank-<r>.txt per rank, for Schedgen (`schedgen -p trace
    --traces pmpi-trace-rank-0.txt`). Times are microseconds from the earliest MPI_Init exit; buffers and status
    pointers are 0; a datatype is `0,<type size>,<type size>` (its handle is not recorded); counts are bytes over
    the type size; a communicator is `<global number>,<rank in it>,<size>`; a non-blocking call gets a request
    number and its completion an MPI_Wait. Persistent collectives (MPI-4, not in liballprof) are written as the
    non-blocking call at each start; their init calls are left out (their time is in the gap)."""
    instance_of = {(c.rank, c.seq): inst for inst in prof.instances() for c in inst.calls}
    base = min(r.init_exit_s for r in prof.ranks)

    def us(t: float) -> str:
        return str(round((t - base) * 1e6))

    files, persistent = {}, 0
    for rank in prof.ranks:
        lines = ["# htor's PMPI Tracer Output File (written by collplan from the profile "
                 f"{prof.path})", f"# hostname: {rank.host}",
                 "# clockdiff: 0.000000 s (relative to rank 0)",
                 "# collplan: datatypes are 0,<size>,<size> (handles unknown), buffers 0, persistent starts "
                 "written as the non-blocking call", "", f"MPI_Init:-:0:0:{us(rank.init_exit_s)}"]
        events = []
        for call in rank.calls:
            if call.kind == "init":
                persistent += 1
                continue
            comm = prof.comms[call.comm]
            me = comm.world_ranks.index(rank.rank)
            ts = call.type_size
            el = (lambda b: b // ts) if ts > 0 else (lambda b: 0)
            dt = f"0,{ts},{ts}"
            cm = f"{int(comm.key[1:])},{me},{comm.size}"
            nb = call.kind != "b"
            c, n, root = call.collective, el(call.bytes), call.root

            def counts(vals):
                return "0:" + ",".join(str(el(v)) for v in vals) if not nb else "0"

            def displs(vals):
                out, at = [], 0
                for v in vals:
                    out.append(at)
                    at += el(v)
                return "0:" + ",".join(map(str, out)) if not nb else "0"

            op = str(LIBALLPROF_OPS.get(call.op, 0))
            if c == "barrier":
                args = [cm]
            elif c == "bcast":
                args = ["0", str(n), dt, str(root), cm]
            elif c in ("gather", "scatter"):
                args = ["0", str(n), dt, "0", str(n), dt, str(root), cm]
            elif c in ("allgather", "alltoall"):
                args = ["0", str(n), dt, "0", str(n), dt, cm]
            elif c == "allgatherv":
                args = ["0", str(el(call.values[me])), dt, "0", counts(call.values), displs(call.values), dt, cm]
            elif c == "alltoallv":
                recv = _received(prof, instance_of, call)
                args = ["0", counts(call.values), displs(call.values), dt, "0", counts(recv), displs(recv), dt, cm]
            elif c == "allreduce":
                args = ["0", "0", str(n), dt, op, cm]
            elif c == "reduce":
                args = ["0", "0", str(n), dt, op, str(root), cm]
            elif c == "reduce_scatter":
                args = ["0", "0", "0", dt, op, cm]
            else:  # reduce_scatter_block
                args = ["0", "0", str(n), dt, op, cm]
            name = ("MPI_I" + LIBALLPROF_NAMES[c].lower()) if nb else "MPI_" + LIBALLPROF_NAMES[c]
            req = str(8 * (call.seq + 1))
            if nb:
                args.append(req)
            events.append((call.enter_s, f"{name}:{us(call.enter_s)}:" + ":".join(args) + f":{us(call.exit_s)}"))
            if call.done_s is not None:
                events.append((call.done_enter_s, f"MPI_Wait:{us(call.done_enter_s)}:{req}:0:{us(call.done_s)}"))
        events.sort(key=lambda e: e[0])
        lines += [e[1] for e in events]
        lines.append(f"MPI_Finalize:{us(rank.last_s())}:-")
        files[liballprof_file(rank.rank)] = "\n".join(lines) + "\n"
    notes = ["Schedgen (src/Schedgen/process_trace.cpp) models collectives on all ranks only and warns on the "
             "others; it reads barrier, allreduce, iallreduce, bcast, allgather, reduce and alltoall"]
    if persistent:
        notes.append(f"{persistent} persistent init call(s) left out (MPI-4, not in liballprof); their starts are "
                     "written as the non-blocking call")
    return {"format": "liballprof", "files": _write_files(outdir, files), "notes": notes,
            "run": f"schedgen -p trace --traces {os.path.join(outdir, liballprof_file(0))} -o app.goal"}
