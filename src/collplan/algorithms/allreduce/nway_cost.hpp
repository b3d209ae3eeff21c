// Cost of the n-way dissemination allreduce for each candidate radix n, and the choice of n.
//
// The paper (End et al., INFOCOMP 2015, sec. V) times n = 1..7 at the first call and keeps the fastest; it notes
// that n "will primarily depend on message rate, latency and bandwidth" and could be a function of them. Here
// the choice is split in two (NCCL's split): a cost per candidate -- nway_cost() from a model, or later a
// measurement -- and an argmin over the candidates, choose_n(), which takes any cost function. The planner
// reuses both; `--param n=auto` uses best_dissemination_n() with kDefaultDisseminationModel unless given one.
//
// nway_cost() prices one rank's program of allreduce/nway_dissemination (every rank's program has the same
// shape: the schedule is symmetric), group by group, exactly as estimate() does on a full topology (hops = 1):
//   communication group with m messages of B bytes:  (ceil(m / ports) - 1) * gap + recv_done,
//       gap = max(send_busy, recv_busy) and recv_done of model.message(B, 1)   (LogGP: max(g, (B-1)G) and
//       2o + L + (B-1)G; Hockney: alpha + B beta)
//   local ops: reduce_s(B) per reduction (inverse ones too), copy_s(B) per copy, one after the other.
// Models with duplex=0 are refused (sends and receives would share ports: use estimate()).
// nway_contributions_cost() prices forward=contributions (nway::contributions_schedule) the same way, each op at
// its own size; a group's messages are priced at its largest one, so where the last round's messages differ in
// size (P not a power of n + 1) it is an upper bound of estimate(), else equal to it.
#pragma once
#include <functional>
#include <vector>

#include "collplan/algorithms/allreduce/nway_common.hpp"
#include "collplan/model/model.hpp"

namespace collplan {

// The default model for n=auto: LogGP for the ib-qdr machine (python/collplan/machines/ib-qdr.toml).
// L + 2o = 1.6 us is ib-qdr's alpha (OSU osu_latency on ConnectX-2 QDR), G its beta (osu_bw, 3.2 GB/s), gamma
// and rho its reduction and copy costs. The split o = 0.3 us, L = 1.0 us and the gap g = 0.3 us (about 3.3 M
// small messages per second from one process) are assumptions, not measurements: g < L + 2o is what makes
// n > 1 pay off ("implicit parallelism of the InfiniBand network", Hoefler et al. 2006).
inline constexpr const char* kDefaultDisseminationModel =
    "loggp:L=1us,o=300ns,g=300ns,G=312.5ps/B,gamma=200ps/B,rho=100ps/B";
inline constexpr int kDisseminationMaxN = 7;  // the paper's candidates n = 1..7

struct NwayRound {
    int messages = 0;       // sent (= received) by each rank
    int reductions = 0;     // reduce ops (inverse ones included)
    int copies = 0;         // copy ops
    double time_s = 0;      // communication + local work of the round
};

struct NwayCost {
    int n = 0;
    nway::Plan plan;
    std::vector<NwayRound> rounds;   // one per round (the initial copy counts in round 1); P = 1: the copy only
    int messages = 0;                // per rank, all rounds
    double bytes_sent = 0;           // per rank
    int reductions = 0, copies = 0;  // per rank
    double time_s = 0;
};

NwayCost nway_cost(int P, int n, const Model& model, double size_bytes, nway::TakeOut t = nway::TakeOut::keep);
NwayCost nway_contributions_cost(int P, int n, const Model& model, double size_bytes);  // `plan` left empty
std::vector<NwayCost> nway_costs(int P, const Model& model, double size_bytes, int n_max = kDisseminationMaxN,
                                 nway::TakeOut t = nway::TakeOut::keep);

// argmin over n = 1..n_max of cost(n); ties go to the smaller n. The hook for choosing n by measurement.
int choose_n(int n_max, const std::function<double(int)>& cost);

// The n in 1..n_max with the smallest nway_cost() time.
int best_dissemination_n(int P, const Model& model, double size_bytes, int n_max = kDisseminationMaxN,
                         nway::TakeOut t = nway::TakeOut::keep);
// The same for forward=contributions (nway_contributions_cost()).
int best_contributions_n(int P, const Model& model, double size_bytes, int n_max = kDisseminationMaxN);

}  // namespace collplan
