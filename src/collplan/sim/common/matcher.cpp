#include "collplan/sim/common/matcher.hpp"

namespace collplan::sim {
namespace {
uint64_t mix(int32_t a, int32_t b, int32_t c) {
    uint64_t h = (uint64_t(uint32_t(a)) << 32 | uint32_t(b)) * 0x9e3779b97f4a7c15ull;
    h ^= (h >> 29) + uint64_t(uint32_t(c)) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}
}  // namespace

Matcher::Matcher() : slots_(64) {}

void Matcher::prefetch(int32_t sender, int32_t receiver, int32_t tag) const {
    __builtin_prefetch(&slots_[mix(receiver, sender, tag) & (slots_.size() - 1)]);
}

size_t Matcher::find(int32_t sender, int32_t receiver, int32_t tag) const {
    const size_t mask = slots_.size() - 1;
    size_t i = mix(receiver, sender, tag) & mask;
    while (slots_[i].receiver >= 0 &&
           !(slots_[i].receiver == receiver && slots_[i].sender == sender && slots_[i].tag == tag))
        i = (i + 1) & mask;
    return i;
}

uint32_t Matcher::new_node(uint64_t handle) {
    uint32_t n = free_;
    if (n != kNil) {
        free_ = nodes_[n].next;
        nodes_[n] = Node{handle, kNil};
    } else {
        n = static_cast<uint32_t>(nodes_.size());
        nodes_.push_back(Node{handle, kNil});
    }
    return n;
}

std::optional<uint64_t> Matcher::post(bool is_send, int32_t sender, int32_t receiver, int32_t tag, uint64_t handle) {
    size_t i = find(sender, receiver, tag);
    Slot& s = slots_[i];
    if (s.receiver >= 0 && s.sends != is_send) {  // the oldest partner waits: match it
        const uint32_t n = s.head;
        const uint64_t partner = nodes_[n].handle;
        s.head = nodes_[n].next;
        nodes_[n].next = free_;
        free_ = n;
        --waiting_;
        if (s.head == kNil) erase(i);
        return partner;
    }
    const uint32_t n = new_node(handle);
    ++waiting_;
    if (s.receiver >= 0) {  // same side waits already: append
        nodes_[s.tail].next = n;
        s.tail = n;
        return std::nullopt;
    }
    s = Slot{receiver, sender, tag, n, n, is_send};
    if (++used_ * 2 > slots_.size()) grow();
    return std::nullopt;
}

// Backward-shift deletion keeps every key reachable from its home slot without tombstones.
void Matcher::erase(size_t i) {
    const size_t mask = slots_.size() - 1;
    slots_[i].receiver = -1;
    --used_;
    size_t j = i;
    while (true) {
        j = (j + 1) & mask;
        if (slots_[j].receiver < 0) return;
        const size_t home = mix(slots_[j].receiver, slots_[j].sender, slots_[j].tag) & mask;
        const bool movable = (j > i) ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            slots_[i] = slots_[j];
            slots_[j].receiver = -1;
            i = j;
        }
    }
}

void Matcher::grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
        if (s.receiver >= 0) slots_[find(s.sender, s.receiver, s.tag)] = s;
}

std::optional<Matcher::Waiting> Matcher::any_waiting() const {
    for (const Slot& s : slots_)
        if (s.receiver >= 0) return Waiting{s.sends, s.sender, s.receiver, s.tag, nodes_[s.head].handle};
    return std::nullopt;
}

}  // namespace collplan::sim
