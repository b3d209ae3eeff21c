// The multi-dimensional gossip engines: highdimgos (one 1-D gossip per axis) and the diagonal engine behind
// torgos and cubgos (see gossip_common.hpp and the algorithm files for the paper's description).
#include <algorithm>
#include <numeric>

#include "collplan/algorithms/allgather/gossip_common.hpp"

namespace collplan::gossip {
namespace {

int coord_sum_parity(const Topology& t, int r) {
    int s = 0;
    for (int x : t.coords(r)) s += x;
    return s & 1;
}

int run_1d(const Ctx& c, const PhaseChoice& ch, std::vector<RankSet>& data, int start) {
    switch (ch.alg) {
        case 1: return approach1_line(c, data, start);
        case 2: return approach2_line(c, ch.circ.radix, data, start);
        default: return circgos_line(c, ch.circ, data, start);
    }
}

// Runs `f` on every line along `axis` with the line's slice of `hold` (by position), writing it back; returns
// the latest end step.
template <class F>
int on_lines(const Topology& t, int axis, std::vector<RankSet>& hold, int start, F&& f) {
    int end = start;
    for (const Line& line : lines_along(t, axis)) {
        if (line.ranks.size() < 2) continue;
        std::vector<RankSet> data;
        data.reserve(line.ranks.size());
        for (int r : line.ranks) data.push_back(std::move(hold[r]));
        end = std::max(end, f(line, data));
        for (size_t i = 0; i < line.ranks.size(); ++i) hold[line.ranks[i]] = std::move(data[i]);
    }
    return end;
}

}  // namespace

Schedule highdimgos(const Problem& p, const std::vector<PhaseChoice>& phases, int colours, bool node_colours,
                    bool oneport) {
    const Topology& t = p.topology;
    const int d = grid_dims(t), P = p.ranks;
    const int classes = node_colours ? 2 : colours;
    Builder b(P, node_colours ? 1 : colours, oneport, p.only_rank);
    for (int cl = 0; cl < classes; ++cl) {
        std::vector<RankSet> hold(static_cast<size_t>(P));
        for (int r = 0; r < P; ++r)
            if (!node_colours || coord_sum_parity(t, r) == cl) hold[r] = RankSet::single(r);
        int step = 0;
        for (int f = 0; f < d; ++f) {
            const PhaseChoice& ch = phases[std::min<size_t>(static_cast<size_t>(f), phases.size() - 1)];
            step = on_lines(t, (cl + f) % d, hold, step, [&](const Line& line, std::vector<RankSet>& data) {
                return run_1d(Ctx{b, line, node_colours ? 0 : cl}, ch, data, step);
            });
        }
    }
    return b.build();
}

// ---- diagonal engine (torgos, cubgos) ---------------------------------------------------------------------
int round_factor(int g, int b) {
    if (g % b == 0) return b;
    for (int f = std::min(b, g); f >= 2; --f)
        if (g % f == 0) return f;
    return g;
}

namespace {

struct Diagonal {
    const Topology& t;
    bool sum;
    // Residue of a position on the diagonal lattice of spacing g: sum x_i (cubgos) or x0 - x1 (torgos), mod g.
    int residue(int rank, int g) const {
        const std::vector<int> x = t.coords(rank);
        int v = 0;
        if (sum) v = std::accumulate(x.begin(), x.end(), 0);
        else v = x[0] - x[1];
        return ((v % g) + g) % g;
    }
    std::vector<int> bridgeheads(const Line& line, int g) const {
        std::vector<int> out;
        for (int i = 0; i < static_cast<int>(line.ranks.size()); ++i)
            if (residue(line.ranks[i], g) == 0) out.push_back(i);
        return out;
    }
};

// Phase 1 on one line: each position joins the segment of g positions around its bridgehead (a linear array's
// ends join the first and last segments) and the segments concentrate into their bridgeheads.
int concentrate_segments(const Ctx& c, const std::vector<int>& B, int g, int radix, std::vector<RankSet>& data,
                         int start) {
    const int n = static_cast<int>(c.line.ranks.size()), h = natural_root(g, radix);
    int end = start;
    for (size_t j = 0; j < B.size(); ++j) {
        int lo = B[j] - h, hi = lo + g;
        if (!c.line.wrap) {
            if (j == 0) lo = 0;
            if (j + 1 == B.size()) hi = n;
            lo = std::max(lo, 0);
            hi = std::min(hi, n);
        }
        std::vector<int> path(static_cast<size_t>(hi - lo));
        std::iota(path.begin(), path.end(), lo);
        end = std::max(end, concentrate(c, concentration_tree(path, B[j] - lo, radix), data, start));
    }
    return end;
}

// Gossip among the bridgeheads of spacing g along `axis`; period = the class count (0: every bridgehead).
int gossip_axis(Builder& b, const Diagonal& dg, int axis, int chunk, int g, int period, std::vector<RankSet>& hold,
                int start) {
    return on_lines(dg.t, axis, hold, start, [&](const Line& line, std::vector<RankSet>& data) {
        const std::vector<int> B = dg.bridgeheads(line, g);
        const int per = period > 0 ? period : static_cast<int>(B.size());
        return window_gossip(Ctx{b, line, chunk}, B, per, data, start);
    });
}

// One colour's timeline of the diagonal algorithm; axes[0] is its row axis.
void diagonal_colour(Builder& b, const Diagonal& dg, const DiagParams& d, const std::vector<int>& axes, int chunk,
                     int g0) {
    const int P = dg.t.nodes();
    std::vector<RankSet> hold(static_cast<size_t>(P));
    for (int r = 0; r < P; ++r) hold[r] = RankSet::single(r);
    int step = on_lines(dg.t, axes[0], hold, 0, [&](const Line& line, std::vector<RankSet>& data) {
        return concentrate_segments(Ctx{b, line, chunk}, dg.bridgeheads(line, g0), g0, d.radix, data, 0);
    });
    for (int axis : axes) step = gossip_axis(b, dg, axis, chunk, g0, 0, hold, step);  // phases 2 and 3
    for (int g = g0; g > 1;) {  // phase 4: rounds
        const int f = round_factor(g, std::max(2, d.b)), g2 = g / f;
        step = on_lines(dg.t, axes[0], hold, step, [&](const Line& line, std::vector<RankSet>& data) {
            const std::vector<int> old_b = dg.bridgeheads(line, g);
            std::vector<int> fresh;
            for (int q : dg.bridgeheads(line, g2))
                if (!std::binary_search(old_b.begin(), old_b.end(), q)) fresh.push_back(q);
            RankSet full;
            for (int q : old_b) full |= data[q];
            return stream_round(Ctx{b, line, chunk}, old_b, fresh, d.k, full, data, step);
        });
        for (size_t i = 1; i < axes.size(); ++i) step = gossip_axis(b, dg, axes[i], chunk, g2, f, hold, step);
        g = g2;
    }
}

int initial_spacing(const Topology& t, int a) {
    const int n0 = t.dims()[0];
    return t.kind() == TopoKind::torus ? n0 / a : (n0 + a - 1) / a;
}

}  // namespace

std::string diagonal_applies(const Topology& t, const DiagParams& p) {
    if (t.kind() != TopoKind::mesh && t.kind() != TopoKind::torus)
        return "needs a mesh or torus topology, got " + t.spec();
    const std::vector<int>& n = t.dims();
    const int d = static_cast<int>(n.size());
    if (d < 2 || (!p.sum_diagonal && d != 2)) return "needs " + std::string(p.sum_diagonal ? "2 or more" : "2") +
                                                      " dimensions, got " + std::to_string(d) + " (" + t.spec() + ")";
    if (p.colours != 1 && p.colours != d)
        return "colours=" + std::to_string(p.colours) + " (allowed: 1 or the dimension " + std::to_string(d) + ")";
    if (p.a < 1 || p.a > n[0]) return "a=" + std::to_string(p.a) + " (allowed: 1.." + std::to_string(n[0]) + ")";
    const int g = initial_spacing(t, p.a);
    for (int i = 0; i < d; ++i) {
        if (t.kind() == TopoKind::torus && (n[0] % p.a != 0 || n[i] % g != 0))
            return "on a torus a=" + std::to_string(p.a) + " must divide side " + std::to_string(n[0]) +
                   " and the spacing g=n0/a must divide every side";
        if (n[i] < g)
            return "spacing g=" + std::to_string(g) + " exceeds side " + std::to_string(n[i]) + " (use a larger a)";
    }
    return "";
}

Schedule diagonal_gossip(const Problem& p, const DiagParams& d) {
    const Topology& t = p.topology;
    const int dims = grid_dims(t);
    Builder b(p.ranks, d.colours, d.oneport, p.only_rank);
    const Diagonal dg{t, d.sum_diagonal};
    const int g0 = initial_spacing(t, d.a);
    for (int c = 0; c < d.colours; ++c) {
        std::vector<int> axes;
        for (int i = 0; i < dims; ++i) axes.push_back((c + i) % dims);
        diagonal_colour(b, dg, d, axes, c, g0);
    }
    return b.build();
}

}  // namespace collplan::gossip
