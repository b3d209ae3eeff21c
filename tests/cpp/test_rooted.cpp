// The binomial, van de Geijn, chain and torus broadcasts and the binomial gather/scatter: what the sweep does not show --
// messages and units at the root against the headers' formulas, the Hockney estimates the headers give, the pipelines'
// shape, its parameter range and its candidates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan {
namespace {

const std::string kHockney = "hockney:alpha=2us,beta=1ns/B";

Schedule make(const std::string& name, int P, int root, const std::map<std::string, std::string>& params = {}) {
    return make_schedule(name, P, Topology::full(P), params, Inputs({}, root));
}

int ceil_log2(int P) {
    int d = 0;
    while ((1 << d) < P) ++d;
    return d;
}

struct Traffic {
    int sends = 0, recvs = 0;
    uint64_t sent_units = 0, recv_units = 0;
};

Traffic traffic(const Schedule& s, int r) {
    Traffic t;
    for (uint32_t i = 0; i < s.num_ops(r); ++i) {
        const OpView v = s.op(r, i);
        if (v.op.kind == OpKind::send) ++t.sends, t.sent_units += v.units;
        if (v.op.kind == OpKind::recv) ++t.recvs, t.recv_units += v.units;
    }
    return t;
}

double hockney_s(const Schedule& s, double bytes) {
    return estimate(s, Topology::full(s.ranks()), *parse_model(kHockney), bytes).time_s;
}

TEST(Rooted, BinomialBcastRootSendsCeilLog2PAndTakesThatManyRounds) {
    for (int P : {1, 2, 5, 8, 13, 64})
        for (int root : {0, P / 2, P - 1}) {
            const Schedule s = make("bcast/binomial", P, root);
            EXPECT_EQ(traffic(s, root).sends, ceil_log2(P)) << P;
            int total = 0;
            for (int r = 0; r < P; ++r) {
                total += traffic(s, r).sends;
                EXPECT_EQ(traffic(s, r).recvs, r == root ? 0 : 1) << P << " rank " << r;
            }
            EXPECT_EQ(total, P - 1);
            const double n = 1000;
            EXPECT_NEAR(hockney_s(s, n), ceil_log2(P) * (2e-6 + n * 1e-9), 1e-15) << P;
        }
}

// van de Geijn: the scatter hands out P - 1 of the P segments from the root; the allgather then gives every rank
// the P - 1 segments of the others (MPICH resends what the scatter already gave a forwarding rank).
TEST(Rooted, ScatterAllgatherBcastsMoveTheSegmentsTheHeaderSays) {
    for (int P : {2, 4, 8, 16}) {
        const int root = P - 1;
        const Schedule rd = make("bcast/scatter_recursive_doubling_allgather", P, root);
        const Schedule ring = make("bcast/scatter_ring_allgather", P, root);
        EXPECT_EQ(rd.blocks(Buf::out), static_cast<uint32_t>(P));
        for (const Schedule* s : {&rd, &ring}) {
            // The root's scatter sends ceil(log2 P) messages, P - 1 segments; then it takes part in the allgather.
            const Traffic t = traffic(*s, root);
            const bool is_ring = s == &ring;
            EXPECT_EQ(t.sends, ceil_log2(P) + (is_ring ? P - 1 : ceil_log2(P))) << s->algorithm << " P=" << P;
            EXPECT_EQ(t.recv_units, static_cast<uint64_t>(P - 1)) << s->algorithm << " P=" << P;
        }
        // P = 2^d: every allgather step of the recursive doubling is an exchange; Hockney, with the scatter's
        // log2 P alpha + (P-1)/P n beta twice.
        const double n = 4096;
        const double expect = 2 * ceil_log2(P) * 2e-6 + 2.0 * (P - 1) / P * n * 1e-9;
        EXPECT_NEAR(hockney_s(rd, n), expect, 1e-12) << P;
    }
    // Non-power-of-two P: MPICH's repair sends reach every rank that had no partner (the sweep verifies data;
    // here: the repair exists -- rank 1 of P = 5 receives segment 4 from rank 0, not from a partner 5).
    const Schedule s = make("bcast/scatter_recursive_doubling_allgather", 5, 0);
    bool got4 = false;
    for (uint32_t i = 0; i < s.num_ops(1); ++i) {
        const OpView v = s.op(1, i);
        if (v.op.kind == OpKind::recv && v.op.peer == 0 && v.dst()[0].first() == 4) got4 = true;
    }
    EXPECT_TRUE(got4);
}

TEST(Rooted, ChainIsAPipelineOfKSegments) {
    for (int P : {2, 3, 7, 16})
        for (int k : {1, 4, 9}) {
            const Schedule s = make("bcast/chain", P, 1 % P, {{"segments", std::to_string(k)}});
            EXPECT_EQ(s.blocks(Buf::out), static_cast<uint32_t>(k));
            const double n = 9000;
            EXPECT_NEAR(hockney_s(s, n), (P - 2 + k) * (2e-6 + n / k * 1e-9), 1e-12) << P << " k=" << k;
            if (P < 3) continue;
            // A middle rank: k receives from its left, k sends to its right, send s waits for receive s.
            const int mid = (1 + P / 2) % P;
            const Traffic t = traffic(s, mid);
            EXPECT_EQ(t.recvs, k);
            EXPECT_EQ(t.sends, k);
            for (uint32_t i = 0; i < s.num_ops(mid); ++i) {
                const OpView v = s.op(mid, i);
                if (v.op.kind != OpKind::send) continue;
                EXPECT_EQ(v.op.peer, (mid + 1) % P);
                const uint32_t seg = v.src()[0].first();
                EXPECT_TRUE(std::any_of(v.deps.begin(), v.deps.end(), [&](uint32_t d) {
                    const OpView dep = s.op(mid, d);
                    return dep.op.kind == OpKind::recv && dep.dst()[0].first() == seg;
                })) << "send of segment " << seg << " does not wait for its receive";
            }
        }
}

TEST(Rooted, ChainSegmentsOutOfRangeAreRefused) {
    for (const char* bad : {"0", "4097", "-1", "x"}) {
        try {
            make("bcast/chain", 4, 0, {{"segments", bad}});
            ADD_FAILURE() << "segments=" << bad << " accepted";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("segments"), std::string::npos) << e.what();
        }
    }
}

