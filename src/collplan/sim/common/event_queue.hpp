// The event queue shared by the simulators: a 4-ary min-heap of (time, sequence number, payload).
//
// Events at equal times come out in the order of their sequence numbers; push() hands out increasing ones, so
// equal-time events are first in, first out and every run is deterministic. push_keep() re-inserts an event with
// the sequence number it already had (LogGOPSim's rule for an operation that had to wait for its CPU or NIC: it
// keeps its place among the events of its new time).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "collplan/sim/common/time.hpp"

namespace collplan::sim {

template <class Payload>
class EventQueue {
public:
    struct Entry {
        Time t;
        uint64_t seq;
        Payload p;
    };

    uint64_t push(Time t, const Payload& p) {
        const uint64_t s = next_seq_++;
        push_keep(t, s, p);
        return s;
    }
    void push_keep(Time t, uint64_t seq, const Payload& p) {
        heap_.push_back(Entry{t, seq, p});
        sift_up(heap_.size() - 1);
        ++pushed_;
    }
    bool empty() const { return heap_.empty(); }
    size_t size() const { return heap_.size(); }
    const Entry& top() const { return heap_.front(); }
    Entry pop() {
        Entry e = std::move(heap_.front());
        heap_.front() = std::move(heap_.back());
        heap_.pop_back();
        if (!heap_.empty()) sift_down(0);
        return e;
    }
    uint64_t pushed() const { return pushed_; }  // events ever pushed (the simulators' event count)
    size_t capacity_bytes() const { return heap_.capacity() * sizeof(Entry); }

private:
    static bool less(const Entry& a, const Entry& b) { return a.t < b.t || (a.t == b.t && a.seq < b.seq); }
    void sift_up(size_t i) {
        Entry e = std::move(heap_[i]);
        while (i > 0) {
            const size_t parent = (i - 1) / 4;
            if (!less(e, heap_[parent])) break;
            heap_[i] = std::move(heap_[parent]);
            i = parent;
        }
        heap_[i] = std::move(e);
    }
    void sift_down(size_t i) {
        const size_t n = heap_.size();
        Entry e = std::move(heap_[i]);
        while (true) {
            const size_t first = 4 * i + 1;
            if (first >= n) break;
            size_t best = first;
            const size_t last = first + 4 < n ? first + 4 : n;
            for (size_t c = first + 1; c < last; ++c)
                if (less(heap_[c], heap_[best])) best = c;
            if (!less(heap_[best], e)) break;
            heap_[i] = std::move(heap_[best]);
            i = best;
        }
        heap_[i] = std::move(e);
    }

    std::vector<Entry> heap_;
    uint64_t next_seq_ = 0;
    uint64_t pushed_ = 0;
};

}  // namespace collplan::sim
