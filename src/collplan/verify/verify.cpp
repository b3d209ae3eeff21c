// The symbolic verifier. See verify.hpp for what it checks.
//
// How: (1) match every send with its recv by channel order; (2) run the schedule as a worklist: an op is
// posted when its prerequisites (earlier groups, explicit deps) have completed; local ops complete at once;
// a send/recv pair completes when both are posted (the rendezvous worst case: a send never completes
// before its receive is posted) -- both are the walker's (schedule/walk.hpp); (3) carry symbolic data through
// every op; (4) check the final state.
// Races are checked separately on each rank's happens-before order. Anything left incomplete is a deadlock,
// reported with the wait cycle. (5) allreduce: compare the expressions every rank ends with (rank-consistency).
#include "collplan/verify/verify.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "collplan/schedule/reduction.hpp"
#include "collplan/schedule/symmetry.hpp"
#include "collplan/schedule/walk.hpp"
#include "collplan/verify/rank_sets.hpp"

namespace collplan {
namespace {

constexpr int64_t kUndefined = -1;

struct Failure {
    VerifyResult result;
};

[[noreturn]] void fail(const std::string& reason, int rank, int op, const std::string& message) {
    throw Failure{VerifyResult{false, reason, message, rank, op}};
}

// ---------------------------------------------------------------------------------------------------------
// Hash-consed allreduce expressions (verify.hpp): one id per distinct expression, so two blocks hold the same
// expression exactly when their ids are equal. Ids below P * S are the leaves, x_i of segment s = s * P + i;
// the others index nodes_, each combine(left, right) or inverse(dst, src) packed in 8 bytes, found again through
// an open-addressing table of ids (linear probing, at most half full): 16-24 bytes per distinct expression.
class Exprs {
public:
    Exprs(int ranks, uint32_t segments) : P_(static_cast<uint32_t>(ranks)), leaves_(P_ * segments) {
        if (static_cast<uint64_t>(P_) * segments >= kMarker)
            throw Error("allreduce with " + std::to_string(P_) + " ranks x " + std::to_string(segments) +
                        " segments is too large for the verifier (allowed: fewer than 2^31 leaves)");
    }
    uint32_t leaf(uint32_t segment, int rank) const { return segment * P_ + static_cast<uint32_t>(rank); }
    uint32_t combine(uint32_t left, uint32_t right) { return intern(pack(false, left, right)); }
    uint32_t inverse(uint32_t dst, uint32_t src) { return intern(pack(true, dst, src)); }

    // "((x0+x1)+x2)"; an inverse is "(a-b)". Longer than `limit` characters: cut there and "..." appended.
    std::string render(uint32_t id, size_t limit) const {
        std::string out;
        std::vector<uint32_t> todo{id};  // ids and the markers for ')', '+', '-', last first
        while (!todo.empty() && out.size() <= limit) {
            const uint32_t x = todo.back();
            todo.pop_back();
            if (x >= kMarker) {
                out += x == kClose ? ')' : x == kPlus ? '+' : '-';
            } else if (x < leaves_) {
                out += "x" + std::to_string(x % P_);
            } else {
                const uint64_t n = nodes_[x - leaves_];
                const auto left = static_cast<uint32_t>(n >> 31 & kIdMask), right = static_cast<uint32_t>(n & kIdMask);
                out += '(';
                todo.insert(todo.end(), {kClose, right, n >> 62 ? kMinus : kPlus, left});
            }
        }
        if (out.size() > limit) out.resize(limit), out += "...";
        return out;
    }

private:
    static constexpr uint32_t kMarker = 0x7ffffff0u, kClose = kMarker, kPlus = kMarker + 1, kMinus = kMarker + 2;
    static constexpr uint64_t kIdMask = 0x7fffffffu;  // ids < 2^31
    static constexpr uint32_t kEmpty = ~0u;

