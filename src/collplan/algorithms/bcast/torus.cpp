// bcast/torus -- the dimension-ordered pipelined broadcast on a mesh or torus: the message, cut into k segments,
// runs out from the root along its line in dimension 0 (both ways), from every node of that line along dimension 1
// (both ways), and so on -- the gossip papers' row-then-column idea applied to one source.
//
// Source:        Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6), 1998: its gossip
//                schemes work dimension by dimension (along rows, then along columns; allgather/highdimgos,
//                allgather/torgos); here that order serves a single source:
//                the dimension-ordered spanning tree of the mesh/torus, pipelined like bcast/chain.
// Preconditions: a mesh or torus topology (any number of dimensions, any sides), any root; segments k = 1..4096.
// Rounds:        D - 1 + k pipeline steps, D = the tree's depth (torus: sum of floor(A_i / 2); mesh: sum of the
//                root's distances to the farther end of each side). Node x, j = the highest dimension in which x
//                differs from the root: x receives every segment from its neighbour one step back towards the
//                root in dimension j (a torus ring is split: offsets 1..floor(A/2) are reached the + way, the
//                others the - way), and forwards it to the next node in dimension j on the same side, then to both
//                neighbours in every dimension above j. The root sends to both neighbours in every dimension.
// Cost:          (D - 1 + k)(alpha + n/k beta) when a node has a port for each of its (up to 2d) children
//                (Model ports); with fewer ports a step costs ceil(children / ports) times that   [Hockney]
// Memory:        no scratch; the message is S = k segments of out (m = n / k).
// Example:       torus:4x3 (rank = x + 4 y), root 0, k = 1: 0 sends to 1 and 3 (dimension 0) and to 4 and 8
//                (dimension 1); 1 sends to 2, 5 and 9; 3 sends to 7 and 11; 2 sends to 6 and 10. D = 2 + 1 = 3.
#include "collplan/algorithms/bcast/pipeline.hpp"

#include <vector>

namespace collplan {
namespace {

// One dimension of side A through the root's coordinate c0.
struct Line {
    int A, c0;
    bool torus;
    // Which way from c0 the tree reaches c: 0 (c = c0), +1 or -1.
    int side(int c) const {
        if (c == c0) return 0;
        if (!torus) return c > c0 ? 1 : -1;
        return (c - c0 + A) % A <= A / 2 ? 1 : -1;
    }
    // The next coordinate after c going way s (+1 or -1) while it stays on side s; -1 when there is none.
    int next(int c, int s) const {
        const int n = torus ? (c + s + A) % A : c + s;
        if (n < 0 || n >= A || n == c0) return -1;
        return side(n) == s ? n : -1;
    }
};

struct Tree {
    std::vector<int> dims;
    std::vector<Line> lines;
    std::vector<int> c0;

    Tree(const Topology& t, int root) : dims(t.dims()), c0(t.coords(root)) {
        for (size_t i = 0; i < dims.size(); ++i) lines.push_back({dims[i], c0[i], t.kind() == TopoKind::torus});
    }
    int rank(const std::vector<int>& c) const {
        int r = 0;
        for (size_t i = dims.size(); i-- > 0;) r = r * dims[i] + c[i];
        return r;
    }
    static int top_dim(const std::vector<int>& c, const std::vector<int>& c0) {
        for (size_t i = c.size(); i-- > 0;)
            if (c[i] != c0[i]) return static_cast<int>(i);
        return -1;
    }
    int parent(std::vector<int> c) const {
        const int j = top_dim(c, c0);
        const Line& l = lines[j];
        c[j] = l.torus ? (c[j] - l.side(c[j]) + l.A) % l.A : c[j] - l.side(c[j]);
        return rank(c);
    }
    // Children in sending order: the continuation in dimension j first, then both ways in each higher dimension.
    std::vector<int> children(const std::vector<int>& c) const {
        std::vector<int> out;
        const int j = top_dim(c, c0);
        auto add = [&](int dim, int s) {
            const int n = lines[dim].next(c[dim], s);
            if (n < 0) return;
            std::vector<int> d = c;
            d[dim] = n;
            out.push_back(rank(d));
        };
        if (j >= 0) add(j, lines[j].side(c[j]));
        for (int i = j + 1; i < static_cast<int>(dims.size()); ++i) add(i, 1), add(i, -1);
        return out;
    }
};

Schedule generate(const Problem& p) {
    const auto k = static_cast<uint32_t>(p.params.integer("segments"));
    Schedule s(Collective::bcast, p.ranks, 0, k, 0, p.only_rank);
    const Tree tree(p.topology, p.root);
    for (int r : p.build_ranks()) {
        RankBuilder b(s, r);
        const std::vector<int> c = p.topology.coords(r);
        std::vector<uint32_t> recvs;
        if (r != p.root) {
            const int from = tree.parent(c);
            for (uint32_t seg = 0; seg < k; ++seg) recvs.push_back(b.recv(from, 0, {Segment(Buf::out, seg, 1)}));
        }
        const std::vector<int> kids = tree.children(c);
        std::vector<uint32_t> last(kids.size());
        for (uint32_t seg = 0; seg < k; ++seg)
            for (size_t i = 0; i < kids.size(); ++i) {
                std::vector<uint32_t> deps;
                if (!recvs.empty()) deps.push_back(recvs[seg]);
                if (seg > 0) deps.push_back(last[i]);
                const Segment data(Buf::out, seg, 1);
                last[i] = b.send(kids[i], 0, std::span(&data, 1), deps);
            }
    }
    return s;
}

std::string applies(const Problem& p) {
    const TopoKind k = p.topology.kind();
    if (k == TopoKind::torus || k == TopoKind::mesh) return "";
    return "needs a mesh or torus topology (got " + p.topology.spec() + ")";
}

// The tree's depth on a torus, or on a mesh with the root in a corner (the candidates do not know the root).
int depth(const Topology& t) {
    int d = 0;
    for (int a : t.dims()) d += t.kind() == TopoKind::torus ? a / 2 : a - 1;
    return d;
}

const Registration reg{{
    .name = "bcast/torus",
    .collective = Collective::bcast,
    .summary = "pipelined dimension-ordered tree on a mesh/torus: k segments along dimension 0, then 1, ...",
    .source = "Juurlink, Rao, Sibeyn (TPDS 1998): dimension by dimension, here from one source, pipelined",
    .params = {pipeline_segments_param()},
    .applies = applies,
    .generate = generate,
    .default_topologies = {"torus2d", "mesh2d", "torus3d"},
    .sweep_params = {{{"segments", "1"}}, {{"segments", "3"}}},
    .candidates = [](const CandidateQuery& q) {
        const TopoKind k = q.topology.kind();
        return k == TopoKind::torus || k == TopoKind::mesh ? pipeline_candidates(q, depth(q.topology)) : std::vector<ParamSet>{{}};
    },
}};

}  // namespace
}  // namespace collplan
