// Tests of the schedule walker (schedule/walk.hpp): static matching in channel order, one rank's prerequisites,
// the untimed walk's order and its "waits for" answer on a deadlock, the barrier rendezvous (alone and in every
// backend), block sizes and op names. (The cursors and the Matcher are also exercised through the simulators in
// test_sim.cpp.)
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "collplan/model/estimate.hpp"
#include "collplan/schedule/walk.hpp"
#include "collplan/sim/simulate.hpp"

namespace collplan {
namespace {

Segment in(uint32_t b) { return Segment(Buf::in, b, 1); }
Segment out(uint32_t b) { return Segment(Buf::out, b, 1); }

// Rank 0 sends two messages with tag 0 and one with tag 1 to rank 1, which posts them in another order.
Schedule channels() {
    Schedule s(Collective::allgather, 2, 1, 3, 0);
    RankBuilder a(s, 0), b(s, 1);
    a.send(1, 0, {in(0)});   // 0
    a.send(1, 1, {in(0)});   // 1
    a.send(1, 0, {in(0)});   // 2
    b.recv(0, 1, {out(0)});  // 0
    b.recv(0, 0, {out(1)});  // 1
    b.recv(0, 0, {out(2)});  // 2
    return s;
}

TEST(Walk, MatchesTheKthSendOfAChannelWithItsKthRecv) {
    const Schedule s = channels();
    const std::vector<size_t> base = op_offsets(s);
    ASSERT_EQ(base, (std::vector<size_t>{0, 3, 6}));
    const std::vector<uint32_t> p = match_partners(s, base);
    EXPECT_EQ(p, (std::vector<uint32_t>{1, 0, 2, 1, 0, 2}));
}

TEST(Walk, LeavesAnUnmatchedSendWithoutPartner) {
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    RankBuilder a(s, 0), b(s, 1);
    a.send(1, 0, {in(0)});
    a.send(1, 0, {in(0)});
    b.recv(0, 0, {out(0)});
    const std::vector<uint32_t> p = match_partners(s, op_offsets(s));
    EXPECT_EQ(p, (std::vector<uint32_t>{0, kNoPartner, 0}));
}

TEST(Walk, ProgramOrderCountsGroupsAndDependencies) {
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    RankBuilder a(s, 0);
    a.copy({in(0)}, {out(0)});              // 0, group 0
    a.send(1, 0, {out(0)}, {0});            // 1, group 0, after 0
    a.fence().recv(1, 0, {out(1)});         // 2, group 1
    a.copy({out(1)}, {out(0)}, {1, 2});     // 3, group 1, after 1 and 2
    RankBuilder(s, 1);
    const ProgramOrder o = program_order(s.program(0));
    EXPECT_EQ(o.group_begin, (std::vector<uint32_t>{0, 2, 4}));
    EXPECT_EQ(o.group, (std::vector<uint32_t>{0, 0, 1, 1}));
    EXPECT_EQ(o.pending, (std::vector<uint32_t>{0, 1, 1, 3}));
    EXPECT_EQ(o.dep_begin, (std::vector<uint32_t>{0, 1, 2, 3, 3}));
    EXPECT_EQ(o.dependents, (std::vector<uint32_t>{1, 3, 3}));
    EXPECT_TRUE(o.any_deps);
}

struct Log final : WalkVisitor {
    std::vector<std::string> events;
    void open(int r, uint32_t b, uint32_t e) override { add("open", r, b, e); }
    void post(int r, uint32_t k) override { add("post", r, k); }
    void match(int sr, uint32_t sk, int rr, uint32_t rk) override { add("match", sr, sk, rr, rk); }
    void barrier(std::span<const std::pair<int, uint32_t>> ops) override { add("barrier", static_cast<int>(ops.size())); }
    template <class... A>
    void add(const char* what, A... a) {
        std::string t = what;
        ((t += " " + std::to_string(a)), ...);
        events.push_back(t);
    }
};

TEST(Walk, PostsInFifoOrderAndCompletesAPairWhenBothArePosted) {
    // Rank 0: copy, | send to 1. Rank 1: recv from 0, then (dependency) barrier; rank 0's barrier follows a fence.
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    RankBuilder a(s, 0), b(s, 1);
    a.copy({in(0)}, {out(0)});
    a.fence().send(1, 0, {out(0)});
    a.fence().barrier();
    b.recv(0, 0, {out(0)});
    const uint32_t first[] = {0};
    b.barrier(first);
    Walk w(s, default_job());
    Log log;
    EXPECT_TRUE(w.run(log));
    EXPECT_EQ(log.events, (std::vector<std::string>{
                              "open 0 0 1", "open 1 0 2", "post 0 0", "open 0 1 2", "post 1 0", "post 0 1",
                              "match 0 1 1 0", "open 0 2 3", "post 0 2", "post 1 1", "barrier 2"}));
    EXPECT_FALSE(w.first_incomplete());
}

TEST(Walk, SaysWhatAStuckOpWaitsFor) {
    // Both ranks send first and receive after a fence: with rendezvous sends, neither recv is ever posted.
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        b.send(1 - r, 0, {in(0)});
        b.fence().recv(1 - r, 0, {out(1 - r)});
    }
    Walk w(s, default_job());
    Log log;
    EXPECT_FALSE(w.run(log));
    ASSERT_TRUE(w.first_incomplete());
    EXPECT_EQ(*w.first_incomplete(), std::make_pair(0, 0u));
    EXPECT_TRUE(w.posted(0, 0));
    EXPECT_FALSE(w.posted(0, 1));
    EXPECT_EQ(w.waits_for(0, 0), std::make_pair(1, 1u));  // its recv, not yet posted
    EXPECT_EQ(w.waits_for(1, 1), std::make_pair(1, 0u));  // the previous group
    EXPECT_EQ(w.waits_for(1, 0), std::make_pair(0, 1u));
}

TEST(Walk, TimedCursorGivesTheLatestPrerequisiteAsReadyTime) {
    Schedule s(Collective::allgather, 1, 1, 1, 0);
    RankBuilder a(s, 0);
    a.calc(1);          // 0
    a.calc(1);          // 1
    const uint32_t after0[] = {0};
    a.calc(1, after0);  // 2, after 0
    a.fence().calc(1);  // 3
    TimedCursor<int64_t> c(s.program(0));
    std::vector<uint32_t> ready;
    c.start(ready);
    EXPECT_EQ(ready, (std::vector<uint32_t>{0, 1}));
    ready.clear();
    c.complete(1, 50, ready);
    EXPECT_TRUE(ready.empty());
    c.complete(0, 30, ready);
    ASSERT_EQ(ready, (std::vector<uint32_t>{2}));
    EXPECT_EQ(c.ready_time(2), 30);  // its dependency, not the later op 1
    ready.clear();
    c.complete(2, 40, ready);
    ASSERT_EQ(ready, (std::vector<uint32_t>{3}));
    EXPECT_EQ(c.ready_time(3), 50);  // the latest of the group
    EXPECT_EQ(c.last_done(), 50);
}

TEST(Walk, FlatProgramsAreGroupMajorAndFlatCursorsReadyAsTimedCursors) {
    // Rank 0: the program of the TimedCursor test (explicit dependencies); rank 1: send | recv, recv | copy of two
    // segments; rank 2: nothing.
    Schedule s(Collective::allgather, 3, 2, 2, 0);
    RankBuilder a(s, 0), b(s, 1);
    a.calc(1);
    a.calc(1);
    const uint32_t after0[] = {0};
    a.calc(1, after0);
    a.fence().calc(1);
    b.send(0, 7, {in(0), in(1)});
    b.fence().recv(0, 0, {out(0)});
    b.recv(0, 1, {out(1)});
    b.fence().copy({in(0), in(1)}, {out(0), out(1)});
    const FlatPrograms f(s);
    // Group-major: rank 0's group 0 (head + 3 ops), rank 1's group 0 (head + 1), then rank 0's group 1, rank 1's
    // group 1, then rank 1's group 2.
    EXPECT_EQ(f.first(0), 0u);
    EXPECT_EQ(f.first(1), 4u);
    EXPECT_EQ(f.first(2), FlatPrograms::kEnd);
    EXPECT_EQ(f.head(0).next, 6u);
    EXPECT_EQ(f.head(4).next, 8u);
    EXPECT_EQ(f.head(8).next, 11u);
    EXPECT_EQ(f.head(11).next, FlatPrograms::kEnd);
    EXPECT_EQ(f.head(8).count, 2u);
    EXPECT_EQ(f.op_index(8, 10), 2u);
    EXPECT_EQ(f.op(5).kind, OpKind::send);
    EXPECT_EQ(f.op(5).tag(), 7);
    EXPECT_EQ(f.units(1, 4, 5), 2u);   // two blocks sent
    EXPECT_EQ(f.units(1, 11, 12), 2u);  // the copy's two source blocks

    FlatCursors<int64_t> c(s, f);
    std::vector<uint32_t> ready;
    c.start(0, ready);  // through its TimedCursor: the ops free of dependencies
    EXPECT_EQ(ready, (std::vector<uint32_t>{1, 2}));
    ready.clear();
    c.complete(0, 2, 50, ready);
    EXPECT_TRUE(ready.empty());
    c.complete(0, 1, 30, ready);
    ASSERT_EQ(ready, (std::vector<uint32_t>{3}));
    EXPECT_EQ(c.ready_time(0, 3), 30);
    ready.clear();
    c.complete(0, 3, 40, ready);
    ASSERT_EQ(ready, (std::vector<uint32_t>{7}));
    EXPECT_EQ(c.ready_time(0, 7), 50);
    EXPECT_FALSE(c.finished(0));
    ready.clear();
    c.complete(0, 7, 60, ready);
    EXPECT_TRUE(c.finished(0));

    c.start(1, ready);  // without dependencies: whole groups
    EXPECT_EQ(ready, (std::vector<uint32_t>{5}));
    ready.clear();
    c.complete(1, 5, 10, ready);
    EXPECT_EQ(ready, (std::vector<uint32_t>{9, 10}));
    EXPECT_EQ(c.ready_time(1, 9), 10);
    EXPECT_EQ(c.remaining(1), 2u);
    ready.clear();
    c.complete(1, 10, 25, ready);
    c.complete(1, 9, 20, ready);
    EXPECT_EQ(ready, (std::vector<uint32_t>{12}));
    EXPECT_EQ(c.ready_time(1, 12), 25);
    c.complete(1, 12, 30, ready);
    EXPECT_TRUE(c.finished(1));
    EXPECT_TRUE(c.finished(2));
}

using Ops = std::vector<std::pair<int, uint32_t>>;

TEST(Barriers, TheNthBarrierOpOfEveryRankMeetsInProgramOrderNotPostOrder) {
    // Rank 0: copy, barrier (op 1), barrier (op 2); rank 1: barrier (op 0), | copy, barrier (op 2).
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    RankBuilder a(s, 0), b(s, 1);
    a.copy({in(0)}, {out(0)});
    a.barrier();
    a.barrier();
    b.barrier();
    b.fence().copy({in(0)}, {out(1)});
    b.barrier();
    BarrierRendezvous<int64_t> meet(s);
    EXPECT_FALSE(meet.post(0, 2, 30));  // rank 0's second barrier, posted first
    EXPECT_FALSE(meet.post(0, 1, 20));
    const auto first = meet.post(1, 0, 10);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->ops, (Ops{{0, 1}, {1, 0}}));
    EXPECT_EQ(first->latest, 20);
    const auto second = meet.post(1, 2, 25);
    ASSERT_TRUE(second);
    EXPECT_EQ(second->ops, (Ops{{0, 2}, {1, 2}}));
    EXPECT_EQ(second->latest, 30);
    BarrierOrdinals ordinal;
    EXPECT_EQ(ordinal.of(s, 0, 2), 1u);
    EXPECT_EQ(ordinal.of(s, 1, 2), 1u);
    EXPECT_EQ(ordinal.of(s, 1, 0), 0u);
}