    static uint64_t pack(bool inverse, uint32_t left, uint32_t right) {
        return (uint64_t{inverse} << 62) | (uint64_t{left} << 31) | right;
    }
    uint32_t intern(uint64_t node) {
        if (2 * (nodes_.size() + 1) > table_.size()) grow();
        size_t i = slot_of(node);
        for (; table_[i] != kEmpty; i = (i + 1) & (table_.size() - 1))
            if (nodes_[table_[i] - leaves_] == node) return table_[i];
        const uint32_t id = leaves_ + static_cast<uint32_t>(nodes_.size());
        if (id >= kMarker) throw Error("allreduce schedule with " + std::to_string(id) + " distinct expressions is too large for the verifier (allowed: fewer than 2^31)");
        nodes_.push_back(node);
        return table_[i] = id;
    }
    size_t slot_of(uint64_t node) const { return (node * 0x9e3779b97f4a7c15ull) >> (64 - std::countr_zero(table_.size())); }
    void grow() {
        table_.assign(std::max<size_t>(64, 2 * table_.size()), kEmpty);
        for (size_t k = 0; k < nodes_.size(); ++k) {
            size_t i = slot_of(nodes_[k]);
            while (table_[i] != kEmpty) i = (i + 1) & (table_.size() - 1);
            table_[i] = leaves_ + static_cast<uint32_t>(k);
        }
    }
    uint32_t P_, leaves_;
    std::vector<uint64_t> nodes_;  // id - leaves_ -> (inverse, left, right)
    std::vector<uint32_t> table_;  // ids, at the slot of their node
};

// ---------------------------------------------------------------------------------------------------------
// Symbolic contents of every block of every buffer of every rank, and of messages in flight: one token per block,
// the item it holds (collective.hpp). Reductions: the item is a segment, plus the set of contributions the block
// holds (a RankSets id) and the id of its expression (Exprs). Collectives with counts (alltoallv, allgatherv,
// reduce_scatter): also the units of its item each block holds (a block may travel in pieces; docs/schedule.md).
class Store {
public:
    Store(const Schedule& s, int ranks) : P_(ranks) {
        for (Buf b : {Buf::in, Buf::out, Buf::tmp}) per_rank_[static_cast<int>(b)] = s.blocks(b);
        stride_ = per_rank_[0] + per_rank_[1] + per_rank_[2];
        tok_.assign(static_cast<size_t>(P_) * stride_, kUndefined);
        if (describe(s.collective()).counts != Counts::none) held_.assign(tok_.size(), 0);
        if (describe(s.collective()).reduction) expr_.assign(tok_.size(), 0), set_.assign(tok_.size(), RankSets::kEmpty);
    }
    size_t slot(int rank, Buf b, uint32_t block) const {
        size_t base = static_cast<size_t>(rank) * stride_;
        for (int i = 0; i < static_cast<int>(b); ++i) base += per_rank_[i];
        return base + block;
    }
    int64_t& tok(size_t slot) { return tok_[slot]; }
    bool pieces() const { return !held_.empty(); }
    uint64_t& held(size_t slot) { return held_[slot]; }
    bool exprs() const { return !expr_.empty(); }
    uint32_t& expr(size_t slot) { return expr_[slot]; }
    uint32_t& set(size_t slot) { return set_[slot]; }

private:
    int P_;
    uint32_t per_rank_[3]{};
    size_t stride_ = 0;
    std::vector<int64_t> tok_;
    std::vector<uint64_t> held_;  // collectives with counts: units of the item held
    std::vector<uint32_t> expr_;  // reductions: expression ids (Exprs)
    std::vector<uint32_t> set_;   // reductions: the contributions held (RankSets ids)
};

// A snapshot of blocks (a message's payload or a copy's source). The verifier reuses them: read() refills one
// without giving back its memory.
struct Payload {
    std::vector<int64_t> tok;
    std::vector<uint64_t> held;  // collectives with counts: units of each block
    std::vector<uint32_t> expr;  // reductions: expression id of each block
    std::vector<uint32_t> set;   // reductions: contributions of each block (RankSets id)
};

std::string block_name(const Schedule& s, int64_t tok) { return item_name(s.collective(), s.shape(), tok); }

std::string seg_text(Buf b, uint32_t block) { return std::string(to_string(b)) + "[" + std::to_string(block) + "]"; }

// ---------------------------------------------------------------------------------------------------------
class Verifier final : public WalkVisitor {
public:
    Verifier(const Schedule& s, const VerifyOptions& o, const Job& job)
        : s_(s), opt_(o), job_(job), poll_(job), P_(s.ranks()), walked_(s.whole() ? P_ : 1),
          info_(describe(s.collective())), store_(s, walked_),
          exprs_(P_, info_.reduction ? static_cast<uint32_t>(item_count(s.collective(), s.shape())) : 0), sets_(P_) {
        for (Buf b : {Buf::in, Buf::out}) {
            const int i = static_cast<int>(b);
            root_blocks_[i] = buffer_blocks(s.collective(), s.shape(), s.root, b);
            other_blocks_[i] = P_ > 1 ? buffer_blocks(s.collective(), s.shape(), s.root == 0 ? 1 : 0, b) : root_blocks_[i];
        }
    }

    void run() {
        check_declarations();
        walk_.emplace(s_, job_);
        check_matching();
        if (opt_.check_races)
            for (int r = 0; r < walked_; ++r) poll_.tick(s_.num_ops(r) + 1), check_races(r);
        init_data();
        execute();
        check_deadlock();
        check_final();
        if (info_.reduction) check_consistency();
    }

    const VerifyResult& result() const { return result_; }

private:
    struct RankState {
        uint32_t group_begin = 0, prev_group_begin = 0;  // the open group's first op, the previous group's
        std::vector<uint32_t> knows;  // barrier collective: per op, the ranks known to have started (RankSets id)
    };

