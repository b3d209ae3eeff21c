// The packet network (semantics in packet.hpp and docs/simulation.md).
//
// Channels: ids [0, L) are the topology's directed links, then P * ports injection channels (NIC -> router),
// then P * ports ejection channels (router -> NIC). Every channel but the ejection ones ends in an input buffer of
// `vcs` VCs; its sender (an output port, or a NIC) keeps the credits of those VCs. Events (kinds after the host's):
//   kArrive   a packet's head has reached its router and passed the router pipeline: it may request its output
//   kOutFree  an output port finished a packet (scheduled only when other packets wait for it)
//   kWake     credits came back to an output port or a NIC that was waiting for them, or a NIC may go on
//   kNicReady a message is handed to its NIC (after the software overhead)
//   kDeliver  the last packet of a message has reached the destination NIC
//   kLeft     the last packet of a message has left its NIC
// Returned credits are not events: they are kept with their arrival time and picked up when the sender looks,
// and a wake-up is scheduled only for a sender that waits for them.
#include "collplan/sim/packet/packet.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "collplan/sim/common/host.hpp"
#include "collplan/sim/simulate.hpp"

namespace collplan::sim {
namespace {

enum Kind : uint8_t { kArrive = kNetworkKinds, kOutFree, kWake, kNicReady, kDeliver, kLeft };
constexpr uint32_t kNone = 0xffffffffu;

struct alignas(64) Packet {
    uint32_t msg;      // host message id
    uint32_t bytes;    // on the wire: payload + header
    uint32_t in_ch;    // the channel whose downstream buffer holds the packet now
    uint16_t hop;      // index of the next route hop (its last: eject)
    uint8_t vc;
    bool last;         // the last packet of its message
    bool requested;    // waits in the requests of its next output
    uint32_t held;     // credit bytes it holds in a buffer (the same at every hop)
    uint32_t gen;      // numbers its kArrive events (a stale one is ignored)
    const uint32_t* hops;  // its message's route (PMsg::hops; stays put while the message has packets)
    Time ready;        // may leave its router from then on
    Time tail_in;      // its tail has fully arrived by then
};
static_assert(sizeof(Packet) == 64, "a packet is one cache line");

struct PMsg {
    // The route: per hop (output channel << 1 | VC class of its downstream buffer), the links of the topology's
    // route, then the ejection channel (class 0).
    std::vector<uint32_t> hops;
    uint32_t eject = 0;           // ejection channel
    uint32_t nic = 0;             // global NIC index (= its injection channel - L)
    uint64_t left = 0;            // payload bytes not yet packetised
    uint32_t undelivered = 0;     // packets not yet handed to the ejection channel (including those to come)
    Time delivered;               // when the last of those handed over so far reaches the NIC
    Time interval;                // pacing: least time between the starts of two packets of this message
};

struct Credit {
    Time t;
    uint32_t bytes;
    uint8_t vc;
};


// A packet waiting for an output, with what the arbitration needs (fixed while it waits): its input channel, the
// credit bytes it needs downstream, the VC class it needs there and when it reached the router (FCFS).
struct Request {
    uint32_t p, in_ch;
    int32_t need;
    uint8_t cls;
    Time ready;
};

// The VC of each class downstream of a channel with the most room (the first of equals; -1 if none), and that room.
struct VcChoice {
    int vc[2] = {-1, -1};
    int32_t room[2] = {-1, -1};
    int take(int cls, int32_t need) const { return room[cls] >= need ? vc[cls] : -1; }
};

// What a channel does in time; the same for every channel of a kind (links, injection, ejection channels).
struct Timing {
    double ps_per_byte = 0;
    Time latency;                     // wire delay (links only)
    Time flit_time, full_time;        // xfer() of one flit and of a full packet (mtu + header), computed once
};
enum ChannelKind : uint8_t { kLinkCh, kInjectCh, kEjectCh };

// A channel's state, two to a cache line; its lists (below) live in Lists, at a place known from its id.
struct alignas(32) Channel {
    Time busy_until;
    Time next_credit = Time::never();  // the earliest time among its returning credits
    uint32_t rr = 0;                  // round-robin pointer over input channels
    uint32_t requests = 0;            // packets waiting for this output (Lists `requests_`)
    uint32_t returning = 0;           // credits on their way back to this channel's sender (Lists `returning_`)
    bool free_pending = false, stalled = false, wake_pending = false;
    uint8_t kind = kLinkCh;
};
static_assert(sizeof(Channel) == 32);

// Per channel a short list of T (its length kept by the channel), in `k` slots of one flat array: where a channel's
// list lies follows from its id alone, so it is prefetched with the channel and needs no pointer of its own. When a
// list outgrows `k`, every channel's room doubles (the lists keep their order).
template <class T>
class Lists {
public:
    void init(size_t channels, uint32_t k) { k_ = k, slots_.assign(channels * k, T{}); }
    T* of(uint32_t ch) { return slots_.data() + static_cast<size_t>(ch) * k_; }
    const T* of(uint32_t ch) const { return slots_.data() + static_cast<size_t>(ch) * k_; }
    void push(uint32_t ch, uint32_t& n, const T& x) {
        if (n == k_) grow();
        of(ch)[n++] = x;
    }
    void remove(uint32_t ch, uint32_t& n, uint32_t i) {  // the last one takes its place
        T* l = of(ch);
        l[i] = l[--n];
    }
    void erase(uint32_t ch, uint32_t& n, const T& x) {  // the first x; the rest keep their order
        T* l = of(ch);
        T* e = std::find(l, l + n, x);
        std::copy(e + 1, l + n, e);
        --n;
    }
    size_t bytes() const { return slots_.capacity() * sizeof(T); }

private:
    void grow() {
        std::vector<T> s(slots_.size() * 2);
        for (size_t c = 0; c < slots_.size() / k_; ++c) std::copy_n(slots_.data() + c * k_, k_, s.data() + c * 2 * k_);
        slots_.swap(s);
        k_ *= 2;
    }
    std::vector<T> slots_;
    uint32_t k_ = 1;
};

struct Nic {
    std::deque<uint32_t> queue;       // messages, in order
    Time next_allowed;                // pacing
};

}  // namespace

// pacing=load (packet.hpp): per send op, n = the largest load its fence group puts on a link of its route, in
// units of the send's own size, and w = (c - 1) h, c = the most input channels (the previous link of a route, or a
// NIC's injection port) from which messages of the group enter one link of its route, h = its hops. Groups: the
// ops of a rank between two fences, numbered from 0 on every rank, and group g of every rank taken together (an
// SPMD schedule's step). Each group is routed on its own (three passes over its sends: add, take the maxima,
// remove), so the work is three routes per send and the memory a counter per link, whatever the number of groups.
// A global barrier re-aligns the numbering: a group is (barriers before it, fences since the last barrier), so a
// rank with nothing to do in a barrier-separated step (an A2AT mesh node without a partner) does not shift it.
LoadShares load_shares(const Schedule& s, const Topology& topo) {
    LoadShares out;
    const int P = s.ranks();
    const auto L = static_cast<uint32_t>(topo.num_links());
    out.begin.assign(static_cast<size_t>(P) + 1, 0);
    for (int r = 0; r < P; ++r) out.begin[r + 1] = out.begin[r] + s.program(r).ops.size();
    out.share.assign(out.begin[P], 0.0f);
    out.waits.assign(out.begin[P], 0.0f);
    struct Send {
        uint64_t group;
        int32_t rank;
        uint32_t op;
    };
    std::vector<Send> sends;
    for (int r = 0; r < P; ++r) {
        const RankProgram& prog = s.program(r);
        uint32_t barriers = 0, fences = 0;
        for (uint32_t k = 0; k < prog.ops.size(); ++k) {
            const Op& op = prog.ops[k];
            if (op.kind == OpKind::barrier) ++barriers, fences = 0;
            else if (k > 0 && op.fence()) ++fences;
            if (op.kind == OpKind::send) sends.push_back({uint64_t{barriers} << 32 | fences, r, k});
        }
    }
    std::stable_sort(sends.begin(), sends.end(), [](const Send& a, const Send& b) { return a.group < b.group; });
    std::vector<uint64_t> load(L, 0);
    std::vector<uint32_t> inputs(L, 0);                  // per link: input channels feeding it in this group
    std::vector<std::pair<uint32_t, uint32_t>> feeds;    // (link, input channel) of this group
    for (size_t lo = 0; lo < sends.size();) {
        size_t hi = lo;
        while (hi < sends.size() && sends[hi].group == sends[lo].group) ++hi;
        feeds.clear();
        for (int pass = 0; pass < 3; ++pass) {
            for (size_t i = lo; i < hi; ++i) {
                const Op& op = s.program(sends[i].rank).ops[sends[i].op];
                const uint64_t units = s.op(sends[i].rank, sends[i].op).units;
                const std::vector<Link> route = topo.route(sends[i].rank, op.peer, op.ties);
                uint64_t most = 0;
                uint32_t widest = 0, prev = L + static_cast<uint32_t>(std::max<int>(op.port, 0));  // injection
                for (const Link& l : route) {
                    const auto id = static_cast<uint32_t>(l.id);
                    if (pass == 0) load[id] += units, feeds.emplace_back(id, prev);
                    else if (pass == 1) most = std::max(most, load[id]), widest = std::max(widest, inputs[id]);
                    else load[id] -= units, inputs[id] = 0;
                    prev = id;
                }
                if (pass == 1 && units > 0) {
                    const size_t at = out.begin[sends[i].rank] + sends[i].op;
                    out.share[at] = static_cast<float>(static_cast<double>(most) / static_cast<double>(units));
                    const uint32_t c = std::max<uint32_t>(widest, 1);
                    out.waits[at] = static_cast<float>((c - 1) * route.size());
                }
            }
            if (pass == 0) {  // distinct inputs per link
                std::sort(feeds.begin(), feeds.end());
                feeds.erase(std::unique(feeds.begin(), feeds.end()), feeds.end());
                for (const auto& f : feeds) ++inputs[f.first];
            }
        }
        lo = hi;
    }
    return out;
}

namespace {

class PacketNet final : public Network {
public:
    PacketNet(const Topology& topo, const NetParams& net, int ports, SimQueue& q, Host& host, const SimOptions& opt,
              LoadShares shares);
    void start(uint32_t id, const Message& m, Time now) override;
    void on_event(Time t, const SimEvent& e) override;
    void prefetch(const SimQueue::Entry& e, int stage) const;
    void finish(SimResult& r, Time end) override;
    size_t state_bytes() const override;
    std::string stuck() const override;

private:
    uint32_t inj(int node, int j) const { return L_ + static_cast<uint32_t>(node * ports_ + j); }
    uint32_t ej(int node, int j) const { return L_ + static_cast<uint32_t>((P_ + node) * ports_ + j); }
    bool is_eject(uint32_t ch) const { return ch >= L_ + static_cast<uint32_t>(P_ * ports_); }
    bool is_inject(uint32_t ch) const { return ch >= L_ && !is_eject(ch); }
    size_t at(uint32_t ch, int vc) const { return static_cast<size_t>(ch) * vcs_ + vc; }
    uint32_t next_out(const Packet& p) const;
    uint32_t flits(uint32_t bytes) const { return static_cast<uint32_t>((bytes + flit_ - 1) / flit_ * flit_); }
    // Credit bytes a packet of `bytes` needs (and holds) in a downstream VC.
    int32_t need(uint32_t bytes) const {
        return static_cast<int32_t>(net_.switching == Switching::wormhole ? std::min<uint64_t>(flits(bytes), net_.buffer / flit_ * flit_)
                                                                          : flits(bytes));
    }
    Time packet_time(const Timing& c, uint32_t bytes) const {  // a packet on a channel, full ones looked up
        return bytes == full_bytes_ ? c.full_time : bytes_time(static_cast<double>(bytes), c.ps_per_byte);
    }

