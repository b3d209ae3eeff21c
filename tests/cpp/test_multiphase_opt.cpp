// The optimal multiphase partition against brute force over every integer partition of d <= 16 for many random
// parameter sets; the evaluation bound 2 (sqrt(d) + 1); the threshold table (lower hull) against brute force;
// the equi-partition theorem; the default iPSC/860 model.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "collplan/algorithms/alltoall/multiphase_opt.hpp"

namespace collplan {
namespace {

// Log-uniform random parameters spanning startup-bound to bandwidth-bound regimes, with and without shuffle and
// barrier costs.
CircuitCosts random_costs(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(0, 1);
    auto logu = [&](double lo, double hi) { return std::pow(10.0, lo + (hi - lo) * u(rng)); };
    CircuitCosts c;
    c.lambda_s = logu(-7, -3);
    c.tau_s_per_byte = logu(-11, -5);
    c.delta_s = u(rng) < 0.3 ? 0 : c.lambda_s * logu(-2, 0.5);
    c.rho_s_per_byte = u(rng) < 0.3 ? 0 : c.tau_s_per_byte * logu(-1, 1);
    c.barrier_s = u(rng) < 0.3 ? 0 : logu(-6, -2);
    return c;
}

struct Best {
    double cost;
    std::vector<int> partition;
};

Best brute_force(const CircuitCosts& c, int d, double m, const std::vector<std::vector<int>>& parts) {
    Best b{INFINITY, {}};
    for (const auto& p : parts) {
        const double t = multiphase_cost_s(c, d, p, m);
        if (t < b.cost) b = {t, p};
    }
    return b;
}

bool is_equi(const std::vector<int>& p) {
    const auto [lo, hi] = std::minmax_element(p.begin(), p.end());
    return p.empty() || *hi - *lo <= 1;
}

TEST(MultiphaseOpt, OptimalPartitionMatchesBruteForceForEveryDUpTo16) {
    std::mt19937_64 rng(12345);
    std::uniform_real_distribution<double> u(0, 1);
    int checked = 0;
    for (int d = 1; d <= 16; ++d) {
        const auto parts = integer_partitions(d);
        const int bound = static_cast<int>(std::floor(2 * (std::sqrt(d) + 1)));
        for (int trial = 0; trial < 600; ++trial) {
            const CircuitCosts c = random_costs(rng);
            // block sizes around the interesting region (lambda / tau / 2^(d/2)) and far from it
            const double m = (c.lambda_s / c.tau_s_per_byte) * std::pow(2.0, -d / 2.0) * std::pow(10.0, -3 + 6 * u(rng));
            const Best bf = brute_force(c, d, m, parts);
            const PartitionChoice got = optimal_partition(c, d, m);
            ASSERT_LE(got.cost_s, bf.cost * (1 + 1e-12)) << "d=" << d << " m=" << m << " got "
                                                          << format_partition(got.partition) << " brute force "
                                                          << format_partition(bf.partition);
            EXPECT_NEAR(got.cost_s, multiphase_cost_s(c, d, got.partition, m), 1e-15 + 1e-12 * got.cost_s);
            EXPECT_EQ(std::accumulate(got.partition.begin(), got.partition.end(), 0), d);
            EXPECT_TRUE(is_equi(got.partition));
            EXPECT_LE(got.evaluations, bound) << "d=" << d;
            // Theorem 1: some optimum is an equi-partition
            double best_equi = INFINITY;
            for (int k = 1; k <= d; ++k) best_equi = std::min(best_equi, multiphase_cost_s(c, d, equi_partition(d, k), m));
            EXPECT_LE(best_equi, bf.cost * (1 + 1e-12));
            ++checked;
        }
    }
    EXPECT_EQ(checked, 16 * 600);
}

TEST(MultiphaseOpt, EvaluationsStayWithinTheBoundForLargeCubes) {
    std::mt19937_64 rng(777);
    std::uniform_real_distribution<double> u(0, 1);
    for (int d : {20, 25, 30, 40, 50, 62}) {
        for (int trial = 0; trial < 300; ++trial) {
            const CircuitCosts c = random_costs(rng);
            const double m = (c.lambda_s / c.tau_s_per_byte) * std::pow(2.0, -d / 2.0) * std::pow(10.0, -3 + 6 * u(rng));
            const PartitionChoice got = optimal_partition(c, d, m);
            double best = INFINITY;
            for (int k = 1; k <= d; ++k) best = std::min(best, multiphase_cost_s(c, d, equi_partition(d, k), m));
            EXPECT_LE(got.cost_s, best * (1 + 1e-12)) << "d=" << d;
            EXPECT_LE(got.evaluations, 2 * (std::sqrt(d) + 1)) << "d=" << d;
        }
    }
}

TEST(MultiphaseOpt, ThresholdTableIsTheLowerHull) {
    std::mt19937_64 rng(99);
    std::uniform_real_distribution<double> u(0, 1);
    for (int d = 1; d <= 16; ++d) {
        const auto parts = integer_partitions(d);
        for (int trial = 0; trial < 150; ++trial) {
            const CircuitCosts c = random_costs(rng);
            const auto table = threshold_table(c, d);
            ASSERT_FALSE(table.empty());
            EXPECT_EQ(table.front().m_from_bytes, 0.0);
            EXPECT_LE(table.size(), static_cast<size_t>(d));
            for (size_t i = 1; i < table.size(); ++i) EXPECT_GT(table[i].m_from_bytes, table[i - 1].m_from_bytes);
            const double scale = (c.lambda_s / c.tau_s_per_byte) * std::pow(2.0, -d / 2.0);
            for (int probe = 0; probe < 20; ++probe) {
                const double m = probe == 0 ? 0.0 : scale * std::pow(10.0, -3 + 6 * u(rng));
                const double chosen = multiphase_cost_s(c, d, partition_for(table, m), m);
                EXPECT_LE(chosen, brute_force(c, d, m, parts).cost * (1 + 1e-9)) << "d=" << d << " m=" << m;
            }
        }
    }
}

TEST(MultiphaseOpt, TheIpsc860DefaultAndItsHull) {
    for (int d : {5, 6}) {
        const CircuitCosts c = ipsc860_costs(d);
        EXPECT_DOUBLE_EQ(c.lambda_s, 177.5e-6);
        EXPECT_DOUBLE_EQ(c.delta_s, 10.3e-6 * d);
        EXPECT_DOUBLE_EQ(c.barrier_s, 150e-6 * d);
        // the same costs from the circuit model spec (lambda + delta folded together)
        const auto model = parse_model("circuit:lambda=177.5us,tau=0.394us/B,delta=" + std::to_string(10.3 * d) +
                                       "us,rho=0.54us/B,q=150us");
        const CircuitCosts fromspec = circuit_costs(*model, d);
        EXPECT_NEAR(fromspec.lambda_s + fromspec.delta_s, c.lambda_s + c.delta_s, 1e-15);
        EXPECT_DOUBLE_EQ(fromspec.tau_s_per_byte, c.tau_s_per_byte);
        EXPECT_DOUBLE_EQ(fromspec.rho_s_per_byte, c.rho_s_per_byte);
        EXPECT_NEAR(fromspec.barrier_s, c.barrier_s, 1e-15);
        // sec. 3: with more phases the equi-partition lines have larger slopes and smaller intercepts. The
        // intercepts decrease only while the start-ups saved outweigh one more barrier Q(d): with Q(d) = 150 us d
        // they grow again from k = 3 (d = 5) or 4 (d = 6) on; without the barrier the claim holds for every k.
        CircuitCosts no_q = c;
        no_q.barrier_s = 0;
        for (int k = 1; k < d; ++k) {
            const auto a = equi_partition(d, k), b = equi_partition(d, k + 1);
            EXPECT_GT(multiphase_cost_s(no_q, d, a, 0), multiphase_cost_s(no_q, d, b, 0)) << k;
            EXPECT_LT(multiphase_cost_s(c, d, a, 1) - multiphase_cost_s(c, d, a, 0),
                      multiphase_cost_s(c, d, b, 1) - multiphase_cost_s(c, d, b, 0)) << k;
        }
        EXPECT_GT(multiphase_cost_s(c, d, equi_partition(d, d), 0), multiphase_cost_s(c, d, equi_partition(d, 2), 0));
        // large blocks: one phase (Direct Exchange plus a shuffle) is optimal
        EXPECT_EQ(threshold_table(c, d).back().partition, std::vector<int>{d});
    }
    EXPECT_EQ(optimal_partition(ipsc860_costs(5), 5, 32).partition, (std::vector<int>{2, 3}));
    EXPECT_EQ(optimal_partition(ipsc860_costs(6), 6, 32).partition, (std::vector<int>{3, 3}));
}

TEST(MultiphaseOpt, LemmaOneLimitsAndHelpers) {
    const CircuitCosts c = ipsc860_costs(6);
    // no s*: huge blocks make one phase best everywhere
    EXPECT_TRUE(std::isinf(multiphase_s_star(c, 6, 1e9)));
    EXPECT_EQ(optimal_partition(c, 6, 1e9).partition, std::vector<int>{6});
    // zero-byte blocks and no barrier cost: start-ups dominate, Standard Exchange is optimal
    CircuitCosts free_sync = c;
    free_sync.barrier_s = 0;
    EXPECT_EQ(optimal_partition(free_sync, 6, 0).partition, std::vector<int>(6, 1));
    EXPECT_TRUE(optimal_partition(c, 0, 10).partition.empty());
    EXPECT_EQ(optimal_partition(c, 1, 10).partition, std::vector<int>{1});
    EXPECT_EQ(equi_partition(7, 3), (std::vector<int>{2, 2, 3}));
    EXPECT_THROW(equi_partition(3, 4), Error);
    EXPECT_EQ(integer_partitions(16).size(), 231u);
    EXPECT_EQ(integer_partitions(5).size(), 7u);
    EXPECT_EQ(parse_partition("2,3"), (std::vector<int>{2, 3}));
    EXPECT_EQ(parse_partition("1+1+4"), (std::vector<int>{1, 1, 4}));
    EXPECT_EQ(format_partition(std::vector<int>{3, 3}), "3,3");
    for (const char* bad : {"", "2,", "0,5", "a", "2,-3"}) EXPECT_THROW(parse_partition(bad), Error) << bad;
    EXPECT_THROW(optimal_partition(c, 6, -1), Error);
    EXPECT_THROW(ipsc860_costs(63), Error);
    EXPECT_THROW(circuit_costs("nonsense", 3), Error);
}

}  // namespace
}  // namespace collplan