    const Schedule& s_;
    VerifyOptions opt_;
    const Job& job_;
    CancelPoll poll_;
    int P_;
    int walked_;  // the programs walked: P, or 1 when rank 0's stands for every rank (schedule/walk.hpp: Walk)
    const CollectiveInfo& info_;
    uint32_t root_blocks_[2]{}, other_blocks_[2]{};  // in/out blocks the root and the other ranks have
    Store store_;
    Exprs exprs_;
    RankSets sets_;
    VerifyResult result_;
    std::vector<RankState> st_;
    std::optional<Walk> walk_;               // readiness and matching
    std::vector<Payload> inflight_;          // payload of posted sends, by slot id
    Payload src_, dst_;                      // a copy's or reduce's operands
    std::unordered_map<uint64_t, uint32_t> inflight_slot_;  // posted, unmatched sends (rank << 32 | op): slot in inflight_
    std::vector<uint32_t> free_slots_;

    // -------------------------------------------------------------------------------- declarations
    void check_declarations() {
        bool uses_inverse = false;
        for (int r = 0; r < walked_; ++r)
            for (uint32_t i = 0; i < s_.num_ops(r); ++i) {
                const Op& op = s_.program(r).ops[i];
                if (op.kind == OpKind::reduce && !info_.reduction)
                    fail("reduce-outside-reduction", r, i, describe_op(s_, r, i) + ": reduce ops belong only to reduction collectives, not " + std::string(info_.name));
                if (op.kind == OpKind::reduce && (op.flags & opflag::inverse)) uses_inverse = true;
            }
        if (uses_inverse && !s_.needs_inverse)
            fail("undeclared-inverse", -1, -1, "the schedule uses inverse reductions but does not declare needs_inverse");
        if (s_.counts.size() != counts_size(s_.collective(), P_))
            fail(info_.counts == Counts::matrix ? "bad-matrix" : "bad-counts", -1, -1,
                 std::string(info_.name) + " schedule with " + std::to_string(s_.counts.size()) + " counts (allowed: " +
                     counts_rule(s_.collective(), P_) + ")");
        if (s_.root < 0 || s_.root >= P_ || (!info_.rooted && s_.root != 0))
            fail("bad-root", -1, -1, std::string(info_.name) + " schedule with root " + std::to_string(s_.root));
        try {
            check_blocks(s_.collective(), P_, s_.blocks(Buf::in), s_.blocks(Buf::out));
        } catch (const Error& e) {
            fail("bad-buffers", -1, -1, e.what());
        }
    }

    // -------------------------------------------------------------------------------- matching
    // The k-th send i->j with tag t matches the k-th recv at j from i with tag t (the walker's match_partners).
    // Reported in channel order: per sender, the first send in (peer, tag, op) order without a recv or with a
    // recv of another size; then unequal barrier counts; then, per receiver, the first recv without a send.
    void check_matching() {
        using Key = std::tuple<int32_t, int32_t, uint32_t>;
        const Walk& w = *walk_;
        for (int i = 0; i < walked_; ++i) {
            poll_.tick(s_.num_ops(i) + 1);
            const auto& ops = s_.program(i).ops;
            std::optional<Key> first;
            for (uint32_t k = 0; k < ops.size(); ++k) {
                if (ops[k].kind != OpKind::send) continue;
                const Key key{ops[k].peer, ops[k].tag(), k};
                if (first && *first < key) continue;
                const uint32_t p = w.partner(i, k);
                if (p == kNoPartner || !same_size(i, k, program_of(ops[k].peer), p)) first = key;
            }
            if (!first) continue;
            const auto [j, tag, k] = *first;
            if (w.partner(i, k) == kNoPartner)
                fail("unmatched-send", i, k, describe_op(s_, i, k) + " has no matching recv on rank " + std::to_string(j));
            check_sizes(i, k, program_of(j), w.partner(i, k));
        }
        check_barrier_counts();
        for (int j = 0; j < walked_; ++j) {
            const auto& ops = s_.program(j).ops;
            std::optional<Key> first;
            for (uint32_t k = 0; k < ops.size(); ++k)
                if (ops[k].kind == OpKind::recv && w.partner(j, k) == kNoPartner) {
                    const Key key{ops[k].peer, ops[k].tag(), k};
                    if (!first || key < *first) first = key;
                }
            if (first)
                fail("unmatched-recv", j, std::get<2>(*first), describe_op(s_, j, std::get<2>(*first)) +
                     " has no matching send on rank " + std::to_string(std::get<0>(*first)));
        }
    }

