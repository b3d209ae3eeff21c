// alltoall/a2at -- A2AT: the all-port torus all-to-all that sends to four symmetric destinations at once.
//
// Source:        "Simulation evaluation of an optimal all-to-all communication algorithm using packet pacing"
//                (IPSJ SIG-HPC 2010-HPC-126 No.14) and the public abstracts on A2AT (docs/exchange.md, "A2AT"). The report is mostly
//                unreadable; the group order "ring" is read from the legend of its figure 16 (Seq / Phase / Hop for
//                9x9), sync=barrier from its section 4.5 (a dissemination barrier between groups, Table 5). The
//                handling of half-ring offsets on even sides and the mesh variant are derived here.
// Preconditions: a 1-D or 2-D torus or mesh (ring:P, line:P, torus:AxB, mesh:AxB), any sides (odd or even);
//                P = A B ranks, rank r at coordinates (r mod A, r div A). Four ports per node to send the four
//                messages of a group at once (ports 0..3 are set on every send and receive).
// Rounds:        one group per orbit of destination offsets (a, b) under the symmetry of the torus: square
//                sides: the 90-degree rotations {(a,b), (-b,a), (-a,-b), (b,-a)} (the notes' axis and diagonal
//                groups); other shapes: the reflections {(a,b), (-a,b), (-a,-b), (a,-b)}. Odd k x k torus:
//                (k^2-1)/4 groups of 4. Member i of a group uses port i; every node sends the same relative
//                offsets, X first then Y (dimension-ordered), so with a whole group in flight every directed link
//                of a square torus carries exactly h = |a| + |b| messages of it.
//                Even sides: an offset of exactly half a ring has two shortest ways; the send says which (Op::ties).
//                Square torus: the way of the signed offset of the orbit member ((k/2, b) +X, its rotations
//                (-b, k/2) +Y, (-k/2, -b) -X, (b, -k/2) -Y), so the four routes of a group are rotations of each other,
//                turns included; other shapes: the way of the sign of the other component ((k/2, b) + for b > 0, -
//                for b < 0). The three self-negating offsets (k/2, 0), (0, k/2), (k/2, k/2) form one group of
//                three: + in X, + in Y, and - in both, which again loads every directed link equally (k/2). A lone
//                half-ring offset (only one side even, or a ring) alternates the direction with the sender's
//                coordinate. Mesh: offsets up to the side - 1, each node sends the members whose destination exists.
//                Order of the groups (parameter order): ring = by Chebyshev ring max(|a|,|b|), then axis,
//                diagonal, others by hop count (the report's figure 16); hop / hop-desc = by hop count up / down;
//                phase = all axis groups, then diagonals, then the others. sync=group waits for a group's sends
//                and receives before the next group; sync=barrier adds a global barrier between groups (the next
//                group starts on every node at once on an empty network); sync=port only orders each port's sends
//                (receives posted at once).
// Pacing:        the report paces each group by hand (its Table 4 / figure 16 sweep one setting per group). The
//                packet simulator's pacing=load derives each message's rate from its own group instead
//                (sim/packet/packet.hpp): link bandwidth / (n (1 + w/N)), n = the most messages of its group on one
//                link of its route (= h on a square torus, k/2 for the (k/2, k/2) message of the half group, which
//                hop pacing sends at 1/k), w = (c - 1) h packet times, c = the most inputs that feed one of its links
//                in the group (3 here: the transit input plus two NICs or two turns; 2 for axis groups, 1 for (1,0)),
//                N = its packets. With first-come-first-served routers and sync=barrier this reaches 1.020 / 1.022 /
//                1.038 x the ideal on 8x8 / 9x9 / 16x16 at 1 MiB without virtual output queues (docs/exchange.md).
//                On a mesh no pacing beats the step bound: groups one after another need the sum over groups of
//                each group's busiest link, 190 blocks on 8x8 against the ideal 128 (1.48 x).
// Cost:          G (alpha + m beta) with 4 ports, G = number of groups (+ (G - 1) barriers with sync=barrier);
//                ideal (busiest directed link / link bandwidth): even k x k torus k^3/8 m beta, odd k x k torus
//                k (k^2 - 1)/8 m beta (link_loads() of this schedule; equal to the bisection lower bound of
//                lower_bound_s); with pacing=load each group takes about (1 + w/N) n_max m beta.
// Memory:        no scratch; P (2P - 1) ops, 2P - 1 per rank (+ G - 1 barriers per rank with sync=barrier).
// Example:       torus:3x3, rank 0 at (0,0): copy in[0] -> out[0]; group (1,0): send to the nodes at (1,0), (0,1),
//                (2,0), (0,2) on ports 0..3 and receive from the same four; group (1,1): (1,1), (2,1), (2,2), (1,2).
//                Paced (pacing=load, 1 MiB = 512 packets): group (1,0) n = 1, w = 0, at the full link rate; group
//                (1,1) n = 2, c = 2, w = 2: each message at B / (2 (1 + 2/512)).
#include <algorithm>
#include <array>
#include <tuple>
#include <vector>

