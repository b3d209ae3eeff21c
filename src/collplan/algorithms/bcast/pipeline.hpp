// What the pipelined broadcasts (bcast/chain, bcast/torus) share: the segment parameter and its candidates.
// A pipeline of depth D (hops from the root to the farthest rank) moving k segments takes (D - 1 + k) steps of
// alpha + n/k beta [Hockney], least at k* = sqrt((D - 1) n beta / alpha).
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "collplan/algorithms/registry.hpp"
#include "collplan/model/model.hpp"

namespace collplan {

inline constexpr long long kMaxPipelineSegments = 4096;

inline ParamSpec pipeline_segments_param() {
    return {"segments", ParamKind::integer, "8", 1, kMaxPipelineSegments, "k: number of segments the message is cut into"};
}

// The powers of two from below k* of the smallest size to above k* of the largest.
inline std::vector<ParamSet> pipeline_candidates(const CandidateQuery& q, int depth) {
    const double alpha = std::max(q.model.startup_s(), 1e-12), beta = q.model.per_byte_s();
    auto best = [&](double n) { return std::sqrt(std::max(0, depth - 1) * n * beta / alpha); };
    const double lo = std::max(1.0, best(q.min_bytes) / 2);
    const double hi = std::min<double>(kMaxPipelineSegments, 2 * best(q.max_bytes));
    std::vector<ParamSet> out;
    long long k = 1;
    while (k * 2 <= lo) k *= 2;
    for (; k <= kMaxPipelineSegments; k *= 2) {
        out.push_back({{"segments", std::to_string(k)}});
        if (k >= hi) break;
    }
    return out;
}

}  // namespace collplan
