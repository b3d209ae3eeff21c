// The Schedule IR -- the only contract between generators (one per algorithm) and backends
// (verifier, estimator, simulators, MPI executor, exporters). See docs/schedule.md for the full semantics.
//
// A schedule is, per rank, an ordered list of operations:
//   send   peer, tag, segments         -- non-blocking send of the segments' blocks to `peer`
//   recv   peer, tag, segments         -- non-blocking receive into the segments
//   reduce src segments -> dst segments -- dst = src (+) dst (MPI_Reduce_local order); flags may reverse the
//                                          order (dst = dst (+) src) or apply the inverse ("take out" src)
//   copy   src segments -> dst segments -- local move (the "shuffle" of Standard/Multiphase Exchange)
//   calc   units                        -- local work of `units * m` bytes' worth (priced by the model)
//   barrier                             -- global synchronisation; the k-th barrier of every rank matches
//
// Data is named by block segments (buffer, first block, number of blocks). Each rank has three buffers:
//   in  -- its input (allgather: 1 block, or C chunks; alltoall(v): P blocks, block j goes to rank j; allreduce: S segments)
//   out -- its output (allgather: P*C blocks, chunk c of rank r at r*C+c; alltoall(v): P blocks; allreduce: S)
//   tmp -- scratch of `tmp_blocks` blocks
// Bytes are linear in the block size m: an op moves `units * m` bytes. For uniform collectives units is the
// number of blocks; alltoallv schedules carry explicit units per op (the communication matrix entries).
//
// Dependencies. An op starts when (a) every op of the earlier *groups* of its rank has completed and (b) every
// op in its explicit dependency list has completed. An op with `fence` set opens a new group (MPI_Waitall
// between batches costs one bit per op instead of a dependency list). Explicit deps name earlier ops of the
// same rank by index. Rounds are derived (depth of the dependency graph), never stored.
//
// Matching. The k-th send from rank i to rank j with tag t matches the k-th recv posted by rank j from rank i
// with tag t, in program order (MPI's non-overtaking rule; executors post each channel in program order).
//
// Routes. A send may carry a torus route hint (Op::ties): which dimensions resolve a half-ring tie the - way.
//
// Memory: ops are 20 bytes, segments 8 bytes; a P = 4096 pairwise alltoall (33.5 million ops) takes < 1 GB.
//
// Whole or one rank. The backends that see the machine (verifier, estimator, simulators, exporters) need every
// rank's program; the MPI runtime needs only its own, as libNBC builds only its own rank's schedule. A schedule
// built for one rank (Problem::only_rank) holds that program alone, so its memory and generation time follow
// that rank's ops (P = 2^20 pairwise alltoall: 2 million ops, 56 MB) instead of P times them; asking it for
// another rank's program is an Error.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "collplan/common/error.hpp"
#include "collplan/schedule/collective.hpp"

namespace collplan {

enum class OpKind : uint8_t { send, recv, reduce, copy, calc, barrier };

const char* to_string(OpKind k);
const char* to_string(Buf b);
Buf parse_buf(const std::string& name);

// A run of `count` consecutive blocks of one buffer, packed in 8 bytes (first < 2^30).
struct Segment {
    uint32_t first_and_buf = 0;  // buffer in the top 2 bits, first block below
    uint32_t count = 0;

