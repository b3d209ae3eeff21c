// Analytic estimate: a discrete-event walk of the schedule's critical path with each node's ports and CPU
// serialised and no link contention. The semantics are spelled out in docs/models.md.
//
// Events are (time, type, op, rank), popped in that order (model/tie_queue.hpp): completions come before start
// requests at equal times, then lower op indices, then lower ranks, so the result is deterministic. A start request
// reserves the ports (or the CPU) it needs in time order: requests are served first come, first served, with no
// back-filling. Memory on top of the schedule: 20 bytes per op shared by every walk (Estimator: an op offset per
// rank, a partner index and the units per op; 4 bytes per recv more while matching channels), and per walk a
// state byte per op and the queue.
//
// One rank for all (schedule/symmetry.hpp): a schedule of rank 0's program alone whose algorithm declares a rank
// symmetry is walked as that one rank. Every op of another rank happens at the time of the same op of rank 0, so
// the partner of rank 0's send to j is rank 0's own receive from inverse(j), and the ports, CPU and barriers a
// message books are rank 0's. The whole walk books a resource in (time, kind, op index, rank) order, and events that
// differ only in their rank touch different ranks' resources (with duplex ports and no host channel: the group
// acts regularly, so no two senders reach one receiver with the same op index); so both walks serve every
// resource in the same order and give the same times to the bit (tests/cpp/test_symmetry.cpp,
// tests/python/test_planner.py).
#include "collplan/model/estimate.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "collplan/model/tie_queue.hpp"
#include "collplan/schedule/symmetry.hpp"
#include "collplan/schedule/walk.hpp"

namespace collplan {
namespace {

enum OpState : uint8_t { kWaiting = 0, kReady = 1, kStarted = 2, kDone = 3 };

// Heap entry; `order` = (is a start request) << 63 | op << 31 | rank breaks ties between equal times:
// completions first, then by op index, then by rank (every rank's k-th op before any rank's (k+1)-th).
struct Event {
    double t;
    uint64_t order;
    bool request() const { return order >> 63; }
    uint32_t op() const { return static_cast<uint32_t>(order >> 31); }
    int rank() const { return static_cast<int>(order & 0x7fffffffu); }
};

bool is_comm(OpKind k) { return k == OpKind::send || k == OpKind::recv; }

// A local op's time on its rank's CPU.
double local_s(const Model& model, OpKind k, double bytes) {
    return k == OpKind::copy ? model.copy_s(bytes) : k == OpKind::reduce ? model.reduce_s(bytes) : model.calc_s(bytes);
}

// Rank 0's k-th send to j with tag t meets, in every rank's terms, rank 0's k-th receive from inverse(j) with tag t:
// the channel (inverse(j) -> 0, t) of the walker's Matcher, both sides posted in program order.
std::vector<uint32_t> symmetric_partners(const RankProgram& prog, Symmetry sym, int P) {
    std::vector<uint32_t> partner(prog.ops.size(), kNoPartner);
    Matcher channels(1);
    for (uint32_t k = 0; k < prog.ops.size(); ++k) {
        const Op& op = prog.ops[k];
        if (!is_comm(op.kind)) continue;
        const bool send = op.kind == OpKind::send;
        if (const auto q = channels.post(send, send ? inverse(sym, P, op.peer) : op.peer, 0, op.tag(), k)) {
            partner[k] = static_cast<uint32_t>(*q);
            partner[*q] = k;
        }
    }
    return partner;
}

struct RankState {
    double cpu_free = 0;   // local ops are serialised on the rank's CPU
    double last_done = 0;
};

class Simulation {
public:
    Simulation(const Schedule& s, const Estimator::Ops& ops, const Topology& topo, const Model& model, double m,
               const Job& job);
    Estimate run();

private:
    // Walked ranks: every rank, or rank 0 for all (one_). A peer's ops are walked as node(peer)'s.
    size_t slot(int r) const { return one_ ? 0 : static_cast<size_t>(r); }
    int node(int peer) const { return one_ ? 0 : peer; }
    int walked() const { return one_ ? 1 : P_; }
    size_t at(int r, uint32_t k) const { return base_[slot(r)] + k; }
    void push(double t, bool request, int r, uint32_t k) {
        queue_.push(t, (uint64_t{request} << 63) | (uint64_t{k} << 31) | static_cast<uint64_t>(r));
    }
    void prefetch() const;
    void make_ready(int r, double t);
    void make_ready(int r, uint32_t k, double t);
    void complete(int r, uint32_t k, double t);
    void start(int r, uint32_t k, double t);
    void start_message(int r, uint32_t k, double t);
    void arrive(int r, uint32_t k, double t);
    double& port(int node, bool send, int hint);
    void arrive_barrier(int r, uint32_t k, double t);
    [[noreturn]] void report_stuck() const;

