// The collective descriptors (schedule/collective.hpp) and what the verifier makes of them: every item a rank must
// end with comes from somewhere, the rooted collectives' buffers exist only where MPI says, and schedules that
// break a postcondition are rejected with the reason that names it.
#include <gtest/gtest.h>

#include <map>

#include "collplan/algorithms/registry.hpp"
#include "collplan/schedule/text.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

Segment seg(Buf b, uint32_t first, uint32_t n = 1) { return Segment(b, first, n); }

void expect_reject(const Schedule& s, const std::string& reason) {
    const VerifyResult v = verify(s);
    EXPECT_FALSE(v.ok) << to_string(s.collective());
    EXPECT_EQ(v.reason, reason) << v.message;
}

TEST(Collective, NamesRoundTripAndUnknownOnesListTheAllowed) {
    for (Collective c : kCollectives) EXPECT_EQ(parse_collective(to_string(c)), c);
    try {
        parse_collective("scan");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("reduce_scatter_block"), std::string::npos) << e.what();
    }
}

// Non-reductions: every item some rank must end with starts at exactly one place. Reductions: every rank starts
// with every item exactly once (its contribution x_r), so a complete result exists.
TEST(Collective, EveryRequiredItemStartsSomewhere) {
    for (Collective c : kCollectives)
        for (int P : {1, 2, 5, 8})
            for (int root : {0, P - 1})
                for (uint32_t S : {1u, 3u}) {
                    const CollShape sh{P, root, S};
                    const uint64_t n = item_count(c, sh);
                    std::vector<int> starts(n, 0);
                    std::vector<std::vector<int>> per_rank(static_cast<size_t>(P), std::vector<int>(n, 0));
                    for (int r = 0; r < P; ++r)
                        for (Buf b : {Buf::in, Buf::out})
                            for (uint32_t k = 0; k < buffer_blocks(c, sh, r, b); ++k)
                                if (const int64_t it = initial_item(c, sh, r, b, k); it != kNoItem) {
                                    ASSERT_LT(static_cast<uint64_t>(it), n) << to_string(c);
                                    ++starts[static_cast<size_t>(it)], ++per_rank[static_cast<size_t>(r)][static_cast<size_t>(it)];
                                }
                    bool any_final = false;
                    for (int r = 0; r < P; ++r)
                        for (uint32_t k = 0; k < buffer_blocks(c, sh, r, Buf::out); ++k) {
                            const int64_t it = final_item(c, sh, r, k);
                            if (it == kNoItem) continue;
                            any_final = true;
                            ASSERT_LT(static_cast<uint64_t>(it), n) << to_string(c);
                            if (describe(c).reduction)
                                for (int q = 0; q < P; ++q)
                                    EXPECT_EQ(per_rank[static_cast<size_t>(q)][static_cast<size_t>(it)], 1)
                                        << to_string(c) << " P=" << P << " rank " << q << " item " << it;
                            else
                                EXPECT_EQ(starts[static_cast<size_t>(it)], 1) << to_string(c) << " P=" << P << " item " << it;
                        }
                    EXPECT_EQ(any_final, c != Collective::barrier) << to_string(c);
                    EXPECT_NO_THROW(check_blocks(c, P, [&] {
                        uint32_t m = 0;
                        for (int r = 0; r < P; ++r) m = std::max(m, buffer_blocks(c, sh, r, Buf::in));
                        return m;
                    }(), [&] {
                        uint32_t m = 0;
                        for (int r = 0; r < P; ++r) m = std::max(m, buffer_blocks(c, sh, r, Buf::out));
                        return m;
                    }())) << to_string(c);
                }
}

TEST(Collective, RootedBuffersExistOnlyWhereMpiSays) {
    const CollShape sh{4, 2, 1};
    EXPECT_EQ(buffer_blocks(Collective::gather, sh, 2, Buf::out), 4u);
    EXPECT_EQ(buffer_blocks(Collective::gather, sh, 0, Buf::out), 0u);
    EXPECT_EQ(buffer_blocks(Collective::scatter, sh, 1, Buf::in), 0u);
    EXPECT_EQ(buffer_blocks(Collective::reduce, sh, 3, Buf::out), 0u);
    EXPECT_EQ(buffer_blocks(Collective::bcast, sh, 2, Buf::in), 0u);
    EXPECT_EQ(initial_item(Collective::bcast, sh, 2, Buf::out, 0), 0);
    EXPECT_EQ(initial_item(Collective::bcast, sh, 1, Buf::out, 0), kNoItem);
    EXPECT_THROW(check_blocks(Collective::allgather, 4, 2, 6), Error);
}

