// Topologies: parsing, node numbering, link numbering, routing and bisection (see topology.hpp).
//
// dims(): mesh/torus sides; line:P and ring:P are the 1-D mesh and torus, dims() = {P}; hypercube:d is the
// 2x2x...x2 mesh (d twos), so dimension-ordered routing on it is e-cube routing; fattree: {k, n}; full: {}.
// "mesh:P" and "torus:P" (one dimension) are accepted too and behave as line:P and ring:P.
//
// Link numbering. Every link except on full:P belongs to a cable; cable c gives links 2c (direction 0) and 2c+1
// (direction 1).
//   grid (line, ring, mesh, torus, hypercube): the cables of dimension 0 come first, then dimension 1, ...
//     A line of side A in that dimension holds A-1 cables (mesh, or a torus side <= 2: a torus side 2 has ONE
//     cable, not two) or A cables (torus side >= 3, the last one the wrap-around). Cable at position c joins the
//     nodes with coordinate c and (c+1) mod A; direction 0 goes from c to c+1. Within a dimension with stride s
//     (product of the lower sides), index = low + s * (c + cables_per_line * high), where low = node mod s and
//     high = node / (s * A).
//   full:P: no cables; the link a->b has id a*(P-1) + (b < a ? b : b-1).
//   fattree:k,n (k-ary n-tree, Petrini & Vanneschi 1997): P = k^n leaves (end nodes); levels 0..n-1 of S = k^(n-1)
//     switches each, switch (l, w) has id P + l*S + w. Leaf p hangs off switch (0, p / k): cable p, direction 0 up.
//     Switch (l, w) connects upward to the k switches (l+1, w') where w' equals w except in base-k digit l, which is
//     j = 0..k-1: cable P*(1+l) + w*k + j, direction 0 up. So digit i of a level-0 switch is digit i+1 of its leaves.
//
// Routing. Grid: dimension-ordered, dimension 0 first; on a wrapped dimension the shorter way, a tie (even side,
// exactly half way) in the + direction unless bit i of `ties_minus` asks for the - direction in dimension i. Fat tree: up/down; the nearest common ancestor level h is the highest base-k
// digit where the two leaves differ; going up from level l to l+1 sets digit l of the switch to digit l of the
// destination (the D-mod-k rule, which spreads destinations over the up-links), then down to the destination.
// Hops: 2*(h+1).
//
// Bisection (directed links crossing a minimum bisection in one direction; 0 when P == 1):
//   line 1; ring 2 (1 for ring:2); mesh P/L where L is the longest side (cut across the longest dimension);
//   torus 2*P/L when L > 2, P/L when L == 2; hypercube P/2; full floor(P/2)*ceil(P/2); fattree P/2 (full bisection
//   bandwidth). For an odd longest side the mesh/torus cut splits the nodes unequally; the value is then the usual
//   approximation used for the bisection lower bound, not an exact minimum bisection.
#include "collplan/topology/topology.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace collplan {
namespace {

constexpr const char* kValidForms =
    "line:P, ring:P, mesh:AxB[xC...], torus:AxB[xC...], hypercube:d, full:P, fattree:k,n";
constexpr int64_t kMaxNodes = int64_t(1) << 22;
constexpr int64_t kMaxFatTreeLeaves = int64_t(1) << 20;
constexpr int kMaxDims = 8;
constexpr int kMaxHypercubeDim = 20;
constexpr int64_t kMaxLinkId = std::numeric_limits<int32_t>::max();

[[noreturn]] void bad_spec(const std::string& spec, const std::string& why = "") {
    std::string msg = "invalid topology '" + spec + "'";
    if (!why.empty()) msg += ": " + why;
    throw Error(msg + " (valid: " + kValidForms + ")");
}

// A decimal count without sign; -1 when `s` is not one. Saturates at 10^12 so huge values fail the range checks.
int64_t parse_count(std::string_view s) {
    if (s.empty()) return -1;
    int64_t v = 0;
    for (char ch : s) {
        if (ch < '0' || ch > '9') return -1;
        v = std::min<int64_t>(v * 10 + (ch - '0'), 1000000000000);
    }
    return v;
}

std::vector<int64_t> parse_counts(std::string_view s, char sep) {
    std::vector<int64_t> out;
    while (true) {
        size_t pos = s.find(sep);
        out.push_back(parse_count(s.substr(0, pos)));
        if (pos == std::string_view::npos) return out;
        s.remove_prefix(pos + 1);
    }
}

struct Shape {
    TopoKind kind;
    std::vector<int> dims;
    int64_t nodes;
    std::string canonical;
};

std::string join(const std::vector<int>& v, char sep) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? std::string(1, sep) : "") + std::to_string(v[i]);
    return out;
}

