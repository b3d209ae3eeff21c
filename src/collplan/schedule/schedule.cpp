#include "collplan/schedule/schedule.hpp"

#include <algorithm>
#include <array>

namespace collplan {

namespace {
constexpr std::array<const char*, 6> kOpKinds = {"send", "recv", "reduce", "copy", "calc", "barrier"};
constexpr std::array<const char*, 3> kBufs = {"in", "out", "tmp"};

template <size_t N>
int find_name(const std::array<const char*, N>& names, const std::string& name, const char* what) {
    for (size_t i = 0; i < N; ++i)
        if (name == names[i]) return static_cast<int>(i);
    std::string allowed;
    for (size_t i = 0; i < N; ++i) allowed += (i ? ", " : "") + std::string(names[i]);
    throw Error("unknown " + std::string(what) + " '" + name + "' (allowed: " + allowed + ")");
}
}  // namespace

const char* to_string(OpKind k) { return kOpKinds[static_cast<int>(k)]; }
const char* to_string(Buf b) { return kBufs[static_cast<int>(b)]; }
Buf parse_buf(const std::string& n) { return static_cast<Buf>(find_name(kBufs, n, "buffer")); }

Segment::Segment(Buf b, uint32_t first, uint32_t n) : first_and_buf(0), count(n) {
    if (first >= (1u << 30)) throw Error("segment first block " + std::to_string(first) + " too large (allowed: < 2^30)");
    first_and_buf = (static_cast<uint32_t>(b) << 30) | first;
}

uint64_t block_count(std::span<const Segment> segs) {
    uint64_t n = 0;
    for (const auto& s : segs) n += s.count;
    return n;
}

std::span<const Segment> OpView::src() const {
    switch (op.kind) {
        case OpKind::send: return segs;
        case OpKind::copy:
        case OpKind::reduce: return segs.first(static_cast<size_t>(op.aux));
        default: return {};
    }
}

std::span<const Segment> OpView::dst() const {
    switch (op.kind) {
        case OpKind::recv: return segs;
        case OpKind::copy:
        case OpKind::reduce: return segs.subspan(static_cast<size_t>(op.aux));
        default: return {};
    }
}

Schedule::Schedule(Collective c, int ranks, uint32_t in_blocks, uint32_t out_blocks, uint32_t tmp_blocks, int only_rank)
    : collective_(c), ranks_(ranks), only_rank_(only_rank), in_blocks_(in_blocks), out_blocks_(out_blocks),
      tmp_blocks_(tmp_blocks) {
    if (ranks < 1) throw Error("number of ranks " + std::to_string(ranks) + " is invalid (allowed: >= 1)");
    if (only_rank != kAllRanks && (only_rank < 0 || only_rank >= ranks))
        throw Error("rank " + std::to_string(only_rank) + " outside the schedule's " + std::to_string(ranks) +
                    " ranks (allowed: 0.." + std::to_string(ranks - 1) + ")");
    for (uint32_t b : {in_blocks, out_blocks, tmp_blocks})
        if (b >= (1u << 30)) throw Error("buffer of " + std::to_string(b) + " blocks too large (allowed: < 2^30)");
    programs_.resize(whole() ? static_cast<size_t>(ranks) : 1);
}

void Schedule::refuse(int rank) const {
    if (rank < 0 || rank >= ranks_)
        throw Error("rank " + std::to_string(rank) + " outside the schedule's " + std::to_string(ranks_) + " ranks");
    throw Error("schedule " + algorithm + " holds only rank " + std::to_string(only_rank_) + "'s program, not rank " +
                std::to_string(rank) + "'s (it was built for one rank)");
}

Schedule Schedule::take_rank(int rank) && {
    Schedule s(collective_, ranks_, in_blocks_, out_blocks_, tmp_blocks_, rank);
    s.programs_[0] = std::move(programs_[slot(rank)]);
    s.algorithm = std::move(algorithm);
    s.params = std::move(params);
    s.topology = std::move(topology);
    s.needs_commutative = needs_commutative;
    s.needs_inverse = needs_inverse;
    s.idempotent_only = idempotent_only;
    s.rank_consistent = rank_consistent;
    s.root = root;
    s.symmetry = symmetry;
    s.counts = std::move(counts);
    return s;
}

uint32_t Schedule::size_blocks() const {
    return unit_blocks(collective_, in_blocks_, out_blocks_);
}

size_t Schedule::total_ops() const {
    size_t n = 0;
    for (const auto& p : programs_) n += p.ops.size();
    return n;
}

OpView Schedule::op(int rank, uint32_t index) const {
    const RankProgram& p = program(rank);
    const Op& o = p.ops.at(index);
    uint32_t seg_end = index + 1 < p.ops.size() ? p.ops[index + 1].seg_begin : static_cast<uint32_t>(p.segs.size());
    uint32_t dep_end = index + 1 < p.ops.size() ? p.ops[index + 1].dep_begin : static_cast<uint32_t>(p.deps.size());
    std::span<const Segment> segs(p.segs.data() + o.seg_begin, seg_end - o.seg_begin);
    std::span<const uint32_t> deps(p.deps.data() + o.dep_begin, dep_end - o.dep_begin);
    uint64_t units;
    if (!p.units.empty()) units = p.units[index];
    else if (o.kind == OpKind::calc) units = static_cast<uint32_t>(o.aux);
    else if (o.kind == OpKind::copy || o.kind == OpKind::reduce) units = block_count(segs.first(static_cast<size_t>(o.aux)));
    else units = block_count(segs);
    return OpView{o, segs, deps, units};
}

std::string Schedule::subject() const {
    return (algorithm.empty() ? std::string("a schedule") : algorithm) + " at P=" + std::to_string(ranks_);
}

size_t Schedule::memory_bytes() const {
    size_t n = programs_.capacity() * sizeof(RankProgram);
    for (const auto& p : programs_)
        n += p.ops.capacity() * sizeof(Op) + p.segs.capacity() * sizeof(Segment) + p.deps.capacity() * 4 +
             p.units.capacity() * 8;
    return n;
}

static bool same_op(const Op& a, const Op& b) {
    return a.kind == b.kind && a.flags == b.flags && a.port == b.port && a.ties == b.ties && a.peer == b.peer && a.aux == b.aux &&
           a.seg_begin == b.seg_begin && a.dep_begin == b.dep_begin;
}

bool Schedule::operator==(const Schedule& o) const {
    if (collective_ != o.collective_ || ranks_ != o.ranks_ || in_blocks_ != o.in_blocks_ ||
        out_blocks_ != o.out_blocks_ || tmp_blocks_ != o.tmp_blocks_ || algorithm != o.algorithm ||
        params != o.params || topology != o.topology || needs_commutative != o.needs_commutative ||
        needs_inverse != o.needs_inverse || idempotent_only != o.idempotent_only ||
        rank_consistent != o.rank_consistent || root != o.root || symmetry != o.symmetry || counts != o.counts || only_rank_ != o.only_rank_)
        return false;
    for (int r = 0; r < ranks_; ++r) {
        if (!holds(r)) continue;
        const auto &a = program(r), &b = o.program(r);
        if (a.ops.size() != b.ops.size() || a.segs != b.segs || a.deps != b.deps) return false;
        for (size_t i = 0; i < a.ops.size(); ++i)
            if (!same_op(a.ops[i], b.ops[i]) || op(r, i).units != o.op(r, i).units) return false;
    }
    return true;
}

RankBuilder::RankBuilder(Schedule& s, int rank) : s_(s), rank_(rank), prog_(s.program_mut(rank)) {}

RankBuilder& RankBuilder::fence() {
    pending_fence_ = !prog_.ops.empty();
    return *this;
}

RankBuilder& RankBuilder::on_port(int port) {
    if (prog_.ops.empty()) throw Error("on_port() called before any op on rank " + std::to_string(rank_));
    if (port < 0 || port > 127) throw Error("port " + std::to_string(port) + " out of range (allowed: 0..127)");
    prog_.ops.back().port = static_cast<int8_t>(port);
    return *this;
}

RankBuilder& RankBuilder::ties_minus(unsigned dims_mask) {
    if (prog_.ops.empty() || prog_.ops.back().kind != OpKind::send)
        throw Error("ties_minus() needs a send as the last op on rank " + std::to_string(rank_));
    if (dims_mask > 255) throw Error("ties mask " + std::to_string(dims_mask) + " out of range (allowed: 0..255)");
    prog_.ops.back().ties = static_cast<uint8_t>(dims_mask);
    return *this;
}

uint32_t RankBuilder::add(OpKind kind, int peer, int32_t aux, std::span<const Segment> a, std::span<const Segment> b,
                          std::span<const uint32_t> deps, uint64_t units, uint8_t flags) {
    const uint32_t index = size();
    auto where = [&] { return "rank " + std::to_string(rank_) + " op " + std::to_string(index) + " (" + to_string(kind) + ")"; };
    if (kind == OpKind::send || kind == OpKind::recv) {
        if (peer < 0 || peer >= s_.ranks() || peer == rank_)
            throw Error(where() + ": peer " + std::to_string(peer) + " invalid (allowed: 0.." +
                        std::to_string(s_.ranks() - 1) + ", not the rank itself)");
        if (aux < 0) throw Error(where() + ": tag " + std::to_string(aux) + " is negative (allowed: >= 0)");
    }
    for (auto segs : {a, b})
        for (const Segment& sg : segs)
            if (uint64_t{sg.first()} + sg.count > s_.blocks(sg.buf()))
                throw Error(where() + ": segment " + to_string(sg.buf()) + "[" + std::to_string(sg.first()) + "+" +
                            std::to_string(sg.count) + "] exceeds the buffer's " + std::to_string(s_.blocks(sg.buf())) +
                            " blocks");
    if ((kind == OpKind::copy || kind == OpKind::reduce) && block_count(a) != block_count(b))
        throw Error(where() + ": source has " + std::to_string(block_count(a)) + " blocks, destination " +
                    std::to_string(block_count(b)));
    for (uint32_t d : deps)
        if (d >= index) throw Error(where() + ": dependency " + std::to_string(d) + " is not an earlier op");
    Op op;
    op.kind = kind;
    op.flags = static_cast<uint8_t>(flags | (pending_fence_ ? opflag::fence : 0));
    op.peer = peer;
    op.aux = aux;
    op.seg_begin = static_cast<uint32_t>(prog_.segs.size());
    op.dep_begin = static_cast<uint32_t>(prog_.deps.size());
    pending_fence_ = false;
    prog_.ops.push_back(op);
    prog_.segs.insert(prog_.segs.end(), a.begin(), a.end());
    prog_.segs.insert(prog_.segs.end(), b.begin(), b.end());
    prog_.deps.insert(prog_.deps.end(), deps.begin(), deps.end());
    const uint64_t implicit = kind == OpKind::calc ? static_cast<uint64_t>(aux) : block_count(a);
    if (units != kBlockUnits && units != implicit && prog_.units.empty()) {
        // First op with explicit units: record the implicit units of every earlier op (read while the
        // per-op vector is still empty, so op() derives them), then switch to explicit storage.
        std::vector<uint64_t> u;
        u.reserve(prog_.ops.capacity());
        for (uint32_t i = 0; i < index; ++i) u.push_back(s_.op(rank_, i).units);
        u.push_back(units);
        prog_.units = std::move(u);
    } else if (!prog_.units.empty()) {
        prog_.units.push_back(units == kBlockUnits ? implicit : units);
    }
    return index;
}

uint32_t RankBuilder::send(int peer, int tag, std::span<const Segment> data, std::span<const uint32_t> deps, uint64_t units) {
    return add(OpKind::send, peer, tag, data, {}, deps, units, 0);
}
uint32_t RankBuilder::recv(int peer, int tag, std::span<const Segment> data, std::span<const uint32_t> deps, uint64_t units) {
    return add(OpKind::recv, peer, tag, data, {}, deps, units, 0);
}
uint32_t RankBuilder::copy(std::span<const Segment> src, std::span<const Segment> dst, std::span<const uint32_t> deps, uint64_t units) {
    return add(OpKind::copy, -1, static_cast<int32_t>(src.size()), src, dst, deps, units, 0);
}
uint32_t RankBuilder::reduce(std::span<const Segment> src, std::span<const Segment> dst, std::span<const uint32_t> deps, uint8_t flags,
                             uint64_t units) {
    if (flags & opflag::fence) throw Error("reduce flags may only be reverse and inverse");
    return add(OpKind::reduce, -1, static_cast<int32_t>(src.size()), src, dst, deps, units, flags);
}
uint32_t RankBuilder::calc(uint32_t units, std::span<const uint32_t> deps) {
    if (units > 0x7fffffffu) throw Error("calc units " + std::to_string(units) + " too large (allowed: < 2^31)");
    return add(OpKind::calc, -1, static_cast<int32_t>(units), {}, {}, deps, kBlockUnits, 0);
}
uint32_t RankBuilder::barrier(std::span<const uint32_t> deps) {
    return add(OpKind::barrier, -1, 0, {}, {}, deps, kBlockUnits, 0);
}

}  // namespace collplan
