#include "collplan/algorithms/registry.hpp"

#include <algorithm>
#include <set>
#include <charconv>

namespace collplan {

Registry& mutable_registry() {
    static Registry r;  // filled by static Registration objects before main(); read-only afterwards
    return r;
}
const Registry& Registry::get() { return mutable_registry(); }

void Registry::add(Algorithm a) {
    for (const auto& b : algs_)
        if (b.name == a.name) throw Error("algorithm '" + a.name + "' registered twice");
    const std::string prefix = std::string(to_string(a.collective)) + "/";
    if (a.name.rfind(prefix, 0) != 0) throw Error("algorithm name '" + a.name + "' must start with '" + prefix + "'");
    validate_params(a, a.rank_consistent_params);  // names and values it declares must be its own
    algs_.push_back(std::move(a));
    std::sort(algs_.begin(), algs_.end(), [](const Algorithm& x, const Algorithm& y) { return x.name < y.name; });
}

std::vector<const Algorithm*> Registry::for_collective(Collective c) const {
    std::vector<const Algorithm*> out;
    for (const auto& a : algs_)
        if (a.collective == c) out.push_back(&a);
    return out;
}

const Algorithm& Registry::find(const std::string& name) const {
    for (const auto& a : algs_)
        if (a.name == name) return a;
    // Accept a bare algorithm name when it is unique ("ring" is ambiguous, "rabenseifner" is not).
    const Algorithm* hit = nullptr;
    int hits = 0;
    for (const auto& a : algs_)
        if (a.name.substr(a.name.find('/') + 1) == name) hit = &a, ++hits;
    if (hits == 1) return *hit;
    std::string coll = name.substr(0, name.find('/'));
    std::string allowed;
    for (const auto& a : algs_)
        if (name.find('/') == std::string::npos || a.name.rfind(coll + "/", 0) == 0) allowed += (allowed.empty() ? "" : ", ") + a.name;
    if (allowed.empty())
        for (const auto& a : algs_) allowed += (allowed.empty() ? "" : ", ") + a.name;
    throw Error("unknown algorithm '" + name + "' (allowed: " + allowed + ")");
}

namespace {
long long parse_integer(const std::string& key, const std::string& v) {
    long long x = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || p != v.data() + v.size())
        throw Error("parameter " + key + "='" + v + "' is not an integer");
    return x;
}

std::vector<long long> parse_list(const std::string& key, const std::string& v) {
    std::vector<long long> out;
    size_t start = 0;
    while (start <= v.size()) {
        size_t end = v.find_first_of(",+", start);
        if (end == std::string::npos) end = v.size();
        out.push_back(parse_integer(key, v.substr(start, end - start)));
        start = end + 1;
    }
    return out;
}
}  // namespace

long long Params::integer(const std::string& name) const { return parse_integer(name, text(name)); }
std::vector<long long> Params::integer_list(const std::string& name) const { return parse_list(name, text(name)); }
const std::string& Params::text(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw Error("parameter '" + name + "' is not set");
    return it->second;
}
std::string Params::canonical() const {
    std::string s;
    for (const auto& [k, v] : values_) s += (s.empty() ? "" : ";") + k + "=" + v;
    return s;
}

Params validate_params(const Algorithm& a, const std::map<std::string, std::string>& raw) {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : raw) {
        auto spec = std::find_if(a.params.begin(), a.params.end(), [&](const ParamSpec& p) { return p.name == k; });
        if (spec == a.params.end()) {
            std::string allowed;
            for (const auto& p : a.params) allowed += (allowed.empty() ? "" : ", ") + p.name;
            throw Error("unknown parameter '" + k + "' for " + a.name + " (allowed: " + (allowed.empty() ? "none" : allowed) + ")");
        }
        if (v != "auto" || spec->default_value != "auto") {
            if (spec->kind != ParamKind::text) {
                const bool one = spec->kind == ParamKind::integer;
                const std::string range = std::to_string(spec->min) + ".." + std::to_string(spec->max);
                std::vector<long long> xs;
                try {
                    xs = one ? std::vector<long long>{parse_integer(k, v)} : parse_list(k, v);
                } catch (const Error&) {  // not a number, or beyond 64 bits: say what is allowed
                    throw Error("parameter " + k + "=" + v + " is invalid for " + a.name + " (allowed: " +
                                (one ? "an integer " + range : "integers " + range + " separated by , or +") + ")");
                }
                for (long long x : xs)
                    if (x < spec->min || x > spec->max)
                        throw Error("parameter " + k + "=" + v + " out of range for " + a.name + " (allowed: " +
                                    range + ")");
            }
        }
        out[k] = v;
    }
    for (const auto& p : a.params)
        if (!out.count(p.name)) out[p.name] = p.default_value;
    return Params(std::move(out));
}

std::vector<ParamSet> candidate_params(const Algorithm& a, const CandidateQuery& q) {
    if (!a.candidates) return {ParamSet{}};
    return a.candidates(q);
}

std::vector<ParamSet> range_candidates(const std::string& param, long long lo, long long hi) {
    if (hi < lo) return {ParamSet{}};
    std::vector<ParamSet> out;
    for (long long v = lo; v <= hi; ++v) out.push_back({{param, std::to_string(v)}});
    return out;
}

