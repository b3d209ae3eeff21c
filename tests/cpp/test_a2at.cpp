// alltoall/a2at and alltoall/ring: correctness on tori and meshes up to 16x16 (odd and even sides, square and not),
// the A2AT link balance (every directed link carries h = |a|+|b| messages of a group; the whole schedule hits the
// ideal k^3/8 on even k x k tori), ports, tie hints, the group order of the report, and link loads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "collplan/algorithms/registry.hpp"
#include "collplan/algorithms/lower_bounds.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/model/link_load.hpp"
#include "collplan/schedule/text.hpp"
#include "collplan/sim/packet/packet.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {
namespace {

Schedule a2at(const std::string& topo, std::map<std::string, std::string> params = {}) {
    const Topology t = Topology::parse(topo);
    return make_schedule("alltoall/a2at", t.nodes(), t, params);
}

// The fence-delimited groups of rank r: op index ranges [begin, end).
std::vector<std::pair<uint32_t, uint32_t>> groups_of(const Schedule& s, int r) {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    uint32_t begin = 0;
    for (uint32_t k = 1; k <= s.num_ops(r); ++k)
        if (k == s.num_ops(r) || s.program(r).ops[k].fence()) out.emplace_back(begin, k), begin = k;
    return out;
}

// Loads per directed link of the sends in group g of every rank.
std::vector<uint64_t> group_loads(const Schedule& s, const Topology& t, size_t g) {
    std::vector<uint64_t> load(static_cast<size_t>(t.num_links()), 0);
    for (int r = 0; r < s.ranks(); ++r) {
        const auto range = groups_of(s, r).at(g);
        for (uint32_t k = range.first; k < range.second; ++k) {
            const Op& op = s.program(r).ops[k];
            if (op.kind != OpKind::send) continue;
            for (const Link& l : t.route(r, op.peer, op.ties)) ++load[static_cast<size_t>(l.id)];
        }
    }
    return load;
}

// Signed shortest offset of b from a along a ring of side n (ties: +n/2).
int offset(int a, int b, int n) {
    int d = ((b - a) % n + n) % n;
    return 2 * d > n ? d - n : d;
}

TEST(A2AT, VerifiesOnToriAndMeshesUpTo16x16) {
    std::vector<std::string> specs;
    for (int k = 2; k <= 16; ++k) specs.push_back("torus:" + std::to_string(k) + "x" + std::to_string(k));
    for (int k : {2, 3, 5, 8, 11, 16}) specs.push_back("mesh:" + std::to_string(k) + "x" + std::to_string(k));
    for (const char* s : {"torus:3x5", "torus:4x6", "torus:16x7", "torus:2x9", "torus:6x10", "mesh:4x7",
                          "mesh:16x3", "ring:10", "ring:9", "line:7", "torus:1x6", "torus:8x16"})
        specs.push_back(s);
    for (const auto& spec : specs)
        for (const char* order : {"ring", "hop-desc"}) {
            const Schedule s = a2at(spec, {{"order", order}});
            const VerifyResult v = verify(s);
            EXPECT_TRUE(v.ok) << spec << " " << order << ": " << v.reason << ": " << v.message;
        }
    const VerifyResult v = verify(a2at("torus:16x16", {{"sync", "port"}}));
    EXPECT_TRUE(v.ok) << v.message;
}

TEST(A2AT, EveryDirectedLinkCarriesHMessagesOfEachGroupOnSquareTori) {
    for (int k : {3, 4, 5, 6, 7, 8, 9, 10, 16}) {
        const std::string spec = "torus:" + std::to_string(k) + "x" + std::to_string(k);
        const Topology t = Topology::parse(spec);
        const Schedule s = a2at(spec);
        const size_t groups = groups_of(s, 0).size();
        EXPECT_EQ(groups, static_cast<size_t>(k % 2 ? (k * k - 1) / 4 : (k * k - 4) / 4 + 1)) << spec;
        for (size_t g = 0; g < groups; ++g) {
            const std::vector<uint64_t> load = group_loads(s, t, g);
            const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
            EXPECT_EQ(*lo, *hi) << spec << " group " << g << " is not balanced";
            // h = the hop count of the group's messages (all equal); the half group of even sides: k/2 per link
            int sends = 0, h = 0;
            for (uint32_t i = groups_of(s, 0)[g].first; i < groups_of(s, 0)[g].second; ++i) {
                const Op& op = s.program(0).ops[i];
                if (op.kind != OpKind::send) continue;
                ++sends;
                h = std::abs(offset(0, op.peer % k, k)) + std::abs(offset(0, op.peer / k, k));
            }
            EXPECT_EQ(*hi, static_cast<uint64_t>(sends == 4 ? h : k / 2)) << spec << " group " << g;
            EXPECT_EQ(sends, sends == 4 ? 4 : 3) << spec << " group " << g;
        }
        const LinkLoads ll = link_loads(s, t);
        const uint64_t ideal = k % 2 ? static_cast<uint64_t>(k) * (k * k - 1) / 8 : static_cast<uint64_t>(k) * k * k / 8;
        EXPECT_EQ(ll.max_units, ideal) << spec;
        EXPECT_EQ(ll.total_units, ideal * static_cast<uint64_t>(t.num_links())) << spec << ": not perfectly balanced";
    }
}

// The busiest link of A2AT meets the bisection lower bound: k^3/8 blocks on even k x k tori, k (k^2 - 1)/8 on odd
// ones (where the cut splits the nodes floor(k/2) k | ceil(k/2) k).
TEST(A2AT, BusiestLinkIsTheIdealTimeAndMeetsTheBisectionBound) {
    const auto model = parse_model("hockney:alpha=1us,beta=0.25ns/B,ports=4");  // all-port: the node bound is lower
    for (const char* spec : {"torus:8x8", "torus:16x16", "torus:9x9", "torus:5x5", "torus:7x7"}) {
        const Topology t = Topology::parse(spec);
        const Schedule s = a2at(spec);
        const double m = 1 << 20;
        const int k = t.dims()[0];
        const double blocks = k % 2 ? k * (k * k - 1) / 8.0 : k * k * k / 8.0;
        EXPECT_DOUBLE_EQ(busiest_link_time_s(s, t, *model, m), blocks * m * 0.25e-9) << spec;
        EXPECT_NEAR(busiest_link_time_s(s, t, *model, m), lower_bound_s(Collective::alltoall, t.nodes(), t, *model, m),
                    1e-12) << spec;
    }
    // Without the tie hints the + links of an 8x8 torus would carry 80 blocks instead of 64.
    const Topology t = Topology::parse("torus:8x8");
    Schedule s = a2at("torus:8x8");
    for (int r = 0; r < s.ranks(); ++r)
        for (Op& op : s.program_mut(r).ops) op.ties = 0;
    EXPECT_EQ(link_loads(s, t).max_units, 80u);
}

TEST(A2AT, RectangularToriBalanceTheTwoDirectionsOfEveryDimension) {
    for (const char* spec : {"torus:4x8", "torus:6x10", "torus:5x7", "torus:8x16", "torus:3x8", "ring:8", "ring:12"}) {
        const Topology t = Topology::parse(spec);
        const LinkLoads ll = link_loads(a2at(spec), t);
        // every ring of every dimension: + and - links carry the same total; all X links equal, all Y links equal
        std::map<std::pair<int, int>, std::set<uint64_t>> by_dim_dir;  // (dimension, direction) -> loads
        for (int id = 0; id < t.num_links(); ++id) {
            const Link l = t.link(id);
            const auto a = t.coords(l.from), b = t.coords(l.to);
            const int dim = a[0] != b[0] ? 0 : 1;
            const int n = t.dims()[static_cast<size_t>(dim)];
            by_dim_dir[{dim, offset(a[dim], b[dim], n) > 0 || n == 2 ? 1 : 0}].insert(ll.units[static_cast<size_t>(id)]);
        }
        for (const auto& [key, loads] : by_dim_dir)
            EXPECT_LE(*loads.rbegin() - *loads.begin(), t.dims()[static_cast<size_t>(key.first)] % 4 == 2 ? 1u : 0u)
                << spec << " dimension " << key.first << " direction " << key.second;
    }
}

TEST(A2AT, GroupsUseFourPortsAndTheSameRelativeOffsetsOnEveryNode) {
    const Topology t = Topology::parse("torus:7x7");
    const Schedule s = a2at("torus:7x7");
    for (int r = 0; r < s.ranks(); ++r) {
        const auto gr = groups_of(s, r), g0 = groups_of(s, 0);
        ASSERT_EQ(gr.size(), g0.size());
        for (size_t g = 0; g < gr.size(); ++g) {
            std::set<int> ports;
            std::vector<std::pair<int, int>> offs_r, offs_0;
            for (uint32_t k = gr[g].first; k < gr[g].second; ++k) {
                const Op& op = s.program(r).ops[k];
                if (op.kind != OpKind::send) continue;
                ports.insert(op.port);
                offs_r.emplace_back(offset(r % 7, op.peer % 7, 7), offset(r / 7, op.peer / 7, 7));
            }
            for (uint32_t k = g0[g].first; k < g0[g].second; ++k)
                if (s.program(0).ops[k].kind == OpKind::send)
                    offs_0.emplace_back(offset(0, s.program(0).ops[k].peer % 7, 7), offset(0, s.program(0).ops[k].peer / 7, 7));
            EXPECT_EQ(ports, (std::set<int>{0, 1, 2, 3})) << "rank " << r << " group " << g;
            EXPECT_EQ(offs_r, offs_0) << "rank " << r << " group " << g;
        }
    }
    // four ports: one message time per group; one port: four
    const auto four = parse_model("hockney:alpha=1us,beta=1ns/B,ports=4");
    const auto one = parse_model("hockney:alpha=1us,beta=1ns/B");
    EXPECT_NEAR(estimate(s, t, *four, 1000).time_s, 12 * 2e-6, 1e-12);
    EXPECT_NEAR(estimate(s, t, *one, 1000).time_s, 48 * 2e-6, 1e-12);
}

// The (phase, hop) sequence of the groups in "ring" order on 9x9 is the legend of the report's figure 16.
TEST(A2AT, RingOrderFollowsTheReportsSequenceOn9x9) {
    const Schedule s = a2at("torus:9x9");
    std::vector<std::pair<int, int>> seq;
    for (auto [begin, end] : groups_of(s, 0)) {
        std::vector<std::pair<int, int>> offs;
        for (uint32_t k = begin; k < end; ++k) {
            const Op& op = s.program(0).ops[k];
            if (op.kind == OpKind::send) offs.emplace_back(offset(0, op.peer % 9, 9), offset(0, op.peer / 9, 9));
        }
        // the member in the first quadrant (a > 0, b >= 0)
        std::pair<int, int> rep{0, 0};
        for (auto o : offs)
            if (o.first > 0 && o.second >= 0) rep = o;
        const int a = rep.first, b = rep.second;
        const int phase = b == 0 ? 1 : a == b ? 2 : a > b ? 3 : 4;
        seq.emplace_back(phase, a + b);
    }
    // Figure 16 of the report: Seq-1 (Phase=1:Hop=1), Seq-2 (Phase=2:Hop=2), ..., Seq-20 (Phase=4:Hop=7).
    const std::vector<std::pair<int, int>> report = {{1, 1}, {2, 2}, {1, 2}, {2, 4}, {3, 3}, {4, 3}, {1, 3},
                                                     {2, 6}, {3, 4}, {4, 4}, {3, 5}, {4, 5}, {1, 4}, {2, 8},
                                                     {3, 5}, {4, 5}, {3, 6}, {4, 6}, {3, 7}, {4, 7}};
    EXPECT_EQ(seq, report);
}

TEST(A2AT, MeshSendsOnlyToExistingNodesAndOrdersChangeOnlyTheOrder) {
    const Schedule s = a2at("mesh:5x5");
    EXPECT_EQ(groups_of(s, 0).size(), 20u);  // rotation orbits of the offsets in [-4,4]^2 \ 0
    const Schedule hop = a2at("torus:6x6", {{"order", "hop"}}), desc = a2at("torus:6x6", {{"order", "hop-desc"}});
    EXPECT_FALSE(hop == desc);
    EXPECT_EQ(hop.total_ops(), desc.total_ops());
    EXPECT_THROW(a2at("torus:4x4", {{"order", "random"}}), Error);
    EXPECT_THROW(a2at("torus:4x4", {{"sync", "none"}}), Error);
    EXPECT_THROW(make_schedule("alltoall/a2at", 8, Topology::parse("hypercube:3")), Error);
    EXPECT_THROW(make_schedule("alltoall/a2at", 8, Topology::parse("torus:2x2x2")), Error);
}

TEST(A2AT, TieHintsRoundTripThroughTextAndRoute) {
    const Schedule s = a2at("torus:4x4", {{"sync", "port"}});
    bool any = false;
    for (int r = 0; r < s.ranks(); ++r)
        for (const Op& op : s.program(r).ops) any = any || op.ties != 0;
    EXPECT_TRUE(any);
    const std::string text = to_text(s);
    EXPECT_NE(text.find(" ties "), std::string::npos);
    EXPECT_EQ(from_text(text), s);
    EXPECT_EQ(to_text(from_text(text)), text);
    const Topology t = Topology::parse("torus:4x4");
    // 0 -> 2 is half the X ring: + by default (via 1), - with the hint (via 3)
    EXPECT_EQ(t.route(0, 2)[0].to, 1);
    EXPECT_EQ(t.route(0, 2, 1)[0].to, 3);
    EXPECT_EQ(t.route(0, 2, 2)[0].to, 1);  // the hint of another dimension changes nothing
    EXPECT_EQ(t.route(0, 8, 2)[0].to, 12);
    EXPECT_THROW(from_text("collplan-schedule 1\ncollective alltoall\nranks 2\nblocks in=2 out=2 tmp=0\nrank 0\n"
                           "  0: recv from 1 tag 0 out[1+1] ties 1\nrank 1\n"), Error);
}

// pacing=load's numbers for every send of A2AT (sim/packet/packet.hpp), derived by hand. torus:5x5, groups by
// {|dx|, |dy|} of their members: (1,0): each +X link carries the one message of its tail node, fed only by that
// node's NIC: n = 1, c = 1, w = 0. (2,0): a +X link carries the message of its tail node (from its NIC) and of the
// node behind (from the -X link): n = 2, c = 2, w = (c - 1) h = 2. (1,1): a +X link carries (1,1) and (1,-1) of its
// tail node, from two NICs; a +Y link the turns of (1,1) from -X and (-1,1) from +X: n = 2, c = 2, w = 2. (2,1) and
// (1,2): a +X link takes the transit input and the NICs of (2,1) and (1,-2): n = 3, c = 3, w = 6. (2,2): +X takes
// the transit input (both (2,2) and (2,-2) of the node behind) and two NICs; +Y the transit input and the turns
// from -X and +X: n = 4, c = 3, w = 8.
TEST(A2AT, LoadPacingSharesAreDerivedFromEachGroupsLinks) {
    const std::map<std::pair<int, int>, std::pair<double, double>> expect = {
        {{0, 1}, {1, 0}}, {{0, 2}, {2, 2}}, {{1, 1}, {2, 2}}, {{1, 2}, {3, 6}}, {{2, 2}, {4, 8}}};
    for (const char* sync : {"group", "barrier"}) {
        const Topology t = Topology::parse("torus:5x5");
        const Schedule s = a2at("torus:5x5", {{"sync", sync}});
        const sim::LoadShares ls = sim::load_shares(s, t);
        int sends = 0;
        for (int r = 0; r < s.ranks(); ++r)
            for (uint32_t k = 0; k < s.num_ops(r); ++k) {
                const Op& op = s.program(r).ops[k];
                if (op.kind != OpKind::send) {
                    EXPECT_EQ(ls.of(r, k), 0.0);
                    continue;
                }
                const int dx = std::abs(offset(r % 5, op.peer % 5, 5)), dy = std::abs(offset(r / 5, op.peer / 5, 5));
                const auto want = expect.at({std::min(dx, dy), std::max(dx, dy)});
                EXPECT_EQ(ls.of(r, k), want.first) << sync << " rank " << r << " to " << op.peer;
                EXPECT_EQ(ls.waits_of(r, k), want.second) << sync << " rank " << r << " to " << op.peer;
                ++sends;
            }
        EXPECT_EQ(sends, 25 * 24);
    }
    // torus:4x4, the group of the half-ring offsets (2,0) +X, (0,2) +Y, (2,2) -X -Y: two messages on every link it
    // uses, so its 4-hop message gets n = 2 (pacing by hops would give it 4), c = 2 (transit and one NIC or one turn
    // per link), w = 4; every other group: n = h.
    const Topology t = Topology::parse("torus:4x4");
    const Schedule s = a2at("torus:4x4");
    const sim::LoadShares ls = sim::load_shares(s, t);
    for (uint32_t k = 0; k < s.num_ops(0); ++k) {
        const Op& op = s.program(0).ops[k];
        if (op.kind != OpKind::send) continue;
        const int h = std::abs(offset(0, op.peer % 4, 4)) + std::abs(offset(0, op.peer / 4, 4));
        if (op.peer == 10) EXPECT_EQ(ls.of(0, k), 2.0) << "(2,2)";
        else EXPECT_EQ(ls.of(0, k), h) << "to " << op.peer;
        if (op.peer == 10) EXPECT_EQ(ls.waits_of(0, k), 4.0);
    }
}

// sync=barrier (the report's variant with a barrier between groups): the same messages as sync=group, a global
// barrier between consecutive groups, and it verifies (on meshes too, where nodes may have nothing in a group).
TEST(A2AT, BarrierSyncPutsABarrierBetweenGroups) {
    for (const char* spec : {"torus:8x8", "torus:9x9", "mesh:6x6", "torus:4x6"}) {
        const Schedule g = a2at(spec), b = a2at(spec, {{"sync", "barrier"}});
        const VerifyResult v = verify(b);
        EXPECT_TRUE(v.ok) << spec << ": " << v.message;
        int barriers = 0;
        for (const Op& op : b.program(0).ops) barriers += op.kind == OpKind::barrier;
        EXPECT_EQ(static_cast<size_t>(barriers) + 1, groups_of(g, 0).size()) << spec;
        EXPECT_EQ(b.total_ops(), g.total_ops() + static_cast<uint64_t>(barriers) * b.ranks()) << spec;
    }
}

// On a square torus the members of every group are 90-degree rotations of each other, routes and all: the half-ring
// tie of a member goes the way of its orbit's signed offset, so (k/2, b) +X rotates to (-b, k/2) +Y, (-k/2, -b) -X
// and (b, -k/2) -Y (the same turns at the same relative places; the group of the self-negating offsets aside).
TEST(A2AT, SquareTorusGroupsAreRotationsRoutesIncluded) {
    for (int k : {4, 6, 8}) {
        const std::string spec = "torus:" + std::to_string(k) + "x" + std::to_string(k);
        const Topology t = Topology::parse(spec);
        const Schedule s = a2at(spec);
        for (const auto& [begin, end] : groups_of(s, 0)) {
            std::vector<std::pair<int, int>> moves;  // signed (X hops, Y hops) of each send's route
            for (uint32_t i = begin; i < end; ++i) {
                const Op& op = s.program(0).ops[i];
                if (op.kind != OpKind::send) continue;
                int mx = 0, my = 0;
                for (const Link& l : t.route(0, op.peer, op.ties)) {
                    const auto a = t.coords(l.from), b = t.coords(l.to);
                    (a[0] != b[0] ? mx : my) += offset(a[0] != b[0] ? a[0] : a[1], a[0] != b[0] ? b[0] : b[1], k) > 0 ? 1 : -1;
                }
                moves.emplace_back(mx, my);
            }
            if (moves.size() != 4) continue;  // the half group
            for (size_t i = 0; i < 4; ++i)
                EXPECT_EQ(moves[(i + 1) % 4], std::make_pair(-moves[i].second, moves[i].first)) << spec << " member " << i;
        }
    }
}

TEST(AlltoallRing, ShiftsByKInStepKAndCostsPMinusOneMessages) {
    const Topology t = Topology::parse("torus:4x4");
    const Schedule s = make_schedule("alltoall/ring", 16, t);
    EXPECT_TRUE(verify(s).ok);
    for (int r = 0; r < 16; ++r) {
        int k = 1;
        for (const Op& op : s.program(r).ops)
            if (op.kind == OpKind::send) EXPECT_EQ(op.peer, (r + k++) % 16);
    }
    const auto model = parse_model("hockney:alpha=2us,beta=1ns/B");
    EXPECT_NEAR(estimate(s, t, *model, 4096).time_s, 15 * (2e-6 + 4096e-9), 1e-12);
    for (int P : {1, 2, 3, 7, 12}) EXPECT_TRUE(verify(make_schedule("alltoall/ring", P, Topology::full(P))).ok) << P;
    // On a torus the shift sends every ring one way: its busiest link is far above A2AT's.
    const Topology t8 = Topology::parse("torus:8x8");
    EXPECT_GT(link_loads(make_schedule("alltoall/ring", 64, t8), t8).max_units,
              link_loads(a2at("torus:8x8"), t8).max_units);
}

}  // namespace
}  // namespace collplan
