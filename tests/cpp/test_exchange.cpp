// Direct, Standard and Multiphase complete exchange (Nicol & Bokhari): correctness on hypercubes d = 0..10, the
// analytic estimate of the generated schedules equals the paper's closed forms (DE sec. 2.2, SE sec. 2.3, MCE
// eq. 2), contention-free steps under e-cube routing, effective block sizes, shuffles, barriers, parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>

#include "collplan/algorithms/registry.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/algorithms/alltoall/multiphase_opt.hpp"
#include "collplan/schedule/text.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

#if defined(__SANITIZE_ADDRESS__)
// Under AddressSanitizer (Debug) the P = 512 and 1024 verifications take minutes; `make test` covers them.
constexpr int kMaxD = 8, kMaxCompositionD = 6;
#else
constexpr int kMaxD = 10, kMaxCompositionD = 7;
#endif

Schedule cube(const std::string& alg, int d, std::map<std::string, std::string> params = {}) {
    return make_schedule(alg, 1 << d, Topology::parse("hypercube:" + std::to_string(d)), params);
}

// The paper's iPSC/860 constants as a circuit model spec for dimension d (delta = 10.3 us d, Q(d) = 150 us d).
std::string ipsc860_spec(int d) {
    return "circuit:lambda=177.5us,tau=0.394us/B,delta=" + std::to_string(10.3 * d) + "us,rho=0.54us/B,q=150us";
}

std::vector<std::vector<int>> compositions(int d) {
    std::vector<std::vector<int>> out;
    for (int cuts = 0; cuts < (1 << std::max(0, d - 1)); ++cuts) {
        std::vector<int> part{1};
        for (int bit = 0; bit < d - 1; ++bit) {
            if (cuts & (1 << bit)) part.push_back(1);
            else ++part.back();
        }
        out.push_back(part);
    }
    return out;
}

// d = 0..8 with several partitions; d = 9 and 10 (P = 512, 1024: up to 2 million ops) once each.
TEST(Exchange, AllGeneratorsVerifyOnHypercubesUpTo10) {
    for (int d = 0; d <= kMaxD; ++d) {
        std::vector<std::pair<std::string, std::map<std::string, std::string>>> cases = {
            {"alltoall/direct_exchange", {}},
            {"alltoall/standard_exchange", {}},
            {"alltoall/multiphase", {{"size", "1B"}}}};
        if (d <= 8) cases.push_back({"alltoall/multiphase", {{"size", "400B"}, {"barrier", "0"}}});
        if (d >= 2 && d <= 8) cases.push_back({"alltoall/multiphase", {{"partition", std::to_string(d - 1) + ",1"}}});
        if (d >= 4 && d <= 8) cases.push_back({"alltoall/multiphase", {{"partition", "1," + std::to_string(d - 3) + ",2"}}});
        for (const auto& [alg, params] : cases) {
            const VerifyResult v = verify(cube(alg, d, params));
            EXPECT_TRUE(v.ok) << alg << " d=" << d << ": " << v.reason << ": " << v.message;
        }
    }
}

TEST(Exchange, EveryCompositionOfSmallCubesVerifies) {
    for (int d = 1; d <= kMaxCompositionD; ++d)
        for (const auto& part : compositions(d)) {
            const VerifyResult v = verify(cube("alltoall/multiphase", d, {{"partition", format_partition(part)}}));
            EXPECT_TRUE(v.ok) << format_partition(part) << ": " << v.reason << ": " << v.message;
        }
}

