// The event queue of the flow and packet simulators (the Host's): events (time, sequence number, payload) come
// out in the order of time, then sequence number, exactly as from EventQueue (event_queue.hpp) -- push() hands out
// increasing sequence numbers, so equal-time events are first in, first out -- but the next few events are known
// in order before they are popped (upcoming()), so that a network can prefetch what they will touch.
//
// The radix heap of event_queue.hpp (Ahuja, Mehlhorn, Orlin, Tarjan, JACM 1990) with one change: when the smallest
// non-empty bucket is small (at most kRun events) it is not redistributed into the lower buckets but sorted once
// into the *run*, the ordered list of the next events. A bucket i covers the times [lo, hi) that share every bit
// from bit i up with the reference time (the last refill's minimum) and no event outside the run is below hi, so
// an event pushed later with a time below hi (never below the current time) is inserted into the run in its
// place: after every entry of the same or an earlier time, since its sequence number is the largest. A large
// bucket is redistributed as in the radix heap, and the events of its minimum time become the run. Times must be
// monotone (every push at or after the time of the last pop), as in EventQueue.
//
// The packet network pushes 0.5 to 1 billion events at 16x16 and 32x32 and touches a few records per event
// (bench/README.md, "packet"); with the run it prefetches them several events ahead. A bucket is sorted only when
// it is small, so an insertion into the run moves at most a few dozen entries.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collplan/sim/common/event_queue.hpp"
#include "collplan/sim/common/time.hpp"

namespace collplan::sim {

template <class Payload>
class RunQueue {
public:
    using Entry = typename EventQueue<Payload>::Entry;  // the same 24-byte records
    using Event = typename EventQueue<Payload>::Event;  // what pop() returns

    [[gnu::always_inline]] uint64_t push(Time t, const Payload& p) {
        const uint64_t s = next_seq_++;
        if (s >> 56) throw Error("event queue: more than 2^56 events (allowed: fewer)");
        if (t < now_)
            throw Error("event queue: an event at " + std::to_string(t.count_ps()) + " ps is before the current time");
        const Entry e{t, s << 8 | p.kind, p.a, p.b};
        ++size_;
        ++pushed_;
        if (t < run_hi_) {
            size_t i = run_.size();
            run_.push_back(e);
            for (; i > head_ && run_[i - 1].t > t; --i) run_[i] = run_[i - 1];
            run_[i] = e;
        } else {
            buckets_[index(t)].push_back(e);
        }
        return s;
    }
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    Event pop() {
        if (head_ == run_.size()) refill();
        --size_;
        const Entry& e = run_[head_++];
        now_ = e.t;
        return Event{e.t, e.seq(), e.p()};
    }
    // The event `ahead` places after the next one, if it is in the run (for prefetching its data); nullptr
    // otherwise. An event pushed later may still come before it.
    const Entry* upcoming(size_t ahead) const {
        const size_t i = head_ + ahead;
        return i < run_.size() ? &run_[i] : nullptr;
    }
    uint64_t pushed() const { return pushed_; }  // events ever pushed (the simulators' event count)
    size_t capacity_bytes() const {
        size_t b = run_.capacity() * sizeof(Entry);
        for (const auto& v : buckets_) b += v.capacity() * sizeof(Entry);
        return b;
    }

private:
    static constexpr size_t kRun = 48;

    size_t index(Time t) const {
        const uint64_t x = static_cast<uint64_t>(t.count_ps()) ^ static_cast<uint64_t>(ref_.count_ps());
        return x == 0 ? 0 : 64 - static_cast<size_t>(__builtin_clzll(x));
    }
    // The run is used up: the smallest non-empty bucket becomes the run (small) or is redistributed around its
    // minimum, whose events become the run (large). Bucket 0 (events at the reference time) is only used there.
    void refill() {
        run_.clear();
        head_ = 0;
        const size_t i = least_bucket(buckets_, ref_);
        std::vector<Entry>& b = buckets_[i];
        if (b.size() <= kRun && i < 63) {
            run_.swap(b);
            std::sort(run_.begin(), run_.end(), by_time_seq);
            const auto k = static_cast<int64_t>(i);
            run_hi_ = Time::ps(((ref_.count_ps() >> k) + 1) << k);
            return;
        }
        for (const Entry& e : b) buckets_[index(e.t)].push_back(e);
        b.clear();
        run_.swap(buckets_[0]);
        if (run_.size() > 1 && !std::is_sorted(run_.begin(), run_.end(), by_time_seq))
            std::sort(run_.begin(), run_.end(), by_time_seq);
        run_hi_ = ref_ + Time::ps(1);
    }
    static bool by_time_seq(const Entry& a, const Entry& b) {
        return a.t < b.t || (a.t == b.t && a.seq_kind < b.seq_kind);
    }

    std::vector<Entry> buckets_[65];
    std::vector<Entry> run_;
    size_t head_ = 0, size_ = 0;
    Time ref_, now_, run_hi_ = Time::ps(1);  // before the first refill: events at time 0 go to the run
    uint64_t next_seq_ = 0, pushed_ = 0;
};

}  // namespace collplan::sim
