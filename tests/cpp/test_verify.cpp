// Verifier tests: correct schedules pass; each mutation of a correct schedule is rejected with the right reason.
#include <gtest/gtest.h>

#include "collplan/algorithms/registry.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

Segment seg(Buf b, uint32_t first, uint32_t n = 1) { return Segment(b, first, n); }

Schedule ring_allgather(int P) { return make_schedule("allgather/ring", P, Topology::parse("ring:" + std::to_string(P))); }

// Two-rank allreduce: copy in->out, exchange, reduce. Exact for non-commutative ops when rank 0 puts its own
// contribution on the left (reverse) and rank 1 puts the received x_0 on the left (normal).
Schedule pair_allreduce(bool rank0_reverse, bool extra_reduce = false) {
    Schedule s(Collective::allreduce, 2, 1, 1, 1);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        b.copy({seg(Buf::in, 0)}, {seg(Buf::out, 0)});
        b.fence();
        b.send(1 - r, 0, {seg(Buf::in, 0)});
        b.recv(1 - r, 0, {seg(Buf::tmp, 0)});
        b.fence();
        const uint8_t flags = (r == 0 && rank0_reverse) ? opflag::reverse : 0;
        b.reduce({seg(Buf::tmp, 0)}, {seg(Buf::out, 0)}, {}, flags);
        if (extra_reduce && r == 1) b.fence().reduce({seg(Buf::tmp, 0)}, {seg(Buf::out, 0)});
    }
    return s;
}

void expect_reject(const Schedule& s, const std::string& reason, const VerifyOptions& o = {}) {
    VerifyResult v = verify(s, o);
    EXPECT_FALSE(v.ok);
    EXPECT_EQ(v.reason, reason) << v.message;
    EXPECT_FALSE(v.message.empty());
}

TEST(Verify, RingAllgatherPassesForManyP) {
    for (int P : {1, 2, 3, 4, 5, 7, 8, 16, 31}) {
        VerifyResult v = verify(ring_allgather(P));
        EXPECT_TRUE(v.ok) << "P=" << P << ": " << v.message;
    }
}

TEST(Verify, DroppedBlockIsAWrongResult) {
    Schedule s = ring_allgather(4);
    // Rank 0's last recv (round 2) should bring b_1; redirect it onto out[3], which it already holds.
    RankProgram& p = s.program_mut(0);
    Op& last = p.ops.back();
    ASSERT_EQ(last.kind, OpKind::recv);
    p.segs[last.seg_begin] = seg(Buf::out, 3);
    VerifyResult v = verify(s);
    EXPECT_EQ(v.reason, "wrong-result") << v.message;
    EXPECT_EQ(v.rank, 0);
    EXPECT_NE(v.message.find("out[1]"), std::string::npos) << v.message;
    EXPECT_NE(v.message.find("b_1"), std::string::npos) << v.message;
}

TEST(Verify, AllreduceExactlyOnce) {
    EXPECT_TRUE(verify(pair_allreduce(true)).ok);
    VerifyResult v = verify(pair_allreduce(true, true));
    EXPECT_EQ(v.reason, "double-count") << v.message;
    EXPECT_EQ(v.rank, 1);
    EXPECT_NE(v.message.find("x_"), std::string::npos);
    // An idempotent operation (max) tolerates it.
    EXPECT_TRUE(verify(pair_allreduce(true, true), verify_options_for_op("max")).ok);
}

TEST(Verify, NonCommutativeOrder) {
    const VerifyOptions nc = verify_options_for_op("noncommutative");
    EXPECT_TRUE(verify(pair_allreduce(true), nc).ok) << verify(pair_allreduce(true), nc).message;
    VerifyResult v = verify(pair_allreduce(false), nc);
    EXPECT_EQ(v.reason, "order") << v.message;
    EXPECT_EQ(v.rank, 0);
    EXPECT_TRUE(verify(pair_allreduce(false), verify_options_for_op("sum")).ok);
}

