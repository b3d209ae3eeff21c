// Cost formulas and parameter search of the gossip family (see gossip_tune.hpp).
#include "collplan/algorithms/allgather/gossip_tune.hpp"

#include "collplan/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>

namespace collplan::gossip {
namespace {

// Per height of the concentration tree of a segment of `len` into its natural root: the largest and the smallest
// subtree a child root sends (dissemination sends each child what it lacks, len - its subtree).
struct Level {
    int largest = 0, smallest = 1 << 30;
};
std::vector<Level> tree_levels(int len, int radix) {
    std::vector<int> path(static_cast<size_t>(len));
    std::iota(path.begin(), path.end(), 0);
    const Tree t = concentration_tree(path, natural_root(len, radix), radix);
    std::vector<int> size(static_cast<size_t>(len), 1);
    std::vector<Level> out(static_cast<size_t>(t.height));
    for (const auto& [h, child, parent] : t.merges) {
        out[h - 1].largest = std::max(out[h - 1].largest, size[child]);
        out[h - 1].smallest = std::min(out[h - 1].smallest, size[child]);
        size[parent] += size[child];
    }
    return out;
}

double concentration_units(int len, int radix, double r, double unit) {
    double t = 0;
    for (const Level& lv : tree_levels(len, radix)) t += r + lv.largest * unit;
    return t;
}

// Steps of one stream round feeding f-1 new bridgeheads per gap with k packets (two-sided on a ring; a linear
// array's end gaps are one-sided with about half as many new bridgeheads).
int stream_steps(int f, int k, bool wrap) {
    const int two_sided = (f + k - 1) / 2;
    return wrap ? two_sided : std::max(two_sided, f / 2 + k - 1);
}

int gossip_steps(int count, bool wrap) { return wrap ? count / 2 : count - 1; }

}  // namespace

// diagonal_units with the concentration trees' levels memoised per spacing (the search evaluates many (a, b, k)).
double diagonal_units_cached(const std::vector<int>& n, bool torus, const DiagParams& p, double r,
                             std::map<int, std::vector<Level>>* cache);

double approach1_units(int n, bool wrap, double r, double unit) {
    return gossip_steps(n, wrap) * (r + unit);
}

double approach2_units(int n, int radix, double r, double unit) {
    double t = 0;
    for (const Level& lv : tree_levels(n, radix)) t += 2 * r + lv.largest * unit + (n - lv.smallest) * unit;
    return t;
}

double circgos_units(int n, bool wrap, const CircParams& p, double r, double unit) {
    if (n <= 1) return 0;
    const int a = std::clamp(p.a, 1, n), L = (n + a - 1) / a, k = std::clamp(p.k, 1, n);
    double t = concentration_units(L, p.radix, r, unit);
    t += gossip_steps(a, wrap) * (r + L * unit);
    const double packet = std::ceil(static_cast<double>(n) / k) * unit;
    for (double g = static_cast<double>(n) / a; g > 1.0 + 1e-9;) {
        const int f = std::min(std::max(2, p.b), static_cast<int>(std::ceil(g - 1e-9)));
        t += stream_steps(f, k, wrap) * (r + packet);
        g /= f;
    }
    return t;
}

double units_of(const std::string& algorithm, int n, bool wrap, const CircParams& p, double r, double unit) {
    if (algorithm == "approach1") return approach1_units(n, wrap, r, unit);
    if (algorithm == "approach2") return approach2_units(n, p.radix, r, unit);
    if (algorithm == "circgos") return circgos_units(n, wrap, p, r, unit);
    throw Error("gossip units: algorithm '" + algorithm + "' (allowed: approach1, approach2, circgos)");
}

CircParams best_circgos(int n, bool wrap, double r, double unit, const CircSearch& s, double* cost) {
    CircParams best{1, 2, 1, s.radix};
    double best_t = HUGE_VAL;
    std::map<int, double> conc;  // phase-1 cost per segment length
    const int a_lo = s.a > 0 ? s.a : 1, a_hi = s.a > 0 ? s.a : std::max(1, n);
    const int b_lo = s.b > 0 ? s.b : 2, b_hi = s.b > 0 ? s.b : std::max(2, std::min(n, s.max_b));
    const int k_lo = s.k > 0 ? s.k : 1, k_hi = s.k > 0 ? s.k : std::max(1, std::min(n, s.max_k));
    for (int a = a_lo; a <= a_hi; ++a) {
        const int L = (n + a - 1) / a;
        if (!conc.count(L)) conc[L] = concentration_units(L, s.radix, r, unit);
        const double head = conc[L] + gossip_steps(a, wrap) * (r + L * unit);
        if (head >= best_t) continue;
        for (int b = b_lo; b <= b_hi; ++b)
            for (int k = k_lo; k <= k_hi; ++k) {
                double t = head;
                const double packet = std::ceil(static_cast<double>(n) / k) * unit;
                for (double g = static_cast<double>(n) / a; g > 1.0 + 1e-9 && t < best_t;) {
                    const int f = std::min(b, static_cast<int>(std::ceil(g - 1e-9)));
                    t += stream_steps(f, k, wrap) * (r + packet);
                    g /= f;
                }
                if (t < best_t - 1e-12) best_t = t, best = {a, b, k, s.radix};
            }
    }
    if (cost) *cost = best_t;
    return best;
}

double diagonal_units(const std::vector<int>& n, bool torus, const DiagParams& p, double r) {
    return diagonal_units_cached(n, torus, p, r, nullptr);
}

double diagonal_units_cached(const std::vector<int>& n, bool torus, const DiagParams& p, double r,
                             std::map<int, std::vector<Level>>* cache) {
    const int d = static_cast<int>(n.size()), C = p.colours;
    const double unit = 1.0 / C;
    double worst = 0;
    for (int c = 0; c < C; ++c) {
        std::vector<int> axes;
        for (int i = 0; i < d; ++i) axes.push_back((c + i) % d);
        const int g0 = torus ? n[0] / p.a : (n[0] + p.a - 1) / p.a;
        double t = 0;
        if (cache) {
            auto it = cache->find(g0);
            if (it == cache->end()) it = cache->emplace(g0, tree_levels(g0, p.radix)).first;
            for (const Level& lv : it->second) t += r + lv.largest * unit;
        } else {
            t = concentration_units(g0, p.radix, r, unit);
        }
        double data = g0;  // PUs' data held by a bridgehead
        for (int ax : axes) {
            const int cnt = (n[ax] + g0 - 1) / g0;
            t += gossip_steps(cnt, torus) * (r + data * unit);
            data *= ax == axes[0] ? static_cast<double>(n[ax]) / g0 : cnt;
        }
        for (int g = g0; g > 1;) {
            const int f = round_factor(g, std::max(2, p.b)), k = std::max(1, p.k);
            t += stream_steps(f, k, torus) * (r + std::ceil(data / k) * unit);
            for (size_t i = 1; i < axes.size(); ++i) {
                t += gossip_steps(f, torus) * (r + data * unit);
                data *= f;
            }
            g /= f;
        }
        worst = std::max(worst, t);
    }
    return worst;
}

DiagParams best_diagonal(const Topology& t, DiagParams base, double r, const DiagSearch& s, double* cost) {
    const std::vector<int>& n = t.dims();
    const bool torus = t.kind() == TopoKind::torus;
    DiagParams best = base;
    double best_t = HUGE_VAL;
    std::map<int, std::vector<Level>> cache;
    const int a_hi = s.a > 0 ? s.a : n[0];
    for (int a = s.a > 0 ? s.a : 1; a <= a_hi; ++a)
        for (int b = s.b > 0 ? s.b : 2; b <= (s.b > 0 ? s.b : s.max_b); ++b)
            for (int k = s.k > 0 ? s.k : 1; k <= (s.k > 0 ? s.k : s.max_k); ++k) {
                DiagParams p = base;
                p.a = a, p.b = b, p.k = k;
                if (!diagonal_applies(t, p).empty()) continue;
                const int g0 = torus ? n[0] / a : (n[0] + a - 1) / a;
                if (s.b == 0 && g0 > 1 && round_factor(g0, b) > b) continue;  // b would act as a larger factor
                if (g0 == 1 && ((s.b == 0 && b > 2) || (s.k == 0 && k > 1))) continue;  // no rounds: b, k unused
                const double c = diagonal_units_cached(n, torus, p, r, &cache);
                if (c < best_t - 1e-12) best_t = c, best = p;
            }
    if (best_t == HUGE_VAL) best.a = n[0];  // nothing applied: one bridgehead per PU of the row (always valid)
    if (cost) *cost = best_t;
    return best;
}

double highdimgos_units(const std::vector<int>& n, bool torus, const std::vector<PhaseChoice>& phases, int colours,
                        double r) {
    const int d = static_cast<int>(n.size());
    double worst = 0;
    for (int c = 0; c < colours; ++c) {
        double t = 0, unit = 1.0 / colours;
        for (int f = 0; f < d; ++f) {
            const int ax = (c + f) % d, len = n[ax];
            const bool wrap = torus && len >= 3;
            const PhaseChoice& ch = phases[std::min<size_t>(static_cast<size_t>(f), phases.size() - 1)];
            if (len > 1) {
                if (ch.alg == 1) t += approach1_units(len, wrap, r, unit);
                else if (ch.alg == 2) t += approach2_units(len, ch.circ.radix, r, unit);
                else t += circgos_units(len, wrap, ch.circ, r, unit);
            }
            unit *= len;
        }
        worst = std::max(worst, t);
    }
    return worst;
}

double ratio_param(const Problem& p) {
    if (!p.params.values().count("r")) return 10;
    const std::string& v = p.params.text("r");
    char* end = nullptr;
    const double r = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(r >= 0) || !std::isfinite(r))
        throw Error("parameter r='" + v + "' is not a ratio (allowed: a number >= 0, startup / transfer time of one "
                    "PU's data)");
    return r;
}

