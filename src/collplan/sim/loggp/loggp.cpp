// The LogGOPS engine. Semantics (those of LogGOPSim; see docs/simulation.md for the mapping and differences):
//
//   Each node has `cpus` CPUs and `nics` NICs; an op uses CPU (port mod cpus) and NIC (port mod nics), 0 when it
//   names no port. Per CPU c and NIC n the engine keeps when they are next free: nexto[c], nextgs[n] (sending) and
//   nextgr[n] (receiving). b = max(0, s - 1) for a message of s bytes.
//   - An op that becomes ready is queued at max(ready time, nexto[c]) (a send also waits for nextgs[n]).
//   - send at t (once nexto[c] <= t and nextgs[n] <= t, else it is re-queued with its place kept):
//       nexto[c] = t + o + b O, nextgs[n] = t + g + b G; the message arrives at the receiver at t + o + L.
//       An eager message (s <= S) completes the send at once (its dependents wait for nexto[c]); a rendezvous
//       message completes it only when the receiver matches it, and then lifts the sender's nexto/nextgs to that time.
//   - arrival at t on the receiver (once nexto[c] <= t and nextgr[n] <= t, with the sender's c and n, else re-queued):
//       nexto[c] = t + o + max(b O, b G), nextgr[n] = t + g + b G; it completes the oldest posted matching recv,
//       or waits in the unexpected queue.
//   - a rendezvous message of the model (more than its eager bytes, with rndv; collplan only) arrives rndv later:
//       the sender and receiver synchronise before the data moves (docs/models.md "Eager and rendezvous").
//   - ranks that share a host (the model's host_beta, collplan only): a message between two of them also books
//       s host_beta on the host's channel from its arrival at t + o + L on, after every byte booked before it
//       (channel = max(channel, t + o + L) + s host_beta), and arrives no earlier than channel - max(b O, b G):
//       its receive ends no earlier than channel + o (the estimate's rule, docs/models.md).
//   - recv at t: completes at t if its message is in the unexpected queue (the o was paid at arrival), else it is
//       posted and waits for the arrival.
//   - copy/reduce/calc: on CPU c for the model's copy_s/reduce_s/calc_s of its bytes.
//   - barrier (collplan only; GOAL has none): the k-th barrier of every rank completes at the latest arrival plus
//       the model's barrier_s(P), and holds the rank's CPU until then.
//   A rank finishes at the latest nexto of its CPUs. A message left unmatched at the end is an error (as in the
//   flow and packet simulators), even when its eager send completed. Events are ordered by (time, insertion number); ops freed by
//   one event are queued by rank, then sends before recvs before local ops, then program order.
#include "collplan/sim/loggp/loggp.hpp"

#include <algorithm>
#include <cmath>

#include "collplan/sim/common/event_queue.hpp"
#include "collplan/schedule/walk.hpp"
#include "collplan/sim/simulate.hpp"

