// The schedule walker. See walk.hpp.
#include "collplan/schedule/walk.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <tuple>

#include "collplan/schedule/symmetry.hpp"

namespace collplan {

// ------------------------------------------------------------------------------------------- names, sizes
double block_bytes(const Schedule& s, double size_bytes, const char* who) {
    if (!(size_bytes >= 0) || !std::isfinite(size_bytes))
        throw Error(std::string(who) + ": size " + std::to_string(size_bytes) + " bytes is invalid (allowed: >= 0)");
    return s.collective() == Collective::barrier ? 0.0 : size_bytes / s.size_blocks();
}

std::string describe_op(const Schedule& s, int rank, uint32_t op) {
    const Op& o = s.program(rank).ops.at(op);
    std::string what = to_string(o.kind);
    if (o.kind == OpKind::send) what += " to " + std::to_string(o.peer) + " tag " + std::to_string(o.tag());
    if (o.kind == OpKind::recv) what += " from " + std::to_string(o.peer) + " tag " + std::to_string(o.tag());
    return "rank " + std::to_string(rank) + " op " + std::to_string(op) + " (" + what + ")";
}

// ------------------------------------------------------------------------------------------- groups, deps
ProgramOrder program_order(const RankProgram& p) {
    ProgramOrder o;
    const auto n = static_cast<uint32_t>(p.ops.size());
    o.group.resize(n);
    o.pending.assign(n, 0);
    o.dep_begin.assign(n + 1, 0);
    for (uint32_t begin = 0, g = 0; begin < n; ++g) {
        const uint32_t end = group_end(p, begin);
        o.group_begin.push_back(begin);
        for (uint32_t i = begin; i < end; ++i) {
            o.group[i] = g;
            const std::span<const uint32_t> deps = op_deps(p, i);
            o.pending[i] = static_cast<uint32_t>(deps.size()) + (g > 0 ? 1 : 0);
            for (uint32_t d : deps) ++o.dep_begin[d + 1];
        }
        begin = end;
    }
    o.group_begin.push_back(n);
    o.any_deps = !p.deps.empty();
    for (uint32_t i = 0; i < n; ++i) o.dep_begin[i + 1] += o.dep_begin[i];
    o.dependents.resize(o.dep_begin[n]);
    std::vector<uint32_t> fill(o.dep_begin.begin(), o.dep_begin.end() - 1);
    for (uint32_t i = 0; i < n; ++i)
        for (uint32_t d : op_deps(p, i)) o.dependents[fill[d]++] = i;
    return o;
}

// ------------------------------------------------------------------------------------------- RankCursor
RankCursor::RankCursor(const RankProgram& prog)
    : ops_(prog.ops.data()), segs_(prog.segs.data()), size_(static_cast<uint32_t>(prog.ops.size())),
      num_segs_(static_cast<uint32_t>(prog.segs.size())), any_deps_(!prog.deps.empty()), any_units_(!prog.units.empty()) {
    if (any_deps_ || any_units_) g_ = std::make_unique<GroupDeps>(), g_->prog = &prog;
}

uint64_t RankCursor::units(uint32_t k) const {
    if (any_units_) return g_->prog->units[k];
    const Op& o = ops_[k];
    if (o.kind == OpKind::calc) return static_cast<uint32_t>(o.aux);
    const uint32_t end = k + 1 < size_ ? ops_[k + 1].seg_begin : num_segs_;
    const uint32_t n = o.kind == OpKind::copy || o.kind == OpKind::reduce ? static_cast<uint32_t>(o.aux) : end - o.seg_begin;
    return block_count(std::span<const Segment>(segs_ + o.seg_begin, n));
}

size_t RankCursor::memory_bytes() const {
    if (!g_) return 0;
    return (g_->pending.capacity() + g_->offset.capacity() + g_->dependents.capacity()) * 4 +
           g_->stamp.capacity() * sizeof(uint64_t) + sizeof(GroupDeps);
}

void RankCursor::start(std::vector<uint32_t>& ready) {
    group_begin_ = group_end_ = remaining_ = 0;
    if (size_ > 0) open(0, ready);
}

void RankCursor::open(uint32_t begin, std::vector<uint32_t>& ready) {
    const uint32_t end = collplan::group_end(ops_, size_, begin);
    group_begin_ = begin;
    group_end_ = end;
    remaining_ = end - begin;
    if (any_deps_) build_group_deps();
    for (uint32_t k = begin; k < end; ++k)
        if (!group_deps_ || g_->pending[k - begin] == 0) ready.push_back(k);
}

// Fills the pending counts and dependents for the explicit deps that point into the active group (deps on earlier
// groups are complete already); leaves group_deps_ false when the group has none.
void RankCursor::build_group_deps() {
    const uint32_t b = group_begin_, n = group_end_ - b;
    group_deps_ = false;
    for (uint32_t k = b; k < group_end_ && !group_deps_; ++k)
        for (uint32_t d : deps(k)) group_deps_ = group_deps_ || d >= b;
    if (!group_deps_) return;
    std::vector<uint32_t>& pending = g_->pending;
    std::vector<uint32_t>& offset = g_->offset;
    pending.assign(n, 0);
    g_->stamp.assign(n, 0);
    offset.assign(n + 1, 0);
    for (uint32_t k = b; k < group_end_; ++k)
        for (uint32_t d : deps(k))
            if (d >= b) ++pending[k - b], ++offset[d - b + 1];
    for (uint32_t i = 0; i < n; ++i) offset[i + 1] += offset[i];
    g_->dependents.resize(offset[n]);
    std::vector<uint32_t> fill(offset.begin(), offset.end() - 1);
    for (uint32_t k = b; k < group_end_; ++k)
        for (uint32_t d : deps(k))
            if (d >= b) g_->dependents[fill[d - b]++] = k - b;
}

void RankCursor::complete(uint32_t k, std::vector<uint32_t>& ready) {
    if (group_deps_) {
        const uint32_t rel = k - group_begin_;
        for (uint32_t x = g_->offset[rel]; x < g_->offset[rel + 1]; ++x)
            if (--g_->pending[g_->dependents[x]] == 0) ready.push_back(group_begin_ + g_->dependents[x]);
    }
    if (--remaining_ == 0 && group_end_ < size_) open(group_end_, ready);
}

// ------------------------------------------------------------------------------------------- FlatPrograms
namespace {

uint64_t units_of(const RankProgram& p, uint32_t k) {
    if (!p.units.empty()) return p.units[k];
    const Op& o = p.ops[k];
    if (o.kind == OpKind::calc) return static_cast<uint32_t>(o.aux);
    const uint32_t end = k + 1 < p.ops.size() ? p.ops[k + 1].seg_begin : static_cast<uint32_t>(p.segs.size());
    const uint32_t n = o.kind == OpKind::copy || o.kind == OpKind::reduce ? static_cast<uint32_t>(o.aux) : end - o.seg_begin;
    uint64_t u = 0;  // block_count, inline: this runs once per op of the schedule
    for (const Segment* g = p.segs.data() + o.seg_begin, *e = g + n; g < e; ++g) u += g->count;
    return u;
}

}  // namespace

// Two passes over the programs: the records of each group index g over all ranks, then the copy. The copy goes
// through the group indices in tiles of kTile: within a tile each rank's program is read in order and its groups
// are appended to kTile regions at once (one page of each active), so neither side jumps to a new page per group.
FlatPrograms::FlatPrograms(const Schedule& s) : s_(s), first_(static_cast<size_t>(s.ranks()), kEnd) {
    constexpr size_t kTile = 512;
    const int P = s.ranks();
    std::vector<uint64_t> fill;  // per group index: records, then where the next group of that index goes
    for (int r = 0; r < P; ++r) {
        const RankProgram& p = s.program(r);
        const auto n = static_cast<uint32_t>(p.ops.size());
        for (uint32_t begin = 0, g = 0; begin < n; ++g) {
            const uint32_t end = group_end(p.ops.data(), n, begin);
            if (g == fill.size()) fill.push_back(0);
            fill[g] += 1 + (end - begin);
            begin = end;
        }
    }
    uint64_t total = 0;
    for (uint64_t& f : fill) total += std::exchange(f, total);
    if (total >= kEnd)
        throw Error("simulate: the schedule has " + std::to_string(total) + " ops and groups (allowed: fewer than 2^32)");
    rec_ = std::make_unique_for_overwrite<FlatRecord[]>(total);
    size_ = total;
    std::vector<uint32_t> pos(static_cast<size_t>(P), 0), last(static_cast<size_t>(P), kEnd);
    for (size_t g0 = 0; g0 < fill.size(); g0 += kTile) {
        for (int r = 0; r < P; ++r) {
            const RankProgram& p = s.program(r);
            const auto n = static_cast<uint32_t>(p.ops.size());
            uint32_t begin = pos[r];
            for (size_t g = g0; g < g0 + kTile && begin < n; ++g) {
                const uint32_t end = group_end(p.ops.data(), n, begin);
                const auto h = static_cast<uint32_t>(fill[g]);
                fill[g] += 1 + (end - begin);
                rec_[h].head = FlatHead{kEnd, end - begin, begin, 0};
                (last[r] == kEnd ? first_[r] : rec_[last[r]].head.next) = h;
                last[r] = h;
                for (uint32_t k = begin; k < end; ++k) {
                    const Op& o = p.ops[k];
                    const uint64_t u = units_of(p, k);
                    rec_[h + 1 + (k - begin)].op = FlatOp{o.kind, static_cast<uint8_t>(u >> 32 != 0), o.port, 0, o.peer,
                                                          o.aux, static_cast<uint32_t>(u)};
                }
                begin = end;
            }
            pos[r] = begin;
        }
    }
}

// ------------------------------------------------------------------------------------------- Matcher
namespace {
uint64_t mix(int32_t a, int32_t b, int32_t c) {
    uint64_t h = (uint64_t(uint32_t(a)) << 32 | uint32_t(b)) * 0x9e3779b97f4a7c15ull;
    h ^= (h >> 29) + uint64_t(uint32_t(c)) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}
}  // namespace

Matcher::Matcher(int receivers) : lines_(static_cast<size_t>(receivers > 0 ? receivers : 0)), slots_(64) {}

void Matcher::prefetch(int32_t sender, int32_t receiver, int32_t tag) const {
    if (receiver >= 0 && static_cast<size_t>(receiver) < lines_.size()) return __builtin_prefetch(&lines_[receiver]);
    __builtin_prefetch(&slots_[mix(receiver, sender, tag) & (slots_.size() - 1)]);
}

bool Matcher::has_waiting(bool sends, int32_t sender, int32_t receiver, int32_t tag) const {
    const Line* l = receiver >= 0 && static_cast<size_t>(receiver) < lines_.size() ? &lines_[receiver] : nullptr;
    if (l) {
        for (int i = 0; i < kInLine; ++i) {
            const uint8_t bit = static_cast<uint8_t>(1u << i);
            if ((l->used & bit) && l->e[i].sender == sender && l->e[i].tag == tag) return ((l->sends & bit) != 0) == sends;
        }
        if (l->elsewhere == 0) return false;
    }
    const Slot& s = slots_[find(sender, receiver, tag)];
    return s.receiver >= 0 && s.sends == sends;
}

uint64_t Matcher::pop(Queue& q) {
    const uint32_t n = q.head;
    const uint64_t h = nodes_[n].handle;
    q.head = nodes_[n].next;
    nodes_[n].next = free_;
    free_ = n;
    --waiting_;
    return h;
}

void Matcher::push(Queue& q, uint64_t handle) {
    uint32_t n = free_;
    if (n != kNil) {
        free_ = nodes_[n].next;
        nodes_[n] = Node{handle, kNil};
    } else {
        n = static_cast<uint32_t>(nodes_.size());
        nodes_.push_back(Node{handle, kNil});
    }
    ++waiting_;
    if (q.head == kNil) q.head = n;
    else nodes_[q.tail].next = n;
    q.tail = n;
}

std::optional<uint64_t> Matcher::post(bool is_send, int32_t sender, int32_t receiver, int32_t tag, uint64_t handle) {
    if (receiver >= 0 && static_cast<size_t>(receiver) < lines_.size())
        return post_in_line(lines_[receiver], is_send, sender, tag, handle);
    return post_shared(is_send, sender, receiver, tag, handle, nullptr);
}

std::optional<uint64_t> Matcher::post_in_line(Line& l, bool is_send, int32_t sender, int32_t tag, uint64_t handle) {
    int free_entry = -1;
    for (int i = 0; i < kInLine; ++i) {
        const uint8_t bit = static_cast<uint8_t>(1u << i);
        if (!(l.used & bit)) {
            if (free_entry < 0) free_entry = i;
            continue;
        }
        Entry& e = l.e[i];
        if (e.sender != sender || e.tag != tag) continue;
        if (((l.sends & bit) != 0) == is_send) {  // the same side waits already: append
            push(e.q, handle);
            return std::nullopt;
        }
        const uint64_t partner = pop(e.q);  // the oldest partner waits: match it
        if (e.q.head == kNil) l.used &= static_cast<uint8_t>(~bit);
        return partner;
    }
    const int32_t receiver = static_cast<int32_t>(&l - lines_.data());
    if (l.elsewhere > 0 || free_entry < 0) return post_shared(is_send, sender, receiver, tag, handle, &l);
    add_in_line(l, free_entry, is_send, sender, tag, handle);
    return std::nullopt;
}

void Matcher::add_in_line(Line& l, int i, bool is_send, int32_t sender, int32_t tag, uint64_t handle) {
    const uint8_t bit = static_cast<uint8_t>(1u << i);
    l.used |= bit;
    l.sends = static_cast<uint8_t>(is_send ? l.sends | bit : l.sends & ~bit);
    l.e[i] = Entry{sender, tag, Queue{}};
    push(l.e[i].q, handle);
}

// The shared table; `line` is the receiver's line when it has one (its count of channels here is kept). A new
// channel goes here only when the line has no free entry or the receiver has channels here already; a channel of
// such a receiver that is not here may still be created in a free entry of the line.
std::optional<uint64_t> Matcher::post_shared(bool is_send, int32_t sender, int32_t receiver, int32_t tag,
                                             uint64_t handle, Line* line) {
    const size_t i = find(sender, receiver, tag);
    Slot& s = slots_[i];
    if (s.receiver >= 0 && s.sends != is_send) {  // the oldest partner waits: match it
        const uint64_t partner = pop(s.q);
        if (s.q.head == kNil) {
            erase(i);
            if (line) --line->elsewhere;
        }
        return partner;
    }
    if (s.receiver >= 0) {  // same side waits already: append
        push(s.q, handle);
        return std::nullopt;
    }
    if (line && line->used != (1u << kInLine) - 1) {  // a new channel, and its receiver's line has room
        add_in_line(*line, __builtin_ctz(~line->used & ((1u << kInLine) - 1)), is_send, sender, tag, handle);
        return std::nullopt;
    }
    s = Slot{receiver, sender, tag, Queue{}, is_send};
    push(s.q, handle);
    if (line) ++line->elsewhere;
    if (++used_ * 2 > slots_.size()) grow();
    return std::nullopt;
}

size_t Matcher::find(int32_t sender, int32_t receiver, int32_t tag) const {
    const size_t mask = slots_.size() - 1;
    size_t i = mix(receiver, sender, tag) & mask;
    while (slots_[i].receiver >= 0 &&
           !(slots_[i].receiver == receiver && slots_[i].sender == sender && slots_[i].tag == tag))
        i = (i + 1) & mask;
    return i;
}

// Backward-shift deletion keeps every key reachable from its home slot without tombstones.
void Matcher::erase(size_t i) {
    const size_t mask = slots_.size() - 1;
    slots_[i].receiver = -1;
    --used_;
    size_t j = i;
    while (true) {
        j = (j + 1) & mask;
        if (slots_[j].receiver < 0) return;
        const size_t home = mix(slots_[j].receiver, slots_[j].sender, slots_[j].tag) & mask;
        const bool movable = (j > i) ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            slots_[i] = slots_[j];
            slots_[j].receiver = -1;
            i = j;
        }
    }
}