Shape parse_single(const std::string& spec, TopoKind kind, const char* name, std::string_view body) {
    int64_t p = parse_count(body);
    if (p < 0) bad_spec(spec);
    if (p < 1 || p > kMaxNodes) bad_spec(spec, "P must be 1.." + std::to_string(kMaxNodes));
    std::vector<int> dims;
    if (kind != TopoKind::full) dims.push_back(static_cast<int>(p));
    return {kind, dims, p, std::string(name) + ":" + std::to_string(p)};
}

Shape parse_grid(const std::string& spec, TopoKind kind, const char* name, std::string_view body) {
    std::vector<int64_t> sides = parse_counts(body, 'x');
    if (std::find(sides.begin(), sides.end(), -1) != sides.end()) bad_spec(spec);
    if (sides.size() > kMaxDims) bad_spec(spec, "at most " + std::to_string(kMaxDims) + " dimensions");
    int64_t nodes = 1;
    std::vector<int> dims;
    for (int64_t s : sides) {
        if (s < 1) bad_spec(spec, "every side must be >= 1");
        nodes = std::min(nodes * s, kMaxNodes + 1);
        dims.push_back(static_cast<int>(std::min(s, kMaxNodes + 1)));
    }
    if (nodes > kMaxNodes) bad_spec(spec, "at most " + std::to_string(kMaxNodes) + " nodes");
    return {kind, dims, nodes, std::string(name) + ":" + join(dims, 'x')};
}

Shape parse_hypercube(const std::string& spec, std::string_view body) {
    int64_t d = parse_count(body);
    if (d < 0) bad_spec(spec);
    if (d > kMaxHypercubeDim) bad_spec(spec, "d must be 0.." + std::to_string(kMaxHypercubeDim));
    return {TopoKind::hypercube, std::vector<int>(d, 2), int64_t(1) << d, "hypercube:" + std::to_string(d)};
}

Shape parse_fattree(const std::string& spec, std::string_view body) {
    std::vector<int64_t> kn = parse_counts(body, ',');
    if (kn.size() != 2 || kn[0] < 0 || kn[1] < 0) bad_spec(spec);
    const std::string why = "need k >= 2, n >= 1 and k^n <= " + std::to_string(kMaxFatTreeLeaves) + " end nodes";
    if (kn[0] < 2 || kn[1] < 1 || kn[1] > 20) bad_spec(spec, why);
    int64_t leaves = 1;
    for (int64_t i = 0; i < kn[1] && leaves <= kMaxFatTreeLeaves; ++i) leaves *= kn[0];
    if (leaves > kMaxFatTreeLeaves) bad_spec(spec, why);
    std::vector<int> dims = {static_cast<int>(kn[0]), static_cast<int>(kn[1])};
    return {TopoKind::fattree, dims, leaves, "fattree:" + join(dims, ',')};
}

Shape parse_shape(const std::string& spec) {
    size_t colon = spec.find(':');
    if (colon == std::string::npos) bad_spec(spec);
    std::string_view name = std::string_view(spec).substr(0, colon);
    std::string_view body = std::string_view(spec).substr(colon + 1);
    if (name == "line") return parse_single(spec, TopoKind::line, "line", body);
    if (name == "ring") return parse_single(spec, TopoKind::ring, "ring", body);
    if (name == "full") return parse_single(spec, TopoKind::full, "full", body);
    if (name == "mesh") return parse_grid(spec, TopoKind::mesh, "mesh", body);
    if (name == "torus") return parse_grid(spec, TopoKind::torus, "torus", body);
    if (name == "hypercube") return parse_hypercube(spec, body);
    if (name == "fattree") return parse_fattree(spec, body);
    bad_spec(spec);
}

