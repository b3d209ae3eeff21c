// LogGOPS event simulation of a schedule with the semantics of LogGOPSim (Hoefler, Schneider, Lumsdaine,
// "LogGOPSim -- Simulating Large-Scale Applications in the LogGOPS Model", LSAP 2010), so that a schedule exported
// to GOAL (schedule/text.hpp, to_goal) gives the same times in both; the mapping and every difference are in
// docs/simulation.md ("loggp").
#pragma once
#include "collplan/model/model.hpp"
#include "collplan/schedule/schedule.hpp"
#include "collplan/sim/common/params.hpp"
#include "collplan/sim/common/result.hpp"
#include "collplan/sim/common/time.hpp"

namespace collplan::sim {

struct SimOptions;

struct LogGPParams {
    Time L, o, g;
    double G_ps = 0, O_ps = 0;  // per byte, in picoseconds (may be fractional)
    int64_t S = 65535;          // eager up to S bytes, rendezvous above
    int cpus = 1, nics = 1;
};

// A loggp model gives its own L, o, g, G, O; any other model L = startup_s(), G = per_byte_s(), o = g = O = 0.
// Keys given in `net` (L, o, g, G, O, eager, cpus, ports) override.
LogGPParams loggp_params(const Model& model, const NetParams& net);

SimResult simulate_loggp(const Schedule& s, const Model& model, const NetParams& net, const SimOptions& opt);

}  // namespace collplan::sim
