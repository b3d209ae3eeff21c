// The symbolic verifier: executes a schedule on symbolic data and checks that it is correct.
//
// Data model: allgather -- rank i contributes block b_i (or C chunks b_{iC..iC+C-1}) and ends with all P*C in
// `out` in order; alltoall(v) --
// rank i holds b_{i->j} in in[j] and rank j must end with b_{i->j} in out[i]; allreduce -- rank i contributes
// x_i split into S segments, and every rank must end with every x_i exactly once per segment in `out` (in rank
// order for non-commutative operations); barrier -- no rank finishes before every rank has started
// (happens-before through the messages).
// Structural checks: every send matched by a recv of the same size, no deadlock (a send completes only when its
// recv is posted, the worst case of MPI), no read of an unwritten region, no race between concurrent ops of a
// rank that touch the same blocks with at least one write.
#pragma once
#include <string>

#include "collplan/schedule/schedule.hpp"

namespace collplan {

struct VerifyOptions {
    bool commutative = true;   // the reduction operation is commutative
    bool idempotent = false;   // x (+) x = x (max, min, band, bor): double counting is harmless
    bool check_races = true;
};

struct VerifyResult {
    bool ok = true;
    std::string reason;   // short machine-readable class: "unmatched-send", "deadlock", "double-count", ...
    std::string message;  // the first violation, naming rank, op and block/contribution
    int rank = -1;
    int op = -1;
};

VerifyResult verify(const Schedule& s, const VerifyOptions& opt = {});

// "sum" -> commutative, not idempotent; "max" -> commutative, idempotent; "noncommutative" -> neither.
VerifyOptions verify_options_for_op(const std::string& op);

}  // namespace collplan
