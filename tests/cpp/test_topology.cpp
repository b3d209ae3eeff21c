// Tests for topology.hpp: parsing, link numbering, routes against breadth-first search over the link graph,
// diameters and bisection widths (brute force on small shapes).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collplan/common/error.hpp"
#include "collplan/topology/families.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan {
namespace {

const char* const kShapes[] = {"line:7",  "ring:8",      "ring:9",      "ring:2",       "mesh:3x5",  "torus:4x4",
                               "torus:5x3x2", "torus:2x2", "torus:1x3", "hypercube:4", "full:6", "fattree:2,3",
                               "fattree:4,2", "fattree:3,1", "line:1", "hypercube:0"};

// Adjacency lists of the directed link graph over end nodes and switches.
std::vector<std::vector<int>> link_graph(const Topology& t) {
    std::vector<std::vector<int>> adj(t.nodes());
    for (int id = 0; id < t.num_links(); ++id) {
        Link l = t.link(id);
        size_t need = static_cast<size_t>(std::max(l.from, l.to)) + 1;
        if (adj.size() < need) adj.resize(need);
        adj[l.from].push_back(l.to);
    }
    return adj;
}

std::vector<int> bfs(const std::vector<std::vector<int>>& adj, int src) {
    std::vector<int> dist(adj.size(), -1);
    std::queue<int> q;
    dist[src] = 0;
    q.push(src);
    while (!q.empty()) {
        int v = q.front();
        q.pop();
        for (int w : adj[v]) {
            if (dist[w] < 0) {
                dist[w] = dist[v] + 1;
                q.push(w);
            }
        }
    }
    return dist;
}

std::string parse_error(const std::string& spec) {
    try {
        Topology::parse(spec);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

TEST(Topology, ParseValid) {
    struct Case {
        const char* spec;
        TopoKind kind;
        int nodes;
        std::vector<int> dims;
        const char* canonical;
    };
    const Case cases[] = {
        {"line:7", TopoKind::line, 7, {7}, "line:7"},
        {"ring:08", TopoKind::ring, 8, {8}, "ring:8"},
        {"mesh:3x5", TopoKind::mesh, 15, {3, 5}, "mesh:3x5"},
        {"mesh:1x4", TopoKind::mesh, 4, {1, 4}, "mesh:1x4"},
        {"torus:8x8", TopoKind::torus, 64, {8, 8}, "torus:8x8"},
        {"torus:5x3x2", TopoKind::torus, 30, {5, 3, 2}, "torus:5x3x2"},
        {"torus:2x2x2x2x2x2x2x2", TopoKind::torus, 256, {2, 2, 2, 2, 2, 2, 2, 2}, "torus:2x2x2x2x2x2x2x2"},
        {"hypercube:3", TopoKind::hypercube, 8, {2, 2, 2}, "hypercube:3"},
        {"hypercube:0", TopoKind::hypercube, 1, {}, "hypercube:0"},
        {"hypercube:20", TopoKind::hypercube, 1 << 20, std::vector<int>(20, 2), "hypercube:20"},
        {"full:6", TopoKind::full, 6, {}, "full:6"},
        {"full:1", TopoKind::full, 1, {}, "full:1"},
        {"fattree:4,2", TopoKind::fattree, 16, {4, 2}, "fattree:4,2"},
        {"fattree:2,20", TopoKind::fattree, 1 << 20, {2, 20}, "fattree:2,20"},
        {"fattree:1024,2", TopoKind::fattree, 1 << 20, {1024, 2}, "fattree:1024,2"},
        {"mesh:2048x2048", TopoKind::mesh, 1 << 22, {2048, 2048}, "mesh:2048x2048"},
    };
    for (const Case& c : cases) {
        Topology t = Topology::parse(c.spec);
        EXPECT_EQ(t.kind(), c.kind) << c.spec;
        EXPECT_EQ(t.nodes(), c.nodes) << c.spec;
        EXPECT_EQ(t.dims(), c.dims) << c.spec;
        EXPECT_EQ(t.spec(), c.canonical) << c.spec;
        EXPECT_EQ(Topology::parse(t.spec()).spec(), t.spec());
    }
    EXPECT_EQ(Topology::full(5).spec(), "full:5");
    EXPECT_EQ(Topology::full(5).nodes(), 5);
    EXPECT_THROW(Topology::full(0), Error);
}

TEST(Topology, ParseInvalid) {
    for (const char* bad :
         {"", "torus", "torus:", "torus:4y4", "torus:4x", "torus:x4", "torus:4xx4", "mesh:4x0", "mesh:0",
          "ring:0", "ring:-3", "ring:+3", "ring:3.0", "ring: 3", "RING:3", "line:", "line:0", "full:0", "full:x",
          "hypercube:-1", "hypercube:21", "hypercube:", "hypercube:2x2", "fattree:1,2", "fattree:2,0", "fattree:2",
          "fattree:2,", "fattree:,2", "fattree:2,2,2", "fattree:2,21", "fattree:1025,2", "fattree:0,0",
          "mesh:2x2x2x2x2x2x2x2x2", "mesh:4096x2048", "ring:4194305", "ring:99999999999999999999999", "cube:4",
          "torus:4x4:", ":4", "mesh:4x4 "}) {
        std::string msg = parse_error(bad);
        ASSERT_FALSE(msg.empty()) << "accepted '" << bad << "'";
        EXPECT_EQ(msg.rfind(std::string("invalid topology '") + bad + "'", 0), 0u) << msg;
        EXPECT_NE(msg.find("(valid: line:P, ring:P, mesh:AxB[xC...], torus:AxB[xC...], hypercube:d, full:P, "
                           "fattree:k,n)"),
                  std::string::npos)
            << msg;
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
    EXPECT_EQ(parse_error("torus:4y4"), "invalid topology 'torus:4y4' (valid: line:P, ring:P, mesh:AxB[xC...], "
                                        "torus:AxB[xC...], hypercube:d, full:P, fattree:k,n)");
}

TEST(Topology, CheckRanks) {
    Topology t = Topology::parse("torus:4x4");
    EXPECT_NO_THROW(t.check_ranks(16));
    try {
        t.check_ranks(15);
        FAIL() << "15 ranks accepted on 16 nodes";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "topology torus:4x4 has 16 nodes but 15 ranks were given");
    }
    EXPECT_THROW(t.check_ranks(17), Error);
}

TEST(Topology, CoordsNumbering) {
    Topology t = Topology::parse("mesh:3x5x2");
    for (int node = 0; node < t.nodes(); ++node) {
        std::vector<int> c = t.coords(node);
        ASSERT_EQ(c.size(), 3u);
        EXPECT_EQ(c[0] + 3 * c[1] + 15 * c[2], node);
        EXPECT_LT(c[0], 3);
        EXPECT_LT(c[1], 5);
        EXPECT_LT(c[2], 2);
    }
    EXPECT_EQ(Topology::parse("hypercube:3").coords(6), (std::vector<int>{0, 1, 1}));
    EXPECT_THROW(t.coords(30), Error);
    EXPECT_THROW(t.coords(-1), Error);
}

TEST(Topology, LinkIdsDenseAndConsistent) {
    for (const char* spec : kShapes) {
        Topology t = Topology::parse(spec);
        std::set<std::pair<int, int>> seen;
        for (int id = 0; id < t.num_links(); ++id) {
            Link l = t.link(id);
            EXPECT_EQ(l.id, id) << spec;
            EXPECT_NE(l.from, l.to) << spec;
            EXPECT_GE(std::min(l.from, l.to), 0) << spec;
            EXPECT_TRUE(seen.insert({l.from, l.to}).second) << spec << " duplicate link " << l.from << "->" << l.to;
        }
        for (const auto& [from, to] : seen) EXPECT_TRUE(seen.count({to, from})) << spec << " link without reverse";
        EXPECT_THROW(t.link(t.num_links()), Error) << spec;
        EXPECT_THROW(t.link(-1), Error) << spec;
    }
}

TEST(Topology, LinkCountsClosedForm) {
    EXPECT_EQ(Topology::parse("line:7").num_links(), 2 * 6);
    EXPECT_EQ(Topology::parse("ring:8").num_links(), 2 * 8);
    EXPECT_EQ(Topology::parse("ring:2").num_links(), 2);  // one cable, not two
    EXPECT_EQ(Topology::parse("ring:1").num_links(), 0);
    EXPECT_EQ(Topology::parse("mesh:3x5").num_links(), 2 * (2 * 5 + 4 * 3));
    EXPECT_EQ(Topology::parse("torus:4x4").num_links(), 2 * 2 * 16);
    EXPECT_EQ(Topology::parse("torus:5x3x2").num_links(), 2 * (30 + 30 + 15));
    EXPECT_EQ(Topology::parse("torus:2x2").num_links(), 2 * 4);
    EXPECT_EQ(Topology::parse("hypercube:4").num_links(), 4 * 16);
    EXPECT_EQ(Topology::parse("full:6").num_links(), 30);
    EXPECT_EQ(Topology::parse("fattree:2,3").num_links(), 2 * 3 * 8);
    EXPECT_EQ(Topology::parse("fattree:4,2").num_links(), 2 * 2 * 16);
}

TEST(Topology, RoutesAreShortestChains) {
    for (const char* spec : kShapes) {
        Topology t = Topology::parse(spec);
        auto adj = link_graph(t);
        for (int a = 0; a < t.nodes(); ++a) {
            std::vector<int> dist = bfs(adj, a);
            for (int b = 0; b < t.nodes(); ++b) {
                std::vector<Link> r = t.route(a, b);
                ASSERT_EQ(static_cast<int>(r.size()), t.distance(a, b)) << spec << " " << a << "->" << b;
                EXPECT_EQ(t.distance(a, b), dist[b]) << spec << " " << a << "->" << b;
                int at = a;
                for (const Link& l : r) {
                    EXPECT_EQ(l.from, at) << spec << " " << a << "->" << b;
                    Link same = t.link(l.id);
                    EXPECT_EQ(same.from, l.from) << spec;
                    EXPECT_EQ(same.to, l.to) << spec;
                    at = l.to;
                }
                EXPECT_EQ(at, b) << spec << " " << a << "->" << b;
            }
        }
    }
}

TEST(Topology, DiameterIsLongestDistance) {
    for (const char* spec : kShapes) {
        Topology t = Topology::parse(spec);
        int longest = 0;
        for (int a = 0; a < t.nodes(); ++a)
            for (int b = 0; b < t.nodes(); ++b) longest = std::max(longest, t.distance(a, b));
        EXPECT_EQ(t.diameter(), longest) << spec;
    }
}

TEST(Topology, RoutingRules) {
    // Torus tie (even side, exactly half way) goes in the + direction: 0 -> 1 -> 2 on ring:4.
    std::vector<Link> r = Topology::parse("ring:4").route(0, 2);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].to, 1);
    r = Topology::parse("ring:4").route(2, 0);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].to, 3);
    // Shorter way: 0 -> 6 on ring:8 goes backwards through 7.
    r = Topology::parse("ring:8").route(0, 6);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].to, 7);
    // Dimension 0 first on a mesh: (0,0) -> (2,4) on mesh:3x5 passes (2,0).
    r = Topology::parse("mesh:3x5").route(0, 14);
    ASSERT_EQ(r.size(), 6u);
    EXPECT_EQ(r[1].to, 2);
    // e-cube: lowest differing bit first; 0 -> 13 visits 1, 5, 13.
    r = Topology::parse("hypercube:4").route(0, 13);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].to, 1);
    EXPECT_EQ(r[1].to, 5);
    // Fat tree: leaves on one switch are 2 hops apart; the up/down turn happens at one switch.
    Topology ft = Topology::parse("fattree:4,2");
    EXPECT_EQ(ft.distance(0, 3), 2);
    EXPECT_EQ(ft.distance(0, 4), 4);
    r = ft.route(0, 4);
    EXPECT_GE(r[0].to, ft.nodes());  // switch ids follow the end nodes
    EXPECT_THROW(ft.route(0, 16), Error);
    EXPECT_THROW(ft.distance(-1, 0), Error);
}