bool wraps(TopoKind k) { return k == TopoKind::ring || k == TopoKind::torus; }

int cables_per_line(int side, bool wrap) { return side <= 1 ? 0 : (wrap && side > 2 ? side : side - 1); }

// One dimension of a grid: its side, stride, cables per line and the id of its first cable.
struct GridDim {
    int side;
    int stride;
    int cables;
    int64_t offset;
};

std::vector<GridDim> grid_dims(const std::vector<int>& dims, int nodes, bool wrap) {
    std::vector<GridDim> out;
    int stride = 1;
    int64_t offset = 0;
    for (int side : dims) {
        int m = cables_per_line(side, wrap);
        out.push_back({side, stride, m, offset});
        offset += int64_t(m) * (nodes / side);
        stride *= side;
    }
    return out;
}

int64_t grid_cable_count(const std::vector<int>& dims, int nodes, bool wrap) {
    int64_t total = 0;
    for (int side : dims) total += int64_t(cables_per_line(side, wrap)) * (nodes / side);
    return total;
}

int grid_distance(const std::vector<int>& dims, bool wrap, int a, int b) {
    int hops = 0;
    for (int side : dims) {
        int diff = std::abs(a % side - b % side);
        hops += wrap ? std::min(diff, side - diff) : diff;
        a /= side;
        b /= side;
    }
    return hops;
}

// The link one step from `node` (coordinate c in dimension g) in the + or - direction.
Link grid_hop(const GridDim& g, int node, int c, bool plus) {
    const int side = g.side;
    int base = node - c * g.stride;
    int low = base % g.stride;
    int high = base / (g.stride * side);
    int next = plus ? (c + 1) % side : (c + side - 1) % side;
    int pos = 0;
    int dir = 0;
    if (plus) {
        // Side 2 has a single cable (position 0); its + step from coordinate 1 runs that cable backwards.
        bool single_wrap = (c + 1 == side && side == 2);
        pos = single_wrap ? 0 : c;
        dir = single_wrap ? 1 : 0;
    } else {
        bool single_wrap = (c == 0 && side == 2);
        pos = single_wrap ? 0 : next;
        dir = single_wrap ? 0 : 1;
    }
    int64_t cable = g.offset + low + int64_t(g.stride) * (pos + int64_t(g.cables) * high);
    return {static_cast<int32_t>(2 * cable + dir), node, base + next * g.stride};
}

std::vector<Link> grid_route(const std::vector<int>& dims, int nodes, bool wrap, int a, int b, unsigned ties_minus) {
    std::vector<Link> out;
    int cur = a;
    unsigned dim = 0;
    for (const GridDim& g : grid_dims(dims, nodes, wrap)) {
        int ca = (cur / g.stride) % g.side;
        int cb = (b / g.stride) % g.side;
        int fwd = (cb - ca + g.side) % g.side;
        const bool tie_minus = dim < 8 && ((ties_minus >> dim++) & 1u) && fwd == g.side - fwd;
        bool plus = wrap ? fwd <= g.side - fwd && !tie_minus : cb >= ca;
        int steps = wrap ? std::min(fwd, g.side - fwd) : std::abs(cb - ca);
        for (int s = 0; s < steps; ++s) {
            out.push_back(grid_hop(g, cur, ca, plus));
            cur = out.back().to;
            ca = plus ? (ca + 1) % g.side : (ca + g.side - 1) % g.side;
        }
    }
    return out;
}

