// The flow network. State: the active flows (route, remaining bytes, rate, finish time); per link scratch arrays
// reused by every recomputation. One update event at a time is pending: at each update all flows advance to the
// current time, the flows that are due complete (their messages leave and arrive), then the max-min rates and the
// next finish time are recomputed. Flows that start at the same time share one update.
//
// Max-min fairness by progressive filling: every link with unfrozen flows offers the share (remaining capacity /
// unfrozen flows); the smallest share freezes the flows of its link at that rate and is taken from every other link
// they cross; repeat. A heap of shares (stale entries skipped) makes it O((links + flow-hops) log links).
//
// Two options generalise it to SimGrid's CM02 model (docs/simulation.md, "Checked against SimGrid"): with
// sharing=rtt a flow of h hops has the weight w = 1/h (CM02 shares a link in inverse proportion to the route's
// latency; the topologies here have one latency per link), and with crosstraffic=c it also uses c times its rate on
// every link of the reverse route (SimGrid's network/crosstraffic, the acks, c = 0.05 there). A link's usage is then
// the sum of w (forward) and c w (reverse) over its unfrozen flows, its share cap / usage, and a flow frozen at
// share s gets the rate s w. With the defaults (w = 1, c = 0) the usage is the flow count, exactly as before.
//
// Ranks that share a host (the model's host_beta): each host is one more shared resource of capacity 1 / host_beta
// after the topology's links, on the route of every flow between two of its ranks (max-min shared like a link, not
// counted in the link statistics): the max-rate model's node limit (docs/models.md, "Ranks that share a host").
#include "collplan/sim/flow/flow.hpp"

#include <algorithm>
#include <cmath>
#include <queue>

#include "collplan/sim/common/host.hpp"
#include "collplan/sim/simulate.hpp"

namespace collplan::sim {
namespace {

enum Kind : uint8_t { kBegin = kNetworkKinds, kUpdate };

struct Flow {
    uint32_t msg;
    uint32_t route_begin, route_len;  // into the route pool; the reverse route (crosstraffic) follows it
    double remaining;                 // bytes
    double rate = 0;                  // bytes per ps
    Time finish;
    bool frozen = false;
    uint32_t back_len = 0;            // links of the reverse route
    uint32_t host_len = 0;            // 1: the flow's host resource follows (ranks that share a host)
    double weight = 1;                // max-min weight (sharing=rtt: 1 / hops)
};

class FlowNet final : public Network {
public:
    FlowNet(const Topology& topo, const Model& model, const NetParams& net, SimQueue& q, Host& host, int bins);
    void start(uint32_t id, const Message& m, Time now) override;
    void on_event(Time t, const SimEvent& e) override;
    void finish(SimResult& r, Time end) override;
    size_t state_bytes() const override { return peak_state_; }

private:
    void begin(uint32_t id, Time t);
    void update(Time t);
    void advance(Time t);
    void rates();
    void schedule_update(Time t);
    std::span<const int32_t> route(const Flow& f) const { return {routes_.data() + f.route_begin, f.route_len}; }
    std::span<const int32_t> back(const Flow& f) const {
        return {routes_.data() + f.route_begin + f.route_len, f.back_len};
    }
    std::span<const int32_t> host(const Flow& f) const {
        return {routes_.data() + f.route_begin + f.route_len + f.back_len, f.host_len};
    }

