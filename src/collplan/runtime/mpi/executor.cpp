// The MPI executor. See executor.hpp.
#include "collplan/runtime/mpi/executor.hpp"
#include "collplan/runtime/mpi/check.hpp"
#include "collplan/runtime/mpi/datatype.hpp"
#include "collplan/schedule/walk.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <tuple>

namespace collplan::mpi {
namespace {

bool finalized() {
    int f = 0;
    MPI_Finalized(&f);
    return f != 0;
}

template <class T>
void sub(void* dst, const void* src, int n) {
    T* d = static_cast<T*>(dst);
    const T* s = static_cast<const T*>(src);
    for (int i = 0; i < n; ++i) d[i] = static_cast<T>(d[i] - s[i]);
}

// How a blocking wait waits. Open MPI's blocking calls poll (they give the core away only when told to,
// mpi_yield_when_idle): the executor blocks in MPI_Waitall at once, and a group of exactly one send and one recv
// in a blocking call is one MPI_Sendrecv -- what hand-written code and the library's own collectives use, 0.01-0.02
// us faster than MPI_Isend + MPI_Irecv + MPI_Waitall at P = 2. MPICH's blocking calls give the processor up
// (sched_yield, about once per call) while they wait: at P = 2 a blocking wait for a message already on its way
// cost 0.6-1.3 us more than polling for it, MPI_Sendrecv included (bench/README.md, "Spin before blocking"). There
// a wait polls (MPI_Testall / MPI_Testsome) for up to kSpin before it blocks: spinning about as long as blocking
// costs, then blocking, is the classic spin-then-block rule (never worse than twice the better choice, whatever
// the wait turns out to be: Karlin, Li, Manasse, Owicki, SOSP 1991); 2 us and 50 us measured the same, and
// oversubscribed ranks lose at most kSpin per wait before they yield.
#if defined(OMPI_MAJOR_VERSION)
constexpr std::chrono::microseconds kSpin{0};
#else
constexpr std::chrono::microseconds kSpin{2};
#endif
constexpr bool kBlockingPolls = kSpin.count() == 0;  // the library's blocking calls poll: use them

template <class Poll>
bool spin_until(Poll poll) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
        for (int k = 0; k < 8; ++k)
            if (poll()) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
    }
}

