// The text form of a schedule (round-trips exactly; grammar in docs/schedule.md) and export to LogGOPSim's
// GOAL language.
#pragma once
#include <string>

#include "collplan/common/job.hpp"
#include "collplan/schedule/schedule.hpp"

namespace collplan {

std::string to_text(const Schedule& s);
// Throws Error "line N: ..." naming what was expected. The declared rank count is bounded by the number of lines
// (one 'rank' line each), and the memory the text may take is refused before allocating when it exceeds the job's
// limit (schedule_text_memory_bytes).
Schedule from_text(const std::string& text, const Job& job = default_job());

// About the bytes a schedule read from `text_bytes` bytes of text with `ranks` ranks takes: every text op becomes
// at most a 20-byte op plus its segments, dependencies and units, and every rank a RankProgram.
double schedule_text_memory_bytes(size_t text_bytes, uint64_t ranks);

// GOAL for LogGOPSim: `num_ranks N`, per rank `lK: send Xb to R tag T`, `lK: recv Xb from R tag T`,
// `lK: calc T` for copies/reductions/calc (time in ns from the model's gamma/rho, passed in), dependencies
// as `lA requires lB`. A group (fence) boundary becomes direct edges from every op of a group to every op of the
// group before it -- a zero-time `fK: calc 0` node only where that would take more than 4096 edges (text.cpp,
// goal_rank, says why).
// `block_bytes` is m; per-byte local costs in seconds per byte.
std::string to_goal(const Schedule& s, double block_bytes, double reduce_s_per_byte = 0, double copy_s_per_byte = 0);

}  // namespace collplan
