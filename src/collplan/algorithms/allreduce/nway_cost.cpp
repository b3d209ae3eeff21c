#include "collplan/algorithms/allreduce/nway_cost.hpp"

#include <algorithm>
#include <cmath>

namespace collplan {
namespace {

// Price one group of a rank's program (see the header) and add it to the round it belongs to. `bytes` is the
// size of one block; a group's messages are priced at the size of its largest.
void price_group(const Schedule& s, int r, uint32_t begin, uint32_t end, const Model& model, double bytes,
                 NwayCost& c) {
    int sends = 0, recvs = 0;
    double local = 0, sent = 0, largest = 0;
    NwayRound tally;
    for (uint32_t i = begin; i < end; ++i) {
        const OpView v = s.op(r, i);
        const double b = static_cast<double>(v.units) * bytes;
        switch (v.op.kind) {
            case OpKind::send: ++sends, sent += b, largest = std::max(largest, b); break;
            case OpKind::recv: ++recvs, largest = std::max(largest, b); break;
            case OpKind::reduce: ++tally.reductions, local += model.reduce_s(b); break;
            case OpKind::copy: ++tally.copies, local += model.copy_s(b); break;
            default: throw Error("nway_cost: unexpected " + std::string(to_string(v.op.kind)) + " op");
        }
    }
    double comm = 0;
    if (sends + recvs > 0) {
        const MessageTime t = model.message(largest, 1);
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
    c.bytes_sent += sent;
    c.reductions += tally.reductions;
    c.copies += tally.copies;
    c.time_s += comm + local;
}

// Price rank 0's program of `s` group by group (every rank's program has the same shape).
NwayCost price_program(const Schedule& s, int n, const Model& model, double size_bytes) {
    if (!model.duplex)
        throw Error("nway_cost: model '" + model.spec() +
                    "' has duplex=0, which the closed form does not cover (use estimate)");
    NwayCost c;
    c.n = n;
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

}  // namespace

NwayCost nway_cost(int P, int n, const Model& model, double size_bytes, nway::TakeOut t) {
    NwayCost c = price_program(nway::adapted_schedule(P, n, t, 0), n, model, size_bytes);
    c.plan = nway::make_plan(P, n, t);
    return c;
}

NwayCost nway_contributions_cost(int P, int n, const Model& model, double size_bytes) {
    return price_program(nway::contributions_schedule(P, n, 0), n, model, size_bytes);
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

int best_contributions_n(int P, const Model& model, double size_bytes, int n_max) {
    return choose_n(n_max, [&](int n) { return nway_contributions_cost(P, n, model, size_bytes).time_s; });
}

}  // namespace collplan
