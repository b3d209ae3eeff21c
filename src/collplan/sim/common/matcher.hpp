// Message matching for the simulators (MPI's rule, docs/schedule.md): the k-th send from i to j with tag t
// matches the k-th recv posted by j from i with tag t. Sends and recvs are posted as they become ready; a post
// either finds the oldest waiting partner of its channel (and removes it) or waits itself.
//
// An open-addressing hash table keyed by (receiver, sender, tag) with one FIFO per channel (nodes from a pool
// with a free list): no allocation per message once warm, memory proportional to the waiting posts only.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace collplan::sim {

class Matcher {
public:
    Matcher();
    // Posts a send (is_send) or a recv of channel (sender -> receiver, tag) carrying `handle`. Returns the handle
    // of the partner it matched, or nothing when it waits.
    std::optional<uint64_t> post(bool is_send, int32_t sender, int32_t receiver, int32_t tag, uint64_t handle);
    size_t waiting() const { return waiting_; }
    // Starts loading the home slot of a channel (the simulators prefetch the posts they will make soon).
    void prefetch(int32_t sender, int32_t receiver, int32_t tag) const;
    // Some waiting post (for error messages): (is_send, sender, receiver, tag, handle); nothing if none waits.
    struct Waiting {
        bool is_send;
        int32_t sender, receiver, tag;
        uint64_t handle;
    };
    std::optional<Waiting> any_waiting() const;
    size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot) + nodes_.capacity() * sizeof(Node); }

private:
    static constexpr uint32_t kNil = 0xffffffffu;
    struct Slot {
        int32_t receiver = -1;  // -1: empty
        int32_t sender = 0;
        int32_t tag = 0;
        uint32_t head = kNil, tail = kNil;
        bool sends = false;  // the queue holds sends (else recvs)
    };
    struct Node {
        uint64_t handle;
        uint32_t next;
    };
    size_t find(int32_t sender, int32_t receiver, int32_t tag) const;  // slot index: the key's or the empty one
    void erase(size_t i);
    void grow();
    uint32_t new_node(uint64_t handle);

    std::vector<Slot> slots_;
    std::vector<Node> nodes_;
    uint32_t free_ = kNil;
    size_t used_ = 0, waiting_ = 0;
};

}  // namespace collplan::sim
