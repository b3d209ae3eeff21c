#include "collplan/sim/packet/packet.hpp"

namespace collplan::sim {
SimResult simulate_packet(const Schedule&, const Topology&, const Model&, const NetParams&, const SimOptions&) {
    throw Error("simulate: packet fidelity not implemented yet");
}
}  // namespace collplan::sim
