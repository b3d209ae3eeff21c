// The alltoallv family: matrices, the phased plans, every static schedule verified on random and edge-case
// matrices (its own sweep: `verify --all` has no matrix), RS_N's phase count, pieces in the verifier, DRS_N.
#include <gtest/gtest.h>

#include <cmath>

#include "collplan/algorithms/alltoallv/unstructured_common.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/algorithms/alltoallv/drs_n_sim.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

using alltoallv::MatrixStats;
using Matrix = std::vector<uint64_t>;

std::vector<std::string> static_algorithms() {
    std::vector<std::string> out;
    for (const Algorithm* a : Registry::get().for_collective(Collective::alltoallv)) out.push_back(a->name);
    return out;
}

// make_schedule refuses a seed for algorithms without one: fall back to no parameters.
Schedule any_schedule(const std::string& name, int P, const Matrix& m, const std::string& seed = "1") {
    const Algorithm& a = Registry::get().find(name);
    std::map<std::string, std::string> params;
    for (const ParamSpec& p : a.params)
        if (p.name == "seed") params["seed"] = seed;
    return make_schedule(name, P, Topology::full(P), params, m);
}

void expect_all_verify_any(const Matrix& m, int P, const std::string& what) {
    for (const std::string& name : static_algorithms())
        for (const char* seed : {"1", "7"}) {
            const VerifyResult v = verify(any_schedule(name, P, m, seed));
            ASSERT_TRUE(v.ok) << name << " P=" << P << " " << what << " seed " << seed << ": " << v.reason << ": " << v.message;
        }
}