    void classify_links(const Topology& topo);
    void route(PMsg& pm, const Message& m) const;
    void try_nic(uint32_t ch, Time now);
    void inject(uint32_t ch, uint32_t id, int vc, Time now);
    void arrive(uint32_t p, Time now);
    void request(uint32_t p, Time now);
    void try_output(uint32_t ch, Time now);
    int pick(uint32_t ch, Time now, int* vc_out);
    int choose_vc(uint32_t ch, int cls, uint32_t bytes, Time now);
    VcChoice best_vcs(uint32_t ch, Time now);
    void transmit(uint32_t ch, uint32_t p, int vc, Time now);
    void leave_buffer(uint32_t p, Time tail_out, Time now);
    void take_credits(uint32_t ch, Time now);
    void take_due_credits(uint32_t ch, Time now);
    void wait_for_credits(uint32_t ch, Time now);
    void wake(uint32_t ch, Time t);
    void deliver(uint32_t p, Time now);
    uint32_t new_packet();

    const NetParams net_;
    SimQueue& q_;
    Host& host_;
    const int P_, ports_, vcs_;
    const uint32_t L_;
    const uint64_t flit_;
    const uint32_t full_bytes_;   // a full packet: mtu + header
    const bool split_;            // dateline classes on a torus
    const Time router_latency_;
    const Time overhead_;
    const double link_ps_per_byte_;
    const Topology& topo_;
    uint64_t rng_;
    std::vector<uint8_t> link_dim_, link_wrap_;
    std::vector<Channel> ch_;
    Timing timing_[3];                             // by ChannelKind
    Lists<Request> requests_;
    Lists<Credit> returning_;
    std::vector<int32_t> credits_;                 // per channel x VC: free bytes downstream, as the sender sees it
    Lists<uint32_t> fifo_;                         // per channel x VC: packets in the downstream buffer
    std::vector<uint32_t> fifo_len_;
    std::vector<uint32_t> owner_;                  // wormhole: the packet that owns a VC
    std::vector<Nic> nics_;
    std::vector<PMsg> msgs_;                       // by host message id
    std::vector<Packet> packets_;
    std::vector<uint32_t> free_packets_;
    uint64_t packets_made_ = 0;
    size_t live_packets_ = 0, peak_packets_ = 0;
    // statistics
    std::vector<uint64_t> link_bytes_;
    std::vector<int64_t> link_busy_ps_;
    DirectionClasses dirs_;
    Timeline timeline_;
    LoadShares shares_;                            // pacing=load
};

PacketNet::PacketNet(const Topology& topo, const NetParams& net, int ports, SimQueue& q, Host& host,
                     const SimOptions& opt, LoadShares shares)
    : net_(net), q_(q), host_(host), P_(topo.nodes()), ports_(ports), vcs_(net.vcs),
      L_(static_cast<uint32_t>(topo.num_links())), flit_(net.flit),
      full_bytes_(static_cast<uint32_t>(net.mtu + net.header)),
      split_(net.dateline && (topo.kind() == TopoKind::torus || topo.kind() == TopoKind::ring)),
      router_latency_(Time::seconds(net.router_latency_s)), overhead_(Time::seconds(net.overhead_s)),
      link_ps_per_byte_(net.link_s_per_byte * 1e12), topo_(topo), rng_(opt.seed * 0x9e3779b97f4a7c15ull + 1),
      dirs_(direction_classes(topo)), timeline_(static_cast<int>(dirs_.names.size()), opt.time_bins),
      shares_(std::move(shares)) {
    if (split_ && vcs_ < 2)
        throw Error("simulate packet: a torus with dateline=1 needs vcs >= 2 (got " + std::to_string(vcs_) + ")");
    if (net.switching == Switching::vct && flits(static_cast<uint32_t>(net.mtu + net.header)) > net.buffer)
        throw Error("simulate packet: a packet of " + std::to_string(net.mtu + net.header) + "B does not fit a VC buffer of " +
                    std::to_string(net.buffer) + "B (allowed with switching=vct: buffer >= mtu + header)");
    const size_t n = L_ + 2 * static_cast<size_t>(P_) * ports_;
    ch_.resize(n);
    const double ps[3] = {link_ps_per_byte_,
                          (net.inject_s_per_byte > 0 ? net.inject_s_per_byte : net.link_s_per_byte) * 1e12,
                          (net.eject_s_per_byte > 0 ? net.eject_s_per_byte : net.link_s_per_byte) * 1e12};
    for (int k = 0; k < 3; ++k) {
        timing_[k].ps_per_byte = ps[k];
        timing_[k].latency = k == kLinkCh ? Time::seconds(net.link_latency_s) : Time::zero();
        timing_[k].flit_time = bytes_time(static_cast<double>(flit_), ps[k]);
        timing_[k].full_time = bytes_time(static_cast<double>(full_bytes_), ps[k]);
    }
    for (size_t c = 0; c < n; ++c)
        ch_[c].kind = c < L_ ? kLinkCh : is_eject(static_cast<uint32_t>(c)) ? kEjectCh : kInjectCh;
    requests_.init(n, 4);
    returning_.init(n, 4);
    credits_.assign(n * vcs_, static_cast<int32_t>(net.buffer / flit_ * flit_));
    if (!net.voq) fifo_.init(n * vcs_, 4), fifo_len_.assign(n * vcs_, 0);
    if (net.switching == Switching::wormhole) owner_.assign(n * vcs_, kNone);
    nics_.resize(static_cast<size_t>(P_) * ports_);
    link_bytes_.assign(L_, 0);
    link_busy_ps_.assign(L_, 0);
    classify_links(topo);
}

// Per link: its dimension and whether it is a torus wrap-around (the dateline of its ring).
void PacketNet::classify_links(const Topology& topo) {
    link_dim_.assign(L_, 0);
    link_wrap_.assign(L_, 0);
    if (!split_) return;
    for (uint32_t i = 0; i < L_; ++i) {
        const Link l = topo.link(static_cast<int>(i));
        const std::vector<int> a = topo.coords(l.from), b = topo.coords(l.to);
        size_t d = 0;
        while (d + 1 < a.size() && a[d] == b[d]) ++d;
        const int side = topo.dims()[d];
        link_dim_[i] = static_cast<uint8_t>(d);
        link_wrap_[i] = side > 2 && std::abs(a[d] - b[d]) == side - 1;
    }
}

size_t PacketNet::state_bytes() const {
    size_t b = ch_.capacity() * sizeof(Channel) + requests_.bytes() + returning_.bytes() + credits_.capacity() * 4 + fifo_.bytes() + fifo_len_.capacity() * 4 +
               owner_.capacity() * 4 + nics_.capacity() * sizeof(Nic) + msgs_.capacity() * sizeof(PMsg) +
               peak_packets_ * sizeof(Packet) + (link_bytes_.capacity() + link_busy_ps_.capacity()) * 8;
    for (const PMsg& m : msgs_) b += m.hops.capacity() * 4;
    return b;
}

std::string PacketNet::stuck() const {
    if (live_packets_ == 0) return "";
    return "packet network deadlocked with " + std::to_string(live_packets_) + " packets in its buffers" +
           (topo_.kind() == TopoKind::torus || topo_.kind() == TopoKind::ring
                ? " (a torus needs dateline=1 and vcs >= 2)" : "");
}

uint32_t PacketNet::next_out(const Packet& p) const { return p.hops[p.hop] >> 1; }

// The route's hops, then the ejection channel `pm.eject`.
void PacketNet::route(PMsg& pm, const Message& m) const {
    pm.hops.clear();
    int dim = -1;
    uint32_t cls = 0;
    for (const Link& l : topo_.route(m.src, m.dst, m.ties)) {
        if (split_) {
            if (link_dim_[l.id] != dim) dim = link_dim_[l.id], cls = 0;
            if (link_wrap_[l.id]) cls = 1;
        }
        pm.hops.push_back(static_cast<uint32_t>(l.id) << 1 | cls);
    }
    pm.hops.push_back(pm.eject << 1);
}

void PacketNet::start(uint32_t id, const Message& m, Time now) {
    if (msgs_.size() <= id) msgs_.resize(id + 1);
    PMsg& pm = msgs_[id];
    const int j = m.send_port;
    const int ej_port = m.recv_port_hint >= 0 ? m.recv_port_hint % ports_ : j;
    pm.eject = ej(m.dst, ej_port);
    route(pm, m);
    pm.nic = inj(m.src, j) - L_;
    pm.left = static_cast<uint64_t>(std::ceil(m.bytes - 1e-9));
    pm.delivered = now;
    pm.undelivered = static_cast<uint32_t>(std::max<uint64_t>(1, (pm.left + net_.mtu - 1) / net_.mtu));
    const double full = static_cast<double>(std::min<uint64_t>(pm.left, net_.mtu) + net_.header);
    if (net_.pacing == Pacing::hops)
        pm.interval = bytes_time(full * net_.pacing_factor * static_cast<double>(pm.hops.size() - 1), link_ps_per_byte_);
    else if (net_.pacing == Pacing::load)
        pm.interval = bytes_time(full * net_.pacing_factor * shares_.of(m.src, m.send_op) *
                                     (1 + shares_.waits_of(m.src, m.send_op) / static_cast<double>(pm.undelivered)),
                                 link_ps_per_byte_);
    q_.push(now + overhead_, SimEvent{id, 0, kNicReady});
}

// What an upcoming event will touch, loaded in stages (each reads only what an earlier stage prefetched): a packet
// or a channel, then its next output channel, then that channel's request and credit lists.
void PacketNet::prefetch(const SimQueue::Entry& e, int stage) const {
    const uint8_t kind = static_cast<uint8_t>(e.seq_kind & 0xff);
    uint32_t ch;
    if (kind == kArrive) {
        const Packet& k = packets_[e.a];
        if (stage == 0) return __builtin_prefetch(&k);
        __builtin_prefetch(&ch_[k.in_ch]);
        __builtin_prefetch(returning_.of(k.in_ch));
        if (!net_.voq) __builtin_prefetch(fifo_.of(static_cast<uint32_t>(at(k.in_ch, k.vc))));
        ch = k.hops[k.hop] >> 1;
    } else if (kind == kOutFree || kind == kWake) {
        ch = e.a;
    } else {
        return;
    }
    if (stage == 0) return;
    __builtin_prefetch(&ch_[ch]);
    __builtin_prefetch(requests_.of(ch));
    __builtin_prefetch(returning_.of(ch));
    __builtin_prefetch(&credits_[at(ch, 0)]);
}

void PacketNet::on_event(Time t, const SimEvent& e) {
    if (const auto* f = q_.upcoming(8)) prefetch(*f, 0);
    if (const auto* f = q_.upcoming(4)) prefetch(*f, 1);
    switch (e.kind) {
        case kArrive: return packets_[e.a].gen == e.b ? arrive(e.a, t) : void();
        case kOutFree: ch_[e.a].free_pending = false; return try_output(e.a, t);
        case kWake:
            ch_[e.a].wake_pending = false;
            return is_inject(e.a) ? try_nic(e.a, t) : try_output(e.a, t);
        case kNicReady: {
            const uint32_t c = L_ + msgs_[e.a].nic;
            nics_[msgs_[e.a].nic].queue.push_back(e.a);
            return try_nic(c, t);
        }
        case kDeliver: return host_.message_arrived(e.a, t);
        case kLeft: return host_.message_left(e.a, t);
        default: return;
    }
}

void PacketNet::wake(uint32_t ch, Time t) {
    Channel& c = ch_[ch];
    if (c.wake_pending) return;
    c.wake_pending = true;
    q_.push(t, SimEvent{ch, 0, kWake});
}

inline void PacketNet::take_credits(uint32_t ch, Time now) {
    if (ch_[ch].next_credit > now) return;
    take_due_credits(ch, now);
}

void PacketNet::take_due_credits(uint32_t ch, Time now) {
    Channel& c = ch_[ch];
    Credit* r = returning_.of(ch);
    Time next = Time::never();
    for (uint32_t i = 0; i < c.returning;) {
        if (r[i].t <= now) {
            credits_[at(ch, r[i].vc)] += static_cast<int32_t>(r[i].bytes);
            if (!owner_.empty()) owner_[at(ch, r[i].vc)] = kNone;  // wormhole: the VC is free again
            returning_.remove(ch, c.returning, i);
        } else {
            next = min(next, r[i].t);
            ++i;
        }
    }
    c.next_credit = next;
}

// The sender of `ch` found no credit: wake it when the next returning credit arrives (or when one is created).
void PacketNet::wait_for_credits(uint32_t ch, Time now) {
    Channel& c = ch_[ch];
    c.stalled = true;
    if (c.next_credit != Time::never()) wake(ch, max(c.next_credit, now));
}

// Per VC class downstream of `ch` (after taking the returned credits): the free VC with the most room, the first of
// equals. A packet can go iff that VC has room for it (if any VC of the class has, this one has), so one look per
// class serves every waiting packet. Ejection channels have no buffer: VC 0, unlimited room.
VcChoice PacketNet::best_vcs(uint32_t ch, Time now) {
    VcChoice c;
    if (is_eject(ch)) {
        c.vc[0] = c.vc[1] = 0;
        c.room[0] = c.room[1] = std::numeric_limits<int32_t>::max();
        return c;
    }
    take_credits(ch, now);
    if (split_ && vcs_ == 2 && owner_.empty()) {  // a torus's usual case: one VC per class
        c.vc[0] = 0, c.vc[1] = 1;
        c.room[0] = credits_[at(ch, 0)], c.room[1] = credits_[at(ch, 1)];
        return c;
    }
    for (int cls = 0; cls < (split_ ? 2 : 1); ++cls) {
        const int lo = split_ ? cls * (vcs_ / 2) : 0, hi = split_ ? (cls + 1) * (vcs_ / 2) : vcs_;
        for (int v = lo; v < hi; ++v) {
            if (!owner_.empty() && owner_[at(ch, v)] != kNone) continue;
            if (c.vc[cls] < 0 || credits_[at(ch, v)] > c.room[cls]) c.vc[cls] = v, c.room[cls] = credits_[at(ch, v)];
        }
    }
    return c;
}

// A VC of class `cls` downstream of `ch` that can take `bytes` now, the one with most room; -1 if none.
int PacketNet::choose_vc(uint32_t ch, int cls, uint32_t bytes, Time now) {
    return best_vcs(ch, now).take(cls, need(bytes));
}

uint32_t PacketNet::new_packet() {
    ++packets_made_;
    peak_packets_ = std::max(peak_packets_, ++live_packets_);
    if (!free_packets_.empty()) {
        const uint32_t p = free_packets_.back();
        free_packets_.pop_back();
        return p;
    }
    packets_.emplace_back();
    return static_cast<uint32_t>(packets_.size() - 1);
}

// NIC `ch - L` sends the next packet of its first message when its channel, its pacing and a VC allow.
void PacketNet::try_nic(uint32_t ch, Time now) {
    Nic& n = nics_[ch - L_];
    Channel& c = ch_[ch];
    if (n.queue.empty()) return;
    if (c.busy_until > now || n.next_allowed > now) return wake(ch, max(c.busy_until, n.next_allowed));
    const uint32_t id = n.queue.front();
    const uint64_t payload = std::min<uint64_t>(msgs_[id].left, net_.mtu);
    const int vc = choose_vc(ch, 0, static_cast<uint32_t>(payload + net_.header), now);
    if (vc < 0) return wait_for_credits(ch, now);
    c.stalled = false;
    inject(ch, id, vc, now);
}

void PacketNet::inject(uint32_t ch, uint32_t id, int vc, Time now) {
    PMsg& pm = msgs_[id];
    Nic& n = nics_[ch - L_];
    Channel& c = ch_[ch];
    const uint64_t payload = std::min<uint64_t>(pm.left, net_.mtu);
    pm.left -= payload;
    const uint32_t p = new_packet();
    Packet& k = packets_[p];
    k.msg = id;
    k.bytes = static_cast<uint32_t>(payload + net_.header);
    k.in_ch = ch;
    k.hop = 0;
    k.vc = static_cast<uint8_t>(vc);
    k.last = pm.left == 0;
    k.requested = false;
    k.held = static_cast<uint32_t>(need(k.bytes));
    k.hops = pm.hops.data();
    credits_[at(ch, vc)] -= static_cast<int32_t>(k.held);
    if (!owner_.empty()) owner_[at(ch, vc)] = p;
    if (!net_.voq) fifo_.push(static_cast<uint32_t>(at(ch, vc)), fifo_len_[at(ch, vc)], p);
    const Timing& tm = timing_[kInjectCh];
    const Time end = now + packet_time(tm, k.bytes);
    c.busy_until = end;
    k.ready = now + tm.flit_time + router_latency_;
    k.tail_in = end;
    q_.push(k.ready, SimEvent{p, ++k.gen, kArrive});
    if (net_.pacing == Pacing::gap) n.next_allowed = end + Time::seconds(net_.pacing_gap_s);
    else if (net_.pacing == Pacing::hops || net_.pacing == Pacing::load) n.next_allowed = max(end, now + pm.interval);
    else n.next_allowed = end;
    if (k.last) {
        q_.push(end, SimEvent{id, 0, kLeft});
        n.queue.pop_front();
    }
    if (!n.queue.empty()) wake(ch, max(c.busy_until, n.next_allowed));
}

void PacketNet::arrive(uint32_t p, Time now) {
    const Packet& k = packets_[p];
    if (k.requested) return;
    if (net_.voq) return request(p, now);
    const auto f = static_cast<uint32_t>(at(k.in_ch, k.vc));
    if (fifo_len_[f] > 0 && fifo_.of(f)[0] == p) request(p, now);
}

void PacketNet::request(uint32_t p, Time now) {
    Packet& k = packets_[p];
    const uint32_t out = next_out(k);
    k.requested = true;
    const uint8_t cls = static_cast<uint8_t>(k.hops[k.hop] & 1);
    requests_.push(out, ch_[out].requests, Request{p, k.in_ch, static_cast<int32_t>(k.held), cls, k.ready});
    try_output(out, now);
}

void PacketNet::try_output(uint32_t ch, Time now) {
    Channel& c = ch_[ch];
    if (c.requests == 0) return;
    if (c.busy_until > now) {
        if (!c.free_pending) c.free_pending = true, q_.push(c.busy_until, SimEvent{ch, 0, kOutFree});
        return;
    }
    int vc = -1;
    const int i = pick(ch, now, &vc);
    if (i < 0) return wait_for_credits(ch, now);
    c.stalled = false;
    const uint32_t p = requests_.of(ch)[i].p;
    requests_.remove(ch, c.requests, static_cast<uint32_t>(i));
    transmit(ch, p, vc, now);
}

// The waiting packet that gets output `ch` now: round robin over input channels after the last one served
// (or at random), among those whose next buffer has room. Returns its index in the requests, -1 if none can go.
int PacketNet::pick(uint32_t ch, Time now, int* vc_out) {
    const Channel& c = ch_[ch];
    int best = -1, count = 0;
    uint32_t best_key = 0;
    Time best_ready;
    const bool fcfs = net_.arbitration == Arbitration::fcfs;
    const VcChoice room = best_vcs(ch, now);
    const Request* requests = requests_.of(ch);
    for (uint32_t i = 0; i < c.requests; ++i) {
        const Request& k = requests[i];
        const int vc = room.take(k.cls, k.need);
        if (vc < 0) continue;
        const uint32_t key = k.in_ch - c.rr - 1;  // rotation: the input after the last one served first
        bool take = best < 0 || key < best_key;
        Time ready;
        if (fcfs) {  // the earliest arrival at the router first, rotation among equals
            ready = k.ready;
            take = best < 0 || ready < best_ready || (ready == best_ready && key < best_key);
        }
        if (net_.arbitration == Arbitration::random) {  // reservoir sampling over the eligible ones
            rng_ ^= rng_ << 13, rng_ ^= rng_ >> 7, rng_ ^= rng_ << 17;
            take = rng_ % static_cast<uint64_t>(++count) == 0;
        }
        if (take) best = static_cast<int>(i), best_key = key, best_ready = ready, *vc_out = vc;
    }
    return best;
}

void PacketNet::transmit(uint32_t ch, uint32_t p, int vc, Time now) {
    Channel& c = ch_[ch];
    Packet& k = packets_[p];
    k.requested = false;
    ++k.gen;  // a kArrive still queued for this hop (it was requested early, at the same time) is stale now
    const Timing& tm = timing_[c.kind];
    const Time end = max(now + packet_time(tm, k.bytes), k.tail_in);
    c.busy_until = end;
    c.rr = k.in_ch;
    if (c.requests > 0 && !c.free_pending) c.free_pending = true, q_.push(end, SimEvent{ch, 0, kOutFree});
    if (ch < L_) {
        link_bytes_[ch] += k.bytes;
        link_busy_ps_[ch] += (end - now).count_ps();
        timeline_.add(dirs_.link_class[ch], now, end, k.bytes);
    }
    leave_buffer(p, end, now);
    if (is_eject(ch)) return deliver(p, end);
    credits_[at(ch, vc)] -= static_cast<int32_t>(k.held);
    if (!owner_.empty()) owner_[at(ch, vc)] = p;
    if (!net_.voq) fifo_.push(static_cast<uint32_t>(at(ch, vc)), fifo_len_[at(ch, vc)], p);
    k.in_ch = ch;
    k.vc = static_cast<uint8_t>(vc);
    ++k.hop;
    k.ready = now + tm.flit_time + tm.latency + router_latency_;
    k.tail_in = end + tm.latency;
    q_.push(k.ready, SimEvent{p, k.gen, kArrive});
}

// Packet p starts leaving its buffer now; its tail is out at `tail_out`. The credit goes back to the buffer's
// sender, and without virtual output queues the next packet of that VC may compete for its output (the FIFOs of
// the buffers are kept only then: with virtual output queues nothing reads them).
void PacketNet::leave_buffer(uint32_t p, Time tail_out, Time now) {
    const Packet& k = packets_[p];
    const uint32_t in = k.in_ch;
    const Time back = tail_out + timing_[ch_[in].kind].latency;
    returning_.push(in, ch_[in].returning, Credit{back, k.held, k.vc});
    ch_[in].next_credit = min(ch_[in].next_credit, back);
    if (ch_[in].stalled) wake(in, back);
    if (net_.voq) return;
    const auto f = static_cast<uint32_t>(at(in, k.vc));
    fifo_.erase(f, fifo_len_[f], p);
    if (fifo_len_[f] == 0) return;
    const uint32_t head = fifo_.of(f)[0];
    if (!packets_[head].requested && packets_[head].ready <= now) request(head, now);
}

// Packet p is on the ejection channel, its tail reaches the NIC at `end`; it needs no more events. The message
// arrives when its last packet has (one event per message, not per packet).
void PacketNet::deliver(uint32_t p, Time end) {
    const uint32_t id = packets_[p].msg;
    ++packets_[p].gen;
    free_packets_.push_back(p);
    --live_packets_;
    PMsg& m = msgs_[id];
    m.delivered = max(m.delivered, end);
    if (--m.undelivered == 0) q_.push(m.delivered, SimEvent{id, 0, kDeliver});
}

void PacketNet::finish(SimResult& r, Time end) {
    (void)end;
    r.packets = packets_made_;
    r.link_s_per_byte = link_ps_per_byte_ * 1e-12;
    r.link_bytes = link_bytes_;
    r.link_busy_s.resize(L_);
    for (uint32_t i = 0; i < L_; ++i) r.link_busy_s[i] = static_cast<double>(link_busy_ps_[i]) * 1e-12;
    r.directions = dirs_.names;
    r.link_direction = dirs_.link_class;
    Time w;
    r.direction_bytes = timeline_.finish(Time::seconds(r.time_s), &w);
    r.bin_s = w.to_seconds();
}

}  // namespace

SimResult simulate_packet(const Schedule& s, const Topology& topo, const Model& model, const NetParams& given,
                          const SimOptions& opt) {
    NetParams net = given;
    if (!(net.link_s_per_byte > 0)) net.link_s_per_byte = model.per_byte_s();
    if (!(net.link_s_per_byte > 0))
        throw Error("simulate packet: link bandwidth is infinite (model per-byte time 0); give link_bw in the network spec");
    const int ports = net.ports > 0 ? net.ports : std::max(1, model.ports);
    SimQueue q;
    Host host(s, model, ports, false, block_bytes(s, opt.size_bytes, "simulate"), q);
    PacketNet pn(topo, net, ports, q, host, opt, net.pacing == Pacing::load ? load_shares(s, topo) : LoadShares{});
    SimResult r;
    host.run(pn, r, opt, "packet");
    pn.finish(r, Time::seconds(r.time_s));
    return r;
}

}  // namespace collplan::sim
