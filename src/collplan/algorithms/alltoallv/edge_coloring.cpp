// alltoallv/edge_coloring -- the optimum number of contention-free phases: a bipartite edge colouring.
//
// Source:        Konig's edge-colouring theorem (1916): a bipartite graph of maximum degree Delta has a proper
//                edge colouring with Delta colours; the alternating-path construction is in e.g. Schrijver,
//                "Combinatorial Optimization" (2003), sec. 20.1. Used here as the reference that RS_N's
//                d + log d phases are compared with (the paper's phases are partial permutations, i.e. colours).
// Preconditions: any P >= 1; a P x P communication matrix; any topology.
// Rounds:        exactly Delta phases, Delta = the largest number of messages any rank sends or receives (no
//                schedule without node contention can use fewer). Senders and receivers are the two sides of
//                a bipartite graph with an edge i -> j per message; edges are coloured one by one: with colour a
//                free at i and b free at j, the a/b alternating path from j is swapped so that a is free at
//                both. Colour c is phase c. Deterministic (no seed).
// Cost:          sum over the Delta phases of (alpha + largest message of the phase * beta). Scheduling:
//                O(nnz * P) in the worst case (one alternating path per edge).
// Memory:        two P x Delta colour tables. One rank's program still colours the whole graph (O(nnz * P)
//                worst case) and keeps only its own messages.
// Example:       Table 1 of the paper (8 x 8, rows send 3 to 5 messages, column 2 receives 5): Delta = 5
//                phases, where RS_N needs about 5 + log 5.
#include <algorithm>

#include "collplan/algorithms/alltoallv/unstructured_common.hpp"

namespace collplan {
namespace {

class Coloring {
public:
    Coloring(int P, int colors)
        : P_(P), C_(colors), left_(static_cast<size_t>(P) * colors, -1), right_(static_cast<size_t>(P) * colors, -1) {}

    void add(int u, int v, uint64_t& work) {
        const int a = free_color(left_, u, work), b = free_color(right_, v, work);
        if (right_[at(v, a)] >= 0) flip(v, a, b, work);  // a is used at v: swap a/b along the path from v
        set(u, v, a);
    }
    int left(int u, int c) const { return left_[at(u, c)]; }

private:
    size_t at(int x, int c) const { return static_cast<size_t>(x) * C_ + c; }
    int free_color(const std::vector<int>& side, int x, uint64_t& work) const {
        for (int c = 0; c < C_; ++c, ++work)
            if (side[at(x, c)] < 0) return c;
        throw Error("edge colouring: no free colour (internal error)");
    }
    void set(int u, int v, int c) { left_[at(u, c)] = v, right_[at(v, c)] = u; }

    // The path from right vertex v: its a-edge to a left vertex, that vertex's b-edge, and so on; swap a and b.
    void flip(int v, int a, int b, uint64_t& work) {
        struct Edge { int u, v, c; };
        std::vector<Edge> path;
        int x = v, c = a;
        bool on_right = true;
        for (;;) {
            const int y = on_right ? right_[at(x, c)] : left_[at(x, c)];
            if (y < 0) break;
            path.push_back(on_right ? Edge{y, x, c} : Edge{x, y, c});
            x = y, on_right = !on_right, c = c == a ? b : a;
            ++work;
        }
        for (const Edge& e : path) left_[at(e.u, e.c)] = -1, right_[at(e.v, e.c)] = -1;
        for (const Edge& e : path) set(e.u, e.v, e.c == a ? b : a);
    }

    int P_, C_;
    std::vector<int> left_, right_;  // colour tables: left_[u][c] = v of u's edge of colour c (or -1)
};

}  // namespace

alltoallv::PhasePlan alltoallv::plan_edge_coloring(std::span<const uint64_t> m, int P) {
    const MatrixStats st = matrix_stats(m, P);
    PhasePlan plan;
    Coloring col(P, std::max(1, st.degree));
    for (int i = 0; i < P; ++i)
        for (int j = 0; j < P; ++j)
            if (i != j && m[static_cast<size_t>(i) * P + j]) col.add(i, j, plan.work);
    plan.phases.resize(static_cast<size_t>(st.degree));
    for (int c = 0; c < st.degree; ++c)
        for (int i = 0; i < P; ++i)
            if (const int j = col.left(i, c); j >= 0) plan.phases[c].push_back({i, j, m[static_cast<size_t>(i) * P + j]});
    return plan;
}

namespace {

const Registration reg{{
    .name = "alltoallv/edge_coloring",
    .collective = Collective::alltoallv,
    .summary = "reference optimum: exactly Delta contention-free phases by bipartite edge colouring",
    .source = "Konig's edge-colouring theorem; alternating paths as in Schrijver, Combinatorial Optimization, sec. 20.1",
    .params = {},
    .applies = alltoallv::applies_matrix,
    .generate = [](const Problem& p) {
        return alltoallv::phased_schedule(p, alltoallv::plan_edge_coloring(p.counts, p.ranks));
    },
}};

}  // namespace
}  // namespace collplan
