// Shared helpers of the alltoallv family (unstructured all-to-many personalized communication; Wang, Lin, Ranka,
// "Distributed scheduling of unstructured collective communication on the CM-5", 1993):
//   - the communication matrix COM (P x P units, row = source): checks, statistics, the paper's seeded test sets
//     1 (about d messages per row and column, uniform sizes) and 2 (the same pattern, sizes 1..max_units);
//   - a portable seeded random generator (std distributions differ between standard libraries: the same seed must
//     give the same matrix and the same schedule everywhere);
//   - phased plans: a list of phases, each a partial permutation (every rank sends at most one message and
//     receives at most one), built into a Schedule with one group (fence) per phase. RS_N, RS_NH and the edge
//     colouring are built from their plans; LP's plan has the same phases, but its generator builds each rank's
//     program from the rank's partners alone; AC is not phased (async.cpp builds its own schedule).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collplan/algorithms/registry.hpp"

namespace collplan::alltoallv {

// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next();
    uint64_t below(uint64_t n);  // uniform in [0, n), n >= 1 (rejection sampling, no modulo bias)
    template <class T>
    void shuffle(std::vector<T>& v) {  // Fisher-Yates
        for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
    }

private:
    uint64_t state_;
};

// "" when `m` is a valid P x P matrix, else the reason (one line).
std::string check_matrix(std::span<const uint64_t> m, int P);

// The paper's statistics (sec. 5: messages sent per processor, message lengths) plus the degrees that bound the
// number of contention-free phases from below.
struct MatrixStats {
    int ranks = 0;
    uint64_t messages = 0;                    // non-zero off-diagonal entries
    uint64_t total_units = 0;
    int max_sent = 0, min_sent = 0;           // messages sent per processor
    double avg_sent = 0;
    int max_recv = 0, min_recv = 0;           // messages received per processor
    uint64_t max_len = 0, min_len = 0;        // message lengths in units (0 when there is no message)
    double avg_len = 0;
    int degree = 0;                           // Delta = max(max_sent, max_recv): phases of an optimal schedule
    uint64_t max_row_units = 0, max_col_units = 0;
};
MatrixStats matrix_stats(std::span<const uint64_t> m, int P);

// Test set 1: every row and column has about d active entries (exactly d unless the random construction runs
// out of room), all of `units` units, no diagonal. 0 <= d <= P - 1.
std::vector<uint64_t> testset_uniform(int P, int d, uint64_t seed, uint64_t units = 1);
// Test set 2: the pattern of test set 1 with sizes uniform in 1..max_units (the paper: 32).
std::vector<uint64_t> testset_nonuniform(int P, int d, uint64_t max_units, uint64_t seed);

struct Transfer {
    int32_t src = 0, dst = 0;
    uint64_t units = 0;
};
using Phase = std::vector<Transfer>;

struct PhasePlan {
    std::vector<Phase> phases;
    uint64_t work = 0;  // elementary scheduling steps (entry probes, heap moves): the scheduling cost's driver
};

// The plans of the phased algorithms (each defined in its algorithm's file).
PhasePlan plan_linear_permutation(std::span<const uint64_t> m, int P);
PhasePlan plan_random(std::span<const uint64_t> m, int P, uint64_t seed);
PhasePlan plan_random_heap(std::span<const uint64_t> m, int P, uint64_t seed, int cutoff_pct);
PhasePlan plan_edge_coloring(std::span<const uint64_t> m, int P);
// The plan of the phased algorithm `name` ("linear_permutation", "random_schedule", "random_schedule_heap",
// "edge_coloring", with or without the "alltoallv/" prefix); seed and cutoff_pct where it takes them. Throws Error
// naming the allowed ones.
PhasePlan plan_of(const std::string& name, std::span<const uint64_t> m, int P, uint64_t seed, int cutoff_pct);

// "" when every phase is a partial permutation without self-messages and the transfers of each pair add up to
// its matrix entry; else the first violation.
std::string check_plan(const PhasePlan& plan, std::span<const uint64_t> m, int P);

// The schedule of a plan: rank r copies in[r] -> out[r] when COM(r, r) > 0, then for every phase in which it takes
// part opens a group with its recv (into out[src]) and its send (from in[dst]), each with the transfer's units.
// A message split over several phases is sent as pieces of the same block (docs/schedule.md, "pieces").
// With p.only_rank, that rank's program alone (the plan is still every rank's).
Schedule phased_schedule(const Problem& p, const PhasePlan& plan);

// Copies the diagonal block of rank r when it is non-empty.
void copy_diagonal(RankBuilder& b, const Problem& p, int r);

// applies() of every alltoallv algorithm: "" or why not.
std::string applies_matrix(const Problem& p);

// The "seed" parameter every randomised algorithm of the family declares.
ParamSpec seed_param();

}  // namespace collplan::alltoallv
