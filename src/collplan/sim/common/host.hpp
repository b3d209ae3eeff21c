// The host side of the flow and packet simulators: it walks every rank's program (groups, dependencies), runs
// local ops on the rank's CPU, matches sends with recvs, holds a node's ports, and hands each matched message to
// a Network. The two small interfaces (htsim's idea): a Network takes messages and reports when their last byte
// has left the sender and when it has arrived; the Host owns the one event queue and dispatches network events
// back to the Network.
//
// Semantics (docs/simulation.md, "flow and packet: hosts"), the estimate's where they overlap:
// - An op is ready when every op of the earlier groups and its explicit dependencies have completed.
// - copy/reduce/calc run one at a time on the rank's CPU (first come, first served) for the model's time.
// - A matched pair (both ops ready) asks for a send port of the sender (op.port mod ports, or any free one when the
//   op names none; first come, first served per port) and, with node_contention, then for a receive port of the
//   receiver; holding them, it starts on the network. The send op completes (and frees its port) when the network
//   says the message has left, the recv op (and its port) when the message has arrived.
// - The k-th barrier of every rank completes at the latest arrival plus the model's barrier_s(P).
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "collplan/model/model.hpp"
#include "collplan/schedule/schedule.hpp"
#include "collplan/sim/common/run_queue.hpp"
#include "collplan/schedule/walk.hpp"
#include "collplan/sim/common/result.hpp"

namespace collplan::sim {

// A rank's program streamed with simulated time (schedule/walk.hpp).
using TimedCursor = collplan::TimedCursor<Time>;

struct SimOptions;

struct SimEvent {
    uint32_t a;
    uint32_t b;
    uint8_t kind;  // < kNetworkKinds: the host's; the rest the network's
};
inline constexpr uint8_t kNetworkKinds = 8;
using SimQueue = RunQueue<SimEvent>;

struct Message {
    int32_t src, dst;
    double bytes;              // units * m, not rounded (the flow network is exact; the packet network rounds up)
    int send_port, recv_port;  // the ports the host holds for it (recv_port -1 without node contention)
    int recv_port_hint;        // the recv op's port (kAnyPort: none)
    uint8_t ties;              // the send's torus route hint (Op::ties, for Topology::route)
    uint32_t send_op;          // the send's index in the sender's program
};

class Host;

class Network {
public:
    virtual ~Network() = default;
    // Message `id` starts at `now`; call host.message_left(id, t) and host.message_arrived(id, t) later.
    virtual void start(uint32_t id, const Message& m, Time now) = 0;
    virtual void on_event(Time t, const SimEvent& e) = 0;
    virtual void finish(SimResult& r, Time end) = 0;   // fills the network's statistics
    virtual size_t state_bytes() const = 0;
    // Why the network holds messages that can never arrive ("" when it does not, e.g. a deadlock of buffers).
    virtual std::string stuck() const { return ""; }
};

class Host {
public:
    Host(const Schedule& s, const Model& model, int ports, bool recv_ports, double block_bytes, SimQueue& q);
    // Runs the schedule to completion on `net`; fills the host's part of the result.
    void run(Network& net, SimResult& r, const SimOptions& opt, const char* what);

    void message_left(uint32_t id, Time t);
    void message_arrived(uint32_t id, Time t);
    const Message& message(uint32_t id) const { return msgs_[id].m; }
    Time now() const { return now_; }

private:
    enum Kind : uint8_t { kLocalDone = 0, kBarrierDone = 1 };
    struct HostMsg {
        Message m;
        uint32_t send_op, recv_op;
        bool waiting_recv_port;
        uint8_t pending;  // message_left and message_arrived still to come
    };
    struct PortSet {  // one node's send (or receive) ports
        std::vector<uint8_t> busy;
        std::vector<std::deque<uint32_t>> pinned;  // per port: messages waiting for it
        std::deque<uint32_t> any;                  // messages that take any port
    };
    size_t grown_bytes(const Network& net) const;  // the state that grows while running
    void ready_ops(int r, const std::vector<uint32_t>& ks);
    void post(int r, uint32_t k);
    void matched(int sender, uint32_t send_op, uint32_t recv_op);
    void acquire(PortSet& ps, uint32_t id, int want, bool send);
    void granted(uint32_t id, int port, bool send);
    void release(PortSet& ps, int port, bool send);
    void complete(int r, uint32_t k, Time t);
    void unref(uint32_t id);
    void arrive_barrier(int r, uint32_t k);
    [[noreturn]] void report_stuck() const;

    const Schedule& s_;
    const Model& model_;
    const int ports_;
    const bool recv_ports_;
    const double m_;
    SimQueue& q_;
    Network* net_ = nullptr;
    Time now_;
    std::vector<TimedCursor> cur_;
    std::vector<Time> cpu_free_;
    std::vector<PortSet> send_ports_, recv_ports_sets_;
    Matcher match_;
    std::vector<HostMsg> msgs_;
    std::vector<uint32_t> free_msgs_;
    std::vector<uint32_t> tmp_;
    BarrierRendezvous<Time> barriers_;
    uint64_t done_ops_ = 0, messages_ = 0;
};

}  // namespace collplan::sim
