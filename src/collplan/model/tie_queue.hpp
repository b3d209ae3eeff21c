// The estimate walk's event queue (model/estimate.cpp): events (time, order) come out in increasing time, then
// increasing order -- exactly as from a binary min-heap of the pairs -- but the events of one time are kept
// together and sorted once.
//
// Why: the walk of a schedule at tens of thousands of ranks moves in lock-step -- in a symmetric algorithm every
// rank's k-th op completes at one of a few times -- so a queue of 10^5 events holds few distinct times. A binary
// heap pays a sift through 17 levels of a 2 MB array per event; here a push appends the event's order to its
// time's bucket (one of the last few times pushed, else a new entry), and a time's bucket is sorted when it
// becomes the earliest, into the *run*, which the walk reads ahead of time to prefetch. Only the pending times
// are in a heap. An event pushed at the run's time (the walk schedules start requests at the time it handles)
// waits in a batch that joins the run when one of them is due. Where every event has a time of its own, a push
// and a pop cost about 1.2 times a binary heap's; a queue that never holds more than kSmall events is one.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <vector>

namespace collplan {

class TieQueue {
public:
    struct Event {
        double t;
        uint64_t order;
        bool operator>(const Event& o) const { return t > o.t || (t == o.t && order > o.order); }
    };

    void push(double t, uint64_t order) {
        t += 0.0;  // -0.0 is 0.0: one bucket
        ++size_;
        if (small_ || t < now_) {  // a small queue; or before every other event (rounding can make one)
            past_.push_back({t, order});
            std::push_heap(past_.begin(), past_.end(), std::greater<Event>{});
            if (small_ && past_.size() > kSmall) leave_small();
        } else if (t == now_) {  // into the batch (below)
            batch_.push_back(order);
            batch_min_ = std::min(batch_min_, order);
        } else {
            push_later(t, order);
        }
    }

    // The order of the event `ahead` places after the next in the run, or kNone (for prefetching what it touches;
    // an event pushed later may come before it).
    uint64_t upcoming(size_t ahead) const { return head_ + ahead < run_.size() ? run_[head_ + ahead] : kNone; }
    static constexpr uint64_t kNone = ~uint64_t{0};

    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }

    Event pop() {
        --size_;
        if (!past_.empty()) {
            const Event e = pop_min(past_, std::greater<Event>{});
            if (small_) now_ = e.t;
            return e;
        }
        if (head_ == run_.size() && side_.empty() && batch_.empty()) refill();
        if (!batch_.empty() && batch_min_ < next()) absorb();
        if (!side_.empty() && (head_ == run_.size() || side_.front() < run_[head_]))
            return {now_, pop_min(side_, std::greater<uint64_t>{})};
        return {now_, run_[head_++]};
    }

private:
    static constexpr uint32_t kNoBucket = ~uint32_t{0};
    struct Pending {  // a time after the run's: one event (bucket = kNoBucket), or a bucket of its events
        double t;
        uint64_t order;
        uint32_t bucket;
    };
    struct Later {
        bool operator()(const Pending& a, const Pending& b) const { return a.t > b.t; }
    };
    static constexpr double kNoTime = -std::numeric_limits<double>::infinity();
    struct Recent {
        double t = kNoTime;
        uint32_t bucket = 0;
    };

    // The least element of a heap ordered by `later`, taken out.
    template <class T, class Later>
    static T pop_min(std::vector<T>& heap, Later later) {
        std::pop_heap(heap.begin(), heap.end(), later);
        const T x = heap.back();
        heap.pop_back();
        return x;
    }

    // The least order of the run and the side heap (kNone when both are empty).
    uint64_t next() const {
        const uint64_t r = head_ < run_.size() ? run_[head_] : kNone;
        return side_.empty() ? r : std::min(r, side_.front());
    }

    // A queue that outgrew kSmall events: from now on by times (its events pushed again; those before the last
    // popped time stay in past_).
    void leave_small() {
        small_ = false;
        std::vector<Event> all;
        all.swap(past_);
        for (const Event& e : all) {
            if (e.t < now_) {
                past_.push_back(e);
            } else if (e.t == now_) {
                batch_.push_back(e.order);
                batch_min_ = std::min(batch_min_, e.order);
            } else {
                push_later(e.t, e.order);
            }
        }
        std::make_heap(past_.begin(), past_.end(), std::greater<Event>{});
    }

