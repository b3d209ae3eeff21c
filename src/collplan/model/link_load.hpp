// Link loads of a schedule: every send routed over the topology (Topology::route with the send's tie hint),
// its units summed per directed link. The busiest link bounds every execution of the schedule on that network:
// it must carry max_units * m bytes, so time >= max_units * m * per_byte -- the "ideal time" of the A2AT study
// (busiest directed link load / link bandwidth). For all-to-all on an even k x k torus the best possible
// schedule puts k^3/8 blocks on its busiest link (the bisection bound of lower_bound_s gives the same value).
#pragma once
#include <cstdint>
#include <vector>

#include "collplan/model/model.hpp"
#include "collplan/schedule/schedule.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan {

struct LinkLoads {
    std::vector<uint64_t> units;  // per directed link id (Topology::link), units of m bytes
    uint64_t max_units = 0;       // the busiest link's load
    int busiest_link = -1;        // its id (the lowest one on ties; -1 when no send crosses a link)
    uint64_t total_units = 0;     // sum over links (= sum over sends of units * hops)
};

// Throws Error when the topology's node count differs from the schedule's ranks.
LinkLoads link_loads(const Schedule& s, const Topology& topo);

// max_units * (size_bytes / size_blocks) * model.per_byte_s(): the time the busiest link needs. Throws Error for a
// negative or non-finite size (block_bytes, schedule/walk.hpp).
double busiest_link_time_s(const Schedule& s, const Topology& topo, const Model& model, double size_bytes);

}  // namespace collplan
