// Analytic estimate: the critical path of a schedule through its dependencies, with each node's ports
// serialised and no link contention (that is the simulators' job), priced by a Model. (Lower bounds: algorithms/lower_bounds.hpp.)
#pragma once
#include "collplan/common/job.hpp"
#include "collplan/model/model.hpp"
#include "collplan/schedule/schedule.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan {

struct Estimate {
    double time_s = 0;          // completion of the last rank
    int critical_rank = 0;      // a rank that finishes last
};

// Prices `s` for a collective message size of `size_bytes` (allgather: per-rank contribution; alltoall: per
// destination block; allreduce: the whole vector; barrier: ignored). Block size m = size_bytes / size_blocks().
// Refuses (Error) before allocating when its state exceeds job.max_memory_bytes; polls job.cancel.
Estimate estimate(const Schedule& s, const Topology& topo, const Model& model, double size_bytes,
                  const Job& job = default_job());


}  // namespace collplan
