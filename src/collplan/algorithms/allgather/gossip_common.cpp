// The gossip engine: rank sets, the step builder and the 1-D routines (see gossip_common.hpp).
#include "collplan/algorithms/allgather/gossip_common.hpp"

#include <algorithm>
#include <numeric>

namespace collplan::gossip {

// ---- RankSet ----------------------------------------------------------------------------------------------
RankSet RankSet::range(int lo, int hi) {
    RankSet s;
    if (lo < hi) s.runs_.push_back({lo, hi});
    return s;
}

int64_t RankSet::count() const {
    int64_t n = 0;
    for (const auto& [lo, hi] : runs_) n += hi - lo;
    return n;
}

bool RankSet::intersects(const RankSet& o) const {
    size_t i = 0, j = 0;
    while (i < runs_.size() && j < o.runs_.size()) {
        if (runs_[i].second <= o.runs_[j].first) ++i;
        else if (o.runs_[j].second <= runs_[i].first) ++j;
        else return true;
    }
    return false;
}

RankSet& RankSet::operator|=(const RankSet& o) {
    if (o.runs_.empty()) return *this;
    std::vector<std::pair<int, int>> all;
    all.reserve(runs_.size() + o.runs_.size());
    std::merge(runs_.begin(), runs_.end(), o.runs_.begin(), o.runs_.end(), std::back_inserter(all));
    runs_.clear();
    for (const auto& r : all) {
        if (!runs_.empty() && r.first <= runs_.back().second)
            runs_.back().second = std::max(runs_.back().second, r.second);
        else
            runs_.push_back(r);
    }
    return *this;
}

RankSet RankSet::minus(const RankSet& o) const {
    RankSet out;
    size_t j = 0;
    for (auto [lo, hi] : runs_) {
        while (j < o.runs_.size() && o.runs_[j].second <= lo) ++j;
        for (size_t q = j; q < o.runs_.size() && o.runs_[q].first < hi; ++q) {
            if (o.runs_[q].first > lo) out.runs_.push_back({lo, o.runs_[q].first});
            lo = std::max(lo, o.runs_[q].second);
        }
        if (lo < hi) out.runs_.push_back({lo, hi});
    }
    return out;
}

std::vector<RankSet> RankSet::split(int parts) const {
    std::vector<RankSet> out(static_cast<size_t>(parts));
    const int64_t n = count();
    int64_t seen = 0;
    int part = 0;
    for (auto [lo, hi] : runs_) {
        while (lo < hi) {
            while (part < parts - 1 && seen >= (part + 1) * n / parts) ++part;
            const int64_t end_of_part = (part + 1) * n / parts;
            const int take = static_cast<int>(std::min<int64_t>(hi - lo, end_of_part - seen));
            out[part].runs_.push_back({lo, lo + take});
            lo += take;
            seen += take;
        }
    }
    return out;
}

// ---- Builder ------------------------------------------------------------------------------------------------
Builder::Builder(int ranks, int chunks, bool oneport, int only_rank)
    : ranks_(ranks), chunks_(chunks), oneport_(oneport), only_rank_(only_rank),
      keep_all_(only_rank == Schedule::kAllRanks || oneport) {}

void Builder::transfer(int step, int from, int to, int chunk, const RankSet& data, int send_port, int recv_port) {
    if (data.empty() || from == to) return;
    if (!keep_all_ && from != only_rank_ && to != only_rank_) return;
    data_.push_back(data);
    transfers_.push_back({step, from, to, chunk, send_port, recv_port, static_cast<uint32_t>(data_.size() - 1)});
}

// Greedy edge colouring of each step: a rank takes part in at most one transfer per slot. Processing the
// transfers in the order the routines issued them gives the black/white alternation along a line.
void Builder::assign_slots(std::vector<Transfer>& ts) const {
    std::vector<uint32_t> order(ts.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return ts[x].step < ts[y].step; });
    std::vector<std::vector<bool>> used(static_cast<size_t>(ranks_));
    std::vector<int> touched;
    for (size_t i = 0; i < order.size(); ++i) {
        Transfer& t = ts[order[i]];
        if (i > 0 && ts[order[i - 1]].step != t.step) {
            for (int r : touched) used[r].clear();
            touched.clear();
        }
        int slot = 0;
        auto busy = [&](int r) { return slot < static_cast<int>(used[r].size()) && used[r][slot]; };
        while (busy(t.from) || busy(t.to)) ++slot;
        for (int r : {t.from, t.to}) {
            if (used[r].empty()) touched.push_back(r);
            if (static_cast<int>(used[r].size()) <= slot) used[r].resize(slot + 1, false);
            used[r][slot] = true;
        }
        t.slot = slot;
    }
}

