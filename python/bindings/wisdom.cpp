// Bindings of the wisdom format (src/collplan/runtime/wisdom.hpp) into collplan._core, so the Python API's
// algorithm="auto" and the planner read wisdom with the same code as the PMPI library.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>

#include "module.hpp"
#include "collplan/runtime/wisdom.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace collplan {
namespace {

nb::dict entry_dict(const WisdomEntry& e) {
    nb::dict d;
    d["collective"] = to_string(e.collective);
    if (e.ranks >= 0) d["ranks"] = e.ranks;
    if (!e.topology.empty()) d["topology"] = e.topology;
    if (!e.op.empty()) d["op"] = e.op;
    d["min_bytes"] = e.min_bytes;
    if (e.max_bytes != UINT64_MAX) d["max_bytes"] = e.max_bytes;
    d["algorithm"] = e.algorithm;
    d["params"] = e.params;
    return d;
}

void bind_wisdom(nb::module_& m) {
    m.def("parse_wisdom", [](const std::string& text) {
        nb::list out;
        for (const WisdomEntry& e : parse_wisdom(text).entries) out.append(entry_dict(e));
        return out;
    }, "text"_a, "The entries of a wisdom document (raises CollplanError naming what is wrong).");
    m.def("wisdom_lookup", [](const std::string& text, const std::string& collective, int ranks, uint64_t bytes,
                              const std::string& op, const std::string& topology) -> nb::object {
        const Wisdom w = parse_wisdom(text);
        const WisdomEntry* e = w.lookup(parse_collective(collective), ranks, bytes, op, topology);
        return e ? nb::object(entry_dict(*e)) : nb::none();
    }, "text"_a, "collective"_a, "ranks"_a, "bytes"_a, "op"_a = "", "topology"_a = "",
       "The first matching entry of a wisdom document, or None.");
}

const py::AddBinder add_wisdom(bind_wisdom);

}  // namespace
}  // namespace collplan