    Segment() = default;
    Segment(Buf b, uint32_t first, uint32_t n);
    Buf buf() const { return static_cast<Buf>(first_and_buf >> 30); }
    uint32_t first() const { return first_and_buf & 0x3fffffffu; }
    bool operator==(const Segment&) const = default;
};

// Op flag bits.
namespace opflag {
inline constexpr uint8_t fence = 1;    // opens a new dependency group (requires all earlier ops of the rank)
inline constexpr uint8_t reverse = 2;  // reduce: dst = dst (+) src instead of dst = src (+) dst
inline constexpr uint8_t inverse = 4;  // reduce: dst = dst (-) src (remove src's contributions; needs an inverse)
}  // namespace opflag

inline constexpr int8_t kAnyPort = -1;

// The group under which every rank's program is rank 0's moved (schedule/symmetry.hpp).
enum class Symmetry : uint8_t { none, cyclic, xor_ };

struct Op {
    OpKind kind = OpKind::calc;
    uint8_t flags = 0;
    int8_t port = kAnyPort;   // NIC/port the op uses (multi-port nodes); kAnyPort lets the backend choose
    uint8_t ties = 0;         // send: torus route hint, bit i = an offset of exactly half an even ring in
                              // dimension i goes the - way (default +); see Topology::route
    int32_t peer = -1;        // send/recv: the other rank
    int32_t aux = 0;          // send/recv: tag; reduce/copy: number of source segments; calc: units
    uint32_t seg_begin = 0;   // into RankProgram::segs
    uint32_t dep_begin = 0;   // into RankProgram::deps
    bool fence() const { return flags & opflag::fence; }
    int32_t tag() const { return aux; }
};
static_assert(sizeof(Op) == 20);

struct RankProgram {
    std::vector<Op> ops;
    std::vector<Segment> segs;
    std::vector<uint32_t> deps;          // explicit dependencies: indices of earlier ops of this rank
    std::vector<uint64_t> units;         // per-op explicit units; empty when every op's units = its block count
};

// Immutable view of one op with its segments and dependencies resolved.
struct OpView {
    const Op& op;
    std::span<const Segment> segs;  // all segments (for copy/reduce: sources first, then destinations)
    std::span<const uint32_t> deps;
    uint64_t units;                 // bytes moved = units * m (calc: work units)
    std::span<const Segment> src() const;  // send: the data sent; copy/reduce: sources
    std::span<const Segment> dst() const;  // recv: where data lands; copy/reduce: destinations
};

class Schedule {
public:
    static constexpr int kAllRanks = -1;
    // only_rank = kAllRanks: every rank's program; otherwise only that rank's.
    Schedule(Collective c, int ranks, uint32_t in_blocks, uint32_t out_blocks, uint32_t tmp_blocks,
             int only_rank = kAllRanks);

    Collective collective() const { return collective_; }
    int ranks() const { return ranks_; }
    uint32_t blocks(Buf b) const { return b == Buf::in ? in_blocks_ : b == Buf::out ? out_blocks_ : tmp_blocks_; }

    // What the schedule is and what it needs.
    std::string algorithm;            // registry name, e.g. "allgather/ring"
    std::string params;               // canonical "k=v;k=v" of the parameters it was generated with
    std::string topology;             // topology spec it was generated for ("" = any)
    // The reductions (allreduce, reduce, reduce_scatter_block, reduce_scatter; describe(c).reduction):
    bool needs_commutative = false;   // correct only for commutative operations
    bool needs_inverse = false;       // uses reduce with opflag::inverse (allreduce/nway_dissemination_plain)
    bool idempotent_only = false;     // correct only for idempotent operations (reduction.hpp)
    bool rank_consistent = false;     // every rank's result element is the same expression (same operands, order
                                      // and association), so floating-point results are bitwise equal on every
                                      // rank that holds it; the verifier checks the claim (verify.hpp)
    int root = 0;                     // rooted collectives (bcast, reduce, gather, scatter): the root rank
    Symmetry symmetry = Symmetry::none;  // declared by the algorithm (Algorithm::symmetry, schedule/symmetry.hpp)
    // Units of each item (collective.hpp) when they differ: alltoallv's P x P matrix (block i->j at i * P + j),
    // allgatherv's and reduce_scatter's P counts; empty for the other collectives (every item one unit).
    std::vector<uint64_t> counts;

    // Unit size of the collective's "message size" in blocks: the estimate for a user size of n bytes uses
    // m = n / size_blocks() (allgather: its C input chunks, usually 1; alltoall: 1, allreduce: S, barrier: 1;
    // collective.hpp: unit_blocks).
    uint32_t size_blocks() const;
    // P, root and S, for the descriptor's functions (collective.hpp).
    CollShape shape() const { return CollShape{ranks_, root, size_blocks()}; }

    // Whether the schedule holds every rank's program, or only that of only_rank().
    bool whole() const { return only_rank_ == kAllRanks; }
    int only_rank() const { return only_rank_; }
    bool holds(int rank) const { return whole() ? rank >= 0 && rank < ranks_ : rank == only_rank_; }
    // The same schedule with only `rank`'s program (moved out of this one).
    Schedule take_rank(int rank) &&;

