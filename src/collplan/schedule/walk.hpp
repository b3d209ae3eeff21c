// The schedule walker: the only code that decides when an op may start, which send matches which recv and which
// barrier ops meet (docs/schedule.md). Every backend -- verifier, estimator, the three simulators, the runtime's
// layout and executor, the Python symbolic interpreter -- asks it and supplies only what happens at each op. (The
// MPI executor takes readiness from here and lets MPI do the meeting: its channels and barriers are posted in
// program order, so MPI matches them as the rules below say.)
//
//   readiness   An op starts when every op of the earlier groups of its rank (a `fence` opens a group) and every
//               op of its explicit dependency list have completed.
//   matching    The k-th send i -> j with tag t matches the k-th recv posted by j from i with tag t.
//   barriers    The k-th barrier op of every rank meets the k-th barrier op of every other rank.
//
// What is here, fastest first:
//   RankCursor, TimedCursor  streaming one rank's program for the simulators: only the active group is known, so
//                            memory follows the largest group, not the length of the schedule;
//   FlatPrograms, FlatCursors  the same for every rank at once over a compact copy of the programs laid out in
//                            the order ranks in lock step read them (the loggp simulator);
//   Matcher                  matching sends and recvs as they are posted (the simulators' dynamic matching);
//   BarrierRendezvous        meeting barrier ops as they are posted (the estimator, the simulators and Walk);
//   match_partners           matching the whole schedule at once (the partner of every send and recv);
//   program_order            one rank's static prerequisites (group boundaries, pending counts, dependents) for
//                            a backend that keeps its own counters (the MPI executor);
//   Walk                     the whole schedule as an untimed worklist: local ops complete at once, a send/recv
//                            pair completes when both are posted (a send never completes before its recv is
//                            posted), a barrier when every rank has posted it; a WalkVisitor says what happens.
//
// Besides, what the backends must say alike: block_bytes (a block's bytes for a collective size) and describe_op
// (how messages name an op).
//
// Layout of the cursors: simulators of 65,536 ranks touch one cursor per step of every rank, so a cursor is small
// (one cache line for TimedCursor) and holds the program's op array itself; the bookkeeping of explicit
// dependencies inside a group lives out of line and is made only for programs that have explicit dependencies.
#pragma once
#include <bit>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "collplan/common/job.hpp"
#include "collplan/schedule/schedule.hpp"

namespace collplan {

// ------------------------------------------------------------------------------------------- names, sizes
// The bytes of one block (Schedule::size_blocks) when the collective moves size_bytes: size_bytes / size_blocks,
// 0 for a barrier. Throws Error "<who>: size ... bytes is invalid (allowed: >= 0)" for a negative or non-finite size.
double block_bytes(const Schedule& s, double size_bytes, const char* who);
// "rank R op K (send to J tag T)", "rank R op K (recv from J tag T)", "rank R op K (copy)" for messages.
std::string describe_op(const Schedule& s, int rank, uint32_t op);

// ------------------------------------------------------------------------------------------- groups, deps
// The end of the group of ops[0 .. n) that starts at op `begin` (the next fence, or n).
inline uint32_t group_end(const Op* ops, uint32_t n, uint32_t begin) {
    uint32_t end = begin + 1;
    while (end < n && !ops[end].fence()) ++end;
    return end;
}
inline uint32_t group_end(const RankProgram& p, uint32_t begin) {
    return group_end(p.ops.data(), static_cast<uint32_t>(p.ops.size()), begin);
}
// The first op of the group op k belongs to.
inline uint32_t group_begin(const RankProgram& p, uint32_t k) {
    while (k > 0 && !p.ops[k].fence()) --k;
    return k;
}
// Op k's explicit dependencies.
inline std::span<const uint32_t> op_deps(const RankProgram& p, uint32_t k) {
    const uint32_t end = k + 1 < p.ops.size() ? p.ops[k + 1].dep_begin : static_cast<uint32_t>(p.deps.size());
    return std::span<const uint32_t>(p.deps.data() + p.ops[k].dep_begin, end - p.ops[k].dep_begin);
}

// One rank's prerequisites, for a backend that counts them itself.
struct ProgramOrder {
    std::vector<uint32_t> group_begin;  // first op of each group, plus the end as a sentinel
    std::vector<uint32_t> group;        // the group of each op
    std::vector<uint32_t> pending;      // prerequisites of each op: its explicit deps, + 1 (the earlier group) if group > 0
    std::vector<uint32_t> dep_begin, dependents;  // CSR: the ops naming op i as a dependency, in program order
    bool any_deps = false;              // some op has explicit dependencies
};
ProgramOrder program_order(const RankProgram& p);

// ------------------------------------------------------------------------------------------- RankCursor
class RankCursor {
public:
    RankCursor() = default;
    explicit RankCursor(const RankProgram& prog);