    const Schedule& s_;
    CancelPoll poll_;
    const Topology& topo_;
    const Model& model_;
    const double m_;
    const int P_, ports_;
    const bool one_;  // rank 0 stands for every rank (a symmetric schedule of rank 0's program alone)
    const std::vector<size_t>& base_;
    const std::vector<uint32_t>& partner_;
    const std::vector<double>& units_;
    std::vector<uint8_t> state_;  // OpState
    std::vector<RankState> ranks_;
    std::vector<RankCursor> cur_;    // readiness: groups and explicit dependencies (schedule/walk.hpp)
    std::vector<uint32_t> ready_;    // scratch: the ops a completion makes ready
    std::vector<double> send_free_, recv_free_;  // P * ports; !duplex: both directions use send_free_
    std::vector<double> host_free_;              // per host: when its channel has moved every byte booked so far
    BarrierRendezvous<double> barriers_;         // the time of a barrier: its latest ready time
    TieQueue queue_;
};

Simulation::Simulation(const Schedule& s, const Estimator::Ops& ops, const Topology& topo, const Model& model,
                       double m, const Job& job)
    : s_(s), poll_(job), topo_(topo), model_(model), m_(m), P_(s.ranks()), ports_(std::max(1, model.ports)),
      one_(!s.whole()), base_(ops.base), partner_(ops.partner), units_(ops.units), barriers_(s) {
    const auto n = static_cast<size_t>(walked());
    state_.assign(base_[n], kWaiting);
    ranks_.resize(n);
    cur_.reserve(n);
    for (int r = 0; r < walked(); ++r) cur_.emplace_back(s.program(r));
    send_free_.assign(n * ports_, 0.0);
    if (model.duplex) recv_free_.assign(n * ports_, 0.0);
    if (model.host_beta > 0) host_free_.assign(static_cast<size_t>(model.host_of(P_ - 1)) + 1, 0.0);
}

Estimate Simulation::run() {
    for (int r = 0; r < walked(); ++r) {
        ready_.clear();
        cur_[r].start(ready_);
        make_ready(r, 0.0);
    }
    while (!queue_.empty()) {
        poll_.tick();
        prefetch();
        const auto [t, order] = queue_.pop();
        const Event e{t, order};
        if (e.request()) start(e.rank(), e.op(), e.t);
        else complete(e.rank(), e.op(), e.t);
    }
    Estimate est;
    for (int r = 0; r < walked(); ++r) {
        const RankState& rs = ranks_[r];
        if (!cur_[r].finished()) report_stuck();
        if (rs.last_done > est.time_s) est = {rs.last_done, r};
    }
    return est;
}

// The events of a lock-step walk touch one op of each of many ranks, each in its own allocation: the records of
// the events coming next in the queue's run are fetched ahead, in two steps (the rank's program and op offset,
// then its op and state).
void Simulation::prefetch() const {
    if (const uint64_t o = queue_.upcoming(12); o != TieQueue::kNone) {
        const Event e{0, o};
        __builtin_prefetch(&s_.program(e.rank()));
        __builtin_prefetch(&base_[slot(e.rank())]);
    }
    if (const uint64_t o = queue_.upcoming(6); o != TieQueue::kNone) {
        const Event e{0, o};
        const size_t i = at(e.rank(), e.op());
        __builtin_prefetch(s_.program(e.rank()).ops.data() + e.op());
        __builtin_prefetch(&state_[i]);
        __builtin_prefetch(&partner_[i]);
        __builtin_prefetch(&units_[i]);
    }
}

// Readies the ops in ready_ (those a completion at time t made ready, in program order).
void Simulation::make_ready(int r, double t) {
    for (uint32_t k : ready_) make_ready(r, k, t);
}

void Simulation::make_ready(int r, uint32_t k, double t) {
    const size_t i = at(r, k);
    state_[i] = kReady;
    const Op& op = s_.program(r).ops[k];
    if (op.kind == OpKind::barrier) return arrive_barrier(r, k, t);
    if (!is_comm(op.kind)) return push(t, true, r, k);
    const uint32_t p = partner_[i];
    if (p == kNoPartner || state_[at(node(op.peer), p)] != kReady) return;  // the second of the pair to be ready starts it
    if (op.kind == OpKind::send) push(t, true, r, k);
    else push(t, true, node(op.peer), p);
}

// Events come in time order, so t is the latest completion of the rank so far: the time its next group opens.
void Simulation::complete(int r, uint32_t k, double t) {
    RankState& rs = ranks_[slot(r)];
    state_[at(r, k)] = kDone;
    rs.last_done = std::max(rs.last_done, t);
    ready_.clear();
    cur_[slot(r)].complete(k, ready_);
    make_ready(r, t);
}

// A start request: a local op takes the CPU, a send (with its matched recv) takes one port at each end.
void Simulation::start(int r, uint32_t k, double t) {
    const Op& op = s_.program(r).ops[k];
    if (op.kind == OpKind::recv) return arrive(r, k, t);  // its message is there: the receive overhead
    state_[at(r, k)] = kStarted;
    if (op.kind == OpKind::send) return start_message(r, k, t);
    const double bytes = units_[at(r, k)] * m_;
    const double cost = local_s(model_, op.kind, bytes);
    RankState& rs = ranks_[slot(r)];
    const double begin = std::max(t, rs.cpu_free);
    rs.cpu_free = begin + cost;
    push(begin + cost, false, r, k);
}

void Simulation::start_message(int r, uint32_t k, double t) {
    const Op& op = s_.program(r).ops[k];
    const int j = op.peer, jn = node(j);
    const uint32_t p = partner_[at(r, k)];
    state_[at(jn, p)] = kStarted;
    const double bytes = units_[at(r, k)] * m_;
    const MessageTime mt = model_.message(bytes, topo_.distance(r, j));
    double& send_port = port(r, true, op.port);
    double& recv_port = port(jn, false, s_.program(jn).ops[p].port);
    RankState& sender = ranks_[slot(r)];
    const double begin = std::max({t, send_port, recv_port, mt.send_cpu > 0 ? sender.cpu_free : 0.0});
    send_port = begin + mt.send_busy;
    recv_port = begin + mt.recv_busy;
    if (mt.send_cpu > 0) sender.cpu_free = begin + mt.send_cpu;
    // a rendezvous message moves its data after the synchronisation: both ends complete that much later, while
    // the ports are booked from begin (another message's data may pass during the synchronisation)
    const double h = model_.handshake_s(bytes);
    double recv_done = begin + h + mt.recv_done;
    if (model_.shares_host(r, j)) {  // the host's channel moves its bytes after every byte booked before them,
        // from the end of the message's start-up on (its zero-byte time): T = start-up + max(pair, channel)
        const double startup = model_.message(0, topo_.distance(r, j)).recv_done;
        double& channel = host_free_[static_cast<size_t>(model_.host_of(r))];
        channel = std::max(channel, begin + h + startup) + bytes * model_.host_beta;
        recv_done = std::max(recv_done, channel);
    }
    push(begin + h + mt.send_done, false, r, k);
    // with a receive overhead on the CPU (LogGP): the message arrives that much before, and the overhead runs when
    // it is there and the receiver's CPU is free (arrive); else the receive completes at recv_done
    if (mt.recv_cpu > 0) push(recv_done - mt.recv_cpu, true, jn, p);
    else push(recv_done, false, jn, p);
}

void Simulation::arrive(int r, uint32_t k, double t) {
    const int from = s_.program(r).ops[k].peer;
    const double cpu = model_.message(units_[at(r, k)] * m_, topo_.distance(from, r)).recv_cpu;
    RankState& rs = ranks_[slot(r)];
    rs.cpu_free = std::max(t, rs.cpu_free) + cpu;
    push(rs.cpu_free, false, r, k);
}

// The free time of the port a message uses: the op's port (modulo ports) or the earliest free one.
double& Simulation::port(int node, bool send, int hint) {
    std::vector<double>& v = send || recv_free_.empty() ? send_free_ : recv_free_;
    double* first = v.data() + slot(node) * ports_;
    if (hint >= 0) return first[hint % ports_];
    return *std::min_element(first, first + ports_);
}

// The k-th barrier of every rank completes at the latest ready time of all ranks' k-th barriers + barrier_s(P).
void Simulation::arrive_barrier(int r, uint32_t k, double t) {
    if (one_) {  // every rank reaches it at t
        state_[at(r, k)] = kStarted;
        return push(t + model_.barrier_s(P_), false, r, k);
    }
    const auto met = barriers_.post(r, k, t);
    if (!met) return;
    const double done = met->latest + model_.barrier_s(P_);
    for (const auto& [q, j] : met->ops) {
        state_[at(q, j)] = kStarted;
        push(done, false, q, j);
    }
}

// Names an op that never completes: preferably one that is ready but never started (its partner is missing
// or stuck), else the first incomplete op.
void Simulation::report_stuck() const {
    int rank = -1;
    uint32_t index = 0;
    for (int r = 0; r < walked() && rank < 0; ++r)
        for (uint32_t k = 0; k < s_.num_ops(r) && rank < 0; ++k)
            if (state_[at(r, k)] == kReady) rank = r, index = k;
    for (int r = 0; r < walked() && rank < 0; ++r)
        for (uint32_t k = 0; k < s_.num_ops(r) && rank < 0; ++k)
            if (state_[at(r, k)] != kDone) rank = r, index = k;
    throw Error("estimate: " + describe_op(s_, rank, index) + " never completes -- run `collplan verify`");
}

}  // namespace

Estimate estimate(const Schedule& s, const Topology& topo, const Model& model, double size_bytes, const Job& job) {
    return estimate(s, topo, model, std::vector<double>{size_bytes}, job, 1)[0];
}

std::vector<Estimate> estimate(const Schedule& s, const Topology& topo, const Model& model,
                               const std::vector<double>& sizes, const Job& job, int threads) {
    for (double n : sizes) block_bytes(s, n, "estimate");  // a bad size is refused before the matching
    return Estimator(s, topo, model, job).run(sizes, job, threads);
}

Estimator::Estimator(const Schedule& s, const Topology& topo, const Model& model, const Job& job)
    : s_(s), topo_(topo), model_(model) {
    if (topo.nodes() != s.ranks())
        throw Error("estimate: topology " + topo.spec() + " has " + std::to_string(topo.nodes()) + " nodes but the " +
                    "schedule has " + std::to_string(s.ranks()) + " ranks (allowed: equal)");
    if (!s.whole()) {
        std::string why = s.only_rank() != 0 ? "it holds rank " + std::to_string(s.only_rank()) + "'s, not rank 0's"
                                             : symmetric_estimate_refusal(s.symmetry, topo, model);
        if (!why.empty())
            throw Error("estimate: " + s.subject() + " holds one rank's program, which stands for every rank only " +
                        "for a symmetric schedule (schedule/symmetry.hpp), and here " + why + " -- estimate the whole schedule");
    }
    // 20 bytes per op kept, and 4 per receive while matching
    job.require_memory(static_cast<double>(s.total_ops()) * 24, "estimate of " + s.subject());
    CancelPoll poll(job);
    if (s.whole()) {
        ops_.base = op_offsets(s);
        ops_.partner = match_partners(s, ops_.base, &poll);
    } else {
        ops_.base = {0, s.num_ops(0)};
        ops_.partner = symmetric_partners(s.program(0), s.symmetry, s.ranks());
    }
    ops_.units.resize(ops_.base.back());
    for (size_t w = 0; w + 1 < ops_.base.size(); ++w) {
        const int r = s.whole() ? static_cast<int>(w) : 0;
        const RankCursor c(s.program(r));
        poll.tick(c.size() + 1);
        for (uint32_t k = 0; k < c.size(); ++k) ops_.units[ops_.base[w] + k] = static_cast<double>(c.units(k));
    }
}

size_t Estimator::memory_bytes() const {
    return ops_.base.capacity() * sizeof(size_t) + ops_.partner.capacity() * 4 + ops_.units.capacity() * 8;
}

std::vector<Estimate> Estimator::run(const std::vector<double>& sizes, const Job& job, int threads) const {
    const Schedule& s = s_;
    const Topology& topo = topo_;
    const Model& model = model_;
    std::vector<double> m;
    for (double n : sizes) m.push_back(block_bytes(s, n, "estimate"));
    if (sizes.empty()) return {};
    // Per walk: the state byte and its share of the queue (about 17 bytes per op); per rank: ports, group state,
    // barriers. As many walks at once as the limit and `threads` allow.
    const double ops = static_cast<double>(s.total_ops()), walked = s.whole() ? s.ranks() : 1;
    const double per_walk = ops * 17 + walked * (168 + 16.0 * std::max(1, model.ports));
    job.require_memory(static_cast<double>(memory_bytes()) + per_walk, "estimate of " + s.subject());
    const double room = (static_cast<double>(job.max_memory_bytes) - static_cast<double>(memory_bytes())) /
                        std::max(1.0, per_walk);
    int workers = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    workers = static_cast<int>(std::clamp<double>(std::min<double>(workers, room), 1, static_cast<double>(sizes.size())));
    if (ops * static_cast<double>(sizes.size()) < 1e5) workers = 1;  // a few milliseconds: not worth a thread

    std::vector<Estimate> out(sizes.size());
    if (workers == 1) {
        for (size_t i = 0; i < sizes.size(); ++i) out[i] = Simulation(s, ops_, topo, model, m[i], job).run();
        return out;
    }
    // The calling thread walks sizes too and alone asks `job` whether to stop (its check may need the caller's
    // context, e.g. Python's signal handlers), also while it waits for the helpers' last walks; a failure or a stop
    // ends every walk at its next poll. Each size's walk is the one a single thread makes, so the times do not
    // depend on the number of threads.
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};
    size_t done = 0;  // walks finished (under lock)
    std::exception_ptr failed;
    std::mutex lock;
    std::condition_variable finished;
    auto fail = [&] {
        std::lock_guard hold(lock);
        if (!failed && !stop.load()) failed = std::current_exception();
        stop = true;
        finished.notify_all();
    };
    const Job helper_job{job.max_memory_bytes, [&stop] {
                             if (stop.load(std::memory_order_relaxed)) throw Error("estimate: stopped");
                         }};
    const Job caller_job{job.max_memory_bytes, [&] {
                             helper_job.check_cancel();
                             job.check_cancel();
                         }};
    auto work = [&](const Job& j) {
        try {
            for (size_t i; !stop.load() && (i = next.fetch_add(1)) < sizes.size();) {
                out[i] = Simulation(s, ops_, topo, model, m[i], j).run();
                std::lock_guard hold(lock);
                ++done;
                finished.notify_all();
            }
        } catch (...) {
            fail();
        }
    };
    std::vector<std::thread> helpers;
    for (int w = 1; w < workers; ++w) helpers.emplace_back(work, std::cref(helper_job));
    work(caller_job);
    try {
        std::unique_lock hold(lock);
        while (!stop.load() && done < sizes.size()) {
            finished.wait_for(hold, std::chrono::milliseconds(20));
            hold.unlock();
            caller_job.check_cancel();
            hold.lock();
        }
    } catch (...) {
        fail();
    }
    for (auto& t : helpers) t.join();
    if (failed) std::rethrow_exception(failed);
    return out;
}