TEST(Verify, UnmatchedSend) {
    Schedule s = ring_allgather(3);
    RankProgram& p = s.program_mut(1);
    for (Op& op : p.ops)
        if (op.kind == OpKind::send) { op.aux = 7; break; }  // change the tag of rank 1's first send
    VerifyResult v = verify(s);
    EXPECT_EQ(v.reason, "unmatched-send") << v.message;
    EXPECT_EQ(v.rank, 1);
}

TEST(Verify, UnmatchedRecv) {
    Schedule s(Collective::barrier, 2, 0, 0, 0);
    RankBuilder(s, 0).recv(1, 0, std::span<const Segment>{});
    expect_reject(s, "unmatched-recv");
}

TEST(Verify, CyclicWaitIsADeadlock) {
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        b.copy({seg(Buf::in, 0)}, {seg(Buf::out, static_cast<uint32_t>(r))});
        b.fence().recv(1 - r, 0, {seg(Buf::out, static_cast<uint32_t>(1 - r))});
        b.fence().send(1 - r, 0, {seg(Buf::out, static_cast<uint32_t>(r))});  // sent only after the recv: cycle
    }
    VerifyResult v = verify(s);
    EXPECT_EQ(v.reason, "deadlock") << v.message;
    EXPECT_NE(v.message.find("waits for"), std::string::npos) << v.message;
}

TEST(Verify, SizeMismatch) {
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        b.copy({seg(Buf::in, 0)}, {seg(Buf::out, static_cast<uint32_t>(r))});
        b.fence().send(1 - r, 0, {seg(Buf::out, static_cast<uint32_t>(r))});
        if (r == 0) b.recv(1, 0, {seg(Buf::out, 0, 2)});  // expects two blocks
        else b.recv(0, 0, {seg(Buf::out, 0)});
    }
    expect_reject(s, "size-mismatch");
}

TEST(Verify, ReadBeforeWrite) {
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        b.send(1 - r, 0, {seg(Buf::out, static_cast<uint32_t>(r))});  // out[r] not yet copied from in
        b.recv(1 - r, 0, {seg(Buf::out, static_cast<uint32_t>(1 - r))});
        b.copy({seg(Buf::in, 0)}, {seg(Buf::out, static_cast<uint32_t>(r))}, {0});
    }
    VerifyResult v = verify(s, VerifyOptions{true, false, false});  // races off: the read itself must fail
    EXPECT_EQ(v.reason, "read-before-write") << v.message;
    EXPECT_NE(v.message.find("out["), std::string::npos);
}

TEST(Verify, RaceBetweenConcurrentOps) {
    Schedule t(Collective::allgather, 2, 1, 2, 1);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(t, r);
        b.copy({seg(Buf::in, 0)}, {seg(Buf::out, static_cast<uint32_t>(r))});
        b.fence().send(1 - r, 0, {seg(Buf::out, static_cast<uint32_t>(r))});
        b.recv(1 - r, 0, {seg(Buf::tmp, 0)});
        b.copy({seg(Buf::tmp, 0)}, {seg(Buf::out, static_cast<uint32_t>(r))});  // overwrites what the send reads
    }
    VerifyResult w = verify(t);
    EXPECT_EQ(w.reason, "race") << w.message;
}

TEST(Verify, ExplicitDependencyRemovesTheRace) {
    Schedule t(Collective::allgather, 2, 1, 2, 1);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(t, r);
        b.copy({seg(Buf::in, 0)}, {seg(Buf::out, static_cast<uint32_t>(r))});
        b.fence();
        const uint32_t snd = b.send(1 - r, 0, {seg(Buf::out, static_cast<uint32_t>(r))});
        const uint32_t rcv = b.recv(1 - r, 0, {seg(Buf::tmp, 0)});
        b.copy({seg(Buf::tmp, 0)}, {seg(Buf::out, static_cast<uint32_t>(1 - r))}, {snd, rcv});
    }
    VerifyResult v = verify(t);
    EXPECT_TRUE(v.ok) << v.message;
}

