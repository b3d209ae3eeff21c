#include "collplan/sim/simulate.hpp"

#include <chrono>
#include <cmath>

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

double block_bytes(const Schedule& s, double size_bytes) {
    if (!(size_bytes >= 0) || !std::isfinite(size_bytes))
        throw Error("simulate: size " + std::to_string(size_bytes) + " bytes is invalid (allowed: >= 0)");
    return s.collective() == Collective::barrier ? 0.0 : size_bytes / s.size_blocks();
}

std::string describe_op(const Schedule& s, int rank, uint32_t op) {
    const Op& o = s.program(rank).ops.at(op);
    std::string what = to_string(o.kind);
    if (o.kind == OpKind::send) what += " to " + std::to_string(o.peer) + " tag " + std::to_string(o.tag());
    if (o.kind == OpKind::recv) what += " from " + std::to_string(o.peer) + " tag " + std::to_string(o.tag());
    return "rank " + std::to_string(rank) + " op " + std::to_string(op) + " (" + what + ")";
}

double simulate_memory_bytes(const Schedule& s, const Topology& topo, Fidelity f) {
    // Per op: cursor state, matching, its share of the event queue; per rank: ports, CPU, cursor; per directed
    // link (flow, packet): load, flows or buffers and credits per virtual channel, statistics.
    const double per_link = f == Fidelity::flow ? 64 : 256;
    return static_cast<double>(s.total_ops()) * 48 + static_cast<double>(s.ranks()) * 256 +
           (f == Fidelity::loggp ? 0.0 : static_cast<double>(topo.num_links()) * per_link);
}

SimResult simulate(const Schedule& s, const Topology& topo, const Model& model, const NetParams& net,
                   const SimOptions& opt) {
    if (topo.nodes() != s.ranks())
        throw Error("simulate: topology " + topo.spec() + " has " + std::to_string(topo.nodes()) +
                    " nodes but the schedule has " + std::to_string(s.ranks()) + " ranks (allowed: equal)");
    block_bytes(s, opt.size_bytes);  // validates the size
    opt.job_or_default().require_memory(simulate_memory_bytes(s, topo, opt.fidelity),
                                        std::string("simulate ") + to_string(opt.fidelity) + " of " + s.subject());
    const auto t0 = std::chrono::steady_clock::now();
    SimResult r;
    switch (opt.fidelity) {
        case Fidelity::loggp: r = simulate_loggp(s, model, net, opt); break;
        case Fidelity::flow: r = simulate_flow(s, topo, model, net, opt); break;
        case Fidelity::packet: r = simulate_packet(s, topo, model, net, opt); break;
    }
    r.fidelity = to_string(opt.fidelity);
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace collplan::sim