namespace collplan::sim {

LogGPParams loggp_params(const Model& model, const NetParams& net) {
    LogGPParams p;
    double L = model.startup_s(), o = 0, g = 0, G = model.per_byte_s(), O = 0;
    if (model.kind() == "loggp") {  // recover the model's own parameters from its message times
        const MessageTime m0 = model.message(0, 1), m1 = model.message(1, 1), m2 = model.message(2, 1);
        o = m0.send_done;
        L = m0.recv_done - 2 * o;
        g = m0.send_busy;
        O = m1.send_done - o;
        G = m2.send_done - o - 2 * O;
    }
    auto pick = [](double given, double derived) { return given >= 0 ? given : derived; };
    p.L = Time::seconds(pick(net.L_s, L));
    p.o = Time::seconds(pick(net.o_s, o));
    p.g = Time::seconds(pick(net.g_s, g));
    p.G_ps = std::max(0.0, pick(net.G_s_per_byte, G)) * 1e12;
    p.O_ps = std::max(0.0, pick(net.O_s_per_byte, O)) * 1e12;
    p.S = net.eager_bytes;
    p.cpus = net.cpus;
    p.nics = net.ports > 0 ? net.ports : std::max(1, model.ports);
    return p;
}

namespace {

enum EvType : uint8_t { kOp = 0, kMsg = 1 };
struct Ev {
    uint32_t a;  // kOp: rank; kMsg: message index
    uint32_t b;  // kOp: the op's record (FlatPrograms); kMsg: the receiver (so that prefetching need not read the message first)
    uint8_t kind;
};
struct Msg {
    int32_t src, dst, tag;
    uint32_t send_op;  // the send's record
    uint64_t bytes;
    uint8_t cpu, nic;
};

int type_order(OpKind k) { return k == OpKind::send ? 0 : k == OpKind::recv ? 1 : 2; }

class LogGPSim {
public:
    LogGPSim(const Schedule& s, const Model& model, const LogGPParams& p, const SimOptions& opt);
    SimResult run();

private:
    const FlatOp& op(uint32_t i) const { return flat_.op(i); }
    int cpu(const FlatOp& o) const { return o.port >= 0 ? o.port % p_.cpus : 0; }
    int nic(const FlatOp& o) const { return o.port >= 0 ? o.port % p_.nics : 0; }
    // A rank's clocks are adjacent (one cache line for one CPU and one NIC): nexto of each CPU, then nextgs and
    // nextgr of each NIC.
    Time* clocks(int r) { return &clock_[static_cast<size_t>(r) * stride_]; }
    const Time* clocks(int r) const { return &clock_[static_cast<size_t>(r) * stride_]; }
    Time& nexto(int r, int c) { return clocks(r)[c]; }
    Time& nextgs(int r, int n) { return clocks(r)[p_.cpus + 2 * n]; }
    Time& nextgr(int r, int n) { return clocks(r)[p_.cpus + 2 * n + 1]; }
    uint64_t bytes(int r, uint32_t i) const { return op_bytes(flat_.units(r, cur_.head(r), i), m_); }
    // (s - 1) O and (s - 1) G of a message of s bytes and the model's handshake time, remembered for the last size
    // (collectives repeat sizes).
    struct Bodies {
        uint64_t s = ~uint64_t{0};
        Time O, G, handshake;
    };
    const Bodies& bodies(uint64_t s) {
        if (s != bodies_.s) {
            const double b = static_cast<double>(s > 0 ? s - 1 : 0);
            bodies_ = Bodies{s, bytes_time(b, p_.O_ps), bytes_time(b, p_.G_ps),
                             Time::seconds(model_.handshake_s(static_cast<double>(s)))};
        }
        return bodies_;
    }
    Time local_time(int r, uint32_t i);
    struct LocalMemo {
        bool valid = false;
        OpKind kind = OpKind::calc;
        uint64_t s = 0;
        Time t;
    };

    void on_send(Time t, uint64_t seq, int r, uint32_t i);
    void on_recv(Time t, int r, uint32_t i);
    void on_local(Time t, uint64_t seq, int r, uint32_t i);
    void on_barrier(Time t, int r, uint32_t i);
    void on_msg(Time t, uint64_t seq, uint32_t m);
    void rendezvous_done(int sender, uint32_t send_op, int c, int n, Time t);
    void complete(int r, uint32_t i, Time done);
    void flush_freed();
    bool post_now(int r, uint32_t i, const FlatOp& o);
    void prefetch() const;
    void prefetch_late(const EventQueue<Ev>::Entry& e) const;
    void prefetch_next_group(const EventQueue<Ev>::Entry& e) const;
    std::string describe(int r, uint32_t i) const;
    [[noreturn]] void report_stuck() const;

