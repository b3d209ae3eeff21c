// Rank symmetry: schedules in which every rank does what rank 0 does, moved by a group acting on the ranks.
//
// A schedule is symmetric under a group G that acts regularly on the ranks (g_j is the one element taking rank 0
// to rank j) when, for every rank j, rank j's program is rank 0's with each peer x replaced by g_j(x): the same
// ops, kinds, flags, ports, tags, dependencies and units (the blocks they name may differ; no backend that prices
// time reads them). Two groups cover the classic algorithms:
//   cyclic  g_j(x) = (x + j) mod P   -- rings, Bruck, dissemination, pairwise shifts (any P)
//   xor     g_j(x) = x XOR j         -- recursive doubling and halving, hypercube exchanges (P = 2^d)
// An algorithm declares its symmetry in the registry (Algorithm::symmetry); tests check every declaration against
// the whole schedule (check_symmetry) at every P of the verification sweep.
//
// What it buys: the estimate of a symmetric schedule follows rank 0 alone (model/estimate.cpp), so the planner
// prices a 65,536-rank ring from one rank's program instead of 2^32 ops. That walk gives the whole walk's times
// exactly when nothing that the walk shares between ranks breaks the symmetry: see symmetric_estimate_refusal.
#pragma once
#include <string>

#include "collplan/schedule/schedule.hpp"

namespace collplan {

class Model;
class Topology;

const char* to_string(Symmetry s);
// "none", "cyclic", "xor"; throws Error naming the value and those allowed.
Symmetry parse_symmetry(const std::string& name);

// g_j(x): where the group element that takes rank 0 to rank j takes rank x.
inline int act(Symmetry s, int P, int j, int x) {
    return s == Symmetry::xor_ ? x ^ j : static_cast<int>((static_cast<long long>(x) + j) % P);
}
// The rank i with g_i(j) = 0 ... = g_j^{-1}(0): rank 0 receives from i what rank 0 sends to j's image. Rank 0's
// k-th send to j meets, in every rank's terms, rank 0's k-th receive from inverse(j) (same tag).
inline int inverse(Symmetry s, int P, int j) { return s == Symmetry::xor_ ? j : (P - j) % P; }

// "" when the whole schedule `s` is symmetric under `sym`, else the first difference ("rank 5 op 3: peer 7,
// expected 6"). Throws Error for a schedule that is not whole, or xor at a P that is not a power of two.
std::string check_symmetry(const Schedule& s, Symmetry sym);

// ------------------------------------------------------------------------------------- the data, moved
// For the verifier, the group must move data too. Rank j's program is rank 0's moved when, besides the peers, every
// block it names is rank 0's block moved: a buffer laid out `same` keeps the block (rank-relative data: allgather's
// input, a Bruck's scratch), a buffer laid out `by_rank` holds one equal part per rank and block b of rank 0's part
// of owner o becomes the same block of part g_j(o) (allgather's output, alltoall's input and output). Then rank j
// holds, at every step, rank 0's items moved (moved_item) and its messages are rank 0's moved: a walk of rank 0's
// program alone verifies every rank (verify.hpp: one-rank verification; schedule/walk.hpp: Walk).
enum class BlockLayout : uint8_t { same, by_rank };
const char* to_string(BlockLayout l);

// "" when the one-rank verification covers schedule `s`'s collective, else why not. It covers the collectives whose
// items move with the ranks and carry no counts or expressions: allgather, alltoall, barrier.
std::string one_rank_verify_refusal(const Schedule& s);
// The layout of the in or out buffer of the collectives one_rank_verify_refusal accepts.
BlockLayout block_layout(Collective c, Buf b);
// The item (collective.hpp) rank j holds where rank 0 holds `item`: allgather's chunk c of rank o becomes chunk c
// of g_j(o), alltoall's block o -> t becomes g_j(o) -> g_j(t).
int64_t moved_item(Collective c, const CollShape& sh, int64_t item, Symmetry sym, int j);

// Rank j's program, in `other` (whole, or holding rank j alone), against rank 0's program of `rank0` moved by g_j:
// check_moved_peers compares what check_symmetry compares (ops, peers, tags, dependencies, units);
// check_moved_blocks compares every block the ops name, in order, by the layouts (tmp: `tmp`). "" when equal, else
// the first difference. Both schedules must be of the same collective, P and buffers.
std::string check_moved_peers(const Schedule& rank0, const Schedule& other, int j);
std::string check_moved_blocks(const Schedule& rank0, const Schedule& other, int j, BlockLayout tmp);

// "" when the estimate of a schedule of rank 0 alone that is symmetric under `sym` equals the whole walk's on this
// topology and model, else why not: the model must let a port send and receive at once (duplex: on a simplex port
// rank r's send and the message into r contend, and the walk serves them in rank order, which no rotation keeps),
// have no host channel (a host holds consecutive ranks, which a rotation moves across hosts), and either ignore
// hops or price them on a topology whose distances the group keeps (full; ring and 1-D torus under cyclic;
// hypercube, and fat trees of a power-of-two arity, under xor).
std::string symmetric_estimate_refusal(Symmetry sym, const Topology& topo, const Model& model);

}  // namespace collplan
