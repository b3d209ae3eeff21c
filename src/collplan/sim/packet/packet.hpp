// Packet-level network simulation (docs/simulation.md, "packet").
//
// Every message is cut into packets of at most `mtu` payload bytes plus `header` bytes. Routers sit at the
// topology's vertices (end nodes and fat-tree switches); every directed link is a channel from an output port of
// one router to an input port of the next. Each node has `ports` NICs, each with an injection channel into its
// router and an ejection channel out of it. Packets follow the topology's route (dimension-ordered on tori and
// meshes, e-cube on hypercubes, up/down on fat trees).
//   - Input ports hold `vcs` virtual channels of `buffer` bytes each (in whole flits). Credit flow control: a
//     packet may cross a link only when the downstream VC has room for all of it (virtual cut-through) -- with
//     switching=wormhole, when the VC is empty and has room for one flit's worth of the packet, and it then owns the
//     VC until its tail leaves (an approximation: links are never stalled in the middle of a packet).
//   - Tori with dateline=1 split the VCs in two classes: a packet uses the lower half in a dimension until it has
//     crossed that dimension's wrap-around link, then the upper half (deadlock-free dimension-ordered routing).
//   - A packet whose head arrives at a router may leave `router_latency` later (route computation, VC and switch
//     allocation, traversal); an output port serves one packet at a time at its bandwidth, choosing among the
//     waiting packets round robin over input ports (or at random, seeded; or, with arbitration=fcfs, first come
//     first served: the packet that reached the router first, round robin among equals); without virtual output
//     queues only the packet at the head of each input VC may compete (head-of-line blocking), with voq=1 any
//     packet may.
//   - The head reaches the next router link_latency + one flit after the packet starts on a link; the tail follows
//     at the link's bandwidth. Returned credits travel back with link_latency.
//   - NICs serve their messages in order, after `overhead`; pacing=gap leaves pacing_gap idle between a NIC's
//     packets, pacing=hops injects a message of h hops at (link bandwidth) / (pacing_factor h), pacing=load at
//     (link bandwidth) / (pacing_factor n (1 + w / N)), N = its packets. Both numbers are derived from the schedule
//     and the routes, nothing is fitted (load_shares):
//       n = its share of its busiest link: the largest load that the message's own group (the ops between two
//           fences, group g of every rank together; after a barrier counted afresh) puts on a link of its route, in
//           multiples of the message's size. If every message of a group runs at this rate, no link of the group is
//           asked for more than its bandwidth, and the group's busiest links are exactly full. On a square torus A2AT
//           group (every link carries h messages of it) n = h, the report's hop-count pacing; the group of the
//           half-ring offsets of an even torus puts k/2 messages on every link, so its (k/2, k/2) message of k hops
//           gets n = k/2 where hop pacing gives it k; on a mesh n is the load of its group's busiest link on its
//           route (links near the middle carry more).
//       w = (c - 1) h packet times of slack, h = its hops, c = the most input channels (previous links or
//           injection ports) from which the group's messages enter one link of its route: with first-come
//           first-served arbitration a packet waits at most c - 1 packet times at each router when every input
//           delivers a packet at once, so a message is given that much room on each of its h hops instead of none
//           (at exactly n a single collision is never made up, and a full network has no idle slot to absorb it).
//           A2AT on a 2-D torus: c = 3 (the transit input and two injections or two turns per output; 2 for axis
//           groups), so a 1 MiB message (N = 512) of h hops runs at 1 + 2h/512 of its share.
#pragma once
#include <cstdint>
#include <vector>

#include "collplan/model/model.hpp"
#include "collplan/schedule/schedule.hpp"
#include "collplan/sim/common/params.hpp"
#include "collplan/sim/common/result.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan::sim {

struct SimOptions;

// pacing=load: per rank r and op k of a schedule, share[begin[r] + k] = n and waits[begin[r] + k] = w (0 for ops
// that are not sends).
struct LoadShares {
    std::vector<uint64_t> begin;
    std::vector<float> share, waits;
    double of(int rank, uint32_t op) const { return share[begin[static_cast<size_t>(rank)] + op]; }
    double waits_of(int rank, uint32_t op) const { return waits[begin[static_cast<size_t>(rank)] + op]; }
};
LoadShares load_shares(const Schedule& s, const Topology& topo);

SimResult simulate_packet(const Schedule& s, const Topology& topo, const Model& model, const NetParams& net,
                          const SimOptions& opt);

}  // namespace collplan::sim
