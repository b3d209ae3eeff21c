// Simulator parameters: the machine's network beyond its analytic model. A spec is "key=value,..." with units
// (times 10ns, sizes 2KiB, bandwidths 4GB/s or per-byte times 0.25ns/B); the machine files' [network] table is
// written as such a spec (python/collplan/machines.py). Each fidelity reads the keys it needs and ignores the
// others; every key, its default and which fidelity uses it are listed in docs/simulation.md.
#pragma once
#include <cstdint>
#include <string>

#include "collplan/common/error.hpp"

namespace collplan::sim {

enum class Switching : uint8_t { vct, wormhole };
enum class Pacing : uint8_t { none, gap, hops, load };
enum class Arbitration : uint8_t { round_robin, random, fcfs };
enum class Sharing : uint8_t { maxmin, rtt };

struct NetParams {
    // All fidelities.
    int ports = 0;                   // ports (NICs) per node; 0 = the model's `ports`
    // loggp: a parameter < 0 is taken from the model (a loggp model's own value; see docs/simulation.md).
    double L_s = -1, o_s = -1, g_s = -1, G_s_per_byte = -1, O_s_per_byte = -1;
    int64_t eager_bytes = 65535;     // S: messages of more bytes use the rendezvous protocol (LogGOPSim's default)
    int cpus = 1;                    // CPUs per node
    // flow and packet
    double link_s_per_byte = -1;     // link bandwidth as time per byte; < 0 = the model's per_byte_s()
    bool node_contention = true;     // flow: a node receives on at most `ports` messages at once
    Sharing sharing = Sharing::maxmin;  // flow: plain max-min, or weighted by 1/hops (SimGrid CM02's RTT weights)
    double crosstraffic = 0;         // flow: a flow also uses this fraction of its rate on the reverse route (acks)
    // packet
    uint64_t mtu = 2048;             // payload bytes per packet
    uint64_t header = 0;             // header bytes added to every packet
    uint64_t flit = 16;              // buffer and credit granularity
    double link_latency_s = 10e-9;   // wire delay per hop (also the delay of a returning credit)
    double router_latency_s = 16e-9; // router pipeline (route, VC allocation, switch allocation, traversal)
    uint64_t buffer = 8192;          // bytes per virtual channel per input port
    int vcs = 2;                     // virtual channels per input port
    bool dateline = true;            // tori: a packet moves to the upper half of the VCs after the wrap-around
    Switching switching = Switching::vct;
    bool voq = false;                // virtual output queues at the input ports (no head-of-line blocking)
    double inject_s_per_byte = -1;   // NIC -> router per port; < 0 = link bandwidth
    double eject_s_per_byte = -1;    // router -> NIC per port; < 0 = link bandwidth
    double overhead_s = 0;           // software overhead per message before its first packet leaves
    Pacing pacing = Pacing::none;
    double pacing_gap_s = 0;         // pacing=gap: at least this much between the starts of a NIC's packets
    double pacing_factor = 1;        // pacing=hops: a message of h hops is injected at link bandwidth / (factor h);
                                     // pacing=load: at link bandwidth / (factor n (1 + w/N)), n its share of its
                                     // group's busiest link, w its slack (sim/packet/packet.hpp)
    Arbitration arbitration = Arbitration::round_robin;

    std::string spec() const;        // canonical: the keys that differ from the defaults, in the order above
};

// Parses "key=value,..." (empty = all defaults); throws Error naming the bad key or value and what is allowed.
NetParams parse_net_params(const std::string& spec);

}  // namespace collplan::sim
