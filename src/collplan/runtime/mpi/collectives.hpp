// The collectives over MPI -- every collective of schedule/collective.hpp: allgather, alltoall, alltoallv,
// allreduce, barrier, bcast, reduce, reduce_scatter_block, reduce_scatter, allgatherv, gather, scatter -- through
// any registered algorithm, blocking or split-phase, with persistent plans.
//
// Every call goes through a Request: *_init builds (or finds in the cache) the plan and returns a request that
// start() runs, test() advances without blocking and wait() completes; it can be started again (persistent).
// The blocking functions are init + start + wait.
//
// Per communicator the runtime keeps, as an MPI attribute (freed with the communicator): a private duplicate
// that all collplan messages use (so they never match the program's own messages), a sequence number that
// separates the tags of overlapping runs (runs must be started in the same order on every rank, as MPI requires
// of its non-blocking collectives; a persistent request instead pins a window of its own at its _init, so its
// starts may come in any order: Request::pin_tags), the schedules by (collective, algorithm, parameters, P) and the plans by
// schedule and call shape (sizes; alltoallv: the whole count matrix, which every call gathers).
//
// Buffers are bytes except for the reductions (allreduce, reduce, reduce_scatter_block, reduce_scatter): count
// elements of a datatype whose data lie inside each element's extent,
// elements `extent` bytes apart, the buffer pointing at the start of the first element's extent (its address plus
// the lower bound; for contiguous types the address), reduced with MPI_Reduce_local, so every predefined and
// user-defined MPI_Op works. Operations that do not commute are refused by schedules that need commutativity;
// unless the reduction is exact (an integer type, datatype.hpp) only rank-consistent schedules run, and an
// algorithm whose default is not rank-consistent runs its rank-consistent variant (Algorithm::
// rank_consistent_params) -- which also runs an exact reduction the caller's parameters cannot do.
//
// In place, where MPI allows it (describe(c).in_place): MPI_IN_PLACE (or send == recv) as the send buffer on every
// rank (allgather, allgatherv: the input is this rank's part of recv; alltoall(v), allreduce, reduce_scatter(_block):
// the input is recv) or at the root (reduce: recv; gather: the root's block of recv) -- the input is staged in a
// private copy; MPI_IN_PLACE as the root's receive buffer of scatter -- the root's own block stays in send, and
// the schedule writes a private scratch. A rooted call's buffers that MPI calls "significant only at root" may be
// null elsewhere.
#pragma once
#include <mpi.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collplan/algorithms/registry.hpp"
#include "collplan/runtime/mpi/executor.hpp"

namespace collplan::mpi {

// Which algorithm, with which parameters. `params` may hold "topology" (default: full:P, else the first of the
// algorithm's default topology families that applies to P).
struct Choice {
    std::string algorithm;
    std::map<std::string, std::string> params;
    Noncontig mode = Noncontig::automatic;
    std::shared_ptr<const Schedule> schedule;  // run this schedule instead (e.g. read from a file); same P
};

struct CommState;

class Request {
public:
    ~Request();
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

    // Points the request at other buffers of the same shape: the next start() reads `send` (MPI_IN_PLACE, or the
    // same address as `recv`, where the collective allows it: the input is where MPI_IN_PLACE puts it in `recv`)
    // and writes `recv` (scatter's root: MPI_IN_PLACE writes a scratch). bcast: `send` is ignored, `recv` is the
    // buffer.
    void bind(const void* send, void* recv);
    void start();
    // A persistent collective: every later start() uses one tag window of its own, taken now (call it on every
    // rank in the same order -- MPI's _init calls are ordered as collectives are -- and then start() in any order);
    // unpin_tags() returns to a window per start.
    void pin_tags();
    void unpin_tags();
    bool test();
    void wait();
    void run();  // start() + wait() in one call: what the blocking collectives use (Execution::run)
    bool active() const { return exec_ && exec_->active(); }
    const Plan& plan() const { return *plan_; }
    bool plan_was_cached() const { return cached_; }

private:
    friend struct RequestFactory;
    Request() = default;
    void prepare();  // stages the input, picks the run's tag window