    // The k-th barrier of every rank meets the k-th of every other: all ranks need the same number.
    void check_barrier_counts() {
        std::vector<uint32_t> n(walked_, 0);
        for (int r = 0; r < walked_; ++r)
            for (const Op& op : s_.program(r).ops) n[r] += op.kind == OpKind::barrier;
        for (int r = 1; r < walked_; ++r)
            if (n[r] != n[0])
                fail("unmatched-barrier", r, -1, "rank " + std::to_string(r) + " has " + std::to_string(n[r]) +
                     " barrier ops but rank 0 has " + std::to_string(n[0]) + " (every rank must join every barrier)");
    }

    // The walked program that holds a peer's op: the peer's, or rank 0's standing for it.
    int program_of(int peer) const { return walked_ == P_ ? peer : 0; }

    bool same_size(int i, uint32_t si, int j, uint32_t ri) const {
        const OpView a = s_.op(i, si), b = s_.op(j, ri);
        return a.units == b.units && block_count(a.segs) == block_count(b.segs);
    }

    void check_sizes(int i, uint32_t si, int j, uint32_t ri) {
        const OpView a = s_.op(i, si), b = s_.op(j, ri);
        if (!same_size(i, si, j, ri))
            fail("size-mismatch", i, si, describe_op(s_, i, si) + " sends " + std::to_string(block_count(a.segs)) + " blocks (" +
                 std::to_string(a.units) + " units) but " + describe_op(s_, j, ri) + " expects " +
                 std::to_string(block_count(b.segs)) + " blocks (" + std::to_string(b.units) + " units)");
    }

    // -------------------------------------------------------------------------------- races
    // Two ops of a rank conflict when they touch a common block and one writes it. They are ordered when they
    // lie in different groups or one reaches the other through explicit deps.
    struct Access {
        uint8_t buf;
        uint32_t lo, hi;  // [lo, hi)
        uint32_t op;
        bool write;
    };

    static void add_accesses(std::vector<Access>& acc, std::span<const Segment> segs, uint32_t op, bool write) {
        for (const Segment& sg : segs)
            if (sg.count) acc.push_back({static_cast<uint8_t>(sg.buf()), sg.first(), sg.first() + sg.count, op, write});
    }

    // Is `from` a transitive explicit dep of `to`? (Both in the group that starts at `begin`.)
    bool reaches(int r, uint32_t from, uint32_t to, uint32_t begin) const {
        std::vector<uint32_t> stack{to};
        std::set<uint32_t> seen;
        while (!stack.empty()) {
            uint32_t x = stack.back();
            stack.pop_back();
            for (uint32_t d : s_.op(r, x).deps) {
                if (d == from) return true;
                if (d > from && d >= begin && seen.insert(d).second) stack.push_back(d);
            }
        }
        return false;
    }

    void check_races(int r) {
        const RankProgram& p = s_.program(r);
        for (uint32_t begin = 0, end; begin < p.ops.size(); begin = end) {
            end = group_end(p, begin);
            std::vector<Access> acc;
            for (uint32_t i = begin; i < end; ++i) {
                const OpView v = s_.op(r, i);
                add_accesses(acc, v.src(), i, false);
                add_accesses(acc, v.dst(), i, true);
            }
            if (acc.size() < 2) continue;
            std::sort(acc.begin(), acc.end(), [](const Access& a, const Access& b) {
                return std::tie(a.buf, a.lo, a.op) < std::tie(b.buf, b.lo, b.op);
            });
            std::vector<const Access*> active;
            for (const Access& a : acc) {
                std::erase_if(active, [&](const Access* x) { return x->buf != a.buf || x->hi <= a.lo; });
                for (const Access* x : active)
                    if ((x->write || a.write) && x->op != a.op) race_pair(r, *x, a, begin);
                active.push_back(&a);
            }
        }
    }

    void race_pair(int r, const Access& x, const Access& y, uint32_t begin) {
        const uint32_t a = std::min(x.op, y.op), b = std::max(x.op, y.op);
        if (reaches(r, a, b, begin)) return;
        const uint32_t block = std::max(x.lo, y.lo);
        fail("race", r, static_cast<int>(b), describe_op(s_, r, a) + " and " + describe_op(s_, r, b) + " may run concurrently and both touch " +
             seg_text(static_cast<Buf>(x.buf), block) + " (one writes it); add a dependency or a fence");
    }

    // -------------------------------------------------------------------------------- data
    void init_data() {
        const CollShape sh = s_.shape();
        for (int r = 0; r < walked_; ++r)
            for (Buf b : {Buf::in, Buf::out})
                for (uint32_t k = 0; k < has_blocks(r, b); ++k) {
                    const int64_t item = initial_item(s_.collective(), sh, r, b, k);
                    if (item == kNoItem) continue;
                    const size_t sl = store_.slot(r, b, k);
                    store_.tok(sl) = item;
                    if (store_.pieces()) store_.held(sl) = s_.counts[static_cast<size_t>(item)];
                    if (store_.exprs()) {
                        store_.set(sl) = sets_.single(static_cast<uint32_t>(r));
                        store_.expr(sl) = exprs_.leaf(static_cast<uint32_t>(item), r);
                    }
                }
        st_.resize(static_cast<size_t>(walked_));
        if (s_.collective() == Collective::barrier)
            for (int r = 0; r < walked_; ++r) st_[r].knows.resize(s_.num_ops(r), RankSets::kEmpty);
    }

