// Packet-level network simulation (docs/simulation.md, "packet").
#pragma once
#include "collplan/model/model.hpp"
#include "collplan/schedule/schedule.hpp"
#include "collplan/sim/common/params.hpp"
#include "collplan/sim/common/result.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan::sim {

struct SimOptions;
SimResult simulate_packet(const Schedule& s, const Topology& topo, const Model& model, const NetParams& net,
                          const SimOptions& opt);

}  // namespace collplan::sim
