// Topologies: shapes, hop distances, routes and bisection width.
//   line:P  ring:P  mesh:AxB[xC...]  torus:AxB[xC...]  hypercube:d  full:P  fattree:k,n
// Ranks map to nodes one to one (rank r on node r; nodes numbered row-major, first coordinate fastest --
// see coords()). Routing: dimension-ordered (lowest dimension first) on mesh/torus (ties on even torus rings
// go in the + direction unless the message asks otherwise, see route()), e-cube (lowest differing bit first) on the hypercube, up/down on the fat tree
// (up to the nearest common ancestor level, deterministic choice of up-links by destination digits).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collplan/common/error.hpp"

namespace collplan {

enum class TopoKind : uint8_t { line, ring, mesh, torus, hypercube, full, fattree };

// A directed link; ids are dense in [0, num_links()).
struct Link {
    int32_t id;
    int32_t from;  // node or switch id (switches numbered after the P end nodes)
    int32_t to;
};

class Topology {
public:
    // Parses a spec; throws Error with one line saying what is valid.
    static Topology parse(const std::string& spec);
    // The default topology for P ranks when none is given: full:P.
    static Topology full(int ranks);

    TopoKind kind() const { return kind_; }
    const std::string& spec() const { return spec_; }  // canonical spec, e.g. "torus:8x8"
    int nodes() const { return nodes_; }                // end nodes (= ranks)
    const std::vector<int>& dims() const { return dims_; }  // mesh/torus sides; hypercube: d twos; fattree: {k, n}
    // Throws Error unless `ranks` equals nodes(): "topology torus:4x4 has 16 nodes but 15 ranks were given".
    void check_ranks(int ranks) const;

    int distance(int a, int b) const;               // hops on the route from a to b (0 when a == b)
    // Directed links in order. ties_minus: bit i set = in dimension i (i < 8) of a torus, an offset of exactly half
    // an even ring goes the - way instead of the + way (the Op::ties hint of a send; both ways are shortest).
    std::vector<Link> route(int a, int b, uint8_t ties_minus = 0) const;
    int num_links() const;                          // directed links (both directions of every cable)
    Link link(int id) const;
    int diameter() const;
    // Directed links crossing a minimum bisection in one direction (for the bisection lower bound).
    int64_t bisection_links() const;
    std::vector<int> coords(int node) const;        // mesh/torus: coordinates, first dimension fastest

private:
    TopoKind kind_ = TopoKind::full;
    std::string spec_;
    int nodes_ = 0;
    std::vector<int> dims_;
};

}  // namespace collplan
