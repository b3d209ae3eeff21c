// Wisdom: which algorithm to use for which problem, read by the PMPI library (and written by the planner).
//
// A wisdom file is JSON (docs/runtime.md):
//   {"format": "collplan-wisdom/1",
//    "entries": [{"collective": "allreduce", "ranks": 8, "op": "sum", "min_bytes": 0, "max_bytes": 65536,
//                 "algorithm": "allreduce/recursive_doubling", "params": {}}, ...]}
// An entry matches a call of its collective when `ranks` (optional; absent = any) equals the communicator size,
// `op` (optional; allreduce) names the call's operation (op_name() in runtime/mpi: sum, max, ..., user,
// noncommutative), `topology` (optional) equals the topology the caller declares (the PMPI library declares
// none, so it skips entries with a topology), and min_bytes <= bytes < max_bytes (both optional: 0 and
// unbounded). Other members (the planner writes "evaluator", "machine", "predicted_s") are ignored. Bytes are the collective's message size
// as everywhere in collplan: allgather -- bytes per rank, alltoall -- bytes per destination, allreduce -- the
// vector, barrier -- 0; alltoallv entries ignore the byte range (the ranks do not all know the total). The first
// matching entry wins; algorithm "native" means the MPI library's own collective.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collplan/schedule/schedule.hpp"

namespace collplan {

struct WisdomEntry {
    Collective collective = Collective::allgather;
    int ranks = -1;                       // -1: any
    std::string op;                       // "": any
    std::string topology;                 // "": the entry holds for a caller without a topology only
    uint64_t min_bytes = 0;
    uint64_t max_bytes = UINT64_MAX;      // exclusive
    std::string algorithm;                // registry name, or "native"
    std::map<std::string, std::string> params;
};

struct Wisdom {
    std::vector<WisdomEntry> entries;
    const WisdomEntry* lookup(Collective c, int ranks, uint64_t bytes, const std::string& op = "",
                              const std::string& topology = "") const;
};

Wisdom parse_wisdom(const std::string& json);     // throws Error("wisdom: ...") naming what is wrong
// Reads at most kMaxWisdomBytes (a device like /dev/zero is not read forever): a larger file is an Error.
inline constexpr size_t kMaxWisdomBytes = size_t{16} << 20;
Wisdom load_wisdom(const std::string& path, size_t max_bytes = kMaxWisdomBytes);
// The canonical JSON of the entries, what parse_wisdom reads back: the oracle of the round-trip property that the
// fuzzer (fuzz/wisdom.cpp) and the tests check. Wisdom files are written by the planner (python/collplan/planner.py,
// merge_wisdom), which keeps the members this struct does not hold ("evaluator", "machine", a user's own).
std::string to_json(const Wisdom& w);

// "ring" / "allreduce/ring:k=2,topology=ring:8" -> name and parameters. A parameter value may itself contain
// ':' (topologies); parameters are separated by ','.
std::pair<std::string, std::map<std::string, std::string>> parse_algorithm_spec(const std::string& spec);

}  // namespace collplan