TEST(Exchange, EstimateEqualsThePapersClosedForms) {
    for (int d = 1; d <= 7; ++d) {
        const Topology t = Topology::parse("hypercube:" + std::to_string(d));
        const auto model = parse_model(ipsc860_spec(d));
        const CircuitCosts c = ipsc860_costs(d);
        const Schedule de = cube("alltoall/direct_exchange", d), se = cube("alltoall/standard_exchange", d);
        for (double m : {0.0, 1.0, 32.0, 100.0, 140.0, 400.0, 1024.0}) {
            EXPECT_NEAR(estimate(de, t, *model, m).time_s, direct_exchange_cost_s(c, d, m), 1e-9) << d << " " << m;
            EXPECT_NEAR(estimate(se, t, *model, m).time_s, standard_exchange_cost_s(c, d, m), 1e-9) << d << " " << m;
            // the closed forms themselves, written out as in the paper
            const double P = std::exp2(d), lam = 177.5e-6, tau = 0.394e-6, del = 10.3e-6 * d, rho = 0.54e-6;
            const double Q = 150e-6 * d;
            EXPECT_NEAR(direct_exchange_cost_s(c, d, m), (P - 1) * (lam + m * tau + del) + Q, 1e-12);
            EXPECT_NEAR(standard_exchange_cost_s(c, d, m), d * (lam + P / 2 * m * tau + del + P * m * rho + Q), 1e-12);
        }
        if (d > 6) continue;
        for (const auto& part : compositions(d)) {
            const Schedule s = cube("alltoall/multiphase", d, {{"partition", format_partition(part)}});
            for (double m : {0.0, 7.0, 100.0, 400.0})
                EXPECT_NEAR(estimate(s, t, *model, m).time_s, multiphase_cost_s(c, d, part, m), 1e-9)
                    << format_partition(part) << " m=" << m;
        }
    }
}

// e-cube routing: within one step of DE, SE or any MCE phase every directed link carries at most one message.
TEST(Exchange, StepsAreContentionFreeOnTheHypercube) {
    for (int d = 1; d <= 7; ++d) {
        const Topology t = Topology::parse("hypercube:" + std::to_string(d));
        for (const auto& [alg, params] : std::vector<std::pair<std::string, std::map<std::string, std::string>>>{
                 {"alltoall/direct_exchange", {}}, {"alltoall/standard_exchange", {}},
                 {"alltoall/multiphase", {{"size", "50B"}}}}) {
            const Schedule s = cube(alg, d, params);
            // every rank issues its k-th send in step k (barriers and fences keep the steps in lockstep)
            std::map<std::pair<size_t, int>, int> uses;  // (step, link) -> messages
            for (int r = 0; r < s.ranks(); ++r) {
                size_t step = 0;
                for (const Op& op : s.program(r).ops)
                    if (op.kind == OpKind::send) {
                        for (const Link& l : t.route(r, op.peer)) ++uses[{step, l.id}];
                        ++step;
                    }
            }
            for (const auto& [key, n] : uses) EXPECT_EQ(n, 1) << alg << " d=" << d << " step " << key.first;
        }
    }
}

TEST(Exchange, EffectiveBlocksShufflesAndBarriers) {
    const int d = 6;
    const Schedule s = cube("alltoall/multiphase", d, {{"partition", "2,4"}});
    std::vector<uint64_t> send_units, copy_units;
    int barriers = 0;
    for (uint32_t k = 0; k < s.num_ops(5); ++k) {
        const OpView v = s.op(5, k);
        if (v.op.kind == OpKind::send) send_units.push_back(v.units);
        if (v.op.kind == OpKind::copy) copy_units.push_back(v.units);
        barriers += v.op.kind == OpKind::barrier;
    }
    // phase 1 (d_1 = 2): 3 steps of 2^(6-2) = 16 blocks; phase 2 (d_2 = 4): 15 steps of 4 blocks
    std::vector<uint64_t> want(3, 16);
    want.insert(want.end(), 15, 4);
    EXPECT_EQ(send_units, want);
    EXPECT_EQ(copy_units, (std::vector<uint64_t>{64, 64}));
    EXPECT_EQ(barriers, 2);
    EXPECT_EQ(s.blocks(Buf::tmp), 128u);
    // DE: one barrier, no shuffle (only the local block is copied); barrier=0 removes the barriers
    const Schedule de = cube("alltoall/direct_exchange", 4), de0 = cube("alltoall/direct_exchange", 4, {{"barrier", "0"}});
    int de_barriers = 0, de_copy_units = 0;
    for (uint32_t k = 0; k < de.num_ops(3); ++k) {
        de_barriers += de.op(3, k).op.kind == OpKind::barrier;
        if (de.op(3, k).op.kind == OpKind::copy) de_copy_units += static_cast<int>(de.op(3, k).units);
    }
    EXPECT_EQ(de_barriers, 1);
    EXPECT_EQ(de_copy_units, 1);
    EXPECT_NE(to_goal(de, 8.0).find("dissemination barriers"), std::string::npos);  // GOAL has none: messages
    EXPECT_NO_THROW(to_goal(de0, 8.0));
    EXPECT_EQ(de0.num_ops(0), 31u);
}

