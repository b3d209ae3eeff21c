// The cost of one local call (model keys reduce_call and copy_call, docs/models.md "Local copies and reductions"):
// each reduce or copy op pays it once on top of its bytes, in the estimate and both simulators, so that two
// schedules moving and reducing the same bytes in different numbers of calls are no longer priced the same.
#include <gtest/gtest.h>

#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/sim/simulate.hpp"

namespace collplan {
namespace {

const std::string kLogGP = "loggp:L=0.5us,o=0.2us,g=0.1us,G=0.1ns/B,gamma=0.05ns/B,rho=0.02ns/B,cpu=1";

double time_of(const std::string& how, const std::string& algorithm, int P, double size, const std::string& extra) {
    const Topology full = Topology::parse("full:" + std::to_string(P));
    const Schedule s = make_schedule(algorithm, P, full);
    const auto model = parse_model(kLogGP + extra);
    if (how == "estimate") return estimate(s, full, *model, size).time_s;
    sim::SimOptions opt;
    opt.fidelity = how == "flow" ? sim::Fidelity::flow : sim::Fidelity::loggp;
    opt.size_bytes = size;
    return sim::simulate(s, full, *model, sim::parse_net_params(""), opt).time_s;
}

class CallCosts : public ::testing::TestWithParam<std::string> {};

TEST_P(CallCosts, FewerCallsForTheSameBytesCostLess) {
    // reduce_scatter_block on 16 ranks: n-way dissemination (n = 1) reduces block by block (15 calls), recursive
    // halving one contiguous half per round (4 calls); the same messages, the same bytes reduced
    const std::string nway = "reduce_scatter_block/nway_dissemination", halving = "reduce_scatter_block/recursive_halving";
    const double size = 16 * 64;
    EXPECT_DOUBLE_EQ(time_of(GetParam(), nway, 16, size, ""), time_of(GetParam(), halving, 16, size, ""));
    const std::string call = ",reduce_call=100ns";
    EXPECT_GT(time_of(GetParam(), nway, 16, size, call), time_of(GetParam(), halving, 16, size, call) + 2e-7);
}

TEST_P(CallCosts, EachCopyPaysItsCall) {
    // a 2-rank ring allgather: one copy (its own block into place) then one exchange; the copy's call is on the path
    const double without = time_of(GetParam(), "allgather/ring", 2, 1024, "");
    EXPECT_NEAR(time_of(GetParam(), "allgather/ring", 2, 1024, ",copy_call=1us") - without, 1e-6, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Evaluators, CallCosts, ::testing::Values("estimate", "loggp", "flow"));

TEST(CallCosts, KeysAndEmptyOps) {
    const auto m = parse_model(kLogGP + ",reduce_call=60ns,copy_call=30ns");
    EXPECT_DOUBLE_EQ(m->reduce_s(0), 0);  // an op without bytes is no call
    EXPECT_DOUBLE_EQ(m->reduce_s(8), 60e-9 + 8 * 0.05e-9);
    EXPECT_DOUBLE_EQ(m->copy_s(8), 30e-9 + 8 * 0.02e-9);
    EXPECT_EQ(parse_model(m->spec())->spec(), m->spec());
    EXPECT_EQ(parse_model(kLogGP)->spec().find("_call"), std::string::npos);
}

}  // namespace
}  // namespace collplan
