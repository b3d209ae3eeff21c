// DRS_N -- distributed random scheduling avoiding node contention (Wang, Lin, Ranka, "Distributed scheduling of
// unstructured collective communication on the CM-5", 1993, sec. 4, Fig. 5). A protocol, not a static schedule:
// which message goes when is decided at run time, so it has this small deterministic event simulation instead of
// a generator (the MPI version, with one-sided atomics, belongs to the runtime).
//
// The protocol, per rank i, until its sending vector is empty:
//   1. pick a destination j among its unsent messages (a seeded random order, then cyclically: "try another");
//   2. test-and-set j's busy flag with an active message (one way am_s; the handler runs at j and costs j
//      handler_s of CPU, which delays j's own next step; the reply takes am_s back);
//   3. FREE: send the message (its time from the Model, as in the estimate: one send port at i, one receive port
//      at j); when the send completes, an active message resets j's flag (arrives am_s later);
//      BUSY: go to 1 with the next destination (after retry_delay_s if it is the same one again).
// Node contention: a node receives at most one data message at a time (the flag), exactly the paper's claim.
// Time is kept in integer picoseconds; the result depends only on the inputs and the seed.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "collplan/model/model.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan {

struct DrsnOptions {
    uint64_t seed = 1;
    double am_s = 5e-6;          // one-way time of an active message (inquiry, reply, reset), seconds, > 0
    double handler_s = 0;        // CPU time of the test-and-set handler at the receiver, seconds
    double retry_delay_s = 0;    // wait before asking the same busy destination again, seconds
};

struct DrsnResult {
    double time_s = 0;                 // the last message received (or sent)
    uint64_t inquiries = 0;            // test-and-set messages sent
    uint64_t refused = 0;              // of which the destination was busy
    std::vector<double> rank_done_s;   // per rank: its last send or receive completed
};

// `matrix`: P x P units (row = source, diagonal ignored); a message of u units has u * unit_bytes bytes.
DrsnResult simulate_drs_n(std::span<const uint64_t> matrix, int P, const Topology& topo, const Model& model,
                          double unit_bytes, const DrsnOptions& opt = {});

}  // namespace collplan
