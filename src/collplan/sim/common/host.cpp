#include "collplan/sim/common/host.hpp"

#include <algorithm>

#include "collplan/sim/simulate.hpp"

namespace collplan::sim {

Host::Host(const Schedule& s, const Model& model, int ports, bool recv_ports, double block_bytes, SimQueue& q)
    : s_(s), model_(model), ports_(std::max(1, ports)), recv_ports_(recv_ports), m_(block_bytes), q_(q),
      match_(s.ranks()), barriers_(s) {
    const auto P = static_cast<size_t>(s.ranks());
    cur_.reserve(P);
    for (int r = 0; r < s.ranks(); ++r) cur_.emplace_back(s.program(r));
    cpu_free_.assign(P, Time::zero());
    auto make = [&] {
        PortSet ps;
        ps.busy.assign(static_cast<size_t>(ports_), 0);
        ps.pinned.resize(static_cast<size_t>(ports_));
        return ps;
    };
    send_ports_.assign(P, make());
    if (recv_ports_) recv_ports_sets_.assign(P, make());
}

void Host::run(Network& net, SimResult& r, const SimOptions& opt, const char* what) {
    net_ = &net;
    Progress progress(opt.progress, what, s_.total_ops(), opt.job_or_default());
    for (int rank = 0; rank < s_.ranks(); ++rank) {
        tmp_.clear();
        cur_[rank].start(tmp_);
        ready_ops(rank, tmp_);
    }
    uint64_t events_seen = 0;
    while (!q_.empty()) {
        const auto e = q_.pop();
        now_ = e.t;
        if (e.p.kind >= kNetworkKinds) net.on_event(e.t, e.p);
        else complete(static_cast<int>(e.p.a), e.p.b, e.t);
        progress.update(done_ops_);
        // The up-front estimate covers the fixed state; what grows with the messages in flight (the event queue,
        // the messages, the network's flows/routes or packets) is checked here, every 2^20 events.
        if ((++events_seen & ((uint64_t{1} << 20) - 1)) == 0 && opt.memory_bytes > 0)
            opt.job_or_default().require_memory(opt.memory_bytes + static_cast<double>(grown_bytes(net)),
                                                opt.what + " (while running)");
    }
    r.rank_time_s.resize(static_cast<size_t>(s_.ranks()));
    for (int rank = 0; rank < s_.ranks(); ++rank) {
        if (!cur_[rank].finished()) report_stuck();
        r.rank_time_s[rank] = cur_[rank].last_done().to_seconds();
        if (r.rank_time_s[rank] > r.time_s) r.time_s = r.rank_time_s[rank], r.critical_rank = rank;
    }
    r.events = q_.pushed();
    r.messages = messages_;
    r.state_bytes = q_.capacity_bytes() + match_.memory_bytes() + msgs_.capacity() * sizeof(HostMsg) +
                    cur_.capacity() * sizeof(TimedCursor) + send_ports_.size() * sizeof(PortSet) * (recv_ports_ ? 2 : 1) +
                    net.state_bytes();
}

size_t Host::grown_bytes(const Network& net) const {
    return q_.capacity_bytes() + match_.memory_bytes() + msgs_.capacity() * sizeof(HostMsg) + net.state_bytes();
}

void Host::ready_ops(int r, const std::vector<uint32_t>& ks) {
    for (uint32_t k : ks) {
        const Op& o = cur_[r].op(k);
        switch (o.kind) {
            case OpKind::send:
            case OpKind::recv: post(r, k); break;
            case OpKind::barrier: arrive_barrier(r, k); break;
            default: {
                const double b = static_cast<double>(cur_[r].units(k)) * m_;
                const double d = o.kind == OpKind::copy ? model_.copy_s(b) : o.kind == OpKind::reduce ? model_.reduce_s(b)
                                                                                                      : model_.calc_s(b);
                Time& cpu = cpu_free_[r];
                cpu = max(cpu, now_) + Time::seconds(d);
                q_.push(cpu, SimEvent{static_cast<uint32_t>(r), k, kLocalDone});
            }
        }
    }
}

// send/recv k of rank r is ready: match it (the handle is the op index; the sender's rank is the key's).
void Host::post(int r, uint32_t k) {
    const Op& o = cur_[r].op(k);
    const bool is_send = o.kind == OpKind::send;
    const int sender = is_send ? r : o.peer, receiver = is_send ? o.peer : r;
    const auto partner = match_.post(is_send, sender, receiver, o.tag(), k);
    if (!partner) return;
    if (is_send) matched(r, k, static_cast<uint32_t>(*partner));
    else matched(o.peer, static_cast<uint32_t>(*partner), k);
}

void Host::matched(int sender, uint32_t send_op, uint32_t recv_op) {
    const Op& so = cur_[sender].op(send_op);
    const Op& ro = cur_[so.peer].op(recv_op);
    uint32_t id;
    if (!free_msgs_.empty()) id = free_msgs_.back(), free_msgs_.pop_back();
    else id = static_cast<uint32_t>(msgs_.size()), msgs_.emplace_back();
    const double bytes = static_cast<double>(cur_[sender].units(send_op)) * m_;
    msgs_[id] = HostMsg{Message{sender, so.peer, bytes, -1, -1, ro.port, so.ties, send_op}, send_op, recv_op, false, 2};
    ++messages_;
    acquire(send_ports_[sender], id, so.port, true);
}

// Takes port `want` (or any port when want < 0) of `ps` for message id now, or queues the message for it.
void Host::acquire(PortSet& ps, uint32_t id, int want, bool send) {
    if (want >= 0) {
        const int p = want % ports_;
        if (!ps.busy[p]) return granted(id, p, send);
        ps.pinned[p].push_back(id);
        return;
    }
    for (int p = 0; p < ports_; ++p)
        if (!ps.busy[p]) return granted(id, p, send);
    ps.any.push_back(id);
}

void Host::granted(uint32_t id, int port, bool send) {
    HostMsg& h = msgs_[id];
    if (send) {
        send_ports_[h.m.src].busy[port] = 1;
        h.m.send_port = port;
        if (recv_ports_) {
            h.waiting_recv_port = true;
            return acquire(recv_ports_sets_[h.m.dst], id, h.m.recv_port_hint, false);
        }
    } else {
        recv_ports_sets_[h.m.dst].busy[port] = 1;
        h.m.recv_port = port;
        h.waiting_recv_port = false;
    }
    net_->start(id, h.m, now_);
}

// Port `port` of `ps` is free: hand it to the message that has waited longest for it (its own queue or the queue
// of messages that take any port; ids grow with time only per queue, so compare by position: own queue first).
void Host::release(PortSet& ps, int port, bool send) {
    ps.busy[port] = 0;
    std::deque<uint32_t>& own = ps.pinned[port];
    if (!own.empty()) {
        const uint32_t id = own.front();
        own.pop_front();
        return granted(id, port, send);
    }
    if (!ps.any.empty()) {
        const uint32_t id = ps.any.front();
        ps.any.pop_front();
        granted(id, port, send);
    }
}

void Host::message_left(uint32_t id, Time t) {
    now_ = max(now_, t);
    HostMsg& h = msgs_[id];
    const int src = h.m.src, port = h.m.send_port;
    const uint32_t op = h.send_op;
    unref(id);
    release(send_ports_[src], port, true);
    complete(src, op, t);
}

void Host::unref(uint32_t id) {
    if (--msgs_[id].pending == 0) free_msgs_.push_back(id);
}

void Host::message_arrived(uint32_t id, Time t) {
    now_ = max(now_, t);
    const HostMsg h = msgs_[id];
    unref(id);
    if (recv_ports_) release(recv_ports_sets_[h.m.dst], h.m.recv_port, false);
    complete(h.m.dst, h.recv_op, t);
}

void Host::complete(int r, uint32_t k, Time t) {
    ++done_ops_;
    tmp_.clear();
    cur_[r].complete(k, t, tmp_);
    if (!tmp_.empty()) ready_ops(r, tmp_);
}

void Host::arrive_barrier(int r, uint32_t k) {
    const auto met = barriers_.post(r, k, now_);
    if (!met) return;
    const Time release_at = met->latest + Time::seconds(model_.barrier_s(s_.ranks()));
    for (const auto& [rr, kk] : met->ops) q_.push(release_at, SimEvent{static_cast<uint32_t>(rr), kk, kBarrierDone});
}

void Host::report_stuck() const {
    if (net_ && !net_->stuck().empty()) throw Error("simulate: " + net_->stuck());
    std::string what;
    if (const auto w = match_.any_waiting()) {
        what = describe_op(s_, w->is_send ? w->sender : w->receiver, static_cast<uint32_t>(w->handle));
    } else {
        for (int r = 0; r < s_.ranks() && what.empty(); ++r)
            if (!cur_[r].finished()) what = describe_op(s_, r, cur_[r].cursor().group_begin());
    }
    throw Error("simulate: " + what + " never completes -- run `collplan verify`");
}

}  // namespace collplan::sim