Schedule Builder::build() const {
    const int P = ranks_, C = chunks_;
    Schedule s(Collective::allgather, P, static_cast<uint32_t>(C), static_cast<uint32_t>(P * C), 0, only_rank_);
    std::vector<Transfer> ts = transfers_;
    if (oneport_) assign_slots(ts);
    const int first = s.whole() ? 0 : only_rank_;  // rank r's transfers are mine[r - first]
    std::vector<std::vector<const Transfer*>> mine(s.whole() ? static_cast<size_t>(P) : 1);
    for (const Transfer& t : ts)
        for (int r : {t.from, t.to})
            if (s.holds(r)) mine[r - first].push_back(&t);
    for (size_t i = 0; i < mine.size(); ++i) {
        auto key = [](const Transfer* t) { return std::make_tuple(t->step, t->slot, t); };
        std::sort(mine[i].begin(), mine[i].end(),
                  [&](const Transfer* x, const Transfer* y) { return key(x) < key(y); });
        emit(s, first + static_cast<int>(i), mine[i]);
    }
    return s;
}

void Builder::emit(Schedule& s, int rank, const std::vector<const Transfer*>& mine) const {
    const int C = chunks_;
    RankBuilder b(s, rank);
    b.copy({Segment(Buf::in, 0, static_cast<uint32_t>(C))},
           {Segment(Buf::out, static_cast<uint32_t>(rank * C), static_cast<uint32_t>(C))});
    std::vector<Segment> segs;
    for (size_t i = 0; i < mine.size(); ++i) {
        const Transfer& t = *mine[i];
        if (i == 0 || t.step != mine[i - 1]->step || t.slot != mine[i - 1]->slot) b.fence();
        segs.clear();
        for (const auto& [lo, hi] : data_[t.data].runs()) {
            if (C == 1) segs.emplace_back(Buf::out, static_cast<uint32_t>(lo), static_cast<uint32_t>(hi - lo));
            else
                for (int q = lo; q < hi; ++q) segs.emplace_back(Buf::out, static_cast<uint32_t>(q * C + t.chunk), 1u);
        }
        if (t.from == rank) b.send(t.to, 0, segs);
        else b.recv(t.from, 0, segs);
        b.on_port(t.from == rank ? t.send_port : t.recv_port);
    }
}

// ---- 1-D routines -----------------------------------------------------------------------------------------
namespace {

int wrap_pos(const Line& l, int p) {
    const int n = static_cast<int>(l.ranks.size());
    return ((p % n) + n) % n;
}

// Direction (+1 / -1) of the move from position p to position q: on a ring the shorter way unless told.
void send_dir(const Ctx& c, int step, int p, int q, int dir, const RankSet& data) {
    const int from = c.line.ranks[wrap_pos(c.line, p)], to = c.line.ranks[wrap_pos(c.line, q)];
    const int plus = 2 * c.line.axis, minus = plus + 1;
    c.b.transfer(step, from, to, c.chunk, data, dir > 0 ? plus : minus, dir > 0 ? minus : plus);
}

}  // namespace

void send_along(const Ctx& c, int step, int p, int q, const RankSet& data) {
    send_dir(c, step, p, q, q > p ? 1 : -1, data);
}

