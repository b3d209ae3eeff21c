// nanobind bindings of the core (IR, registry, verifier, topology, models, estimate) into collplan._core. The Python package wraps these in a friendlier API
// (python/collplan/__init__.py); keep this file a thin translation layer.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "module.hpp"
#include "collplan/algorithms/registry.hpp"
#include "collplan/common/units.hpp"
#include "collplan/algorithms/lower_bounds.hpp"
#include "collplan/model/estimate.hpp"
#include "collplan/schedule/reduction.hpp"
#include "collplan/schedule/symmetry.hpp"
#include "collplan/schedule/text.hpp"
#include "collplan/schedule/walk.hpp"
#include "collplan/verify/sweep.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace collplan {
namespace {

const char* kind_name(ParamKind k) {
    return k == ParamKind::integer ? "int" : k == ParamKind::integer_list ? "int_list" : "text";
}

nb::list algorithms_list() {
    nb::list out;
    for (const Algorithm& a : Registry::get().all()) {
        nb::list params;
        for (const ParamSpec& p : a.params) {
            nb::dict d;
            d["name"] = p.name;
            d["kind"] = kind_name(p.kind);
            d["default"] = p.default_value;
            d["min"] = p.min;
            d["max"] = p.max;
            d["help"] = p.help;
            params.append(d);
        }
        nb::dict d;
        d["name"] = a.name;
        d["collective"] = to_string(a.collective);
        d["summary"] = a.summary;
        d["source"] = a.source;
        d["params"] = params;
        d["topologies"] = a.default_topologies;
        d["rank_consistent_params"] = a.rank_consistent_params;
        d["mpi_default"] = a.mpi_default;
        out.append(d);
    }
    return out;
}

nb::list reduction_ops_list() {
    nb::list out;
    for (const ReductionOp& o : kReductionOps) {
        nb::dict d;
        d["name"] = o.name;
        d["commutative"] = o.commutative;
        d["idempotent"] = o.idempotent;
        d["invertible"] = o.invertible;
        out.append(d);
    }
    return out;
}

nb::dict result_dict(const VerifyResult& v) {
    nb::dict d;
    d["ok"] = v.ok;
    d["reason"] = v.reason;
    d["message"] = v.message;
    d["rank"] = v.rank;
    d["op"] = v.op;
    d["rank_consistent"] = v.rank_consistent;
    d["consistency"] = v.consistency;
    d["one_rank"] = v.one_rank;
    return d;
}

// The walk of the whole schedule (schedule/walk.hpp) as a list of events in walk order:
//   ("open", r, begin, end)        rank r opens the group [begin, end)
//   ("post", r, k)                 op k of rank r is posted (a local op completes at once)
//   ("match", sr, sk, rr, rk)      send sk of rank sr and recv rk of rank rr complete together
//   ("barrier", [(r, k), ...])     the barrier ops complete together
// and the first send or recv without a partner ((rank, op) or None), and whether every op completed.
nb::tuple walk_events(const Schedule& s) {
    if (!s.whole()) throw Error("the walk needs the whole schedule, not only rank " + std::to_string(s.only_rank()) + "'s");
    struct Events final : WalkVisitor {
        nb::list out;
        void open(int r, uint32_t begin, uint32_t end) override { out.append(nb::make_tuple("open", r, begin, end)); }
        void post(int r, uint32_t k) override { out.append(nb::make_tuple("post", r, k)); }
        void match(int sr, uint32_t sk, int rr, uint32_t rk) override { out.append(nb::make_tuple("match", sr, sk, rr, rk)); }
        void barrier(std::span<const std::pair<int, uint32_t>> ops) override {
            nb::list l;
            for (const auto& [r, k] : ops) l.append(nb::make_tuple(r, k));
            out.append(nb::make_tuple("barrier", l));
        }
    } events;
    const Job job = py::python_job(0);
    Walk walk(s, job);
    const bool complete = walk.run(events);
    nb::object unmatched = nb::none();
    for (int r = 0; r < s.ranks() && unmatched.is_none(); ++r)
        for (uint32_t k = 0; k < s.num_ops(r) && unmatched.is_none(); ++k) {
            const OpKind kind = s.program(r).ops[k].kind;
            if ((kind == OpKind::send || kind == OpKind::recv) && walk.partner(r, k) == kNoPartner)
                unmatched = nb::make_tuple(r, k);
        }
    return nb::make_tuple(events.out, unmatched, complete);
}

nb::list ops_list(const Schedule& s, int rank) {
    if (rank < 0 || rank >= s.ranks())
        throw Error("rank " + std::to_string(rank) + " out of range (allowed: 0.." + std::to_string(s.ranks() - 1) + ")");
    nb::list out;
    for (uint32_t i = 0; i < s.num_ops(rank); ++i) {
        const OpView v = s.op(rank, i);
        nb::dict d;
        d["kind"] = to_string(v.op.kind);
        d["peer"] = v.op.peer;
        d["tag"] = v.op.kind == OpKind::send || v.op.kind == OpKind::recv ? v.op.tag() : -1;
        d["port"] = static_cast<int>(v.op.port);
        d["fence"] = v.op.fence();
        d["reverse"] = (v.op.flags & opflag::reverse) != 0;
        d["inverse"] = (v.op.flags & opflag::inverse) != 0;
        d["units"] = v.units;
        auto segs = [](std::span<const Segment> ss) {
            std::vector<std::tuple<std::string, uint32_t, uint32_t>> r;
            for (const Segment& g : ss) r.emplace_back(to_string(g.buf()), g.first(), g.count);
            return r;
        };
        nb::list src, dst;
        for (auto& [b, f, c] : segs(v.src())) src.append(nb::make_tuple(b, f, c));
        for (auto& [b, f, c] : segs(v.dst())) dst.append(nb::make_tuple(b, f, c));
        d["src"] = src;
        d["dst"] = dst;
        d["deps"] = std::vector<uint32_t>(v.deps.begin(), v.deps.end());
        out.append(d);
    }
    return out;
}

}  // namespace
}  // namespace collplan

