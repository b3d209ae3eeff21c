// Lower bounds per collective (see lower_bounds.hpp).
#include "collplan/algorithms/lower_bounds.hpp"

#include <algorithm>
#include <cmath>

#include "collplan/algorithms/allgather/gossip_bounds.hpp"

namespace collplan {
namespace {

// Ordered pairs (i, j) with i on one given side of the bisection that bisection_links() counts and j on the
// other. Grids are cut across their longest side L after floor(L/2) planes, so an odd L splits the nodes
// unequally (a 9x9 torus: 36 | 45, not 40 | 41); elsewhere floor(P/2) | ceil(P/2).
double cut_pairs(const Topology& t, int P) {
    const TopoKind k = t.kind();
    if ((k == TopoKind::line || k == TopoKind::ring || k == TopoKind::mesh || k == TopoKind::torus) && !t.dims().empty()) {
        const int L = *std::max_element(t.dims().begin(), t.dims().end());
        const double side = static_cast<double>(L / 2) * (P / L);
        return side * (P - side);
    }
    return static_cast<double>(P / 2) * ((P + 1) / 2);
}

// Smallest r with base^r >= n.
int ceil_log(int base, int n) {
    int r = 0;
    for (int64_t reach = 1; reach < n; reach *= base) ++r;
    return r;
}

}  // namespace

double lower_bound_s(Collective c, int ranks, const Topology& topo, const Model& model, double size_bytes) {
    const int P = ranks;
    if (P <= 1) return 0;
    const int ports = std::max(1, model.ports);
    const double startup = model.startup_s(), beta = model.per_byte_s(), n = size_bytes;
    // Latency: information from one rank reaches at most (ports + 1) times as many ranks per step; a step is
    // at least min(startup, port gap) (the gap is below the startup only where a port frees early, as in LogGP).
    const double step = std::min(startup, model.message(0, 1).send_busy);
    const double latency = std::max(startup, ceil_log(ports + 1, P) * step);
    const double both_ways = model.duplex ? 1.0 : 2.0;  // !duplex: sends and receives share the ports
    switch (c) {
        case Collective::barrier: return latency;
        case Collective::allgather:  // + the gossip paper's bounds on lines, rings, meshes and tori
            return std::max({latency, both_ways * (P - 1) * n * beta / ports,
                             gossip_bounds(P, topo, model, n).lower_bound_s});
        case Collective::alltoall: {
            const double node = both_ways * (P - 1) * n * beta / ports;
            const int64_t links = topo.bisection_links();
            const double cut = cut_pairs(topo, P) * n * beta;
            return std::max({latency, node, links > 0 ? cut / static_cast<double>(links) : 0.0});
        }
        case Collective::allreduce: {
            const double transfer = 2.0 * (P - 1) / P * n * beta / ports;
            const double compute = static_cast<double>(P - 1) / P * model.reduce_s(n);
            return std::max({latency, transfer, compute});
        }
        // The rooted and reduce-scatter bounds of Chan, Heimlich, Purkayastha, van de Geijn, "Collective
        // communication: theory, practice, and experience", CCPE 19(13), 2007, table 1, with k ports.
        case Collective::bcast: return std::max(latency, n * beta / ports);  // every other rank receives n
        case Collective::gather:
        case Collective::scatter: return std::max(latency, (P - 1) * n * beta / ports);  // through the root's ports
        case Collective::reduce: {
            const double transfer = static_cast<double>(P - 1) / P * n * beta / ports;
            const double compute = static_cast<double>(P - 1) / P * model.reduce_s(n);
            return std::max({latency, transfer, compute});
        }
        case Collective::reduce_scatter_block: {  // n = one rank's block, the vector is P n
            const double transfer = (P - 1) * n * beta / ports;
            const double compute = model.reduce_s((P - 1) * n);  // P blocks x (P - 1) combinations over P ranks
            return std::max({latency, transfer, compute});
        }
        // Per-rank counts are not known here (like alltoallv's matrix): the latency bound alone.
        case Collective::reduce_scatter:
        case Collective::allgatherv: return latency;
        case Collective::alltoallv: return 0;
    }
    return 0;
}

}  // namespace collplan