// Rank 0 posts both of its barrier ops at once (one group, no dependency); rank 1 posts its second only after
// its first barrier: every backend meets rank 0's second barrier op with rank 1's second, so both ranks finish at
// two barrier times (50 us each).
TEST(Barriers, EveryBackendMeetsTheNthBarrierWithTheNth) {
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    RankBuilder a(s, 0), b(s, 1);
    a.barrier();
    a.barrier();
    b.barrier();
    b.fence().barrier();
    Walk w(s, default_job());
    Log log;
    EXPECT_TRUE(w.run(log));
    EXPECT_EQ(log.events, (std::vector<std::string>{"open 0 0 2", "open 1 0 1", "post 0 0", "post 0 1", "post 1 0",
                                                    "barrier 2", "open 1 1 2", "post 1 1", "barrier 2"}));
    const auto model = parse_model("hockney:alpha=1us,beta=1ns/B,barrier=50us");
    const Topology full = Topology::parse("full:2");
    EXPECT_NEAR(estimate(s, full, *model, 0).time_s, 100e-6, 1e-15);
    for (const sim::Fidelity f : {sim::Fidelity::loggp, sim::Fidelity::flow, sim::Fidelity::packet}) {
        sim::SimOptions opt;
        opt.fidelity = f;
        const sim::SimResult r = sim::simulate(s, full, *model, sim::parse_net_params(""), opt);
        ASSERT_EQ(r.rank_time_s.size(), 2u);
        for (const double t : r.rank_time_s) EXPECT_NEAR(t, 100e-6, 0.5e-12) << sim::to_string(f);
    }
}

