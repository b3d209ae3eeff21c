// Analytic communication models. Each prices one message (bytes, hops), a local copy/reduction, a calc and a
// global barrier, and says how many ports a node has. Specs: "kind:key=value,...", values with units.
//   hockney:alpha=1us,beta=1ns/B[,gamma=0.2ns/B][,rho=0][,ports=1][,duplex=1]
//       T(m) = alpha + m*beta                          (Hockney 1994, "The communication challenge for MPP")
//   wormhole:startup=30us,flit=8B,flit_time=..,hop_time=..[,ports=1][,duplex=1][,gamma=..][,rho=..]
//       T(m,h) = startup + ceil(m/flit)*flit_time + h*hop_time   (Juurlink, Rao, Sibeyn, gossip paper sec. 2)
//   circuit:lambda=177.5us,tau=0.394us/B,delta=51.5us[,rho=0.54us/B][,q=750us][,gamma=..]
//       T(m) = lambda + m*tau + delta; shuffle m*rho; barrier Q  (Nicol & Bokhari, sec. 2.1 and 4)
//   loggp:L=..,o=..,g=..,G=..[,O=..][,cpu=0][,ports=1][,gamma=..]
//       T(m) = o + (m-1)*G + L + o; injection gap max(g, (m-1)*G)  (Alexandrov et al. 1995); cpu=1: the
//       overheads o + m*O also occupy the ranks' CPUs, shared with local ops (LogGOPSim's semantics)
// Common keys: ports (send/receive ports per node, all-port = degree), duplex (1: a port sends and receives
// at once; 0: the Paragon case, a node cannot send and receive at the same time), gamma (reduction time per
// byte), rho (copy time per byte), reduce_call and copy_call (time per local reduction / copy, on top of its
// bytes: one call of MPI_Reduce_local or memmove; docs/models.md), barrier (time of a global barrier; default:
// ceil(log2 P) rounds of the zero-byte message time), barrier_per_dim (circuit's Q(d) = q*d), host_beta and
// host_ranks (the ranks of one host share its memory: every message between two of them also passes through the
// host's channel of host_beta seconds per byte; host_ranks consecutive ranks per host, 0 = all on one; the max-rate
// model of Gropp, Olson, Samfass, "Modeling MPI communication performance on SMP nodes", EuroMPI 2016;
// docs/models.md "Ranks that share a host"),
// eager and rndv (a message of more than eager bytes goes by rendezvous: sender and receiver synchronise before the
// data moves, and it arrives rndv later -- the S of LogGPS, Ino, Fujimoto, Hagihara, PPoPP 2001, with the
// synchronisation's time measured by calibrate; docs/models.md "Eager and rendezvous").
#pragma once
#include <map>
#include <memory>
#include <string>

#include "collplan/common/error.hpp"

namespace collplan {

// Timing of one message, all in seconds relative to the moment it starts (both ends ready, ports free).
struct MessageTime {
    double send_done;   // the sender's op completes (its port is free again after send_busy)
    double recv_done;   // the receiver's op completes
    double send_busy;   // how long the sender's port stays occupied
    double recv_busy;   // how long the receiver's port stays occupied
    double send_cpu = 0;  // LogGP: the sender's CPU is busy this long from the start (o + m O), ...
    double recv_cpu = 0;  // ... and the receiver's for the last this-long of the message (its o + m O)
};

class Model {
public:
    virtual ~Model() = default;
    virtual std::string kind() const = 0;
    virtual std::string spec() const = 0;                          // canonical spec string
    virtual MessageTime message(double bytes, int hops) const = 0;
    // a local copy or reduction of some bytes: a per-call cost (the executor's memmove or MPI_Reduce_local) plus
    // its bytes
    virtual double copy_s(double bytes) const { return (bytes > 0 ? copy_call_s : 0) + bytes * rho; }
    virtual double reduce_s(double bytes) const { return (bytes > 0 ? reduce_call_s : 0) + bytes * gamma; }
    virtual double calc_s(double bytes) const { return bytes * gamma; }
    virtual double barrier_s(int ranks) const;                     // a global barrier
    virtual double startup_s() const = 0;                          // zero-byte message latency (lower bounds)
    virtual double per_byte_s() const = 0;                         // link/NIC time per byte (lower bounds)
    virtual bool uses_hops() const { return false; }               // message() depends on its hops

    int ports = 1;        // concurrent sends (and receives) per node
    bool duplex = true;   // a node can send and receive at the same time
    double gamma = 0;     // s/B reduction
    double rho = 0;       // s/B local copy
    double barrier_fixed_s = -1;   // >= 0: fixed barrier time
    double barrier_per_dim_s = -1; // >= 0: barrier time per log2(P) (circuit's Q(d) = q*d)
    double host_beta = 0;          // s/B through a host's shared channel, all its ranks' messages together (0: none)
    int host_ranks = 0;            // consecutive ranks per host (0: every rank on one host)
    double copy_call_s = 0;        // s per local copy, on top of its bytes' rho (the cost of one call)
    double reduce_call_s = 0;      // s per local reduction, on top of its bytes' gamma
    double eager_bytes = 0;        // messages of more bytes go by rendezvous ...
    double rndv_s = 0;             // ... and arrive this much later (0: no rendezvous term)

    // The rendezvous synchronisation a message of `bytes` pays on top of message() (0 for an eager message).
    double handshake_s(double bytes) const { return rndv_s > 0 && bytes > eager_bytes ? rndv_s : 0; }

    // The host of a rank, and whether a message between two ranks goes through a host's channel (then its host).
    int host_of(int rank) const { return host_ranks > 0 ? rank / host_ranks : 0; }
    bool shares_host(int a, int b) const { return host_beta > 0 && host_of(a) == host_of(b); }
};

// "hockney:alpha=1us,beta=1ns/B" -> model; throws Error naming the bad key/value and the allowed ones.
std::unique_ptr<Model> parse_model(const std::string& spec);

}  // namespace collplan