    // Blocks of in/out that rank r has (the root of a rooted collective may differ from the others).
    uint32_t has_blocks(int r, Buf b) const {
        if (b == Buf::tmp) return s_.blocks(b);
        return r == s_.root ? root_blocks_[static_cast<int>(b)] : other_blocks_[static_cast<int>(b)];
    }

    void check_has(int r, uint32_t op, const Segment& sg) const {
        if (sg.buf() != Buf::tmp && sg.first() + uint64_t{sg.count} > has_blocks(r, sg.buf()))
            fail("no-such-block", r, op, describe_op(s_, r, op) + " uses " + seg_text(sg.buf(), sg.first() + sg.count - 1) +
                 ", but rank " + std::to_string(r) + " of " + std::string(info_.name) + " has " +
                 std::to_string(has_blocks(r, sg.buf())) + " " + to_string(sg.buf()) + " blocks");
    }

    void read(int r, uint32_t op, std::span<const Segment> segs, Payload& p) {
        p.tok.clear(), p.held.clear(), p.expr.clear(), p.set.clear();
        for (const Segment& sg : segs) {
            if (info_.rooted) check_has(r, op, sg);
            for (uint32_t k = 0; k < sg.count; ++k) {
                const size_t sl = store_.slot(r, sg.buf(), sg.first() + k);
                if (store_.tok(sl) == kUndefined)
                    fail("read-before-write", r, op, describe_op(s_, r, op) + " reads " + seg_text(sg.buf(), sg.first() + k) + ", which holds no data yet");
                p.tok.push_back(store_.tok(sl));
                if (store_.pieces()) p.held.push_back(store_.held(sl));
                if (store_.exprs()) p.expr.push_back(store_.expr(sl)), p.set.push_back(store_.set(sl));
            }
        }
    }

    // Counts: a piece of a block adds to the same block's earlier pieces; anything else overwrites.
    void write(int r, uint32_t op, std::span<const Segment> segs, const Payload& p) {
        size_t k = 0;
        for (const Segment& sg : segs) {
            if (info_.rooted) check_has(r, op, sg);
            for (uint32_t b = 0; b < sg.count; ++b, ++k) {
                const size_t sl = store_.slot(r, sg.buf(), sg.first() + b);
                if (store_.pieces()) write_units(r, op, sl, sg.buf(), sg.first() + b, p.tok[k], p.held[k]);
                store_.tok(sl) = p.tok[k];
                if (store_.exprs()) store_.expr(sl) = p.expr[k], store_.set(sl) = p.set[k];
            }
        }
    }

    void write_units(int r, uint32_t op, size_t sl, Buf buf, uint32_t block, int64_t tok, uint64_t units) {
        const uint64_t full = s_.counts[static_cast<size_t>(tok)];
        const bool adds = store_.tok(sl) == tok && store_.held(sl) < full && units < full;
        store_.held(sl) = adds ? store_.held(sl) + units : units;
        if (store_.held(sl) > full)
            fail("size-mismatch", r, op, describe_op(s_, r, op) + ": pieces of " + block_name(s_, tok) + " in " + seg_text(buf, block) +
                 " add up to " + std::to_string(store_.held(sl)) + " units, more than its " + std::to_string(full));
    }

    uint64_t payload_units(const Payload& p) const {
        if (!store_.pieces()) return p.tok.size();
        uint64_t u = 0;
        for (uint64_t h : p.held) u += h;
        return u;
    }

