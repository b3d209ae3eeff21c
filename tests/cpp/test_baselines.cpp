// Baseline algorithms of production MPI libraries: every one verified for P = 1..40, plus structural checks
// (rounds, messages and blocks per rank) derived from each algorithm's closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/topology/topology.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

constexpr int kMaxP = 40;

Schedule make(const std::string& name, int P, const std::map<std::string, std::string>& params = {}) {
    return make_schedule(name, P, Topology::full(P), params);
}

bool is_pow2(int P) { return P > 0 && (P & (P - 1)) == 0; }
int floor_pow2(int P) {
    int q = 1;
    while (q * 2 <= P) q *= 2;
    return q;
}
int ceil_log(int base, int P) {  // smallest R with base^R >= P
    int R = 0;
    for (long long x = 1; x < P; x *= base) ++R;
    return R;
}

// Per-rank counts derived from the program.
struct Counts {
    int groups = 0;        // dependency groups (fences + 1)
    int comm_groups = 0;   // groups holding at least one send or recv
    int sends = 0, recvs = 0;
    uint64_t sent_units = 0;
    std::set<int> peers;   // ranks sent to
};

Counts counts(const Schedule& s, int r) {
    Counts c;
    bool comm_in_group = false;
    for (uint32_t i = 0; i < s.num_ops(r); ++i) {
        const OpView v = s.op(r, i);
        if (i == 0 || v.op.fence()) {
            ++c.groups;
            comm_in_group = false;
        }
        const bool comm = v.op.kind == OpKind::send || v.op.kind == OpKind::recv;
        if (comm && !comm_in_group) ++c.comm_groups, comm_in_group = true;
        if (v.op.kind == OpKind::send) ++c.sends, c.sent_units += v.units, c.peers.insert(v.op.peer);
        if (v.op.kind == OpKind::recv) ++c.recvs;
    }
    return c;
}

void expect_verified(const Schedule& s, const VerifyOptions& o = {}) {
    const VerifyResult v = verify(s, o);
    EXPECT_TRUE(v.ok) << s.algorithm << " P=" << s.ranks() << " " << s.params
                      << (o.commutative ? "" : " (non-commutative)") << ": " << v.reason << ": " << v.message;
}

VerifyOptions noncommutative() {
    VerifyOptions o;
    o.commutative = false;
    return o;
}

TEST(Baselines, AllRegisteredUnderTheirNames) {
    for (const char* name : {"allgather/recursive_doubling", "allgather/bruck", "alltoall/pairwise", "alltoall/bruck",
                             "allreduce/recursive_doubling", "allreduce/ring", "allreduce/rabenseifner",
                             "barrier/dissemination"})
        EXPECT_EQ(Registry::get().find(name).name, name);
}

// ------------------------------------------------------------------------------------------------ allgather

TEST(Baselines, AllgatherRecursiveDoubling) {
    for (int P = 1; P <= kMaxP; ++P) {
        if (!is_pow2(P)) {
            try {
                make("allgather/recursive_doubling", P);
                ADD_FAILURE() << "P=" << P << " accepted";
            } catch (const Error& e) {
                EXPECT_NE(std::string(e.what()).find("P=" + std::to_string(P) + " is not a power of two"),
                          std::string::npos) << e.what();
            }
            continue;
        }
        const Schedule s = make("allgather/recursive_doubling", P);
        expect_verified(s);
        const int d = ceil_log(2, P);
        for (int r = 0; r < P; ++r) {
            const Counts c = counts(s, r);
            EXPECT_EQ(c.comm_groups, d) << "P=" << P;
            EXPECT_EQ(c.sends, d);
            EXPECT_EQ(c.sent_units, static_cast<uint64_t>(P - 1));
        }
    }
}

TEST(Baselines, AllgatherBruck) {
    for (int P = 1; P <= kMaxP; ++P) {
        const Schedule s = make("allgather/bruck", P);
        expect_verified(s);
        for (int r = 0; r < P; ++r) {
            const Counts c = counts(s, r);
            EXPECT_EQ(c.comm_groups, ceil_log(2, P)) << "P=" << P;
            EXPECT_EQ(c.sends, ceil_log(2, P));
            EXPECT_EQ(c.sent_units, static_cast<uint64_t>(P - 1)) << "P=" << P;
        }
    }
}