TEST(Verify, BarrierCausality) {
    // Rank 0 tells rank 1 it started, but rank 1 tells nobody: rank 0 may finish first.
    Schedule s(Collective::barrier, 2, 0, 0, 0);
    RankBuilder(s, 0).send(1, 0, std::span<const Segment>{});
    RankBuilder(s, 1).recv(0, 0, std::span<const Segment>{});
    VerifyResult v = verify(s);
    EXPECT_EQ(v.reason, "barrier-causality") << v.message;
    EXPECT_EQ(v.rank, 0);
    // Adding the reply makes it a correct (two-rank) barrier.
    RankBuilder(s, 1).fence().send(0, 0, std::span<const Segment>{});
    RankBuilder(s, 0).recv(1, 0, std::span<const Segment>{});
    EXPECT_TRUE(verify(s).ok) << verify(s).message;
}

TEST(Verify, GlobalBarrierOpGivesCausality) {
    Schedule s(Collective::barrier, 4, 0, 0, 0);
    for (int r = 0; r < 4; ++r) RankBuilder(s, r).barrier();
    EXPECT_TRUE(verify(s).ok);
    Schedule t(Collective::barrier, 4, 0, 0, 0);
    for (int r = 0; r < 3; ++r) RankBuilder(t, r).barrier();  // rank 3 never joins
    VerifyResult v = verify(t);
    EXPECT_EQ(v.reason, "unmatched-barrier") << v.message;
    EXPECT_EQ(v.rank, 3);
}

TEST(Verify, UndeclaredInverse) {
    Schedule s = pair_allreduce(true);
    RankBuilder(s, 1).fence().reduce({seg(Buf::tmp, 0)}, {seg(Buf::out, 0)}, {}, opflag::inverse);
    expect_reject(s, "undeclared-inverse");
    s.needs_inverse = true;
    VerifyResult v = verify(s);  // takes x_0 out again: rank 1 ends without it
    EXPECT_EQ(v.reason, "missing-contribution") << v.message;
}

TEST(Verify, AlltoallvUnitsMustMatchTheMatrix) {
    Schedule s(Collective::alltoallv, 2, 2, 2, 0);
    s.counts = {0, 5, 3, 0};
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        const uint32_t me = static_cast<uint32_t>(r), other = 1 - me;
        const std::vector<Segment> in_me{seg(Buf::in, me)}, out_me{seg(Buf::out, me)};
        const std::vector<Segment> in_other{seg(Buf::in, other)}, out_other{seg(Buf::out, other)};
        b.copy(in_me, out_me, {}, 0);
        b.send(1 - r, 0, in_other, {}, s.counts[me * 2 + other]);
        b.recv(1 - r, 0, out_other, {}, s.counts[other * 2 + me]);
    }
    EXPECT_TRUE(verify(s).ok) << verify(s).message;
    s.program_mut(0).units[1] = 4;  // rank 0 sends 4 units of a 5-unit block: a piece, and no piece follows
    s.program_mut(1).units[2] = 4;
    expect_reject(s, "incomplete-block");
    s.program_mut(0).units[1] = 6;  // more units than the block holds
    s.program_mut(1).units[2] = 6;
    expect_reject(s, "size-mismatch");
}

TEST(Verify, ReduceOpOutsideReductionIsRejected) {
    Schedule s(Collective::allgather, 1, 1, 1, 0);
    RankBuilder(s, 0).reduce({seg(Buf::in, 0)}, {seg(Buf::out, 0)});
    expect_reject(s, "reduce-outside-reduction");
}

TEST(Verify, UnknownOperationName) { EXPECT_THROW(verify_options_for_op("avg"), Error); }

}  // namespace
}  // namespace collplan