    // dst_ becomes the result block by block: its contributions, its expression.
    void reduce(int r, uint32_t i, const OpView& v) {
        read(r, i, v.src(), src_);
        read(r, i, v.dst(), dst_);
        for (size_t k = 0; k < src_.tok.size(); ++k) {
            if (src_.tok[k] != dst_.tok[k])
                fail("segment-mismatch", r, i, describe_op(s_, r, i) + " combines segment " + std::to_string(src_.tok[k]) + " with segment " + std::to_string(dst_.tok[k]));
            if (store_.pieces() && src_.held[k] != dst_.held[k])
                fail("size-mismatch", r, i, describe_op(s_, r, i) + " combines " + std::to_string(src_.held[k]) + " units of segment " +
                     std::to_string(src_.tok[k]) + " with " + std::to_string(dst_.held[k]));
            const uint32_t a = src_.set[k], b = dst_.set[k];
            dst_.expr[k] = combined(v.op.flags, src_.expr[k], dst_.expr[k]);
            uint32_t x = RankSets::kNone;
            if (v.op.flags & opflag::inverse) {
                dst_.set[k] = sets_.remove(b, a, &x);
                if (x != RankSets::kNone)
                    fail("inverse-of-absent", r, i, describe_op(s_, r, i) + " takes out x_" + std::to_string(x) + " of segment " + std::to_string(src_.tok[k]) + ", which the destination does not hold");
                continue;
            }
            dst_.set[k] = sets_.unite(a, b, opt_.idempotent ? nullptr : &x);
            if (x != RankSets::kNone)
                fail("double-count", r, i, describe_op(s_, r, i) + ": contribution x_" + std::to_string(x) + " of segment " + std::to_string(src_.tok[k]) + " would be counted twice");
            if (!opt_.commutative) check_order(r, i, a, b, (v.op.flags & opflag::reverse) != 0);
        }
        write(r, i, v.dst(), dst_);
    }

    // The expression a reduce leaves in its destination: src (+) dst, dst (+) src (reverse) or dst (-) src.
    uint32_t combined(uint8_t flags, uint32_t src, uint32_t dst) {
        if (flags & opflag::inverse) return exprs_.inverse(dst, src);
        return flags & opflag::reverse ? exprs_.combine(dst, src) : exprs_.combine(src, dst);
    }

    // Non-commutative: left (+) right is in rank order only if left is an interval directly before right.
    void check_order(int r, uint32_t i, uint32_t src, uint32_t dst, bool reverse) {
        auto interval = [&](uint32_t x, int64_t& lo, int64_t& hi) {  // [lo, hi] spans the set; is it all of it?
            const auto R = sets_.ranges(x);
            lo = R.empty() ? -1 : R.front().lo, hi = R.empty() ? -1 : int64_t{R.back().hi} - 1;
            return R.size() == 1;
        };
        int64_t a0, a1, b0, b1;
        const bool ok_a = interval(reverse ? dst : src, a0, a1), ok_b = interval(reverse ? src : dst, b0, b1);
        if (!ok_a || !ok_b || a1 + 1 != b0)
            fail("order", r, i, describe_op(s_, r, i) + " combines x_" + std::to_string(a0) + "..x_" + std::to_string(a1) +
                 " (left) with x_" + std::to_string(b0) + "..x_" + std::to_string(b1) + " (right): not in rank order for a non-commutative operation");
    }

    // -------------------------------------------------------------------------------- execution
    // The walk decides when each op is posted and completes; the verifier carries the data (WalkVisitor).
    void execute() {
        walk_->run(*this);
    }

    void open(int r, uint32_t begin, uint32_t) override {
        st_[r].prev_group_begin = st_[r].group_begin;
        st_[r].group_begin = begin;
    }

    void post(int r, uint32_t i) override {
        RankState& rs = st_[r];
        const OpView v = s_.op(r, i);
        if (!rs.knows.empty()) rs.knows[i] = prerequisite_knowledge(r, i);
        switch (v.op.kind) {
            case OpKind::copy: read(r, i, v.src(), src_), write(r, i, v.dst(), src_); break;
            case OpKind::reduce: reduce(r, i, v); break;
            case OpKind::send: {
                const uint32_t slot = free_slot();
                inflight_slot_[uint64_t(r) << 32 | i] = slot;
                Payload& p = inflight_[slot];
                read(r, i, v.src(), p);
                if (store_.pieces() && payload_units(p) != v.units) {
                    // A piece: one block, fewer (but some) of the units it holds.
                    if (p.tok.size() != 1 || v.units == 0 || v.units > p.held[0])
                        fail("size-mismatch", r, i, describe_op(s_, r, i) + " declares " + std::to_string(v.units) + " units but carries " + std::to_string(payload_units(p)));
                    p.held[0] = v.units;
                }
                break;
            }
            default: break;  // calc; a recv completes in match(), a barrier in barrier()
        }
    }

    uint32_t free_slot() {  // a slot of inflight_ for a posted send's payload
        if (free_slots_.empty()) {
            inflight_.emplace_back();
            return static_cast<uint32_t>(inflight_.size() - 1);
        }
        const uint32_t k = free_slots_.back();
        free_slots_.pop_back();
        return k;
    }

    void match(int sr, uint32_t si, int dr, uint32_t di) override {  // both ends posted: the pair completes
        const auto it = inflight_slot_.find(uint64_t(sr) << 32 | si);
        const uint32_t k = it->second;
        inflight_slot_.erase(it);
        uint32_t knew = st_[sr].knows.empty() ? RankSets::kEmpty : st_[sr].knows[si];
        if (walked_ < P_) {  // rank 0's send stands for the peer's: its data moved to the peer's (Walk)
            const int q = s_.program(dr).ops[di].peer;
            for (int64_t& t : inflight_[k].tok) t = moved_item(s_.collective(), s_.shape(), t, s_.symmetry, q);
            knew = sets_.moved(knew, s_.symmetry, static_cast<uint32_t>(q));
        }
        write(dr, di, s_.op(dr, di).dst(), inflight_[k]);
        free_slots_.push_back(k);
        if (!st_[dr].knows.empty()) st_[dr].knows[di] = sets_.unite(st_[dr].knows[di], knew);
    }