// ------------------------------------------------------------------------------------------------ alltoall

TEST(Baselines, AlltoallPairwise) {
    for (int P = 1; P <= kMaxP; ++P) {
        const Schedule s = make("alltoall/pairwise", P);
        expect_verified(s);
        for (int r = 0; r < P; ++r) {
            const Counts c = counts(s, r);
            EXPECT_EQ(c.groups, std::max(1, P - 1)) << "P=" << P;
            EXPECT_EQ(c.sends, P - 1);
            EXPECT_EQ(c.sent_units, static_cast<uint64_t>(P - 1));
            EXPECT_EQ(c.peers.size(), static_cast<size_t>(P - 1));  // every other rank exactly once
        }
    }
}

TEST(Baselines, AlltoallPairwiseLargeIsCompact) {
    const int P = 1024;
    const Schedule s = make("alltoall/pairwise", P);
    EXPECT_EQ(s.total_ops(), static_cast<size_t>(P) * (2 * P - 1));
    // ops 20 bytes, one segment of 8 bytes per send/recv (two for the copy): exactly reserved.
    EXPECT_LE(s.memory_bytes(), static_cast<size_t>(P) * (2 * P) * 28 + static_cast<size_t>(P) * 200);
}

// Blocks a rank sends in radix-k Bruck: every block j travels once per nonzero base-k digit of j.
uint64_t bruck_blocks(int P, int k) {
    uint64_t n = 0;
    for (int j = 1; j < P; ++j)
        for (int x = j; x > 0; x /= k) n += (x % k) != 0;
    return n;
}

// Messages per rank: one per (digit position x, digit value z >= 1) that some j < P has.
int bruck_messages(int P, int k) {
    std::set<std::pair<int, int>> used;
    for (int j = 1; j < P; ++j)
        for (int x = j, pos = 0; x > 0; x /= k, ++pos)
            if (x % k) used.insert({pos, x % k});
    return static_cast<int>(used.size());
}

TEST(Baselines, AlltoallBruck) {
    for (int k : {2, 3, 4, 5, 7, 64}) {
        for (int P = 1; P <= kMaxP; ++P) {
            const Schedule s = make("alltoall/bruck", P, {{"k", std::to_string(k)}});
            expect_verified(s);
            for (int r = 0; r < P; ++r) {
                const Counts c = counts(s, r);
                EXPECT_EQ(c.sends, bruck_messages(P, k)) << "P=" << P << " k=" << k;
                EXPECT_EQ(c.comm_groups, bruck_messages(P, k));
                EXPECT_EQ(c.sent_units, bruck_blocks(P, k)) << "P=" << P << " k=" << k;
            }
        }
    }
}

TEST(Baselines, AlltoallBruckPowersOfTheRadix) {
    for (auto [k, P] : {std::pair{3, 3}, {3, 9}, {3, 27}, {3, 81}, {5, 5}, {5, 25}, {5, 125}, {2, 64}}) {
        const Schedule s = make("alltoall/bruck", P, {{"k", std::to_string(k)}});
        int d = 0;
        for (int x = 1; x < P; x *= k) ++d;
        for (int r = 0; r < P; ++r) EXPECT_EQ(counts(s, r).sends, d * (k - 1)) << "P=" << P << " k=" << k;
        if (P <= 27) expect_verified(s);
    }
}

// ------------------------------------------------------------------------------------------------ allreduce

TEST(Baselines, AllreduceRecursiveDoubling) {
    for (int P = 1; P <= kMaxP; ++P) {
        const Schedule s = make("allreduce/recursive_doubling", P);
        EXPECT_FALSE(s.needs_commutative);
        EXPECT_EQ(s.blocks(Buf::in), 1u);
        expect_verified(s);
        expect_verified(s, noncommutative());
        const int d = ceil_log(2, floor_pow2(P)), rem = P - floor_pow2(P);
        for (int r = 0; r < P; ++r) {
            const Counts c = counts(s, r);
            const int expect = r < 2 * rem ? (r % 2 == 0 ? 1 : d + 1) : d;  // absorbers: d exchanges + result back
            EXPECT_EQ(c.sends, expect) << "P=" << P << " r=" << r;
        }
    }
}

