// DRS_N event simulation; see drs_n_sim.hpp for the protocol and the model.
#include "collplan/algorithms/alltoallv/drs_n_sim.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <string>

#include "collplan/algorithms/alltoallv/unstructured_common.hpp"

namespace collplan {
namespace {

using Ps = int64_t;
Ps to_ps(double s) { return static_cast<Ps>(std::llround(s * 1e12)); }

enum class Ev : uint8_t { next, inquiry, reply_free, reply_busy, send_done, reset };

struct Event {
    Ps t;
    uint64_t seq;  // insertion order breaks ties: deterministic
    Ev kind;
    int rank, peer;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Drsn {
public:
    Drsn(std::span<const uint64_t> m, int P, const Topology& topo, const Model& model, double unit_bytes,
         const DrsnOptions& opt);
    DrsnResult run();

private:
    void push(Ps t, Ev k, int r, int peer) { heap_.push({t, seq_++, k, r, peer}); }
    void next(int i, Ps t);
    void inquiry(int j, int i, Ps t);
    void send(int i, int j, Ps t);
    void done(int r, Ps t) { done_[r] = std::max(done_[r], t); }

    std::span<const uint64_t> m_;
    const int P_;
    const Topology& topo_;
    const Model& model_;
    const double unit_bytes_;
    const Ps am_, handler_, retry_;
    std::vector<std::vector<int>> todo_;  // unsent destinations per rank, in trial order
    std::vector<size_t> cursor_;
    std::vector<int> last_tried_;
    std::vector<uint8_t> busy_;           // the receiver's flag
    std::vector<Ps> debt_;                // handler time owed by a rank's CPU
    std::vector<Ps> send_free_, recv_free_, done_;
    DrsnResult res_;
    uint64_t seq_ = 0;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap_;
};

Drsn::Drsn(std::span<const uint64_t> m, int P, const Topology& topo, const Model& model, double unit_bytes,
           const DrsnOptions& opt)
    : m_(m), P_(P), topo_(topo), model_(model), unit_bytes_(unit_bytes), am_(to_ps(opt.am_s)),
      handler_(to_ps(opt.handler_s)), retry_(to_ps(opt.retry_delay_s)) {
    alltoallv::Rng rng(opt.seed);
    const auto n = static_cast<size_t>(P);
    todo_.resize(n);
    for (int i = 0; i < P; ++i) {
        for (int j = 0; j < P; ++j)
            if (i != j && m[static_cast<size_t>(i) * P + j]) todo_[i].push_back(j);
        rng.shuffle(todo_[i]);
    }
    cursor_.assign(n, 0);
    last_tried_.assign(n, -1);
    busy_.assign(n, 0);
    debt_.assign(n, 0);
    send_free_.assign(n, 0);
    recv_free_.assign(n, 0);
    done_.assign(n, 0);
}

DrsnResult Drsn::run() {
    for (int i = 0; i < P_; ++i) push(0, Ev::next, i, -1);
    while (!heap_.empty()) {
        const Event e = heap_.top();
        heap_.pop();
        switch (e.kind) {
            case Ev::next: next(e.rank, e.t); break;
            case Ev::inquiry: inquiry(e.peer, e.rank, e.t); break;
            case Ev::reply_free: send(e.rank, e.peer, e.t); break;
            case Ev::reply_busy: push(e.t, Ev::next, e.rank, -1); break;
            case Ev::send_done: push(e.t + am_, Ev::reset, e.rank, e.peer); push(e.t, Ev::next, e.rank, -1); break;
            case Ev::reset: busy_[e.peer] = 0; break;
        }
    }
    res_.rank_done_s.resize(static_cast<size_t>(P_));
    for (int r = 0; r < P_; ++r) {
        res_.rank_done_s[r] = static_cast<double>(done_[r]) * 1e-12;
        res_.time_s = std::max(res_.time_s, res_.rank_done_s[r]);
    }
    return res_;
}

// Rank i is free at t: pay its handler debt, then ask the next destination.
void Drsn::next(int i, Ps t) {
    std::vector<int>& todo = todo_[i];
    if (todo.empty()) return;
    if (debt_[i] > 0) {
        const Ps d = debt_[i];
        debt_[i] = 0;
        return push(t + d, Ev::next, i, -1);
    }
    cursor_[i] %= todo.size();
    const int j = todo[cursor_[i]];
    if (j == last_tried_[i] && retry_ > 0) t += retry_;
    last_tried_[i] = j;
    ++res_.inquiries;
    push(t + am_, Ev::inquiry, i, j);
}

// The inquiry of i arrives at j: test-and-set, reply.
void Drsn::inquiry(int j, int i, Ps t) {
    debt_[j] += handler_;
    const bool free = !busy_[j];
    busy_[j] = 1;
    if (!free) {
        ++res_.refused;
        ++cursor_[i];  // try another destination next
    }
    push(t + handler_ + am_, free ? Ev::reply_free : Ev::reply_busy, i, j);
}

// j is reserved for i: the data message takes one send port at i and one receive port at j.
void Drsn::send(int i, int j, Ps t) {
    const uint64_t units = m_[static_cast<size_t>(i) * P_ + j];
    const MessageTime mt = model_.message(static_cast<double>(units) * unit_bytes_, topo_.distance(i, j));
    Ps& rport = model_.duplex ? recv_free_[j] : send_free_[j];
    const Ps start = std::max({t, send_free_[i], rport});
    send_free_[i] = start + to_ps(mt.send_busy);
    rport = std::max(rport, start + to_ps(mt.recv_busy));
    done(j, start + to_ps(mt.recv_done));
    done(i, start + to_ps(mt.send_done));
    std::vector<int>& todo = todo_[i];
    todo.erase(todo.begin() + static_cast<std::ptrdiff_t>(cursor_[i] % todo.size()));
    last_tried_[i] = -1;
    push(start + to_ps(mt.send_done), Ev::send_done, i, j);
}

}  // namespace

DrsnResult simulate_drs_n(std::span<const uint64_t> matrix, int P, const Topology& topo, const Model& model,
                          double unit_bytes, const DrsnOptions& opt) {
    if (std::string why = alltoallv::check_matrix(matrix, P); !why.empty()) throw Error("drs_n: " + why);
    if (topo.nodes() != P)
        throw Error("drs_n: topology " + topo.spec() + " has " + std::to_string(topo.nodes()) + " nodes but the matrix has " +
                    std::to_string(P) + " ranks (allowed: equal)");
    if (!(unit_bytes >= 0) || !std::isfinite(unit_bytes))
        throw Error("drs_n: unit size " + std::to_string(unit_bytes) + " bytes is invalid (allowed: >= 0)");
    if (!(opt.am_s > 0) || !std::isfinite(opt.am_s))
        throw Error("drs_n: active message time " + std::to_string(opt.am_s) + " s is invalid (allowed: > 0)");
    for (double x : {opt.handler_s, opt.retry_delay_s})
        if (!(x >= 0) || !std::isfinite(x)) throw Error("drs_n: time " + std::to_string(x) + " s is invalid (allowed: >= 0)");
    return Drsn(matrix, P, topo, model, unit_bytes, opt).run();
}

}  // namespace collplan
