// Fuzz target: topology specs ("torus:4x4", "fattree:4,2", topology/topology.hpp) and, on what parses, the
// routing and link numbering for a few node pairs chosen from a hash of the input.
// Properties: errors are collplan::Error only; spec() parses again to the same spec() and node count; a route
// has distance() links, starts at its source and ends at its destination, and every link id is in range.
// (Link numbering refuses topologies with more than 2^31 links, with collplan::Error.)
#include "collplan/topology/topology.hpp"
#include "fuzz_common.hpp"

using namespace collplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string in = fuzz::text_of(data, size);
    Topology t;
    if (!fuzz::accepted([&] { t = Topology::parse(in); })) return 0;
    const std::string s1 = t.spec();
    Topology t2;
    if (!fuzz::accepted([&] { t2 = Topology::parse(s1); })) fuzz::die("Topology::parse refused its spec():", s1);
    FUZZ_CHECK(t2.spec() == s1 && t2.nodes() == t.nodes(), s1);
    // Link numbering may refuse a topology too large to number (full:P with P > 46341) -- with collplan::Error.
    fuzz::accepted([&] {
        const int n = t.nodes();
        const uint64_t h = fuzz::hash_of(in);
        const int pairs[][2] = {{0, n - 1}, {n - 1, 0}, {static_cast<int>(h % n), static_cast<int>((h >> 24) % n)}};
        const int links = t.num_links();
        for (const auto& pr : pairs) {
            if (t.distance(pr[0], pr[1]) > 4096) continue;  // a route is O(hops): line:4194304 has 4 million
            const std::vector<Link> r = t.route(pr[0], pr[1], static_cast<uint8_t>(h >> 56));
            FUZZ_CHECK(static_cast<int>(r.size()) == t.distance(pr[0], pr[1]), s1);
            if (!r.empty()) FUZZ_CHECK(r.front().from == pr[0] && r.back().to == pr[1], s1);
            for (const Link& l : r) {
                FUZZ_CHECK(l.id >= 0 && l.id < links, s1);
                const Link back = t.link(l.id);
                FUZZ_CHECK(back.from == l.from && back.to == l.to, s1);
            }
        }
        if (links > 0) (void)t.link(static_cast<int>(h % static_cast<uint64_t>(links)));
        (void)t.bisection_links();
        (void)t.coords(static_cast<int>(h % n));
    });
    return 0;
}
