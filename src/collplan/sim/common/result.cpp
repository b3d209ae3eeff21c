#include "collplan/sim/common/result.hpp"

#include <algorithm>
#include <cstdio>

namespace collplan::sim {

Timeline::Timeline(int directions, int bins)
    : bins_(std::max(1, bins)), b_(static_cast<size_t>(std::max(0, directions)), std::vector<double>(2 * std::max(1, bins), 0.0)) {}

void Timeline::widen_to(Time t) {
    const int64_t cap = static_cast<int64_t>(2 * bins_);
    while (t.count_ps() >= width_ps_ * cap) {
        for (auto& v : b_) {
            for (int64_t i = 0; i < cap / 2; ++i) v[i] = v[2 * i] + v[2 * i + 1];
            std::fill(v.begin() + cap / 2, v.end(), 0.0);
        }
        width_ps_ *= 2;
    }
}

void Timeline::add_spread(int dir, Time t0, Time t1, double bytes) {
    if (dir < 0 || static_cast<size_t>(dir) >= b_.size() || bytes <= 0) return;
    widen_to(t1);
    auto& v = b_[static_cast<size_t>(dir)];
    const int64_t a = t0.count_ps(), b = t1.count_ps();
    if (b <= a) {
        v[static_cast<size_t>(a / width_ps_)] += bytes;
        return;
    }
    const double per_ps = bytes / static_cast<double>(b - a);
    for (int64_t bin = a / width_ps_; bin * width_ps_ < b; ++bin) {
        const int64_t lo = std::max(a, bin * width_ps_), hi = std::min(b, (bin + 1) * width_ps_);
        v[static_cast<size_t>(bin)] += per_ps * static_cast<double>(hi - lo);
    }
}

std::vector<std::vector<double>> Timeline::finish(Time end, Time* bin_width) const {
    // Re-bin the fine bins into exactly bins_ bins of width ceil(end / bins_) (rounded up to the fine width).
    const int64_t e = std::max<int64_t>(end.count_ps(), 1);
    int64_t w = (e + bins_ - 1) / bins_;
    w = (w + width_ps_ - 1) / width_ps_ * width_ps_;
    *bin_width = Time::ps(w);
    std::vector<std::vector<double>> out(b_.size(), std::vector<double>(static_cast<size_t>(bins_), 0.0));
    for (size_t d = 0; d < b_.size(); ++d)
        for (size_t i = 0; i < b_[d].size(); ++i) {
            const auto j = static_cast<size_t>(static_cast<int64_t>(i) * width_ps_ / w);
            if (j < out[d].size()) out[d][j] += b_[d][i];
        }
    return out;
}

DirectionClasses direction_classes(const Topology& t) {
    DirectionClasses dc;
    const int n = t.num_links();
    dc.link_class.assign(static_cast<size_t>(n), 0);
    switch (t.kind()) {
        case TopoKind::full: dc.names = {"link"}; return dc;
        case TopoKind::fattree:
            dc.names = {"up", "down"};
            for (int i = 0; i < n; ++i) dc.link_class[i] = static_cast<uint8_t>(i % 2);
            return dc;
        default: break;
    }
    const size_t dims = t.dims().size();
    static const char* kAxis[] = {"X", "Y", "Z"};
    for (size_t d = 0; d < dims; ++d) {
        const std::string axis = d < 3 ? kAxis[d] : "D" + std::to_string(d);
        dc.names.push_back("+" + axis);
        dc.names.push_back("-" + axis);
    }
    for (int i = 0; i < n; ++i) {
        const Link l = t.link(i);
        const std::vector<int> a = t.coords(l.from), b = t.coords(l.to);
        size_t d = 0;
        while (d + 1 < dims && a[d] == b[d]) ++d;
        dc.link_class[i] = static_cast<uint8_t>(2 * d + (i % 2));  // cable direction 0 is the + direction
    }
    return dc;
}

Progress::Progress(bool enabled, std::string what, uint64_t total, const Job& job)
    : enabled_(enabled), job_(job), what_(std::move(what)), total_(std::max<uint64_t>(total, 1)),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

void Progress::maybe_print(uint64_t done) {
    const auto now = std::chrono::steady_clock::now();
    const double since_start = std::chrono::duration<double>(now - start_).count();
    if (since_start < 2.0 || std::chrono::duration<double>(now - last_).count() < 0.5) return;
    last_ = now;
    printed_ = true;
    std::fprintf(stderr, "\rsimulate %s: %3d%% of ops, %.1f s ", what_.c_str(),
                 static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total_)), since_start);
    std::fflush(stderr);
}

Progress::~Progress() {
    if (printed_) {
        std::fprintf(stderr, "\r%60s\r", "");
        std::fflush(stderr);
    }
}

}  // namespace collplan::sim
