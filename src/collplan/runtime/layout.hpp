// Byte layout of one rank's part of a schedule for one call shape -- the MPI-free half of the executor.
//
// A schedule names data by blocks holding items (schedule/collective.hpp); a real call has bytes. CallShape says how
// big the items are and where the units of `in` and `out` sit. A *unit* is what one rank contributes or receives
// (the collective descriptor's layout): `count` elements of `elem_bytes` -- the allgather/gather/scatter/alltoall
// block (bytes: elem_bytes 1), the bcast message, the (all)reduce vector, reduce_scatter_block's result block --
// cut into S = Schedule::size_blocks() segments, segment s = elements floor(s * count / S) .. floor((s + 1) *
// count / S) - 1 (uneven when S does not divide count; empty segments when count < S). Collectives with counts
// (describe(c).counts) give each item its own size instead: `counts` elements of the item (allgatherv and
// reduce_scatter: P, one per rank; alltoallv: the P x P matrix, row = source, elem_bytes 1), S = 1.
// Block k of `in` or `out` is segment k % S of unit k / S of that buffer; unit u sits at send_displs[u] (in) or
// recv_displs[u] (out) when those are given (alltoallv, reduce_scatter's input, allgatherv's output), else at
// u * count * elem_bytes. Barrier blocks are empty.
//
// The size of what a tmp block holds is not fixed by its position: tmp[0] may hold segment 3 in one round and
// segment 5 in the next. When items differ in size, Layout runs the schedule symbolically on all ranks (the walk
// of schedule/walk.hpp: a send carries its data as it is when posted, a recv completes with its matching send) and
// records, for every op of this rank, which item each segment holds; tmp block b gets a slot as large as the
// largest item it ever holds. Every op's data then becomes a list of byte chunks (buffer, offset, bytes), adjacent
// chunks merged.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "collplan/schedule/schedule.hpp"

namespace collplan {

struct CallShape {
    Collective collective = Collective::allgather;
    int root = 0;                        // rooted collectives
    uint64_t count = 0;                  // elements of one unit (collectives without counts)
    uint32_t elem_bytes = 1;             // bytes per element
    std::vector<uint64_t> counts;        // elements of each item: allgatherv, reduce_scatter (P), alltoallv (P * P)
    std::vector<uint64_t> send_displs;   // this rank's in units' offsets (bytes), when not packed one after the other
    std::vector<uint64_t> recv_displs;   // this rank's out units' offsets (bytes), likewise

    // First element of segment s of S of a unit.
    uint64_t segment_begin(uint64_t s, uint64_t S) const { return S == 0 ? 0 : (s * count) / S; }
};

struct Chunk {
    Buf buf = Buf::in;
    uint64_t offset = 0;  // bytes from the buffer's start
    uint64_t bytes = 0;
    bool operator==(const Chunk&) const = default;
};

class Layout {
public:
    // An uneven layout (uniform() false) needs the whole schedule (Schedule::whole()); an even one only `rank`'s program.
    Layout(const Schedule& s, int rank, const CallShape& shape);

    // Whether every block of this call has the same size, so that the layout follows from the rank's own program
    // (else Layout runs the whole schedule symbolically). The same on every rank: it reads only the schedule's
    // block counts, the element count and the counts (which MPI requires equal on every rank, or, for alltoallv,
    // every rank has gathered).
    static bool uniform(const Schedule& s, const CallShape& shape);

    // Data of op i: send -> src, recv -> dst, copy/reduce -> both (equal total bytes).
    std::span<const Chunk> src(uint32_t op) const { return span(op, 0); }
    std::span<const Chunk> dst(uint32_t op) const { return span(op, 1); }
    uint64_t src_bytes(uint32_t op) const;
    uint64_t dst_bytes(uint32_t op) const;
    uint64_t tmp_bytes() const { return tmp_bytes_; }
    // Bytes of the in and out buffers the schedule touches (the extent a caller must provide).
    uint64_t in_extent() const { return extent_[0]; }
    uint64_t out_extent() const { return extent_[1]; }
    bool uniform() const { return uniform_; }

private:
    struct Held {             // what one block of an op holds: (buffer, block index, item)
        Buf buf;
        uint32_t block;
        int64_t id;
    };
    std::span<const Chunk> span(uint32_t op, int side) const;
    void analyse(const Schedule& s, int rank, std::vector<std::vector<Held>>& held);
    void build_chunks(const Schedule& s, int rank, const std::vector<std::vector<Held>>& held);
    uint64_t id_bytes(int64_t id) const;
    int64_t own_id(Buf b, uint32_t block) const;
    Chunk position(Buf b, uint32_t block, int64_t id) const;

    CallShape shape_;
    CollShape coll_;                         // P, root, S (segments per unit)
    int P_ = 1, rank_ = 0;
    bool uniform_ = true;
    uint64_t uniform_bytes_ = 0;
    std::vector<uint64_t> tmp_slot_off_;     // per tmp block
    uint64_t tmp_bytes_ = 0;
    uint64_t extent_[2] = {0, 0};
    std::vector<Chunk> chunks_;
    std::vector<uint32_t> begin_;            // per op: [src begin, dst begin] pairs, plus sentinel
};

}  // namespace collplan
