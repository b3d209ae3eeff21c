// One rank for every rank in the verifier (verify.hpp; sweep.hpp: verify_by_symmetry): from rank 0's program and
// the rank-by-rank check that every program is rank 0's moved, the same answer as the whole verification on every
// symmetric case of the sweep, and planted bugs still caught -- in rank 0's program (the data-flow checks) or in
// another rank's (asymmetric).
#include <gtest/gtest.h>

#include <set>

#include "collplan/algorithms/registry.hpp"
#include "collplan/schedule/symmetry.hpp"
#include "collplan/verify/sweep.hpp"

namespace collplan {
namespace {

Schedule rank0_of(const std::string& name, int P, const std::string& topo = "") {
    return make_schedule(name, P, Topology::parse(topo.empty() ? "full:" + std::to_string(P) : topo), {}, {}, 0);
}

TEST(VerifyBySymmetry, SameAnswerAsTheWholeVerificationOnEverySymmetricSweepCase) {
    int compared = 0;
    std::set<std::string> refused;
    for (const Algorithm& a : Registry::get().all()) {
        if (a.collective != Collective::allgather && a.collective != Collective::alltoall &&
            a.collective != Collective::barrier)
            continue;
        for (const SweepCase& c : sweep_cases(a, 24)) {
            const Topology topo = Topology::parse(c.topology);
            const Schedule rank0 = make_schedule(c.algorithm, c.ranks, topo, c.params, {}, 0);
            if (!one_rank_verify_refusal(rank0).empty()) continue;
            const VerifyResult whole = run_case(c);
            ASSERT_TRUE(whole.ok) << c.algorithm << " P=" << c.ranks << ": " << whole.message;
            try {
                const VerifyResult one = verify_by_symmetry(c.algorithm, c.ranks, topo, c.params);
                EXPECT_TRUE(one.ok) << c.algorithm << " P=" << c.ranks << " on " << c.topology << ": " << one.message;
                EXPECT_TRUE(one.one_rank);
                ++compared;
            } catch (const Error& e) {  // refused: the data does not move with the ranks
                EXPECT_NE(std::string(e.what()).find("cannot stand for every rank"), std::string::npos) << e.what();
                refused.insert(c.algorithm);
            }
        }
    }
    EXPECT_GT(compared, 100);  // rings, Bruck, pairwise, dissemination, ...
    // the XOR schedules that send ordered ranges: their ranks move, their blocks' order does not
    EXPECT_EQ(refused, (std::set<std::string>{"allgather/recursive_doubling", "alltoall/multiphase",
                                              "alltoall/standard_exchange"}));
}

TEST(VerifyBySymmetry, CoversRingAllgatherAndPairwiseAlltoall) {
    for (const char* name : {"allgather/ring", "alltoall/pairwise", "alltoall/bruck", "barrier/dissemination"}) {
        const Schedule s = rank0_of(name, 12);
        EXPECT_EQ(one_rank_verify_refusal(s), "") << name;
        const VerifyResult v = verify(s);
        EXPECT_TRUE(v.ok && v.one_rank) << name << ": " << v.message;
    }
}

TEST(VerifyBySymmetry, RefusesWhatItDoesNotCover) {
    // a reduction: its expressions do not move with the ranks in this verifier
    EXPECT_THROW(verify(rank0_of("allreduce/ring", 8)), Error);
    EXPECT_THROW(verify_by_symmetry("allreduce/ring", 8, Topology::full(8), {}), Error);
    // another rank's program alone stands for no one
    const Schedule r3 = make_schedule("allgather/ring", 8, Topology::full(8), {}, {}, 3);
    try {
        verify(r3);
        FAIL() << "expected an Error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("only rank 0's"), std::string::npos) << e.what();
    }
}

// Planted bugs in rank 0's program: the one-rank walk reports them as the whole verification does.
TEST(VerifyBySymmetry, BugsInRankZerosProgramAreCaught) {
    {  // a recv that lands on the wrong block: rank 0 ends without one item
        Schedule s = rank0_of("allgather/ring", 6);
        RankProgram& p = s.program_mut(0);
        Op& last = p.ops.back();
        ASSERT_EQ(last.kind, OpKind::recv);
        p.segs[last.seg_begin] = Segment(Buf::out, 0, 1);
        const VerifyResult v = verify(s);
        EXPECT_EQ(v.reason, "wrong-result") << v.message;
    }
    {  // a send with another tag: nothing matches it
        Schedule s = rank0_of("alltoall/pairwise", 5);
        for (Op& op : s.program_mut(0).ops)
            if (op.kind == OpKind::send) {
                op.aux += 1000;
                break;
            }
        const VerifyResult v = verify(s);
        EXPECT_EQ(v.reason, "unmatched-send") << v.message;
    }
    {  // every recv posted only after its send completed (a fence before it): every rank waits for its neighbour
        Schedule s = rank0_of("allgather/ring", 4);
        for (Op& op : s.program_mut(0).ops)
            if (op.kind == OpKind::recv) op.flags |= opflag::fence;
        const VerifyResult v = verify(s);
        EXPECT_EQ(v.reason, "deadlock") << v.message;
    }
    {  // a dissemination barrier that skips its last round: rank 0 may finish early
        Schedule s = rank0_of("barrier/dissemination", 8);
        RankProgram& p = s.program_mut(0);
        const uint32_t n = static_cast<uint32_t>(p.ops.size());
        ASSERT_GE(n, 2u);
        p.ops.resize(n - 2);  // drop the last send and recv
        const VerifyResult v = verify(s);
        EXPECT_FALSE(v.ok);
        EXPECT_TRUE(v.reason == "barrier-causality" || v.reason == "unmatched-send" || v.reason == "unmatched-recv")
            << v.reason << ": " << v.message;
    }
}

// Planted bugs in another rank's program: check_moved_peers and check_moved_blocks name the rank, op and block.
TEST(VerifyBySymmetry, AnotherRanksDifferenceIsFound) {
    const int P = 8;
    const Schedule rank0 = rank0_of("allgather/ring", P);
    Schedule whole = make_schedule("allgather/ring", P, Topology::full(P));
    for (int j = 0; j < P; ++j) EXPECT_EQ(check_moved_blocks(rank0, whole, j, BlockLayout::same), "") << j;
    RankProgram& p = whole.program_mut(5);
    for (const Op& op : p.ops)
        if (op.kind == OpKind::recv) {
            Segment& sg = p.segs[op.seg_begin];
            sg = Segment(Buf::out, (sg.first() + 1) % P, 1);
            break;
        }
    const std::string why = check_moved_blocks(rank0, whole, 5, BlockLayout::same);
    EXPECT_NE(why.find("rank 5 op"), std::string::npos) << why;
    EXPECT_NE(why.find("expected out["), std::string::npos) << why;
    // a peer that is not rank 0's moved
    Schedule whole2 = make_schedule("alltoall/pairwise", P, Topology::full(P));
    for (Op& op : whole2.program_mut(3).ops)
        if (op.kind == OpKind::send) {
            op.peer = (op.peer + 1) % P;
            break;
        }
    EXPECT_NE(check_moved_peers(rank0_of("alltoall/pairwise", P), whole2, 3).find("peer"),
              std::string::npos);
}

TEST(VerifyBySymmetry, TheOneRankWalkMatchesRankZerosOwnOps) {
    // At P = 10^4 the ring allgather's rank 0 alone: 2 (P - 1) ops, verified in milliseconds.
    const Schedule s = rank0_of("allgather/ring", 10000);
    EXPECT_LE(s.total_ops(), 2u * 10000u);
    const VerifyResult v = verify(s);
    EXPECT_TRUE(v.ok) << v.message;
}

}  // namespace
}  // namespace collplan
