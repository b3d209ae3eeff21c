// The collective descriptors. See collective.hpp; every switch here lists every collective (-Werror=switch).
#include "collplan/schedule/collective.hpp"

#include <algorithm>

#include "collplan/common/error.hpp"

namespace collplan {
namespace {

using C = Collective;

constexpr CollectiveInfo kInfo[] = {
    {C::allgather, "allgather", "MPI_Allgather", false, false, Counts::none, InPlace::send_everywhere,
     "bytes each rank contributes"},
    {C::alltoall, "alltoall", "MPI_Alltoall", false, false, Counts::none, InPlace::send_everywhere,
     "bytes each rank sends to each rank"},
    {C::alltoallv, "alltoallv", "MPI_Alltoallv", false, false, Counts::matrix, InPlace::send_everywhere,
     "bytes per unit of the communication matrix"},
    {C::allreduce, "allreduce", "MPI_Allreduce", false, true, Counts::none, InPlace::send_everywhere,
     "bytes of the vector"},
    {C::barrier, "barrier", "MPI_Barrier", false, false, Counts::none, InPlace::none, "nothing (no data)"},
    {C::bcast, "bcast", "MPI_Bcast", true, false, Counts::none, InPlace::none, "bytes of the message"},
    {C::reduce, "reduce", "MPI_Reduce", true, true, Counts::none, InPlace::send_at_root, "bytes of the vector"},
    {C::reduce_scatter_block, "reduce_scatter_block", "MPI_Reduce_scatter_block", false, true, Counts::none,
     InPlace::send_everywhere, "bytes of each rank's result block"},
    {C::reduce_scatter, "reduce_scatter", "MPI_Reduce_scatter", false, true, Counts::per_rank,
     InPlace::send_everywhere, "bytes per unit of the result counts"},
    {C::allgatherv, "allgatherv", "MPI_Allgatherv", false, false, Counts::per_rank, InPlace::send_everywhere,
     "bytes per unit of the counts"},
    {C::gather, "gather", "MPI_Gather", true, false, Counts::none, InPlace::send_at_root,
     "bytes each rank contributes"},
    {C::scatter, "scatter", "MPI_Scatter", true, false, Counts::none, InPlace::recv_at_root,
     "bytes the root sends to each rank"},
};
static_assert(std::size(kInfo) == std::size(kCollectives));

constexpr bool table_in_enum_order() {
    for (size_t i = 0; i < std::size(kInfo); ++i)
        if (kInfo[i].id != kCollectives[i] || static_cast<size_t>(kInfo[i].id) != i) return false;
    return true;
}
static_assert(table_in_enum_order());

std::string allowed_names() {
    std::string s;
    for (const CollectiveInfo& i : kInfo) s += (s.empty() ? "" : ", ") + std::string(i.name);
    return s;
}

}  // namespace

const CollectiveInfo& describe(Collective c) { return kInfo[static_cast<size_t>(c)]; }
const char* to_string(Collective c) { return describe(c).name.data(); }

Collective parse_collective(const std::string& name) {
    for (const CollectiveInfo& i : kInfo)
        if (name == i.name) return i.id;
    throw Error("unknown collective '" + name + "' (allowed: " + allowed_names() + ")");
}

uint32_t buffer_blocks(Collective c, const CollShape& sh, int rank, Buf b) {
    const auto P = static_cast<uint32_t>(sh.P), S = sh.S;
    const bool in = b == Buf::in, root = rank == sh.root;
    if (b == Buf::tmp) return 0;
    switch (c) {
        case C::allgather: return in ? S : P * S;
        case C::alltoall:
        case C::alltoallv: return P;
        case C::allreduce: return S;
        case C::barrier: return 0;
        case C::bcast: return in ? 0 : S;
        case C::reduce: return in || root ? S : 0;
        case C::reduce_scatter_block: return in ? P * S : S;
        case C::reduce_scatter: return in ? P : 1;
        case C::allgatherv: return in ? 1 : P;
        case C::gather: return in ? S : root ? P * S : 0;
        case C::scatter: return in ? (root ? P * S : 0) : S;
    }
    return 0;
}

int64_t initial_item(Collective c, const CollShape& sh, int rank, Buf b, uint32_t block) {
    if (b == Buf::tmp || block >= buffer_blocks(c, sh, rank, b)) return kNoItem;
    const int64_t r = rank, P = sh.P, S = sh.S, k = block;
    const bool in = b == Buf::in;
    switch (c) {
        case C::allgather:
        case C::gather: return in ? r * S + k : kNoItem;
        case C::allgatherv: return in ? r : kNoItem;
        case C::alltoall:
        case C::alltoallv: return in ? r * P + k : kNoItem;
        case C::allreduce:
        case C::reduce:
        case C::reduce_scatter_block:
        case C::reduce_scatter:
        case C::scatter: return in ? k : kNoItem;
        case C::bcast: return rank == sh.root ? k : kNoItem;  // the message starts in the root's out
        case C::barrier: return kNoItem;
    }
    return kNoItem;
}

int64_t final_item(Collective c, const CollShape& sh, int rank, uint32_t block) {
    if (block >= buffer_blocks(c, sh, rank, Buf::out)) return kNoItem;
    const int64_t r = rank, P = sh.P, S = sh.S, k = block;
    switch (c) {
        case C::allgather:
        case C::allgatherv:
        case C::gather:
        case C::allreduce:
        case C::reduce:
        case C::bcast: return k;
        case C::alltoall:
        case C::alltoallv: return k * P + r;
        case C::reduce_scatter_block:
        case C::scatter: return r * S + k;
        case C::reduce_scatter: return r;
        case C::barrier: return kNoItem;
    }
    return kNoItem;
}

uint64_t item_count(Collective c, const CollShape& sh) {
    const uint64_t P = static_cast<uint64_t>(sh.P), S = sh.S;
    switch (c) {
        case C::allgather:
        case C::gather:
        case C::scatter:
        case C::reduce_scatter_block: return P * S;
        case C::allgatherv:
        case C::reduce_scatter: return P;
        case C::alltoall:
        case C::alltoallv: return P * P;
        case C::allreduce:
        case C::reduce:
        case C::bcast: return S;
        case C::barrier: return 0;
    }
    return 0;
}

uint64_t counts_size(Collective c, int P) {
    switch (describe(c).counts) {
        case Counts::none: return 0;
        case Counts::per_rank: return static_cast<uint64_t>(P);
        case Counts::matrix: return static_cast<uint64_t>(P) * static_cast<uint64_t>(P);
    }
    return 0;
}

std::string counts_rule(Collective c, int P) {
    const std::string p = std::to_string(P);
    switch (describe(c).counts) {
        case Counts::none: return "no counts";
        case Counts::per_rank: return p + " counts (one per rank)";
        case Counts::matrix: return "a " + p + "x" + p + " communication matrix";
    }
    return "";
}

uint32_t unit_blocks(Collective c, uint32_t in, uint32_t out) {
    switch (c) {
        case C::allgather:
        case C::gather:
        case C::allreduce:
        case C::reduce: return std::max<uint32_t>(1, in);
        case C::scatter:
        case C::reduce_scatter_block:
        case C::bcast: return std::max<uint32_t>(1, out);
        case C::alltoall:
        case C::alltoallv:
        case C::reduce_scatter:
        case C::allgatherv:
        case C::barrier: return 1;
    }
    return 1;
}

void check_blocks(Collective c, int P, uint32_t in, uint32_t out) {
    const auto p = static_cast<uint64_t>(P);
    auto need = [&](bool ok, const char* rule) {
        if (!ok)
            throw Error(std::string(to_string(c)) + " schedule with in=" + std::to_string(in) + " out=" +
                        std::to_string(out) + " blocks at P=" + std::to_string(P) + " (allowed: " + rule + ")");
    };
    switch (c) {
        case C::allgather:
        case C::gather: return need(out == p * in, "out = P * in");
        case C::scatter:
        case C::reduce_scatter_block: return need(in == p * out, "in = P * out");
        case C::allreduce:
        case C::reduce: return need(out == in, "in = out");
        case C::bcast: return need(in == 0, "in = 0: the message starts in the root's out");
        case C::alltoall:
        case C::alltoallv: return need(in == p && out == p, "in = out = P");
        case C::reduce_scatter: return need(in == p && out == 1, "in = P, out = 1");
        case C::allgatherv: return need(in == 1 && out == p, "in = 1, out = P");
        case C::barrier: return;
    }
}

std::string item_name(Collective c, const CollShape& sh, int64_t item) {
    if (item == kNoItem) return "nothing";
    const int64_t P = sh.P;
    switch (c) {
        case C::allgather:
        case C::allgatherv:
        case C::gather:
        case C::scatter:
        case C::bcast: return "b_" + std::to_string(item);
        case C::alltoall:
        case C::alltoallv: return "b_" + std::to_string(item / P) + "->" + std::to_string(item % P);
        case C::allreduce:
        case C::reduce:
        case C::reduce_scatter:
        case C::reduce_scatter_block: return "segment " + std::to_string(item);
        case C::barrier: break;
    }
    return "item " + std::to_string(item);
}

}  // namespace collplan
