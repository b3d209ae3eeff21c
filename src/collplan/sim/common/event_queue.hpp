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

namespace collplan::sim {

// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) for monotone event times: every push is at or after the
// time of the last pop, which holds for the flow and packet simulators (events are only ever scheduled for now or
// later). Events of equal time come out in push order: all events of one time sit in the same bucket, and both
// appending and redistributing keep their order. Amortised O(log(time range)) per event with no comparisons
// between events of different buckets -- about three times faster than the 4-ary heap for the packet simulator.
template <class Payload>
class RadixQueue {
public:
    struct Entry {
        Time t;
        Payload p;
    };

    void push(Time t, const Payload& p) {
        if (t < last_) throw Error("event queue: event at " + std::to_string(t.count_ps()) + " ps is before the current time");
        buckets_[index(t)].push_back(Entry{t, p});
        ++size_;
        ++pushed_;
    }
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    Entry pop() {
        if (head_ == buckets_[0].size()) refill();
        --size_;
        return buckets_[0][head_++];
    }
    uint64_t pushed() const { return pushed_; }
    size_t capacity_bytes() const {
        size_t b = 0;
        for (const auto& v : buckets_) b += v.capacity() * sizeof(Entry);
        return b;
    }

private:
    size_t index(Time t) const {
        const uint64_t x = static_cast<uint64_t>(t.count_ps()) ^ static_cast<uint64_t>(last_.count_ps());
        return x == 0 ? 0 : 64 - static_cast<size_t>(__builtin_clzll(x));
    }
    // Bucket 0 is used up: move the smallest non-empty bucket's events down, its minimum becoming the new time.
    void refill() {
        buckets_[0].clear();
        head_ = 0;
        size_t i = 1;
        while (buckets_[i].empty()) ++i;
        std::vector<Entry>& b = buckets_[i];
        Time m = b.front().t;
        for (const Entry& e : b) m = min(m, e.t);
        last_ = m;
        for (const Entry& e : b) buckets_[index(e.t)].push_back(e);
        b.clear();
    }

    std::vector<Entry> buckets_[65];
    Time last_;
    size_t head_ = 0, size_ = 0;
    uint64_t pushed_ = 0;
};

}  // namespace collplan::sim
