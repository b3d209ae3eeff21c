// reduce and reduce_scatter_block algorithms (binomial, rabenseifner, recursive_halving, pairwise, ring): the
// shapes their headers promise -- messages, rounds and blocks per rank, which variant needs commutativity --
// that the verifier sweep (test_all_algorithms.cpp) does not look at.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/topology/topology.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

Schedule make(const std::string& name, int P, int root = 0, const std::map<std::string, std::string>& params = {}) {
    return make_schedule(name, P, Topology::full(P), params, Inputs({}, root));
}

int floor_pow2(int P) {
    int q = 1;
    while (q * 2 <= P) q *= 2;
    return q;
}
int ceil_log2(int P) {
    int d = 0;
    while ((1 << d) < P) ++d;
    return d;
}

struct Counts {
    int sends = 0, recvs = 0, comm_groups = 0;
    uint64_t sent_units = 0, recv_units = 0;
    std::set<int> peers;  // ranks sent to
};

Counts counts(const Schedule& s, int r) {
    Counts c;
    bool comm_in_group = false;
    for (uint32_t i = 0; i < s.num_ops(r); ++i) {
        const OpView v = s.op(r, i);
        if (i == 0 || v.op.fence()) comm_in_group = false;
        const bool comm = v.op.kind == OpKind::send || v.op.kind == OpKind::recv;
        if (comm && !comm_in_group) ++c.comm_groups, comm_in_group = true;
        if (v.op.kind == OpKind::send) ++c.sends, c.sent_units += v.units, c.peers.insert(v.op.peer);
        if (v.op.kind == OpKind::recv) ++c.recvs, c.recv_units += v.units;
    }
    return c;
}

int total_sends(const Schedule& s) {
    int n = 0;
    for (int r = 0; r < s.ranks(); ++r) n += counts(s, r).sends;
    return n;
}

void expect_verified(const Schedule& s, bool commutative) {
    VerifyOptions o;
    o.commutative = commutative;
    const VerifyResult v = verify(s, o);
    EXPECT_TRUE(v.ok) << s.subject() << " root " << s.root << " " << s.params << ": " << v.reason << ": " << v.message;
}

// ------------------------------------------------------------------------------------------------ reduce

TEST(ReduceBinomial, RootReceivesOncePerRoundAndEveryOtherRankSendsOnce) {
    for (int P : {1, 2, 3, 5, 8, 13, 16, 33}) {
        for (int root : {0, P / 2, P - 1}) {
            for (int relative : {0, 1}) {
                const Schedule s = make("reduce/binomial", P, root, {{"relative", std::to_string(relative)}});
                const bool forwarded = relative == 0 && root != 0;
                EXPECT_EQ(s.needs_commutative, relative == 1 && root != 0);
                EXPECT_EQ(total_sends(s), P - 1 + (forwarded ? 1 : 0)) << "P=" << P << " root=" << root;
                const int tree_root = forwarded ? 0 : root;
                EXPECT_EQ(counts(s, tree_root).recvs, ceil_log2(P)) << "P=" << P << " root=" << root;
                if (forwarded) {  // the root: its children in rank 0's tree, then the result from 0
                    int children = 0;
                    for (int mask = 1; mask < P && !(root & mask); mask <<= 1) children += (root | mask) < P;
                    EXPECT_EQ(counts(s, root).recvs, children + 1) << "P=" << P << " root=" << root;
                }
                expect_verified(s, true);
                if (!s.needs_commutative) expect_verified(s, false);
            }
        }
    }
}

TEST(ReduceBinomial, RelativeTreeFailsForNonCommutativeOperations) {
    // The reason needs_commutative is set: rank order is lost when the tree wraps around P-1 -> 0.
    const Schedule s = make("reduce/binomial", 6, 3, {{"relative", "1"}});
    ASSERT_TRUE(s.needs_commutative);
    VerifyOptions o;
    o.commutative = false;
    EXPECT_FALSE(verify(s, o).ok);
}

TEST(ReduceBinomial, BadParameterIsRefused) {
    EXPECT_THROW(make("reduce/binomial", 4, 0, {{"relative", "2"}}), Error);
    EXPECT_THROW(make("reduce/binomial", 4, 0, {{"radix", "2"}}), Error);
}

TEST(ReduceRabenseifner, BlocksAndRoundsAtTheRoot) {
    for (int P : {1, 2, 4, 8, 16, 32}) {  // P = P': halving and gather each log2 P rounds, S - 1 blocks in
        for (int root : {0, P / 2, P - 1}) {
            const Schedule s = make("reduce/rabenseifner", P, root);
            EXPECT_EQ(s.blocks(Buf::in), static_cast<uint32_t>(P));
            const Counts c = counts(s, root);
            EXPECT_EQ(c.recvs, 2 * ceil_log2(P)) << "P=" << P;
            EXPECT_EQ(c.recv_units, 2u * (P - 1)) << "P=" << P;
            EXPECT_EQ(c.comm_groups, 2 * ceil_log2(P)) << "P=" << P;
        }
    }
}