// gather on 3 ranks, root 0; `bad` breaks it in one way.
Schedule gather3(const std::string& bad) {
    Schedule s(Collective::gather, 3, 1, 3, 0);
    for (int r = 0; r < 3; ++r) {
        RankBuilder b(s, r);
        if (r != 0) {
            if (bad == "non-root-writes-out" && r == 1) b.copy({seg(Buf::in, 0)}, {seg(Buf::out, 0)});
            if (bad != "lost-block" || r != 2) b.send(0, 0, {seg(Buf::in, 0)});
            continue;
        }
        b.copy({seg(Buf::in, 0)}, {seg(Buf::out, 0)});
        b.recv(1, 0, {seg(Buf::out, 1)});
        if (bad != "lost-block") b.recv(2, 0, {seg(Buf::out, bad == "swapped" ? 1u : 2u)});
    }
    return s;
}

TEST(Collective, GatherPostconditionAndRootOnlyOutput) {
    EXPECT_TRUE(verify(gather3("")).ok) << verify(gather3("")).message;
    expect_reject(gather3("non-root-writes-out"), "no-such-block");
    expect_reject(gather3("lost-block"), "wrong-result");
}

TEST(Collective, BcastNeedsEveryRankToReceive) {
    for (bool skip : {false, true}) {
        Schedule s(Collective::bcast, 3, 0, 1, 0);
        s.root = 1;
        for (int r = 0; r < 3; ++r) {
            RankBuilder b(s, r);
            if (r == 1) {
                b.send(0, 0, {seg(Buf::out, 0)});
                if (!skip) b.send(2, 0, {seg(Buf::out, 0)});
            } else if (r == 0 || !skip) {
                b.recv(1, 0, {seg(Buf::out, 0)});
            }
        }
        if (skip) expect_reject(s, "wrong-result");
        else EXPECT_TRUE(verify(s).ok) << verify(s).message;
    }
}

TEST(Collective, ReduceMissingAContributionIsCaught) {
    // root 0 combines x_0 with x_1 only; rank 2 sends nothing.
    Schedule s(Collective::reduce, 3, 1, 1, 1);
    for (int r = 0; r < 3; ++r) {
        RankBuilder b(s, r);
        if (r == 1) b.send(0, 0, {seg(Buf::in, 0)});
        if (r != 0) continue;
        b.copy({seg(Buf::in, 0)}, {seg(Buf::out, 0)});
        b.recv(1, 0, {seg(Buf::tmp, 0)});
        b.fence().reduce({seg(Buf::tmp, 0)}, {seg(Buf::out, 0)}, {}, opflag::reverse);
    }
    expect_reject(s, "missing-contribution");
}

TEST(Collective, CountsMustMatchTheCollective) {
    const Topology t = Topology::full(3);
    EXPECT_THROW(make_schedule("allgatherv/linear", 3, t, {}, std::vector<uint64_t>{1, 2}), Error);
    EXPECT_THROW(make_schedule("gather/linear", 3, t, {}, std::vector<uint64_t>{1, 2, 3}), Error);
    EXPECT_THROW(make_schedule("gather/linear", 3, t, {}, Inputs({}, 3)), Error);
    EXPECT_THROW(make_schedule("allgather/ring", 3, t, {}, Inputs({}, 1)), Error);
    // An allgatherv block sent with fewer units than its count ends incomplete.
    Schedule s = make_schedule("allgatherv/linear", 3, t, {}, std::vector<uint64_t>{2, 0, 3});
    EXPECT_TRUE(verify(s).ok) << verify(s).message;
    s.counts[0] = 5;
    expect_reject(s, "incomplete-block");  // rank 0 sends a piece of 2 of the 5 units
}

TEST(Collective, RootAndCountsSurviveTheTextForm) {
    const Schedule g = make_schedule("scatter/linear", 5, Topology::full(5), {}, Inputs({}, 3));
    const Schedule back = from_text(to_text(g));
    EXPECT_EQ(back.root, 3);
    EXPECT_TRUE(back == g);
    const Schedule v = make_schedule("reduce_scatter/linear", 4, Topology::full(4), {}, std::vector<uint64_t>{1, 0, 7, 2});
    const std::string text = to_text(v);
    EXPECT_NE(text.find("counts 1 0 7 2"), std::string::npos) << text.substr(0, 300);
    EXPECT_TRUE(from_text(text) == v);
    // Not for collectives that have no root / no per-rank counts.
    EXPECT_EQ(to_text(make_schedule("allgather/ring", 3, Topology::full(3))).find("root"), std::string::npos);
    std::string bad = to_text(make_schedule("allgather/ring", 3, Topology::full(3)));
    bad.insert(bad.find("rank 0"), "counts 1 2 3\n");
    EXPECT_THROW(from_text(bad), Error);
}

}  // namespace
}  // namespace collplan