    // Opens the first group; appends the ops that are ready to `ready` in program order.
    void start(std::vector<uint32_t>& ready);
    // Op k (of the active group) completed: appends the ops this makes ready, in program order (dependents inside
    // the group, or the free ops of the next group once the whole group has completed).
    void complete(uint32_t k, std::vector<uint32_t>& ready);
    bool finished() const { return remaining_ == 0 && group_end_ >= size_; }
    uint32_t size() const { return size_; }
    const Op& op(uint32_t k) const { return ops_[k]; }
    const Op* ops() const { return ops_; }
    const Segment* segs() const { return segs_; }
    // The units op k moves (Schedule::op(r, k).units without the bounds checks).
    uint64_t units(uint32_t k) const;
    uint32_t group_begin() const { return group_begin_; }
    uint32_t group_end() const { return group_end_; }
    uint32_t remaining() const { return remaining_; }
    size_t memory_bytes() const;
    bool group_has_deps() const { return group_deps_; }  // explicit dependencies inside the active group
    std::span<const uint32_t> deps_of(uint32_t k) const { return deps(k); }
    // A 64-bit stamp per op of the active group that the caller records when the op completes (TimedCursor: its
    // completion time); only while group_has_deps().
    uint64_t* group_stamps() { return g_->stamp.data(); }
    const uint64_t* group_stamps() const { return g_->stamp.data(); }

private:
    struct GroupDeps {  // made only for programs with explicit dependencies or explicit units
        const RankProgram* prog = nullptr;
        std::vector<uint32_t> pending;             // per op of the group: in-group deps not yet complete
        std::vector<uint32_t> offset, dependents;  // CSR over the group: the ops waiting for each op
        std::vector<uint64_t> stamp;               // per op of the group: group_stamps()
    };
    std::span<const uint32_t> deps(uint32_t k) const { return op_deps(*g_->prog, k); }
    void open(uint32_t begin, std::vector<uint32_t>& ready);
    void build_group_deps();

