// The gossip paper's lower bounds (see gossip_bounds.hpp).
#include "collplan/algorithms/allgather/gossip_bounds.hpp"

#include <algorithm>
#include <cmath>

namespace collplan {

GossipBounds gossip_bounds(int ranks, const Topology& topo, const Model& model, double size_bytes) {
    GossipBounds b;
    const TopoKind kind = topo.kind();
    const bool grid = kind == TopoKind::line || kind == TopoKind::ring || kind == TopoKind::mesh ||
                      kind == TopoKind::torus;
    if (!grid || ranks < 2) return b;
    b.applies = true;
    const int k = std::max(1, model.ports);
    int generations = 0;
    for (int64_t reach = 1; reach < ranks; reach *= k + 1) ++generations;
    const double ts = model.startup_s();
    const double step = std::min(ts, model.message(0, 1).send_busy);  // as the generic latency bound (LogGP)
    const double transfer = (ranks - 1) * size_bytes * model.per_byte_s() / k;
    const double hops = model.message(0, topo.diameter()).recv_done;  // t_s + D t_h (0 bytes)
    b.lemma1_s = std::max({generations * step, transfer, hops});
    const std::string mk = model.kind();
    if (mk == "hockney" || mk == "wormhole" || mk == "circuit") b.concentration_s = generations * ts + transfer;
    b.lower_bound_s = std::max(b.lemma1_s, b.concentration_s);
    return b;
}

double theorem1_shape(int n, double r) {
    if (n < 2 || !(r > 0) || r >= n / std::exp(1.0)) return std::nan("");
    return n * std::log(static_cast<double>(n)) / std::log(n / r);
}

}  // namespace collplan