    const Topology& topo_;
    const Model& model_;
    SimQueue& q_;
    Host& host_;
    const double ps_per_byte_;      // link time per byte
    const double host_ps_per_byte_; // a host's channel time per byte (0: none); its resource id: links + host
    const int32_t links_;           // the topology's links (ids below are links, above hosts)
    const bool rtt_;                // sharing=rtt
    const double cross_;            // crosstraffic fraction (0: none)
    std::vector<Flow> flows_;       // active flows (unordered)
    std::vector<int32_t> routes_;   // route pool (compacted when it grows)
    Time last_;                     // flows are advanced up to here
    bool update_pending_ = false;
    Time update_at_;
    // per-link scratch
    std::vector<double> cap_, usage_;
    std::vector<uint32_t> count_, offset_, members_, left_;
    std::vector<int32_t> touched_, changed_;
    std::vector<uint8_t> mark_;
    // statistics
    std::vector<double> link_bytes_;
    DirectionClasses dirs_;
    Timeline timeline_;
    std::vector<double> per_class_;
    size_t peak_state_ = 0;
};

FlowNet::FlowNet(const Topology& topo, const Model& model, const NetParams& net, SimQueue& q, Host& host, int bins)
    : topo_(topo), model_(model), q_(q), host_(host),
      ps_per_byte_((net.link_s_per_byte > 0 ? net.link_s_per_byte : model.per_byte_s()) * 1e12),
      host_ps_per_byte_(model.host_beta * 1e12), links_(topo.num_links()),
      rtt_(net.sharing == Sharing::rtt), cross_(net.crosstraffic),
      dirs_(direction_classes(topo)), timeline_(static_cast<int>(dirs_.names.size()), bins),
      per_class_(dirs_.names.size(), 0.0) {
    if (!(ps_per_byte_ > 0))
        throw Error("simulate flow: link bandwidth is infinite (model per-byte time 0); give link_bw in the network spec");
    const auto L = static_cast<size_t>(topo.num_links());
    const size_t R = L + (model.host_beta > 0 ? static_cast<size_t>(model.host_of(topo.nodes() - 1)) + 1 : 0);
    cap_.assign(R, 0.0);
    usage_.assign(R, 0.0);
    count_.assign(R, 0);
    left_.assign(R, 0);
    mark_.assign(R, 0);
    offset_.assign(R + 1, 0);
    link_bytes_.assign(L, 0.0);
}

void FlowNet::start(uint32_t id, const Message& m, Time now) {
    const int hops = topo_.distance(m.src, m.dst);
    const double b = m.bytes;
    const double fixed =  // the message's latency (with a rendezvous synchronisation), then its bytes as a flow
        std::max(0.0, model_.message(b, hops).recv_done - b * model_.per_byte_s()) + model_.handshake_s(b);
    q_.push(now + Time::seconds(fixed), SimEvent{id, 0, kBegin});
}

void FlowNet::on_event(Time t, const SimEvent& e) {
    if (e.kind == kBegin) return begin(e.a, t);
    if (update_pending_ && t == update_at_) {
        update_pending_ = false;
        update(t);
    }
}

void FlowNet::schedule_update(Time t) {
    if (update_pending_ && update_at_ <= t) return;
    update_pending_ = true;
    update_at_ = t;
    q_.push(t, SimEvent{0, 0, kUpdate});
}

void FlowNet::begin(uint32_t id, Time t) {
    const Message& m = host_.message(id);
    advance(t);
    Flow f{id, static_cast<uint32_t>(routes_.size()), 0, m.bytes};
    for (const Link& l : topo_.route(m.src, m.dst, m.ties)) {
        routes_.push_back(l.id);
        link_bytes_[static_cast<size_t>(l.id)] += m.bytes;  // fractional bytes: see Message
    }
    f.route_len = static_cast<uint32_t>(routes_.size()) - f.route_begin;
    if (rtt_ && f.route_len > 0) f.weight = 1.0 / f.route_len;
    if (cross_ > 0) {
        for (const Link& l : topo_.route(m.dst, m.src)) routes_.push_back(l.id);
        f.back_len = static_cast<uint32_t>(routes_.size()) - f.route_begin - f.route_len;
    }
    if (model_.shares_host(m.src, m.dst)) {
        routes_.push_back(links_ + model_.host_of(m.src));
        f.host_len = 1;
    }
    f.finish = t;
    flows_.push_back(f);
    schedule_update(t);
}

// Moves every flow forward to t at its current rate (and records the bytes per direction class).
void FlowNet::advance(Time t) {
    if (t <= last_) return;
    const double dt = static_cast<double>((t - last_).count_ps());
    std::fill(per_class_.begin(), per_class_.end(), 0.0);
    for (Flow& f : flows_) {
        const double moved = std::min(f.remaining, f.rate * dt);
        f.remaining -= moved;
        if (moved > 0)
            for (int32_t l : route(f)) per_class_[dirs_.link_class[static_cast<size_t>(l)]] += moved;
    }
    for (size_t c = 0; c < per_class_.size(); ++c) timeline_.add(static_cast<int>(c), last_, t, per_class_[c]);
    last_ = t;
}

void FlowNet::update(Time t) {
    advance(t);
    // Complete the flows that are due (their finish time was computed with the rates in force until now).
    std::vector<uint32_t> done;
    for (size_t i = 0; i < flows_.size();) {
        if (flows_[i].finish <= t && flows_[i].rate > 0) {
            done.push_back(flows_[i].msg);
            flows_[i] = flows_.back();
            flows_.pop_back();
        } else {
            ++i;
        }
    }
    if (routes_.size() > 4096 && routes_.size() > 4 * (flows_.size() + 1) * 8) {  // compact the route pool
        std::vector<int32_t> pool;
        for (Flow& f : flows_) {
            const uint32_t b = static_cast<uint32_t>(pool.size());
            pool.insert(pool.end(), routes_.begin() + f.route_begin,
                        routes_.begin() + f.route_begin + f.route_len + f.back_len + f.host_len);
            f.route_begin = b;
        }
        routes_.swap(pool);
    }
    rates();
    Time next = Time::never();
    for (Flow& f : flows_) {
        f.finish = t + Time::ps(static_cast<int64_t>(std::ceil(f.remaining / f.rate - 1e-6)));  // 1e-6 ps: rounding
        next = min(next, f.finish);
    }
    if (next != Time::never()) schedule_update(next);
    peak_state_ = std::max(peak_state_, flows_.capacity() * sizeof(Flow) + routes_.capacity() * 4 +
                                            members_.capacity() * 4 + touched_.capacity() * 4);
    for (uint32_t id : done) host_.message_left(id, t), host_.message_arrived(id, t);
}

void FlowNet::rates() {
    touched_.clear();
    for (const Flow& f : flows_) {
        for (int32_t l : route(f))
            if (count_[l]++ == 0) touched_.push_back(l);
        for (int32_t l : back(f))
            if (count_[l]++ == 0) touched_.push_back(l);
        for (int32_t l : host(f))
            if (count_[l]++ == 0) touched_.push_back(l);
    }
    uint32_t total = 0;
    for (int32_t l : touched_)
        offset_[l] = total, total += count_[l], usage_[l] = 0,
        cap_[l] = 1.0 / (l < links_ ? ps_per_byte_ : host_ps_per_byte_);
    members_.resize(total);
    for (uint32_t i = 0; i < flows_.size(); ++i) {
        Flow& f = flows_[i];
        f.frozen = false;
        for (int32_t l : route(f)) {
            members_[offset_[l]++] = i;
            usage_[l] += f.weight;
        }
        for (int32_t l : back(f)) {
            members_[offset_[l]++] = i;
            usage_[l] += cross_ * f.weight;
        }
        for (int32_t l : host(f)) {
            members_[offset_[l]++] = i;
            usage_[l] += f.weight;
        }
    }
    for (int32_t l : touched_) offset_[l] -= count_[l];  // back to the start of each link's run
    using Item = std::pair<double, int32_t>;
    std::vector<Item> items;
    items.reserve(touched_.size());
    for (int32_t l : touched_) items.emplace_back(cap_[l] / usage_[l], l), left_[l] = count_[l];
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap(std::greater<Item>(), std::move(items));
    std::vector<int32_t> level;
    while (!heap.empty()) {
        // All links whose share is the smallest (to 1e-9 relative) form one level: their flows freeze together,
        // and each link whose share changed goes back into the heap once per level.
        const double share = heap.top().first;
        level.clear();
        while (!heap.empty() && heap.top().first <= share * (1 + 1e-9)) {
            const auto [sh, l] = heap.top();
            heap.pop();
            if (left_[l] > 0 && sh == cap_[l] / usage_[l]) level.push_back(l);  // else stale
        }
        changed_.clear();
        for (int32_t l : level) {
            const double s_l = left_[l] > 0 ? cap_[l] / usage_[l] : share;
            for (uint32_t x = offset_[l]; x < offset_[l] + count_[l]; ++x) {
                Flow& f = flows_[members_[x]];
                if (f.frozen) continue;
                f.frozen = true;
                f.rate = std::max(s_l * f.weight, 1e-18);  // a share worn to 0 by rounding must not stall the flow
                const auto take = [&](int32_t o, double c) {
                    cap_[o] = std::max(0.0, cap_[o] - c * f.rate);
                    usage_[o] = --left_[o] > 0 ? std::max(usage_[o] - c * f.weight, 1e-300) : 0.0;
                    if (!mark_[o]) mark_[o] = 1, changed_.push_back(o);
                };
                for (int32_t o : route(f)) take(o, 1.0);
                for (int32_t o : back(f)) take(o, cross_);
                for (int32_t o : host(f)) take(o, 1.0);
            }
        }
        for (int32_t o : changed_) {
            mark_[o] = 0;
            if (left_[o] > 0) heap.emplace(cap_[o] / usage_[o], o);
        }
    }
    for (int32_t l : touched_) count_[l] = 0;
}

void FlowNet::finish(SimResult& r, Time end) {
    r.link_s_per_byte = ps_per_byte_ * 1e-12;
    r.link_bytes.resize(link_bytes_.size());
    r.link_busy_s.resize(link_bytes_.size());
    for (size_t i = 0; i < link_bytes_.size(); ++i) {
        r.link_bytes[i] = static_cast<uint64_t>(std::llround(link_bytes_[i]));
        r.link_busy_s[i] = link_bytes_[i] * r.link_s_per_byte;
    }
    r.directions = dirs_.names;
    r.link_direction = dirs_.link_class;
    Time w;
    r.direction_bytes = timeline_.finish(end, &w);
    r.bin_s = w.to_seconds();
}

}  // namespace

SimResult simulate_flow(const Schedule& s, const Topology& topo, const Model& model, const NetParams& net,
                        const SimOptions& opt) {
    SimQueue q;
    const int ports = net.ports > 0 ? net.ports : std::max(1, model.ports);
    Host host(s, model, ports, net.node_contention, block_bytes(s, opt.size_bytes, "simulate"), q);
    FlowNet fn(topo, model, net, q, host, opt.time_bins);
    SimResult r;
    host.run(fn, r, opt, "flow");
    fn.finish(r, Time::seconds(r.time_s));
    return r;
}

}  // namespace collplan::sim