TEST(Baselines, AllreduceRing) {
    for (int P = 1; P <= kMaxP; ++P) {
        const Schedule s = make("allreduce/ring", P);
        EXPECT_TRUE(s.needs_commutative);
        EXPECT_EQ(s.blocks(Buf::in), static_cast<uint32_t>(P));
        expect_verified(s);
        if (P >= 2) EXPECT_FALSE(verify(s, noncommutative()).ok) << "P=" << P;  // the declaration is needed
        for (int r = 0; r < P; ++r) {
            const Counts c = counts(s, r);
            EXPECT_EQ(c.comm_groups, 2 * (P - 1)) << "P=" << P;
            EXPECT_EQ(c.sends, 2 * (P - 1));
            EXPECT_EQ(c.sent_units, static_cast<uint64_t>(2 * (P - 1)));
        }
    }
}

TEST(Baselines, AllreduceRabenseifner) {
    for (int P = 1; P <= kMaxP; ++P) {
        const Schedule s = make("allreduce/rabenseifner", P);
        const int Pp = floor_pow2(P), rem = P - Pp, d = ceil_log(2, Pp);
        EXPECT_FALSE(s.needs_commutative);
        EXPECT_EQ(s.blocks(Buf::in), static_cast<uint32_t>(Pp));
        expect_verified(s);
        expect_verified(s, noncommutative());
        for (int r = 0; r < P; ++r) {
            const Counts c = counts(s, r);
            if (r < 2 * rem && r % 2 == 0) {
                EXPECT_EQ(c.sends, 1);
                EXPECT_EQ(c.sent_units, static_cast<uint64_t>(Pp));
                continue;
            }
            const bool absorbs = r < 2 * rem;
            EXPECT_EQ(c.comm_groups, 2 * d + (absorbs ? 2 : 0)) << "P=" << P << " r=" << r;
            EXPECT_EQ(c.sent_units, static_cast<uint64_t>(2 * (Pp - 1) + (absorbs ? Pp : 0))) << "P=" << P;
        }
    }
}

// ------------------------------------------------------------------------------------------------ barrier

TEST(Baselines, BarrierDissemination) {
    for (int n : {1, 2, 3, 4, 7, 64}) {
        for (int P = 1; P <= kMaxP; ++P) {
            const Schedule s = make("barrier/dissemination", P, {{"n", std::to_string(n)}});
            expect_verified(s);
            const int R = ceil_log(n + 1, P);
            for (int r = 0; r < P; ++r) {
                const Counts c = counts(s, r);
                EXPECT_EQ(c.groups, R) << "P=" << P << " n=" << n;
                EXPECT_EQ(c.sends, c.recvs);
                EXPECT_LE(c.sends, n * R);
                EXPECT_EQ(c.sent_units, 0u);
                EXPECT_EQ(c.peers.count(r), 0u);
            }
        }
    }
}

TEST(Baselines, BarrierDisseminationFullRoundsWhenPIsAPower) {
    for (auto [n, P] : {std::pair{1, 32}, {2, 27}, {3, 16}, {4, 25}}) {
        const Schedule s = make("barrier/dissemination", P, {{"n", std::to_string(n)}});
        const int R = ceil_log(n + 1, P);
        for (int r = 0; r < P; ++r) EXPECT_EQ(counts(s, r).sends, n * R) << "P=" << P << " n=" << n;
    }
}

TEST(Baselines, BarrierDisseminationNeedsItsLastRound) {
    // Drop the last round's messages (every rank's last group): some rank may then leave early.
    for (int P : {2, 5, 9, 17}) {
        Schedule s = make("barrier/dissemination", P, {{"n", "2"}});
        for (int r = 0; r < P; ++r) {
            RankProgram& prog = s.program_mut(r);
            size_t last = prog.ops.size() - 1;
            while (!prog.ops[last].fence() && last > 0) --last;
            prog.ops.resize(last);
        }
        EXPECT_FALSE(verify(s).ok) << "P=" << P;
    }
}

}  // namespace
}  // namespace collplan
