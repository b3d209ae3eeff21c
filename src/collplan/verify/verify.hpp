// The symbolic verifier: executes a schedule on symbolic data and checks that it is correct.
//
// Data model: allgather -- rank i contributes block b_i (or C chunks b_{iC..iC+C-1}) and ends with all P*C in
// `out` in order; alltoall(v) --
// rank i holds b_{i->j} in in[j] and rank j must end with b_{i->j} in out[i]; allreduce -- rank i contributes
// x_i split into S segments, and every rank must end with every x_i exactly once per segment in `out` (in rank
// order for non-commutative operations); barrier -- no rank finishes before every rank has started
// (happens-before through the messages).
// Rank-consistency (allreduce): every block also carries the expression that computed it, hash-consed -- a leaf
// x_i of its segment, combine(left, right) in the exact operand order of the reduce (dst = src (+) dst, or
// dst = dst (+) src with opflag::reverse), inverse(dst, src) for a take-out. Association and operand order count:
// (x0+x1)+x2 and x0+(x1+x2) differ, and so do x0+x1 and x1+x0; an inverse never cancels, and a contribution
// counted twice (idempotent operations) stays in the tree. The schedule is rank-consistent when every rank ends
// with the same expression in each out block: then floating-point results are bitwise equal on every rank. A
// schedule that declares Schedule::rank_consistent and is not fails with reason "rank-inconsistent".
// Structural checks: every send matched by a recv of the same size, no deadlock (a send completes only when its
// recv is posted, the worst case of MPI), no read of an unwritten region, no race between concurrent ops of a
// rank that touch the same blocks with at least one write.
#pragma once
#include <string>

#include "collplan/common/job.hpp"
#include "collplan/schedule/schedule.hpp"

namespace collplan {

struct VerifyOptions {
    bool commutative = true;   // the reduction operation is commutative
    bool idempotent = false;   // x (+) x = x (max, min, ...; reduction.hpp): double counting is harmless
    bool check_races = true;
};

struct VerifyResult {
    bool ok = true;
    std::string reason;   // short machine-readable class: "unmatched-send", "deadlock", "double-count", ...
    std::string message;  // the first violation, naming rank, op and block/contribution
    int rank = -1;
    int op = -1;
    bool rank_consistent = true;  // allreduce: ok and every rank's out holds the same expressions (false when the
                                  // verification failed); other collectives: always true (nothing is computed)
    std::string consistency;      // allreduce, not rank-consistent: the first difference, e.g. "out[0]: rank 0
                                  // computes ((x0+x1)+x2), rank 2 computes (x0+(x1+x2))" (long ones truncated)
    bool one_rank = false;        // verified from rank 0's program alone (below, and sweep.hpp: verify_by_symmetry)
};

// Refuses (Error) before allocating when the verifier's state exceeds job.max_memory_bytes; polls job.cancel.
//
// One rank for every rank: a schedule that holds rank 0's program alone (Schedule::only_rank = 0) of a collective
// that schedule/symmetry.hpp's one_rank_verify_refusal accepts is verified from that program, walked as every
// rank's (schedule/walk.hpp: Walk): a message rank 0 receives from q is rank 0's matching send with its items
// moved to q's (moved_item). Every check above holds for every rank when every rank's program is rank 0's moved,
// blocks included -- which this cannot see; verify_by_symmetry (sweep.hpp) checks it rank by rank. Failures name
// rank 0's ops. Any other one-rank schedule is an Error.
VerifyResult verify(const Schedule& s, const VerifyOptions& opt = {}, const Job& job = default_job());

// The verifier's memory on top of the schedule: block states per rank and buffer, per-op bookkeeping.
double verify_memory_bytes(const Schedule& s);

// The options for a reduction operation of reduction.hpp ("sum", "max", "noncommutative", ...); throws Error
// naming the allowed ones.
VerifyOptions verify_options_for_op(const std::string& op);

}  // namespace collplan
