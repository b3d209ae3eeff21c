// Ranks that share a host (the model keys host_beta and host_ranks, docs/models.md "Ranks that share a host"): the
// estimate, the loggp simulator and the flow simulator each bound a host's messages by its channel, and change
// nothing where the channel is never the bottleneck or no message stays on one host.
#include <gtest/gtest.h>

#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/sim/simulate.hpp"
#include "evaluators.hpp"

namespace collplan {
namespace {

const std::string kHockney = "hockney:alpha=2us,beta=1ns/B";
constexpr double kAlpha = 2e-6, kBeta = 1e-9, kM = 1e6;  // 1 MB per block: the channel's time dominates alpha

// The time of the ring allgather on 4 ranks (3 rounds, 4 messages of kM bytes each) by one of the three.
double ring_time(const std::string& how, const std::string& extra) {
    return evaluated_time(how, "allgather/ring", 4, kHockney + extra, kM);
}

class HostSharing : public ::testing::TestWithParam<std::string> {};

TEST_P(HostSharing, AFastChannelChangesNothing) {
    // 4 messages at once through a channel 8x faster than a pair: never the bottleneck
    const double alone = ring_time(GetParam(), "");
    EXPECT_DOUBLE_EQ(ring_time(GetParam(), ",host_beta=0.125ns/B"), alone);
    EXPECT_NEAR(alone, 3 * (kAlpha + kM * kBeta), 1e-8);  // loggp: (m - 1) G per message
}

TEST_P(HostSharing, ASlowChannelBoundsTheHostsBytes) {
    // 12 messages of kM bytes, all on one host: at least 12 kM host_beta; the channel is never idle while a
    // message waits for it but for each round's start-up, so at most that plus a message time per round
    const double h = 2e-9, t = ring_time(GetParam(), ",host_beta=2ns/B");
    EXPECT_GE(t, 12 * kM * h * (1 - 1e-9));
    EXPECT_LE(t, 12 * kM * h + 3 * (kAlpha + kM * kBeta));
}

TEST_P(HostSharing, OnlyMessagesWithinAHostUseItsChannel) {
    // one rank per host: no message shares one (as without the key)
    EXPECT_DOUBLE_EQ(ring_time(GetParam(), ",host_beta=2ns/B,host_ranks=1"), ring_time(GetParam(), ""));
    // two ranks per host: 0->1 and 2->3 stay on a host, 1->2 and 3->0 leave it; each host carries 3 kM bytes
    const double h = 2e-9, t = ring_time(GetParam(), ",host_beta=2ns/B,host_ranks=2");
    EXPECT_GE(t, 3 * kM * h * (1 - 1e-9));
    EXPECT_LT(t, ring_time(GetParam(), ",host_beta=2ns/B"));
}

INSTANTIATE_TEST_SUITE_P(Evaluators, HostSharing, ::testing::Values("estimate", "loggp", "flow"));

TEST(HostSharing, OneMessageWaitsForTheChannel) {
    const Topology full = Topology::parse("full:2");
    const Schedule s = make_schedule("bcast/linear", 2, full);
    // alone: alpha + m beta; through a channel of 3 ns/B: alpha + m * 3 ns (the max-rate model's start-up plus
    // the slower of the pair and the channel)
    EXPECT_NEAR(estimate(s, full, *parse_model(kHockney), kM).time_s, kAlpha + kM * kBeta, 1e-12);
    EXPECT_NEAR(estimate(s, full, *parse_model(kHockney + ",host_beta=3ns/B"), kM).time_s, kAlpha + kM * 3e-9,
                1e-12);
}

TEST(LogGPCpu, TheEstimateMeetsTheLogGPSimulatorOnSmallMessages) {
    // The 16-core node's calibration (o = 160 ns > g = 102 ns): with cpu=1 the estimate charges a rank's o per
    // message on its CPU as the loggp simulator (LogGOPSim) does, so n-way dissemination's 3 messages per round
    // cost what the simulator says; without it they overlap on the ports and look cheaper than recursive doubling.
    const std::string m = "loggp:L=34.67ns,o=160.5ns,g=102ns,G=62.6ps/B,O=34.45ps/B,gamma=24ps/B,rho=14ps/B";
    const Topology full = Topology::parse("full:16");
    const Schedule nway = make_schedule("allreduce/nway_dissemination", 16, full, {{"n", "3"}});
    const Schedule rd = make_schedule("allreduce/recursive_doubling", 16, full);
    sim::SimOptions opt;
    opt.fidelity = sim::Fidelity::loggp;
    opt.size_bytes = 8;
    const double simulated = sim::simulate(nway, full, *parse_model(m), sim::parse_net_params(""), opt).time_s;
    const double with_cpu = estimate(nway, full, *parse_model(m + ",cpu=1"), 8).time_s;
    EXPECT_NEAR(with_cpu, simulated, 0.01 * simulated);
    EXPECT_GT(with_cpu, estimate(rd, full, *parse_model(m + ",cpu=1"), 8).time_s);  // recursive doubling wins
    EXPECT_LT(estimate(nway, full, *parse_model(m), 8).time_s, estimate(rd, full, *parse_model(m), 8).time_s);
}

TEST(HostSharing, KeysParseAndRoundTrip) {
    const auto m = parse_model("loggp:L=1us,o=1us,g=1us,G=1ns/B,host_beta=25ps/B,host_ranks=16");
    EXPECT_EQ(m->host_ranks, 16);
    EXPECT_DOUBLE_EQ(m->host_beta, 25e-12);
    EXPECT_EQ(parse_model(m->spec())->spec(), m->spec());
    EXPECT_EQ(m->host_of(15), 0);
    EXPECT_EQ(m->host_of(16), 1);
    EXPECT_TRUE(m->shares_host(3, 9));
    EXPECT_FALSE(m->shares_host(15, 16));
    EXPECT_FALSE(parse_model(kHockney)->shares_host(0, 1));  // no channel: nothing is shared
    for (const char* bad : {"host_ranks=0", "host_ranks=-2", "host_ranks=3000000000", "host_beta=fast"}) {
        try {
            parse_model(kHockney + "," + bad);
            ADD_FAILURE() << bad << " accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("host_"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace collplan
