// Fuzz target: simulator network parameters ("mtu=2KiB,vcs=4,link_bw=4GB/s", sim/common/params.hpp), the
// [network] table of every machine file and the --network option.
// Properties: errors are collplan::Error only; spec() parses again to the same spec().
#include "collplan/sim/common/params.hpp"
#include "fuzz_common.hpp"

using namespace collplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string in = fuzz::text_of(data, size);
    sim::NetParams p;
    if (!fuzz::accepted([&] { p = sim::parse_net_params(in); })) return 0;
    const std::string s1 = p.spec();
    sim::NetParams p2;
    if (!fuzz::accepted([&] { p2 = sim::parse_net_params(s1); })) fuzz::die("parse_net_params refused its spec():", s1);
    FUZZ_CHECK(p2.spec() == s1, s1 + "\nreparsed: " + p2.spec());
    return 0;
}