void Matcher::grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
        if (s.receiver >= 0) slots_[find(s.sender, s.receiver, s.tag)] = s;
}

std::optional<Matcher::Waiting> Matcher::any_waiting() const {
    for (size_t r = 0; r < lines_.size(); ++r)
        for (int i = 0; i < kInLine; ++i)
            if (lines_[r].used & (1u << i)) {
                const Entry& e = lines_[r].e[i];
                return Waiting{(lines_[r].sends & (1u << i)) != 0, e.sender, static_cast<int32_t>(r), e.tag,
                               nodes_[e.q.head].handle};
            }
    for (const Slot& s : slots_)
        if (s.receiver >= 0) return Waiting{s.sends, s.sender, s.receiver, s.tag, nodes_[s.q.head].handle};
    return std::nullopt;
}

// ------------------------------------------------------------------------------------------- barriers
uint32_t BarrierOrdinals::of(const Schedule& s, int r, uint32_t k) {
    if (ops_.empty()) ops_.resize(static_cast<size_t>(s.ranks()));
    std::vector<uint32_t>& mine = ops_[r];
    if (mine.empty()) {
        const auto& ops = s.program(r).ops;
        for (uint32_t j = 0; j < ops.size(); ++j)
            if (ops[j].kind == OpKind::barrier) mine.push_back(j);
    }
    return static_cast<uint32_t>(std::lower_bound(mine.begin(), mine.end(), k) - mine.begin());
}

