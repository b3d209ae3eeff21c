// Lower bounds of the gossip paper (Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 1998,
// sec. 3) for allgather on linear arrays, rings, meshes and tori, in the node form that holds for collplan's
// estimate (ports per node; the estimate has no link contention, so bounds that count links are network bounds).
//
// Notation: N = P PUs, k = receive ports per node (the paper's degree Delta in its all-port model), D = diameter,
// t_s = startup, m = bytes per PU, beta = time per byte, t_h = hop time; r = t_s / (m beta).
//   Lemma 1 (concentration into one PU; gossip needs at least as long), its three terms each a bound:
//     ceil(log_{k+1} N) t_s  (a PU can hold at most (k+1)^t PUs' data after t startups),
//     (N-1) m beta / k       (the (N-1) m bytes enter one PU through k ports),
//     t_s + D t_h            (some data travels D hops; the paper's D/2 t_h for concentration).
//   The simplified concentration bound (Lemma 1 without the hop term, in units of m beta):
//     T'_con >= r ceil(log_{k+1} N) + (N-1)/k, i.e. ceil(log_{k+1} N) t_s + (N-1) m beta / k: the two terms add
//     (a PU receives its N-1 packets in messages of at least ceil(log_{k+1} N) "generations"; Bruck, Ho, Kipnis,
//     Upfal, Weathersby, IEEE TPDS 8(11) 1997 prove the sum for the k-port model) -- applied only where a port is
//     busy for a whole message (hockney, wormhole, circuit), not to LogGP whose ports free early.
//   Theorem 1 (rings: Omega(r log n + n log n / log(n/r))) is asymptotic; its constants are lost in the extraction
//     and it counts links, so it is not part of lower_bound_s: theorem1_shape gives n ln n / ln(n/r) for
//     comparison (gossip-ring prints it).
#pragma once
#include "collplan/model/model.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan {

struct GossipBounds {
    bool applies = false;         // allgather on line, ring, mesh or torus with P >= 2
    double lemma1_s = 0;          // max of Lemma 1's three terms
    double concentration_s = 0;   // the simplified concentration bound (0 where it is not applied)
    double lower_bound_s = 0;     // max of the two
};

GossipBounds gossip_bounds(int ranks, const Topology& topo, const Model& model, double size_bytes);

// n ln n / ln(n/r) for r < n/e (Theorem 1's dissemination term; constants unknown), else NaN.
double theorem1_shape(int n, double r);

}  // namespace collplan
