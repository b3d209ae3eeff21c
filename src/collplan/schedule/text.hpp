// The text form of a schedule (round-trips exactly; grammar in docs/schedule.md) and export to LogGOPSim's
// GOAL language.
#pragma once
#include <string>

#include "collplan/schedule/schedule.hpp"

namespace collplan {

std::string to_text(const Schedule& s);
// Throws Error "line N: ..." naming what was expected.
Schedule from_text(const std::string& text);

// GOAL for LogGOPSim: `num_ranks N`, per rank `lK: send Xb to R tag T`, `lK: recv Xb from R tag T`,
// `lK: calc T` for copies/reductions/calc (time in ns from the model's gamma/rho, passed in), dependencies
// as `lA requires lB`. Groups (fences) are exported through a zero-time calc per group boundary.
// `block_bytes` is m; per-byte local costs in seconds per byte.
std::string to_goal(const Schedule& s, double block_bytes, double reduce_s_per_byte = 0, double copy_s_per_byte = 0);

}  // namespace collplan
