// Message matching for the simulators (MPI's rule, docs/schedule.md): the k-th send from i to j with tag t
// matches the k-th recv posted by j from i with tag t. Sends and recvs are posted as they become ready; a post
// either finds the oldest waiting partner of its channel (and removes it) or waits itself.
//
// A channel (sender, receiver, tag) with waiting posts has one FIFO of them (nodes from a pool with a free list: no
// allocation per message once warm). The channel itself lives in its receiver's cache line -- up to three channels
// per receiver, in a per-receiver array, so that ranks stepping in order touch memory in order -- or, when that line
// is full, in a shared open-addressing hash table (the receiver's line counts them there). A channel never lives
// in both. Memory: one line per receiver plus what waits.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace collplan::sim {

class Matcher {
public:
    // Receivers 0 .. receivers-1 get a line each; any other receiver uses the shared table only.
    explicit Matcher(int receivers = 0);
    // Posts a send (is_send) or a recv of channel (sender -> receiver, tag) carrying `handle`. Returns the handle
    // of the partner it matched, or nothing when it waits.
    std::optional<uint64_t> post(bool is_send, int32_t sender, int32_t receiver, int32_t tag, uint64_t handle);
    size_t waiting() const { return waiting_; }
    // Whether posts of one side (sends if `sends`, else recvs) wait on channel (sender -> receiver, tag).
    bool has_waiting(bool sends, int32_t sender, int32_t receiver, int32_t tag) const;
    // Starts loading the memory a post to this channel will look at first (the simulators prefetch soon posts).
    void prefetch(int32_t sender, int32_t receiver, int32_t tag) const;
    // Some waiting post (for error messages): (is_send, sender, receiver, tag, handle); nothing if none waits.
    struct Waiting {
        bool is_send;
        int32_t sender, receiver, tag;
        uint64_t handle;
    };
    std::optional<Waiting> any_waiting() const;
    size_t memory_bytes() const {
        return lines_.capacity() * sizeof(Line) + slots_.capacity() * sizeof(Slot) + nodes_.capacity() * sizeof(Node);
    }

private:
    static constexpr uint32_t kNil = 0xffffffffu;
    static constexpr int kInLine = 3;
    struct Queue {  // the waiting posts of one channel
        uint32_t head = kNil, tail = kNil;
    };
    struct Entry {
        int32_t sender = 0, tag = 0;
        Queue q;
    };
    struct alignas(64) Line {  // one receiver's channels
        uint8_t used = 0;        // bit i: entry i holds a channel
        uint8_t sends = 0;       // bit i: its queue holds sends (else recvs)
        uint32_t elsewhere = 0;  // the receiver's channels in the shared table
        Entry e[kInLine];
    };
    struct Slot {
        int32_t receiver = -1;  // -1: empty
        int32_t sender = 0;
        int32_t tag = 0;
        Queue q;
        bool sends = false;  // the queue holds sends (else recvs)
    };
    struct Node {
        uint64_t handle;
        uint32_t next;
    };
    std::optional<uint64_t> post_in_line(Line& l, bool is_send, int32_t sender, int32_t tag, uint64_t handle);
    void add_in_line(Line& l, int i, bool is_send, int32_t sender, int32_t tag, uint64_t handle);
    std::optional<uint64_t> post_shared(bool is_send, int32_t sender, int32_t receiver, int32_t tag, uint64_t handle,
                                        Line* line);
    uint64_t pop(Queue& q);
    void push(Queue& q, uint64_t handle);
    size_t find(int32_t sender, int32_t receiver, int32_t tag) const;  // slot index: the key's or the empty one
    void erase(size_t i);
    void grow();

    std::vector<Line> lines_;
    std::vector<Slot> slots_;
    std::vector<Node> nodes_;
    uint32_t free_ = kNil;
    size_t used_ = 0, waiting_ = 0;
};

}  // namespace collplan::sim
