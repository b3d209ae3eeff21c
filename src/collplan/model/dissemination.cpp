#include "collplan/model/dissemination.hpp"

#include <cmath>

namespace collplan {
namespace {

// Price one group of a rank's program (see the header) and add it to the round it belongs to.
void price_group(const Schedule& s, int r, uint32_t begin, uint32_t end, const Model& model, double bytes,
                 NwayCost& c) {
    int sends = 0, recvs = 0;
    double local = 0;
    NwayRound tally;
    for (uint32_t i = begin; i < end; ++i) {
        const OpView v = s.op(r, i);
        switch (v.op.kind) {
            case OpKind::send: ++sends; break;
            case OpKind::recv: ++recvs; break;
            case OpKind::reduce: ++tally.reductions, local += model.reduce_s(bytes); break;
            case OpKind::copy: ++tally.copies, local += model.copy_s(bytes); break;
            default: throw Error("nway_cost: unexpected " + std::string(to_string(v.op.kind)) + " op");
        }
    }
    double comm = 0;
    if (sends + recvs > 0) {
        const MessageTime t = model.message(bytes, 1);
        const int ports = std::max(1, model.ports);
        const int batches = (std::max(sends, recvs) + ports - 1) / ports;
        comm = (batches - 1) * std::max(t.send_busy, t.recv_busy) + t.recv_done;
        c.rounds.push_back({sends, 0, 0, 0});
    }
    if (c.rounds.empty()) c.rounds.emplace_back();  // local work before the first message
    NwayRound& round = c.rounds.back();
    round.reductions += tally.reductions;
    round.copies += tally.copies;
    round.time_s += comm + local;
    c.messages += sends;
    c.bytes_sent += sends * bytes;
    c.reductions += tally.reductions;
    c.copies += tally.copies;
    c.time_s += comm + local;
}

}  // namespace

NwayCost nway_cost(int P, int n, const Model& model, double size_bytes, nway::TakeOut t) {
    if (!model.duplex)
        throw Error("nway_cost: model '" + model.spec() +
                    "' has duplex=0, which the closed form does not cover (use estimate)");
    NwayCost c;
    c.n = n;
    c.plan = nway::make_plan(P, n, t);
    const Schedule s = nway::adapted_schedule(P, n, t, 0);
    const RankProgram& prog = s.program(0);
    for (uint32_t begin = 0; begin < prog.ops.size();) {
        uint32_t end = begin + 1;
        while (end < prog.ops.size() && !prog.ops[end].fence()) ++end;
        price_group(s, 0, begin, end, model, size_bytes, c);
        begin = end;
    }
    if (c.rounds.size() > 1 && c.rounds[0].messages == 0) {  // the initial copy belongs to round 1
        c.rounds[1].time_s += c.rounds[0].time_s;
        c.rounds[1].copies += c.rounds[0].copies;
        c.rounds.erase(c.rounds.begin());
    }
    return c;
}

std::vector<NwayCost> nway_costs(int P, const Model& model, double size_bytes, int n_max, nway::TakeOut t) {
    if (n_max < 1) throw Error("n_max=" + std::to_string(n_max) + " is invalid (allowed: >= 1)");
    std::vector<NwayCost> out;
    for (int n = 1; n <= n_max; ++n) out.push_back(nway_cost(P, n, model, size_bytes, t));
    return out;
}

int choose_n(int n_max, const std::function<double(int)>& cost) {
    if (n_max < 1) throw Error("n_max=" + std::to_string(n_max) + " is invalid (allowed: >= 1)");
    int best = 1;
    double best_t = cost(1);
    for (int n = 2; n <= n_max; ++n) {
        const double t = cost(n);
        if (t < best_t) best = n, best_t = t;
    }
    return best;
}

int best_dissemination_n(int P, const Model& model, double size_bytes, int n_max, nway::TakeOut t) {
    return choose_n(n_max, [&](int n) { return nway_cost(P, n, model, size_bytes, t).time_s; });
}

}  // namespace collplan
