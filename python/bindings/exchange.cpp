// Bindings of the complete-exchange family's model and optimiser (src/collplan/algorithms/alltoall/multiphase_opt.hpp), the
// registry's candidate parameter sets, and the link loads of a schedule (src/collplan/model/link_load.hpp).
// A "model" argument is "ipsc860" (the paper's constants for the given d) or any model spec.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "collplan/algorithms/registry.hpp"
#include "collplan/model/link_load.hpp"
#include "collplan/algorithms/alltoall/multiphase_opt.hpp"
#include "module.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace collplan {
namespace {

nb::dict costs_dict(const CircuitCosts& c) {
    nb::dict d;
    d["lambda_s"] = c.lambda_s;
    d["tau_s_per_byte"] = c.tau_s_per_byte;
    d["delta_s"] = c.delta_s;
    d["rho_s_per_byte"] = c.rho_s_per_byte;
    d["barrier_s"] = c.barrier_s;
    return d;
}

void bind_exchange(nb::module_& m) {
    m.def("multiphase_costs", [](const std::string& model, int d) { return costs_dict(circuit_costs(model, d)); },
          "model"_a, "d"_a);
    m.def("multiphase_cost", [](const std::string& model, int d, const std::vector<int>& partition, double size) {
        return multiphase_cost_s(circuit_costs(model, d), d, partition, size);
    }, "model"_a, "d"_a, "partition"_a, "size"_a);
    m.def("direct_exchange_cost", [](const std::string& model, int d, double size) {
        return direct_exchange_cost_s(circuit_costs(model, d), d, size);
    }, "model"_a, "d"_a, "size"_a);
    m.def("standard_exchange_cost", [](const std::string& model, int d, double size) {
        return standard_exchange_cost_s(circuit_costs(model, d), d, size);
    }, "model"_a, "d"_a, "size"_a);
    m.def("optimal_partition", [](const std::string& model, int d, double size) {
        const PartitionChoice c = optimal_partition(circuit_costs(model, d), d, size);
        nb::dict out;
        out["partition"] = c.partition;
        out["cost_s"] = c.cost_s;
        out["evaluations"] = c.evaluations;
        out["s_star"] = c.s_star;
        return out;
    }, "model"_a, "d"_a, "size"_a);
    m.def("threshold_table", [](const std::string& model, int d) {
        nb::list out;
        for (const Threshold& t : threshold_table(circuit_costs(model, d), d))
            out.append(nb::make_tuple(t.m_from_bytes, t.partition));
        return out;
    }, "model"_a, "d"_a);
    m.def("integer_partitions", &integer_partitions, "d"_a);

    m.def("candidates", [](const std::string& name, int ranks, const std::string& topo, const std::string& model,
                           double min_bytes, double max_bytes) {
        const Topology t = topo.empty() ? Topology::full(ranks) : Topology::parse(topo);
        t.check_ranks(ranks);
        const auto mdl = parse_model(model);
        return candidate_params(Registry::get().find(name), CandidateQuery{ranks, t, *mdl, min_bytes, max_bytes});
    }, "name"_a, "ranks"_a, "topology"_a, "model"_a, "min_bytes"_a, "max_bytes"_a);

    m.def("link_loads", [](const Schedule& s, const std::string& topo) {
        const Topology t = topo.empty() ? Topology::full(s.ranks()) : Topology::parse(topo);
        LinkLoads ll;
        {
            nb::gil_scoped_release release;
            ll = link_loads(s, t);
        }
        nb::dict out;
        out["units"] = ll.units;
        out["max_units"] = ll.max_units;
        out["busiest_link"] = ll.busiest_link;
        out["total_units"] = ll.total_units;
        return out;
    }, "schedule"_a, "topology"_a);
}

const py::AddBinder add_exchange(bind_exchange);
}  // namespace
}  // namespace collplan
