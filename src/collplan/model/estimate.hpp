// Analytic estimate: the critical path of a schedule through its dependencies, with each node's ports
// serialised and no link contention (that is the simulators' job), priced by a Model. (Lower bounds: algorithms/lower_bounds.hpp.)
#pragma once
#include <vector>

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

// The same for several sizes: the partners are matched once, and up to `threads` walks (0: one per hardware
// thread) run at once within job.max_memory_bytes. Equal to estimate() size by size, whatever the threads.
std::vector<Estimate> estimate(const Schedule& s, const Topology& topo, const Model& model,
                               const std::vector<double>& sizes, const Job& job = default_job(), int threads = 0);

// What every walk of one schedule shares: each rank's first op's index, every send's and receive's partner and
// every op's units (20 bytes per op). Found once -- matching the channels is about as long as one walk -- and read
// by any number of walks at once (sizes, threads, calls). estimate() above makes one per call; a caller that walks
// one schedule again and again (the planner, size by size) keeps it. Holds references to all three arguments.
class Estimator {
public:
    // Refuses (Error) a topology of another size, a one-rank schedule that does not stand for every rank, and
    // more than job.max_memory_bytes.
    Estimator(const Schedule& s, const Topology& topo, const Model& model, const Job& job = default_job());
    std::vector<Estimate> run(const std::vector<double>& sizes, const Job& job = default_job(), int threads = 0) const;
    size_t memory_bytes() const;

    struct Ops {
        std::vector<size_t> base;       // per walked rank: its first op's index into the arrays below
        std::vector<uint32_t> partner;  // per op: the matched op's index on its peer (kNoPartner: none)
        std::vector<double> units;      // per op: its units (bytes = units * m)
    };

private:
    const Schedule& s_;
    const Topology& topo_;
    const Model& model_;
    Ops ops_;
};

// A lower bound of estimate(s, ..., size).time_s for each size, from each rank's ops alone (no partner, no order
// within a group), in one pass over the schedule: the planner skips a candidate's walk where the bound already
// loses. A schedule of one rank's program (any rank's: Problem::only_rank) bounds the whole schedule's walk by
// that rank's ops, so a few ranks generated alone bound a schedule too large to generate. A rank's ports serve its messages one at a time, its CPU its copies and reductions, and its
// groups run one after the other (schedule.hpp), so the walk ends no sooner than the largest of: (1) the CPU's
// local work; (2) for either direction's ports (both directions' on a simplex port), the busy time of the port
// booked most, less its longest booking, plus the shortest completion (its last booking starts after the others'
// busy times and completes that much later); (3) the sum over the rank's groups of (1) and (2) within each group.
// Handshakes, contention between ranks, explicit dependencies, barriers and host channels only add to the walk.
std::vector<double> estimate_lower_bounds(const Schedule& s, const Topology& topo, const Model& model,
                                          const std::vector<double>& sizes, const Job& job = default_job());


}  // namespace collplan
