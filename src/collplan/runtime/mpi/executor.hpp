// The MPI executor: runs one rank's part of any static Schedule over an MPI communicator.
//
// A Plan is built once per (communicator, schedule, call shape) and reused by every call with that shape: it
// holds the byte layout of every op (runtime/layout.hpp), the dependency graph in compact arrays, and committed
// derived datatypes for non-contiguous messages. An Execution is one run of a plan on concrete buffers, driven
// split-phase: start() posts what can start, test() advances without blocking (MPI_Testsome), wait() blocks
// (MPI_Waitsome, after polling for a moment) until this rank's part is done. Most schedules order their ops by groups (fences) alone -- no
// explicit dependency, no barrier -- and run as the group walk instead: post a group's messages, run its local
// ops, one MPI_Waitall (MPI_Testall), next group; the same MPI calls hand-written code makes, and about half the
// executor's instructions per call of the general walk (bench/README.md, "executor overhead").
//
// Semantics (docs/schedule.md): an op starts when every op of the earlier groups of its rank and every explicit
// dependency has completed. send/recv -> MPI_Isend/MPI_Irecv of bytes; each channel (direction, peer, tag) is
// posted in program order, so the k-th send matches the k-th recv. copy -> memcpy. reduce -> MPI_Reduce_local,
// dst = src (+) dst; `reverse` gives dst = dst (+) src (through a scratch copy for user-defined operations;
// a predefined one commutes bit for bit); `inverse` takes src out of dst (MPI_SUM and MPI_BXOR on predefined integer types only).
// calc -> nothing (it is modelled work). barrier -> a dissemination barrier of zero-byte messages on a tag of its
// own. Messages use tags tag_base + schedule tag (< kTagWindow - 1; the window's last tag is the barrier's); the
// caller makes tag_base differ between runs that may overlap. A plan reads only its own rank's program, so a
// schedule built for one rank (Schedule::only_rank) is enough -- unless the layout is uneven (Layout::uniform).
// Non-contiguous messages (several chunks) are packed into a staging buffer, or sent with an MPI_Type_create_
// hindexed datatype when all chunks lie in one buffer (Noncontig::datatype / automatic).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "collplan/runtime/layout.hpp"

namespace collplan::mpi {

enum class Noncontig : uint8_t { automatic, pack, datatype };

struct Node {
    OpKind kind = OpKind::calc;
    uint8_t flags = 0;
    uint8_t staged = 0;          // message packed through the staging buffer
    Buf dtype_buf = Buf::in;     // datatype mode: the buffer the chunks lie in
    int32_t peer = -1;
    int32_t tag = 0;
    uint32_t src_begin = 0, src_end = 0, dst_begin = 0, dst_end = 0;  // into Plan::chunks_
    uint64_t bytes = 0;
    uint64_t stage_off = 0;
    MPI_Datatype dtype = MPI_DATATYPE_NULL;
    uint32_t npre = 0;           // prerequisites: explicit deps + earlier group + channel predecessor posted
    uint32_t group = 0;
    uint32_t chan_next = UINT32_MAX;  // next op of the same channel (posted after this one)
};

class Plan {
public:
    // `comm` is the communicator the messages use (the caller's private duplicate); the plan runs the part of the
    // rank this process has in it (MPI_Comm_rank), rank() below.
    Plan(MPI_Comm comm, std::shared_ptr<const Schedule> s, const CallShape& shape, Noncontig mode);
    ~Plan();
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;

    const Schedule& schedule() const { return *sched_; }
    const Layout& layout() const { return layout_; }
    MPI_Comm comm() const { return comm_; }
    int rank() const { return rank_; }
    // Tags a run uses: tag_base .. tag_base + kTagWindow - 1 (schedule tags below kTagWindow - 1, then the barrier's).
    static constexpr int kTagWindow = 256;
    uint64_t stage_bytes() const { return stage_bytes_; }
    size_t datatypes() const { return ndtypes_; }
    bool writes_input() const { return writes_in_; }  // some op writes the `in` buffer (then callers stage it)

private:
    friend class Execution;
    void build_nodes();
    void build_order();
    void build_message(Node& n, uint32_t begin, uint32_t end);