TEST(Walk, BlockBytesDividesTheSizeAmongTheBlocksAndIgnoresItForABarrier) {
    EXPECT_EQ(block_bytes(Schedule(Collective::allreduce, 4, 8, 8, 0), 1024, "estimate"), 128);
    EXPECT_EQ(block_bytes(Schedule(Collective::barrier, 4, 1, 1, 0), 1024, "estimate"), 0);
    try {
        block_bytes(Schedule(Collective::barrier, 4, 1, 1, 0), -1, "simulate");
        ADD_FAILURE() << "a negative size was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "simulate: size -1.000000 bytes is invalid (allowed: >= 0)");
    }
}

TEST(Walk, DescribeOpNamesTheRankTheOpAndItsPeer) {
    const Schedule s = channels();
    EXPECT_EQ(describe_op(s, 0, 1), "rank 0 op 1 (send to 1 tag 1)");
    EXPECT_EQ(describe_op(s, 1, 2), "rank 1 op 2 (recv from 0 tag 0)");
    Schedule b(Collective::barrier, 1, 1, 1, 0);
    RankBuilder r(b, 0);
    r.calc(1);
    r.barrier();
    EXPECT_EQ(describe_op(b, 0, 1), "rank 0 op 1 (barrier)");
}

}  // namespace
}  // namespace collplan
