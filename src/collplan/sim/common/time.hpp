// Simulated time: a unit-typed integer number of picoseconds (htsim's choice: integer time makes every run
// exactly reproducible and every comparison exact). Seconds (double) appear only at the edges: parameters come
// in as seconds and results go out as seconds.
#pragma once
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>

#include "collplan/common/error.hpp"

namespace collplan::sim {

class Time {
public:
    constexpr Time() = default;
    static constexpr Time ps(int64_t v) { return Time(v); }
    // Rounds to the nearest picosecond (halves away from zero); throws for NaN, infinities and |s| > 10^6 s.
    static Time seconds(double s) {
        if (!std::isfinite(s) || std::fabs(s) > 1e6)
            throw Error("time " + std::to_string(s) + " s is out of range (allowed: finite, at most 10^6 s)");
        return Time(std::llround(s * 1e12));
    }
    static constexpr Time zero() { return Time(0); }
    static constexpr Time never() { return Time(std::numeric_limits<int64_t>::max()); }

    constexpr int64_t count_ps() const { return v_; }
    constexpr double to_seconds() const { return static_cast<double>(v_) * 1e-12; }

    friend constexpr Time operator+(Time a, Time b) { return Time(a.v_ + b.v_); }
    friend constexpr Time operator-(Time a, Time b) { return Time(a.v_ - b.v_); }
    friend constexpr Time operator*(Time a, int64_t k) { return Time(a.v_ * k); }
    constexpr Time& operator+=(Time b) { v_ += b.v_; return *this; }
    constexpr auto operator<=>(const Time&) const = default;

private:
    constexpr explicit Time(int64_t v) : v_(v) {}
    int64_t v_ = 0;
};

inline constexpr Time max(Time a, Time b) { return a < b ? b : a; }
inline constexpr Time min(Time a, Time b) { return a < b ? a : b; }

// Time to move `bytes` at `ps_per_byte` (may be fractional), rounded to the nearest picosecond.
inline Time bytes_time(double bytes, double ps_per_byte) { return Time::ps(std::llround(bytes * ps_per_byte)); }

}  // namespace collplan::sim
