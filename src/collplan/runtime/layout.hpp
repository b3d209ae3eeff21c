// Byte layout of one rank's part of a schedule for one call shape -- the MPI-free half of the executor.
//
// A schedule names data by blocks; a real call has bytes. CallShape says how big the blocks are:
//   allgather           -- a contribution of `block_bytes` in C = blocks(in) chunks (usually 1), chunk c = bytes
//                          floor(c * block_bytes / C) .. floor((c + 1) * block_bytes / C) - 1; out block i C + c
//                          is chunk c of rank i, at i * block_bytes + that offset;
//   alltoall            -- every block is `block_bytes` (in[j], out[i] at j * block_bytes, i * block_bytes);
//   allreduce           -- the vector of `count` elements of `elem_bytes` is cut into S = blocks(in) segments,
//                          segment s = elements floor(s * count / S) .. floor((s + 1) * count / S) - 1 (uneven
//                          when S does not divide count; empty segments when count < S);
//   alltoallv           -- block i->j has matrix_bytes[i * P + j] bytes; in[j] of this rank sits at send_displs[j],
//                          out[i] at recv_displs[i] (the caller's displacements, in bytes);
//   barrier             -- every block is empty.
// The size of what a tmp block holds is not fixed by its position: tmp[0] may hold segment 3 in one round and
// segment 5 in the next. When blocks differ in size, Layout runs the schedule symbolically on all ranks (the walk
// of schedule/walk.hpp: a send carries its data as it is when posted, a recv completes with its matching send) and records, for every op of this rank, which
// block (allreduce: segment s; alltoallv: block i->j) each segment holds; tmp block b gets a slot as large as the
// largest block it ever holds. Every op's data then becomes a list of byte chunks (buffer, offset, bytes),
// adjacent chunks merged.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "collplan/schedule/schedule.hpp"

namespace collplan {

struct CallShape {
    Collective collective = Collective::allgather;
    uint64_t block_bytes = 0;                  // allgather, alltoall
    uint64_t count = 0;                        // allreduce: elements
    uint32_t elem_bytes = 1;                   // allreduce: bytes per element
    std::vector<uint64_t> matrix_bytes;        // alltoallv: P * P, row = source
    std::vector<uint64_t> send_displs;         // alltoallv: this rank's in[j] offsets (bytes)
    std::vector<uint64_t> recv_displs;         // alltoallv: this rank's out[i] offsets (bytes)

    // allreduce: first element of segment s of S.
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
    // (else Layout runs the whole schedule symbolically). The same on every rank: it reads only P, the schedule's
    // block counts, the element count / block size and the alltoallv byte matrix.
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
    struct Held {             // what one block of an op holds: (buffer, block index, block id)
        Buf buf;
        uint32_t block;
        int64_t id;
    };
    std::span<const Chunk> span(uint32_t op, int side) const;
    void analyse(const Schedule& s, int rank, std::vector<std::vector<Held>>& held);
    void build_chunks(const Schedule& s, int rank, const std::vector<std::vector<Held>>& held);
    uint64_t id_bytes(int64_t id) const;
    Chunk position(Buf b, uint32_t block, int64_t id) const;

    CallShape shape_;
    int P_ = 1, rank_ = 0;
    uint32_t S_ = 1;                         // allreduce: segments
    uint32_t C_ = 1;                         // allgather: chunks per contribution (in blocks)
    // allgather: first byte of chunk c of a contribution of block_bytes.
    uint64_t chunk_begin(uint64_t c) const { return C_ == 0 ? 0 : c * shape_.block_bytes / C_; }
    bool uniform_ = true;
    uint64_t uniform_bytes_ = 0;
    std::vector<uint64_t> tmp_slot_off_;     // per tmp block
    uint64_t tmp_bytes_ = 0;
    uint64_t extent_[2] = {0, 0};
    std::vector<Chunk> chunks_;
    std::vector<uint32_t> begin_;            // per op: [src begin, dst begin] pairs, plus sentinel
};

}  // namespace collplan