    // The events pushed at the run's time since the last absorb, once one of them is due: with the run spent, they
    // are the run; a small batch goes into the side heap, a large one is sorted and merged into the run (so each
    // merge's cost is at most a few times the batch's size: the run does not move for a few late events).
    void absorb() {
        if (head_ == run_.size()) {
            run_.swap(batch_);
            std::sort(run_.begin(), run_.end());
            head_ = 0;
        } else if (batch_.size() * 8 < run_.size() - head_) {
            for (uint64_t o : batch_) {
                side_.push_back(o);
                std::push_heap(side_.begin(), side_.end(), std::greater<uint64_t>{});
            }
        } else {
            std::sort(batch_.begin(), batch_.end());
            merged_.clear();
            std::merge(run_.begin() + static_cast<std::ptrdiff_t>(head_), run_.end(), batch_.begin(), batch_.end(),
                       std::back_inserter(merged_));
            run_.swap(merged_);
            head_ = 0;
        }
        batch_.clear();
        batch_min_ = kNone;
    }

    // A time after the run's: appended to the bucket of one of the last few times pushed when it has this time,
    // else a pending entry of its own (a time's first event needs no bucket; its second makes one). Entries of one
    // time (the time came back after more than kRecent others) are joined at refill.
    void push_later(double t, uint64_t order) {
        for (Recent& r : recent_)
            if (r.t == t) {
                if (r.bucket == kNoBucket) {
                    r.bucket = new_bucket();
                    times_.push_back({t, 0, r.bucket});
                    std::push_heap(times_.begin(), times_.end(), Later{});
                }
                store_[r.bucket].push_back(order);
                return;
            }
        times_.push_back({t, order, kNoBucket});
        std::push_heap(times_.begin(), times_.end(), Later{});
        recent_[next_recent_] = {t, kNoBucket};
        next_recent_ = (next_recent_ + 1) % kRecent;
    }

    uint32_t new_bucket() {
        if (free_.empty()) {
            store_.emplace_back();
            return static_cast<uint32_t>(store_.size() - 1);
        }
        const uint32_t b = free_.back();
        free_.pop_back();
        return b;
    }

    // The earliest pending time becomes the run: its entries' orders, sorted.
    void refill() {
        const double t = times_.front().t;
        run_.clear();
        while (!times_.empty() && times_.front().t == t) {
            const Pending e = pop_min(times_, Later{});
            if (e.bucket == kNoBucket) {
                run_.push_back(e.order);
                continue;
            }
            std::vector<uint64_t>& v = store_[e.bucket];
            if (run_.empty()) run_.swap(v);  // the spent run's storage serves a later bucket
            else run_.insert(run_.end(), v.begin(), v.end());
            v.clear();
            free_.push_back(e.bucket);
        }
        for (Recent& r : recent_)
            if (r.t == t) r.t = kNoTime;
        std::sort(run_.begin(), run_.end());
        head_ = 0;
        now_ = t;
    }

    // Up to kSmall events (a few ranks' walk, or one rank's) a binary heap is faster: every event is in past_ and
    // now_ is the last popped time, until the queue first holds more.
    static constexpr size_t kSmall = 256;
    bool small_ = true;
    double now_ = kNoTime;                                    // the run's time
    std::vector<uint64_t> run_, merged_;                      // the run's orders, sorted; run_[head_] is next
    size_t head_ = 0, size_ = 0;
    std::vector<uint64_t> batch_;                             // pushed at now_, not yet absorbed; its least:
    uint64_t batch_min_ = kNone;
    std::vector<uint64_t> side_;                              // min-heap: absorbed small batches
    std::vector<Event> past_;                                 // min-heap: pushed before now_
    std::vector<Pending> times_;                              // min-heap by time
    std::vector<std::vector<uint64_t>> store_;                // the buckets (reused)
    std::vector<uint32_t> free_;
    static constexpr size_t kRecent = 4;
    Recent recent_[kRecent];
    size_t next_recent_ = 0;
};

}  // namespace collplan