#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

struct Member {
    int dx, dy;         // signed offset: the route goes |dx| hops in X, then |dy| in Y
    uint8_t ties;       // Op::ties of the send
    bool alternate;     // a lone half-ring offset: the direction flips with the sender's coordinate
};

struct Group {
    std::vector<Member> members;  // member i on port i
    int ring, hops, cls, phase;   // sort keys; cls 0 axis, 1 diagonal, 2 other; phase 1..4 as in the report
};

struct Shape {
    int nx, ny;
    bool torus;
    bool rotate() const { return nx == ny; }
};

// Offset component c in [0, n) as a signed value in (-n/2, n/2]; tie = exactly half an even ring.
struct Comp {
    int v;
    bool tie;
};
Comp canon(int c, int n) { return {2 * c < n ? c : (2 * c > n ? c - n : c), 2 * c == n}; }

int mod(int v, int n) { return ((v % n) + n) % n; }

std::array<std::pair<int, int>, 4> orbit(int a, int b, bool rotate) {
    if (rotate) return {{{a, b}, {-b, a}, {-a, -b}, {b, -a}}};
    return {{{a, b}, {-a, b}, {-a, -b}, {a, -b}}};
}

// Sign of a tie from the other component: + for a positive or zero one, - for a negative one or another tie.
int tie_sign(Comp other) { return other.tie || other.v < 0 ? -1 : 1; }

// The route of torus offset (cx, cy) (both reduced mod the sides); (ox, oy) is the signed offset of the orbit
// it came from. On a square torus a tie goes the way of that signed offset, so the members of a group stay
// 90-degree rotations of each other route and all (the same turns at the same places); on other shapes the way of
// the sign of the other component.
Member torus_member(const Shape& s, int cx, int cy, int ox, int oy) {
    const Comp x = canon(cx, s.nx), y = canon(cy, s.ny);
    Member m{x.v, y.v, 0, false};
    const bool self_negating = (cx == 0 || x.tie) && (cy == 0 || y.tie);
    const bool both_even = s.nx % 2 == 0 && s.ny % 2 == 0 && s.ny > 1;
    if (self_negating && !both_even) {
        m.alternate = true;  // (k/2, 0) or (0, k/2) alone: no partner offset to balance it
        return m;
    }
    const bool rot = s.rotate() && !self_negating;
    if (x.tie && (rot ? ox < 0 : tie_sign(y) < 0)) m.dx = -m.dx, m.ties |= 1;
    if (y.tie && (rot ? oy < 0 : tie_sign(x) < 0)) m.dy = -m.dy, m.ties |= 2;
    return m;
}

void set_keys(Group& g, int a, int b) {
    g.ring = std::max(a, b);
    g.hops = a + b;
    g.cls = a == 0 || b == 0 ? 0 : (a == b ? 1 : 2);
    g.phase = g.cls == 0 ? 1 : g.cls == 1 ? 2 : (a > b ? 3 : 4);
}

