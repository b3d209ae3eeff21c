// The one loop that checks every registered algorithm (SimGrid's idea): for each algorithm, every P up to a
// limit on each shape of its default topology families (topology/families.hpp), with every reduction operation it claims to support.
// Used by `collplan verify --all` and by the C++ and Python test suites.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "collplan/algorithms/registry.hpp"
#include "collplan/verify/verify.hpp"

namespace collplan {

struct SweepCase {
    std::string algorithm;
    int ranks;
    std::string topology;  // canonical spec
    std::string op;        // allreduce: "sum", "max" or "noncommutative"; others: ""
    std::map<std::string, std::string> params;  // as given to the generator (defaults filled in later)
    int root = 0;                  // rooted collectives: 0, P/2 and P-1 are swept
    std::vector<uint64_t> counts;  // allgatherv, reduce_scatter: uneven units per rank, some of them 0
};

// The cases of one algorithm for P = 1..max_ranks and each of its sweep_params (declined problems are skipped
// and counted in `declined`). Rooted collectives get roots 0, P/2 and P-1; collectives with per-rank counts get
// sweep_counts(P). alltoallv has no cases (it needs a matrix; its own tests sweep it).
std::vector<SweepCase> sweep_cases(const Algorithm& a, int max_ranks, int* declined = nullptr);

// The per-rank counts the sweep gives allgatherv and reduce_scatter: uneven, with zeros (2, 3, 0, 1, 2, ...).
std::vector<uint64_t> sweep_counts(int ranks);

// Verifies algorithm `name` at P = ranks without ever holding more than two ranks' programs: rank 0's program,
// verified for every rank (verify.hpp, one rank for every rank), then every other rank's program generated alone
// and compared with rank 0's moved (schedule/symmetry.hpp: check_moved_peers, check_moved_blocks; a scratch buffer
// may keep its blocks or move them by rank, whichever rank 1's shows, the same for all). The answer is the whole
// verification's: a rank whose ops or peers are not rank 0's moved (a false symmetry declaration) fails as
// "asymmetric". Throws Error when the collective is not covered (one_rank_verify_refusal), when a rank's blocks
// are not rank 0's moved (the data does not move with the ranks: recursive doubling's ranges under XOR keep their
// order, so no move of blocks maps rank 0's program onto rank 1's; such a schedule needs the whole verification),
// or when the problem is bad. `progress` (may be empty) is called with the ranks compared so far, about every
// second of work.
VerifyResult verify_by_symmetry(const std::string& name, int ranks, const Topology& topo,
                                const std::map<std::string, std::string>& params, const VerifyOptions& opt = {},
                                const Job& job = default_job(),
                                const std::function<void(int done, int ranks)>& progress = {});

// Generates and verifies one case; a generator exception is a failure with reason "generator-error".
// Generator errors are a failed case; a MemoryLimitError and the job's cancellation propagate.
VerifyResult run_case(const SweepCase& c, const Job& job = default_job());

}  // namespace collplan
