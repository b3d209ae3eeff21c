// The one registry of algorithms. Each algorithm file registers itself with a static Registration object:
//
//   static const Registration reg{{
//       .name = "allgather/ring", .collective = Collective::allgather,
//       .summary = "...", .source = "...",
//       .params = {{"k", ParamKind::integer, "2", 2, 64, "radix"}},
//       .applies = [](const Problem& p) -> std::string { return ""; },  // "" = applies, else the reason not
//       .generate = [](const Problem& p) { ... return schedule; }}};
//
// The CLI, the planner, the docs, the MPI runtime and the tests enumerate it, and no other code keeps a list of
// algorithms. Code that names one algorithm does so for a purpose of its own: the Python MPI module's default per
// collective (python/collplan/mpi.py), the reproductions of the papers, a paper family's closed forms.
#pragma once
#include <bit>
#include <functional>
#include <map>
#include <ranges>
#include <string>
#include <vector>

#include "collplan/common/job.hpp"
#include "collplan/schedule/schedule.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan {

class Model;

enum class ParamKind : uint8_t { integer, integer_list, text };

struct ParamSpec {
    std::string name;
    ParamKind kind = ParamKind::integer;
    std::string default_value;  // canonical text; "auto" allowed where the algorithm can choose
    long long min = 0, max = 0; // integer (each element of a list) must lie in [min, max]; text: unchecked
    std::string help;
};

// Validated parameters: every name is declared by the algorithm and every value is in range.
class Params {
public:
    Params() = default;
    explicit Params(std::map<std::string, std::string> v) : values_(std::move(v)) {}
    long long integer(const std::string& name) const;
    std::vector<long long> integer_list(const std::string& name) const;
    const std::string& text(const std::string& name) const;
    bool is_auto(const std::string& name) const { return text(name) == "auto"; }
    std::string canonical() const;  // "k=v;k=v" sorted by name
    const std::map<std::string, std::string>& values() const { return values_; }

private:
    std::map<std::string, std::string> values_;
};

// What a generator is asked for.
struct Problem {
    Collective collective;
    int ranks;
    Topology topology;
    Params params;
    std::vector<uint64_t> counts;  // units of each item (Schedule::counts): alltoallv's P*P matrix (row = source),
                                   // allgatherv's and reduce_scatter's P counts; empty otherwise
    int only_rank = Schedule::kAllRanks;  // >= 0: build only this rank's program (the MPI runtime)
    int root = 0;                         // rooted collectives: the root rank

    // The ranks whose programs a generator builds: 0..P-1, or only_rank alone. A generator that loops over
    // these and passes only_rank to the Schedule it creates builds one rank's program in that rank's time.
    auto build_ranks() const {
        return only_rank == Schedule::kAllRanks ? std::views::iota(0, ranks) : std::views::iota(only_rank, only_rank + 1);
    }
};

// What `estimate --algorithm all` and the planner ask an algorithm for: the parameter sets worth pricing for P
// ranks on a topology under a model, for sizes in [min_bytes, max_bytes] (e.g. every multiphase partition that is
// optimal somewhere in the range).
struct CandidateQuery {
    int ranks;
    const Topology& topology;
    const Model& model;
    double min_bytes, max_bytes;
};
using ParamSet = std::map<std::string, std::string>;

struct Algorithm {
    std::string name;        // "<collective>/<algorithm>"
    Collective collective;
    std::string summary;     // one line
    std::string source;      // paper or library it comes from
    std::vector<ParamSpec> params;
    std::function<std::string(const Problem&)> applies;  // "" if it applies, else why not (one line)
    std::function<Schedule(const Problem&)> generate;
    std::vector<std::string> default_topologies;  // families (topology/families.hpp): every shape for `verify
                                                  // --all`; the runtime tries their balanced grids
    std::vector<std::map<std::string, std::string>> sweep_params;  // parameter sets `verify --all` covers
                                                                    // (empty: the defaults only)
    std::function<std::vector<ParamSet>(const CandidateQuery&)> candidates;  // empty: the defaults only
    // allreduce: the parameter values that make the schedule rank-consistent (Schedule::rank_consistent) when the
    // defaults do not; empty when the defaults already are, or when no variant is. The MPI runtime applies them
    // to floating-point data where the user did not set those parameters.
    std::map<std::string, std::string> rank_consistent_params;
    // The algorithm collplan.mpi runs when a call names none (at most one per collective; alltoallv has none).
    bool mpi_default = false;
    // The group under which every rank's program is rank 0's moved, for the problem (schedule/symmetry.hpp; tests
    // check it against the whole schedule); empty: none.
    std::function<Symmetry(const Problem&)> symmetry;
    // A lower bound of estimate() of the problem's schedule at a collective size, in closed form, without
    // generating the schedule: the planner then need not generate a candidate that cannot place at any size
    // (planner.py, price_estimate_pruned). Empty: none (the planner bounds the generated schedule instead).
    std::function<double(const Problem&, const Model&, double size_bytes)> bound;
};

