// Bindings of the simulators (src/collplan/sim) into collplan._core: simulate() returns a dict that the Python
// API (python/collplan/sim.py) turns into a Simulation.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "module.hpp"
#include "collplan/sim/simulate.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace collplan {
namespace {

nb::dict result_dict(const sim::SimResult& r) {
    nb::dict d;
    d["fidelity"] = r.fidelity;
    d["time_s"] = r.time_s;
    d["critical_rank"] = r.critical_rank;
    d["rank_time_s"] = r.rank_time_s;
    d["events"] = r.events;
    d["messages"] = r.messages;
    d["packets"] = r.packets;
    d["wall_s"] = r.wall_s;
    d["state_bytes"] = r.state_bytes;
    d["link_s_per_byte"] = r.link_s_per_byte;
    d["link_bytes"] = r.link_bytes;
    d["link_busy_s"] = r.link_busy_s;
    d["directions"] = r.directions;
    d["link_direction"] = std::vector<int>(r.link_direction.begin(), r.link_direction.end());
    d["bin_s"] = r.bin_s;
    d["direction_bytes"] = r.direction_bytes;
    return d;
}

void bind_sim(nb::module_& m) {
    m.def("check_network", [](const std::string& spec) { return sim::parse_net_params(spec).spec(); }, "spec"_a);
    m.def("simulate", [](const Schedule& s, const std::string& topo, const std::string& model_spec,
                         const std::string& net_spec, const std::string& fidelity, double size, uint64_t seed,
                         bool progress, int bins, uint64_t max_memory) {
        const Topology t = topo.empty() ? Topology::full(s.ranks()) : Topology::parse(topo);
        const auto model = parse_model(model_spec);
        const sim::NetParams net = sim::parse_net_params(net_spec);
        sim::SimOptions opt;
        opt.fidelity = sim::parse_fidelity(fidelity);
        opt.size_bytes = size;
        opt.seed = seed;
        opt.progress = progress;
        opt.time_bins = bins;
        const Job job = py::python_job(max_memory);
        opt.job = &job;
        sim::SimResult r;
        {
            nb::gil_scoped_release release;
            r = sim::simulate(s, t, *model, net, opt);
        }
        return result_dict(r);
    }, "schedule"_a, "topology"_a, "model"_a, "network"_a = "", "fidelity"_a = "flow", "size"_a = 0.0,
       "seed"_a = 0, "progress"_a = false, "bins"_a = 200, "max_memory"_a = 0);
    m.def("topology_links", [](const std::string& spec) {
        const Topology t = Topology::parse(spec);
        std::vector<std::pair<int, int>> out;
        const int n = t.num_links();
        out.reserve(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
            const Link l = t.link(i);
            out.emplace_back(l.from, l.to);
        }
        return out;
    }, "spec"_a);
}

const py::AddBinder add_sim(bind_sim);

}  // namespace
}  // namespace collplan
