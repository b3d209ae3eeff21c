// Topology families: the names an algorithm gives for the topologies it is meant for (Algorithm::default_topologies
// in algorithms/registry.hpp) -- full, ring, line, hypercube, torus2d, mesh2d, torus3d, mesh3d -- and the
// topology specs each stands for at P ranks. `verify --all` (verify/sweep.hpp) checks every shape of a family; the
// MPI runtime (runtime/mpi/collectives.cpp, pick_topology) tries the balanced grid that MPI_Dims_create gives.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace collplan {

// Every shape of a family for P ranks: "full" -> full:P, "ring" -> ring:P, "line" -> line:P,
// "hypercube" -> hypercube:log2 P (P a power of two), "torus2d"/"mesh2d" -> every AxB = P with A, B >= 2,
// "torus3d"/"mesh3d" -> every AxBxC = P with sides >= 2. Throws Error naming the allowed families.
std::vector<std::string> family_topologies(const std::string& family, int ranks);

// The sides of a balanced nd-dimensional grid of P ranks, largest first (MPI_Dims_create's contract), or empty.
using BalancedGrid = std::function<std::vector<int>(int ranks, int nd)>;

// The shapes the runtime tries: full, ring and line as family_topologies; the hypercube when P >= 2 is a power of
// two; a grid family the grid `balanced` gives with collplan's first dimension the fastest (its sides reversed)
// and, in 2-D, also transposed. Throws Error naming the allowed families.
std::vector<std::string> balanced_family_shapes(const std::string& family, int ranks, const BalancedGrid& balanced);

}  // namespace collplan
