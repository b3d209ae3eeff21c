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

// The item a block of `in`/`out` stands for by its position: what `in` holds before the call, what `out` must hold
// after it (bcast's root: what its out holds before); kUnknown for a block the rank does not have.
int64_t position_item(Collective c, const CollShape& sh, int rank, Buf b, uint32_t block) {
    int64_t item = initial_item(c, sh, rank, b, block);
    if (item == kNoItem && b == Buf::out) item = final_item(c, sh, rank, block);
    return item == kNoItem ? kUnknown : item;
}

// Symbolic run of every rank's program (schedule/walk.hpp): which block id sits in which block when each op runs.
template <class Held>
class Flow final : public WalkVisitor {
public:
    Flow(const Schedule& s, int me, std::vector<std::vector<Held>>& held)
        : s_(s), P_(s.ranks()), me_(me), held_(held), walk_(s, default_job()) {
        const uint32_t nb = s.blocks(Buf::in) + s.blocks(Buf::out) + s.blocks(Buf::tmp);
        ids_.assign(static_cast<size_t>(P_) * nb, kUnknown);
        const CollShape sh = s.shape();
        for (int r = 0; r < P_; ++r)
            for (Buf b : {Buf::in, Buf::out})
                for (uint32_t k = 0; k < s.blocks(b); ++k) id(r, b, k) = position_item(s.collective(), sh, r, b, k);
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

Layout::Layout(const Schedule& s, int rank, const CallShape& shape)
    : shape_(shape), coll_(s.shape()), P_(s.ranks()), rank_(rank) {
    const Collective c = s.collective();
    if (shape.collective != c)
        throw Error(std::string("call is ") + to_string(shape.collective) + " but schedule " + s.algorithm + " is " + to_string(c));
    if (rank < 0 || rank >= P_) throw Error("rank " + std::to_string(rank) + " outside the schedule's " + std::to_string(P_) + " ranks");
    if (describe(c).rooted && shape.root != s.root)
        throw Error(std::string(to_string(c)) + " call with root " + std::to_string(shape.root) + " but schedule " +
                    s.algorithm + " is for root " + std::to_string(s.root));
    check_blocks(c, P_, s.blocks(Buf::in), s.blocks(Buf::out));
    const uint64_t need = counts_size(c, P_);
    if (shape.counts.size() != need)
        throw Error(std::string(to_string(c)) + " call shape has " + std::to_string(shape.counts.size()) + " counts (allowed: " +
                    counts_rule(c, P_) + ")");
    for (const auto* d : {&shape.send_displs, &shape.recv_displs})
        if (!d->empty() && d->size() != static_cast<size_t>(P_))
            throw Error(std::string(to_string(c)) + " call shape has " + std::to_string(d->size()) +
                        " displacements on one side (allowed: none, or one per rank, " + std::to_string(P_) + ")");
    uniform_ = uniform(s, shape);
    if (c == Collective::barrier) uniform_bytes_ = 0;
    else if (need > 0) uniform_bytes_ = shape.counts.empty() ? 0 : shape.counts.front() * shape.elem_bytes;
    else uniform_bytes_ = coll_.S == 0 ? 0 : shape.count / coll_.S * shape.elem_bytes;
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
                        held[2 * i + side].push_back({g.buf(), g.first() + k, kUnknown});
        }
    } else {
        analyse(s, rank, held);
    }
    build_chunks(s, rank, held);
}

bool Layout::uniform(const Schedule& s, const CallShape& shape) {
    const Collective c = s.collective();
    if (c == Collective::barrier) return true;
    if (counts_size(c, s.ranks()) > 0) return all_equal(shape.counts);
    const uint32_t S = s.size_blocks();
    return S <= 1 || shape.count % S == 0;
}

void Layout::analyse(const Schedule& s, int rank, std::vector<std::vector<Held>>& held) {
    Flow<Held> flow(s, rank, held);
    flow.run();
}

uint64_t Layout::id_bytes(int64_t id) const {
    if (uniform_ || id == kUnknown) return uniform_bytes_;
    const auto item = static_cast<uint64_t>(id);
    if (!shape_.counts.empty()) return shape_.counts.at(item) * shape_.elem_bytes;
    const uint64_t seg = item % coll_.S;
    return (shape_.segment_begin(seg + 1, coll_.S) - shape_.segment_begin(seg, coll_.S)) * shape_.elem_bytes;
}

int64_t Layout::own_id(Buf b, uint32_t block) const { return position_item(shape_.collective, coll_, rank_, b, block); }

Chunk Layout::position(Buf b, uint32_t block, int64_t id) const {
    if (b == Buf::tmp) return {b, tmp_slot_off_.at(block), id_bytes(id)};
    if (block >= buffer_blocks(shape_.collective, coll_, rank_, b))
        throw Error("schedule uses " + std::string(to_string(b)) + "[" + std::to_string(block) + "] of rank " +
                    std::to_string(rank_) + ", which has " + std::to_string(buffer_blocks(shape_.collective, coll_, rank_, b)) +
                    " " + to_string(b) + " blocks in a " + to_string(shape_.collective));
    const int64_t own = own_id(b, block);
    const uint64_t bytes = id_bytes(id == kUnknown ? own : id);
    const uint32_t S = coll_.S == 0 ? 1 : coll_.S;
    const uint64_t unit = block / S, seg = block % S;
    const std::vector<uint64_t>& displs = b == Buf::in ? shape_.send_displs : shape_.recv_displs;
    const uint64_t unit_off = displs.empty() ? unit * shape_.count * shape_.elem_bytes : displs.at(unit);
    const uint64_t off = unit_off + (shape_.counts.empty() ? shape_.segment_begin(seg, S) * shape_.elem_bytes : 0);
    if (id != kUnknown && id != own && bytes != id_bytes(own))
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
