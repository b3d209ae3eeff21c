// A test helper shared by the tests that hold a model rule alike in every evaluator (test_host_sharing.cpp,
// test_node_costs.cpp): the time of one algorithm on full:P by the estimate, the loggp or the flow simulator.
#pragma once
#include <string>

#include "collplan/algorithms/registry.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/sim/simulate.hpp"

namespace collplan {

// how: "estimate", "loggp" or "flow"; model: a model spec; size: bytes of the whole collective.
inline double evaluated_time(const std::string& how, const std::string& algorithm, int P, const std::string& model,
                      double size) {
    const Topology full = Topology::parse("full:" + std::to_string(P));
    const Schedule s = make_schedule(algorithm, P, full);
    const auto m = parse_model(model);
    if (how == "estimate") return estimate(s, full, *m, size).time_s;
    sim::SimOptions opt;
    opt.fidelity = how == "flow" ? sim::Fidelity::flow : sim::Fidelity::loggp;
    opt.size_bytes = size;
    return sim::simulate(s, full, *m, sim::parse_net_params(""), opt).time_s;
}

}  // namespace collplan