TEST(Topology, FatTreeUpLinksFollowDestination) {
    // D-mod-k: from one source, destinations with different lowest digits leave the first switch on different
    // up-links, so traffic to them is spread.
    Topology ft = Topology::parse("fattree:4,2");
    std::set<int> up_links;
    for (int b = 4; b < 8; ++b) up_links.insert(ft.route(0, b)[1].id);
    EXPECT_EQ(up_links.size(), 4u);
}

// Minimum over all balanced partitions of the directed links from one side to the other.
int64_t brute_force_bisection(const Topology& t) {
    const int p = t.nodes();
    std::vector<Link> links;
    for (int id = 0; id < t.num_links(); ++id) links.push_back(t.link(id));
    int64_t best = -1;
    for (unsigned mask = 0; mask < (1u << p); ++mask) {
        if (std::popcount(mask) != p / 2) continue;
        int64_t cut = 0;
        for (const Link& l : links) {
            cut += ((mask >> l.from) & 1) && !((mask >> l.to) & 1);
        }
        best = best < 0 ? cut : std::min(best, cut);
    }
    return best;
}

TEST(Topology, BisectionBruteForce) {
    for (const char* spec : {"line:6", "ring:8", "ring:2", "mesh:4x3", "torus:4x4", "torus:4x2", "hypercube:4",
                             "full:6", "full:5", "torus:2x2x2"}) {
        Topology t = Topology::parse(spec);
        EXPECT_EQ(t.bisection_links(), brute_force_bisection(t)) << spec;
    }
}

