// Flow-level network simulation: every message is a flow along its route (Topology::route); the bandwidth of each
// directed link is shared max-min fairly among the flows that cross it (progressive filling), recomputed whenever
// a flow starts or ends. A message first waits a fixed startup -- the model's message time minus its bandwidth
// term, model.message(bytes, hops).recv_done - bytes * model.per_byte_s() -- and then flows; with no other flow
// on its links it takes exactly the model's time, which is what the cross-check against the estimate tests.
#pragma once
#include "collplan/model/model.hpp"
#include "collplan/schedule/schedule.hpp"
#include "collplan/sim/common/params.hpp"
#include "collplan/sim/common/result.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan::sim {

struct SimOptions;
SimResult simulate_flow(const Schedule& s, const Topology& topo, const Model& model, const NetParams& net,
                        const SimOptions& opt);

}  // namespace collplan::sim
