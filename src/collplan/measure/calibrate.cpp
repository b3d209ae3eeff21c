// Measurement kernels of `collplan calibrate`. See calibrate.hpp.
#include "collplan/measure/calibrate.hpp"
#include "collplan/runtime/mpi/check.hpp"

#include <chrono>
#include <climits>
#include <cstring>
#include <string>

#include "collplan/common/error.hpp"

namespace collplan::mpi {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

void check_repeat(const Repeat& r) {
    if (r.samples < 1 || r.batch < 1 || r.warmup < 0)
        throw Error("calibration repeat samples=" + std::to_string(r.samples) + " batch=" + std::to_string(r.batch) +
                    " warmup=" + std::to_string(r.warmup) + " is invalid (allowed: samples >= 1, batch >= 1, warmup >= 0)");
}

int as_count(uint64_t bytes) {
    if (bytes > static_cast<uint64_t>(INT_MAX))
        throw Error("calibration message of " + std::to_string(bytes) + " bytes is too large (allowed: <= " +
                    std::to_string(INT_MAX) + ")");
    return static_cast<int>(bytes);
}

// The pair (this rank, peer): throws unless peer is another rank of comm. True on the initiator (the lower rank).
bool initiator(MPI_Comm comm, int peer) {
    int me = 0, P = 0;
    check(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
    check(MPI_Comm_size(comm, &P), "MPI_Comm_size");
    if (peer < 0 || peer >= P || peer == me)
        throw Error("calibration peer " + std::to_string(peer) + " is invalid (allowed: another rank, 0.." +
                    std::to_string(P - 1) + ")");
    return me < peer;
}

// Runs body() warmup times, then samples x batch times; returns the mean time of each batch.
template <class F>
std::vector<double> timed(const Repeat& r, F&& body) {
    check_repeat(r);
    for (int i = 0; i < r.warmup; ++i) body();
    std::vector<double> out(static_cast<size_t>(r.samples));
    Clock::time_point t = Clock::now();
    for (double& s : out) {
        for (int i = 0; i < r.batch; ++i) body();
        const Clock::time_point u = Clock::now();
        s = seconds(t, u) / r.batch;
        t = u;
    }
    return out;
}

void spin(double s) {
    const Clock::time_point end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    while (Clock::now() < end) {
    }
}

constexpr int kTag = 7411;  // any tag: the kernels run alone on their pair

}  // namespace

std::vector<double> pingpong(MPI_Comm comm, int peer, uint64_t bytes, Repeat r) {
    const bool first = initiator(comm, peer);
    const int n = as_count(bytes);
    std::vector<char> buf(bytes + 1, 1);
    auto there = [&] { check(MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, comm), "MPI_Send"); };
    auto back = [&] { check(MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE), "MPI_Recv"); };
    if (first) return timed(r, [&] { there(), back(); });
    timed(r, [&] { back(), there(); });
    return {};
}

std::vector<double> burst(MPI_Comm comm, int peer, uint64_t bytes, int count, Repeat r) {
    if (count < 1) throw Error("burst count " + std::to_string(count) + " is invalid (allowed: >= 1)");
    const bool first = initiator(comm, peer);
    const int n = as_count(bytes);
    std::vector<char> buf(bytes + 1, 1);
    char ack = 0;
    if (first) {
        return timed(r, [&] {
            for (int k = 0; k < count; ++k) check(MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, comm), "MPI_Send");
            check(MPI_Recv(&ack, 0, MPI_BYTE, peer, kTag + 1, comm, MPI_STATUS_IGNORE), "MPI_Recv");
        });
    }
    timed(r, [&] {
        for (int k = 0; k < count; ++k)
            check(MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
        check(MPI_Send(&ack, 0, MPI_BYTE, peer, kTag + 1, comm), "MPI_Send");
    });
    return {};
}