std::vector<Group> torus_groups(const Shape& s) {
    std::vector<Group> out;
    std::vector<char> seen(static_cast<size_t>(s.nx) * s.ny, 0);
    Group half{{}, 0, 0, 0, 1};
    for (int a = s.rotate() ? 1 : 0; a <= s.nx / 2; ++a)
        for (int b = 0; b <= s.ny / 2; ++b) {
            if ((a == 0 && b == 0) || seen[static_cast<size_t>(b) * s.nx + a]) continue;
            Group g{};
            set_keys(g, a, b);
            bool self_negating = false;
            for (auto [ox, oy] : orbit(a, b, s.rotate())) {
                const int cx = mod(ox, s.nx), cy = mod(oy, s.ny);
                char& mark = seen[static_cast<size_t>(cy) * s.nx + cx];
                if (mark) continue;
                mark = 1;
                self_negating = mod(-cx, s.nx) == cx && mod(-cy, s.ny) == cy;
                g.members.push_back(torus_member(s, cx, cy, ox, oy));
            }
            if (!self_negating) {
                out.push_back(std::move(g));
                continue;
            }
            half.members.insert(half.members.end(), g.members.begin(), g.members.end());
            half.ring = std::max(half.ring, g.ring);
            half.hops = std::max(half.hops, g.hops);
        }
    if (!half.members.empty()) out.push_back(std::move(half));
    return out;
}

std::vector<Group> mesh_groups(const Shape& s) {
    std::vector<Group> out;
    for (int a = s.rotate() ? 1 : 0; a < s.nx; ++a)
        for (int b = 0; b < s.ny; ++b) {
            if (a == 0 && b == 0) continue;
            Group g{};
            set_keys(g, a, b);
            for (auto [ox, oy] : orbit(a, b, s.rotate())) {
                const bool dup = std::any_of(g.members.begin(), g.members.end(),
                                             [&](const Member& m) { return m.dx == ox && m.dy == oy; });
                if (!dup) g.members.push_back({ox, oy, 0, false});
            }
            out.push_back(std::move(g));
        }
    return out;
}

void sort_groups(std::vector<Group>& gs, const std::string& order) {
    auto key = [&](const Group& g) {
        if (order == "ring") return std::make_tuple(g.ring, g.cls, g.hops, g.phase);
        if (order == "hop") return std::make_tuple(g.hops, g.cls, g.phase, g.ring);
        if (order == "hop-desc") return std::make_tuple(-g.hops, g.cls, g.phase, g.ring);
        return std::make_tuple(g.phase, g.hops, g.ring, 0);  // "phase"
    };
    std::stable_sort(gs.begin(), gs.end(), [&](const Group& x, const Group& y) { return key(x) < key(y); });
}

Shape shape_of(const Topology& t) {
    const auto& d = t.dims();
    const bool torus = t.kind() == TopoKind::torus || t.kind() == TopoKind::ring;
    return {d.empty() ? 1 : d[0], d.size() > 1 ? d[1] : 1, torus};
}

std::string applies(const Problem& p) {
    const TopoKind k = p.topology.kind();
    const bool grid = k == TopoKind::torus || k == TopoKind::mesh || k == TopoKind::ring || k == TopoKind::line;
    if (!grid || p.topology.dims().size() > 2)
        return "needs a 1-D or 2-D torus or mesh (ring:P, line:P, torus:AxB, mesh:AxB), got " + p.topology.spec();
    return "";
}