TEST(Alltoallv, FamilyIsRegistered) {
    const auto names = static_algorithms();
    for (const char* n : {"alltoallv/async", "alltoallv/linear_permutation", "alltoallv/random_schedule",
                          "alltoallv/random_schedule_heap", "alltoallv/edge_coloring"})
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(Alltoallv, TestSetsHaveExactlyDPerRowAndColumn) {
    for (int P : {1, 2, 5, 32, 33})
        for (int d : {0, 1, 4, P / 2, P - 1}) {
            if (d < 0 || d > P - 1) continue;
            const Matrix m = alltoallv::testset_uniform(P, d, 3);
            const MatrixStats st = alltoallv::matrix_stats(m, P);
            EXPECT_EQ(st.max_sent, d) << P << " " << d;
            EXPECT_EQ(st.min_sent, d) << P << " " << d;
            EXPECT_EQ(st.max_recv, d) << P << " " << d;
            EXPECT_EQ(st.min_recv, d) << P << " " << d;
            for (int i = 0; i < P; ++i) EXPECT_EQ(m[static_cast<size_t>(i) * P + i], 0u);
        }
    const Matrix a = alltoallv::testset_nonuniform(32, 4, 32, 9), b = alltoallv::testset_nonuniform(32, 4, 32, 9);
    EXPECT_EQ(a, b);
    const MatrixStats st = alltoallv::matrix_stats(a, 32);
    EXPECT_GE(st.min_len, 1u);
    EXPECT_LE(st.max_len, 32u);
    EXPECT_GT(st.max_len, st.min_len);
    EXPECT_NE(alltoallv::testset_uniform(32, 4, 1), alltoallv::testset_uniform(32, 4, 2));
    EXPECT_THROW(alltoallv::testset_uniform(8, 8, 1), Error);
    EXPECT_THROW(alltoallv::testset_uniform(8, -1, 1), Error);
}

TEST(Alltoallv, EveryStaticScheduleVerifiesOnRandomMatrices) {
    for (int P : {1, 2, 3, 5, 8, 13, 16, 31, 32, 64})
        for (uint64_t seed : {1, 2, 3}) {
            const int d = std::min(P - 1, static_cast<int>(seed) * 3);
            expect_all_verify_any(alltoallv::testset_uniform(P, d, seed), P, "uniform d=" + std::to_string(d));
            expect_all_verify_any(alltoallv::testset_nonuniform(P, d, 32, seed), P, "nonuniform d=" + std::to_string(d));
        }
    expect_all_verify_any(alltoallv::testset_nonuniform(64, 63, 32, 5), 64, "dense");
}

TEST(Alltoallv, EdgeCaseMatrices) {
    for (int P : {1, 2, 7, 16}) {
        expect_all_verify_any(Matrix(static_cast<size_t>(P) * P, 0), P, "empty");
        Matrix single(static_cast<size_t>(P) * P, 0);
        if (P > 1) single[static_cast<size_t>(P - 1) * P + 0] = 1000;  // one message
        expect_all_verify_any(single, P, "single message");
        Matrix diag(static_cast<size_t>(P) * P, 0);
        for (int i = 0; i < P; ++i) diag[static_cast<size_t>(i) * P + i] = 3;  // local copies only
        expect_all_verify_any(diag, P, "diagonal");
    }
    // Empty rows and columns, one heavy row, a star into one node (Table 2's pattern), sizes varying widely.
    const int P = 12;
    Matrix m(P * P, 0);
    for (int j = 1; j < P; ++j) m[0 * P + j] = 1 + 100 * j;
    for (int i = 1; i < P; i += 2) m[static_cast<size_t>(i) * P + (P - 1)] = static_cast<uint64_t>(i);
    m[5 * P + 5] = 2;
    expect_all_verify_any(m, P, "irregular");
}

TEST(Alltoallv, PlansArePartialPermutationsAndEdgeColoringIsOptimal) {
    for (int P : {4, 6, 32}) {
        const Matrix m = alltoallv::testset_nonuniform(P, std::min(P - 1, 5), 40, 11);
        const MatrixStats st = alltoallv::matrix_stats(m, P);
        for (const auto& plan : {alltoallv::plan_linear_permutation(m, P), alltoallv::plan_random(m, P, 1),
                                 alltoallv::plan_random_heap(m, P, 1, 150), alltoallv::plan_random_heap(m, P, 1, 0),
                                 alltoallv::plan_edge_coloring(m, P)})
            EXPECT_EQ(alltoallv::check_plan(plan, m, P), "") << P;
        EXPECT_EQ(alltoallv::plan_edge_coloring(m, P).phases.size(), static_cast<size_t>(st.degree));
        EXPECT_EQ(alltoallv::plan_linear_permutation(m, P).phases.size(), static_cast<size_t>(P - 1));
        EXPECT_GE(alltoallv::plan_random(m, P, 1).phases.size(), static_cast<size_t>(st.degree));
    }
    // check_plan catches a phase that is not a partial permutation and a pair that is short.
    const Matrix m{0, 1, 1, 0, 0, 0, 0, 0, 0};
    alltoallv::PhasePlan bad;
    bad.phases = {{{0, 1, 1}, {0, 2, 1}}};
    EXPECT_NE(alltoallv::check_plan(bad, m, 3).find("not a partial permutation"), std::string::npos);
    bad.phases = {{{0, 1, 1}}};
    EXPECT_NE(alltoallv::check_plan(bad, m, 3).find("pair 0->2"), std::string::npos);
}

TEST(Alltoallv, LinearPermutationPartners) {
    Matrix m(8 * 8, 1);
    const auto plan = alltoallv::plan_linear_permutation(m, 8);
    for (size_t k = 0; k < plan.phases.size(); ++k)
        for (const auto& x : plan.phases[k]) EXPECT_EQ(x.dst, x.src ^ static_cast<int>(k + 1));
    Matrix m6(6 * 6, 1);
    const auto plan6 = alltoallv::plan_linear_permutation(m6, 6);
    for (size_t k = 0; k < plan6.phases.size(); ++k)
        for (const auto& x : plan6.phases[k]) EXPECT_EQ(x.dst, (x.src + static_cast<int>(k + 1)) % 6);
}

// The paper: RS_N needs about d + log d phases (5.54, 18.56, 34.2 for d = 4, 16, 31 on 32 nodes, 50 matrices each).
TEST(Alltoallv, RandomSchedulePhasesNearDPlusLogD) {
    const int P = 32, trials = 20;
    const std::map<int, double> paper{{4, 5.54}, {16, 18.56}, {31, 34.2}};
    for (const auto& [d, measured] : paper) {
        double sum = 0;
        for (int t = 0; t < trials; ++t) {
            const Matrix m = alltoallv::testset_uniform(P, d, 100 + static_cast<uint64_t>(t));
            sum += static_cast<double>(alltoallv::plan_random(m, P, static_cast<uint64_t>(t)).phases.size());
        }
        const double avg = sum / trials, bound = d + std::log2(d);
        EXPECT_GE(avg, d) << d;
        EXPECT_LE(avg, bound + 1.0) << "d=" << d << ": " << avg << " phases on average, d + log2 d = " << bound;
        EXPECT_NEAR(avg, measured, 0.25 * measured) << "d=" << d << " paper " << measured;
    }
}

TEST(Alltoallv, SameSeedSameScheduleOtherSeedOther) {
    const Matrix m = alltoallv::testset_nonuniform(16, 6, 32, 4);
    for (const char* name : {"alltoallv/async", "alltoallv/random_schedule", "alltoallv/random_schedule_heap"}) {
        EXPECT_TRUE(any_schedule(name, 16, m, "5") == any_schedule(name, 16, m, "5")) << name;
        EXPECT_FALSE(any_schedule(name, 16, m, "5") == any_schedule(name, 16, m, "6")) << name;
    }
}

TEST(Alltoallv, HeapCutoffSplitsLargeMessages) {
    Matrix m(4 * 4, 0);
    m[0 * 4 + 1] = 100, m[2 * 4 + 3] = 2, m[3 * 4 + 2] = 2, m[1 * 4 + 0] = 2;
    const auto split = alltoallv::plan_random_heap(m, 4, 1, 100);  // mean length 26.5: 100 is cut at 27
    const auto whole = alltoallv::plan_random_heap(m, 4, 1, 0);
    EXPECT_EQ(whole.phases.size(), 1u);
    EXPECT_GT(split.phases.size(), 1u);
    EXPECT_EQ(split.phases[0].size(), 4u);
    for (const auto& x : split.phases[0]) EXPECT_LE(x.units, 27u);
    EXPECT_EQ(alltoallv::check_plan(split, m, 4), "");
    const Schedule s = make_schedule("alltoallv/random_schedule_heap", 4, Topology::full(4), {{"cutoff_pct", "100"}}, m);
    EXPECT_TRUE(verify(s).ok) << verify(s).message;
}

// Pieces in the verifier: a block may travel in parts that add up to its units, never more, never fewer.
Schedule two_pieces(uint64_t first, uint64_t second) {
    Schedule s(Collective::alltoallv, 2, 2, 2, 0);
    s.counts = {0, 10, 0, 0};
    RankBuilder a(s, 0), b(s, 1);
    const std::vector<Segment> in1{Segment(Buf::in, 1, 1)}, out0{Segment(Buf::out, 0, 1)};
    a.send(1, 0, in1, {}, first);
    a.fence().send(1, 0, in1, {}, second);
    b.recv(0, 0, out0, {}, first);
    b.fence().recv(0, 0, out0, {}, second);
    return s;
}

TEST(Alltoallv, VerifierAcceptsPiecesThatAddUp) {
    EXPECT_TRUE(verify(two_pieces(4, 6)).ok) << verify(two_pieces(4, 6)).message;
    EXPECT_EQ(verify(two_pieces(4, 5)).reason, "incomplete-block");
    EXPECT_EQ(verify(two_pieces(4, 7)).reason, "size-mismatch");
    EXPECT_EQ(verify(two_pieces(11, 6)).reason, "size-mismatch");  // a piece larger than the block
}

TEST(Alltoallv, MatrixOfWrongSizeIsRefused) {
    try {
        make_schedule("alltoallv/async", 4, Topology::full(4), {}, Matrix(15, 1));
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("4x4"), std::string::npos) << e.what();
    }
}