// Each walked rank's ops as ids of their distinct (kind, hops, units), in program order with the groups marked, so
// that each size prices every distinct op once and then adds up arrays.
std::vector<double> estimate_lower_bounds(const Schedule& s, const Topology& topo, const Model& model,
                                          const std::vector<double>& sizes, const Job& job) {
    std::vector<double> m, out(sizes.size(), 0.0);
    for (double n : sizes) m.push_back(block_bytes(s, n, "estimate bound"));
    // The ranks the schedule holds: every rank, or the one it was built for (whose bound also bounds the whole
    // walk: the walk ends no sooner than that rank).
    const int first = s.whole() ? 0 : s.only_rank(), last = s.whole() ? s.ranks() : first + 1;
    const int ports = std::max(1, model.ports);
    job.require_memory(static_cast<double>(s.total_ops()) * 4 + (last - first) * 8.0, "estimate bound of " + s.subject());
    struct Kind {
        OpKind kind;
        int hops;
        uint64_t units;
        auto operator<=>(const Kind&) const = default;
    };
    std::map<Kind, uint32_t> ids;
    std::vector<Kind> kinds;
    std::vector<uint32_t> ops;           // per op: its kind's id, kGroup added where the op opens a group
    std::vector<size_t> rank_end;        // per walked rank: the end of its ops in `ops`
    constexpr uint32_t kGroup = 1u << 31;
    CancelPoll poll(job);
    for (int r = first; r < last; ++r) {
        const RankProgram& prog = s.program(r);
        poll.tick(prog.ops.size() + 1);
        for (uint32_t k = 0; k < prog.ops.size(); ++k) {
            const Op& op = prog.ops[k];
            const int hops = op.kind == OpKind::send ? topo.distance(r, op.peer)
                             : op.kind == OpKind::recv ? topo.distance(op.peer, r) : 0;
            const Kind kind{op.kind, hops, op.kind == OpKind::barrier ? 0 : s.op(r, k).units};
            const auto [it, added] = ids.emplace(kind, static_cast<uint32_t>(kinds.size()));
            if (added) kinds.push_back(kind);
            ops.push_back(it->second | (k == 0 || op.fence() ? kGroup : 0));
        }
        rank_end.push_back(ops.size());
    }
    struct Port {  // the bookings of one direction's ports (both directions' on a simplex port)
        double sum = 0, max_busy = 0, min_done = 1e300;
        void book(double busy, double done) {
            sum += busy, max_busy = std::max(max_busy, busy), min_done = std::min(min_done, done);
        }
        double bound(int ports) const { return sum > 0 ? sum / ports - max_busy + min_done : 0.0; }
    };
    struct Price {
        double busy = 0, done = 0, cpu = 0;
        bool send = false, recv = false;
    };
    std::vector<Price> price(kinds.size());
    for (size_t z = 0; z < sizes.size(); ++z) {
        for (size_t i = 0; i < kinds.size(); ++i) {
            const Kind& o = kinds[i];
            const double bytes = static_cast<double>(o.units) * m[z];
            Price& p = price[i];
            p = {};
            if (o.kind == OpKind::send || o.kind == OpKind::recv) {
                const MessageTime mt = model.message(bytes, o.hops);
                p.send = o.kind == OpKind::send || !model.duplex, p.recv = !p.send;
                p.busy = o.kind == OpKind::send ? mt.send_busy : mt.recv_busy;
                p.done = o.kind == OpKind::send ? mt.send_done : mt.recv_done;
            } else if (o.kind != OpKind::barrier) {
                p.cpu = local_s(model, o.kind, bytes);
            }
        }
        size_t begin = 0;
        for (size_t end : rank_end) {
            poll.tick(end - begin + 1);
            Port send, recv, group_send, group_recv;
            double cpu = 0, group_cpu = 0, groups = 0;
            auto close_group = [&] {
                groups += std::max({group_send.bound(ports), group_recv.bound(ports), group_cpu});
                group_send = {}, group_recv = {}, group_cpu = 0;
            };
            for (size_t x = begin; x < end; ++x) {
                if (ops[x] & kGroup && x > begin) close_group();
                const Price& p = price[ops[x] & ~kGroup];
                if (p.send) send.book(p.busy, p.done), group_send.book(p.busy, p.done);
                if (p.recv) recv.book(p.busy, p.done), group_recv.book(p.busy, p.done);
                cpu += p.cpu, group_cpu += p.cpu;
            }
            close_group();
            out[z] = std::max({out[z], send.bound(ports), recv.bound(ports), cpu, groups});
            begin = end;
        }
    }
    return out;
}

}  // namespace collplan