// One message of member m from rank r at (x, y), and the matching receive from the rank at (x, y) - offset.
void add_member(RankBuilder& b, const Shape& s, int r, const Member& m, int port, bool chain,
                std::array<int64_t, 4>& last_send) {
    const int x = r % s.nx, y = r / s.nx;
    auto at = [&](int px, int py) { return py * s.nx + px; };
    auto inside = [&](int px, int py) { return px >= 0 && px < s.nx && py >= 0 && py < s.ny; };
    int dx = m.dx, dy = m.dy;
    uint8_t ties = m.ties;
    if (m.alternate && x % 2 == 1 && dx != 0) dx = -dx, ties |= 1;
    if (m.alternate && y % 2 == 1 && dx == 0) dy = -dy, ties |= 2;
    const int tx = s.torus ? mod(x + dx, s.nx) : x + dx, ty = s.torus ? mod(y + dy, s.ny) : y + dy;
    if (inside(tx, ty)) {
        const auto to = static_cast<uint32_t>(at(tx, ty));
        std::vector<uint32_t> deps;
        if (chain && last_send[port] >= 0) deps.push_back(static_cast<uint32_t>(last_send[port]));
        const Segment data(Buf::in, to, 1);
        last_send[port] = b.send(static_cast<int>(to), 0, std::span(&data, 1), deps);
        b.on_port(port);
        if (ties) b.ties_minus(ties);
    }
    const int fx = s.torus ? mod(x - m.dx, s.nx) : x - m.dx, fy = s.torus ? mod(y - m.dy, s.ny) : y - m.dy;
    if (inside(fx, fy)) {
        const auto from = static_cast<uint32_t>(at(fx, fy));
        b.recv(static_cast<int>(from), 0, {Segment(Buf::out, from, 1)});
        b.on_port(port);
    }
}

Schedule generate(const Problem& p) {
    const std::string& order = p.params.text("order");
    const std::string& sync = p.params.text("sync");
    if (order != "ring" && order != "hop" && order != "hop-desc" && order != "phase")
        throw Error("parameter order='" + order + "' is invalid for alltoall/a2at (allowed: ring, hop, hop-desc, phase)");
    if (sync != "group" && sync != "port" && sync != "barrier")
        throw Error("parameter sync='" + sync + "' is invalid for alltoall/a2at (allowed: group, port, barrier)");
    const Shape s = shape_of(p.topology);
    std::vector<Group> groups = s.torus ? torus_groups(s) : mesh_groups(s);
    sort_groups(groups, order);
    const int P = p.ranks;
    const auto uP = static_cast<uint32_t>(P);
    Schedule sched(Collective::alltoall, P, uP, uP, 0, p.only_rank);
    for (int r : p.build_ranks()) {
        sched.program_mut(r).ops.reserve(2 * static_cast<size_t>(P) - 1);
        RankBuilder b(sched, r);
        b.copy({Segment(Buf::in, static_cast<uint32_t>(r), 1)}, {Segment(Buf::out, static_cast<uint32_t>(r), 1)});
        std::array<int64_t, 4> last_send{-1, -1, -1, -1};
        for (size_t g = 0; g < groups.size(); ++g) {
            if (g > 0 && sync == "group") b.fence();
            if (g > 0 && sync == "barrier") b.fence().barrier(), b.fence();
            for (size_t i = 0; i < groups[g].members.size(); ++i)
                add_member(b, s, r, groups[g].members[i], static_cast<int>(i), sync == "port", last_send);
        }
    }
    return sched;
}

const Registration reg{{
    .name = "alltoall/a2at",
    .collective = Collective::alltoall,
    .summary = "torus all-port all-to-all: groups of four symmetric offsets sent at once on four ports",
    .source = "A2AT, IPSJ SIG-HPC 2010-HPC-126 (packet pacing report) and its public abstracts",
    .params = {{"order", ParamKind::text, "ring", 0, 0, "group order: ring, hop, hop-desc or phase"},
               {"sync", ParamKind::text, "group", 0, 0,
                "group: wait for each group; barrier: and a global barrier between groups; port: chain each port only"}},
    .applies = applies,
    .generate = generate,
    .default_topologies = {"torus2d", "mesh2d", "ring", "line"},
    .sweep_params = {{{"order", "ring"}}, {{"order", "hop-desc"}, {"sync", "port"}}, {{"order", "phase"}}},
}};

}  // namespace
}  // namespace collplan