std::vector<double> exchange(MPI_Comm comm, int peer, uint64_t bytes, int count, Repeat r) {
    if (count < 1 || count > 4096) throw Error("exchange count " + std::to_string(count) + " is invalid (allowed: 1..4096)");
    initiator(comm, peer);  // checks the peer
    const int n = as_count(bytes);
    std::vector<char> out(bytes + 1, 1), in(static_cast<size_t>(bytes) * static_cast<size_t>(count) + 1, 0);
    std::vector<MPI_Request> reqs(2 * static_cast<size_t>(count));
    return timed(r, [&] {
        for (int k = 0; k < count; ++k)
            check(MPI_Irecv(in.data() + static_cast<size_t>(k) * bytes, n, MPI_BYTE, peer, kTag, comm, &reqs[k]),
                  "MPI_Irecv");
        for (int k = 0; k < count; ++k)
            check(MPI_Isend(out.data(), n, MPI_BYTE, peer, kTag, comm, &reqs[count + k]), "MPI_Isend");
        check(MPI_Waitall(2 * count, reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    });
}

// Per message: the peer sends a 0-byte "go", then waits delay_s and times its MPI_Recv of the data (which has
// arrived by then); the initiator, on "go", times its MPI_Send of the data. Only meaningful for eager messages
// (a rendezvous send waits for the receiver, so it includes the delay).
OverheadSamples overhead(MPI_Comm comm, int peer, uint64_t bytes, double delay_s, Repeat r) {
    check_repeat(r);
    if (!(delay_s >= 0 && delay_s < 1))
        throw Error("overhead delay " + std::to_string(delay_s) + " s is invalid (allowed: 0 <= delay < 1 s)");
    const bool first = initiator(comm, peer);
    const int n = as_count(bytes);
    std::vector<char> buf(bytes + 1, 1);
    char go = 0;
    std::vector<double> mine;
    mine.reserve(static_cast<size_t>(r.samples));
    for (int i = 0; i < r.warmup + r.samples; ++i) {
        Clock::time_point t0, t1;
        if (first) {
            check(MPI_Recv(&go, 0, MPI_BYTE, peer, kTag + 1, comm, MPI_STATUS_IGNORE), "MPI_Recv");
            t0 = Clock::now();
            check(MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, comm), "MPI_Send");
            t1 = Clock::now();
        } else {
            check(MPI_Send(&go, 0, MPI_BYTE, peer, kTag + 1, comm), "MPI_Send");
            spin(delay_s);
            t0 = Clock::now();
            check(MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
            t1 = Clock::now();
        }
        if (i >= r.warmup) mine.push_back(seconds(t0, t1));
    }
    OverheadSamples out;
    const int k = r.samples;
    if (first) {
        out.send_s = std::move(mine);
        out.recv_s.resize(static_cast<size_t>(k));
        check(MPI_Recv(out.recv_s.data(), k, MPI_DOUBLE, peer, kTag + 2, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    } else {
        check(MPI_Send(mine.data(), k, MPI_DOUBLE, peer, kTag + 2, comm), "MPI_Send");
    }
    return out;
}

std::vector<double> reduce_local(uint64_t bytes, Repeat r) {
    const uint64_t count = bytes / sizeof(double);
    const int n = as_count(count);
    std::vector<double> src(count + 1, 1.0), dst(count + 1, 1.0);
    auto out = timed(r, [&] {
        check(MPI_Reduce_local(src.data(), dst.data(), n, MPI_DOUBLE, MPI_SUM), "MPI_Reduce_local");
    });
    volatile double sink = dst[0];  // keep the result observable
    (void)sink;
    return out;
}

std::vector<double> copy(uint64_t bytes, Repeat r) {
    std::vector<char> a(bytes + 1, 1), b(bytes + 1, 2);
    auto out = timed(r, [&] {
        std::memmove(b.data(), a.data(), bytes);
        a[0] = static_cast<char>(a[0] + 1);  // a different source each time: the copy cannot be elided
    });
    volatile char sink = b[0];
    (void)sink;
    return out;
}

std::vector<double> barrier(MPI_Comm comm, Repeat r) {
    return timed(r, [&] { check(MPI_Barrier(comm), "MPI_Barrier"); });
}

std::vector<double> timer(Repeat r) {
    volatile int64_t sink = 0;
    return timed(r, [&] { sink = sink + Clock::now().time_since_epoch().count(); });
}

}  // namespace collplan::mpi