Link grid_link(const std::vector<int>& dims, int nodes, bool wrap, int id) {
    int64_t cable = id / 2;
    for (const GridDim& g : grid_dims(dims, nodes, wrap)) {
        int64_t count = int64_t(g.cables) * (nodes / g.side);
        if (cable >= g.offset + count) continue;
        int64_t r = cable - g.offset;
        int low = static_cast<int>(r % g.stride);
        r /= g.stride;
        int pos = static_cast<int>(r % g.cables);
        int high = static_cast<int>(r / g.cables);
        int base = low + g.stride * g.side * high;
        int n0 = base + pos * g.stride;
        int n1 = base + ((pos + 1) % g.side) * g.stride;
        return id % 2 == 0 ? Link{id, n0, n1} : Link{id, n1, n0};
    }
    return {id, -1, -1};  // unreachable: the caller checked the id range
}

// Fat tree helpers; k = dims[0], n = dims[1], P = k^n leaves, S = P / k switches per level.
struct FatTree {
    int k;
    int n;
    int leaves;
    int per_level;

    int switch_id(int level, int w) const { return leaves + level * per_level + w; }
    static int set_digit(int w, int pow, int k, int digit) { return w + (digit - (w / pow) % k) * pow; }
};

FatTree fat_tree(const std::vector<int>& dims, int nodes) { return {dims[0], dims[1], nodes, nodes / dims[0]}; }

int fat_tree_distance(int k, int a, int b) {
    int hops = 0;
    while (a != b) {
        a /= k;
        b /= k;
        hops += 2;
    }
    return hops;
}

std::vector<Link> fat_tree_route(const FatTree& t, int a, int b) {
    int h = fat_tree_distance(t.k, a, b) / 2 - 1;  // nearest common ancestor level
    std::vector<Link> out;
    int w = a / t.k;
    out.push_back({2 * a, a, t.switch_id(0, w)});
    int pow = 1;
    for (int l = 0; l < h; ++l, pow *= t.k) {  // up from level l to l+1: digit l := destination digit l
        int j = (b / pow) % t.k;
        int up = FatTree::set_digit(w, pow, t.k, j);
        int cable = t.leaves * (1 + l) + w * t.k + j;
        out.push_back({2 * cable, t.switch_id(l, w), t.switch_id(l + 1, up)});
        w = up;
    }
    for (int l = h; l > 0; --l) {  // down from level l to l-1: digit l-1 := destination digit l
        pow /= t.k;
        int down = FatTree::set_digit(w, pow, t.k, (b / (pow * t.k)) % t.k);
        int cable = t.leaves * l + down * t.k + (w / pow) % t.k;
        out.push_back({2 * cable + 1, t.switch_id(l, w), t.switch_id(l - 1, down)});
        w = down;
    }
    out.push_back({2 * b + 1, t.switch_id(0, w), b});
    return out;
}

Link fat_tree_link(const FatTree& t, int id) {
    int cable = id / 2;
    int lower = 0;
    int upper = 0;
    if (cable < t.leaves) {
        lower = cable;
        upper = t.switch_id(0, cable / t.k);
    } else {
        int l = cable / t.leaves - 1;
        int r = cable % t.leaves;
        int pow = 1;
        for (int i = 0; i < l; ++i) pow *= t.k;
        lower = t.switch_id(l, r / t.k);
        upper = t.switch_id(l + 1, FatTree::set_digit(r / t.k, pow, t.k, r % t.k));
    }
    return id % 2 == 0 ? Link{id, lower, upper} : Link{id, upper, lower};
}

int64_t full_link_count(int p) { return int64_t(p) * (p - 1); }

void check_full_ids(const Topology& t) {
    if (full_link_count(t.nodes()) > kMaxLinkId) {
        throw Error("topology " + t.spec() + " has " + std::to_string(full_link_count(t.nodes())) +
                    " directed links, too many to number (link ids allow full:P with P <= 46341)");
    }
}

void check_node(const Topology& t, int node) {
    if (node < 0 || node >= t.nodes()) {
        throw Error("node " + std::to_string(node) + " is out of range for topology " + t.spec() + " (allowed: 0.." +
                    std::to_string(t.nodes() - 1) + ")");
    }
}

}  // namespace

