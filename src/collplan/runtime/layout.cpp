// Byte layout of one rank's part of a schedule. See layout.hpp.
#include "collplan/runtime/layout.hpp"

#include <algorithm>
#include <map>

#include "collplan/schedule/walk.hpp"

namespace collplan {
namespace {

constexpr int64_t kUnknown = -1;

bool all_equal(const std::vector<uint64_t>& v) {
    return std::all_of(v.begin(), v.end(), [&](uint64_t x) { return x == v.front(); });
}

// The id a block of `in`/`out` holds by its position (see layout.hpp). C: allgather chunks per contribution.
int64_t own_id(Collective c, int P, uint32_t C, int rank, Buf b, uint32_t block) {
    switch (c) {
        case Collective::allgather: return b == Buf::in ? int64_t{rank} * C + block : block;
        case Collective::alltoall:
        case Collective::alltoallv:
            return b == Buf::in ? int64_t{rank} * P + block : int64_t{block} * P + rank;
        case Collective::allreduce: return block;
        default: return 0;
    }
}

// Symbolic run of every rank's program (schedule/walk.hpp): which block id sits in which block when each op runs.
template <class Held>
class Flow final : public WalkVisitor {
public:
    Flow(const Schedule& s, int me, std::vector<std::vector<Held>>& held)
        : s_(s), P_(s.ranks()), me_(me), held_(held), walk_(s, default_job()) {
        const uint32_t nb = s.blocks(Buf::in) + s.blocks(Buf::out) + s.blocks(Buf::tmp);
        ids_.assign(static_cast<size_t>(P_) * nb, kUnknown);
        for (int r = 0; r < P_; ++r)
            for (Buf b : {Buf::in, Buf::out})
                for (uint32_t k = 0; k < s.blocks(b); ++k) id(r, b, k) = own_id(s.collective(), P_, s.blocks(Buf::in), r, b, k);
        for (int r = 0; r < P_; ++r)
            for (uint32_t i = 0; i < s.num_ops(r); ++i)
                if (s.program(r).ops[i].kind == OpKind::send && walk_.partner(r, i) == kNoPartner)
                    throw Error("schedule " + s_.algorithm + ": rank " + std::to_string(r) + " op " + std::to_string(i) +
                                " sends to " + std::to_string(s.program(r).ops[i].peer) + " with no matching recv");
    }

    // Runs to completion; fills held[2 i] (sources) and held[2 i + 1] (destinations) of this rank's op i.
    void run() {
        held_.assign(2 * s_.num_ops(me_), {});
        walk_.run(*this);
        for (uint32_t i = 0; i < s_.num_ops(me_); ++i)
            if (!walk_.done(me_, i))
                throw Error("schedule " + s_.algorithm + " never completes rank " + std::to_string(me_) + " op " +
                            std::to_string(i) + " (deadlock or unmatched message)");
    }

    void post(int r, uint32_t i) override {
        const OpView v = s_.op(r, i);
        switch (v.op.kind) {
            case OpKind::send:  // carries its data as it is when the send is posted
                record(r, i, 0, v.src());
                payload_[{r, i}] = read(r, v.src());
                break;
            case OpKind::copy:
            case OpKind::reduce:
                record(r, i, 0, v.src());
                if (v.op.kind == OpKind::copy) write(r, v.dst(), read(r, v.src()));
                record(r, i, 1, v.dst());
                break;
            default: break;  // a recv completes in match(); calc and barrier move no data
        }
    }

    void match(int sr, uint32_t si, int rr, uint32_t ri) override {
        const auto it = payload_.find({sr, si});
        const std::span<const Segment> dst = s_.op(rr, ri).dst();
        write(rr, dst, it->second);
        payload_.erase(it);
        record(rr, ri, 1, dst);
    }

private:
    int64_t& id(int r, Buf b, uint32_t k) {
        size_t base = static_cast<size_t>(r) * (s_.blocks(Buf::in) + s_.blocks(Buf::out) + s_.blocks(Buf::tmp));
        if (b != Buf::in) base += s_.blocks(Buf::in);
        if (b == Buf::tmp) base += s_.blocks(Buf::out);
        return ids_[base + k];
    }

    std::vector<int64_t> read(int r, std::span<const Segment> segs) {
        std::vector<int64_t> out;
        for (const Segment& g : segs)
            for (uint32_t k = 0; k < g.count; ++k) out.push_back(id(r, g.buf(), g.first() + k));
        return out;
    }
    void write(int r, std::span<const Segment> segs, const std::vector<int64_t>& v) {
        size_t k = 0;
        for (const Segment& g : segs)
            for (uint32_t b = 0; b < g.count && k < v.size(); ++b) id(r, g.buf(), g.first() + b) = v[k++];
    }