namespace {

// From this many ranks on, make_schedule probes the first and last rank's programs before generating them all
// (below, a schedule is small whatever the algorithm, and probing would only cost time).
constexpr int kProbeRanks = 64;

double program_bytes(const RankProgram& p) {
    return static_cast<double>(p.ops.size() * sizeof(Op) + p.segs.size() * sizeof(Segment) +
                               p.deps.size() * sizeof(uint32_t) + p.units.size() * sizeof(uint64_t));
}

}  // namespace

double schedule_memory_estimate(const std::string& name, int ranks, const Topology& topo,
                                const std::map<std::string, std::string>& params, const Inputs& inputs) {
    const double P = ranks;
    double bytes = P * sizeof(RankProgram) + static_cast<double>(inputs.counts.size()) * sizeof(uint64_t);
    if (ranks <= 0) return bytes;
    // Ranks 0, P/2 and P-1 and the root alone (a generator builds one rank's program in that rank's time): the
    // root (rank 0 where there is none) once, and the mean of the others for every other rank -- a root that sends
    // to every rank (linear bcast) does not stand for the rest, and a fold's idle ranks count as often as its busy
    // ones.
    auto probe = [&](int r) { return program_bytes(make_schedule(name, ranks, topo, params, inputs, r).program(r)); };
    std::set<int> others = {0, ranks / 2, ranks - 1};
    others.erase(inputs.root);
    double rest = 0;
    for (int r : others) rest += probe(r);
    // Vectors grow by doubling: on average a quarter more than their size.
    return bytes + ((P - 1) * (others.empty() ? 0.0 : rest / static_cast<double>(others.size())) + probe(inputs.root)) * 1.25;
}

std::vector<double> algorithm_bounds(const std::string& name, int ranks, const Topology& topo,
                                     const std::map<std::string, std::string>& raw, const Inputs& inputs,
                                     const Model& model, const std::vector<double>& sizes) {
    const Algorithm& a = Registry::get().find(name);
    std::vector<double> out;
    if (!a.bound) return out;
    topo.check_ranks(ranks);
    const Problem p{a.collective, ranks, topo, validate_params(a, raw), inputs.counts, Schedule::kAllRanks, inputs.root};
    for (double n : sizes) out.push_back(a.bound(p, model, n));
    return out;
}

Schedule make_schedule(const std::string& name, int ranks, const Topology& topo,
                       const std::map<std::string, std::string>& raw, const Inputs& inputs, int only_rank,
                       const Job& job) {
    const Algorithm& a = Registry::get().find(name);
    topo.check_ranks(ranks);
    if (only_rank != Schedule::kAllRanks && (only_rank < 0 || only_rank >= ranks))
        throw Error("rank " + std::to_string(only_rank) + " outside 0.." + std::to_string(ranks - 1));
    const CollectiveInfo& c = describe(a.collective);
    if (inputs.counts.size() != counts_size(a.collective, ranks))
        throw Error(std::string(c.name) + " at P=" + std::to_string(ranks) + " takes " + counts_rule(a.collective, ranks) +
                    ", got " + std::to_string(inputs.counts.size()) + " entries");
    if (inputs.root < 0 || inputs.root >= ranks || (!c.rooted && inputs.root != 0))
        throw Error("root " + std::to_string(inputs.root) + " is invalid for " + std::string(c.name) +
                    (c.rooted ? " (allowed: 0.." + std::to_string(ranks - 1) + ")" : " (allowed: 0; it has no root)"));
    Problem p{a.collective, ranks, topo, validate_params(a, raw), inputs.counts, only_rank, inputs.root};
    std::string why = a.applies ? a.applies(p) : "";
    if (!why.empty()) throw Error(a.name + " does not apply to P=" + std::to_string(ranks) + " on " + topo.spec() + ": " + why);
    if (only_rank == Schedule::kAllRanks) {
        const std::string what = "the schedule of " + a.name + " at P=" + std::to_string(ranks);
        // The bookkeeping alone first (P = 10^9 would not survive the probes' allocation of P empty programs).
        job.require_memory(static_cast<double>(ranks) * sizeof(RankProgram), what);
        if (ranks >= kProbeRanks) job.require_memory(schedule_memory_estimate(name, ranks, topo, raw, inputs), what);
        job.check_cancel();
    }
    Schedule s = a.generate(p);
    if (only_rank != Schedule::kAllRanks && s.whole())
        throw Error(a.name + " ignored only_rank: it built every rank's program when asked for rank " +
                    std::to_string(only_rank) + "'s");
    if (s.only_rank() != only_rank)
        throw Error(a.name + " built rank " + std::to_string(s.only_rank()) + "'s program when asked for rank " +
                    std::to_string(only_rank) + "'s");
    s.algorithm = a.name;
    s.params = p.params.canonical();
    s.topology = topo.spec();
    s.root = inputs.root;
    s.counts = inputs.counts;
    s.symmetry = a.symmetry ? a.symmetry(p) : Symmetry::none;
    return s;
}

}  // namespace collplan
