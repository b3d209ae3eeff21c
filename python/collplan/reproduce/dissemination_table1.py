"""Table I of End, Yahyapour, Simmendinger, Alrutz (INFOCOMP 2015): the round-wise partial results of a 2-way
dissemination allreduce for P = 9 and P = 8 -- computed from the schedules by symbolic execution with multisets
(collplan.symbolic), never typed in. The unadapted algorithm counts an element twice at P = 8 (eq. 3); the
adapted one (the 5-tuple of Theorem 1) is exact.
"""
from __future__ import annotations

from collections import Counter

from .. import _core
from ..api import schedule, verify
from ..symbolic import allreduce_rounds
from . import Claim, Report

NAME = "dissemination-table1"
SUMMARY = "Table I: round-wise partial results of the 2-way dissemination allreduce, P = 9 and 8, plain vs adapted"

N = 2
PLAIN = "allreduce/nway_dissemination_plain"
ADAPTED = "allreduce/nway_dissemination"


def _x(c: Counter, p: int, P: int) -> str:
    """Contributions in the paper's order seen from rank p (own data, then the left-hand neighbours):
    'x0 (+) x8 (+) x7'."""
    return " (+) ".join(f"x{q}" for q in sorted(c.elements(), key=lambda q: (p - q) % P))


def _cell(rank: int, rnd: int, rr, by_rank) -> str:
    """S_p^l = S_p^(l-1) (+) S_q^(l-1) ... ; a received value that is not the sender's whole partial result is
    written out, e.g. (x2 (+) x1)."""
    if rnd == 0:
        return f"x{rank}"
    prev = "x" if rnd == 1 else "S"
    terms = [f"{prev}{rank}" + ("" if rnd == 1 else f"^{rnd - 1}")]
    for m in (m for m in rr.received if m.round == rnd):
        whole = by_rank[m.source].states[rnd - 1]
        if m.data == whole:
            terms.append(f"x{m.source}" if rnd == 1 else f"S{m.source}^{rnd - 1}")
        else:
            terms.append(f"({_x(m.data, m.source, len(by_rank))})")
    return f"S{rank}^{rnd} = " + " (+) ".join(terms)


def _check(final: Counter, P: int) -> str:
    twice = sorted(q for q, c in final.items() if c > 1)
    missing = sorted(set(range(P)) - set(final))
    if not twice and not missing:
        return "every x once"
    parts = [f"x{q} {final[q]} times" for q in twice] + [f"x{q} missing" for q in missing]
    return ", ".join(parts)


def _table(alg: str, P: int, params: dict):
    sched = schedule(alg, ranks=P, params=params)
    rounds = allreduce_rounds(sched)
    rows = []
    for r, rr in enumerate(rounds):
        cells = [_cell(r, l, rr, rounds) for l in range(len(rr.states))]
        rows.append([P, alg.split("/")[1], r, *cells[:3], _check(rr.states[-1], P)])
    return sched, rounds, rows


def run(quick: bool) -> Report:
    params = {"n": N}
    s9, r9, rows9 = _table(PLAIN, 9, params)
    s8, r8, rows8 = _table(PLAIN, 8, params)
    a8, ra8, rowsa = _table(ADAPTED, 8, {"n": N, "takeout": "keep"})
    a9 = schedule(ADAPTED, ranks=9, params={"n": N, "takeout": "keep"})
    plan8 = _core.nway_plan(8, N, "keep")
    claims = []

    exact9 = sum(rr.states[-1] == Counter(range(9)) for rr in r9)
    claims.append(Claim("P = 9 = 3^2: after round 2 every rank holds every x_i exactly once (Table I, top)", 9, exact9,
                        unit="ranks", detail=f"rank 0: {_x(r9[0].states[-1], 0, 9)}", required=True))

    senders = [m.source for m in r8[0].received if m.round == 2]
    eq3 = (senders == [5, 2] and r8[0].states[1] == Counter([0, 7, 6]) and r8[5].states[1] == Counter([5, 4, 3])
           and r8[2].states[1] == Counter([2, 1, 0]) and r8[0].states[2][0] == 2)
    s02 = "S0^2 = S0^1 (+) " + " (+) ".join(f"S{q}^1" for q in senders) + f" = {_x(r8[0].states[2], 0, 8)}"
    claims.append(Claim("P = 8: S0^2 = (x0 x7 x6)(x5 x4 x3)(x2 x1 x0) applies the operation to x0 twice (eq. 3)",
                        True, eq3, detail=s02 + f"; x0 {r8[0].states[2][0]} times", required=True))

    eq4 = all(sum(rr.states[l].values()) == (N + 1) ** l for rr in r8 for l in range(3))
    dup = all(sum(c - 1 for c in rr.states[-1].values() if c > 1) == 9 - 8 for rr in r8)
    claims.append(Claim("eq. (4): after round l every rank has combined (n+1)^l initial data elements -- at P = 8, 9 "
                        "for 8 ranks, so every rank counts one element twice", True, eq4 and dup, required=True))

    v = verify(s8, "sum")
    rejected = not v["ok"] and v["reason"] == "double-count"
    claims.append(Claim("the verifier rejects the unadapted algorithm for sum at P = 8, n = 2", "double-count",
                        v["reason"] if not v["ok"] else "accepted", detail=v["message"], required=True))
    max_ok = verify(s8, "max")["ok"] and s8.idempotent_only
    claims.append(Claim("... and accepts it for max (idempotent), as the schedule declares", True, bool(max_ok),
                        required=True))

    t = plan8["tuple"]
    claims.append(Claim("P = 8: the base border g_B of rank 0 coincides with the boundary g^2_1[1] of rank 2 "
                        "(Figure 1)", (2, 1, 1, -1), (t["s"], t["l_snd"], t["j_snd"], t["l_rcv"]) if t else None,
                        detail=plan8["describe"], required=True))
    last = [m for m in ra8[0].received if m.round == 2]
    text_ok = ([m.source for m in last] == [5, 2] and last[0].data == r8[5].states[1]
               and last[1].data == Counter([2, 1]))
    got = "; ".join(f"from {m.source}: {_x(m.data, m.source, 8)}" for m in last)
    claims.append(Claim("adapted, P = 8: rank 5 transfers its partial result, rank 2 only x2 (+) x1 instead of "
                        "x2 (+) x1 (+) x0", True, text_ok, detail=got, required=True))
    exact8 = all(rr.states[-1] == Counter(range(8)) for rr in ra8) and verify(a8, "sum")["ok"]
    claims.append(Claim("adapted, P = 8: every rank ends with every x_i exactly once (verified for sum)", True,
                        bool(exact8), required=True))
    same9 = all(a9.ops(r) == s9.ops(r) for r in range(9))
    claims.append(Claim("for P = (n+1)^k the adaption changes nothing (P = 9: the same operations)", True, same9,
                        required=True))

    notes = [f"adapted plan: {plan8['describe']}",
             "cells: S_p^l = S_p^(l-1) (+) the partial results received in round l; a value in parentheses is a "
             "kept prefix, not the sender's whole partial result",
             "computed by symbolic execution of the schedules with multisets (collplan.symbolic)"]
    return Report(title="Table I: round-wise partial results of the 2-way dissemination allreduce (End et al. 2015)",
                  columns=["P", "algorithm", "rank", "round 0", "round 1", "round 2", "after round 2"],
                  rows=rows9 + rows8 + rowsa, claims=claims, notes=notes)