class Registry {
public:
    static const Registry& get();
    const std::vector<Algorithm>& all() const { return algs_; }
    std::vector<const Algorithm*> for_collective(Collective c) const;
    // Throws Error listing the registered names of that collective when `name` is unknown.
    const Algorithm& find(const std::string& name) const;
    void add(Algorithm a);  // used by Registration only

private:
    std::vector<Algorithm> algs_;
};
Registry& mutable_registry();

// Algorithm::symmetry declarations the algorithms share.
inline Symmetry cyclic_symmetry(const Problem&) { return Symmetry::cyclic; }
inline Symmetry xor_symmetry(const Problem& p) {  // at P = 2^d; none elsewhere
    return p.ranks > 0 && std::has_single_bit(static_cast<unsigned>(p.ranks)) ? Symmetry::xor_ : Symmetry::none;
}
// allgatherv, reduce_scatter: cyclic when every rank's count is the same (the ops' units follow the counts).
inline Symmetry cyclic_if_even(const Problem& p) {
    for (uint64_t c : p.counts)
        if (c != p.counts.front()) return Symmetry::none;
    return Symmetry::cyclic;
}

struct Registration {
    explicit Registration(Algorithm a) { mutable_registry().add(std::move(a)); }
};

// Validates raw "k=v" parameters against the algorithm's specs (unknown names, bad integers, ranges),
// fills defaults, and returns them.
Params validate_params(const Algorithm& a, const std::map<std::string, std::string>& raw);

// The algorithm's candidate parameter sets for the query ({{}}, the defaults, when it declares none).
std::vector<ParamSet> candidate_params(const Algorithm& a, const CandidateQuery& q);

// {param=lo}, {param=lo+1}, ..., {param=hi} ({{}} when hi < lo): the candidates of a radix the planner prices one by one.
std::vector<ParamSet> range_candidates(const std::string& param, long long lo, long long hi);

// What a schedule is generated for besides P, the topology and the parameters: the units of its items
// (Schedule::counts: alltoallv's P x P matrix, allgatherv's and reduce_scatter's P counts) and the root of a rooted
// collective. A vector alone converts to it (a matrix, root 0).
struct Inputs {
    std::vector<uint64_t> counts;
    int root = 0;
    Inputs() = default;
    Inputs(std::vector<uint64_t> c, int r = 0) : counts(std::move(c)), root(r) {}  // NOLINT: implicit on purpose
};

// The whole pipeline: find, validate, check applicability (Error with the reason), generate, stamp metadata.
// only_rank >= 0 returns a schedule that holds that rank's program alone (Schedule::whole() is false); every
// generator builds just that program (Problem::only_rank), and one that builds every rank regardless is an Error.
// A whole schedule whose estimated memory (schedule_memory_estimate) exceeds job.max_memory_bytes is refused
// before it is generated.
Schedule make_schedule(const std::string& name, int ranks, const Topology& topo,
                       const std::map<std::string, std::string>& params = {}, const Inputs& inputs = {},
                       int only_rank = Schedule::kAllRanks, const Job& job = default_job());

// About the bytes a whole schedule of `name` takes: the per-rank programs, extrapolated from the programs of ranks
// 0, P/2 and P-1 and the root (each generated alone), plus the counts. Throws what make_schedule would for a bad
// problem.
double schedule_memory_estimate(const std::string& name, int ranks, const Topology& topo,
                                const std::map<std::string, std::string>& params = {}, const Inputs& inputs = {});

// Algorithm::bound at each size for the problem (params validated as make_schedule does); empty when the algorithm
// has none.
std::vector<double> algorithm_bounds(const std::string& name, int ranks, const Topology& topo,
                                     const std::map<std::string, std::string>& params, const Inputs& inputs,
                                     const Model& model, const std::vector<double>& sizes);

}  // namespace collplan
