// One description per collective -- what every rank holds before and must hold after, in the IR's blocks, and
// how the collective is named and called. MSCCLang's idea: a collective *is* its pre- and postcondition over chunks.
//
// Items. An item is one piece of data the collective moves, named by a number:
//   allgather, gather       chunk c of rank r's contribution      item r*C + c   (C = Schedule::size_blocks())
//   allgatherv              rank r's contribution                 item r         (C = 1; units counts[r])
//   alltoall, alltoallv     the block rank i sends to rank j       item i*P + j   (alltoallv: units counts[i*P+j])
//   scatter                 chunk c of the root's block for rank j item j*C + c
//   bcast                   segment s of the root's message        item s
//   allreduce, reduce       segment s of the vector                item s         (every rank contributes x_r of it)
//   reduce_scatter_block    segment s of rank j's result           item j*S + s   (every rank contributes)
//   reduce_scatter          rank j's result                        item j         (units counts[j])
//   barrier                 no items
// For the reductions an item is a *segment*: the input block holding item s at rank r holds x_r of segment s, and
// an output block whose final item is s must hold the combination of every rank's x of s exactly once.
//
// Buffers. Each rank has `in` and `out` (and scratch `tmp`). The root of a rooted collective may be the only rank
// that has one of them: scatter's in, gather's and reduce's out (MPI: "significant only at root"); bcast has no in
// -- its message starts in the root's out (MPI_Bcast's one buffer). Schedule::blocks() is the largest over ranks;
// buffer_blocks() is what one rank has, and a schedule that touches a block a rank does not have is wrong.
//
// Adding a collective: a value in the enum, a case in every function of collective.cpp (the compiler refuses a
// missing one: -Werror=switch) and its row in kInfo; its algorithm files (one of them .mpi_default, collplan.mpi's
// default); its row in the MPI edge's table runtime/mpi/collectives.def (which generates the PMPI interceptors,
// the Python MPI module's entry points and the native calls of measure/timing.cpp; a collective of bytes or a
// reduction of count elements also needs its case in pmpi/pmpi.cpp's bytes_call or reduction_call, which a
// static_assert names); its lower bound in algorithms/lower_bounds.cpp. The Python package derives the rest from
// _core.collectives(). docs/schedule.md lists the layouts.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace collplan {

enum class Collective : uint8_t {
    allgather, alltoall, alltoallv, allreduce, barrier,
    bcast, reduce, reduce_scatter_block, reduce_scatter, allgatherv, gather, scatter,
};
inline constexpr Collective kCollectives[] = {
    Collective::allgather, Collective::alltoall, Collective::alltoallv, Collective::allreduce, Collective::barrier,
    Collective::bcast, Collective::reduce, Collective::reduce_scatter_block, Collective::reduce_scatter,
    Collective::allgatherv, Collective::gather, Collective::scatter,
};

enum class Buf : uint8_t { in = 0, out = 1, tmp = 2 };

// Where MPI_IN_PLACE may stand (MPI 4.1, chapter 6): the send buffer on every rank, the send buffer at the root
// (reduce, gather), the receive buffer at the root (scatter), or nowhere (bcast, barrier).
enum class InPlace : uint8_t { none, send_everywhere, send_at_root, recv_at_root };

// How the units of items are given when they differ: not at all (every block is one unit of m bytes), one count
// per rank (allgatherv, reduce_scatter: Schedule::counts has P entries), or a P x P matrix (alltoallv).
enum class Counts : uint8_t { none, per_rank, matrix };

struct CollectiveInfo {
    Collective id;
    std::string_view name;       // "reduce_scatter_block"
    std::string_view mpi_name;   // "MPI_Reduce_scatter_block"
    bool rooted;                 // one rank, Schedule::root, alone has the input or the output
    bool reduction;              // the output combines every rank's contribution (reduce ops, VerifyOptions apply)
    Counts counts;
    InPlace in_place;
    std::string_view size;       // what a "message size" of n bytes means, e.g. "bytes each rank contributes"
};

const CollectiveInfo& describe(Collective c);
const char* to_string(Collective c);
Collective parse_collective(const std::string& name);  // throws Error naming the allowed ones

// One instance: P ranks, the root (0 unless rooted), S = blocks per unit (Schedule::size_blocks()).
struct CollShape {
    int P = 1;
    int root = 0;
    uint32_t S = 1;
};

inline constexpr int64_t kNoItem = -1;

// Blocks of `in` or `out` that `rank` has (tmp: not described here).
uint32_t buffer_blocks(Collective c, const CollShape& sh, int rank, Buf b);
// The item a block holds before the collective starts (kNoItem: nothing).
int64_t initial_item(Collective c, const CollShape& sh, int rank, Buf b, uint32_t block);
// The item out[block] of `rank` must hold at the end (kNoItem: anything).
int64_t final_item(Collective c, const CollShape& sh, int rank, uint32_t block);
// Number of distinct items (the range of the two functions above).
uint64_t item_count(Collective c, const CollShape& sh);
// The number of counts Schedule::counts must have (0: none), and how messages say it: "a 4x4 communication
// matrix", "4 counts (one per rank)", "no counts".
uint64_t counts_size(Collective c, int P);
std::string counts_rule(Collective c, int P);
// S of a schedule whose buffers (the largest over ranks) have these sizes: the in blocks of allgather, gather,
// allreduce and reduce, the out blocks of scatter, reduce_scatter_block and bcast, else 1.
uint32_t unit_blocks(Collective c, uint32_t in_blocks, uint32_t out_blocks);
// Throws Error naming the rule when the sizes do not fit the collective ("allgather schedule with in=2 out=6
// blocks at P=4 (allowed: out = P * in)").
void check_blocks(Collective c, int P, uint32_t in_blocks, uint32_t out_blocks);
// How messages name an item: "b_3", "b_2->5", "segment 4".
std::string item_name(Collective c, const CollShape& sh, int64_t item);

}  // namespace collplan