int window_gossip(const Ctx& c, const std::vector<int>& listed, int period, std::vector<RankSet>& data, int start) {
    const int M = static_cast<int>(listed.size());
    if (M <= 1 || period <= 1) return start;
    const bool ring = c.line.wrap;
    const int classes = ring ? period : std::min(period, M);
    const std::vector<RankSet> snap = [&] {
        std::vector<RankSet> v;
        for (int p : listed) v.push_back(data[wrap_pos(c.line, p)]);
        return v;
    }();
    int end = start;
    for (int j = 0; j < M; ++j) {
        for (int kappa = 0; kappa < classes; ++kappa) {
            if (kappa == j % period) continue;
            // Nearest holder of class kappa: on the + side at distance up, on the - side at distance down.
            int up = ((kappa - j) % period + period) % period, down = period - up;
            if (!ring) {
                if (j + up >= M) up = -1;
                if (j - down < 0) down = -1;
            }
            const bool plus = up > 0 && (down < 0 || up <= down);
            const int t = plus ? up : down, q = plus ? j + t : j - t, dir = plus ? 1 : -1;
            const int qi = ((q % M) + M) % M, from = j + dir;
            const RankSet content = snap[qi].minus(snap[j]);
            // The neighbour on the path forwards it at step t-1 (moving in direction -dir).
            send_dir(c, start + t - 1, listed[((from % M) + M) % M], listed[j], -dir, content);
            data[wrap_pos(c.line, listed[j])] |= content;
            end = std::max(end, start + t);
        }
    }
    return end;
}

int natural_root(int length, int radix) {
    int lo = 0;
    while (length > 1) {
        const int s = (length + radix - 1) / radix;
        if (radix == 3) lo += (length - s) / 2;
        length = s;
    }
    return lo;
}

namespace {

int build_tree(Tree& t, int lo, int hi, int root, int radix) {
    const int len = hi - lo;
    if (len <= 1) return 0;
    const int s = (len + radix - 1) / radix;
    int m_lo = lo + (len - s) / 2;  // radix 3: the middle third if it holds the root, else the third around it
    if (radix == 3 && (root < m_lo || root >= m_lo + s)) m_lo = std::clamp(root - (s - 1) / 2, lo, hi - s);
    if (radix == 2) m_lo = root < lo + s ? lo : hi - s;
    const int m_hi = m_lo + s;
    int h = build_tree(t, m_lo, m_hi, root, radix);
    std::vector<int> children;
    for (auto [a, z] : {std::pair{lo, m_lo}, std::pair{m_hi, hi}}) {
        if (a >= z) continue;
        const int r = a + natural_root(z - a, radix);
        h = std::max(h, build_tree(t, a, z, r, radix));
        children.push_back(r);
    }
    for (int ch : children) t.merges.emplace_back(h + 1, ch, root);
    return h + 1;
}

}  // namespace

Tree concentration_tree(const std::vector<int>& path, int root, int radix) {
    if (radix != 2 && radix != 3) throw Error("concentration radix " + std::to_string(radix) + " (allowed: 2, 3)");
    Tree t;
    t.path = path;
    t.root = root;
    t.height = build_tree(t, 0, static_cast<int>(path.size()), root, radix);
    std::sort(t.merges.begin(), t.merges.end());
    return t;
}

int concentrate(const Ctx& c, const Tree& t, std::vector<RankSet>& data, int start) {
    for (size_t i = 0; i < t.merges.size();) {
        size_t j = i;
        std::vector<std::pair<int, RankSet>> arrivals;  // applied after the whole height (same step)
        for (; j < t.merges.size() && std::get<0>(t.merges[j]) == std::get<0>(t.merges[i]); ++j) {
            const auto [h, child, parent] = t.merges[j];
            const int pc = wrap_pos(c.line, t.path[child]), pp = wrap_pos(c.line, t.path[parent]);
            const RankSet content = data[pc].minus(data[pp]);
            send_dir(c, start + h - 1, t.path[child], t.path[parent], parent > child ? 1 : -1, content);
            arrivals.emplace_back(pp, content);
        }
        for (auto& [pos, content] : arrivals) data[pos] |= content;
        i = j;
    }
    return start + t.height;
}

int disseminate(const Ctx& c, const Tree& t, std::vector<RankSet>& data, int start) {
    for (auto it = t.merges.rbegin(); it != t.merges.rend(); ++it) {
        const auto [h, child, parent] = *it;
        const int pc = wrap_pos(c.line, t.path[child]), pp = wrap_pos(c.line, t.path[parent]);
        const RankSet content = data[pp].minus(data[pc]);
        send_dir(c, start + t.height - h, t.path[parent], t.path[child], child > parent ? 1 : -1, content);
        data[pc] |= content;
    }
    return start + t.height;
}

