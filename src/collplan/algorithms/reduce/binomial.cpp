// reduce/binomial -- binomial-tree reduce: in round k a rank whose (tree) rank has bit k set sends its partial
// result to the rank with that bit cleared and stops; the others receive and combine.
//
// Source:        MPICH MPIR_Reduce_intra_binomial (from MPICH-1); Thakur, Rabenseifner, Gropp, "Optimization of
//                collective communication operations in MPICH" (IJHPCA 2005), sec. 4.4.
// Preconditions: any P >= 1, any root; any topology (partners at distance 2^k, a hypercube's edges).
//                relative=0 (default): the tree is rooted at rank 0 and its result is sent to the root at the end
//                -- MPICH's path for non-commutative operations; every partial result is an interval of ranks
//                with the lower one on the left, so any operation is exact (needs_commutative = false).
//                relative=1: the tree is rooted at the root (ranks relative to it, (r - root) mod P) -- MPICH's
//                path for commutative operations; its intervals wrap around rank P-1 -> 0, so it needs a
//                commutative operation when root != 0 (needs_commutative = root != 0; at root 0 the two are one).
// Rounds:        ceil(log2 P), plus 1 when relative=0 and root != 0. A rank with tree rank t receives from
//                t + 2^k for every k below the lowest set bit of t (while t + 2^k < P), then sends to t - 2^j,
//                2^j = that bit; it receives and combines one child at a time through one scratch block (MPICH).
// Cost:          ceil(log2 P) (alpha + m beta + m gamma) [+ alpha + m beta]   [Hockney; m = the vector]
// Memory:        tmp of 2 blocks (the receive block and, off the root, the accumulator). S = 1: in = 1 block,
//                out = 1 block at the root only.
// Example:       P = 4, root 0: rank 1 sends x1 to 0 and rank 3 sends x3 to 2; rank 0 receives out = x1 and
//                makes out = x0 (+) out, rank 2 likewise tmp[1] = x2 (+) x3 and sends it to 0, which receives
//                tmp[0] and makes out = out (+) tmp[0] = (x0 (+) x1) (+) (x2 (+) x3). Root 2, relative=0: the
//                same, except that rank 0 accumulates in tmp[1] and finally sends it to 2, which receives out.
// Consistency:   rank-consistent (only the root has the result).
#include "collplan/algorithms/binomial.hpp"
#include "collplan/algorithms/registry.hpp"

namespace collplan {
namespace {

void build_rank(Schedule& s, int r, int root, bool relative) {
    const int P = s.ranks();
    const BinomialTree tree(P, relative ? root : 0);
    const int tree_root = tree.root, t = tree.rel(r);
    RankBuilder b(s, r);
    const Segment in(Buf::in, 0, 1), rbuf(Buf::tmp, 0, 1);
    // The accumulator: the root's out where the root is the tree's root, else a scratch block.
    const Segment acc = r == tree_root && r == root ? Segment(Buf::out, 0, 1) : Segment(Buf::tmp, 1, 1);
    bool combined = false;  // acc holds x_r combined with at least one child's interval
    const std::vector<int> masks = tree.child_masks(t);
    for (auto m = masks.rbegin(); m != masks.rend(); ++m) {  // nearest child first: intervals in rank order
        const int child = tree.real(t + *m);
        b.fence();
        if (!combined) {
            b.recv(child, 0, {acc});
            b.fence();
            b.reduce({in}, {acc});  // x_r (+) (the child's interval)
            combined = true;
            continue;
        }
        b.recv(child, 0, {rbuf});
        b.fence();
        b.reduce({rbuf}, {acc}, {}, opflag::reverse);  // (my interval) (+) (the child's, which follows it)
    }
    if (t != 0) {
        b.fence();
        b.send(tree.real(tree.parent(t)), 0, {combined ? acc : in});
    }
    if (t == 0 && r == root && !combined) b.copy({in}, {acc});  // P = 1
    if (tree_root == root) return;
    if (t == 0) {
        b.fence();
        b.send(root, 0, {combined ? acc : in});
    } else if (r == root) {
        b.fence();
        b.recv(tree_root, 0, {Segment(Buf::out, 0, 1)});
    }
}

Schedule generate(const Problem& p) {
    const bool relative = p.params.integer("relative") == 1;
    Schedule s(Collective::reduce, p.ranks, 1, 1, 2, p.only_rank);
    s.needs_commutative = relative && p.root != 0;
    s.rank_consistent = true;
    for (int r : p.build_ranks()) build_rank(s, r, p.root, relative);
    return s;
}

const Registration reg{{
    .name = "reduce/binomial",
    .collective = Collective::reduce,
    .summary = "binomial tree, ceil(log2 P) rounds; rooted at 0 and forwarded (any op) or at the root (commutative)",
    .source = "MPICH MPIR_Reduce_intra_binomial; Thakur, Rabenseifner, Gropp (IJHPCA 2005)",
    .params = {{"relative", ParamKind::integer, "0", 0, 1,
                "1: tree rooted at the root (commutative ops); 0: rooted at rank 0, result sent to the root"}},
    .applies = [](const Problem&) { return std::string(); },
    .generate = generate,
    .default_topologies = {"hypercube", "full"},
    .sweep_params = {{{"relative", "0"}}, {{"relative", "1"}}},
    .candidates = [](const CandidateQuery&) { return range_candidates("relative", 0, 1); },
    .mpi_default = true,
}};

}  // namespace
}  // namespace collplan