Topology Topology::parse(const std::string& spec) {
    Shape shape = parse_shape(spec);
    Topology t;
    t.kind_ = shape.kind;
    t.spec_ = shape.canonical;
    t.nodes_ = static_cast<int>(shape.nodes);
    t.dims_ = std::move(shape.dims);
    return t;
}

Topology Topology::full(int ranks) { return parse("full:" + std::to_string(ranks)); }

void Topology::check_ranks(int ranks) const {
    if (ranks != nodes_) {
        throw Error("topology " + spec_ + " has " + std::to_string(nodes_) + " nodes but " + std::to_string(ranks) +
                    " ranks were given");
    }
}

int Topology::distance(int a, int b) const {
    check_node(*this, a);
    check_node(*this, b);
    switch (kind_) {
        case TopoKind::full: return a == b ? 0 : 1;
        case TopoKind::fattree: return fat_tree_distance(dims_[0], a, b);
        case TopoKind::hypercube: return std::popcount(static_cast<unsigned>(a ^ b));
        default: return grid_distance(dims_, wraps(kind_), a, b);
    }
}

std::vector<Link> Topology::route(int a, int b, uint8_t ties_minus) const {
    check_node(*this, a);
    check_node(*this, b);
    if (a == b) return {};
    switch (kind_) {
        case TopoKind::full:
            check_full_ids(*this);
            return {Link{static_cast<int32_t>(int64_t(a) * (nodes_ - 1) + (b < a ? b : b - 1)), a, b}};
        case TopoKind::fattree: return fat_tree_route(fat_tree(dims_, nodes_), a, b);
        default: return grid_route(dims_, nodes_, wraps(kind_), a, b, ties_minus);
    }
}

int Topology::num_links() const {
    switch (kind_) {
        case TopoKind::full: check_full_ids(*this); return static_cast<int>(full_link_count(nodes_));
        case TopoKind::fattree: return 2 * dims_[1] * nodes_;
        default: return static_cast<int>(2 * grid_cable_count(dims_, nodes_, wraps(kind_)));
    }
}

Link Topology::link(int id) const {
    int count = num_links();
    if (id < 0 || id >= count) {
        throw Error("link id " + std::to_string(id) + " is out of range for topology " + spec_ + " (allowed: 0.." +
                    std::to_string(count - 1) + ")");
    }
    switch (kind_) {
        case TopoKind::full: {
            int from = id / (nodes_ - 1);
            int r = id % (nodes_ - 1);
            return {id, from, r < from ? r : r + 1};
        }
        case TopoKind::fattree: return fat_tree_link(fat_tree(dims_, nodes_), id);
        default: return grid_link(dims_, nodes_, wraps(kind_), id);
    }
}

int Topology::diameter() const {
    if (nodes_ <= 1) return 0;
    switch (kind_) {
        case TopoKind::full: return 1;
        case TopoKind::fattree: return 2 * dims_[1];
        default: {
            int d = 0;
            for (int side : dims_) d += wraps(kind_) ? side / 2 : side - 1;
            return d;
        }
    }
}

int64_t Topology::bisection_links() const {
    if (nodes_ <= 1) return 0;
    const int64_t p = nodes_;
    switch (kind_) {
        case TopoKind::full: return (p / 2) * ((p + 1) / 2);
        case TopoKind::fattree:
        case TopoKind::hypercube: return p / 2;
        default: {
            int64_t longest = *std::max_element(dims_.begin(), dims_.end());
            return (wraps(kind_) && longest > 2 ? 2 : 1) * (p / longest);
        }
    }
}

std::vector<int> Topology::coords(int node) const {
    check_node(*this, node);
    std::vector<int> out;
    if (kind_ == TopoKind::full) return {node};
    if (kind_ == TopoKind::fattree) {  // the n base-k digits of the leaf, lowest first
        for (int i = 0; i < dims_[1]; ++i, node /= dims_[0]) out.push_back(node % dims_[0]);
        return out;
    }
    for (int side : dims_) {
        out.push_back(node % side);
        node /= side;
    }
    return out;
}

}  // namespace collplan
