#include "collplan/sim/common/matcher.hpp"

namespace collplan::sim {
namespace {
uint64_t mix(int32_t a, int32_t b, int32_t c) {
    uint64_t h = (uint64_t(uint32_t(a)) << 32 | uint32_t(b)) * 0x9e3779b97f4a7c15ull;
    h ^= (h >> 29) + uint64_t(uint32_t(c)) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}
}  // namespace

Matcher::Matcher(int receivers) : lines_(static_cast<size_t>(receivers > 0 ? receivers : 0)), slots_(64) {}

void Matcher::prefetch(int32_t sender, int32_t receiver, int32_t tag) const {
    if (receiver >= 0 && static_cast<size_t>(receiver) < lines_.size()) return __builtin_prefetch(&lines_[receiver]);
    __builtin_prefetch(&slots_[mix(receiver, sender, tag) & (slots_.size() - 1)]);
}

bool Matcher::has_waiting(bool sends, int32_t sender, int32_t receiver, int32_t tag) const {
    const Line* l = receiver >= 0 && static_cast<size_t>(receiver) < lines_.size() ? &lines_[receiver] : nullptr;
    if (l) {
        for (int i = 0; i < kInLine; ++i) {
            const uint8_t bit = static_cast<uint8_t>(1u << i);
            if ((l->used & bit) && l->e[i].sender == sender && l->e[i].tag == tag) return ((l->sends & bit) != 0) == sends;
        }
        if (l->elsewhere == 0) return false;
    }
    const Slot& s = slots_[find(sender, receiver, tag)];
    return s.receiver >= 0 && s.sends == sends;
}

uint64_t Matcher::pop(Queue& q) {
    const uint32_t n = q.head;
    const uint64_t h = nodes_[n].handle;
    q.head = nodes_[n].next;
    nodes_[n].next = free_;
    free_ = n;
    --waiting_;
    return h;
}

void Matcher::push(Queue& q, uint64_t handle) {
    uint32_t n = free_;
    if (n != kNil) {
        free_ = nodes_[n].next;
        nodes_[n] = Node{handle, kNil};
    } else {
        n = static_cast<uint32_t>(nodes_.size());
        nodes_.push_back(Node{handle, kNil});
    }
    ++waiting_;
    if (q.head == kNil) q.head = n;
    else nodes_[q.tail].next = n;
    q.tail = n;
}

std::optional<uint64_t> Matcher::post(bool is_send, int32_t sender, int32_t receiver, int32_t tag, uint64_t handle) {
    if (receiver >= 0 && static_cast<size_t>(receiver) < lines_.size())
        return post_in_line(lines_[receiver], is_send, sender, tag, handle);
    return post_shared(is_send, sender, receiver, tag, handle, nullptr);
}

std::optional<uint64_t> Matcher::post_in_line(Line& l, bool is_send, int32_t sender, int32_t tag, uint64_t handle) {
    int free_entry = -1;
    for (int i = 0; i < kInLine; ++i) {
        const uint8_t bit = static_cast<uint8_t>(1u << i);
        if (!(l.used & bit)) {
            if (free_entry < 0) free_entry = i;
            continue;
        }
        Entry& e = l.e[i];
        if (e.sender != sender || e.tag != tag) continue;
        if (((l.sends & bit) != 0) == is_send) {  // the same side waits already: append
            push(e.q, handle);
            return std::nullopt;
        }
        const uint64_t partner = pop(e.q);  // the oldest partner waits: match it
        if (e.q.head == kNil) l.used &= static_cast<uint8_t>(~bit);
        return partner;
    }
    const int32_t receiver = static_cast<int32_t>(&l - lines_.data());
    if (l.elsewhere > 0 || free_entry < 0) return post_shared(is_send, sender, receiver, tag, handle, &l);
    add_in_line(l, free_entry, is_send, sender, tag, handle);
    return std::nullopt;
}

void Matcher::add_in_line(Line& l, int i, bool is_send, int32_t sender, int32_t tag, uint64_t handle) {
    const uint8_t bit = static_cast<uint8_t>(1u << i);
    l.used |= bit;
    l.sends = static_cast<uint8_t>(is_send ? l.sends | bit : l.sends & ~bit);
    l.e[i] = Entry{sender, tag, Queue{}};
    push(l.e[i].q, handle);
}

// The shared table; `line` is the receiver's line when it has one (its count of channels here is kept). A new
// channel goes here only when the line has no free entry or the receiver has channels here already; a channel of
// such a receiver that is not here may still be created in a free entry of the line.
std::optional<uint64_t> Matcher::post_shared(bool is_send, int32_t sender, int32_t receiver, int32_t tag,
                                             uint64_t handle, Line* line) {
    const size_t i = find(sender, receiver, tag);
    Slot& s = slots_[i];
    if (s.receiver >= 0 && s.sends != is_send) {  // the oldest partner waits: match it
        const uint64_t partner = pop(s.q);
        if (s.q.head == kNil) {
            erase(i);
            if (line) --line->elsewhere;
        }
        return partner;
    }
    if (s.receiver >= 0) {  // same side waits already: append
        push(s.q, handle);
        return std::nullopt;
    }
    if (line && line->used != (1u << kInLine) - 1) {  // a new channel, and its receiver's line has room
        add_in_line(*line, __builtin_ctz(~line->used & ((1u << kInLine) - 1)), is_send, sender, tag, handle);
        return std::nullopt;
    }
    s = Slot{receiver, sender, tag, Queue{}, is_send};
    push(s.q, handle);
    if (line) ++line->elsewhere;
    if (++used_ * 2 > slots_.size()) grow();
    return std::nullopt;
}

size_t Matcher::find(int32_t sender, int32_t receiver, int32_t tag) const {
    const size_t mask = slots_.size() - 1;
    size_t i = mix(receiver, sender, tag) & mask;
    while (slots_[i].receiver >= 0 &&
           !(slots_[i].receiver == receiver && slots_[i].sender == sender && slots_[i].tag == tag))
        i = (i + 1) & mask;
    return i;
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
    for (size_t r = 0; r < lines_.size(); ++r)
        for (int i = 0; i < kInLine; ++i)
            if (lines_[r].used & (1u << i)) {
                const Entry& e = lines_[r].e[i];
                return Waiting{(lines_[r].sends & (1u << i)) != 0, e.sender, static_cast<int32_t>(r), e.tag,
                               nodes_[e.q.head].handle};
            }
    for (const Slot& s : slots_)
        if (s.receiver >= 0) return Waiting{s.sends, s.sender, s.receiver, s.tag, nodes_[s.q.head].handle};
    return std::nullopt;
}

}  // namespace collplan::sim