// ------------------------------------------------------------------------------------------- static matching
namespace {

// The indices of `prog`'s ops of one kind (send or recv), sorted by (peer, tag, index): each channel is one run,
// in program order.
std::vector<uint32_t> sorted_ops(const RankProgram& prog, OpKind kind) {
    std::vector<uint32_t> order;
    for (uint32_t k = 0; k < prog.ops.size(); ++k)
        if (prog.ops[k].kind == kind) order.push_back(k);
    auto key = [&](uint32_t k) { return std::make_tuple(prog.ops[k].peer, prog.ops[k].aux, k); };
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
    return order;
}

}  // namespace

std::vector<size_t> op_offsets(const Schedule& s) {
    std::vector<size_t> base(static_cast<size_t>(s.ranks()) + 1, 0);
    for (int r = 0; r < s.ranks(); ++r) base[r + 1] = base[r] + s.num_ops(r);
    return base;
}

// Senders are visited in increasing rank and each sender's runs in increasing (dst, tag), so every receiver's
// wanted runs come in increasing (src, tag) order: one forward cursor per receiver suffices.
std::vector<uint32_t> match_partners(const Schedule& s, std::span<const size_t> base, CancelPoll* poll) {
    const int P = s.ranks();
    std::vector<std::vector<uint32_t>> recvs(static_cast<size_t>(P));
    for (int r = 0; r < P; ++r) {
        if (poll) poll->tick(s.num_ops(r) + 1);
        recvs[r] = sorted_ops(s.program(r), OpKind::recv);
    }
    std::vector<uint32_t> partner(base[P], kNoPartner), cursor(static_cast<size_t>(P), 0);
    for (int i = 0; i < P; ++i) {
        if (poll) poll->tick(s.num_ops(i) + 1);
        const auto& ops = s.program(i).ops;
        const std::vector<uint32_t> sends = sorted_ops(s.program(i), OpKind::send);
        for (size_t a = 0; a < sends.size();) {
            const int j = ops[sends[a]].peer, tag = ops[sends[a]].aux;
            size_t b = a + 1;
            while (b < sends.size() && ops[sends[b]].peer == j && ops[sends[b]].aux == tag) ++b;
            const auto& rops = s.program(j).ops;
            const std::vector<uint32_t>& rord = recvs[j];
            auto key = [&](uint32_t c) { return std::make_pair(rops[rord[c]].peer, rops[rord[c]].aux); };
            uint32_t& c = cursor[j];
            while (c < rord.size() && key(c) < std::make_pair(i, tag)) ++c;
            for (; a < b && c < rord.size() && key(c) == std::make_pair(i, tag); ++a, ++c) {
                partner[base[i] + sends[a]] = rord[c];
                partner[base[j] + rord[c]] = sends[a];
            }
            a = b;
        }
    }
    return partner;
}