namespace {

// The transfers feeding the new positions seq[1..m] between seq[0] (left feeder, or -1) and seq[m+1] (right
// feeder, or -1) with the k packets; returns the number of steps used.
int feed_gap(const Ctx& c, const std::vector<int>& seq, bool has_left, bool has_right,
             const std::vector<RankSet>& packets, std::vector<RankSet>& data, int start) {
    const int m = static_cast<int>(seq.size()) - 2, k = static_cast<int>(packets.size());
    int steps = 0;
    for (int i = 1; i <= m; ++i) {
        const int pos = wrap_pos(c.line, seq[i]);
        const RankSet before = data[pos];
        for (int j = 1; j <= k; ++j) {
            const int tl = has_left ? i + j - 1 : 1 << 29;
            const int tr = has_right ? (m + 1 - i) + (k - j) : 1 << 29;
            const bool left = tl <= tr;
            const int t = left ? tl : tr;
            const RankSet content = packets[j - 1].minus(before);
            send_dir(c, start + t - 1, seq[left ? i - 1 : i + 1], seq[i], left ? 1 : -1, content);
            data[pos] |= content;
            steps = std::max(steps, t);
        }
    }
    return steps;
}

}  // namespace

int stream_round(const Ctx& c, const std::vector<int>& old_pos, const std::vector<int>& new_pos, int k,
                 const RankSet& full, std::vector<RankSet>& data, int start) {
    if (new_pos.empty()) return start;
    const int n = static_cast<int>(c.line.ranks.size());
    std::vector<RankSet> packets;
    for (RankSet& p : full.split(std::max(1, k)))
        if (!p.empty()) packets.push_back(std::move(p));
    if (packets.empty()) return start;
    int steps = 0;
    // Walk the gaps: for each old position, the new positions up to the next old one.
    const int B = static_cast<int>(old_pos.size());
    size_t ni = 0;
    if (!c.line.wrap) {  // left end gap: new positions before the first old one, fed from the right
        std::vector<int> seq = {-1};
        for (; ni < new_pos.size() && new_pos[ni] < old_pos[0]; ++ni) seq.push_back(new_pos[ni]);
        seq.push_back(old_pos[0]);
        if (seq.size() > 2) steps = std::max(steps, feed_gap(c, seq, false, true, packets, data, start));
    } else {
        while (ni < new_pos.size() && new_pos[ni] < old_pos[0]) ++ni;  // these belong to the wrap gap
    }
    for (int q = 0; q < B; ++q) {
        const bool last = q + 1 == B;
        const int right = last ? (c.line.wrap ? old_pos[0] + n : -1) : old_pos[q + 1];
        std::vector<int> seq = {old_pos[q]};
        for (; ni < new_pos.size() && (right < 0 || new_pos[ni] < right); ++ni) seq.push_back(new_pos[ni]);
        if (last && c.line.wrap)
            for (size_t w = 0; w < new_pos.size() && new_pos[w] < old_pos[0]; ++w) seq.push_back(new_pos[w] + n);
        seq.push_back(right);
        if (seq.size() > 2) steps = std::max(steps, feed_gap(c, seq, true, right >= 0, packets, data, start));
    }
    return start + steps;
}

int approach1_line(const Ctx& c, std::vector<RankSet>& data, int start) {
    const int n = static_cast<int>(c.line.ranks.size());
    std::vector<int> all(static_cast<size_t>(n));
    std::iota(all.begin(), all.end(), 0);
    return window_gossip(c, all, n, data, start);
}

int approach2_line(const Ctx& c, int radix, std::vector<RankSet>& data, int start) {
    const int n = static_cast<int>(c.line.ranks.size());
    std::vector<int> path(static_cast<size_t>(n));
    std::iota(path.begin(), path.end(), 0);
    const Tree t = concentration_tree(path, natural_root(n, radix), radix);
    return disseminate(c, t, data, concentrate(c, t, data, start));
}

std::vector<int> circgos_bridgeheads(int n, int a, int radix) {
    std::vector<int> out;
    for (int j = 0; j < a; ++j) {
        const int lo = static_cast<int>(int64_t(j) * n / a), hi = static_cast<int>(int64_t(j + 1) * n / a);
        out.push_back(lo + natural_root(hi - lo, radix));
    }
    return out;
}

