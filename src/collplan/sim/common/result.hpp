// What a simulation returns, and the small helpers every fidelity uses to fill it: per-direction link use over
// time (Timeline) and a progress line on stderr for long runs (Progress).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "collplan/common/job.hpp"
#include "collplan/sim/common/time.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan::sim {

// Bytes per direction class over time, in bins whose width doubles (merging neighbours) whenever the run outgrows
// them: memory is fixed (at most 2 * bins per direction) whatever the length of the run.
class Timeline {
public:
    Timeline(int directions, int bins);
    // `bytes` crossed links of direction class `dir` uniformly between t0 and t1 (t1 >= t0). Inline when they fall in
    // one bin and need no widening (the packet network adds every packet's hop): the same arithmetic as the loop.
    void add(int dir, Time t0, Time t1, double bytes) {
        const int64_t a = t0.count_ps(), b = t1.count_ps();
        if (a < b && b < width_ps_ * 2 * bins_ && bytes > 0 && dir >= 0 && static_cast<size_t>(dir) < b_.size()) {
            const int64_t bin = a / width_ps_;
            if (b <= (bin + 1) * width_ps_) {
                b_[static_cast<size_t>(dir)][static_cast<size_t>(bin)] +=
                    bytes / static_cast<double>(b - a) * static_cast<double>(b - a);
                return;
            }
        }
        add_spread(dir, t0, t1, bytes);
    }
    // Per direction, bytes per bin over [0, end): exactly `bins` bins of width bin_width(end).
    std::vector<std::vector<double>> finish(Time end, Time* bin_width) const;

private:
    void add_spread(int dir, Time t0, Time t1, double bytes);
    void widen_to(Time t);
    int bins_;
    int64_t width_ps_ = 1000;  // 1 ns to start with
    std::vector<std::vector<double>> b_;
};

// Direction classes of a topology's links: grid tori/meshes "+X", "-X", "+Y", ... (X = dimension 0), fat tree
// "up"/"down", full "link". link_class[id] is the class index of each directed link.
struct DirectionClasses {
    std::vector<std::string> names;
    std::vector<uint8_t> link_class;
};
DirectionClasses direction_classes(const Topology& t);

struct SimResult {
    std::string fidelity;
    double time_s = 0;                  // completion of the last rank
    int critical_rank = 0;              // the lowest rank that finishes last
    std::vector<double> rank_time_s;    // completion of each rank
    uint64_t events = 0;                // events processed
    uint64_t messages = 0;
    uint64_t packets = 0;               // packet only
    double wall_s = 0;                  // wall-clock time of the simulation itself
    size_t state_bytes = 0;             // peak bytes of simulator state (beyond the schedule), as counted by it
    // flow and packet: per directed link (Topology link ids)
    double link_s_per_byte = 0;         // link bandwidth used (time per byte)
    std::vector<uint64_t> link_bytes;   // bytes carried
    std::vector<double> link_busy_s;    // time spent transmitting
    std::vector<std::string> directions;              // direction classes
    std::vector<uint8_t> link_direction;              // class of each link
    double bin_s = 0;                                 // width of the time bins below
    std::vector<std::vector<double>> direction_bytes; // per class, bytes that crossed its links per bin
};

// Prints "simulate <fidelity>: NN% of ops, T s" on stderr every half second once a run has lasted two seconds
// (when enabled), and clears the line at the end. Every 4096 updates it also polls the job's cancellation.
class Progress {
public:
    Progress(bool enabled, std::string what, uint64_t total, const Job& job);
    void update(uint64_t done) {
        if (++calls_ % 4096 == 0) {
            job_.check_cancel();
            if (enabled_) maybe_print(done);
        }
    }
    ~Progress();

private:
    void maybe_print(uint64_t done);
    bool enabled_;
    const Job& job_;
    std::string what_;
    uint64_t total_, calls_ = 0;
    bool printed_ = false;
    std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace collplan::sim