TEST(Exchange, SpecialCasesOfTheFamily) {
    // partition (d) = DE + one shuffle; 1,...,1 = SE; auto picks the optimiser's choice
    const int d = 5;
    const Topology t = Topology::parse("hypercube:5");
    const auto model = parse_model(ipsc860_spec(d));
    const CircuitCosts c = ipsc860_costs(d);
    const Schedule full = cube("alltoall/multiphase", d, {{"partition", "5"}});
    EXPECT_NEAR(estimate(full, t, *model, 64).time_s, direct_exchange_cost_s(c, d, 64) + 32 * 64 * 0.54e-6, 1e-9);
    EXPECT_EQ(cube("alltoall/multiphase", d, {{"partition", "1,1,1,1,1"}}).total_ops(),
              cube("alltoall/standard_exchange", d).total_ops());
    for (double m : {1.0, 32.0, 99.0, 200.0, 400.0}) {
        const std::string size = std::to_string(static_cast<int>(m)) + "B";
        const Schedule a = cube("alltoall/multiphase", d, {{"size", size}});
        const PartitionChoice best = optimal_partition(c, d, m);
        EXPECT_NEAR(estimate(a, t, *model, m).time_s, best.cost_s, 1e-9) << size;
        EXPECT_EQ(a.params.find("partition=auto") != std::string::npos, true);
    }
    // a model spec instead of the built-in constants
    const Schedule h = cube("alltoall/multiphase", 6, {{"size", "1MiB"}, {"model", "hockney:alpha=1us,beta=1ns/B"}});
    EXPECT_TRUE(verify(h).ok);
}

TEST(Exchange, DeclinesAndRefusesCleanly) {
    EXPECT_THROW(make_schedule("alltoall/direct_exchange", 12, Topology::full(12)), Error);
    EXPECT_THROW(make_schedule("alltoall/standard_exchange", 6, Topology::full(6)), Error);
    try {
        cube("alltoall/multiphase", 5, {{"partition", "2,2"}});
        FAIL() << "2,2 accepted for d=5";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("d=5"), std::string::npos) << e.what();
    }
    EXPECT_THROW(cube("alltoall/multiphase", 5, {{"partition", "2,0,3"}}), Error);
    EXPECT_THROW(cube("alltoall/multiphase", 5, {{"partition", "2,x"}}), Error);
    EXPECT_THROW(cube("alltoall/multiphase", 5, {{"model", "circuit:lambda=1us"}}), Error);
    EXPECT_THROW(cube("alltoall/multiphase", 5, {{"size", "-3B"}}), Error);
    EXPECT_THROW(cube("alltoall/direct_exchange", 3, {{"barrier", "2"}}), Error);
}

TEST(Exchange, CandidatesAreThePartitionsOptimalInTheRange) {
    const Algorithm& a = Registry::get().find("alltoall/multiphase");
    const Topology t = Topology::parse("hypercube:6");
    const auto model = parse_model(ipsc860_spec(6));
    const auto all = candidate_params(a, {64, t, *model, 1, 400});
    const auto table = threshold_table(circuit_costs(*model, 6), 6);
    std::vector<std::string> want;
    for (size_t i = 0; i < table.size(); ++i)
        if (table[i].m_from_bytes <= 400 && (i + 1 == table.size() || table[i + 1].m_from_bytes > 1))
            want.push_back(format_partition(table[i].partition));
    ASSERT_EQ(all.size(), want.size());
    for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].at("partition"), want[i]);
    EXPECT_GE(all.size(), 2u);
    const auto small = candidate_params(a, {64, t, *model, 1, 2});
    EXPECT_EQ(small.size(), 1u);
    // algorithms without a hook: the defaults
    EXPECT_EQ(candidate_params(Registry::get().find("alltoall/pairwise"), {64, t, *model, 1, 400}).size(), 1u);
}

}  // namespace
}  // namespace collplan
