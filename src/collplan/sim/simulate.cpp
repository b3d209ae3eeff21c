#include "collplan/sim/simulate.hpp"

#include <chrono>
#include <cmath>

#include "collplan/schedule/walk.hpp"
#include "collplan/sim/flow/flow.hpp"
#include "collplan/sim/loggp/loggp.hpp"
#include "collplan/sim/packet/packet.hpp"

namespace collplan::sim {

Fidelity parse_fidelity(const std::string& name) {
    if (name == "loggp") return Fidelity::loggp;
    if (name == "flow") return Fidelity::flow;
    if (name == "packet") return Fidelity::packet;
    throw Error("unknown fidelity '" + name + "' (allowed: loggp, flow, packet)");
}

const char* to_string(Fidelity f) {
    switch (f) {
        case Fidelity::loggp: return "loggp";
        case Fidelity::flow: return "flow";
        case Fidelity::packet: return "packet";
    }
    return "?";
}

double simulate_memory_bytes(const Schedule& s, const Topology& topo, Fidelity f, const NetParams& net, int ports,
                             int time_bins) {
    // Per op: cursor state, matching, its share of the event queue; per rank: ports, CPU, cursor; per directed
    // link (flow, packet): load, flows or buffers and credits per virtual channel, statistics.
    const double ops_ranks = static_cast<double>(s.total_ops()) * 48 + static_cast<double>(s.ranks()) * 256;
    if (f == Fidelity::loggp) return ops_ranks;
    // Host (sim/common/host.hpp): each node's send (and, flow with node_contention, receive) PortSet holds
    // ports + 1 std::deque, and an empty libstdc++ deque already allocates its map and a 512-byte node (~640 B).
    // Measured with bcast/binomial on torus:100x100..300x300 (peak RSS of the Python call, ports=1): ~3.3 KiB
    // per node for flow, ~3.7 KiB for packet; the terms below are a little above that.
    const double port_sets = f == Fidelity::flow && net.node_contention ? 2 : 1;
    const double per_rank = 1024 + 768.0 * (std::max(1, ports) + 1) * port_sets;
    // Per directed link: the simulator's arrays plus the result's per-link arrays (and their Python lists).
    const double per_link = f == Fidelity::flow ? 256 : 512;
    // The link-use timeline: at most 2 * bins doubles per direction class (result.hpp), returned as lists.
    const double directions = 2.0 * std::max<size_t>(1, topo.dims().size()) + 2;
    const double timeline = directions * std::max(1, time_bins) * (16 + 32);
    return ops_ranks + static_cast<double>(s.ranks()) * per_rank + static_cast<double>(topo.num_links()) * per_link +
           timeline;
}

SimResult simulate(const Schedule& s, const Topology& topo, const Model& model, const NetParams& net,
                   const SimOptions& opt) {
    if (topo.nodes() != s.ranks())
        throw Error("simulate: topology " + topo.spec() + " has " + std::to_string(topo.nodes()) +
                    " nodes but the schedule has " + std::to_string(s.ranks()) + " ranks (allowed: equal)");
    block_bytes(s, opt.size_bytes, "simulate");  // validates the size
    if (opt.time_bins < 1 || opt.time_bins > kMaxTimeBins)
        throw Error("simulate: bins " + std::to_string(opt.time_bins) + " is out of range (allowed: 1.." +
                    std::to_string(kMaxTimeBins) + ")");
    const int ports = net.ports > 0 ? net.ports : std::max(1, model.ports);
    SimOptions o = opt;
    o.what = std::string("simulate ") + to_string(opt.fidelity) + " of " + s.subject();
    o.memory_bytes = simulate_memory_bytes(s, topo, opt.fidelity, net, ports, opt.time_bins);
    o.job_or_default().require_memory(o.memory_bytes, o.what);
    const auto t0 = std::chrono::steady_clock::now();
    SimResult r;
    switch (opt.fidelity) {
        case Fidelity::loggp: r = simulate_loggp(s, model, net, o); break;
        case Fidelity::flow: r = simulate_flow(s, topo, model, net, o); break;
        case Fidelity::packet: r = simulate_packet(s, topo, model, net, o); break;
    }
    r.fidelity = to_string(opt.fidelity);
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace collplan::sim
