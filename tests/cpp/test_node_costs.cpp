// What calibrate measures on a node beyond LogGP (docs/models.md): eager and rendezvous (the model keys eager and
// rndv, "Eager and rendezvous") -- a message of more than eager bytes arrives rndv later -- and the cost of a local
// call (reduce_call, copy_call, "Local copies and reductions") -- each reduce or copy op pays one call on top of its
// bytes. Both hold alike in the estimate, the loggp simulator and the flow simulator; without the keys nothing
// changes.
#include <gtest/gtest.h>

#include <string>

#include "evaluators.hpp"

namespace collplan {
namespace {

const std::string kLogGP = "loggp:L=0.5us,o=0.2us,g=0.1us,G=0.1ns/B,gamma=0.05ns/B,rho=0.02ns/B,cpu=1";
constexpr double kRndv = 2e-6;

// The time of a collective on P ranks of `size` bytes by one of the three evaluators.
double time_of(const std::string& how, const std::string& algorithm, int P, double size, const std::string& extra) {
    return evaluated_time(how, algorithm, P, kLogGP + extra, size);
}

class Rendezvous : public ::testing::TestWithParam<std::string> {};

TEST_P(Rendezvous, OnlyMessagesAboveEagerPayTheSynchronisation) {
    // recursive doubling on 4 ranks: 2 dependent rounds of one message of the whole vector each
    const std::string a = "allgather/recursive_doubling";  // rounds of 1 and 2 blocks: 4 KiB and 8 KiB at 4 KiB
    const std::string keys = ",eager=6KiB,rndv=2us";
    EXPECT_DOUBLE_EQ(time_of(GetParam(), a, 4, 1024, keys), time_of(GetParam(), a, 4, 1024, ""));  // 1 and 2 KiB: eager
    // at 4 KiB per block the second round's 8 KiB message goes by rendezvous, the first's 4 KiB does not
    EXPECT_NEAR(time_of(GetParam(), a, 4, 4096, keys) - time_of(GetParam(), a, 4, 4096, ""), kRndv, 1e-12);
    // at 8 KiB both rounds do
    EXPECT_NEAR(time_of(GetParam(), a, 4, 8192, keys) - time_of(GetParam(), a, 4, 8192, ""), 2 * kRndv, 1e-12);
}

TEST_P(Rendezvous, ConcurrentSynchronisationsOverlap) {
    // the root of a linear bcast sends 3 rendezvous messages at once: in the estimate and the loggp simulator they
    // synchronise together, so the whole costs one rndv more, not three (the ports are booked as before, the data
    // follows the synchronisation); the flow simulator adds rndv to each message's latency, which its one port
    // pays message after message
    const double with = time_of(GetParam(), "bcast/linear", 4, 65536, ",eager=4KiB,rndv=2us");
    const double without = time_of(GetParam(), "bcast/linear", 4, 65536, "");
    EXPECT_NEAR(with - without, (GetParam() == "flow" ? 3 : 1) * kRndv, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Evaluators, Rendezvous, ::testing::Values("estimate", "loggp", "flow"));

TEST(Rendezvous, KeysRoundTripAndAreChecked) {
    const auto m = parse_model(kLogGP + ",eager=4KiB,rndv=1.5us");
    EXPECT_EQ(m->eager_bytes, 4096);
    EXPECT_DOUBLE_EQ(m->rndv_s, 1.5e-6);
    EXPECT_EQ(parse_model(m->spec())->spec(), m->spec());
    EXPECT_NE(m->spec().find("eager=4096B"), std::string::npos);
    EXPECT_DOUBLE_EQ(m->handshake_s(4096), 0);
    EXPECT_DOUBLE_EQ(m->handshake_s(4097), 1.5e-6);
    EXPECT_EQ(parse_model(kLogGP)->spec().find("rndv"), std::string::npos);  // absent unless given
    // rndv without eager: every message that carries data synchronises
    EXPECT_DOUBLE_EQ(parse_model("hockney:alpha=1us,beta=1ns/B,rndv=1us")->handshake_s(1), 1e-6);
    EXPECT_THROW(parse_model(kLogGP + ",eager=0B"), Error);
    EXPECT_THROW(parse_model(kLogGP + ",rndv=fast"), Error);
}

class CallCosts : public ::testing::TestWithParam<std::string> {};

TEST_P(CallCosts, FewerCallsForTheSameBytesCostLess) {
    // reduce_scatter_block on 16 ranks: n-way dissemination (n = 1) reduces block by block (15 calls), recursive
    // halving one contiguous half per round (4 calls); the same messages, the same bytes reduced
    const std::string nway = "reduce_scatter_block/nway_dissemination";
    const std::string halving = "reduce_scatter_block/recursive_halving";
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