namespace collplan {
namespace {
void bind_core(nb::module_& m) {
    m.def("parse_size", &parse_size_bytes, "text"_a);
    m.def("parse_sizes", &parse_size_list, "text"_a);
    m.def("parse_time", &parse_time_s, "text"_a);
    m.def("format_bytes", &format_bytes, "bytes"_a);
    m.def("approx_bytes", &approx_bytes, "bytes"_a);
    m.def("format_time", &format_time, "seconds"_a);
    m.def("algorithms", &algorithms_list);
    m.def("reduction_ops", &reduction_ops_list);

    nb::class_<Topology>(m, "Topology")
        .def_static("parse", &Topology::parse, "spec"_a)
        .def_prop_ro("spec", &Topology::spec)
        .def_prop_ro("nodes", &Topology::nodes)
        .def_prop_ro("dims", &Topology::dims)
        .def("check_ranks", &Topology::check_ranks, "ranks"_a)
        .def("distance", &Topology::distance, "a"_a, "b"_a)
        .def("route", [](const Topology& t, int a, int b) {
            std::vector<std::pair<int, int>> out;
            for (const Link& l : t.route(a, b)) out.emplace_back(l.from, l.to);
            return out;
        }, "a"_a, "b"_a)
        .def_prop_ro("num_links", &Topology::num_links)
        .def_prop_ro("diameter", &Topology::diameter)
        .def_prop_ro("bisection_links", &Topology::bisection_links)
        .def("__repr__", [](const Topology& t) { return "Topology('" + t.spec() + "')"; });

    nb::class_<Schedule>(m, "Schedule")
        .def_prop_ro("collective", [](const Schedule& s) { return std::string(to_string(s.collective())); })
        .def_prop_ro("ranks", &Schedule::ranks)
        .def_ro("algorithm", &Schedule::algorithm)
        .def_ro("params", &Schedule::params)
        .def_ro("topology", &Schedule::topology)
        .def_ro("needs_commutative", &Schedule::needs_commutative)
        .def_ro("needs_inverse", &Schedule::needs_inverse)
        .def_ro("idempotent_only", &Schedule::idempotent_only)
        .def_ro("rank_consistent", &Schedule::rank_consistent)
        .def_ro("root", &Schedule::root)
        .def_prop_ro("symmetry", [](const Schedule& s) { return std::string(to_string(s.symmetry)); })
        .def_prop_ro("whole", &Schedule::whole)
        .def("check_symmetry", [](const Schedule& s, const std::string& sym) {
            return check_symmetry(s, parse_symmetry(sym));
        }, "symmetry"_a)
        .def_ro("counts", &Schedule::counts)
        .def_prop_ro("size_blocks", &Schedule::size_blocks)
        .def("blocks", [](const Schedule& s, const std::string& b) { return s.blocks(parse_buf(b)); }, "buffer"_a)
        .def_prop_ro("total_ops", &Schedule::total_ops)
        .def_prop_ro("memory_bytes", &Schedule::memory_bytes)
        .def_prop_ro("ports", [](const Schedule& s) {  // ports the ops name: the largest op.port + 1 (0: none named)
            int most = -1;
            for (int r = 0; r < s.ranks(); ++r)
                if (s.holds(r))
                    for (const Op& op : s.program(r).ops) most = std::max(most, static_cast<int>(op.port));
            return most + 1;
        })
        .def("num_ops", &Schedule::num_ops, "rank"_a)
        .def("ops", &ops_list, "rank"_a)
        .def("walk", &walk_events)
        .def("to_text", &to_text)
        .def_static("from_text", [](const std::string& text, uint64_t max_memory) {
            const Job job = py::python_job(max_memory);
            return from_text(text, job);
        }, "text"_a, "max_memory"_a = 0)
        .def("to_goal", &to_goal, "block_bytes"_a, "reduce_s_per_byte"_a = 0.0, "copy_s_per_byte"_a = 0.0)
        .def("__eq__", [](const Schedule& a, const Schedule& b) { return a == b; })
        .def("__repr__", [](const Schedule& s) {
            return "Schedule('" + s.algorithm + "', ranks=" + std::to_string(s.ranks()) + ", ops=" + std::to_string(s.total_ops()) + ")";
        });

    m.def("make_schedule", [](const std::string& name, int ranks, const std::string& topo,
                              const std::map<std::string, std::string>& params, std::vector<uint64_t> counts,
                              int root, uint64_t max_memory, int only_rank) {
        const Topology t = topo.empty() ? Topology::full(ranks) : Topology::parse(topo);
        const Job job = py::python_job(max_memory);
        nb::gil_scoped_release release;
        return make_schedule(name, ranks, t, params, Inputs(std::move(counts), root), only_rank, job);
    }, "name"_a, "ranks"_a, "topology"_a = "", "params"_a = std::map<std::string, std::string>{},
       "counts"_a = std::vector<uint64_t>{}, "root"_a = 0, "max_memory"_a = 0, "only_rank"_a = -1);
    m.def("algorithm_bounds", [](const std::string& name, int ranks, const std::string& topo,
                                 const std::map<std::string, std::string>& params, std::vector<uint64_t> counts,
                                 int root, const std::string& model_spec, const std::vector<double>& sizes) {
        const Topology t = topo.empty() ? Topology::full(ranks) : Topology::parse(topo);
        return algorithm_bounds(name, ranks, t, params, Inputs(std::move(counts), root), *parse_model(model_spec), sizes);
    }, "name"_a, "ranks"_a, "topology"_a, "params"_a, "counts"_a, "root"_a, "model"_a, "sizes"_a,
       "the algorithm's closed-form lower bound of the estimate at each size, without its schedule ([]: it has none)");
    // "" when the estimate of rank 0's program of a schedule with this symmetry equals the whole walk's on the
    // topology and model (schedule/symmetry.hpp), else why not.
    m.def("symmetric_estimate_refusal", [](const std::string& sym, const std::string& topo, const std::string& model) {
        return symmetric_estimate_refusal(parse_symmetry(sym), Topology::parse(topo), *parse_model(model));
    }, "symmetry"_a, "topology"_a, "model"_a);
    // The collective descriptors (collective.hpp), in the enum's order.
    m.def("collectives", [] {
        nb::list out;
        for (Collective c : kCollectives) {
            const CollectiveInfo& i = describe(c);
            nb::dict d;
            d["name"] = std::string(i.name);
            d["mpi_name"] = std::string(i.mpi_name);
            d["rooted"] = i.rooted;
            d["reduction"] = i.reduction;
            d["counts"] = i.counts == Counts::none ? "none" : i.counts == Counts::per_rank ? "per_rank" : "matrix";
            d["in_place"] = i.in_place == InPlace::none ? "none" : i.in_place == InPlace::send_everywhere ? "send"
                            : i.in_place == InPlace::send_at_root ? "send_at_root" : "recv_at_root";
            d["size"] = std::string(i.size);
            // The blocks of in and out at P = 2 with one block per unit, the larger over the two ranks (a rooted
            // collective's at the rank that has the buffer): 0 none, 1 one block, 2 one per rank.
            const CollShape two{2, 0, 1};
            d["blocks_at_2"] = nb::make_tuple(std::max(buffer_blocks(c, two, 0, Buf::in), buffer_blocks(c, two, 1, Buf::in)),
                                              std::max(buffer_blocks(c, two, 0, Buf::out), buffer_blocks(c, two, 1, Buf::out)));
            out.append(d);
        }
        return out;
    });
    m.def("default_max_memory", &default_max_memory_bytes);
    m.def("physical_memory", &physical_memory_bytes);
    m.def("require_memory", [](double bytes, const std::string& what, uint64_t max_memory) {
        py::python_job(max_memory).require_memory(bytes, what);
    }, "bytes"_a, "what"_a, "max_memory"_a = 0);

    m.def("applies", [](const std::string& name, int ranks, const std::string& topo,
                        const std::map<std::string, std::string>& params) {
        const Algorithm& a = Registry::get().find(name);
        const Topology t = topo.empty() ? Topology::full(ranks) : Topology::parse(topo);
        t.check_ranks(ranks);
        Problem p{a.collective, ranks, t, validate_params(a, params), {}};
        return a.applies ? a.applies(p) : std::string();
    }, "name"_a, "ranks"_a, "topology"_a = "", "params"_a = std::map<std::string, std::string>{});

    m.def("verify", [](const Schedule& s, const std::string& op, bool races, uint64_t max_memory) {
        VerifyOptions o = verify_options_for_op(op);
        o.check_races = races;
        const Job job = py::python_job(max_memory);
        VerifyResult v;
        {
            nb::gil_scoped_release release;
            v = verify(s, o, job);
        }
        return result_dict(v);
    }, "schedule"_a, "op"_a = "sum", "check_races"_a = true, "max_memory"_a = 0);

    m.def("one_rank_verify_refusal", [](const Schedule& s) { return one_rank_verify_refusal(s); }, "schedule"_a);
    m.def("verify_by_symmetry", [](const std::string& name, int ranks, const std::string& topo,
                                   const std::map<std::string, std::string>& params, const std::string& op,
                                   bool races, uint64_t max_memory, nb::object progress) {
        VerifyOptions o = verify_options_for_op(op);
        o.check_races = races;
        const Job job = py::python_job(max_memory);
        const Topology t = topo.empty() ? Topology::full(ranks) : Topology::parse(topo);
        std::function<void(int, int)> report;
        if (!progress.is_none())
            report = [&progress](int done, int) {
                nb::gil_scoped_acquire acquire;
                progress(done);
            };
        VerifyResult v;
        {
            nb::gil_scoped_release release;
            v = verify_by_symmetry(name, ranks, t, params, o, job, report);
        }
        return result_dict(v);
    }, "name"_a, "ranks"_a, "topology"_a = "", "params"_a = std::map<std::string, std::string>{}, "op"_a = "sum",
       "check_races"_a = true, "max_memory"_a = 0, "progress"_a = nb::none());

    m.def("sweep_cases", [](const std::string& name, int max_ranks) {
        int declined = 0;
        std::vector<std::tuple<int, std::string, std::string, std::map<std::string, std::string>, int,
                               std::vector<uint64_t>>> out;
        for (const SweepCase& c : sweep_cases(Registry::get().find(name), max_ranks, &declined))
            out.emplace_back(c.ranks, c.topology, c.op, c.params, c.root, c.counts);
        return std::make_pair(out, declined);
    }, "name"_a, "max_ranks"_a);
    m.def("run_case", [](const std::string& name, int ranks, const std::string& topo, const std::string& op,
                         const std::map<std::string, std::string>& params, int root, std::vector<uint64_t> counts,
                         uint64_t max_memory) {
        const Job job = py::python_job(max_memory);
        VerifyResult v;
        {
            nb::gil_scoped_release release;
            v = run_case(SweepCase{name, ranks, topo, op, params, root, std::move(counts)}, job);
        }
        return result_dict(v);
    }, "name"_a, "ranks"_a, "topology"_a, "op"_a, "params"_a = std::map<std::string, std::string>{}, "root"_a = 0,
       "counts"_a = std::vector<uint64_t>{}, "max_memory"_a = 0);

    m.def("check_model", [](const std::string& spec) { return parse_model(spec)->spec(); }, "spec"_a);
    m.def("estimate", [](const Schedule& s, const std::string& topo, const std::string& model_spec,
                         const std::vector<double>& sizes, uint64_t max_memory, int threads) {
        const Topology t = topo.empty() ? Topology::full(s.ranks()) : Topology::parse(topo);
        const auto model = parse_model(model_spec);
        const Job job = py::python_job(max_memory);
        std::vector<double> out;
        nb::gil_scoped_release release;
        for (const Estimate& e : estimate(s, t, *model, sizes, job, threads)) out.push_back(e.time_s);
        return out;
    }, "schedule"_a, "topology"_a, "model"_a, "sizes"_a, "max_memory"_a = 0, "threads"_a = 0,
       "every size's estimate, the sizes walked on up to `threads` threads (0: one per hardware thread)");
    // One schedule's estimate prepared once (model/estimate.hpp, Estimator): the planner walks it size by size. The
    // topology and model are on the heap, where the Estimator's references to them stay valid.
    struct PreparedEstimate {
        std::unique_ptr<Topology> topo;
        std::unique_ptr<Model> model;
        std::unique_ptr<Estimator> est;
    };
    nb::class_<PreparedEstimate>(m, "Estimator")
        .def("__init__", [](PreparedEstimate* self, const Schedule& s, const std::string& topo,
                            const std::string& model_spec, uint64_t max_memory) {
            PreparedEstimate made{std::make_unique<Topology>(topo.empty() ? Topology::full(s.ranks())
                                                                          : Topology::parse(topo)),
                                  parse_model(model_spec), nullptr};
            const Job job = py::python_job(max_memory);
            {
                nb::gil_scoped_release release;
                made.est = std::make_unique<Estimator>(s, *made.topo, *made.model, job);
            }
            new (self) PreparedEstimate{std::move(made)};  // only once all is made: an error leaves nothing behind
        }, "schedule"_a, "topology"_a, "model"_a, "max_memory"_a = 0, nb::keep_alive<1, 2>(),
           "the schedule's partners matched once (model/estimate.hpp): estimate() then walks it at any sizes")
        .def("estimate", [](const PreparedEstimate& e, const std::vector<double>& sizes, uint64_t max_memory,
                            int threads) {
            const Job job = py::python_job(max_memory);
            std::vector<double> out;
            nb::gil_scoped_release release;
            for (const Estimate& x : e.est->run(sizes, job, threads)) out.push_back(x.time_s);
            return out;
        }, "sizes"_a, "max_memory"_a = 0, "threads"_a = 0)
        .def_prop_ro("memory_bytes", [](const PreparedEstimate& e) { return e.est->memory_bytes(); });
    m.def("estimate_lower_bounds", [](const Schedule& s, const std::string& topo, const std::string& model_spec,
                                      const std::vector<double>& sizes, uint64_t max_memory) {
        const Topology t = topo.empty() ? Topology::full(s.ranks()) : Topology::parse(topo);
        const auto model = parse_model(model_spec);
        const Job job = py::python_job(max_memory);
        nb::gil_scoped_release release;
        return estimate_lower_bounds(s, t, *model, sizes, job);
    }, "schedule"_a, "topology"_a, "model"_a, "sizes"_a, "max_memory"_a = 0,
       "a lower bound of every size's estimate from each rank's ops alone (model/estimate.hpp)");
    m.def("lower_bound", [](const std::string& collective, int ranks, const std::string& topo,
                            const std::string& model_spec, double size) {
        const Topology t = topo.empty() ? Topology::full(ranks) : Topology::parse(topo);
        return lower_bound_s(parse_collective(collective), ranks, t, *parse_model(model_spec), size);
    }, "collective"_a, "ranks"_a, "topology"_a, "model"_a, "size"_a);
}

const py::AddBinder add_core(bind_core);
}  // namespace
}  // namespace collplan