// ------------------------------------------------------------------------------------------- Walk
// Rank 0's program of a symmetric schedule: its sends to j, standing for rank inverse(j)'s sends to rank 0, and its
// recvs from inverse(j) pair up in program order per channel (inverse(j) -> 0, tag).
static std::vector<uint32_t> match_one_rank(const Schedule& s) {
    const RankProgram& p = s.program(0);
    auto channel = [&](uint32_t k) {
        const Op& op = p.ops[k];
        return std::make_tuple(op.kind == OpKind::send ? inverse(s.symmetry, s.ranks(), op.peer) : op.peer, op.aux, k);
    };
    std::vector<uint32_t> sends, recvs;  // each sorted by (channel, index)
    for (uint32_t k = 0; k < p.ops.size(); ++k)
        if (p.ops[k].kind == OpKind::send || p.ops[k].kind == OpKind::recv)
            (p.ops[k].kind == OpKind::send ? sends : recvs).push_back(k);
    auto by_channel = [&](uint32_t a, uint32_t b) { return channel(a) < channel(b); };
    std::sort(sends.begin(), sends.end(), by_channel);
    std::sort(recvs.begin(), recvs.end(), by_channel);
    std::vector<uint32_t> partner(p.ops.size(), kNoPartner);
    for (size_t a = 0, b = 0; a < sends.size() && b < recvs.size();) {
        const auto [qa, ta, ka] = channel(sends[a]);
        const auto [qb, tb, kb] = channel(recvs[b]);
        if (std::tie(qa, ta) < std::tie(qb, tb)) {
            ++a;
        } else if (std::tie(qb, tb) < std::tie(qa, ta)) {
            ++b;
        } else {
            partner[sends[a]] = recvs[b], partner[recvs[b]] = sends[a];
            ++a, ++b;
        }
    }
    return partner;
}

