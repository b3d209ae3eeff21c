// Bindings of the alltoallv family (communication matrices, phased plans) and the DRS_N protocol simulation.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "module.hpp"
#include "collplan/algorithms/alltoallv/unstructured_common.hpp"
#include "collplan/algorithms/alltoallv/drs_n_sim.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace collplan {
namespace {

int ranks_of(const std::vector<uint64_t>& m) {
    int P = 0;
    while (static_cast<size_t>(P) * P < m.size()) ++P;
    if (static_cast<size_t>(P) * P != m.size() || P == 0)
        throw Error("communication matrix has " + std::to_string(m.size()) + " entries (allowed: P*P, P >= 1)");
    return P;
}

nb::dict stats_dict(const std::vector<uint64_t>& m) {
    const alltoallv::MatrixStats st = alltoallv::matrix_stats(m, ranks_of(m));
    nb::dict d;
    d["ranks"] = st.ranks;
    d["messages"] = st.messages;
    d["total_units"] = st.total_units;
    d["max_sent"] = st.max_sent;
    d["min_sent"] = st.min_sent;
    d["avg_sent"] = st.avg_sent;
    d["max_recv"] = st.max_recv;
    d["min_recv"] = st.min_recv;
    d["max_len"] = st.max_len;
    d["min_len"] = st.min_len;
    d["avg_len"] = st.avg_len;
    d["degree"] = st.degree;
    d["max_row_units"] = st.max_row_units;
    d["max_col_units"] = st.max_col_units;
    return d;
}

// The phases of a phased algorithm (alltoallv::plan_of names them).
nb::dict plan_dict(const std::string& name, const std::vector<uint64_t>& m, uint64_t seed, int cutoff_pct) {
    const int P = ranks_of(m);
    const alltoallv::PhasePlan plan = alltoallv::plan_of(name, m, P, seed, cutoff_pct);
    nb::list phases;
    for (const auto& ph : plan.phases) {
        std::vector<std::tuple<int, int, uint64_t>> xs;
        for (const auto& x : ph) xs.emplace_back(x.src, x.dst, x.units);
        phases.append(xs);
    }
    nb::dict d;
    d["phases"] = phases;
    d["work"] = plan.work;
    d["check"] = alltoallv::check_plan(plan, m, P);
    return d;
}

void bind_alltoallv(nb::module_& m) {
    m.def("testset_uniform", &alltoallv::testset_uniform, "ranks"_a, "d"_a, "seed"_a, "units"_a = 1);
    m.def("testset_nonuniform", &alltoallv::testset_nonuniform, "ranks"_a, "d"_a, "max_units"_a, "seed"_a);
    m.def("matrix_stats", &stats_dict, "matrix"_a);
    m.def("alltoallv_plan", &plan_dict, "name"_a, "matrix"_a, "seed"_a = 1, "cutoff_pct"_a = 200);
    m.def("simulate_drs_n", [](const std::vector<uint64_t>& mat, const std::string& topo, const std::string& model_spec,
                               double unit_bytes, uint64_t seed, double am_s, double handler_s, double retry_delay_s) {
        const int P = ranks_of(mat);
        const Topology t = topo.empty() ? Topology::full(P) : Topology::parse(topo);
        const auto model = parse_model(model_spec);
        DrsnResult r;
        {
            nb::gil_scoped_release release;
            r = simulate_drs_n(mat, P, t, *model, unit_bytes, DrsnOptions{seed, am_s, handler_s, retry_delay_s});
        }
        nb::dict d;
        d["time_s"] = r.time_s;
        d["inquiries"] = r.inquiries;
        d["refused"] = r.refused;
        d["rank_done_s"] = r.rank_done_s;
        return d;
    }, "matrix"_a, "topology"_a, "model"_a, "unit_bytes"_a, "seed"_a = 1, "am_s"_a = 5e-6, "handler_s"_a = 0.0,
       "retry_delay_s"_a = 0.0);
}

const py::AddBinder add_alltoallv(bind_alltoallv);
}  // namespace
}  // namespace collplan