    void record(int r, uint32_t i, int side, std::span<const Segment> segs) {
        if (r != me_) return;
        for (const Segment& g : segs)
            for (uint32_t k = 0; k < g.count; ++k)
                held_[2 * i + side].push_back({g.buf(), g.first() + k, id(r, g.buf(), g.first() + k)});
    }

    const Schedule& s_;
    int P_, me_;
    std::vector<std::vector<Held>>& held_;
    Walk walk_;
    std::vector<int64_t> ids_;
    std::map<std::pair<int, uint32_t>, std::vector<int64_t>> payload_;  // posted sends not yet matched
};

}  // namespace

Layout::Layout(const Schedule& s, int rank, const CallShape& shape) : shape_(shape), P_(s.ranks()), rank_(rank) {
    if (shape.collective != s.collective())
        throw Error(std::string("call is ") + to_string(shape.collective) + " but schedule " + s.algorithm + " is " +
                    to_string(s.collective()));
    if (rank < 0 || rank >= P_) throw Error("rank " + std::to_string(rank) + " outside the schedule's " + std::to_string(P_) + " ranks");
    switch (s.collective()) {
        case Collective::allreduce:
            S_ = s.blocks(Buf::in);
            if (s.blocks(Buf::out) != S_)
                throw Error("allreduce schedule " + s.algorithm + " has " + std::to_string(S_) + " in blocks but " +
                            std::to_string(s.blocks(Buf::out)) + " out blocks (must be equal)");
            uniform_bytes_ = S_ == 0 ? 0 : shape.count / S_ * shape.elem_bytes;
            break;
        case Collective::alltoallv:
            if (shape.matrix_bytes.size() != static_cast<size_t>(P_) * P_ || shape.send_displs.size() != size_t(P_) ||
                shape.recv_displs.size() != size_t(P_))
                throw Error("alltoallv call shape needs a " + std::to_string(P_) + "x" + std::to_string(P_) +
                            " byte matrix and " + std::to_string(P_) + " displacements per side");
            uniform_bytes_ = shape.matrix_bytes.empty() ? 0 : shape.matrix_bytes.front();
            break;
        case Collective::allgather:  // a contribution in C chunks: chunk c = bytes c*B/C .. (c+1)*B/C - 1
            C_ = s.blocks(Buf::in);
            if (s.blocks(Buf::out) != static_cast<uint64_t>(P_) * C_)
                throw Error("allgather schedule " + s.algorithm + " has " + std::to_string(C_) + " in blocks but " +
                            std::to_string(s.blocks(Buf::out)) + " out blocks (must be P times as many)");
            uniform_bytes_ = C_ == 0 ? 0 : shape.block_bytes / C_;
            break;
        case Collective::barrier: uniform_bytes_ = 0; break;
        default: uniform_bytes_ = shape.block_bytes; break;
    }
    uniform_ = uniform(s, shape);
    if (!uniform_ && !s.whole())
        throw Error("schedule " + s.algorithm + " holds only rank " + std::to_string(s.only_rank()) +
                    "'s program, but blocks of uneven size need the whole schedule");
    std::vector<std::vector<Held>> held;
    if (uniform_) {
        held.assign(2 * s.num_ops(rank), {});
        for (uint32_t i = 0; i < s.num_ops(rank); ++i) {
            const OpView v = s.op(rank, i);
            for (int side = 0; side < 2; ++side)
                for (const Segment& g : side == 0 ? v.src() : v.dst())
                    for (uint32_t k = 0; k < g.count; ++k)
                        held[2 * i + side].push_back({g.buf(), g.first() + k, own_id(s.collective(), P_, C_, rank, g.buf(), g.first() + k)});
        }
    } else {
        analyse(s, rank, held);
    }
    build_chunks(s, rank, held);
}

bool Layout::uniform(const Schedule& s, const CallShape& shape) {
    const uint32_t n = s.blocks(Buf::in);
    switch (s.collective()) {
        case Collective::allreduce: return n == 0 || shape.count % n == 0;
        case Collective::allgather: return n <= 1 || shape.block_bytes % n == 0;
        case Collective::alltoallv: return all_equal(shape.matrix_bytes);
        default: return true;
    }
}

void Layout::analyse(const Schedule& s, int rank, std::vector<std::vector<Held>>& held) {
    Flow<Held> flow(s, rank, held);
    flow.run();
}

uint64_t Layout::id_bytes(int64_t id) const {
    if (uniform_ || id == kUnknown) return uniform_bytes_;
    if (shape_.collective == Collective::allreduce) {
        const auto s = static_cast<uint64_t>(id);
        return (shape_.segment_begin(s + 1, S_) - shape_.segment_begin(s, S_)) * shape_.elem_bytes;
    }
    if (shape_.collective == Collective::allgather) {
        const auto c = static_cast<uint64_t>(id) % C_;
        return chunk_begin(c + 1) - chunk_begin(c);
    }
    return shape_.matrix_bytes.at(static_cast<size_t>(id));
}

Chunk Layout::position(Buf b, uint32_t block, int64_t id) const {
    const uint64_t bytes = id_bytes(id);
    if (b == Buf::tmp) return {b, tmp_slot_off_.at(block), bytes};
    const int64_t own = own_id(shape_.collective, P_, C_, rank_, b, block);
    uint64_t off = 0;
    switch (shape_.collective) {
        case Collective::allgather:
            off = b == Buf::in ? chunk_begin(block) : uint64_t{block / C_} * shape_.block_bytes + chunk_begin(block % C_);
            break;
        case Collective::alltoall: off = uint64_t{block} * shape_.block_bytes; break;
        case Collective::allreduce: off = shape_.segment_begin(block, S_) * shape_.elem_bytes; break;
        case Collective::alltoallv: off = (b == Buf::in ? shape_.send_displs : shape_.recv_displs).at(block); break;
        default: break;
    }
    if (id != own && bytes != id_bytes(own))
        throw Error(std::string("schedule stores a block of ") + std::to_string(bytes) + " bytes in " + to_string(b) +
                    "[" + std::to_string(block) + "], which holds " + std::to_string(id_bytes(own)) + " bytes in this call");
    return {b, off, bytes};
}

void Layout::build_chunks(const Schedule& s, int rank, const std::vector<std::vector<Held>>& held) {
    const uint32_t T = s.blocks(Buf::tmp);
    std::vector<uint64_t> slot(T, uniform_ ? uniform_bytes_ : 0);
    if (!uniform_)
        for (const auto& list : held)
            for (const Held& h : list)
                if (h.buf == Buf::tmp) slot[h.block] = std::max(slot[h.block], id_bytes(h.id));
    tmp_slot_off_.assign(T, 0);
    for (uint32_t b = 0; b < T; ++b) {
        tmp_slot_off_[b] = tmp_bytes_;
        tmp_bytes_ += slot[b];
    }
    const size_t n = s.num_ops(rank);
    begin_.assign(2 * n + 1, 0);
    for (size_t k = 0; k < 2 * n; ++k) {
        begin_[k] = static_cast<uint32_t>(chunks_.size());
        for (const Held& h : held[k]) {
            const Chunk c = position(h.buf, h.block, h.id);
            if (c.bytes == 0) continue;
            if (c.buf != Buf::tmp) extent_[static_cast<int>(c.buf)] = std::max(extent_[static_cast<int>(c.buf)], c.offset + c.bytes);
            if (chunks_.size() > begin_[k] && chunks_.back().buf == c.buf && chunks_.back().offset + chunks_.back().bytes == c.offset)
                chunks_.back().bytes += c.bytes;
            else
                chunks_.push_back(c);
        }
    }
    begin_[2 * n] = static_cast<uint32_t>(chunks_.size());
    for (uint32_t i = 0; i < n; ++i) {
        const OpKind k = s.program(rank).ops[i].kind;
        if ((k == OpKind::copy || k == OpKind::reduce) && src_bytes(i) != dst_bytes(i))
            throw Error("schedule " + s.algorithm + " rank " + std::to_string(rank) + " op " + std::to_string(i) + " (" +
                        to_string(k) + ") moves " + std::to_string(src_bytes(i)) + " bytes into " +
                        std::to_string(dst_bytes(i)) + " bytes");
    }
}

std::span<const Chunk> Layout::span(uint32_t op, int side) const {
    const size_t k = 2 * size_t{op} + static_cast<size_t>(side);
    return std::span<const Chunk>(chunks_).subspan(begin_.at(k), begin_.at(k + 1) - begin_[k]);
}

uint64_t Layout::src_bytes(uint32_t op) const {
    uint64_t n = 0;
    for (const Chunk& c : src(op)) n += c.bytes;
    return n;
}

uint64_t Layout::dst_bytes(uint32_t op) const {
    uint64_t n = 0;
    for (const Chunk& c : dst(op)) n += c.bytes;
    return n;
}

}  // namespace collplan