    void barrier(std::span<const std::pair<int, uint32_t>> ops) override {
        uint32_t all = RankSets::kEmpty;
        for (auto [q, j] : ops)
            if (!st_[q].knows.empty()) all = sets_.unite(all, st_[q].knows[j]);
        for (auto [q, j] : ops)
            if (!st_[q].knows.empty()) st_[q].knows[j] = all;
    }

    // What op i of rank r knows when it is posted: its rank, and what its prerequisites knew (the ops of the
    // previous group, its explicit deps).
    uint32_t prerequisite_knowledge(int r, uint32_t i) {
        const RankState& rs = st_[r];
        uint32_t k = sets_.single(static_cast<uint32_t>(r));
        if (rs.group_begin > 0)
            for (uint32_t j = rs.prev_group_begin; j < rs.group_begin; ++j) k = sets_.unite(k, rs.knows[j]);
        for (uint32_t d : s_.op(r, i).deps) k = sets_.unite(k, rs.knows[d]);
        return k;
    }

    // -------------------------------------------------------------------------------- deadlock
    // Follow what the first incomplete op waits for (the walker says) until an op repeats: that is the wait cycle.
    void check_deadlock() {
        if (const auto first = walk_->first_incomplete()) report_cycle(first->first, first->second);
    }

    [[noreturn]] void report_cycle(int r, uint32_t i) {
        std::vector<std::pair<int, uint32_t>> path{{r, i}};
        for (int steps = 0; steps < 4 * (P_ + 64); ++steps) {
            auto next = walk_->waits_for(path.back().first, path.back().second);
            const size_t start = static_cast<size_t>(std::find(path.begin(), path.end(), next) - path.begin());
            path.push_back(next);
            if (start + 1 < path.size()) {
                std::string msg = "deadlock: ";
                for (size_t k = start; k < path.size() && k < start + 8; ++k)
                    msg += (k > start ? " waits for " : "") + describe_op(s_, path[k].first, path[k].second);
                if (path.size() - start > 8) msg += " ...";
                fail("deadlock", r, static_cast<int>(i), msg);
            }
        }
        fail("deadlock", r, static_cast<int>(i), "deadlock: " + describe_op(s_, r, i) + " never completes");
    }

    // -------------------------------------------------------------------------------- final state
    // Every out block holds the item the collective requires there (collective.hpp: final_item), whole; for the
    // reductions, with every rank's contribution.
    void check_final() {
        if (s_.collective() == Collective::barrier) return check_barrier();
        const CollShape sh = s_.shape();
        for (int r = 0; r < walked_; ++r)
            for (uint32_t b = 0; b < has_blocks(r, Buf::out); ++b) {
                poll_.tick();
                const int64_t want = final_item(s_.collective(), sh, r, b);
                if (want == kNoItem) continue;
                const size_t sl = store_.slot(r, Buf::out, b);
                const int64_t got = store_.tok(sl);
                const uint64_t full = store_.pieces() ? s_.counts[static_cast<size_t>(want)] : 0;
                if (got == kUndefined && store_.pieces() && full == 0) continue;  // an empty item need not arrive
                if (got != want)
                    fail("wrong-result", r, -1, "rank " + std::to_string(r) + " ends with " + block_name(s_, got) + " in " +
                         seg_text(Buf::out, b) + " instead of " + block_name(s_, want));
                if (store_.pieces() && store_.held(sl) != full)
                    fail("incomplete-block", r, -1, "rank " + std::to_string(r) + " ends with " +
                         std::to_string(store_.held(sl)) + " of the " + std::to_string(full) + " units of " +
                         block_name(s_, want) + " in " + seg_text(Buf::out, b));
                if (store_.exprs())
                    if (const uint32_t q = sets_.first_missing(store_.set(sl)); q != RankSets::kNone)
                        fail("missing-contribution", r, -1, "rank " + std::to_string(r) + " ends without x_" + std::to_string(q) + " in " + seg_text(Buf::out, b));
            }
    }