// ---------------------------------------------------------------------------------------------- DRS_N
TEST(Drsn, SingleMessageCostsTwoActiveMessagesPlusTheMessage) {
    Matrix m(4 * 4, 0);
    m[1 * 4 + 2] = 100;
    const auto model = parse_model("hockney:alpha=10us,beta=1ns/B");
    const DrsnResult r = simulate_drs_n(m, 4, Topology::full(4), *model, 8.0, DrsnOptions{1, 2e-6, 0, 0});
    EXPECT_NEAR(r.time_s, 2 * 2e-6 + 10e-6 + 800e-9, 1e-12);
    EXPECT_EQ(r.inquiries, 1u);
    EXPECT_EQ(r.refused, 0u);
    EXPECT_EQ(simulate_drs_n(Matrix(16, 0), 4, Topology::full(4), *model, 8.0).time_s, 0.0);
}

TEST(Drsn, ReceiverTakesOneMessageAtATime) {
    // Table 2's pattern: d senders to one receiver. The flag serialises them: d message times, plus handshakes.
    const int P = 8, d = 7;
    Matrix m(P * P, 0);
    for (int i = 0; i < d; ++i) m[static_cast<size_t>(i) * P + (P - 1)] = 1;
    const auto model = parse_model("hockney:alpha=50us,beta=0.1us/B");
    const DrsnResult r = simulate_drs_n(m, P, Topology::full(P), *model, 1024, DrsnOptions{1, 1e-6, 0, 0});
    const double T = 50e-6 + 1024 * 0.1e-6;
    EXPECT_GE(r.time_s, d * T);
    EXPECT_LE(r.time_s, d * (T + 4e-6) + 4e-6);
    EXPECT_GT(r.refused, 0u);
    const DrsnResult again = simulate_drs_n(m, P, Topology::full(P), *model, 1024, DrsnOptions{1, 1e-6, 0, 0});
    EXPECT_EQ(again.time_s, r.time_s);
    EXPECT_EQ(again.inquiries, r.inquiries);
}