Walk::Walk(const Schedule& s, const Job& job)
    : s_(s), poll_(job), P_(s.ranks()), one_rank_(!s.whole()), barriers_(s) {
    if (one_rank_ && (s.only_rank() != 0 || s.symmetry == Symmetry::none ||
                      (s.symmetry == Symmetry::xor_ && !std::has_single_bit(static_cast<unsigned>(P_)))))
        throw Error("walk: " + s.subject() + " holds rank " + std::to_string(s.only_rank()) +
                    "'s program alone; a walk needs every rank's, or rank 0's of a schedule that declares a symmetry");
    if (one_rank_) {
        offsets_ = {0, s.num_ops(0)};
        partner_ = match_one_rank(s);
    } else {
        offsets_ = op_offsets(s);
        partner_ = match_partners(s, offsets_, &poll_);
    }
    state_.assign(offsets_.back(), kWaiting);
    const int n = one_rank_ ? 1 : P_;
    cur_.reserve(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) cur_.emplace_back(s.program(r));
}

bool Walk::run(WalkVisitor& v) {
    for (int r = 0; r < programs(); ++r) {
        if (cur_[r].size() == 0) continue;
        made_ready_.clear();
        cur_[r].start(made_ready_);
        v.open(r, cur_[r].group_begin(), cur_[r].group_end());
        for (uint32_t k : made_ready_) ready_.emplace_back(r, k);
    }
    while (!ready_.empty()) {
        poll_.tick();
        const auto [r, k] = ready_.front();
        ready_.pop_front();
        post(v, r, k);
    }
    return !first_incomplete();
}