    MPI_Comm comm_;
    int rank_ = 0, size_ = 1;
    std::shared_ptr<const Schedule> sched_;
    Layout layout_;
    Noncontig mode_;
    std::vector<Node> nodes_;
    std::vector<Chunk> chunks_;
    std::vector<uint32_t> dep_begin_, dependents_;  // CSR: ops waiting for op i's completion
    std::vector<uint32_t> group_begin_;             // first op of each group, plus sentinel
    std::vector<uint32_t> initial_ready_;
    std::vector<uint32_t> initial_pending_, group_size_;  // copied into each run's counters
    uint64_t stage_bytes_ = 0, scratch_bytes_ = 0;
    size_t ndtypes_ = 0;
    bool writes_in_ = false;
    bool has_barrier_ = false;
    bool by_groups_ = true;  // no explicit dependency and no barrier: every op waits only for the earlier groups,
                             // so a run is the group walk (Execution::run_groups), as hand-written code would be
    std::vector<int> barrier_peers_;  // dissemination distances 1, 2, 4, ...
};

// The buffers and reduction of one run.
struct RunArgs {
    const void* in = nullptr;
    void* out = nullptr;
    MPI_Datatype datatype = MPI_BYTE;  // allreduce: element type for MPI_Reduce_local
    MPI_Op op = MPI_OP_NULL;
    int64_t lb = 0;                    // allreduce: the datatype's lower bound; element i's extent starts at
                                       // i * extent in the buffers, its origin (what MPI_Reduce_local gets) at -lb
    int tag_base = 0;
};

class Execution {
public:
    explicit Execution(std::shared_ptr<const Plan> plan);
    ~Execution();
    Execution(const Execution&) = delete;
    Execution& operator=(const Execution&) = delete;

    void start(const RunArgs& a);  // throws Error if a run is still active
    void run(const RunArgs& a);    // start + wait
    bool test();                   // advances; true when this rank's part is complete
    void wait();
    bool active() const { return active_; }
    const Plan& plan() const { return *plan_; }
    uint64_t held_bytes() const { return tmp_.capacity() + stage_.capacity() + scratch_.capacity(); }

private:
    void reset();
    void pump();                      // runs every ready op
    void run_op(uint32_t i);
    struct Message {
        void* ptr;
        int count;
        MPI_Datatype type;
    };
    void begin(const RunArgs& a);
    Message message(uint32_t i);
    void run_groups();
    void open_group();
    void finish_group();
    void end_group();
    void post(uint32_t i);
    void local(const Node& n);
    void unstage(const Node& n);
    void reduce(const Node& n);
    void barrier_round(uint32_t i);
    void on_request_done(size_t slot);
    void complete(uint32_t i);
    void released(uint32_t i);
    void compact();
    bool all_or_nothing() const;
    char* base(Buf b) const {  // the buffer a chunk offset refers to
        return b == Buf::in ? static_cast<char*>(const_cast<void*>(args_.in)) : b == Buf::out ? static_cast<char*>(args_.out)
                                                                                                : const_cast<char*>(tmp_.data());
    }

    std::shared_ptr<const Plan> plan_;
    RunArgs args_;
    bool active_ = false, commutative_ = true;
    int elem_bytes_ = 1;
    std::vector<uint32_t> pending_, group_left_, ready_;
    uint32_t open_group_ = 0;
    uint32_t group_ = 0;              // the group walk's current group
    size_t left_ = 0;                 // ops not yet complete
    std::vector<char> tmp_, stage_, scratch_;
    std::vector<MPI_Request> reqs_;
    std::vector<uint32_t> req_node_;  // node of each active request
    std::vector<uint32_t> barrier_round_, barrier_left_;  // per node (barrier ops only)
    std::vector<int> indices_;
};

// dst = dst (-) src for `count` elements, where exact: MPI_SUM and MPI_BXOR on predefined integer types (never on
// floating-point data). Returns false (doing nothing) otherwise.
bool reduce_inverse(void* dst, const void* src, int count, MPI_Datatype type, MPI_Op op);
bool invertible(MPI_Datatype type, MPI_Op op);

}  // namespace collplan::mpi