TEST(ReduceRabenseifner, NonPowersOfTwoFoldAndARootThatSitsOutTakesItsPartnersPlace) {
    for (int P : {3, 5, 6, 7, 12, 24, 40}) {
        const int Q = floor_pow2(P), rem = P - Q;
        for (int root : {0, 1, P / 2, P - 1}) {
            const Schedule s = make("reduce/rabenseifner", P, root);
            expect_verified(s, false);
            const bool sits_out = root < 2 * rem && root % 2 == 0, absorbs = root < 2 * rem && root % 2 == 1;
            const int d = ceil_log2(Q);
            const Counts c = counts(s, root);
            if (sits_out) {  // root + 1's segment, then the gather
                EXPECT_EQ(c.recvs, 1 + d) << "P=" << P << " root=" << root;
                EXPECT_EQ(c.recv_units, static_cast<uint64_t>(1 + (Q - 1))) << "P=" << P << " root=" << root;
            } else {  // (the fold's vector,) the halving, the gather
                EXPECT_EQ(c.recvs, (absorbs ? 1 : 0) + 2 * d) << "P=" << P << " root=" << root;
                EXPECT_EQ(c.recv_units, static_cast<uint64_t>((absorbs ? Q : 0) + 2 * (Q - 1)))
                    << "P=" << P << " root=" << root;
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------ reduce_scatter_block

TEST(ReduceScatterBlock, PairwiseSendsOneBlockToEveryOtherRankAndKeepsRankOrder) {
    for (int P : {1, 2, 3, 7, 16, 31}) {
        const Schedule s = make("reduce_scatter_block/pairwise", P);
        EXPECT_FALSE(s.needs_commutative);
        expect_verified(s, false);
        for (int r = 0; r < P; ++r) {
            const Counts c = counts(s, r);
            EXPECT_EQ(c.sends, P - 1);
            EXPECT_EQ(c.sent_units, static_cast<uint64_t>(P - 1));
            EXPECT_EQ(c.peers.size(), static_cast<size_t>(P - 1));
            EXPECT_EQ(c.comm_groups, P - 1);
        }
    }
}

TEST(ReduceScatterBlock, RingSendsOnlyToTheRightNeighbour) {
    for (int P : {2, 3, 8, 13}) {
        const Schedule s = make("reduce_scatter_block/ring", P);
        EXPECT_TRUE(s.needs_commutative);
        for (int r = 0; r < P; ++r) {
            const Counts c = counts(s, r);
            EXPECT_EQ(c.sends, P - 1);
            EXPECT_EQ(c.comm_groups, P - 1);
            EXPECT_EQ(c.peers, std::set<int>{(r + 1) % P});
        }
    }
}

TEST(ReduceScatterBlock, RecursiveHalvingMovesHalfOfWhatIsLeftPerRound) {
    for (int P : {2, 4, 8, 32}) {  // P = P': log2 P rounds, P/2 + P/4 + .. + 1 = P - 1 blocks sent
        const Schedule s = make("reduce_scatter_block/recursive_halving", P);
        EXPECT_TRUE(s.needs_commutative);
        for (int r = 0; r < P; ++r) {
            const Counts c = counts(s, r);
            EXPECT_EQ(c.sends, ceil_log2(P));
            EXPECT_EQ(c.sent_units, static_cast<uint64_t>(P - 1));
        }
    }
    for (int P : {3, 6, 11, 24}) {  // the fold: a sitting-out rank sends P blocks and receives its one back
        const Schedule s = make("reduce_scatter_block/recursive_halving", P);
        const int rem = P - floor_pow2(P);
        for (int r = 0; r < 2 * rem; r += 2) {
            const Counts c = counts(s, r);
            EXPECT_EQ(c.sends, 1);
            EXPECT_EQ(c.sent_units, static_cast<uint64_t>(P));
            EXPECT_EQ(c.recv_units, 1u);
            EXPECT_EQ(counts(s, r + 1).sends, ceil_log2(floor_pow2(P)) + 1);
        }
    }
}

TEST(ReduceScatterBlock, NwayDisseminationSendsEveryDistanceOnceInCeilLogRounds) {
    for (int n : {1, 2, 3, 7}) {
        for (int P : {1, 2, 3, 5, 9, 27, 48, 64}) {
            const Schedule s = make("reduce_scatter_block/nway_dissemination", P, 0, {{"n", std::to_string(n)}});
            EXPECT_TRUE(s.needs_commutative);
            int rounds = 0, messages = 0;  // round k: one message per i = 1..n with i (n+1)^k < P
            for (long long step = 1; step < P; step *= n + 1, ++rounds)
                for (int i = 1; i <= n; ++i) messages += i * step < P;
            for (int r = 0; r < P; ++r) {
                const Counts c = counts(s, r);
                EXPECT_EQ(c.comm_groups, rounds) << "n=" << n << " P=" << P;
                EXPECT_EQ(c.sends, messages) << "n=" << n << " P=" << P;
                EXPECT_EQ(c.sent_units, static_cast<uint64_t>(P - 1)) << "n=" << n << " P=" << P;
            }
        }
    }
    EXPECT_THROW(make("reduce_scatter_block/nway_dissemination", 4, 0, {{"n", "0"}}), Error);
    EXPECT_THROW(make("reduce_scatter_block/nway_dissemination", 4, 0, {{"n", "65"}}), Error);
}

}  // namespace
}  // namespace collplan