void wait_all(std::vector<MPI_Request>& reqs) {
    const int n = static_cast<int>(reqs.size());
    if (spin_until([&] {
            int done = 0;
            check(MPI_Testall(n, reqs.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
            return done != 0;
        }))
        return;
    check(MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

// Some of reqs: outcount (>= 1) indices.
void wait_some(std::vector<MPI_Request>& reqs, std::vector<int>& indices, int& outcount) {
    const int n = static_cast<int>(reqs.size());
    indices.resize(reqs.size());
    outcount = 0;
    if (spin_until([&] {
            check(MPI_Testsome(n, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE), "MPI_Testsome");
            return outcount != 0 && outcount != MPI_UNDEFINED;
        }))
        return;
    check(MPI_Waitsome(n, reqs.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE), "MPI_Waitsome");
}

}  // namespace

// Only on integer types (reduction.hpp): unsigned arithmetic wraps exactly like the sum did, so subtraction undoes
// it bit for bit; on floating-point data a take-out is not exact and ranks would end with different bits.
bool invertible(MPI_Datatype t, MPI_Op op) { return (op == MPI_SUM || op == MPI_BXOR) && integer_bytes(t) > 0; }

bool reduce_inverse(void* dst, const void* src, int n, MPI_Datatype t, MPI_Op op) {
    if (!invertible(t, op)) return false;
    const int ib = integer_bytes(t);
    if (op == MPI_BXOR) {
        auto* d = static_cast<unsigned char*>(dst);
        const auto* s = static_cast<const unsigned char*>(src);
        for (long i = 0; i < static_cast<long>(n) * ib; ++i) d[i] ^= s[i];
        return true;
    }
    if (ib == 1) sub<uint8_t>(dst, src, n);
    else if (ib == 2) sub<uint16_t>(dst, src, n);
    else if (ib == 4) sub<uint32_t>(dst, src, n);
    else sub<uint64_t>(dst, src, n);
    return true;
}

// --------------------------------------------------------------------------------------------------- Plan
Plan::Plan(MPI_Comm comm, std::shared_ptr<const Schedule> s, const CallShape& shape, Noncontig mode)
    : comm_(comm), sched_(std::move(s)), layout_(*sched_, [&] {
          int r = 0;
          MPI_Comm_rank(comm, &r);
          return r;
      }(), shape),
      mode_(mode) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    if (size_ != sched_->ranks())
        throw Error("schedule " + sched_->algorithm + " is for " + std::to_string(sched_->ranks()) +
                    " ranks but the communicator has " + std::to_string(size_));
    for (int r = 0; r < size_; ++r) {  // every rank the schedule holds, so that every rank refuses alike
        if (!sched_->holds(r)) continue;
        for (const Op& op : sched_->program(r).ops)
            if ((op.kind == OpKind::send || op.kind == OpKind::recv) && op.tag() >= kTagWindow - 1)
                throw Error("schedule " + sched_->algorithm + " uses tag " + std::to_string(op.tag()) + " (allowed: < " +
                            std::to_string(kTagWindow - 1) + ")");
    }
    for (int d = 1; d < size_; d *= 2) barrier_peers_.push_back(d);
    build_nodes();
    build_order();
}

Plan::~Plan() {
    if (finalized()) return;
    for (Node& n : nodes_)
        if (n.dtype != MPI_DATATYPE_NULL) PMPI_Type_free(&n.dtype);  // (collplan's own: never held by the PMPI library)
}

void Plan::build_message(Node& n, uint32_t begin, uint32_t end) {
    as_int(n.bytes, "message");
    if (end - begin <= 1) return;
    const bool one_buffer = std::all_of(chunks_.begin() + begin, chunks_.begin() + end,
                                        [&](const Chunk& c) { return c.buf == chunks_[begin].buf; });
    if (mode_ == Noncontig::pack || !one_buffer) {
        n.staged = 1;
        n.stage_off = stage_bytes_;
        stage_bytes_ += n.bytes;
        return;
    }
    std::vector<int> lens;
    std::vector<MPI_Aint> displs;
    for (uint32_t k = begin; k < end; ++k) {
        lens.push_back(as_int(chunks_[k].bytes, "chunk"));
        displs.push_back(static_cast<MPI_Aint>(chunks_[k].offset));
    }
    check(MPI_Type_create_hindexed(static_cast<int>(lens.size()), lens.data(), displs.data(), MPI_BYTE, &n.dtype),
          "MPI_Type_create_hindexed");
    check(MPI_Type_commit(&n.dtype), "MPI_Type_commit");
    n.dtype_buf = chunks_[begin].buf;
    ++ndtypes_;
}

void Plan::build_nodes() {
    const size_t n_ops = sched_->num_ops(rank_);
    nodes_.resize(n_ops);
    for (uint32_t i = 0; i < n_ops; ++i) {
        const Op& op = sched_->program(rank_).ops[i];
        Node& n = nodes_[i];
        n.kind = op.kind;
        n.flags = op.flags;
        n.peer = op.peer;
        n.tag = op.tag();
        n.src_begin = static_cast<uint32_t>(chunks_.size());
        for (const Chunk& c : layout_.src(i)) chunks_.push_back(c);
        n.src_end = n.dst_begin = static_cast<uint32_t>(chunks_.size());
        for (const Chunk& c : layout_.dst(i)) chunks_.push_back(c);
        n.dst_end = static_cast<uint32_t>(chunks_.size());
        for (uint32_t k = n.dst_begin; k < n.dst_end; ++k) writes_in_ = writes_in_ || chunks_[k].buf == Buf::in;
        n.bytes = op.kind == OpKind::recv ? layout_.dst_bytes(i) : layout_.src_bytes(i);
        if (op.kind == OpKind::send) build_message(n, n.src_begin, n.src_end);
        if (op.kind == OpKind::recv) build_message(n, n.dst_begin, n.dst_end);
        if (op.kind == OpKind::reduce) scratch_bytes_ = std::max(scratch_bytes_, n.bytes);
    }
}

// Groups, explicit dependencies and their pending counts come from the walker (schedule/walk.hpp); the executor
// adds its own prerequisites: a send or recv is posted after the previous one of its channel (MPI's order), and
// barriers run one after the other (their messages share a tag).
void Plan::build_order() {
    const auto n_ops = static_cast<uint32_t>(nodes_.size());
    ProgramOrder order = program_order(sched_->program(rank_));
    std::vector<uint32_t> after_barrier(n_ops, UINT32_MAX);  // the barrier op waiting for barrier op i
    std::map<std::tuple<int, int, int>, uint32_t> last_on_channel;  // (kind, peer, tag) -> op
    uint32_t last_barrier = UINT32_MAX;
    for (uint32_t i = 0; i < n_ops; ++i) {
        Node& n = nodes_[i];
        n.group = order.group[i];
        n.npre = order.pending[i];
        if (n.kind == OpKind::send || n.kind == OpKind::recv) {
            auto [it, fresh] = last_on_channel.try_emplace({static_cast<int>(n.kind), n.peer, n.tag}, i);
            if (!fresh) {
                nodes_[it->second].chan_next = i;
                it->second = i;
                ++n.npre;
            }
        }
        if (n.kind == OpKind::barrier) {
            if (last_barrier != UINT32_MAX) after_barrier[last_barrier] = i, ++n.npre;
            last_barrier = i;
            has_barrier_ = true;
        }
    }
    group_begin_ = std::move(order.group_begin);
    by_groups_ = !order.any_deps && !has_barrier_;
    group_size_.assign(group_begin_.size() - 1, 0);
    for (const Node& n : nodes_) ++group_size_[n.group], initial_pending_.push_back(n.npre);
    dep_begin_.assign(n_ops + 1, 0);
    for (uint32_t i = 0; i < n_ops; ++i) {  // the walker's dependents, and the next barrier in program order
        const auto first = order.dependents.begin() + order.dep_begin[i], last = order.dependents.begin() + order.dep_begin[i + 1];
        const auto split = std::upper_bound(first, last, after_barrier[i]);
        dependents_.insert(dependents_.end(), first, split);
        if (after_barrier[i] != UINT32_MAX) dependents_.push_back(after_barrier[i]);
        dependents_.insert(dependents_.end(), split, last);
        dep_begin_[i + 1] = static_cast<uint32_t>(dependents_.size());
        if (nodes_[i].npre == 0) initial_ready_.push_back(i);
    }
}

// ---------------------------------------------------------------------------------------------- Execution
Execution::Execution(std::shared_ptr<const Plan> plan) : plan_(std::move(plan)) {
    tmp_.resize(plan_->layout_.tmp_bytes());
    stage_.resize(plan_->stage_bytes_);
    scratch_.resize(plan_->scratch_bytes_);
    barrier_round_.assign(plan_->nodes_.size(), 0);
    barrier_left_.assign(plan_->nodes_.size(), 0);
}

Execution::~Execution() {
    if (!active_ || finalized()) return;
    for (MPI_Request& r : reqs_)  // abandoned mid-run: cancel what is still posted
        if (r != MPI_REQUEST_NULL) {
            MPI_Cancel(&r);
            MPI_Request_free(&r);
        }
}

void Execution::reset() {
    pending_ = plan_->initial_pending_;
    group_left_ = plan_->group_size_;
    open_group_ = 0;
    left_ = plan_->nodes_.size();
    ready_ = plan_->initial_ready_;
    if (plan_->has_barrier_) std::fill(barrier_round_.begin(), barrier_round_.end(), 0);
    reqs_.clear();
    req_node_.clear();
}

void Execution::begin(const RunArgs& a) {
    if (active_) throw Error("collplan request started again before it completed (wait or test it first)");
    args_ = a;
    commutative_ = true;
    if (a.op != MPI_OP_NULL && plan_->scratch_bytes_ > 0) {
        // dst = dst (+) src may run as src (+) dst only for the predefined operations, which give the same bits
        // either way; a user-defined operation, commutative or not, gets its operands in the schedule's order (the
        // order the verifier proved rank-consistent).
        commutative_ = predefined_op(a.op);
        MPI_Aint lb = 0, extent = 1;  // elements lie `extent` apart (== size for contiguous types)
        check(MPI_Type_get_extent(a.datatype, &lb, &extent), "MPI_Type_get_extent");
        elem_bytes_ = static_cast<int>(extent);
    }
    active_ = true;
}

void Execution::start(const RunArgs& a) {
    begin(a);
    if (plan_->by_groups_) {
        group_ = 0;
        reqs_.clear();
        req_node_.clear();
        run_groups();
        return;
    }
    reset();
    pump();
}

// Start and wait in one call: the blocking collectives. Where the library's blocking calls poll, a group whose
// messages are one send and one recv is one MPI_Sendrecv (kSpin above).
void Execution::run(const RunArgs& a) {
    if (!kBlockingPolls || !plan_->by_groups_) {
        start(a);
        wait();
        return;
    }
    begin(a);
    reqs_.clear();
    req_node_.clear();
    const auto& gb = plan_->group_begin_;
    for (group_ = 0; group_ + 1 < gb.size(); ++group_) {
        uint32_t send = UINT32_MAX, recv = UINT32_MAX, messages = 0;
        for (uint32_t i = gb[group_]; i < gb[group_ + 1]; ++i) {
            const OpKind k = plan_->nodes_[i].kind;
            if (k == OpKind::send || k == OpKind::recv) ++messages, (k == OpKind::send ? send : recv) = i;
        }
        if (messages == 2 && send != UINT32_MAX && recv != UINT32_MAX) {
            for (uint32_t i = gb[group_]; i < gb[group_ + 1]; ++i)
                if (i != send && i != recv) local(plan_->nodes_[i]);
            const Message out = message(send), in = message(recv);
            const Node &sn = plan_->nodes_[send], &rn = plan_->nodes_[recv];
            check(MPI_Sendrecv(out.ptr, out.count, out.type, sn.peer, args_.tag_base + sn.tag, in.ptr, in.count, in.type,
                               rn.peer, args_.tag_base + rn.tag, plan_->comm_, MPI_STATUS_IGNORE),
                  "MPI_Sendrecv");
            unstage(rn);
            continue;
        }
        open_group();
        if (reqs_.empty()) continue;
        wait_all(reqs_);
        finish_group();
    }
    active_ = false;
}

// The group walk (Plan::by_groups_): opens groups from group_ on -- posts their messages in program order and runs
// their local ops -- until one has messages in flight (then end_group() after they complete) or none is left.
void Execution::run_groups() {
    const auto& gb = plan_->group_begin_;
    for (; group_ + 1 < gb.size(); ++group_) {
        open_group();
        if (!reqs_.empty()) return;
    }
    active_ = false;
}

// Posts the messages of group_ in program order and runs its local ops.
void Execution::open_group() {
    const auto& gb = plan_->group_begin_;
    for (uint32_t i = gb[group_]; i < gb[group_ + 1]; ++i) {
        const Node& n = plan_->nodes_[i];
        if (n.kind == OpKind::send || n.kind == OpKind::recv) post(i);
        else local(n);
    }
}

// After the group's requests completed: unstages its receives.
void Execution::finish_group() {
    for (uint32_t i : req_node_) unstage(plan_->nodes_[i]);
    reqs_.clear();
    req_node_.clear();
}

void Execution::end_group() {
    finish_group();
    ++group_;
    run_groups();
}

void Execution::pump() {
    for (size_t head = 0; head < ready_.size(); ++head) run_op(ready_[head]);  // run_op() may append
    ready_.clear();
}

void Execution::run_op(uint32_t i) {
    const Node& n = plan_->nodes_[i];
    switch (n.kind) {
        case OpKind::send:
        case OpKind::recv:
            post(i);
            if (n.chan_next != UINT32_MAX) released(n.chan_next);
            break;
        case OpKind::barrier: barrier_round(i); break;
        default:
            local(n);
            complete(i);
            break;
    }
}

// Where a message's data lie (a send's data are packed into the staging buffer here when it goes through it).
Execution::Message Execution::message(uint32_t i) {
    const Node& n = plan_->nodes_[i];
    const Chunk* c = plan_->chunks_.data() + (n.kind == OpKind::send ? n.src_begin : n.dst_begin);
    const uint32_t nchunks = n.kind == OpKind::send ? n.src_end - n.src_begin : n.dst_end - n.dst_begin;
    Message m{stage_.data(), static_cast<int>(n.bytes), MPI_BYTE};
    if (n.staged) {
        m.ptr = stage_.data() + n.stage_off;
        if (n.kind == OpKind::send)
            for (uint64_t pos = 0; const Chunk& k : std::span(c, nchunks)) {
                std::memcpy(static_cast<char*>(m.ptr) + pos, base(k.buf) + k.offset, k.bytes);
                pos += k.bytes;
            }
    } else if (n.dtype != MPI_DATATYPE_NULL) {
        m = {base(n.dtype_buf), 1, n.dtype};
    } else if (nchunks == 1) {
        m.ptr = base(c->buf) + c->offset;
    }
    return m;
}

void Execution::post(uint32_t i) {
    const Node& n = plan_->nodes_[i];
    const Message m = message(i);
    MPI_Request r = MPI_REQUEST_NULL;
    const int tag = args_.tag_base + n.tag;
    if (n.kind == OpKind::send)
        check(MPI_Isend(m.ptr, m.count, m.type, n.peer, tag, plan_->comm_, &r), "MPI_Isend");
    else
        check(MPI_Irecv(m.ptr, m.count, m.type, n.peer, tag, plan_->comm_, &r), "MPI_Irecv");
    reqs_.push_back(r);
    req_node_.push_back(i);
}

void Execution::local(const Node& n) {
    if (n.kind == OpKind::reduce) {
        reduce(n);
    } else if (n.kind == OpKind::copy) {
        const Chunk* s = plan_->chunks_.data() + n.src_begin;
        const Chunk* d = plan_->chunks_.data() + n.dst_begin;
        const Chunk* s_end = plan_->chunks_.data() + n.src_end;
        for (uint64_t so = 0, dof = 0; s != s_end;) {  // walk both chunk lists in step
            const uint64_t piece = std::min(s->bytes - so, d->bytes - dof);
            char* to = base(d->buf) + d->offset + dof;
            const char* from = base(s->buf) + s->offset + so;
            if (to != from) std::memmove(to, from, piece);
            so += piece, dof += piece;
            if (so == s->bytes) ++s, so = 0;
            if (dof == d->bytes) ++d, dof = 0;
        }
    }
}

void Execution::reduce(const Node& n) {
    const int elem = std::max(1, elem_bytes_);
    const Chunk* s = plan_->chunks_.data() + n.src_begin;
    const Chunk* d = plan_->chunks_.data() + n.dst_begin;
    const Chunk* s_end = plan_->chunks_.data() + n.src_end;
    const bool inverse = n.flags & opflag::inverse;
    const bool swap = (n.flags & opflag::reverse) && !commutative_;
    for (uint64_t so = 0, dof = 0; s != s_end;) {
        const uint64_t piece = std::min({s->bytes - so, d->bytes - dof, uint64_t{1} << 30});
        char* dst = base(d->buf) + d->offset + dof;
        const char* src = base(s->buf) + s->offset + so;
        const int count = static_cast<int>(piece / static_cast<uint64_t>(elem));
        const int64_t o = -args_.lb;  // from the start of an element's extent to its origin
        if (inverse) {
            if (!reduce_inverse(dst, src, count, args_.datatype, args_.op))
                throw Error("schedule needs the inverse of the reduction operation, which this datatype/operation lacks");
        } else if (swap) {  // dst = dst (+) src for a non-commutative operation
            std::memcpy(scratch_.data(), src, piece);
            check(MPI_Reduce_local(dst + o, scratch_.data() + o, count, args_.datatype, args_.op), "MPI_Reduce_local");
            std::memcpy(dst, scratch_.data(), piece);
        } else {
            check(MPI_Reduce_local(src + o, dst + o, count, args_.datatype, args_.op), "MPI_Reduce_local");
        }
        so += piece, dof += piece;
        if (so == s->bytes) ++s, so = 0;
        if (dof == d->bytes) ++d, dof = 0;
    }
}

void Execution::barrier_round(uint32_t i) {
    const uint32_t k = barrier_round_[i];
    if (k >= plan_->barrier_peers_.size()) {
        complete(i);
        return;
    }
    const int P = plan_->size_, r = plan_->rank_, dist = plan_->barrier_peers_[k];
    const int tag = args_.tag_base + Plan::kTagWindow - 1;
    MPI_Request rq[2];
    check(MPI_Isend(stage_.data(), 0, MPI_BYTE, (r + dist) % P, tag, plan_->comm_, &rq[0]), "MPI_Isend");
    check(MPI_Irecv(stage_.data(), 0, MPI_BYTE, (r - dist + P) % P, tag, plan_->comm_, &rq[1]), "MPI_Irecv");
    for (MPI_Request q : rq) reqs_.push_back(q), req_node_.push_back(i);
    barrier_left_[i] = 2;
}

void Execution::on_request_done(size_t slot) {
    const uint32_t i = req_node_[slot];
    const Node& n = plan_->nodes_[i];
    if (n.kind == OpKind::barrier) {
        if (--barrier_left_[i] == 0) {
            ++barrier_round_[i];
            barrier_round(i);
        }
        return;
    }
    unstage(n);
    complete(i);
}

void Execution::unstage(const Node& n) {  // a completed recv that went through the staging buffer
    if (n.kind != OpKind::recv || !n.staged) return;
    const char* from = stage_.data() + n.stage_off;
    for (uint32_t k = n.dst_begin; k < n.dst_end; ++k) {
        const Chunk& c = plan_->chunks_[k];
        std::memcpy(base(c.buf) + c.offset, from, c.bytes);
        from += c.bytes;
    }
}

void Execution::released(uint32_t i) {
    if (--pending_[i] == 0) ready_.push_back(i);
}

void Execution::complete(uint32_t i) {
    --left_;
    for (uint32_t k = plan_->dep_begin_[i]; k < plan_->dep_begin_[i + 1]; ++k) released(plan_->dependents_[k]);
    const auto& gb = plan_->group_begin_;
    --group_left_[plan_->nodes_[i].group];
    while (open_group_ + 1 < group_left_.size() && group_left_[open_group_] == 0) {
        ++open_group_;
        for (uint32_t k = gb[open_group_]; k < gb[open_group_ + 1]; ++k) released(k);
    }
}

void Execution::compact() {
    size_t w = 0;
    for (size_t k = 0; k < reqs_.size(); ++k)
        if (reqs_[k] != MPI_REQUEST_NULL) reqs_[w] = reqs_[k], req_node_[w] = req_node_[k], ++w;
    reqs_.resize(w);
    req_node_.resize(w);
}

bool Execution::test() {
    if (!active_) return true;
    if (plan_->by_groups_) {
        while (active_) {
            int done = 0;
            check(MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
            if (!done) return false;
            end_group();
        }
        return true;
    }
    for (;;) {
        pump();
        if (left_ == 0) {
            active_ = false;
            return true;
        }
        if (reqs_.empty()) throw Error("collplan executor stalled: ops wait for each other (invalid schedule)");
        const int n = static_cast<int>(reqs_.size());
        indices_.resize(reqs_.size());
        int outcount = 0;
        check(MPI_Testsome(n, reqs_.data(), &outcount, indices_.data(), MPI_STATUSES_IGNORE), "MPI_Testsome");
        if (outcount == 0 || outcount == MPI_UNDEFINED) return false;
        for (int k = 0; k < outcount; ++k) on_request_done(static_cast<size_t>(indices_[k]));
        compact();
    }
}

// True when completing only some of the active requests can release nothing: they are all the rest of the open
// group, none has explicit dependents and none is a barrier. Then one MPI_Waitall does (as hand-written code would).
bool Execution::all_or_nothing() const {
    if (group_left_[open_group_] != reqs_.size()) return false;
    for (uint32_t i : req_node_) {
        const Node& n = plan_->nodes_[i];
        if (n.group != open_group_ || n.kind == OpKind::barrier || plan_->dep_begin_[i] != plan_->dep_begin_[i + 1])
            return false;
    }
    return true;
}

void Execution::wait() {
    if (!active_) return;
    if (plan_->by_groups_) {
        while (active_) {
            wait_all(reqs_);
            end_group();
        }
        return;
    }
    for (;;) {
        pump();
        if (left_ == 0) {
            active_ = false;
            return;
        }
        if (reqs_.empty()) throw Error("collplan executor stalled: ops wait for each other (invalid schedule)");
        const int n = static_cast<int>(reqs_.size());
        if (all_or_nothing()) {
            wait_all(reqs_);
            for (size_t k = 0; k < static_cast<size_t>(n); ++k) on_request_done(k);
            compact();
            continue;
        }
        int outcount = 0;
        wait_some(reqs_, indices_, outcount);
        for (int k = 0; k < outcount; ++k) on_request_done(static_cast<size_t>(indices_[k]));
        compact();
    }
}

}  // namespace collplan::mpi
