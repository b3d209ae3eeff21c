// The binomial scatter that opens van de Geijn's broadcast (bcast/scatter_recursive_doubling_allgather,
// bcast/scatter_ring_allgather; MPICH MPII_Scatter_for_bcast). The message is S = P segments, out[0..P); the
// rank with relative rank v (algorithms/binomial.hpp) ends with segment v -- in fact with its whole subtree's
// segments out[v .. v + span(v)), which it received from its parent in one message and whose upper parts it
// passed on to its children, largest subtree first.
#pragma once
#include "collplan/algorithms/binomial.hpp"

namespace collplan {

inline void bcast_binomial_scatter(RankBuilder& b, const BinomialTree& t, int rank) {
    const int v = t.rel(rank);
    auto subtree = [&](int u) { return Segment(Buf::out, static_cast<uint32_t>(u), static_cast<uint32_t>(t.span(u))); };
    if (v != 0) b.recv(t.real(t.parent(v)), 0, {subtree(v)});
    for (int mask : t.child_masks(v)) {
        b.fence();
        b.send(t.real(v + mask), 0, {subtree(v + mask)});
    }
}

}  // namespace collplan