    const Op* ops_ = nullptr;
    const Segment* segs_ = nullptr;
    uint32_t size_ = 0, num_segs_ = 0, group_begin_ = 0, group_end_ = 0, remaining_ = 0;
    bool any_deps_ = false;    // the program has explicit dependencies
    bool any_units_ = false;   // the program has explicit units
    bool group_deps_ = false;  // ... and some of them point into the active group (then g_ holds their state)
    std::unique_ptr<GroupDeps> g_;
};

// A cursor that also knows when each op of the active group completed, so that a newly ready op gets the right
// ready time: the latest completion among its in-group dependencies and the ops of the earlier groups. `T` is the
// backend's time: 8 bytes, trivially copyable, ordered, T{} = time zero (the simulators' sim::Time).
template <class T>
class alignas(64) TimedCursor {
    static_assert(sizeof(T) == sizeof(uint64_t) && std::is_trivially_copyable_v<T>);

public:
    TimedCursor() = default;
    explicit TimedCursor(const RankProgram& prog) : c_(prog) {}
    void start(std::vector<uint32_t>& ready) { c_.start(ready); }
    // Op k completed at `done`: appends the ops this makes ready (program order).
    void complete(uint32_t k, T done, std::vector<uint32_t>& ready) {
        const uint32_t begin = c_.group_begin();
        if (c_.group_has_deps()) c_.group_stamps()[k - begin] = std::bit_cast<uint64_t>(done);
        if (latest_ < done) latest_ = done;
        c_.complete(k, ready);
        if (c_.group_begin() != begin) open_ = latest_;  // the group completed and the next one opened
    }
    T ready_time(uint32_t k) const {  // for an op of the active group that is ready
        return c_.group_has_deps() ? ready_time_with_deps(k) : open_;
    }
    bool finished() const { return c_.finished(); }
    const RankCursor& cursor() const { return c_; }
    const Op& op(uint32_t k) const { return c_.op(k); }
    uint64_t units(uint32_t k) const { return c_.units(k); }
    T last_done() const { return latest_; }
    size_t memory_bytes() const { return c_.memory_bytes(); }

private:
    T ready_time_with_deps(uint32_t k) const {
        T t = open_;
        const uint32_t begin = c_.group_begin();
        for (uint32_t d : c_.deps_of(k))
            if (d >= begin) {
                const T done = std::bit_cast<T>(c_.group_stamps()[d - begin]);
                if (t < done) t = done;
            }
        return t;
    }