    const Schedule& s_;
    const Model& model_;
    const LogGPParams p_;
    const SimOptions& opt_;
    const double m_;
    const int P_;
    const FlatPrograms flat_;
    FlatCursors<Time> cur_;
    const size_t stride_;
    std::vector<Time> clock_;
    std::vector<Time> host_free_;  // per host (model host_beta): when its channel has moved every byte booked so far
    Matcher match_;
    std::vector<uint32_t> matching_;  // per rank: queued events that post to its matching (messages to it, its recvs)
    Time now_;                        // the time of the event being handled
    std::vector<Msg> msgs_;
    std::vector<uint32_t> free_msgs_;
    EventQueue<Ev> q_;
    std::vector<std::pair<int, uint32_t>> freed_;
    std::vector<uint32_t> tmp_;
    BarrierRendezvous<Time> barriers_;
    uint64_t done_ops_ = 0, messages_ = 0;
    size_t peak_state_ = 0;
    Bodies bodies_;
    LocalMemo local_;
};

LogGPSim::LogGPSim(const Schedule& s, const Model& model, const LogGPParams& p, const SimOptions& opt)
    : s_(s), model_(model), p_(p), opt_(opt), m_(block_bytes(s, opt.size_bytes, "simulate")), P_(s.ranks()),
      flat_(s), cur_(s, flat_), stride_(static_cast<size_t>(p.cpus + 2 * p.nics)), match_(s.ranks()), barriers_(s) {
    clock_.assign(static_cast<size_t>(P_) * stride_, Time::zero());
    if (model_.host_beta > 0) host_free_.assign(static_cast<size_t>(model_.host_of(P_ - 1)) + 1, Time::zero());
    matching_.assign(static_cast<size_t>(P_), 0);
}

// The model's time of local op i of rank r, remembered for the last kind and size.
Time LogGPSim::local_time(int r, uint32_t i) {
    const uint64_t s = bytes(r, i);
    const OpKind kind = op(i).kind;
    if (local_.valid && local_.s == s && local_.kind == kind) return local_.t;
    const double b = static_cast<double>(s);
    Time t = Time::zero();
    switch (kind) {
        case OpKind::copy: t = Time::seconds(model_.copy_s(b)); break;
        case OpKind::reduce: t = Time::seconds(model_.reduce_s(b)); break;
        case OpKind::calc: t = Time::seconds(model_.calc_s(b)); break;
        default: break;
    }
    local_ = LocalMemo{true, kind, s, t};
    return t;
}

// Queues the ops freed by the last event: by rank, then sends, recvs, local ops, then program order (a rank's
// records lie in program order).
void LogGPSim::flush_freed() {
    auto before = [&](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first < b.first;
        return type_order(op(a.second).kind) < type_order(op(b.second).kind);
    };
    for (size_t i = 1; i < freed_.size(); ++i)  // stable insertion sort: the lists are short
        for (size_t j = i; j > 0 && before(freed_[j], freed_[j - 1]); --j) std::swap(freed_[j], freed_[j - 1]);
    for (const auto& [r, i] : freed_) {
        const FlatOp& o = op(i);
        Time t = max(cur_.ready_time(r, i), nexto(r, cpu(o)));
        if (o.kind == OpKind::send) t = max(t, nextgs(r, nic(o)));
        if (o.kind == OpKind::recv) {
            if (t == now_ && post_now(r, i, o)) continue;
            ++matching_[r];
        }
        q_.push(t, Ev{static_cast<uint32_t>(r), i, kOp});
    }
    freed_.clear();
}

// A recv due now is posted at once, without an event, when that is exactly what its event would do: no message
// to r and no recv of r is queued (so none can be handled before its turn -- a message sent from now on arrives
// after o + L > 0) and no message waits for it (posting only records it; a match would complete ops, whose events
// must be numbered in their turn). Saves one event per recv in lock-step schedules.
bool LogGPSim::post_now(int r, uint32_t i, const FlatOp& o) {
    if (matching_[r] != 0 || p_.o + p_.L <= Time::zero() || match_.has_waiting(true, o.peer, r, o.tag())) return false;
    match_.post(false, o.peer, r, o.tag(), i);
    return true;
}

// 65,536 ranks in lock step touch 65,536 cursors, clocks, matching lines and message records per step: start
// loading those of the events a few places ahead while this one is processed, in stages so that every stage
// reads only what an earlier one prefetched (the cursor, op record and message record, then the receiver's
// cursor and the clocks, then the matching line, then the matching lines of recvs that the next group will post
// at once). The op records of ranks in lock step are read in address order (FlatPrograms).
void LogGPSim::prefetch() const {
    if (const auto* e = q_.upcoming(24)) {
        if (e->p().kind == kMsg) {
            __builtin_prefetch(&msgs_[e->a]);
        } else {
            __builtin_prefetch(cur_.address(static_cast<int>(e->a)));
            __builtin_prefetch(&op(e->b));
        }
    }
    if (const auto* e = q_.upcoming(16)) {
        const bool msg = e->p().kind == kMsg;
        const uint32_t r = msg ? e->b : e->a;
        if (msg) __builtin_prefetch(cur_.address(static_cast<int>(r)));
        __builtin_prefetch(clocks(static_cast<int>(r)));
        __builtin_prefetch(&matching_[r]);
        if (msg && static_cast<int64_t>(msgs_[e->a].bytes) > p_.S) {  // a rendezvous match completes the send too
            const int src = msgs_[e->a].src;
            __builtin_prefetch(cur_.address(src));
            __builtin_prefetch(clocks(src));
        }
    }
    if (const auto* e = q_.upcoming(8)) prefetch_late(*e);
    if (const auto* e = q_.upcoming(4)) prefetch_next_group(*e);
}

void LogGPSim::prefetch_late(const EventQueue<Ev>::Entry& e) const {
    if (e.p().kind == kMsg) {
        const Msg& m = msgs_[e.a];
        return match_.prefetch(m.src, m.dst, m.tag);
    }
    const FlatOp& o = op(e.b);
    if (o.kind == OpKind::recv) return match_.prefetch(o.peer, static_cast<int32_t>(e.a), o.tag());
    if (o.kind == OpKind::send) __builtin_prefetch(&matching_[o.peer]);
}

// The op of `e` is the last of its group: the recvs among the next group's first ops will be posted at once.
void LogGPSim::prefetch_next_group(const EventQueue<Ev>::Entry& e) const {
    if (e.p().kind == kMsg) return;
    const int r = static_cast<int>(e.a);
    if (cur_.remaining(r) != 1) return;
    const uint32_t next = flat_.head(cur_.head(r)).next;
    if (next == FlatPrograms::kEnd) return;
    const uint32_t end = next + 1 + std::min(flat_.head(next).count, 2u);
    for (uint32_t i = next + 1; i < end; ++i) {
        const FlatOp& o = op(i);
        if (o.kind == OpKind::recv) match_.prefetch(o.peer, static_cast<int32_t>(r), o.tag());
    }
}

void LogGPSim::complete(int r, uint32_t i, Time done) {
    ++done_ops_;
    tmp_.clear();
    cur_.complete(r, i, done, tmp_);
    for (uint32_t x : tmp_) freed_.emplace_back(r, x);
}

SimResult LogGPSim::run() {
    Progress progress(opt_.progress, "loggp", s_.total_ops(), opt_.job_or_default());
    for (int r = 0; r < P_; ++r) {
        tmp_.clear();
        cur_.start(r, tmp_);
        for (uint32_t x : tmp_) freed_.emplace_back(r, x);
        flush_freed();
    }
    while (!q_.empty()) {
        const auto e = q_.pop();
        now_ = e.t;
        prefetch();
        if (e.p.kind == kMsg) {
            on_msg(e.t, e.seq, e.p.a);
        } else {
            const int r = static_cast<int>(e.p.a);
            switch (op(e.p.b).kind) {
                case OpKind::send: on_send(e.t, e.seq, r, e.p.b); break;
                case OpKind::recv: on_recv(e.t, r, e.p.b); break;
                case OpKind::barrier: on_barrier(e.t, r, e.p.b); break;
                default: on_local(e.t, e.seq, r, e.p.b); break;
            }
        }
        flush_freed();
        progress.update(done_ops_);
        if ((q_.pushed() & 0xffff) == 0) peak_state_ = std::max(peak_state_, q_.capacity_bytes() + match_.memory_bytes());
    }
    // An eager send completes without its recv: a message still waiting for one when every rank is done is an
    // unmatched send (the flow and packet simulators never complete such a send, and say so alike).
    if (match_.waiting() != 0) report_stuck();
    SimResult res;
    res.rank_time_s.resize(static_cast<size_t>(P_));
    for (int r = 0; r < P_; ++r) {
        if (!cur_.finished(r)) report_stuck();
        Time fin = Time::zero();
        for (int c = 0; c < p_.cpus; ++c) fin = max(fin, nexto(r, c));
        res.rank_time_s[r] = fin.to_seconds();
        if (res.rank_time_s[r] > res.time_s) res.time_s = res.rank_time_s[r], res.critical_rank = r;
    }
    res.events = q_.pushed();
    res.messages = messages_;
    res.state_bytes = std::max(peak_state_, q_.capacity_bytes() + match_.memory_bytes()) + msgs_.capacity() * sizeof(Msg) +
                      clock_.size() * sizeof(Time) + cur_.memory_bytes() + flat_.memory_bytes();
    return res;
}

void LogGPSim::on_send(Time t, uint64_t seq, int r, uint32_t i) {
    const FlatOp& o = op(i);
    const int c = cpu(o), n = nic(o);
    const Time avail = max(nexto(r, c), nextgs(r, n));
    if (avail > t) return q_.push_keep(avail, seq, Ev{static_cast<uint32_t>(r), i, kOp});
    const uint64_t s = bytes(r, i);
    const Bodies& b = bodies(s);
    nexto(r, c) = t + p_.o + b.O;
    nextgs(r, n) = t + p_.g + b.G;
    uint32_t m;
    if (!free_msgs_.empty()) m = free_msgs_.back(), free_msgs_.pop_back();
    else m = static_cast<uint32_t>(msgs_.size()), msgs_.emplace_back();
    msgs_[m] = Msg{r, o.peer, o.tag(), i, s, static_cast<uint8_t>(c), static_cast<uint8_t>(n)};
    ++messages_;
    Time arrival = t + p_.o + p_.L + b.handshake;
    if (model_.shares_host(r, o.peer)) {  // its receive completes no earlier than the host's channel moved its bytes
        Time& channel = host_free_[static_cast<size_t>(model_.host_of(r))];
        channel = max(channel, arrival) + Time::seconds(static_cast<double>(s) * model_.host_beta);
        arrival = max(arrival, channel - max(b.O, b.G));
    }
    q_.push(arrival, Ev{m, static_cast<uint32_t>(o.peer), kMsg});
    ++matching_[o.peer];
    if (static_cast<int64_t>(s) <= p_.S) complete(r, i, nexto(r, c));
}

void LogGPSim::on_recv(Time t, int r, uint32_t i) {
    const FlatOp& o = op(i);
    --matching_[r];
    const auto m = match_.post(false, o.peer, r, o.tag(), i);
    if (!m) return;  // posted; the arrival completes it
    const Msg msg = msgs_[*m];
    free_msgs_.push_back(static_cast<uint32_t>(*m));
    if (static_cast<int64_t>(msg.bytes) > p_.S) rendezvous_done(msg.src, msg.send_op, cpu(o), nic(o), t);
    complete(r, i, t);
}

void LogGPSim::on_msg(Time t, uint64_t seq, uint32_t m) {
    const Msg msg = msgs_[m];
    const int r = msg.dst, c = msg.cpu % p_.cpus, n = msg.nic % p_.nics;
    const Time avail = max(nexto(r, c), nextgr(r, n));
    if (avail > t) return q_.push_keep(avail, seq, Ev{m, static_cast<uint32_t>(r), kMsg});
    --matching_[r];
    const Bodies& b = bodies(msg.bytes);
    nexto(r, c) = t + p_.o + max(b.O, b.G);
    nextgr(r, n) = t + p_.g + b.G;
    const auto i = match_.post(true, msg.src, r, msg.tag, m);
    if (!i) return;  // unexpected: waits for its recv
    free_msgs_.push_back(m);
    if (static_cast<int64_t>(msg.bytes) > p_.S) rendezvous_done(msg.src, msg.send_op, c, n, t);
    complete(r, static_cast<uint32_t>(*i), nexto(r, c));
}

void LogGPSim::rendezvous_done(int sender, uint32_t send_op, int c, int n, Time t) {
    nexto(sender, c) = max(nexto(sender, c), t);
    nextgs(sender, n) = max(nextgs(sender, n), t);
    complete(sender, send_op, t);
}

void LogGPSim::on_local(Time t, uint64_t seq, int r, uint32_t i) {
    const int c = cpu(op(i));
    if (nexto(r, c) > t) return q_.push_keep(nexto(r, c), seq, Ev{static_cast<uint32_t>(r), i, kOp});
    nexto(r, c) = t + local_time(r, i);
    complete(r, i, nexto(r, c));
}

void LogGPSim::on_barrier(Time t, int r, uint32_t i) {
    const auto met = barriers_.post(r, flat_.op_index(cur_.head(r), i), t);
    if (!met) return;
    const Time release = met->latest + Time::seconds(model_.barrier_s(P_));
    for (const auto& [rr, kk] : met->ops) {
        const uint32_t ii = cur_.head(rr) + 1 + (kk - flat_.head(cur_.head(rr)).first);  // kk is in rr's active group
        Time& o = nexto(rr, cpu(op(ii)));
        o = max(o, release);
        complete(rr, ii, release);
    }
}

// Op record i of rank r as the error messages name it (its group is found from the rank's first).
std::string LogGPSim::describe(int r, uint32_t i) const {
    uint32_t h = flat_.first(r);
    while (flat_.head(h).next != FlatPrograms::kEnd && flat_.head(h).next < i) h = flat_.head(h).next;
    return describe_op(s_, r, flat_.op_index(h, i));
}

void LogGPSim::report_stuck() const {
    std::string what;
    if (const auto w = match_.any_waiting()) {
        what = w->is_send ? describe(msgs_[w->handle].src, msgs_[w->handle].send_op)
                          : describe(w->receiver, static_cast<uint32_t>(w->handle));
    } else {
        for (int r = 0; r < P_ && what.empty(); ++r)
            if (!cur_.finished(r)) what = describe_op(s_, r, flat_.head(cur_.head(r)).first);
    }
    throw Error("simulate: " + what + " never completes -- run `collplan verify`");
}

}  // namespace

SimResult simulate_loggp(const Schedule& s, const Model& model, const NetParams& net, const SimOptions& opt) {
    return LogGPSim(s, model, loggp_params(model, net), opt).run();
}

}  // namespace collplan::sim
