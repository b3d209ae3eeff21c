// Simulation of any schedule on a machine (topology + analytic model + network parameters), at one of three
// fidelities (docs/simulation.md):
//   loggp  -- LogGOPS event simulation with LogGOPSim's semantics (o, g, L, G, O, eager/rendezvous threshold S,
//             several CPUs and NICs per node); the network has no contention.
//   flow   -- each message a flow along its route, link bandwidth shared max-min fairly among active flows.
//   packet -- MTU packets through routers: virtual cut-through (or wormhole), credit flow control with finite
//             buffers, virtual channels with a dateline on tori, several injection/ejection ports, pacing.
// Time is integer picoseconds inside (sim/common/time.hpp); results are seconds. Deterministic for a seed.
#pragma once
#include <cstdint>
#include <string>

#include "collplan/model/model.hpp"
#include "collplan/schedule/schedule.hpp"
#include "collplan/sim/common/params.hpp"
#include "collplan/sim/common/result.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan::sim {

enum class Fidelity : uint8_t { loggp, flow, packet };
Fidelity parse_fidelity(const std::string& name);  // throws Error naming the allowed ones
const char* to_string(Fidelity f);

struct SimOptions {
    Fidelity fidelity = Fidelity::flow;
    double size_bytes = 0;   // the collective's message size (as for estimate(): block size m = size / size_blocks)
    uint64_t seed = 0;       // random arbitration (packet, arbitration=random); otherwise unused
    bool progress = false;   // progress line on stderr for runs longer than two seconds
    int time_bins = 200;     // flow/packet: bins of the per-direction link use over time
    const Job* job = nullptr;  // memory limit and cancellation (nullptr: default_job())
    // Set by simulate(): its up-front memory estimate and what the job is called, so that flow and packet can
    // check the state they grow while running (Host::run) against the same limit.
    double memory_bytes = 0;
    std::string what;
    const Job& job_or_default() const { return job ? *job : default_job(); }
};

// Bins of the link-use timeline (SimOptions::time_bins): 1..kMaxTimeBins. A plot shows a few thousand at most;
// 10^6 bins per direction class keep the timeline (and its result lists) under ~0.5 GiB on a 3-D torus.
inline constexpr int kMaxTimeBins = 1000000;

// The simulator's memory on top of the schedule (per op, per rank, per link of the topology, the timeline) for
// `ports` ports per node (flow and packet) and time_bins bins.
double simulate_memory_bytes(const Schedule& s, const Topology& topo, Fidelity f, const NetParams& net = {},
                             int ports = 1, int time_bins = 200);

// Throws Error for a topology whose node count differs from the schedule's ranks, a negative size, a schedule
// that cannot complete (an unmatched op or a deadlock: "run `collplan verify`"), or parameters out of range.
// Refuses (Error) before allocating when simulate_memory_bytes exceeds the job's limit, and flow/packet again while
// running when that estimate plus the state they have grown (event queue, messages, flows, packets) exceeds it;
// polls its cancellation. time_bins outside 1..kMaxTimeBins is an Error.
SimResult simulate(const Schedule& s, const Topology& topo, const Model& model, const NetParams& net,
                   const SimOptions& opt);

// The bytes of an op of `units` blocks of m bytes (block_bytes, schedule/walk.hpp), rounded to whole bytes.
inline uint64_t op_bytes(uint64_t units, double m) { return static_cast<uint64_t>(std::llround(static_cast<double>(units) * m)); }

}  // namespace collplan::sim