TEST(Drsn, RandomMatricesFinishAndAreBoundedBelowByTheBusiestNode) {
    const auto model = parse_model("loggp:L=5us,o=20us,g=40us,G=0.15us/B");
    for (uint64_t seed : {1, 2, 3}) {
        const Matrix m = alltoallv::testset_nonuniform(32, 8, 32, seed);
        const MatrixStats st = alltoallv::matrix_stats(m, 32);
        const DrsnResult r = simulate_drs_n(m, 32, Topology::full(32), *model, 64, DrsnOptions{seed, 3e-6, 1e-6, 0});
        const double busiest = static_cast<double>(std::max(st.max_row_units, st.max_col_units)) * 64 * 0.15e-6;
        EXPECT_GE(r.time_s, busiest);
        EXPECT_GE(r.inquiries, st.messages);
        EXPECT_EQ(r.rank_done_s.size(), 32u);
    }
    EXPECT_THROW(simulate_drs_n(Matrix(16, 0), 4, Topology::full(5), *model, 1), Error);
    EXPECT_THROW(simulate_drs_n(Matrix(15, 0), 4, Topology::full(4), *model, 1), Error);
    EXPECT_THROW(simulate_drs_n(Matrix(16, 0), 4, Topology::full(4), *model, 1, DrsnOptions{1, 0, 0, 0}), Error);
}

TEST(Alltoallv, EstimateSerialisesTheReceiver) {
    // d senders to one node, ports = 1: the receiver takes them one after the other.
    const int P = 5;
    Matrix m(P * P, 0);
    for (int i = 0; i < P - 1; ++i) m[static_cast<size_t>(i) * P + (P - 1)] = 1;
    const Schedule s = make_schedule("alltoallv/async", P, Topology::full(P), {}, m);
    const auto model = parse_model("hockney:alpha=10us,beta=1ns/B");
    EXPECT_NEAR(estimate(s, Topology::full(P), *model, 1000).time_s, (P - 1) * (10e-6 + 1e-6), 1e-12);
}

}  // namespace
}  // namespace collplan