void Walk::post(WalkVisitor& v, int r, uint32_t k) {
    state_[at(r, k)] = kPosted;
    v.post(r, k);
    const Op& op = s_.program(r).ops[k];
    switch (op.kind) {
        case OpKind::send:
        case OpKind::recv: {
            const uint32_t p = partner_[at(r, k)];
            if (p == kNoPartner || state_[at(program_of(op.peer), p)] != kPosted) return;
            const bool send = op.kind == OpKind::send;
            const int sr = send ? r : program_of(op.peer), rr = send ? program_of(op.peer) : r;
            const uint32_t sk = send ? k : p, rk = send ? p : k;
            v.match(sr, sk, rr, rk);
            complete(v, sr, sk);
            complete(v, rr, rk);
            return;
        }
        case OpKind::barrier: {
            if (one_rank_) {
                const std::pair<int, uint32_t> all[]{{r, k}};
                v.barrier(all);
                return complete(v, r, k);
            }
            const auto met = barriers_.post(r, k);
            if (!met) return;
            v.barrier(met->ops);
            for (const auto& [q, j] : met->ops) complete(v, q, j);
            return;
        }
        default: complete(v, r, k);
    }
}

void Walk::complete(WalkVisitor& v, int r, uint32_t k) {
    state_[at(r, k)] = kDone;
    RankCursor& c = cur_[r];
    const uint32_t begin = c.group_begin();
    made_ready_.clear();
    c.complete(k, made_ready_);
    if (c.group_begin() != begin) v.open(r, c.group_begin(), c.group_end());
    for (uint32_t x : made_ready_) ready_.emplace_back(r, x);
}

