// The best lower bound known for each collective on a topology and model: the latency, per-node bandwidth and
// bisection bounds, the gossip paper's bounds for allgather (allgather/gossip_bounds.hpp) and the rooted and
// reduce-scatter bounds of Chan et al.; docs/models.md gives each bound's source. The planner prints them beside
// every estimate.
#pragma once
#include "collplan/model/model.hpp"
#include "collplan/schedule/collective.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan {

double lower_bound_s(Collective c, int ranks, const Topology& topo, const Model& model, double size_bytes);

}  // namespace collplan