    const RankProgram& program(int rank) const { return programs_[slot(rank)]; }
    RankProgram& program_mut(int rank) { return programs_[slot(rank)]; }
    size_t num_ops(int rank) const { return programs_[slot(rank)].ops.size(); }
    size_t total_ops() const;
    OpView op(int rank, uint32_t index) const;
    size_t memory_bytes() const;  // heap bytes held by the programs
    // What messages about this schedule call it: "alltoall/pairwise at P=1000000" ("a schedule" when unnamed).
    std::string subject() const;

    bool operator==(const Schedule& o) const;

private:
    size_t slot(int rank) const {
        if (!holds(rank)) refuse(rank);
        return whole() ? static_cast<size_t>(rank) : 0;
    }
    [[noreturn]] void refuse(int rank) const;
    Collective collective_;
    int ranks_;
    int only_rank_ = kAllRanks;
    uint32_t in_blocks_, out_blocks_, tmp_blocks_;
    std::vector<RankProgram> programs_;
};

// Builds one rank's program. Generators use it; it checks arguments (segment bounds, peers, dependency order)
// and throws Error with the rank and op on misuse.
class RankBuilder {
public:
    RankBuilder(Schedule& s, int rank);
    using Segs = std::initializer_list<Segment>;
    using Deps = std::initializer_list<uint32_t>;

    // Make the next op open a new dependency group (it and every later op wait for everything issued so far).
    RankBuilder& fence();
    uint32_t send(int peer, int tag, std::span<const Segment> data, std::span<const uint32_t> deps = {},
                  uint64_t units = kBlockUnits);
    uint32_t recv(int peer, int tag, std::span<const Segment> data, std::span<const uint32_t> deps = {},
                  uint64_t units = kBlockUnits);
    uint32_t copy(std::span<const Segment> src, std::span<const Segment> dst, std::span<const uint32_t> deps = {},
                  uint64_t units = kBlockUnits);
    uint32_t reduce(std::span<const Segment> src, std::span<const Segment> dst, std::span<const uint32_t> deps = {},
                    uint8_t flags = 0, uint64_t units = kBlockUnits);
    uint32_t calc(uint32_t units, std::span<const uint32_t> deps = {});
    uint32_t barrier(std::span<const uint32_t> deps = {});
    // Convenience overloads with initializer lists.
    uint32_t send(int peer, int tag, Segs data, Deps deps = {}) { return send(peer, tag, std::span(data.begin(), data.size()), std::span(deps.begin(), deps.size())); }
    uint32_t recv(int peer, int tag, Segs data, Deps deps = {}) { return recv(peer, tag, std::span(data.begin(), data.size()), std::span(deps.begin(), deps.size())); }
    uint32_t copy(Segs src, Segs dst, Deps deps = {}) { return copy(std::span(src.begin(), src.size()), std::span(dst.begin(), dst.size()), std::span(deps.begin(), deps.size())); }
    uint32_t reduce(Segs src, Segs dst, Deps deps = {}, uint8_t flags = 0) { return reduce(std::span(src.begin(), src.size()), std::span(dst.begin(), dst.size()), std::span(deps.begin(), deps.size()), flags); }
    // Set the port of the most recently added op.
    RankBuilder& on_port(int port);
    // Set the torus tie hint (Op::ties) of the most recently added op, which must be a send.
    RankBuilder& ties_minus(unsigned dims_mask);
    uint32_t size() const { return static_cast<uint32_t>(prog_.ops.size()); }

    static constexpr uint64_t kBlockUnits = ~uint64_t{0};  // "units = number of blocks in the data segments"

private:
    uint32_t add(OpKind kind, int peer, int32_t aux, std::span<const Segment> a, std::span<const Segment> b,
                 std::span<const uint32_t> deps, uint64_t units, uint8_t flags);
    Schedule& s_;
    int rank_;
    RankProgram& prog_;
    bool pending_fence_ = false;
};

uint64_t block_count(std::span<const Segment> segs);

}  // namespace collplan
