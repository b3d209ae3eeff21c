// Bindings of the n-way dissemination family's arithmetic and cost model (End et al.): last-round plans, 5-tuples,
// per-n costs and the choice of n. The Python side is python/collplan/dissemination.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "module.hpp"
#include "collplan/algorithms/allreduce/nway_cost.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace collplan {
namespace {

nb::dict tuple_dict(const nway::FiveTuple& t) {
    nb::dict d;
    d["s"] = t.s;
    d["l_snd"] = t.l_snd;
    d["l_rcv"] = t.l_rcv;  // -1: the base border g_B
    d["j_snd"] = t.j_snd;
    d["j_rcv"] = t.j_rcv;
    d["case"] = t.theorem_case();  // 1..5, 0 for the base border
    d["text"] = t.str();
    return d;
}

nb::dict plan_dict(const nway::Plan& p) {
    nb::dict d;
    d["ranks"] = p.geo.P;
    d["n"] = p.geo.n;
    d["rounds"] = p.geo.rounds;
    d["window"] = p.geo.window;
    d["tuple"] = p.tuple ? nb::object(tuple_dict(*p.tuple)) : nb::none();
    d["prefixes"] = p.last.prefix;
    std::vector<int64_t> dist;
    for (size_t i = 0; i < p.last.prefix.size(); ++i) dist.push_back(p.last.distance(i, p.geo.window));
    d["distances"] = dist;
    d["takeout"] = p.last.takeout;
    d["describe"] = p.describe();
    return d;
}

nb::dict cost_dict(const NwayCost& c) {
    nb::dict d;
    d["n"] = c.n;
    d["plan"] = plan_dict(c.plan);
    std::vector<int> msgs, reds, copies;
    std::vector<double> times;
    for (const NwayRound& r : c.rounds) {
        msgs.push_back(r.messages);
        reds.push_back(r.reductions);
        copies.push_back(r.copies);
        times.push_back(r.time_s);
    }
    d["messages_per_round"] = msgs;
    d["reductions_per_round"] = reds;
    d["copies_per_round"] = copies;
    d["time_per_round_s"] = times;
    d["messages"] = c.messages;
    d["bytes_sent"] = c.bytes_sent;
    d["reductions"] = c.reductions;
    d["copies"] = c.copies;
    d["time_s"] = c.time_s;
    return d;
}

std::string model_or_default(const std::string& spec) { return spec.empty() ? kDefaultDisseminationModel : spec; }

void bind_dissemination(nb::module_& m) {
    m.attr("default_dissemination_model") = kDefaultDisseminationModel;
    m.attr("dissemination_max_n") = kDisseminationMaxN;
    m.def("nway_plan", [](int ranks, int n, const std::string& takeout) {
        return plan_dict(nway::make_plan(ranks, n, nway::parse_takeout(takeout)));
    }, "ranks"_a, "n"_a, "takeout"_a = "keep");
    m.def("nway_five_tuples", [](int ranks, int n) {
        nb::list out;
        for (const auto& t : nway::five_tuples(ranks, n)) out.append(tuple_dict(t));
        return out;
    }, "ranks"_a, "n"_a);
    m.def("nway_costs", [](int ranks, const std::string& model, double size, int n_max, const std::string& takeout) {
        const auto mod = parse_model(model_or_default(model));
        nb::list out;
        for (const NwayCost& c : nway_costs(ranks, *mod, size, n_max, nway::parse_takeout(takeout)))
            out.append(cost_dict(c));
        return out;
    }, "ranks"_a, "model"_a = "", "size"_a = 8.0, "n_max"_a = kDisseminationMaxN, "takeout"_a = "keep");
    m.def("best_dissemination_n", [](int ranks, const std::string& model, double size, int n_max,
                                     const std::string& takeout) {
        const auto mod = parse_model(model_or_default(model));
        return best_dissemination_n(ranks, *mod, size, n_max, nway::parse_takeout(takeout));
    }, "ranks"_a, "model"_a = "", "size"_a = 8.0, "n_max"_a = kDisseminationMaxN, "takeout"_a = "keep");
}

const py::AddBinder add_dissemination(bind_dissemination);

}  // namespace
}  // namespace collplan
