// The reduction operations, in one table that the verifier, the runtime, the CLI and Python all read.
//
// A schedule's reduce ops combine blocks with "the" operation of the call; what a schedule may do depends on the
// operation's algebra:
//   commutative  -- operands may be combined in any order (else: rank order, left to right);
//   idempotent   -- x (+) x = x, so a contribution counted twice is harmless (nway_dissemination_plain);
//   invertible   -- an inverse exists on integer types (sum: subtraction, bxor: itself), so a schedule may take a
//                   contribution back out (opflag::inverse). Never used on floating-point data: subtracting a
//                   partial sum back out is not exact, and ranks would end with different bits.
// "user" is a user-defined commutative MPI_Op, "noncommutative" a user-defined one that does not commute.
// Rank-consistency (every rank's result is the same expression) is a property of the schedule, not of the
// operation: see Schedule::rank_consistent and verify.hpp.
#pragma once
#include <string>
#include <string_view>

#include "collplan/common/error.hpp"

namespace collplan {

struct ReductionOp {
    const char* name;
    bool commutative;
    bool idempotent;
    bool invertible;  // on integer types only
};

inline constexpr ReductionOp kReductionOps[] = {
    {"sum", true, false, true},      {"prod", true, false, false},  {"max", true, true, false},
    {"min", true, true, false},      {"land", true, true, false},   {"lor", true, true, false},
    {"lxor", true, false, false},    {"band", true, true, false},   {"bor", true, true, false},
    {"bxor", true, false, true},     {"maxloc", true, true, false}, {"minloc", true, true, false},
    {"user", true, false, false},    {"noncommutative", false, false, false},
};

// The entry of `name`; throws Error naming the allowed names.
inline const ReductionOp& reduction_op(std::string_view name) {
    for (const ReductionOp& o : kReductionOps)
        if (name == o.name) return o;
    std::string allowed;
    for (const ReductionOp& o : kReductionOps) allowed += std::string(allowed.empty() ? "" : ", ") + o.name;
    throw Error("unknown reduction operation '" + std::string(name) + "' (allowed: " + allowed + ")");
}

}  // namespace collplan
