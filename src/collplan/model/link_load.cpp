// Link loads of a schedule (see link_load.hpp).
#include "collplan/model/link_load.hpp"

#include "collplan/schedule/walk.hpp"

namespace collplan {

LinkLoads link_loads(const Schedule& s, const Topology& topo) {
    if (topo.nodes() != s.ranks())
        throw Error("link_loads: topology " + topo.spec() + " has " + std::to_string(topo.nodes()) +
                    " nodes but the schedule has " + std::to_string(s.ranks()) + " ranks (allowed: equal)");
    LinkLoads out;
    out.units.assign(static_cast<size_t>(topo.num_links()), 0);
    for (int r = 0; r < s.ranks(); ++r) {
        const RankProgram& prog = s.program(r);
        for (uint32_t k = 0; k < prog.ops.size(); ++k) {
            const Op& op = prog.ops[k];
            if (op.kind != OpKind::send) continue;
            const uint64_t units = s.op(r, k).units;
            for (const Link& l : topo.route(r, op.peer, op.ties)) {
                out.units[static_cast<size_t>(l.id)] += units;
                out.total_units += units;
            }
        }
    }
    for (size_t i = 0; i < out.units.size(); ++i)
        if (out.units[i] > out.max_units) out.max_units = out.units[i], out.busiest_link = static_cast<int>(i);
    return out;
}

double busiest_link_time_s(const Schedule& s, const Topology& topo, const Model& model, double size_bytes) {
    const double m = block_bytes(s, size_bytes, "busiest_link_time_s");
    return static_cast<double>(link_loads(s, topo).max_units) * m * model.per_byte_s();
}

}  // namespace collplan
