"""Symbolic execution of allreduce schedules with *multisets* of contributions.

The C++ verifier (``collplan.verify``) stops at the first contribution that would be counted twice; this
interpreter keeps going and records, per rank, what each partial result holds after every communication round
-- with multiplicities, so a double counting shows as ``x0`` twice. It follows the IR's semantics
(docs/schedule.md): an op starts when every op of the earlier groups of its rank and its explicit dependencies
have completed; the k-th send i -> j with tag t matches the k-th recv at j from i with tag t; a send carries its
data as it was when the send started; ``reduce`` adds (``inverse``: removes) the source's contributions. ``calc`` and
``barrier`` ops move no data (a barrier's synchronisation is not modelled: allreduce schedules do not need one).

    rounds = allreduce_rounds(collplan.schedule("allreduce/nway_dissemination_plain", ranks=8, params={"n": 2}))
    rounds[0].states[2]     # Counter({0: 2, 7: 1, 6: 1, ...}): rank 0 after round 2 holds x0 twice
"""
from __future__ import annotations

from collections import Counter, defaultdict, deque
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
    def __init__(self, sched, block: int):
        self.P = sched.ranks
        self.block = block
        self.ops = [sched.ops(r) for r in range(self.P)]
        self.data = [defaultdict(Counter) for _ in range(self.P)]     # (buf, block) -> Counter
        for r in range(self.P):
            for b in range(sched.blocks("in")):
                self.data[r][("in", b)] = Counter({r: 1})
        self.out = [RankRounds() for _ in range(self.P)]
        self.group = [self._groups(ops) for ops in self.ops]
        self.partner = self._match()

    @staticmethod
    def _groups(ops) -> list[int]:
        g, out = 0, []
        for i, op in enumerate(ops):
            if op["fence"] and i > 0:
                g += 1
            out.append(g)
        return out

    def _match(self) -> dict:
        sends, recvs = defaultdict(list), defaultdict(list)
        for r, ops in enumerate(self.ops):
            for i, op in enumerate(ops):
                if op["kind"] == "send":
                    sends[(r, op["peer"], op["tag"])].append(i)
                elif op["kind"] == "recv":
                    recvs[(op["peer"], r, op["tag"])].append(i)
        partner = {}
        for key, idx in sends.items():
            src, dst, _ = key
            if len(recvs.get(key, [])) != len(idx):
                got = len(recvs.get(key, []))
                raise CollplanError(f"rank {src} sends {len(idx)} messages to rank {dst} but {got} are received")
            for a, b in zip(idx, recvs[key]):
                partner[(src, a)] = (dst, b)
                partner[(dst, b)] = (src, a)
        return partner

    def _read(self, r, segs) -> list[Counter]:
        return [Counter(self.data[r][(buf, first + k)]) for buf, first, count in segs for k in range(count)]

    def _write(self, r, segs, values) -> None:
        it = iter(values)
        for buf, first, count in segs:
            for k in range(count):
                self.data[r][(buf, first + k)] = next(it)

    def run(self) -> list[RankRounds]:
        done = [[False] * len(ops) for ops in self.ops]
        posted = [[False] * len(ops) for ops in self.ops]
        payload, comm_round = {}, [0] * self.P
        left = [Counter(self.group[r]) for r in range(self.P)]   # ops not yet done per group
        ready = deque((r, i) for r in range(self.P) for i in range(len(self.ops[r])) if self._ready(r, i, done, left))
        for r in range(self.P):
            self._open_group(r, 0, comm_round)
        while ready:
            r, i = ready.popleft()
            if posted[r][i]:
                continue
            posted[r][i] = True
            op = self.ops[r][i]
            finished = []
            if op["kind"] in ("copy", "reduce", "calc", "barrier"):
                self._local(r, op)
                finished.append((r, i))
            elif op["kind"] == "send":
                payload[(r, i)] = self._read(r, op["src"])
            q, j = self.partner.get((r, i), (None, None))
            if op["kind"] in ("send", "recv") and posted[q][j]:
                s, si, d, di = (r, i, q, j) if op["kind"] == "send" else (q, j, r, i)
                values = payload.pop((s, si))
                self._write(d, self.ops[d][di]["dst"], values)
                self.out[d].received.append(Received(s, sum(values, Counter()), comm_round[d], di))
                finished += [(s, si), (d, di)]
            for fr, fi in finished:
                done[fr][fi] = True
                g = self.group[fr][fi]
                left[fr][g] -= 1
                if left[fr][g] == 0:
                    self._open_group(fr, g + 1, comm_round)
                for k in range(fi + 1, len(self.ops[fr])):
                    if not posted[fr][k] and self._ready(fr, k, done, left):
                        ready.append((fr, k))
        if any(not all(d) for d in done):
            raise CollplanError("the schedule deadlocks (run collplan verify for the wait cycle)")
        for r in range(self.P):
            self.out[r].states.append(Counter(self.data[r][("out", self.block)]))
            self.out[r].received.sort(key=lambda m: m.op)
        return self.out

    def _ready(self, r, i, done, left) -> bool:
        g = self.group[r][i]
        return all(left[r][h] == 0 for h in range(g)) and all(done[r][d] for d in self.ops[r][i]["deps"])

    def _open_group(self, r, g, comm_round) -> None:
        ops = [op for op, h in zip(self.ops[r], self.group[r]) if h == g]
        if any(op["kind"] in ("send", "recv") for op in ops):
            self.out[r].states.append(Counter(self.data[r][("out", self.block)]))
            comm_round[r] += 1

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