TEST(Topology, BisectionClosedForm) {
    EXPECT_EQ(Topology::parse("line:100").bisection_links(), 1);
    EXPECT_EQ(Topology::parse("ring:100").bisection_links(), 2);
    EXPECT_EQ(Topology::parse("mesh:14x10").bisection_links(), 10);
    EXPECT_EQ(Topology::parse("torus:8x8").bisection_links(), 16);
    EXPECT_EQ(Topology::parse("torus:8x2").bisection_links(), 4);
    EXPECT_EQ(Topology::parse("hypercube:6").bisection_links(), 32);
    EXPECT_EQ(Topology::parse("full:7").bisection_links(), 12);
    EXPECT_EQ(Topology::parse("fattree:4,3").bisection_links(), 32);
    EXPECT_EQ(Topology::parse("ring:1").bisection_links(), 0);
    EXPECT_EQ(Topology::parse("full:1").bisection_links(), 0);
}

TEST(Topology, LargeShapes) {
    Topology t = Topology::parse("torus:64x64x64");
    EXPECT_EQ(t.distance(0, t.nodes() - 1), 3);
    EXPECT_EQ(t.diameter(), 96);
    EXPECT_EQ(static_cast<int>(t.route(0, 32 + 64 * 32 + 4096 * 32).size()), 96);
    Topology h = Topology::parse("hypercube:20");
    EXPECT_EQ(h.distance(0, (1 << 20) - 1), 20);
    EXPECT_EQ(h.num_links(), 20 << 20);
    Topology f = Topology::parse("fattree:2,20");
    EXPECT_EQ(f.distance(0, (1 << 20) - 1), 40);
    EXPECT_EQ(f.route(0, (1 << 20) - 1).size(), 40u);
    // full:P beyond 46341 nodes has more directed links than int32 ids can number; distances still work.
    Topology big = Topology::full(100000);
    EXPECT_EQ(big.distance(3, 99999), 1);
    EXPECT_THROW(big.num_links(), Error);
}

}  // namespace
}  // namespace collplan