namespace {

// New bridgeheads of one circgos round: every gap of g > 1 is cut into min(b, g) parts; an end gap of a linear
// array with e positions is cut like half of an interior gap of 2e+1 (its mirror image).
std::vector<int> subdivide(int n, bool wrap, const std::vector<int>& B, int b) {
    std::vector<int> out;
    auto cut = [&](int L, int g, int sign, int limit) {  // new positions L + sign*floor(q g / f), within limit
        const int f = std::min(b, g);
        for (int q = 1; q < f; ++q) {
            const int p = L + sign * static_cast<int>(int64_t(q) * g / f);
            if (sign > 0 ? p <= limit : p >= limit) out.push_back(((p % n) + n) % n);
        }
    };
    const int m = static_cast<int>(B.size());
    for (int q = 0; q < m; ++q) {
        if (q + 1 < m) cut(B[q], B[q + 1] - B[q], 1, B[q + 1] - 1);
        else if (wrap) cut(B[q], B[0] + n - B[q], 1, B[0] + n - 1);
    }
    if (!wrap) {
        cut(B[0], 2 * B[0] + 1, -1, 0);
        cut(B[m - 1], 2 * (n - 1 - B[m - 1]) + 1, 1, n - 1);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace

int circgos_line(const Ctx& c, const CircParams& p, std::vector<RankSet>& data, int start) {
    const int n = static_cast<int>(c.line.ranks.size());
    if (n <= 1) return start;
    const int a = std::clamp(p.a, 1, n);
    std::vector<int> B = circgos_bridgeheads(n, a, p.radix);
    int step = start;
    for (int j = 0; j < a; ++j) {  // phase 1: concentrate each segment into its bridgehead
        const int lo = static_cast<int>(int64_t(j) * n / a), hi = static_cast<int>(int64_t(j + 1) * n / a);
        std::vector<int> path(static_cast<size_t>(hi - lo));
        std::iota(path.begin(), path.end(), lo);
        step = std::max(step, concentrate(c, concentration_tree(path, B[j] - lo, p.radix), data, start));
    }
    step = window_gossip(c, B, a, data, step);  // phase 2: the bridgeheads gossip
    RankSet full;
    for (const RankSet& d : data) full |= d;
    while (static_cast<int>(B.size()) < n) {  // phase 3: rounds multiplying the bridgeheads by b
        const std::vector<int> fresh = subdivide(n, c.line.wrap, B, std::max(2, p.b));
        step = stream_round(c, B, fresh, p.k, full, data, step);
        B.insert(B.end(), fresh.begin(), fresh.end());
        std::sort(B.begin(), B.end());
    }
    return step;
}

// ---- topology helpers -------------------------------------------------------------------------------------
bool grid_topology(const Topology& t) {
    const TopoKind k = t.kind();
    return k == TopoKind::line || k == TopoKind::ring || k == TopoKind::mesh || k == TopoKind::torus;
}

int grid_dims(const Topology& t) { return static_cast<int>(t.dims().size()); }

bool wraps(const Topology& t, int axis) {
    return (t.kind() == TopoKind::ring || t.kind() == TopoKind::torus) && t.dims()[axis] >= 3;
}

std::vector<Line> lines_along(const Topology& t, int axis) {
    const std::vector<int>& dims = t.dims();
    int stride = 1;
    for (int i = 0; i < axis; ++i) stride *= dims[i];
    const int n = dims[axis];
    std::vector<Line> out;
    for (int r = 0; r < t.nodes(); ++r) {
        if ((r / stride) % n != 0) continue;
        Line l{{}, wraps(t, axis), axis};
        for (int x = 0; x < n; ++x) l.ranks.push_back(r + x * stride);
        out.push_back(std::move(l));
    }
    return out;
}

bool oneport_param(const Problem& p) {
    return p.params.values().count("oneport") && p.params.integer("oneport") != 0;
}

int radix_param(const Problem& p) {
    if (!p.params.values().count("radix")) return 3;
    const std::string& v = p.params.text("radix");
    if (v == "auto") return oneport_param(p) ? 2 : 3;
    return static_cast<int>(p.params.integer("radix"));
}

std::string grid_applies(const Problem& p, int min_dims, int max_dims) {
    const Topology& t = p.topology;
    if (!grid_topology(t))
        return "needs a line, ring, mesh or torus topology, got " + t.spec();
    const int d = grid_dims(t);
    if (d < min_dims || d > max_dims)
        return "needs " + (min_dims == max_dims ? std::to_string(min_dims) : std::to_string(min_dims) + ".." +
                           std::to_string(max_dims)) + " dimensions, got " + std::to_string(d) + " (" + t.spec() + ")";
    return "";
}

}  // namespace collplan::gossip
