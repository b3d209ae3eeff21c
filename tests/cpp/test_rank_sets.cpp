// RankSets (verify/rank_sets.hpp) against std::set<uint32_t> on random operations: every id names exactly the set it
// should, equal sets share an id, and the first common / absent / missing ranks are the lowest ones.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "collplan/schedule/symmetry.hpp"
#include "collplan/verify/rank_sets.hpp"

using namespace collplan;

namespace {

std::set<uint32_t> members(const RankSets& S, uint32_t id) {
    std::set<uint32_t> out;
    uint32_t last_hi = 0;
    bool first = true;
    for (const RankRange& r : S.ranges(id)) {
        EXPECT_LT(r.lo, r.hi);
        if (!first) EXPECT_LT(last_hi, r.lo) << "intervals must be sorted and not touch";
        first = false, last_hi = r.hi;
        for (uint32_t x = r.lo; x < r.hi; ++x) out.insert(x);
    }
    return out;
}

uint32_t lowest_or_none(const std::set<uint32_t>& s) { return s.empty() ? RankSets::kNone : *s.begin(); }

}  // namespace

TEST(RankSets, RandomOperationsMatchPlainSets) {
    for (const uint32_t P : {1u, 2u, 7u, 64u, 100u}) {
        RankSets S(static_cast<int>(P));
        std::mt19937 rng(P);
        std::vector<std::pair<uint32_t, std::set<uint32_t>>> pool{{RankSets::kEmpty, {}}};
        for (uint32_t r = 0; r < P; ++r) pool.push_back({S.single(r), {r}});
        for (int step = 0; step < 3000; ++step) {
            const auto& [a, A] = pool[rng() % pool.size()];
            const auto& [b, B] = pool[rng() % pool.size()];
            std::set<uint32_t> both, uni = A, diff = A, absent;
            for (uint32_t x : B) (A.count(x) ? both : absent).insert(x), uni.insert(x), diff.erase(x);
            uint32_t common = 0, missing = 0;
            const uint32_t u = S.unite(a, b, &common), d = S.remove(a, b, &missing);
            ASSERT_EQ(members(S, u), uni);
            ASSERT_EQ(members(S, d), diff);
            ASSERT_EQ(common, lowest_or_none(both));
            ASSERT_EQ(missing, lowest_or_none(absent));
            std::set<uint32_t> out;
            for (uint32_t x = 0; x < P; ++x)
                if (!uni.count(x)) out.insert(x);
            ASSERT_EQ(S.first_missing(u), lowest_or_none(out));
            const uint32_t probe = P ? static_cast<uint32_t>(rng() % P) : 0;
            ASSERT_EQ(S.contains(u, probe), uni.count(probe) == 1);
            auto u2 = u, d2 = d;  // copies: push_back may move the pool
            auto uni2 = uni, diff2 = diff;
            pool.push_back({u2, uni2});
            pool.push_back({d2, diff2});
        }
        // hash-consing: every distinct set has one id
        std::map<std::set<uint32_t>, uint32_t> id_of;
        for (const auto& [id, m] : pool) {
            const auto [it, fresh] = id_of.emplace(m, id);
            ASSERT_EQ(it->second, id) << "two ids for one set";
        }
    }
}

TEST(RankSets, RangesAndIntervalsAreKeptWhole) {
    RankSets S(1000);
    const uint32_t a = S.range(0, 500), b = S.range(500, 1000);
    const uint32_t all = S.unite(a, b);
    ASSERT_EQ(S.ranges(all).size(), 1u);
    EXPECT_EQ(S.ranges(all)[0], (RankRange{0, 1000}));
    EXPECT_EQ(S.first_missing(all), RankSets::kNone);
    EXPECT_EQ(S.range(0, 1000), all);
    EXPECT_EQ(S.range(7, 7), RankSets::kEmpty);
    uint32_t common = 0;
    S.unite(S.range(10, 20), S.range(15, 30), &common);
    EXPECT_EQ(common, 15u);
}

TEST(RankSets, MovedIsTheGroupsImage) {
    for (const Symmetry sym : {Symmetry::cyclic, Symmetry::xor_}) {
        const uint32_t P = 64;
        RankSets S(static_cast<int>(P));
        std::mt19937 rng(7);
        for (int t = 0; t < 500; ++t) {
            std::set<uint32_t> m;
            uint32_t id = RankSets::kEmpty;
            const int n = static_cast<int>(rng() % 5);
            for (int k = 0; k < n; ++k) {
                const uint32_t lo = static_cast<uint32_t>(rng() % P), hi = lo + 1 + static_cast<uint32_t>(rng() % (P - lo));
                id = S.unite(id, S.range(lo, hi));
                for (uint32_t x = lo; x < hi; ++x) m.insert(x);
            }
            const uint32_t j = static_cast<uint32_t>(rng() % P);
            std::set<uint32_t> want;
            for (uint32_t x : m) want.insert(static_cast<uint32_t>(act(sym, static_cast<int>(P), static_cast<int>(j), static_cast<int>(x))));
            ASSERT_EQ(members(S, S.moved(id, sym, j)), want) << to_string(sym) << " j=" << j;
        }
    }
}