    T open_{};    // the latest completion of the earlier groups
    T latest_{};  // the latest completion so far
    RankCursor c_;
};

// ------------------------------------------------------------------------------------------- FlatPrograms
// Every rank's program copied once into one array of 16-byte records, group-major: the first group of every rank
// (rank order), then the second group of every rank, and so on; each group is a head record followed by its ops.
// Ranks that step in lock step (most collectives) then read their ops in address order -- a stream the hardware
// prefetches, on few pages -- where the programs themselves lie in P separate allocations (a 65,536-rank
// simulation touched a new page, and missed the TLB, per event). An op's units are counted here once, so the
// segments are not read again. Records are indexed by 32 bits (Error beyond). Memory: 16 bytes per op and per
// group (a 4,096-rank ring allgather: 805 MB beside its 896 MB schedule); building it costs about as much as
// reading the schedule once plus faulting in that memory.
struct FlatOp {
    OpKind kind;
    uint8_t big_units;  // 1: units >= 2^32 (FlatPrograms::units reads them from the program)
    int8_t port;
    uint8_t unused;
    int32_t peer;
    int32_t aux;     // send/recv: tag (Op::aux)
    uint32_t units;  // Schedule::op(r, k).units
    int32_t tag() const { return aux; }
};
struct FlatHead {
    uint32_t next;   // the head of the rank's next group, FlatPrograms::kEnd after its last
    uint32_t count;  // its ops (they follow the head)
    uint32_t first;  // the index in the rank's program of its first op
    uint32_t unused;
};
union FlatRecord {
    FlatOp op;
    FlatHead head;
};
static_assert(sizeof(FlatRecord) == 16);

class FlatPrograms {
public:
    static constexpr uint32_t kEnd = 0xffffffffu;
    explicit FlatPrograms(const Schedule& s);
    const FlatOp& op(uint32_t i) const { return data()[i].op; }
    const FlatHead& head(uint32_t i) const { return data()[i].head; }
    const FlatRecord* data() const { return rec_.get(); }
    uint32_t first(int r) const { return first_[r]; }  // the head of rank r's first group (kEnd: no ops)
    // The index in rank r's program of record i of the group whose head is `h`.
    uint32_t op_index(uint32_t h, uint32_t i) const { return data()[h].head.first + (i - h - 1); }
    // The units of record i of rank r's group with head h (big_units: from the program).
    uint64_t units(int r, uint32_t h, uint32_t i) const {
        const FlatOp& o = data()[i].op;
        return o.big_units ? s_.op(r, op_index(h, i)).units : o.units;
    }
    size_t memory_bytes() const { return size_ * sizeof(FlatRecord) + first_.capacity() * 4; }

private:
    const Schedule& s_;
    std::unique_ptr<FlatRecord[]> rec_;  // size_ records, every one written by the constructor
    size_t size_ = 0;
    std::vector<uint32_t> first_;
};

// Readiness over FlatPrograms, with times (TimedCursor's rules), for every rank at once: ops are named by their
// record index. A program without explicit dependencies needs only its active group's head, the ops left in it
// and two times; one with explicit dependencies is followed by a TimedCursor of its own, whose ready ops are
// translated to records.
template <class T>
class FlatCursors {
    static_assert(sizeof(T) == sizeof(uint64_t) && std::is_trivially_copyable_v<T>);

public:
    FlatCursors(const Schedule& s, const FlatPrograms& f) : f_(f), cur_(static_cast<size_t>(s.ranks())) {
        for (int r = 0; r < s.ranks(); ++r) {
            cur_[r].head = f.first(r);
            if (!s.program(r).deps.empty()) {
                cur_[r].deps = static_cast<uint32_t>(deps_.size());
                deps_.emplace_back(s.program(r));
            }
        }
    }
    // Opens rank r's first group; appends the records that are ready (program order).
    void start(int r, std::vector<uint32_t>& ready) {
        Cursor& c = cur_[r];
        if (c.head == FlatPrograms::kEnd) return;
        if (c.deps == kNone) return open(c, ready);
        ops_.clear();
        deps_[c.deps].start(ops_);
        for (uint32_t k : ops_) ready.push_back(record(c.head, k));
    }
    // Record i of rank r completed at `done`: appends the records this makes ready (program order).
    void complete(int r, uint32_t i, T done, std::vector<uint32_t>& ready) {
        Cursor& c = cur_[r];
        if (c.deps != kNone) return complete_with_deps(c, i, done, ready);
        if (c.latest < done) c.latest = done;
        if (--c.remaining == 0 && f_.head(c.head).next != FlatPrograms::kEnd) {
            c.open = c.latest;
            c.head = f_.head(c.head).next;
            open(c, ready);
        }
    }
    T ready_time(int r, uint32_t i) const {  // for a ready record of rank r
        const Cursor& c = cur_[r];
        return c.deps == kNone ? c.open : deps_[c.deps].ready_time(f_.op_index(c.head, i));
    }
    bool finished(int r) const {
        const Cursor& c = cur_[r];
        if (c.head == FlatPrograms::kEnd) return true;
        if (c.deps != kNone) return deps_[c.deps].finished();
        return c.remaining == 0 && f_.head(c.head).next == FlatPrograms::kEnd;
    }
    uint32_t head(int r) const { return cur_[r].head; }  // the active group's head
    uint32_t remaining(int r) const {                    // its ops not completed
        const Cursor& c = cur_[r];
        return c.deps == kNone ? c.remaining : deps_[c.deps].cursor().remaining();
    }
    const void* address(int r) const { return &cur_[r]; }         // for prefetching
    size_t memory_bytes() const {
        size_t b = cur_.capacity() * sizeof(Cursor) + deps_.capacity() * sizeof(TimedCursor<T>);
        for (const auto& d : deps_) b += d.memory_bytes();
        return b;
    }

private:
    static constexpr uint32_t kNone = 0xffffffffu;
    struct Cursor {
        uint32_t head = FlatPrograms::kEnd;
        uint32_t remaining = 0;  // ops of the active group not completed (without deps)
        T open{}, latest{};      // the latest completion of the earlier groups, and of all so far (without deps)
        uint32_t deps = kNone;   // its TimedCursor in deps_ (programs with explicit dependencies)
    };
    uint32_t record(uint32_t h, uint32_t k) const { return h + 1 + (k - f_.head(h).first); }
    void open(Cursor& c, std::vector<uint32_t>& ready) {
        const FlatHead& h = f_.head(c.head);
        c.remaining = h.count;
        if (h.next != FlatPrograms::kEnd) __builtin_prefetch(f_.data() + h.next);  // the group after this one
        for (uint32_t i = c.head + 1; i <= c.head + h.count; ++i) ready.push_back(i);
    }
    void complete_with_deps(Cursor& c, uint32_t i, T done, std::vector<uint32_t>& ready) {
        TimedCursor<T>& d = deps_[c.deps];
        const uint32_t begin = d.cursor().group_begin();
        ops_.clear();
        d.complete(f_.op_index(c.head, i), done, ops_);
        if (d.cursor().group_begin() != begin) c.head = f_.head(c.head).next;
        for (uint32_t k : ops_) ready.push_back(record(c.head, k));
    }

