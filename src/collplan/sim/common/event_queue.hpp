// The event queue shared by the simulators: events (time, sequence number, payload) come out in the order of
// time, then sequence number. push() hands out increasing sequence numbers, so equal-time events are first in,
// first out and every run is deterministic; push_keep() re-inserts an event with the sequence number it already
// had (LogGOPSim's rule for an operation that had to wait for its CPU or NIC: it keeps its place among the events
// of its new time).
//
// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan, "Faster algorithms for the shortest path problem", JACM 1990):
// times must be monotone -- every push at or after the time of the last pop, which holds for all three simulators
// (events are only ever scheduled for now or later; push_keep only for later). Bucket i > 0 holds the events whose
// time first differs from the last popped time in bit i-1; bucket 0 those at exactly that time. All events of one
// time always share a bucket, so when the smallest bucket is redistributed the events of the new time land in
// bucket 0 together and are sorted there by sequence number once. Amortised O(log time range) per event and no
// comparisons across buckets: several times faster than a binary heap at the queue sizes of 10^5 events that
// 65,536 ranks produce.
//
// A payload is two 32-bit words and a kind byte ({a, b, kind}); an entry keeps the kind in the low byte of its
// sequence number's word (sequence numbers below 2^56), so an entry is 24 bytes, not 32: events are moved between
// buckets a few times each, and the packet simulator pushes half a billion of them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collplan/sim/common/time.hpp"

namespace collplan::sim {

// Where a radix heap's refill starts: the smallest non-empty bucket above bucket 0 (there must be one) and its
// earliest time (EventQueue here; RunQueue, run_queue.hpp).
template <class Entry>
size_t least_bucket(const std::vector<Entry>* buckets, Time& earliest) {
    size_t i = 1;
    while (buckets[i].empty()) ++i;
    earliest = buckets[i].front().t;
    for (const Entry& e : buckets[i]) earliest = min(earliest, e.t);
    return i;
}

template <class Payload>
class EventQueue {
public:
    struct Entry {
        Time t;
        uint64_t seq_kind;  // sequence number << 8 | payload kind
        uint32_t a, b;
        uint64_t seq() const { return seq_kind >> 8; }
        Payload p() const { return Payload{a, b, static_cast<uint8_t>(seq_kind & 0xff)}; }
    };
    static_assert(sizeof(Entry) == 24);
    struct Event {  // what pop() returns
        Time t;
        uint64_t seq;
        Payload p;
    };

    uint64_t push(Time t, const Payload& p) {
        const uint64_t s = next_seq_++;
        if (s >> 56) throw Error("event queue: more than 2^56 events (allowed: fewer)");
        push_keep(t, s, p);
        return s;
    }
    void push_keep(Time t, uint64_t seq, const Payload& p) {
        if (t < last_)
            throw Error("event queue: an event at " + std::to_string(t.count_ps()) + " ps is before the current time");
        buckets_[index(t)].push_back(Entry{t, seq << 8 | p.kind, p.a, p.b});
        ++size_;
        ++pushed_;
    }
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    Event pop() {
        if (head_ == buckets_[0].size()) refill();
        --size_;
        const Entry& e = buckets_[0][head_++];
        return Event{e.t, e.seq(), e.p()};
    }
    // The event `ahead` places after the next one, if it is already known to be due at the current time (for
    // prefetching its data); nullptr otherwise.
    const Entry* upcoming(size_t ahead) const {
        const size_t i = head_ + ahead;
        return i < buckets_[0].size() ? &buckets_[0][i] : nullptr;
    }
    uint64_t pushed() const { return pushed_; }  // events ever pushed (the simulators' event count)
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
    // Bucket 0 is used up: the smallest non-empty bucket's minimum becomes the current time and its events move
    // down; those of the current time, now in bucket 0, are put in sequence order (later pushes append in order).
    void refill() {
        buckets_[0].clear();
        head_ = 0;
        std::vector<Entry>& b = buckets_[least_bucket(buckets_, last_)];
        for (const Entry& e : b) buckets_[index(e.t)].push_back(e);
        b.clear();
        std::vector<Entry>& z = buckets_[0];
        if (z.size() > 1 && !std::is_sorted(z.begin(), z.end(), by_seq))
            std::sort(z.begin(), z.end(), by_seq);
    }
    static bool by_seq(const Entry& a, const Entry& b) { return a.seq_kind < b.seq_kind; }

    std::vector<Entry> buckets_[65];
    Time last_;
    size_t head_ = 0, size_ = 0;
    uint64_t next_seq_ = 0, pushed_ = 0;
};

}  // namespace collplan::sim