    // Every out block that must hold item x holds the same expression of x on every rank that has one (the first
    // one found is the reference; the first that differs is the reported difference).
    void check_consistency() {
        constexpr size_t kShown = 100;  // characters of each expression in the message
        constexpr uint32_t kNone = ~0u;
        const CollShape sh = s_.shape();
        std::vector<uint32_t> first_expr(item_count(s_.collective(), sh), kNone);
        std::vector<std::pair<int, uint32_t>> first_at(first_expr.size());
        for (uint32_t b = 0; b < s_.blocks(Buf::out); ++b)  // blocks first: the lowest block that differs is reported
            for (int r = 0; r < P_; ++r) {
                const int64_t item = b < has_blocks(r, Buf::out) ? final_item(s_.collective(), sh, r, b) : kNoItem;
                if (item == kNoItem) continue;
                const uint32_t e = store_.expr(store_.slot(r, Buf::out, b));
                uint32_t& e0 = first_expr[static_cast<size_t>(item)];
                if (e0 == kNone) {
                    e0 = e, first_at[static_cast<size_t>(item)] = {r, b};
                    continue;
                }
                if (e == e0) continue;
                const auto [r0, b0] = first_at[static_cast<size_t>(item)];
                result_.rank_consistent = false;
                result_.consistency = seg_text(Buf::out, b) + ": rank " + std::to_string(r0) + " computes " +
                                      exprs_.render(e0, kShown) + ", rank " + std::to_string(r) + " computes " +
                                      exprs_.render(e, kShown);
                if (b0 != b) result_.consistency = block_name(s_, item) + ": " + result_.consistency;
                if (s_.rank_consistent)
                    throw Failure{VerifyResult{false, "rank-inconsistent", "the schedule declares rank_consistent but " +
                                               result_.consistency, r, -1, false, result_.consistency}};
                return;
            }
    }

    void check_barrier() {
        for (int r = 0; r < walked_; ++r) {
            uint32_t k = sets_.single(static_cast<uint32_t>(r));
            for (uint32_t x : st_[r].knows) k = sets_.unite(k, x);
            if (const uint32_t q = sets_.first_missing(k); q != RankSets::kNone)
                fail("barrier-causality", r, -1, "rank " + std::to_string(r) + " may finish before rank " + std::to_string(q) + " has started");
        }
    }
};

}  // namespace

double verify_memory_bytes(const Schedule& s) {
    const double P = s.whole() ? s.ranks() : 1;  // the programs walked
    const bool reduction = describe(s.collective()).reduction, barrier = s.collective() == Collective::barrier;
    const double blocks = P * (double{s.blocks(Buf::in)} + s.blocks(Buf::out) + s.blocks(Buf::tmp));
    const double per_block = 8 + (reduction ? 8 : 0) + (s.counts.empty() ? 0 : 8);
    // Per op: the walk's partner and state, the partners of recvs while matching; the barrier
    // collective's knowledge (a RankSets id); reductions: at most one new expression per op (Exprs, 24 bytes with
    // its slot), while the rank sets are shared by most blocks (RankSets: intervals, hash-consed).
    const double per_op = 13 + (barrier ? 4 : 0) + (reduction ? 24 : 0);
    // Per rank: its cursor, offset and state, and up to a send in flight (a payload and its slot).
    return blocks * per_block + static_cast<double>(s.total_ops()) * per_op + P * 360;
}

VerifyResult verify(const Schedule& s, const VerifyOptions& opt, const Job& job) {
    if (!s.whole() && (s.only_rank() != 0 || !one_rank_verify_refusal(s).empty()))
        throw Error("verify: " + s.subject() + " holds rank " + std::to_string(s.only_rank()) + "'s program alone (" +
                    (s.only_rank() != 0 ? "only rank 0's can stand for every rank" : one_rank_verify_refusal(s)) +
                    "); verify needs every rank's program");
    job.require_memory(verify_memory_bytes(s), "verify of " + s.subject());
    Verifier v(s, opt, job);
    try {
        v.run();
    } catch (Failure& f) {
        f.result.rank_consistent = f.result.rank_consistent && !describe(s.collective()).reduction;
        f.result.one_rank = !s.whole();
        return f.result;
    }
    // the claim the one-rank estimate relies on (schedule/symmetry.hpp), checked after the data flow so that a
    // broken schedule reports its first violation
    if (s.symmetry != Symmetry::none && s.whole()) {
        std::string why;
        try {
            why = check_symmetry(s, s.symmetry);
        } catch (const Error& e) {
            why = e.what();
        }
        if (!why.empty()) {
            VerifyResult bad{false, "asymmetric", "the schedule declares " + std::string(to_string(s.symmetry)) +
                                                      " symmetry but " + why};
            bad.rank_consistent = !describe(s.collective()).reduction;  // as for every failure
            return bad;
        }
    }
    VerifyResult r = v.result();
    r.one_rank = !s.whole();
    return r;
}

VerifyOptions verify_options_for_op(const std::string& op) {
    const ReductionOp& o = reduction_op(op);
    return VerifyOptions{o.commutative, o.idempotent, true};
}

}  // namespace collplan
