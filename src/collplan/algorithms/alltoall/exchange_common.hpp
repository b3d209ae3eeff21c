// Shared by the complete-exchange family of Nicol & Bokhari (SIGMETRICS 1994): alltoall/direct_exchange,
// alltoall/standard_exchange and alltoall/multiphase. See docs/exchange.md.
#pragma once
#include <span>
#include <string>

#include "collplan/algorithms/registry.hpp"

namespace collplan::exchange {

// log2 P when P = 2^d (P >= 1), else -1.
int cube_dimension(int P);
// "" when P is a power of two, else the reason (one line).
std::string needs_power_of_two(const Problem& p);
// The "barrier" parameter of the family: 1 = a global barrier before every phase (the paper's Q(d)).
ParamSpec barrier_param();

// Direct Exchange: [barrier], then steps k = 1..P-1 with partner r XOR k (send in[r^k], receive out[r^k]); the
// local block in[r] -> out[r] is copied during the last step.
Schedule direct_exchange(const Problem& p, bool barrier);

// Multiphase Complete Exchange: phase i spans the next partition[i] rank bits from the top (bit d-1 first). Each
// phase: [barrier], a Direct Exchange of the "effective blocks" (2^(d-d_i) consecutive blocks) inside the subcube,
// then one copy of all P blocks (the shuffle) that restores the Standard-Exchange order. Scratch: tmp of 2P blocks.
Schedule multiphase(const Problem& p, std::span<const int> partition, bool barrier);

}  // namespace collplan::exchange