std::optional<std::pair<int, uint32_t>> Walk::first_incomplete() const {
    for (int r = 0; r < programs(); ++r)
        if (!cur_[r].finished())
            for (uint32_t k = 0; k < s_.num_ops(r); ++k)
                if (!done(r, k)) return std::make_pair(r, k);
    return std::nullopt;
}

std::pair<int, uint32_t> Walk::waits_for(int r, uint32_t k) const {
    const RankProgram& p = s_.program(r);
    const Op& op = p.ops[k];
    if (posted(r, k)) {
        if (op.kind == OpKind::barrier)
            for (int q = 0; q < programs(); ++q)
                for (uint32_t j = 0; j < s_.num_ops(q); ++j)
                    if (s_.program(q).ops[j].kind == OpKind::barrier && !posted(q, j)) return {q, j};
        const uint32_t p = partner(r, k);
        return p == kNoPartner ? std::make_pair(r, k) : std::make_pair(program_of(op.peer), p);
    }
    for (uint32_t d : op_deps(p, k))
        if (!done(r, d)) return {r, d};
    const uint32_t begin = group_begin(p, k);
    if (begin > 0)
        for (uint32_t j = group_begin(p, begin - 1); j < begin; ++j)
            if (!done(r, j)) return {r, j};
    return {r, k};
}

}  // namespace collplan
