"""Schedule.walk(): the C++ walker's run of a whole schedule as events (docs/schedule.md, "One walker")."""
from collections import defaultdict

import pytest

import collplan
from collplan import CollplanError
from collplan.symbolic import allreduce_rounds

HEADER = """collplan-schedule 1
collective {c}
ranks 2
blocks in={i} out={o} tmp=0
algorithm ""
params ""
topology ""
flags
"""


@pytest.mark.parametrize("name,ranks", [("allgather/ring", 5), ("alltoall/pairwise", 4),
                                        ("allreduce/recursive_doubling", 6), ("barrier/dissemination", 5)])
def test_every_op_is_posted_once_and_sends_meet_recvs_in_channel_order(name, ranks):
    s = collplan.schedule(name, ranks=ranks)
    events, unmatched, complete = s.walk()
    assert complete and unmatched is None
    posted = [(e[1], e[2]) for e in events if e[0] == "post"]
    assert sorted(posted) == [(r, k) for r in range(ranks) for k in range(s.num_ops(r))]
    ops = [s.ops(r) for r in range(ranks)]
    sends, recvs = defaultdict(list), defaultdict(list)   # channel -> ops in program order
    for r in range(ranks):
        for k, op in enumerate(ops[r]):
            if op["kind"] == "send":
                sends[(r, op["peer"], op["tag"])].append(k)
            elif op["kind"] == "recv":
                recvs[(op["peer"], r, op["tag"])].append(k)
    matched = 0
    for e in events:
        if e[0] == "match":
            _, sr, sk, rr, rk = e
            key = (sr, rr, ops[sr][sk]["tag"])
            assert sends[key].index(sk) == recvs[key].index(rk)
            assert posted.index((sr, sk)) < events.index(e) and posted.index((rr, rk)) < events.index(e)
            matched += 1
    assert matched == sum(len(v) for v in sends.values())


def test_a_rendezvous_deadlock_does_not_complete():
    body = "".join(f"rank {r}\n  0: send to {1 - r} tag 0 in[0+1]\n  1: | recv from {1 - r} tag 0 out[{1 - r}+1]\n"
                   for r in range(2))
    s = collplan.Schedule.from_text(HEADER.format(c="allgather", i=1, o=2) + body)
    events, unmatched, complete = s.walk()
    assert not complete and unmatched is None
    assert [e for e in events if e[0] == "post"] == [("post", 0, 0), ("post", 1, 0)]


def test_an_unmatched_send_is_named_and_the_symbolic_run_refuses_it():
    body = ("rank 0\n  0: copy in[0+1] -> out[0+1]\n  1: send to 1 tag 0 in[0+1]\n"
            "rank 1\n  0: copy in[0+1] -> out[0+1]\n")
    s = collplan.Schedule.from_text(HEADER.format(c="allreduce", i=1, o=1) + body)
    _, unmatched, complete = s.walk()
    assert unmatched == (0, 1) and not complete
    with pytest.raises(CollplanError, match="rank 0 sends 1 messages to rank 1 but 0 are received"):
        allreduce_rounds(s)