    const FlatPrograms& f_;
    std::vector<Cursor> cur_;
    std::vector<TimedCursor<T>> deps_;
    std::vector<uint32_t> ops_;  // scratch: op indices the TimedCursor readied
};

// ------------------------------------------------------------------------------------------- Matcher
// Message matching as posts happen (the simulators): a post either finds the oldest waiting partner of its
// channel (sender, receiver, tag) and removes it, or waits itself.
//
// A channel with waiting posts has one FIFO of them (nodes from a pool with a free list: no allocation per message
// once warm). The channel itself lives in its receiver's cache line -- up to three channels per receiver, in a
// per-receiver array, so that ranks stepping in order touch memory in order -- or, when that line is full, in a
// shared open-addressing hash table (the receiver's line counts them there). A channel never lives in both.
// Memory: one line per receiver plus what waits.
class Matcher {
public:
    // Receivers 0 .. receivers-1 get a line each; any other receiver uses the shared table only.
    explicit Matcher(int receivers = 0);
    // Posts a send (is_send) or a recv of channel (sender -> receiver, tag) carrying `handle`. Returns the handle
    // of the partner it matched, or nothing when it waits.
    std::optional<uint64_t> post(bool is_send, int32_t sender, int32_t receiver, int32_t tag, uint64_t handle);
    size_t waiting() const { return waiting_; }
    // Whether posts of one side (sends if `sends`, else recvs) wait on channel (sender -> receiver, tag).
    bool has_waiting(bool sends, int32_t sender, int32_t receiver, int32_t tag) const;
    // Starts loading the memory a post to this channel will look at first (the simulators prefetch soon posts).
    void prefetch(int32_t sender, int32_t receiver, int32_t tag) const;
    // Some waiting post (for error messages): (is_send, sender, receiver, tag, handle); nothing if none waits.
    struct Waiting {
        bool is_send;
        int32_t sender, receiver, tag;
        uint64_t handle;
    };
    std::optional<Waiting> any_waiting() const;
    size_t memory_bytes() const {
        return lines_.capacity() * sizeof(Line) + slots_.capacity() * sizeof(Slot) + nodes_.capacity() * sizeof(Node);
    }

private:
    static constexpr uint32_t kNil = 0xffffffffu;
    static constexpr int kInLine = 3;
    struct Queue {  // the waiting posts of one channel
        uint32_t head = kNil, tail = kNil;
    };
    struct Entry {
        int32_t sender = 0, tag = 0;
        Queue q;
    };
    struct alignas(64) Line {  // one receiver's channels
        uint8_t used = 0;        // bit i: entry i holds a channel
        uint8_t sends = 0;       // bit i: its queue holds sends (else recvs)
        uint32_t elsewhere = 0;  // the receiver's channels in the shared table
        Entry e[kInLine];
    };
    struct Slot {
        int32_t receiver = -1;  // -1: empty
        int32_t sender = 0;
        int32_t tag = 0;
        Queue q;
        bool sends = false;  // the queue holds sends (else recvs)
    };
    struct Node {
        uint64_t handle;
        uint32_t next;
    };
    std::optional<uint64_t> post_in_line(Line& l, bool is_send, int32_t sender, int32_t tag, uint64_t handle);
    void add_in_line(Line& l, int i, bool is_send, int32_t sender, int32_t tag, uint64_t handle);
    std::optional<uint64_t> post_shared(bool is_send, int32_t sender, int32_t receiver, int32_t tag, uint64_t handle,
                                        Line* line);
    uint64_t pop(Queue& q);
    void push(Queue& q, uint64_t handle);
    size_t find(int32_t sender, int32_t receiver, int32_t tag) const;  // slot index: the key's or the empty one
    void erase(size_t i);
    void grow();