    std::shared_ptr<CommState> state_;
    std::shared_ptr<const Plan> plan_;
    std::unique_ptr<Execution> exec_;
    std::string key_;
    RunArgs args_;
    const void* user_in_ = nullptr;       // where the input really is
    uint64_t in_offset_ = 0;              // in-place input: its offset in the output
    uint64_t in_place_offset_ = 0;        // allgather, gather: rank * bytes; allgatherv: recv_displs[rank]; others 0
    bool stage_in_ = false;
    int pinned_tag_base_ = -1;            // pin_tags(): every start's window; -1: the communicator's next one
    std::vector<char> staged_in_, scratch_out_;
    bool cached_ = false;
};

// The entry points follow the shapes of MPI's argument lists (the table of the MPI edge, runtime/mpi/collectives.def):
//
// The collectives of bytes (describe(c): no reduction, no counts) -- allgather, alltoall, bcast, gather, scatter
// (and barrier, with no data: barrier_init). bytes: allgather, gather -- what each rank contributes; alltoall --
// what each rank sends to each rank; bcast -- the message (`send` is ignored, `recv` is the buffer); scatter --
// what the root sends to each rank. root: the rooted ones' (the same on every rank, 0 .. P-1; ignored by the
// others). Buffers MPI calls significant only at the root (gather's recv, scatter's send) may be null elsewhere.
std::unique_ptr<Request> bytes_init(Collective c, const void* send, void* recv, uint64_t bytes, int root,
                                    MPI_Comm comm, const Choice& ch);
// The reductions of count elements of `type` on every rank (describe(c): a reduction, no counts) -- allreduce,
// reduce (recv significant at the root only), reduce_scatter_block (send holds P * count elements, recv count).
std::unique_ptr<Request> reduction_init(Collective c, const void* send, void* recv, uint64_t count, MPI_Datatype type,
                                        MPI_Op op, int root, MPI_Comm comm, const Choice& ch);
// allgatherv: P counts and displacements in bytes, the same on every rank (MPI requires the counts equal).
std::unique_ptr<Request> allgatherv_init(const void* send, void* recv, const uint64_t* recv_bytes,
                                         const uint64_t* recv_displs, MPI_Comm comm, const Choice& c);
// alltoallv: counts and displacements in bytes, P entries each (this rank's row / column of the matrix).
std::unique_ptr<Request> alltoallv_init(const void* send, const uint64_t* send_bytes, const uint64_t* send_displs,
                                        void* recv, const uint64_t* recv_bytes, const uint64_t* recv_displs,
                                        MPI_Comm comm, const Choice& c);
// reduce_scatter: P counts, the same on every rank; send holds the sum of counts, recv counts[rank] elements.
std::unique_ptr<Request> reduce_scatter_init(const void* send, void* recv, const uint64_t* counts, MPI_Datatype type,
                                             MPI_Op op, MPI_Comm comm, const Choice& c);
std::unique_ptr<Request> barrier_init(MPI_Comm comm, const Choice& c);

// The schedule a call with this choice runs on P ranks (not cached): every rank's program, or only_rank's alone
// (what a call runs when its blocks are even: see Layout::uniform); `inputs`: the counts (alltoallv's matrix,
// allgatherv's and reduce_scatter's per-rank counts) and the root. Throws Error when the algorithm does not apply
// to P on any topology tried: params["topology"]; `comm_topologies` (a communicator's own: COLLPLAN_TOPOLOGY, its
// MPI_Cart_create grid); full:P; the ring, line, hypercube and the MPI_Dims_create torus/mesh of the algorithm's
// default topology families.
std::shared_ptr<const Schedule> runtime_schedule(Collective c, int P, const Choice& ch, const Inputs& inputs = {},
                                                 const std::vector<std::string>& comm_topologies = {},
                                                 int only_rank = Schedule::kAllRanks);

// Throws Error unless the choice names a registered algorithm of collective `c` with valid parameters.
void check_choice(Collective c, const Choice& ch);

// The algorithm's reason not to run this reduction ("" when it can): commutativity, inverse (integer types only),
// idempotence, and rank-consistency unless the reduction is exact (datatype.hpp).
std::string reduction_unsupported(const Schedule& s, MPI_Datatype type, MPI_Op op);

struct CacheStats {
    size_t schedules = 0, plans = 0;
    uint64_t hits = 0, misses = 0;
};
CacheStats cache_stats(MPI_Comm comm);

}  // namespace collplan::mpi
