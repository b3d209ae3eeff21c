"""Symbolic execution of allreduce schedules with *multisets* of contributions.

The C++ verifier (``collplan.verify``) stops at the first contribution that would be counted twice; this
interpreter keeps going and records, per rank, what each partial result holds after every communication round
-- with multiplicities, so a double counting shows as ``x0`` twice. When an op starts and which send matches which
recv is the C++ walker's decision (``Schedule.walk()``, docs/schedule.md); this module supplies only the data: a
send carries its data as it was when the send started; ``reduce`` adds (``inverse``: removes) the source's
contributions; ``calc`` and ``barrier`` ops move no data.

    rounds = allreduce_rounds(collplan.schedule("allreduce/nway_dissemination_plain", ranks=8, params={"n": 2}))
    rounds[0].states[2]     # Counter({0: 2, 7: 1, 6: 1, ...}): rank 0 after round 2 holds x0 twice
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ._core import CollplanError


@dataclass
class Received:
    source: int
    data: Counter            # contributions of the message
    round: int               # 1-based communication round of the receiver
    op: int                  # index of the recv op


@dataclass
class RankRounds:
    states: list[Counter] = field(default_factory=list)   # out[block] at round 0, after round 1, ..., final
    received: list[Received] = field(default_factory=list)   # in program order


def allreduce_rounds(sched, block: int = 0) -> list[RankRounds]:
    """Per rank: the contributions held in ``out[block]`` before the first communication round, after each round
    (a round = one dependency group that communicates plus the local work after it) and at the end."""
    if sched.collective != "allreduce":
        raise CollplanError(f"symbolic rounds need an allreduce schedule, got {sched.collective}")
    return _Run(sched, block).run()


class _Run:
    """Replays the walk of the schedule (``Schedule.walk``: the C++ walker decides readiness and matching) with
    multisets as data."""

    def __init__(self, sched, block: int):
        self.sched = sched
        self.P = sched.ranks
        self.block = block
        self.ops = [sched.ops(r) for r in range(self.P)]
        self.data = [defaultdict(Counter) for _ in range(self.P)]     # (buf, block) -> Counter
        for r in range(self.P):
            for b in range(sched.blocks("in")):
                self.data[r][("in", b)] = Counter({r: 1})
        self.out = [RankRounds() for _ in range(self.P)]

    def _unmatched(self, r, k) -> CollplanError:
        op = self.ops[r][k]
        src, dst = (r, op["peer"]) if op["kind"] == "send" else (op["peer"], r)
        def count(rank, kind, peer):
            return sum(1 for o in self.ops[rank] if o["kind"] == kind and o["peer"] == peer and o["tag"] == op["tag"])
        return CollplanError(f"rank {src} sends {count(src, 'send', dst)} messages to rank {dst} "
                             f"but {count(dst, 'recv', src)} are received")

    def _read(self, r, segs) -> list[Counter]:
        return [Counter(self.data[r][(buf, first + k)]) for buf, first, count in segs for k in range(count)]

    def _write(self, r, segs, values) -> None:
        it = iter(values)
        for buf, first, count in segs:
            for k in range(count):
                self.data[r][(buf, first + k)] = next(it)

    def run(self) -> list[RankRounds]:
        events, unmatched, complete = self.sched.walk()
        if unmatched is not None:
            raise self._unmatched(*unmatched)
        payload, comm_round = {}, [0] * self.P
        for event in events:
            if event[0] == "open":
                _, r, begin, end = event
                if any(op["kind"] in ("send", "recv") for op in self.ops[r][begin:end]):
                    self.out[r].states.append(Counter(self.data[r][("out", self.block)]))
                    comm_round[r] += 1
            elif event[0] == "post":
                _, r, i = event
                op = self.ops[r][i]
                if op["kind"] == "send":
                    payload[(r, i)] = self._read(r, op["src"])
                elif op["kind"] != "recv":
                    self._local(r, op)
            elif event[0] == "match":
                _, s, si, d, di = event
                values = payload.pop((s, si))
                self._write(d, self.ops[d][di]["dst"], values)
                self.out[d].received.append(Received(s, sum(values, Counter()), comm_round[d], di))
        if not complete:
            raise CollplanError("the schedule deadlocks (run collplan verify for the wait cycle)")
        for r in range(self.P):
            self.out[r].states.append(Counter(self.data[r][("out", self.block)]))
            self.out[r].received.sort(key=lambda m: m.op)
        return self.out

    def _local(self, r, op) -> None:
        if op["kind"] == "copy":
            self._write(r, op["dst"], self._read(r, op["src"]))
        elif op["kind"] == "reduce":
            src, dst = self._read(r, op["src"]), self._read(r, op["dst"])
            if op["inverse"]:
                for a, b in zip(src, dst):
                    if any(b[x] < c for x, c in a.items()):
                        raise CollplanError(f"rank {r} takes out contributions it does not hold")
                vals = [b - a for a, b in zip(src, dst)]
            else:
                vals = [a + b for a, b in zip(src, dst)]
            self._write(r, op["dst"], vals)