    std::vector<Line> lines_;
    std::vector<Slot> slots_;
    std::vector<Node> nodes_;
    uint32_t free_ = kNil;
    size_t used_ = 0, waiting_ = 0;
};

// ------------------------------------------------------------------------------------------- barriers
// Which barrier a barrier op is: the number of barrier ops before it in its rank's program. A rank's barrier ops
// are listed the first time one of them is asked for (a schedule without barriers costs nothing).
class BarrierOrdinals {
public:
    uint32_t of(const Schedule& s, int r, uint32_t k);

private:
    std::vector<std::vector<uint32_t>> ops_;  // per rank: its barrier ops in program order
};

// Barriers as their ops are posted: the n-th barrier op of every rank meets the n-th barrier op of every other
// rank, and the barrier is met when every rank has posted its own. A met barrier's ops are handed to the caller,
// so memory follows the barriers not yet met. T is the backend's time (ordered, T{} = time zero) and the time of
// a barrier is the latest time one of its ops was posted; the untimed Walk uses std::monostate.
template <class T = std::monostate>
class BarrierRendezvous {
public:
    struct Met {
        T latest{};                                 // the latest time an op of the barrier was posted
        std::vector<std::pair<int, uint32_t>> ops;  // (rank, op) in the order they were posted, the caller's last
    };
    explicit BarrierRendezvous(const Schedule& s) : s_(s) {}
    // Rank r posts its barrier op k at time t: returns the barrier when this was its last op, else nothing.
    std::optional<Met> post(int r, uint32_t k, T t = T{}) {
        const uint32_t n = ordinal_.of(s_, r, k);
        if (waiting_.size() <= n) waiting_.resize(n + 1);
        Met& w = waiting_[n];
        if (w.latest < t) w.latest = t;
        w.ops.emplace_back(r, k);
        if (w.ops.size() < static_cast<size_t>(s_.ranks())) return std::nullopt;
        return std::move(w);  // leaves w.ops empty (and freed)
    }

private:
    const Schedule& s_;
    BarrierOrdinals ordinal_;
    std::vector<Met> waiting_;  // per barrier ordinal
};

// ------------------------------------------------------------------------------------------- static matching
inline constexpr uint32_t kNoPartner = 0xffffffffu;

// The flat index of op k of rank r is offsets[r] + k; offsets[P] = total ops.
std::vector<size_t> op_offsets(const Schedule& s);
// partner[offsets[r] + k]: the index (in the peer's program) of the op matched with send/recv k of rank r, or
// kNoPartner (unmatched, or not a send/recv). 4 bytes per op, plus 4 bytes per recv while matching.
std::vector<uint32_t> match_partners(const Schedule& s, std::span<const size_t> offsets, CancelPoll* poll = nullptr);

// ------------------------------------------------------------------------------------------- Walk
// What happens at each step of a Walk (every call in walk order).
class WalkVisitor {
public:
    virtual ~WalkVisitor() = default;
    // Rank r opens the group [begin, end) (every op before `begin` has completed).
    virtual void open(int /*r*/, uint32_t /*begin*/, uint32_t /*end*/) {}
    // Op k of rank r is posted: its prerequisites have completed. A local op (copy, reduce, calc) completes right
    // after; a send or recv when its partner is posted too (match); a barrier when every rank posted its own.
    virtual void post(int r, uint32_t k) = 0;
    // Send sk of rank sr and recv rk of rank rr are both posted: the pair completes (the sender first).
    virtual void match(int sr, uint32_t sk, int rr, uint32_t rk) = 0;
    // The n-th barrier: every rank posted its n-th barrier op; `ops` (rank, op) in the order they were posted
    // complete in that order.
    virtual void barrier(std::span<const std::pair<int, uint32_t>> /*ops*/) {}
};

// The whole schedule as an untimed worklist: one FIFO of ready ops over all ranks (rank 0's first ready ops, then
// rank 1's, ...; a completion appends what it makes ready). Unmatched sends and recvs are posted and never
// complete. Memory: 5 bytes per op (partner, state) plus the ready queue.
//
// One rank for every rank. A schedule that holds rank 0's program alone and declares a symmetry
// (schedule/symmetry.hpp) is walked as that one program: every rank runs it moved, so every rank is where rank 0
// is at every step of a walk that steps all ranks alike, and what the walk reaches (the ops that complete) is the
// same in any order. Rank 0's k-th send to j stands for the k-th send of rank inverse(j) to rank 0 and meets rank
// 0's k-th recv from inverse(j) (same tag): match(0, send, 0, recv), the data moved by the group element that
// takes rank 0 to the recv's peer. A barrier op completes when posted (every rank posts its own at that step).
class Walk {
public:
    // A whole schedule, or rank 0's program of a symmetric one; anything else is an Error.
    Walk(const Schedule& s, const Job& job);
    // Runs until nothing is ready; returns whether every op of every rank completed.
    bool run(WalkVisitor& v);