// The candidates bracket the Hockney optimum sqrt((P - 2) n beta / alpha) of every size in the range.
TEST(Rooted, ChainCandidatesBracketTheOptimalSegmentCount) {
    const auto model = parse_model(kHockney);
    const Topology topo = Topology::full(64);
    const Algorithm& a = Registry::get().find("bcast/chain");
    const auto cands = candidate_params(a, CandidateQuery{64, topo, *model, 1024, 1 << 24});
    ASSERT_FALSE(cands.empty());
    auto k_of = [](const ParamSet& c) { return std::stoll(c.at("segments")); };
    const double k_small = std::sqrt(62 * 1024 * 1e-9 / 2e-6), k_large = std::sqrt(62.0 * (1 << 24) * 1e-9 / 2e-6);
    EXPECT_LE(k_of(cands.front()), std::max(1.0, k_small));
    EXPECT_GE(k_of(cands.back()), k_large);
    EXPECT_LE(cands.size(), 13u);
}

TEST(Rooted, BinomialGatherAndScatterTouchTheRootCeilLog2PTimes) {
    for (int P : {1, 2, 6, 8, 13, 33})
        for (int root : {0, P / 2, P - 1}) {
            const Schedule g = make("gather/binomial", P, root), sc = make("scatter/binomial", P, root);
            EXPECT_EQ(traffic(g, root).recvs, ceil_log2(P)) << P;
            EXPECT_EQ(traffic(g, root).recv_units, static_cast<uint64_t>(P - 1)) << P;
            EXPECT_EQ(traffic(sc, root).sends, ceil_log2(P)) << P;
            EXPECT_EQ(traffic(sc, root).sent_units, static_cast<uint64_t>(P - 1)) << P;
            EXPECT_LE(g.blocks(Buf::tmp), static_cast<uint32_t>(P / 2));
            for (int r = 0; r < P; ++r) {
                if (r == root) continue;
                EXPECT_EQ(traffic(g, r).sends, 1) << P << " rank " << r;
                EXPECT_EQ(traffic(sc, r).recvs, 1) << P << " rank " << r;
                EXPECT_EQ(traffic(g, r).sent_units, traffic(sc, r).recv_units) << P << " rank " << r;
            }
            const double n = 800;  // bytes gathered; m = n / P per rank
            EXPECT_NEAR(hockney_s(g, n / P), hockney_s(sc, n / P), 1e-15) << P;
        }
}

// bcast/torus: every message goes one hop to a neighbour; with a port per child the pipeline takes D - 1 + k steps
// (D: sum of floor(A_i / 2) on a torus, the root's distances to the far ends on a mesh); it declines other shapes.
TEST(Rooted, TorusBcastIsANeighbourPipelineOfDepthD) {
    const auto six_ports = parse_model(kHockney + ",ports=6");  // a port for each child, up to 2d = 6
    struct Case { std::string topo; int root, depth; };
    for (const Case& c : {Case{"torus:8x8", 27, 8}, Case{"torus:5x3", 7, 3}, Case{"mesh:4x4", 0, 6},
                          Case{"mesh:5x3", 7, 3}, Case{"torus:4x4x2", 5, 5}}) {
        const Topology topo = Topology::parse(c.topo);
        for (int k : {1, 5}) {
            const Schedule s = make_schedule("bcast/torus", topo.nodes(), topo, {{"segments", std::to_string(k)}},
                                             Inputs({}, c.root));
            for (int r = 0; r < topo.nodes(); ++r) {
                EXPECT_EQ(traffic(s, r).recvs, r == c.root ? 0 : k) << c.topo << " rank " << r;
                for (uint32_t i = 0; i < s.num_ops(r); ++i)
                    if (s.op(r, i).op.kind == OpKind::send)
                        EXPECT_EQ(topo.distance(r, s.op(r, i).op.peer), 1) << c.topo << " rank " << r;
            }
            const double n = 6000;
            EXPECT_NEAR(estimate(s, topo, *six_ports, n).time_s, (c.depth - 1 + k) * (2e-6 + n / k * 1e-9), 1e-12)
                << c.topo << " k=" << k;
        }
    }
    try {
        make_schedule("bcast/torus", 8, Topology::full(8));
        ADD_FAILURE() << "bcast/torus accepted full:8";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("mesh or torus"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace collplan
