// The paper's "small program": step-synchronous cost formulas of the gossip algorithms in the paper's units
// (a step costs r + the largest packet it sends; one PU's whole contribution takes 1 unit to transfer; r = startup
// / transfer time of that contribution) and the search for the best parameters (a, b, k) for given n and r.
//
// The formulas count the steps of collplan's constructions (gossip_common.cpp) with uniform gaps: they are
// Lemma 4, Lemma 5 and Lemma 7/9 of the paper with the rounding of the construction made explicit. The
// estimate of a generated schedule may differ slightly (uneven segments, dataflow instead of lock-step).
#pragma once
#include <string>
#include <vector>

#include "collplan/algorithms/allgather/gossip_common.hpp"

namespace collplan::gossip {

// `unit` = transfer time of the data one PU holds when the 1-D gossip starts (1 for a ring; n^f / colours in
// phase f of highdimgos).
double approach1_units(int n, bool wrap, double r, double unit = 1);
double approach2_units(int n, int radix, double r, double unit = 1);
double circgos_units(int n, bool wrap, const CircParams& p, double r, double unit = 1);
// One of the three by name ("approach1", "approach2", "circgos"); throws Error naming the allowed ones.
double units_of(const std::string& algorithm, int n, bool wrap, const CircParams& p, double r, double unit = 1);

// Search over a (1..n), b (2..max_b), k (1..max_k); a fixed value (> 0) restricts that parameter.
struct CircSearch {
    int a = 0, b = 0, k = 0;  // 0 = search
    int radix = 3;
    int max_b = 64, max_k = 64;
};
CircParams best_circgos(int n, bool wrap, double r, double unit, const CircSearch& s, double* cost = nullptr);

// The diagonal algorithms on sides n_0 x n_1 x ... (torus or mesh); colours as in DiagParams.
double diagonal_units(const std::vector<int>& sides, bool torus, const DiagParams& p, double r);
struct DiagSearch {
    int a = 0, b = 0, k = 0;
    int max_b = 16, max_k = 24;
};
// Only parameter sets the construction accepts (diagonal_applies) are considered.
DiagParams best_diagonal(const Topology& t, DiagParams base, double r, const DiagSearch& s, double* cost = nullptr);

// highdimgos with the given choice per phase.
double highdimgos_units(const std::vector<int>& sides, bool torus, const std::vector<PhaseChoice>& phases,
                        int colours, double r);

// Parameters of the gossip generators. r: the startup / transfer ratio the "auto" search optimises for.
double ratio_param(const Problem& p);
// Entry `phase` of a parameter "auto" | "x" | "x,y,..." (the last entry repeats); 0 = auto.
int list_param(const Problem& p, const std::string& name, int phase);
// circgos parameters of a 1-D gossip on n PUs (phase `phase` of a generator), autos resolved by best_circgos.
CircParams circ_params(const Problem& p, int n, bool wrap, double unit, int phase);
// highdimgos' choice per phase: algs (1, 2, 3 = circgos, or auto = the cheapest by the formulas), with circgos
// parameters per phase; the units are those of colour 0's axis order.
std::vector<PhaseChoice> phase_choices(const Problem& p, int colours);
// torgos/cubgos parameters, autos resolved by best_diagonal.
DiagParams diag_params(const Problem& p, bool sum_diagonal);
// The same without the search: an auto a becomes n0 (g = 1, which always fits), so applies() stays cheap -- the
// search only returns parameters that fit.
DiagParams diag_params_for_applies(const Problem& p, bool sum_diagonal);

// The planner's candidates (registry CandidateQuery): the (a, b, k) the search picks for the startup / transfer
// ratios r of sizes spread over the query's range, r = startup_s / (per_byte_s x bytes per PU), without repeats.
std::vector<ParamSet> circgos_candidates(const CandidateQuery& q);
std::vector<ParamSet> diagonal_candidates(const CandidateQuery& q, bool sum_diagonal);

// Parameter specs shared by the generators.
ParamSpec oneport_spec();
ParamSpec radix_spec();
ParamSpec ratio_spec();
// highdimgos and its coloured variant: per-phase 1-D algorithm, circgos a/b/k, r, radix, oneport.
std::vector<ParamSpec> highdimgos_specs();

}  // namespace collplan::gossip