    enum State : uint8_t { kWaiting = 0, kPosted = 1, kDone = 2 };
    State state(int r, uint32_t k) const { return static_cast<State>(state_[at(r, k)]); }
    bool posted(int r, uint32_t k) const { return state(r, k) != kWaiting; }
    bool done(int r, uint32_t k) const { return state(r, k) == kDone; }
    // The matched op of send/recv k of rank r at its peer, or kNoPartner.
    uint32_t partner(int r, uint32_t k) const { return partner_[at(r, k)]; }
    // After run: the first op (in rank, then program order) that did not complete, if any.
    std::optional<std::pair<int, uint32_t>> first_incomplete() const;
    // After run, for an op that did not complete: the op it waits for. A posted barrier: the first rank's barrier
    // op that is not posted; a posted send/recv: its partner; otherwise its first incomplete dependency, else the
    // first incomplete op of the previous group (else the op itself).
    std::pair<int, uint32_t> waits_for(int r, uint32_t k) const;

    // The programs walked: P, or 1 (rank 0's, standing for all).
    int programs() const { return static_cast<int>(cur_.size()); }

private:
    size_t at(int r, uint32_t k) const { return offsets_[static_cast<size_t>(r)] + k; }
    int program_of(int peer) const { return one_rank_ ? 0 : peer; }  // the walked program of a peer's op
    void post(WalkVisitor& v, int r, uint32_t k);
    void complete(WalkVisitor& v, int r, uint32_t k);

    const Schedule& s_;
    CancelPoll poll_;
    int P_;
    bool one_rank_;
    std::vector<size_t> offsets_;
    std::vector<uint32_t> partner_;
    std::vector<uint8_t> state_;
    std::vector<RankCursor> cur_;
    std::deque<std::pair<int, uint32_t>> ready_;
    std::vector<uint32_t> made_ready_;  // scratch: what a completion readies
    BarrierRendezvous<> barriers_;
};

}  // namespace collplan
