// alltoallv/random_schedule_heap -- RS_NH: RS_N with a heap per rank and a cut-off that splits large messages.
//
// Source:        Wang, Lin, Ranka, "Distributed scheduling of unstructured collective communication on the
//                CM-5" (1993), sec. 3.3 (last paragraphs) and Tables 5-6; details in Ranka, Wang, "Static and
//                runtime scheduling of unstructured communication" (1993), ref. [11], which is not available:
//                the heap order and the cut-off rule below are derived from the paper's description ("processors
//                with small messages send their messages completely, while processors with large messages send
//                only part of their messages", "a heap data structure to order the messages").
// Preconditions: any P >= 1; a P x P communication matrix; any topology. Every rank needs the whole COM.
// Rounds:        phases until every unit is sent. Each phase: the rows in a random order (parameter seed); row i
//                takes the largest remaining message in its max-heap whose column is still free. Then the phase's
//                cut-off C = ceil(cutoff_pct / 100 * mean size of the messages chosen); a message larger than C
//                sends C units now and its remainder goes back into the heap. cutoff_pct = 0: no splitting
//                (heap order only). A split message is sent as pieces of the same block.
// Cost:          sum over phases of (alpha + C_t beta) with C_t at most the cut-off; more phases than RS_N when
//                messages are split. Scheduling: heap operations, O(log d) each (work = probes + heap moves
//                weighted by log2 of the heap size).
// Memory:        one heap per rank (nnz of its row); no scratch buffer. One rank's program still computes the
//                whole plan (every rank's heaps and phases, O(nnz) transfers) and keeps only its own messages.
// Example:       row 0 holds {1: 40, 2: 4} units; phase 1 chooses 0->1 (40) alongside messages of 8 and 12 units
//                (mean 20, cutoff_pct = 100: C = 20): 0->1 sends 20 units now, 20 later.
#include <algorithm>
#include <bit>
#include <cmath>

#include "collplan/algorithms/alltoallv/unstructured_common.hpp"

namespace collplan {
namespace {

struct Entry {
    uint64_t units;
    int dst;
    bool operator<(const Entry& o) const { return units != o.units ? units < o.units : dst > o.dst; }
};

uint64_t log_cost(size_t n) { return static_cast<uint64_t>(std::bit_width(n)); }

// Row i's largest message with a free column (removed from the heap), or dst = -1.
Entry take_largest_free(std::vector<Entry>& heap, const std::vector<size_t>& col_used, size_t t, uint64_t& work) {
    std::vector<Entry> stash;
    Entry got{0, -1};
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end());
        const Entry e = heap.back();
        heap.pop_back();
        work += 1 + log_cost(heap.size() + 1);
        if (col_used[e.dst] != t) {
            got = e;
            break;
        }
        stash.push_back(e);
    }
    for (const Entry& e : stash) {
        heap.push_back(e);
        std::push_heap(heap.begin(), heap.end());
        work += log_cost(heap.size());
    }
    return got;
}

}  // namespace

alltoallv::PhasePlan alltoallv::plan_random_heap(std::span<const uint64_t> m, int P, uint64_t seed, int cutoff_pct) {
    if (std::string why = check_matrix(m, P); !why.empty()) throw Error(why);
    if (cutoff_pct < 0) throw Error("cutoff_pct " + std::to_string(cutoff_pct) + " is invalid (allowed: >= 0)");
    Rng rng(seed);
    std::vector<std::vector<Entry>> heaps(static_cast<size_t>(P));
    size_t left = 0;
    for (int i = 0; i < P; ++i) {
        for (int j = 0; j < P; ++j)
            if (i != j && m[static_cast<size_t>(i) * P + j]) heaps[i].push_back({m[static_cast<size_t>(i) * P + j], j}), ++left;
        std::make_heap(heaps[i].begin(), heaps[i].end());
    }
    std::vector<int> rows(static_cast<size_t>(P));
    for (int i = 0; i < P; ++i) rows[i] = i;
    std::vector<size_t> col_used(static_cast<size_t>(P), ~size_t{0});
    PhasePlan plan;
    while (left > 0) {
        const size_t t = plan.phases.size();
        Phase phase;
        rng.shuffle(rows);
        plan.work += static_cast<uint64_t>(P);
        uint64_t total = 0;
        for (int i : rows) {
            const Entry e = take_largest_free(heaps[i], col_used, t, plan.work);
            if (e.dst < 0) continue;
            col_used[e.dst] = t;
            phase.push_back({i, e.dst, e.units});
            total += e.units;
        }
        const double mean = static_cast<double>(total) / static_cast<double>(phase.size());
        const auto cut = static_cast<uint64_t>(std::max(1.0, std::ceil(mean * cutoff_pct / 100.0)));
        for (Transfer& x : phase) {
            if (cutoff_pct == 0 || x.units <= cut) {
                --left;
                continue;
            }
            heaps[x.src].push_back({x.units - cut, x.dst});
            std::push_heap(heaps[x.src].begin(), heaps[x.src].end());
            plan.work += log_cost(heaps[x.src].size());
            x.units = cut;
        }
        plan.phases.push_back(std::move(phase));
    }
    return plan;
}

namespace {

const Registration reg{{
    .name = "alltoallv/random_schedule_heap",
    .collective = Collective::alltoallv,
    .summary = "RS_NH: RS_N taking each rank's largest message first, large messages split at a per-phase cut-off",
    .source = "Wang, Lin, Ranka (CM-5, 1993) sec. 3.3; Ranka, Wang, Static and runtime scheduling of unstructured communication (1993)",
    .params = {alltoallv::seed_param(),
               {"cutoff_pct", ParamKind::integer, "150", 0, 100000,
                "cut-off in percent of the mean message size chosen in a phase (0: never split)"}},
    .applies = alltoallv::applies_matrix,
    .generate = [](const Problem& p) {
        const auto seed = static_cast<uint64_t>(p.params.integer("seed"));
        const int cut = static_cast<int>(p.params.integer("cutoff_pct"));
        return alltoallv::phased_schedule(p, alltoallv::plan_random_heap(p.counts, p.ranks, seed, cut));
    },
}};

}  // namespace
}  // namespace collplan