int list_param(const Problem& p, const std::string& name, int phase) {
    if (!p.params.values().count(name)) return 0;
    const std::string& v = p.params.text(name);
    std::vector<std::string> items;
    for (size_t start = 0;;) {
        const size_t end = v.find(',', start);
        items.push_back(v.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    const std::string& item = items[std::min<size_t>(static_cast<size_t>(phase), items.size() - 1)];
    if (item == "auto") return 0;
    char* end = nullptr;
    const long x = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || x < 1 || x > (1 << 20))
        throw Error("parameter " + name + "='" + v +
                    "' (allowed: auto, or a positive integer per phase: x or x,y,...)");
    return static_cast<int>(x);
}

CircParams circ_params(const Problem& p, int n, bool wrap, double unit, int phase) {
    CircSearch s;
    s.a = list_param(p, "a", phase);
    s.b = list_param(p, "b", phase);
    s.k = list_param(p, "k", phase);
    s.radix = radix_param(p);
    if (s.a && s.b && s.k) return {s.a, s.b, s.k, s.radix};
    return best_circgos(n, wrap, ratio_param(p), unit, s);
}

std::vector<PhaseChoice> phase_choices(const Problem& p, int colours) {
    const std::vector<int>& n = p.topology.dims();
    const int d = static_cast<int>(n.size()), radix = radix_param(p);
    const double r = ratio_param(p);
    std::vector<PhaseChoice> out;
    double unit = 1.0 / colours;
    for (int f = 0; f < d; ++f) {
        const int len = n[f % d];
        const bool wrap = wraps(p.topology, f % d);
        int alg = 0;
        if (p.params.values().count("algs")) {
            alg = list_param(p, "algs", f);
            if (alg > 3)
                throw Error("parameter algs='" + p.params.text("algs") + "' (allowed: auto or 1, 2, 3 per phase)");
        }
        PhaseChoice ch{alg == 0 ? 3 : alg, circ_params(p, std::max(1, len), wrap, unit, f)};
        ch.circ.radix = radix;
        if (alg == 0) {  // the cheapest of approach 1, approach 2 and the tuned circgos for this phase
            const double c1 = approach1_units(len, wrap, r, unit), c2 = approach2_units(len, radix, r, unit);
            const double c3 = circgos_units(len, wrap, ch.circ, r, unit);
            ch.alg = c1 <= std::min(c2, c3) ? 1 : c2 <= c3 ? 2 : 3;
        }
        out.push_back(ch);
        unit *= len;
    }
    return out;
}

DiagParams diag_params(const Problem& p, bool sum_diagonal) {
    DiagParams d;
    d.sum_diagonal = sum_diagonal;
    d.radix = radix_param(p);
    d.oneport = oneport_param(p);
    const int dims = grid_dims(p.topology);
    d.colours = p.params.values().count("colours") && p.params.integer("colours") > 0
                    ? static_cast<int>(p.params.integer("colours")) : dims;
    DiagSearch s;
    s.a = list_param(p, "a", 0);
    s.b = list_param(p, "b", 0);
    s.k = list_param(p, "k", 0);
    if (s.a && s.b && s.k) {
        d.a = s.a, d.b = s.b, d.k = s.k;
        return d;
    }
    if (!grid_topology(p.topology) || dims < 2) return d;  // applies() declines; nothing to search
    return best_diagonal(p.topology, d, ratio_param(p), s);
}

DiagParams diag_params_for_applies(const Problem& p, bool sum_diagonal) {
    Problem q = p;
    std::map<std::string, std::string> v = p.params.values();
    const bool auto_a = list_param(p, "a", 0) == 0;
    if (auto_a && grid_topology(p.topology)) v["a"] = std::to_string(p.topology.dims()[0]);
    if (list_param(p, "b", 0) == 0) v["b"] = "2";
    if (list_param(p, "k", 0) == 0) v["k"] = "1";
    q.params = Params(std::move(v));
    return diag_params(q, sum_diagonal);
}

ParamSpec oneport_spec() {
    return {"oneport", ParamKind::integer, "0", 0, 1,
            "1: the Paragon implementation -- a PU sends or receives one message at a time (black/white slots)"};
}

ParamSpec radix_spec() {
    return {"radix", ParamKind::integer, "auto", 2, 3,
            "concentration factor per step (auto: 3, or 2 with oneport=1 as on the Paragon)"};
}

std::vector<ParamSpec> highdimgos_specs() {
    return {{"algs", ParamKind::text, "3", 0, 0, "1-D algorithm per phase: 1, 2, 3 (circgos) or auto; x,y,.."},
            {"a", ParamKind::text, "auto", 0, 0, "circgos bridgeheads per phase (auto or x,y,..)"},
            {"b", ParamKind::text, "auto", 0, 0, "circgos growth factor per phase (auto or x,y,..)"},
            {"k", ParamKind::text, "auto", 0, 0, "circgos packets per phase (auto or x,y,..)"},
            ratio_spec(), radix_spec(), oneport_spec()};
}

ParamSpec ratio_spec() {
    return {"r", ParamKind::text, "10", 0, 0,
            "startup / transfer time of one PU's data that the auto parameters are chosen for"};
}

namespace {

// r at eight sizes spread geometrically over [min_bytes, max_bytes] (one PU's data per size).
std::vector<double> query_ratios(const CandidateQuery& q) {
    const double lo = std::max(1.0, q.min_bytes), hi = std::max(lo, q.max_bytes);
    const double per_byte = std::max(q.model.per_byte_s(), 1e-300);
    std::vector<double> out;
    for (int i = 0; i < 8; ++i) {
        const double m = lo * std::pow(hi / lo, i / 7.0);
        out.push_back(q.model.startup_s() / (per_byte * m));
    }
    return out;
}

void add_unique(std::vector<ParamSet>& out, ParamSet s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
}

ParamSet abk(int a, int b, int k) {
    return {{"a", std::to_string(a)}, {"b", std::to_string(b)}, {"k", std::to_string(k)}};
}

}  // namespace

std::vector<ParamSet> circgos_candidates(const CandidateQuery& q) {
    if (!grid_topology(q.topology) || grid_dims(q.topology) != 1) return {ParamSet{}};
    const int n = q.topology.dims()[0];
    std::vector<ParamSet> out;
    for (double r : query_ratios(q)) {
        const CircParams c = best_circgos(n, wraps(q.topology, 0), r, 1.0, CircSearch{});
        add_unique(out, abk(c.a, c.b, c.k));
    }
    return out;
}

std::vector<ParamSet> diagonal_candidates(const CandidateQuery& q, bool sum_diagonal) {
    if (!grid_topology(q.topology) || grid_dims(q.topology) < 2) return {ParamSet{}};
    DiagParams base;
    base.sum_diagonal = sum_diagonal;
    base.colours = grid_dims(q.topology);
    std::vector<ParamSet> out;
    for (double r : query_ratios(q)) {
        const DiagParams d = best_diagonal(q.topology, base, r, DiagSearch{});
        add_unique(out, abk(d.a, d.b, d.k));
    }
    return out;
}

}  // namespace collplan::gossip
