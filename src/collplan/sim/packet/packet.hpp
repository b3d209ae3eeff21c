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
//     waiting packets round robin over input ports (or at random, seeded); without virtual output queues only the
//     packet at the head of each input VC may compete (head-of-line blocking), with voq=1 any packet may.
//   - The head reaches the next router link_latency + one flit after the packet starts on a link; the tail follows
//     at the link's bandwidth. Returned credits travel back with link_latency.
//   - NICs serve their messages in order, after `overhead`; pacing=gap leaves pacing_gap idle between a NIC's
//     packets, pacing=hops injects a message of h hops at (link bandwidth) / (pacing_factor h).
#pragma once
#include "collplan/model/model.hpp"
#include "collplan/schedule/schedule.hpp"
#include "collplan/sim/common/params.hpp"
#include "collplan/sim/common/result.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan::sim {

struct SimOptions;
SimResult simulate_packet(const Schedule& s, const Topology& topo, const Model& model, const NetParams& net,
                          const SimOptions& opt);

}  // namespace collplan::sim
