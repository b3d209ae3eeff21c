#include "collplan/verify/sweep.hpp"

#include <chrono>

#include "collplan/schedule/symmetry.hpp"
#include "collplan/topology/families.hpp"

namespace collplan {
namespace {

// Allreduce: the operations the schedule claims (declared on it): max only when it is idempotent-only; else sum,
// and also a non-commutative operation unless it needs commutativity.
std::vector<std::string> operations(const Algorithm& a, const Problem& p) {
    if (!describe(a.collective).reduction) return {""};
    const Schedule s = a.generate(p);
    if (s.idempotent_only) return {"max"};
    if (s.needs_commutative) return {"sum"};
    return {"sum", "noncommutative"};
}

}  // namespace

std::vector<uint64_t> sweep_counts(int P) {
    std::vector<uint64_t> c(static_cast<size_t>(std::max(P, 0)));
    for (size_t i = 0; i < c.size(); ++i) c[i] = (i + 2) % 4;
    return c;
}

std::vector<SweepCase> sweep_cases(const Algorithm& a, int max_ranks, int* declined) {
    std::vector<SweepCase> out;
    int skipped = 0;
    const std::vector<std::string> families = a.default_topologies.empty() ? std::vector<std::string>{"full"} : a.default_topologies;
    const std::vector<std::map<std::string, std::string>> param_sets =
        a.sweep_params.empty() ? std::vector<std::map<std::string, std::string>>{{}} : a.sweep_params;
    const CollectiveInfo& info = describe(a.collective);
    if (info.counts == Counts::matrix) return out;  // needs a matrix: swept by its own tests
    for (int P = 1; P <= max_ranks; ++P) {
        std::vector<int> roots{0};
        if (info.rooted && P / 2 > 0) roots.push_back(P / 2);
        if (info.rooted && P - 1 > P / 2) roots.push_back(P - 1);
        const std::vector<uint64_t> counts = info.counts == Counts::per_rank ? sweep_counts(P) : std::vector<uint64_t>{};
        for (const auto& fam : families)
            for (const auto& spec : family_topologies(fam, P))
                for (const auto& raw : param_sets)
                    for (int root : roots) {
                        Problem p{a.collective, P, Topology::parse(spec), validate_params(a, raw), counts,
                                  Schedule::kAllRanks, root};
                        if (a.applies && !a.applies(p).empty()) {
                            ++skipped;
                            continue;
                        }
                        for (const std::string& op : operations(a, p)) out.push_back({a.name, P, spec, op, raw, root, counts});
                    }
    }
    if (declined) *declined = skipped;
    return out;
}

VerifyResult verify_by_symmetry(const std::string& name, int ranks, const Topology& topo,
                                const std::map<std::string, std::string>& params, const VerifyOptions& opt,
                                const Job& job, const std::function<void(int, int)>& progress) {
    const Schedule rank0 = make_schedule(name, ranks, topo, params, {}, 0, job);
    if (const std::string why = one_rank_verify_refusal(rank0); !why.empty())
        throw Error("verify by symmetry: " + rank0.subject() + ": " + why);
    VerifyResult r = verify(rank0, opt, job);
    if (!r.ok) return r;
    BlockLayout tmp = BlockLayout::same;
    const bool tmp_by_rank = rank0.blocks(Buf::tmp) % static_cast<uint32_t>(ranks) == 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int j = 1; j < ranks; ++j) {
        job.check_cancel();
        const Schedule other = make_schedule(name, ranks, topo, params, {}, j, job);
        if (const std::string why = check_moved_peers(rank0, other, j); !why.empty()) {  // a false declaration
            VerifyResult bad{false, "asymmetric", "rank " + std::to_string(j) + "'s program is not rank 0's moved by " +
                                                      to_string(rank0.symmetry) + " symmetry: " + why, j, -1};
            bad.one_rank = true;
            return bad;
        }
        std::string why = check_moved_blocks(rank0, other, j, tmp);
        if (!why.empty() && j == 1 && tmp_by_rank && check_moved_blocks(rank0, other, j, BlockLayout::by_rank).empty())
            tmp = BlockLayout::by_rank, why.clear();  // the scratch buffer is laid out by rank
        if (!why.empty())  // the ranks move, their data does not: a correct schedule may do that (recursive doubling)
            throw Error("verify by symmetry: " + rank0.subject() + ": rank 0's program cannot stand for every rank's, " +
                        "whose blocks do not move with the ranks (" + why + "); verify every rank's program");
        if (progress && std::chrono::steady_clock::now() - t0 > std::chrono::seconds(1)) {
            progress(j + 1, ranks);
            t0 = std::chrono::steady_clock::now();
        }
    }
    return r;
}

VerifyResult run_case(const SweepCase& c, const Job& job) {
    try {
        Schedule s = make_schedule(c.algorithm, c.ranks, Topology::parse(c.topology), c.params, Inputs(c.counts, c.root),
                                   Schedule::kAllRanks, job);
        return verify(s, c.op.empty() ? VerifyOptions{} : verify_options_for_op(c.op), job);
    } catch (const MemoryLimitError&) {
        throw;
    } catch (const Error& e) {
        return VerifyResult{false, "generator-error", e.what(), -1, -1, false, ""};  // nothing verified
    }
}

}  // namespace collplan
