// nanobind bindings of the gossip family's model pieces: the paper's lower bounds, the cost formulas in its units
// and the parameter search (the "small program"), and the parameters a generator resolves from "auto".
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "module.hpp"
#include "collplan/algorithms/allgather/gossip_tune.hpp"
#include "collplan/algorithms/allgather/gossip_bounds.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace collplan {
namespace {

// The problem, checked as make_schedule checks it (registry.cpp): the parameter search below indexes the grid's
// sides (dims()[0]), which a full: or other non-grid topology does not have.
Problem problem_of(const std::string& name, const std::string& topo, const std::map<std::string, std::string>& params) {
    const Algorithm& a = Registry::get().find(name);
    const Topology t = Topology::parse(topo);
    Problem p{a.collective, t.nodes(), t, validate_params(a, params), {}};
    const std::string why = a.applies ? a.applies(p) : "";
    if (!why.empty())
        throw Error(a.name + " does not apply to P=" + std::to_string(p.ranks) + " on " + t.spec() + ": " + why);
    return p;
}

// A grid (line, ring, mesh, torus) of min_dims..max_dims sides, else an Error naming the topology.
void require_grid(const char* what, const Topology& t, int min_dims, int max_dims) {
    const int d = static_cast<int>(t.dims().size());
    if (!gossip::grid_topology(t) || d < min_dims || d > max_dims)
        throw Error(std::string(what) + ": topology " + t.spec() + " is not a grid of " + std::to_string(min_dims) +
                    (min_dims == max_dims ? "" : ".." + std::to_string(max_dims)) +
                    " dimensions (allowed: line, ring, mesh, torus)");
}

nb::dict circ_dict(const gossip::CircParams& c, double cost) {
    nb::dict d;
    d["a"] = c.a, d["b"] = c.b, d["k"] = c.k, d["radix"] = c.radix, d["cost"] = cost;
    return d;
}

void bind_gossip(nb::module_& m) {
    m.def("gossip_bounds", [](int ranks, const std::string& topo, const std::string& model, double size) {
        const GossipBounds b = gossip_bounds(ranks, Topology::parse(topo), *parse_model(model), size);
        nb::dict d;
        d["applies"] = b.applies, d["lemma1_s"] = b.lemma1_s, d["concentration_s"] = b.concentration_s;
        d["lower_bound_s"] = b.lower_bound_s;
        return d;
    }, "ranks"_a, "topology"_a, "model"_a, "size"_a);
    m.def("theorem1_shape", &theorem1_shape, "n"_a, "r"_a);
    m.def("gossip_best_circgos", [](int n, bool wrap, double r, double unit, int a, int b, int k, int radix) {
        gossip::CircSearch s;
        s.a = a, s.b = b, s.k = k, s.radix = radix;
        double cost = 0;
        const gossip::CircParams c = gossip::best_circgos(n, wrap, r, unit, s, &cost);
        return circ_dict(c, cost);
    }, "n"_a, "wrap"_a, "r"_a, "unit"_a = 1.0, "a"_a = 0, "b"_a = 0, "k"_a = 0, "radix"_a = 3);
    m.def("gossip_units", [](const std::string& alg, int n, bool wrap, double r, double unit, int a, int b, int k,
                             int radix) {
        return gossip::units_of(alg, n, wrap, {a, b, k, radix}, r, unit);
    }, "algorithm"_a, "n"_a, "wrap"_a, "r"_a, "unit"_a = 1.0, "a"_a = 1, "b"_a = 2, "k"_a = 1, "radix"_a = 3);
    m.def("gossip_best_diagonal", [](const std::string& topo, double r, bool sum_diagonal, int colours, int a, int b,
                                     int k, int radix) {
        const Topology t = Topology::parse(topo);
        require_grid("gossip_best_diagonal", t, 2, 1 << 20);
        gossip::DiagParams base;
        base.sum_diagonal = sum_diagonal, base.radix = radix;
        base.colours = colours > 0 ? colours : static_cast<int>(t.dims().size());
        gossip::DiagSearch s;
        s.a = a, s.b = b, s.k = k;
        double cost = 0;
        const gossip::DiagParams p = gossip::best_diagonal(t, base, r, s, &cost);
        nb::dict d;
        d["a"] = p.a, d["b"] = p.b, d["k"] = p.k, d["colours"] = p.colours, d["cost"] = cost;
        return d;
    }, "topology"_a, "r"_a, "sum_diagonal"_a = true, "colours"_a = 0, "a"_a = 0, "b"_a = 0, "k"_a = 0, "radix"_a = 3);
    m.def("gossip_highdimgos_units", [](const std::string& topo, const std::vector<std::map<std::string, int>>& phases,
                                        int colours, double r) {
        const Topology t = Topology::parse(topo);
        require_grid("gossip_highdimgos_units", t, 1, 1 << 20);
        std::vector<gossip::PhaseChoice> ph;
        for (const auto& x : phases) {
            auto get = [&](const char* k, int dflt) { return x.count(k) ? x.at(k) : dflt; };
            ph.push_back({get("alg", 1), {get("a", 1), get("b", 2), get("k", 1), get("radix", 3)}});
        }
        if (ph.empty()) throw Error("gossip_highdimgos_units: no phases given (allowed: one dict per phase)");
        return gossip::highdimgos_units(t.dims(), t.kind() == TopoKind::torus || t.kind() == TopoKind::ring, ph,
                                        colours, r);
    }, "topology"_a, "phases"_a, "colours"_a, "r"_a);
    m.def("gossip_resolved_params", [](const std::string& name, const std::string& topo,
                                       const std::map<std::string, std::string>& params) {
        const Problem p = problem_of(name, topo, params);
        nb::list out;
        if (name.find("torgos") != std::string::npos || name.find("cubgos") != std::string::npos) {
            const gossip::DiagParams d = gossip::diag_params(p, name.find("cubgos") != std::string::npos);
            nb::dict x;
            x["a"] = d.a, x["b"] = d.b, x["k"] = d.k, x["colours"] = d.colours, x["radix"] = d.radix;
            out.append(x);
            return out;
        }
        if (name.find("circgos") != std::string::npos) {
            const int n = p.topology.dims()[0];
            nb::dict x = circ_dict(gossip::circ_params(p, n, gossip::wraps(p.topology, 0), 1.0, 0), 0);
            x["alg"] = 3;
            out.append(x);
            return out;
        }
        const int colours = name.find("coloured") != std::string::npos ? static_cast<int>(p.topology.dims().size()) : 1;
        for (const gossip::PhaseChoice& c : gossip::phase_choices(p, colours)) {
            nb::dict x = circ_dict(c.circ, 0);
            x["alg"] = c.alg;
            out.append(x);
        }
        return out;
    }, "algorithm"_a, "topology"_a, "params"_a = std::map<std::string, std::string>{});
}

const py::AddBinder add_gossip(bind_gossip);

}  // namespace
}  // namespace collplan