namespace collplan {
namespace {

TEST(Families, EveryShapeForVerifyAndTheBalancedOnesForTheRuntime) {
    EXPECT_EQ(family_topologies("ring", 6), std::vector<std::string>{"ring:6"});
    EXPECT_EQ(family_topologies("hypercube", 8), std::vector<std::string>{"hypercube:3"});
    EXPECT_TRUE(family_topologies("hypercube", 6).empty());
    EXPECT_EQ(family_topologies("torus2d", 12), (std::vector<std::string>{"torus:2x6", "torus:3x4", "torus:4x3", "torus:6x2"}));
    EXPECT_EQ(family_topologies("mesh3d", 8), std::vector<std::string>{"mesh:2x2x2"});
    EXPECT_THROW(family_topologies("torus4d", 16), Error);
    // The runtime's: the grid a balanced-grid function gives (largest side first), first dimension fastest, and
    // the 2-D one transposed; no hypercube below P = 2.
    const BalancedGrid fake = [](int P, int nd) { return nd == 2 ? std::vector<int>{P / 3, 3} : std::vector<int>{P / 4, 2, 2}; };
    EXPECT_EQ(balanced_family_shapes("torus2d", 12, fake), (std::vector<std::string>{"torus:3x4", "torus:4x3"}));
    EXPECT_EQ(balanced_family_shapes("mesh3d", 12, fake), std::vector<std::string>{"mesh:2x2x3"});
    EXPECT_EQ(balanced_family_shapes("line", 5, fake), std::vector<std::string>{"line:5"});
    EXPECT_TRUE(balanced_family_shapes("hypercube", 1, fake).empty());
    EXPECT_TRUE(balanced_family_shapes("torus2d", 7, [](int, int) { return std::vector<int>{}; }).empty());
    try {
        balanced_family_shapes("donut", 4, fake);
        FAIL() << "unknown family accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("'donut'"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace collplan
