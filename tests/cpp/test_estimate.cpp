// Tests of the analytic estimate (critical path with serialised ports) and the lower bounds, against closed
// forms on hand-built schedules.
#include <gtest/gtest.h>

#include <cmath>
#include <queue>
#include <random>
#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/algorithms/lower_bounds.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/model/tie_queue.hpp"
#include "collplan/verify/sweep.hpp"

namespace collplan {
namespace {

constexpr double kAlpha = 2e-6, kBeta = 1e-9;
const std::string kHockney = "hockney:alpha=2us,beta=1ns/B";

Segment out(uint32_t b, uint32_t n = 1) { return Segment(Buf::out, b, n); }
Segment in(uint32_t b, uint32_t n = 1) { return Segment(Buf::in, b, n); }

// The ring allgather, written out by hand: copy, then P-1 fenced rounds of send right / recv left.
Schedule ring_allgather(int P) {
    Schedule s(Collective::allgather, P, 1, static_cast<uint32_t>(P), 0);
    for (int r = 0; r < P; ++r) {
        RankBuilder b(s, r);
        b.copy({in(0)}, {out(static_cast<uint32_t>(r))});
        for (int k = 0; k < P - 1; ++k) {
            b.fence();
            b.send((r + 1) % P, 0, {out(static_cast<uint32_t>((r - k + P) % P))});
            b.recv((r - 1 + P) % P, 0, {out(static_cast<uint32_t>((r - k - 1 + 2 * P) % P))});
        }
    }
    return s;
}

// send/recv of one segment with explicit units (the initializer-list overloads take no units). Callers never make
// such an op the first op of a rank: RankBuilder::add drops explicit units on op 0 (reported to the lead).
uint32_t send_units(RankBuilder& b, int peer, int tag, Segment seg, uint64_t units) {
    const Segment segs[] = {seg};
    return b.send(peer, tag, segs, {}, units);
}
uint32_t recv_units(RankBuilder& b, int peer, int tag, Segment seg, uint64_t units) {
    const Segment segs[] = {seg};
    return b.recv(peer, tag, segs, {}, units);
}

double est(const Schedule& s, const std::string& topo, const std::string& model, double bytes) {
    return estimate(s, Topology::parse(topo), *parse_model(model), bytes).time_s;
}

std::string error_of(const Schedule& s, const std::string& topo) {
    try {
        est(s, topo, kHockney, 8);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(Estimate, RingAllgatherHockney) {
    for (int P : {2, 3, 5, 8, 13}) {
        const Schedule s = ring_allgather(P);
        for (double m : {0.0, 1.0, 1000.0, 65536.0}) {
            const double expect = (P - 1) * (kAlpha + m * kBeta);
            EXPECT_NEAR(est(s, "ring:" + std::to_string(P), kHockney, m), expect, 1e-12 * expect + 1e-18)
                << "P=" << P << " m=" << m;
        }
    }
}

TEST(Estimate, RegistryRingAllgatherAndPairwise) {
    for (int P : {3, 8, 10}) {
        const Topology ring = Topology::parse("ring:" + std::to_string(P));
        const double m = 2048, expect = (P - 1) * (kAlpha + m * kBeta);
        const Schedule ag = make_schedule("allgather/ring", P, ring);
        EXPECT_NEAR(estimate(ag, ring, *parse_model(kHockney), m).time_s, expect, 1e-12 * expect);
        const Topology full = Topology::parse("full:" + std::to_string(P));
        const Schedule a2a = make_schedule("alltoall/pairwise", P, full);
        EXPECT_NEAR(estimate(a2a, full, *parse_model(kHockney), m).time_s, expect, 1e-12 * expect);
    }
}

TEST(Estimate, RingAllgatherWithCopyCost) {
    const int P = 6;
    const double m = 4096, rho = 0.5e-9;
    const double expect = m * rho + (P - 1) * (kAlpha + m * kBeta);
    EXPECT_NEAR(est(ring_allgather(P), "ring:6", kHockney + ",rho=0.5ns/B", m), expect, 1e-12 * expect);
}

TEST(Estimate, CriticalRankAndSingleRank) {
    Schedule one(Collective::allgather, 1, 1, 1, 0);
    RankBuilder(one, 0).copy({in(0)}, {out(0)});
    EXPECT_DOUBLE_EQ(est(one, "full:1", kHockney + ",rho=1ns/B", 100), 100e-9);
    // Rank 2 does extra local work after the exchange, so it finishes last.
    Schedule s(Collective::allgather, 3, 1, 3, 0);
    for (int r = 0; r < 3; ++r) RankBuilder(s, r).copy({in(0)}, {out(static_cast<uint32_t>(r))});
    RankBuilder(s, 2).calc(5);
    const Estimate e = estimate(s, Topology::parse("full:3"), *parse_model(kHockney + ",gamma=1ns/B"), 10);
    EXPECT_EQ(e.critical_rank, 2);
    EXPECT_DOUBLE_EQ(e.time_s, 5 * 10 * 1e-9);
}

// Rank 0 sends two independent messages (to 1 and 2); one port serialises them, two ports do not.
TEST(Estimate, PortsSerialiseSends) {
    Schedule s(Collective::allgather, 3, 1, 3, 0);
    RankBuilder b0(s, 0);
    b0.send(1, 0, {in(0)});
    b0.send(2, 0, {in(0)});
    RankBuilder(s, 1).recv(0, 0, {out(0)});
    RankBuilder(s, 2).recv(0, 0, {out(0)});
    const double m = 1000, T = kAlpha + m * kBeta;
    EXPECT_NEAR(est(s, "full:3", kHockney, m), 2 * T, 1e-15);
    EXPECT_NEAR(est(s, "full:3", kHockney + ",ports=2", m), T, 1e-15);
}

TEST(Estimate, ExplicitPortHintsCollide) {
    // Two ports, but both sends name port 0 (and 2 = 0 mod 2): they serialise again.
    Schedule s(Collective::allgather, 3, 1, 3, 0);
    RankBuilder b0(s, 0);
    b0.send(1, 0, {in(0)});
    b0.on_port(0);
    b0.send(2, 0, {in(0)});
    b0.on_port(2);
    RankBuilder(s, 1).recv(0, 0, {out(0)});
    RankBuilder(s, 2).recv(0, 0, {out(0)});
    const double T = kAlpha + 100 * kBeta;
    EXPECT_NEAR(est(s, "full:3", kHockney + ",ports=2", 100), 2 * T, 1e-15);
}

// Two ranks exchange a message each way in one group: duplex T, non-duplex 2T.
TEST(Estimate, NonDuplexDoublesAnExchange) {
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        b.send(1 - r, 0, {in(0)});
        b.recv(1 - r, 0, {out(static_cast<uint32_t>(1 - r))});
    }
    const double m = 5000, T = kAlpha + m * kBeta;
    EXPECT_NEAR(est(s, "full:2", kHockney, m), T, 1e-15);
    EXPECT_NEAR(est(s, "full:2", kHockney + ",duplex=0", m), 2 * T, 1e-15);
}

TEST(Estimate, ReceivesSerialiseOnOnePort) {
    // Ranks 1 and 2 both send to rank 0: its single receive port takes them one after the other.
    Schedule s(Collective::allgather, 3, 1, 3, 0);
    RankBuilder b0(s, 0);
    b0.recv(1, 0, {out(1)});
    b0.recv(2, 0, {out(2)});
    RankBuilder(s, 1).send(0, 0, {in(0)});
    RankBuilder(s, 2).send(0, 0, {in(0)});
    const double T = kAlpha + 64 * kBeta;
    EXPECT_NEAR(est(s, "full:3", kHockney, 64), 2 * T, 1e-15);
    EXPECT_NEAR(est(s, "full:3", kHockney + ",ports=2", 64), T, 1e-15);
}

TEST(Estimate, WormholeHopTerm) {
    const std::string model = "wormhole:startup=10us,flit=8B,flit_time=4ns,hop_time=100ns";
    const double m = 100, flits = std::ceil(m / 8);
    for (int to : {1, 3}) {
        Schedule s(Collective::allgather, 4, 1, 4, 0);
        RankBuilder(s, 0).send(to, 0, {in(0)});
        RankBuilder(s, to).recv(0, 0, {out(0)});
        const double expect = 10e-6 + flits * 4e-9 + to * 100e-9;  // distance on line:4 is |to - 0|
        EXPECT_NEAR(est(s, "line:4", model, m), expect, 1e-15) << "to " << to;
    }
}

TEST(Estimate, LogGPSingleMessage) {
    const double L = 3e-6, o = 1e-6, G = 0.5e-9, m = 2048;
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    RankBuilder(s, 0).send(1, 0, {in(0)});
    RankBuilder(s, 1).recv(0, 0, {out(0)});
    EXPECT_NEAR(est(s, "full:2", "loggp:L=3us,o=1us,g=4us,G=0.5ns/B", m), 2 * o + L + (m - 1) * G, 1e-15);
}

TEST(Estimate, LogGPGapBetweenSends) {
    // One port: the second send starts when the port is free again, max(g, (m-1)G) after the first.
    const double L = 3e-6, o = 1e-6, g = 4e-6, G = 0.5e-9, m = 2048;
    Schedule s(Collective::allgather, 3, 1, 3, 0);
    RankBuilder b0(s, 0);
    b0.send(1, 0, {in(0)});
    b0.send(2, 0, {in(0)});
    RankBuilder(s, 1).recv(0, 0, {out(0)});
    RankBuilder(s, 2).recv(0, 0, {out(0)});
    const double expect = std::max(g, (m - 1) * G) + 2 * o + L + (m - 1) * G;
    EXPECT_NEAR(est(s, "full:3", "loggp:L=3us,o=1us,g=4us,G=0.5ns/B", m), expect, 1e-15);
}

TEST(Estimate, LogGPCpuOverheadsTakeTurns) {
    // Two ranks each send 3 messages to the other at once, o = 1us > g = 0.1us, L = 1us, 1-byte messages (no G).
    // Without cpu: the sends are g apart, the last receive done at 2g + 2o + L = 3.2us. With cpu=1 (LogGOPSim): a
    // rank's CPU sends at 0, 1, 2us; the messages are there at 2, 3, 4us, but the CPU is busy sending until 3us,
    // so the receive overheads run 3-4, 4-5, 5-6us: 6us, as the loggp simulator has it.
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        for (int k = 0; k < 3; ++k) b.send(1 - r, k, {in(0)});
        for (int k = 0; k < 3; ++k) b.recv(1 - r, k, {out(static_cast<uint32_t>(1 - r))});
    }
    const std::string m = "loggp:L=1us,o=1us,g=0.1us,G=1ns/B";
    EXPECT_NEAR(est(s, "full:2", m, 1), 3.2e-6, 1e-15);
    EXPECT_NEAR(est(s, "full:2", m + ",cpu=1", 1), 6e-6, 1e-15);
    EXPECT_EQ(parse_model(m + ",cpu=1")->spec(), "loggp:L=1us,o=1us,g=100ns,G=1ns/B,cpu=1");
}

TEST(Estimate, BarrierCost) {
    // Rank 0 computes first; everybody then meets at a barrier: done = calc + barrier_s(P).
    const int P = 5;
    Schedule s(Collective::allgather, P, 1, static_cast<uint32_t>(P), 0);
    for (int r = 0; r < P; ++r) {
        RankBuilder b(s, r);
        if (r == 0) b.calc(3);
        b.fence();
        b.barrier();
    }
    const double m = 1000, calc = 3 * m * 1e-9;
    EXPECT_NEAR(est(s, "full:5", kHockney + ",gamma=1ns/B", m), calc + 3 * kAlpha, 1e-15);  // ceil(log2 5) = 3
    EXPECT_NEAR(est(s, "full:5", kHockney + ",gamma=1ns/B,barrier=50us", m), calc + 50e-6, 1e-15);
}

TEST(Estimate, BarrierCollectiveIgnoresSize) {
    Schedule s(Collective::barrier, 4, 1, 1, 0);
    for (int r = 0; r < 4; ++r) {
        RankBuilder b(s, r);
        b.send((r + 1) % 4, 0, {in(0)});
        b.recv((r + 3) % 4, 0, {out(0)});
    }
    EXPECT_NEAR(est(s, "full:4", kHockney, 1e6), kAlpha, 1e-15);
}

TEST(Estimate, ExplicitDependencyChain) {
    // Rank 0 forwards what it receives from 1 to 2 (dep), and independently sends to 3 (no dep); two ports.
    Schedule s(Collective::allgather, 4, 1, 4, 0);
    RankBuilder b0(s, 0);
    const uint32_t got = b0.recv(1, 0, {out(1)});
    b0.send(2, 0, {out(1)}, {got});
    b0.send(3, 0, {in(0)});
    RankBuilder(s, 1).send(0, 0, {in(0)});
    RankBuilder(s, 2).recv(0, 0, {out(1)});
    RankBuilder(s, 3).recv(0, 0, {out(0)});
    const double m = 300, T = kAlpha + m * kBeta;
    const Estimate e = estimate(s, Topology::parse("full:4"), *parse_model(kHockney + ",ports=2"), m);
    EXPECT_NEAR(e.time_s, 2 * T, 1e-15);
    EXPECT_EQ(e.critical_rank, 0);
    // One port: 1->0 uses rank 0's receive port and 0->3 its send port, both [0,T]; 0->2 follows at [T,2T].
    EXPECT_NEAR(est(s, "full:4", kHockney, m), 2 * T, 1e-15);
}

TEST(Estimate, LongDependencyChainOfLocalOps) {
    // 10 copies in one group, each depending on the previous one, then an independent calc: the CPU serialises all.
    Schedule s(Collective::allgather, 1, 1, 1, 0);
    RankBuilder b(s, 0);
    uint32_t prev = b.copy({in(0)}, {out(0)});
    for (int i = 0; i < 9; ++i) prev = b.copy({in(0)}, {out(0)}, {prev});
    b.calc(2);
    EXPECT_NEAR(est(s, "full:1", kHockney + ",rho=1ns/B,gamma=2ns/B", 100), 10 * 100e-9 + 2 * 100 * 2e-9, 1e-15);
}

TEST(Estimate, FenceWaitsForWholeGroup) {
    // Group 1: rank 0 sends a big message to 1 and a small one to 2 (two ports); group 2: a send to 3 starts only
    // after both.
    Schedule s(Collective::allgather, 4, 1, 4, 0);
    RankBuilder b0(s, 0);
    b0.send(2, 0, {in(0)});
    send_units(b0, 1, 0, in(0), 10);
    b0.fence();
    b0.send(3, 0, {in(0)});
    RankBuilder b1(s, 1);
    b1.copy({in(0)}, {out(1)});  // free (rho = 0); see the note at send_units
    recv_units(b1, 0, 0, out(0), 10);
    RankBuilder(s, 2).recv(0, 0, {out(0)});
    RankBuilder(s, 3).recv(0, 0, {out(0)});
    const double m = 1000;
    const double expect = (kAlpha + 10 * m * kBeta) + (kAlpha + m * kBeta);
    EXPECT_NEAR(est(s, "full:4", kHockney + ",ports=2", m), expect, 1e-15);
}

TEST(Estimate, ChannelsMatchInProgramOrderPerTag) {
    // Rank 0 sends tag 1 then tag 0; rank 1 receives tag 0 first: channels are (src, dst, tag), so the tag 0
    // recv matches the second send, not the first.
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    RankBuilder b0(s, 0);
    b0.copy({in(0)}, {out(0)});  // free (rho = 0); see the note at send_units
    send_units(b0, 1, 1, in(0), 4);
    b0.send(1, 0, {in(0)});
    RankBuilder b1(s, 1);
    b1.recv(0, 0, {out(0)});
    b1.fence();
    b1.calc(1);
    b1.fence();
    recv_units(b1, 0, 1, out(0), 4);
    const double m = 1000, T1 = kAlpha + 4 * m * kBeta, T0 = kAlpha + m * kBeta;
    // The tag 1 send is ready at 0 but its recv only after rank 1's first groups: tag 0 goes first [0, T0], the
    // calc is free (gamma = 0), then tag 1 [T0, T0 + T1].
    const double expect = T0 + T1;
    EXPECT_NEAR(est(s, "full:2", kHockney, m), expect, 1e-15);
}

TEST(Estimate, UnmatchedSendThrows) {
    Schedule s(Collective::allgather, 3, 1, 3, 0);
    RankBuilder(s, 0).copy({in(0)}, {out(0)});
    RankBuilder b(s, 1);
    b.copy({in(0)}, {out(1)});
    b.send(2, 7, {in(0)});
    EXPECT_EQ(error_of(s, "full:3"),
              "estimate: rank 1 op 1 (send to 2 tag 7) never completes -- run `collplan verify`");
}

TEST(Estimate, DeadlockThrows) {
    // Both ranks wait for a message the other sends only afterwards.
    Schedule s(Collective::allgather, 2, 1, 2, 0);
    for (int r = 0; r < 2; ++r) {
        RankBuilder b(s, r);
        b.recv(1 - r, 0, {out(0)});
        b.fence();
        b.send(1 - r, 0, {in(0)});
    }
    EXPECT_EQ(error_of(s, "full:2"),
              "estimate: rank 0 op 0 (recv from 1 tag 0) never completes -- run `collplan verify`");
}

TEST(Estimate, MissingBarrierThrows) {
    Schedule s(Collective::barrier, 2, 1, 1, 0);
    RankBuilder(s, 0).barrier();
    RankBuilder(s, 1).calc(1);
    EXPECT_EQ(error_of(s, "full:2"), "estimate: rank 0 op 0 (barrier) never completes -- run `collplan verify`");
}

TEST(Estimate, RejectsMismatchedTopologyAndBadSize) {
    const Schedule s = ring_allgather(4);
    EXPECT_NE(error_of(s, "ring:5").find("has 5 nodes"), std::string::npos);
    EXPECT_THROW(estimate(s, Topology::parse("ring:4"), *parse_model(kHockney), -1), Error);
}

// Circuit model, Nicol & Bokhari sec. 2.2: Direct Exchange on a d-cube after one barrier costs
// (2^d - 1)(lambda + m tau + delta) + Q(d).
TEST(Estimate, CircuitDirectExchange) {
    const std::string model = "circuit:lambda=177.5us,tau=0.394us/B,delta=51.5us,q=150us";
    for (int d : {1, 3, 5}) {
        const int P = 1 << d;
        Schedule s(Collective::alltoall, P, static_cast<uint32_t>(P), static_cast<uint32_t>(P), 0);
        for (int r = 0; r < P; ++r) {
            RankBuilder b(s, r);
            b.barrier();
            for (int k = 1; k < P; ++k) {
                b.fence();
                b.send(r ^ k, 0, {in(static_cast<uint32_t>(r ^ k))});
                b.recv(r ^ k, 0, {out(static_cast<uint32_t>(r ^ k))});
            }
        }
        const double m = 512;
        const double expect = (P - 1) * (177.5e-6 + m * 0.394e-6 + 51.5e-6) + d * 150e-6;
        EXPECT_NEAR(est(s, "hypercube:" + std::to_string(d), model, m), expect, 1e-12 * expect) << "d=" << d;
    }
}

TEST(Estimate, PairwiseAlltoallLargerP) {
    const int P = 96;
    Schedule s(Collective::alltoall, P, static_cast<uint32_t>(P), static_cast<uint32_t>(P), 0);
    for (int r = 0; r < P; ++r) {
        RankBuilder b(s, r);
        b.copy({in(static_cast<uint32_t>(r))}, {out(static_cast<uint32_t>(r))});
        for (int k = 1; k < P; ++k) {
            b.fence();
            b.send((r + k) % P, 0, {in(static_cast<uint32_t>((r + k) % P))});
            b.recv((r - k + P) % P, 0, {out(static_cast<uint32_t>((r - k + P) % P))});
        }
    }
    const double m = 256, expect = (P - 1) * (kAlpha + m * kBeta);
    EXPECT_NEAR(est(s, "full:96", kHockney, m), expect, 1e-12 * expect);
}

// Every send and recv posted at once (one group): equal-time requests are served op index first, so each rank's
// k-th message goes in slot k and the one-port total is still (P - 1) T.
TEST(Estimate, OneGroupAlltoall) {
    for (int P : {4, 7, 16}) {
        Schedule s(Collective::alltoall, P, static_cast<uint32_t>(P), static_cast<uint32_t>(P), 0);
        for (int r = 0; r < P; ++r) {
            RankBuilder b(s, r);
            for (int k = 1; k < P; ++k) {
                b.send((r + k) % P, 0, {in(static_cast<uint32_t>((r + k) % P))});
                b.recv((r - k + P) % P, 0, {out(static_cast<uint32_t>((r - k + P) % P))});
            }
        }
        const double m = 100, expect = (P - 1) * (kAlpha + m * kBeta);
        EXPECT_NEAR(est(s, "full:" + std::to_string(P), kHockney, m), expect, 1e-12 * expect) << "P=" << P;
    }
}

// The walk's queue pops exactly what a binary min-heap of (time, order) pops, also when events are pushed at the
// time being popped (below and above the next order, in small and large batches), by rounding before it, and
// across its switch from a small queue's heap to buckets of times.
TEST(TieQueue, PopsInTheOrderOfABinaryHeap) {
    using Event = TieQueue::Event;
    for (int seed = 0; seed < 40; ++seed) {
        std::mt19937_64 rng(seed);
        TieQueue q;
        std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap;
        const int times = seed % 4 == 0 ? 1000000 : 3 + seed;  // many ties, or nearly none
        int budget = 20000;  // pushes once popping began
        double now = -1;
        auto push = [&](double t, uint64_t order) {
            if (now >= -0.5 && budget-- <= 0) return;
            q.push(t, order);
            heap.push({t, order});
        };
        // a small queue is a binary heap until it first holds 256 events (a large batch below brings it there)
        for (int i = 0, n = seed % 3 == 1 ? 50 : 2000; i < n; ++i) push(static_cast<double>(rng() % times), rng());
        push(-0.0, 5), push(0.0, 4);
        while (!heap.empty()) {
            ASSERT_EQ(q.size(), heap.size());
            const Event want = heap.top();
            heap.pop();
            const Event got = q.pop();
            ASSERT_EQ(got.t, want.t) << "seed " << seed;
            ASSERT_EQ(got.order, want.order) << "seed " << seed;
            now = got.t;
            const uint64_t r = rng() % 100;
            if (r < 30) push(now, rng());                                   // at the time being popped
            else if (r < 35) push(now, got.order + 1 + rng() % 3);          // just after the popped one
            else if (r < 37) for (int j = 0; j < 300; ++j) push(now, rng()); // a large batch
            else if (r < 39) push(now + 1 + static_cast<double>(rng() % 5), rng());
            else if (r < 40) push(std::nextafter(now, -1e300), rng());      // rounding: before the current time
        }
        EXPECT_TRUE(q.empty());
    }
}

// The switch from the small queue's heap when the push that makes it is the last at the time being popped.
TEST(TieQueue, LeavesTheSmallHeapOnAPushAtThePoppedTime) {
    TieQueue q;
    q.push(1.0, 7);
    q.push(2.0, 1);
    ASSERT_EQ(q.pop().order, 7u);
    for (uint64_t o = 256; o > 0; --o) q.push(1.0, 1000 + o);  // the last push makes 257 events
    for (uint64_t o = 1; o <= 256; ++o) {
        const TieQueue::Event e = q.pop();
        ASSERT_EQ(e.t, 1.0);
        ASSERT_EQ(e.order, 1000 + o);
    }
    EXPECT_EQ(q.pop().t, 2.0);
    EXPECT_TRUE(q.empty());
}

TEST(LowerBound, ClosedForms) {
    auto h = parse_model(kHockney);
    const Topology full8 = Topology::parse("full:8");
    const double m = 1000;
    EXPECT_EQ(lower_bound_s(Collective::allgather, 1, Topology::parse("full:1"), *h, m), 0);
    EXPECT_DOUBLE_EQ(lower_bound_s(Collective::barrier, 8, full8, *h, m), 3 * kAlpha);
    EXPECT_DOUBLE_EQ(lower_bound_s(Collective::allgather, 8, full8, *h, 0), 3 * kAlpha);
    EXPECT_DOUBLE_EQ(lower_bound_s(Collective::allgather, 8, full8, *h, 1e6), 7 * 1e6 * kBeta);
    EXPECT_DOUBLE_EQ(lower_bound_s(Collective::allreduce, 8, full8, *h, 1e6), 2.0 * 7 / 8 * 1e6 * kBeta);
    h->ports = 2;  // ceil(log3 8) = 2 rounds; bandwidth halves
    EXPECT_DOUBLE_EQ(lower_bound_s(Collective::barrier, 8, full8, *h, m), 2 * kAlpha);
    EXPECT_DOUBLE_EQ(lower_bound_s(Collective::alltoall, 8, full8, *h, 1e6), 7 * 1e6 * kBeta / 2);
    h->ports = 1;
    h->duplex = false;  // sends and receives share the port
    EXPECT_DOUBLE_EQ(lower_bound_s(Collective::alltoall, 8, full8, *h, 1e6), 2 * 7 * 1e6 * kBeta);
}

TEST(LowerBound, AlltoallBisection) {
    auto h = parse_model(kHockney);
    const Topology ring = Topology::parse("ring:16");
    const double m = 1e5;
    const double cut = 8.0 * 8 * m * kBeta / static_cast<double>(ring.bisection_links());
    EXPECT_DOUBLE_EQ(lower_bound_s(Collective::alltoall, 16, ring, *h, m), std::max(cut, 15 * m * kBeta));
    const Topology odd = Topology::parse("ring:7");  // floor(7/2) * ceil(7/2) = 12 pairs cross the cut
    const double cut7 = 12.0 * m * kBeta / static_cast<double>(odd.bisection_links());
    EXPECT_DOUBLE_EQ(lower_bound_s(Collective::alltoall, 7, odd, *h, m), std::max(cut7, 6 * m * kBeta));
}

TEST(LowerBound, AllreduceComputation) {
    auto h = parse_model("hockney:alpha=1us,beta=0.1ns/B,gamma=1ns/B");
    const double n = 1e6;
    EXPECT_DOUBLE_EQ(lower_bound_s(Collective::allreduce, 4, Topology::parse("full:4"), *h, n), 0.75 * n * 1e-9);
}

TEST(LowerBound, NeverAboveRingAllgatherEstimate) {
    for (const std::string& model :
         {kHockney, kHockney + ",ports=2", std::string("wormhole:startup=20us,flit=16B,flit_time=5ns,hop_time=60ns"),
          std::string("circuit:lambda=177.5us,tau=0.394us/B,delta=51.5us,q=150us"),
          std::string("loggp:L=3us,o=1us,g=1.5us,G=0.4ns/B")}) {
        for (int P : {2, 3, 7, 16}) {
            const Topology topo = Topology::parse("ring:" + std::to_string(P));
            const Schedule s = ring_allgather(P);
            for (double m : {0.0, 8.0, 1000.0, 1e6}) {
                const double lb = lower_bound_s(Collective::allgather, P, topo, *parse_model(model), m);
                const double e = estimate(s, topo, *parse_model(model), m).time_s;
                EXPECT_LE(lb, e * (1 + 1e-12)) << model << " P=" << P << " m=" << m;
                EXPECT_GT(lb, 0) << model << " P=" << P;
            }
        }
    }
}

TEST(LowerBound, LogGPLatencyUsesGap) {
    // With a gap far below L + 2o, one rank may inject many messages per latency: the bound must stay below a
    // direct allgather (every rank sends to every other in one group).
    auto l = parse_model("loggp:L=20us,o=1us,g=0.1us,G=0.1ns/B");
    const int P = 8;
    Schedule s(Collective::allgather, P, 1, static_cast<uint32_t>(P), 0);
    for (int r = 0; r < P; ++r) {
        RankBuilder b(s, r);
        for (int q = 0; q < P; ++q)
            if (q != r) b.send(q, 0, {in(0)}), b.recv(q, 0, {out(static_cast<uint32_t>(q))});
    }
    const Topology topo = Topology::parse("full:8");
    const double e = estimate(s, topo, *l, 8).time_s;
    EXPECT_LE(lower_bound_s(Collective::allgather, P, topo, *l, 8), e);
    EXPECT_LT(e, 2 * 22e-6);  // the estimate is below two LogGP latencies
}

// Several sizes at once (partners matched once, walks on threads) give each size's own walk, to the bit; and the
// bound from each rank's ops alone never exceeds the walk: every algorithm, P <= 12, duplex and simplex ports,
// several ports, LogGP with CPU overheads.
TEST(Estimate, SizesOnThreadsAndTheRanksOwnBoundAgreeWithEachWalk) {
    const std::vector<double> sizes = {8, 1000, 65536, 1 << 20};
    int cases = 0, tight = 0, closed_cases = 0;
    for (const std::string& model : {kHockney + ",gamma=0.5ns/B,rho=0.2ns/B", kHockney + ",duplex=0,ports=2",
                                     std::string("loggp:L=3us,o=1us,g=1.5us,G=0.4ns/B,cpu=1")}) {
        const auto mod = parse_model(model);
        for (const Algorithm& a : Registry::get().all()) {
            if (a.collective == Collective::alltoallv) continue;  // no matrix in the sweep
            for (const SweepCase& c : sweep_cases(a, 12)) {
                if (!c.op.empty() && c.op != "sum") continue;
                const Topology t = Topology::parse(c.topology);
                const Schedule s = make_schedule(a.name, c.ranks, t, c.params, Inputs(c.counts, c.root));
                const std::vector<Estimate> many = estimate(s, t, *mod, sizes, default_job(), 3);
                const std::vector<double> bound = estimate_lower_bounds(s, t, *mod, sizes);
                const std::vector<double> closed = algorithm_bounds(a.name, c.ranks, t, c.params,
                                                                    Inputs(c.counts, c.root), *mod, sizes);
                const std::vector<double> last = estimate_lower_bounds(  // rank P-1's program alone
                    make_schedule(a.name, c.ranks, t, c.params, Inputs(c.counts, c.root), c.ranks - 1), t, *mod, sizes);
                ASSERT_EQ(many.size(), sizes.size());
                for (size_t z = 0; z < sizes.size(); ++z) {
                    const double one = estimate(s, t, *mod, sizes[z]).time_s;
                    EXPECT_EQ(many[z].time_s, one) << a.name << " P=" << c.ranks << " " << model << " " << sizes[z];
                    EXPECT_LE(bound[z], one * (1 + 1e-12)) << a.name << " P=" << c.ranks << " " << c.topology << " "
                                                           << model << " " << sizes[z];
                    EXPECT_LE(last[z], bound[z]) << a.name << " P=" << c.ranks << ": one rank bounds more than all";
                    if (!closed.empty()) {
                        EXPECT_LE(closed[z], one * (1 + 1e-12)) << a.name << " P=" << c.ranks << " " << c.topology
                                                                << " " << model << " " << sizes[z];
                        ++closed_cases;
                    }
                    ++cases;
                    tight += bound[z] >= 0.5 * one;
                }
            }
        }
    }
    EXPECT_GT(tight, cases / 4) << "the bound is within a factor 2 of the walk in only " << tight << " of " << cases;
    EXPECT_GT(closed_cases, 100);  // bcast/chain's closed form
}

TEST(Estimate, TheRanksOwnBoundOfARingIsItsTime) {
    // Hockney, one port: P-1 sends of m back to back, and the walk adds nothing to them.
    const Schedule s = ring_allgather(6);
    const std::vector<double> b = estimate_lower_bounds(s, Topology::parse("full:6"), *parse_model(kHockney), {1000});
    EXPECT_NEAR(b[0], 5 * (kAlpha + 1000 * kBeta), 1e-15);
    EXPECT_NEAR(b[0], est(s, "full:6", kHockney, 1000), 1e-15);
}

TEST(Estimate, SizesOnThreadsAtLargerP) {  // enough ops for the walks to go to threads
    std::vector<double> sizes;
    for (int i = 0; i < 12; ++i) sizes.push_back(8.0 * (1 << (2 * i)) / 3);
    const auto model = parse_model("loggp:L=3us,o=1us,g=1.5us,G=0.4ns/B,cpu=1");
    for (const auto& [name, P, params] :
         std::vector<std::tuple<std::string, int, std::map<std::string, std::string>>>{
             {"allreduce/recexch", 500, {{"k", "3"}}}, {"reduce/rabenseifner", 300, {}},
             {"bcast/chain", 200, {{"segments", "8"}}}}) {
        const Schedule s = make_schedule(name, P, Topology::full(P), params);
        const std::vector<Estimate> many = estimate(s, Topology::full(P), *model, sizes, default_job(), 3);
        for (size_t z = 0; z < sizes.size(); ++z)
            EXPECT_EQ(many[z].time_s, estimate(s, Topology::full(P), *model, sizes[z]).time_s) << name << " " << sizes[z];
    }
}

TEST(Estimate, ThreadsStopWithTheJob) {
    const Schedule s = make_schedule("allreduce/recexch", 500, Topology::full(500), {{"k", "3"}});
    int polls = 0;
    Job job;
    job.cancel = [&polls] {
        if (++polls > 3) throw Error("stopped by the test");
    };
    const std::vector<double> sizes(16, 1000.0);
    EXPECT_THROW(estimate(s, Topology::full(500), *parse_model(kHockney), sizes, job, 4), Error);
}

}  // namespace
}  // namespace collplan
