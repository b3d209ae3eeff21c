#include "collplan/schedule/symmetry.hpp"

#include <algorithm>
#include <bit>

#include "collplan/model/model.hpp"
#include "collplan/schedule/walk.hpp"
#include "collplan/topology/topology.hpp"

namespace collplan {

const char* to_string(Symmetry s) {
    switch (s) {
        case Symmetry::cyclic: return "cyclic";
        case Symmetry::xor_: return "xor";
        case Symmetry::none: break;
    }
    return "none";
}

Symmetry parse_symmetry(const std::string& name) {
    for (Symmetry s : {Symmetry::none, Symmetry::cyclic, Symmetry::xor_})
        if (name == to_string(s)) return s;
    throw Error("symmetry '" + name + "' is unknown (allowed: none, cyclic, xor)");
}

namespace {

std::string differs(int rank, size_t k, const std::string& what) {
    return "rank " + std::to_string(rank) + " op " + std::to_string(k) + ": " + what;
}

// "" when rank j's program of schedule t is rank 0's program of s moved by g_j, else the first difference.
std::string compare(const Schedule& s, const Schedule& t, Symmetry sym, int j) {
    const RankProgram& p = s.program(0);
    const RankProgram& q = t.program(j);
    const int P = s.ranks();
    if (q.ops.size() != p.ops.size())
        return "rank " + std::to_string(j) + " has " + std::to_string(q.ops.size()) + " ops, rank 0 " +
               std::to_string(p.ops.size());
    for (size_t k = 0; k < p.ops.size(); ++k) {
        const Op &a = p.ops[k], &b = q.ops[k];
        if (a.kind != b.kind) return differs(j, k, std::string(to_string(b.kind)) + ", rank 0 " + to_string(a.kind));
        if (a.fence() != b.fence() || a.port != b.port) return differs(j, k, "fence or port differ from rank 0's");
        const uint32_t k32 = static_cast<uint32_t>(k);
        if (s.op(0, k32).units != t.op(j, k32).units)
            return differs(j, k, std::to_string(t.op(j, k32).units) + " units, rank 0 " +
                                     std::to_string(s.op(0, k32).units));
        const auto da = op_deps(p, k32), db = op_deps(q, k32);
        if (!std::equal(da.begin(), da.end(), db.begin(), db.end())) return differs(j, k, "dependencies differ");
        if (a.kind != OpKind::send && a.kind != OpKind::recv) continue;
        if (a.aux != b.aux) return differs(j, k, "tag " + std::to_string(b.aux) + ", rank 0 " + std::to_string(a.aux));
        const int want = act(sym, P, j, a.peer);
        if (b.peer != want) return differs(j, k, "peer " + std::to_string(b.peer) + ", expected " + std::to_string(want));
    }
    return "";
}

// Whether distance(g(a), g(b)) = distance(a, b) for every move g of the group.
bool keeps_distances(Symmetry sym, const Topology& topo) {
    switch (topo.kind()) {
        case TopoKind::full: return true;
        case TopoKind::ring: return sym == Symmetry::cyclic;
        case TopoKind::torus: return sym == Symmetry::cyclic && topo.dims().size() == 1;
        case TopoKind::hypercube: return sym == Symmetry::xor_;
        case TopoKind::fattree:  // XOR keeps which base-k digits two leaves share when k is a power of two
            return sym == Symmetry::xor_ && std::has_single_bit(static_cast<unsigned>(topo.dims()[0]));
        default: return false;
    }
}

}  // namespace

std::string check_symmetry(const Schedule& s, Symmetry sym) {
    if (!s.whole()) throw Error("check_symmetry: " + s.subject() + " holds one rank's program; it needs every rank's");
    if (sym == Symmetry::none) return "no symmetry declared";
    if (sym == Symmetry::xor_ && !std::has_single_bit(static_cast<unsigned>(s.ranks())))
        throw Error("check_symmetry: xor symmetry needs P = 2^d, P = " + std::to_string(s.ranks()));
    for (int j = 1; j < s.ranks(); ++j)
        if (std::string why = compare(s, s, sym, j); !why.empty()) return why;
    return "";
}

const char* to_string(BlockLayout l) { return l == BlockLayout::same ? "same" : "by_rank"; }

std::string one_rank_verify_refusal(const Schedule& s) {
    switch (s.collective()) {
        case Collective::allgather:
        case Collective::alltoall:
        case Collective::barrier: break;
        default:
            return "the one-rank verification covers allgather, alltoall and barrier, not " +
                   std::string(describe(s.collective()).name);
    }
    if (s.symmetry == Symmetry::none) return s.subject() + " declares no rank symmetry";
    if (s.symmetry == Symmetry::xor_ && !std::has_single_bit(static_cast<unsigned>(s.ranks())))
        return "xor symmetry needs P = 2^d, not P = " + std::to_string(s.ranks());
    return "";
}

BlockLayout block_layout(Collective c, Buf b) {
    return c == Collective::alltoall || (c == Collective::allgather && b == Buf::out) ? BlockLayout::by_rank
                                                                                      : BlockLayout::same;
}

int64_t moved_item(Collective c, const CollShape& sh, int64_t item, Symmetry sym, int j) {
    if (item < 0) return item;
    if (c == Collective::allgather)
        return int64_t{act(sym, sh.P, j, static_cast<int>(item / sh.S))} * sh.S + item % sh.S;
    if (c == Collective::alltoall)
        return int64_t{act(sym, sh.P, j, static_cast<int>(item / sh.P))} * sh.P +
               act(sym, sh.P, j, static_cast<int>(item % sh.P));
    throw Error("moved_item: " + std::string(describe(c).name) + " is not covered");
}

std::string check_moved_peers(const Schedule& rank0, const Schedule& other, int j) {
    return compare(rank0, other, rank0.symmetry, j);
}

std::string check_moved_blocks(const Schedule& rank0, const Schedule& other, int j, BlockLayout tmp) {
    const int P = rank0.ranks();
    const Collective c = rank0.collective();
    auto moved = [&](Buf b, uint32_t block) -> uint32_t {
        const BlockLayout l = b == Buf::tmp ? tmp : block_layout(c, b);
        const uint32_t per = rank0.blocks(b) / static_cast<uint32_t>(P);
        if (l == BlockLayout::same || per == 0) return block;
        return static_cast<uint32_t>(act(rank0.symmetry, P, j, static_cast<int>(block / per))) * per + block % per;
    };
    const RankProgram& p = rank0.program(0);
    for (uint32_t k = 0; k < p.ops.size(); ++k) {
        const OpView va = rank0.op(0, k), vb = other.op(j, k);
        if ((p.ops[k].kind == OpKind::copy || p.ops[k].kind == OpKind::reduce) &&
            block_count(va.src()) != block_count(vb.src()))
            return differs(j, k, std::to_string(block_count(vb.src())) + " source blocks, rank 0 " +
                                     std::to_string(block_count(va.src())));
        const auto a = va.segs, b = vb.segs;
        size_t sb = 0;  // walks b's blocks beside a's
        uint32_t ib = 0;
        auto mismatch = [&](const std::string& what) { return differs(j, k, what); };
        for (const Segment& sa : a)
            for (uint32_t x = 0; x < sa.count; ++x) {
                while (sb < b.size() && ib == b[sb].count) ++sb, ib = 0;
                if (sb == b.size()) return mismatch("names fewer blocks than rank 0's op moved");
                const uint32_t want = moved(sa.buf(), sa.first() + x), got = b[sb].first() + ib++;
                if (b[sb].buf() != sa.buf() || got != want)
                    return mismatch(std::string(to_string(b[sb].buf())) + "[" + std::to_string(got) + "], expected " +
                                    to_string(sa.buf()) + "[" + std::to_string(want) + "] (rank 0's " +
                                    to_string(sa.buf()) + "[" + std::to_string(sa.first() + x) + "] moved)");
            }
        while (sb < b.size() && ib == b[sb].count) ++sb, ib = 0;
        if (sb != b.size()) return mismatch("names more blocks than rank 0's op moved");
    }
    return "";
}

std::string symmetric_estimate_refusal(Symmetry sym, const Topology& topo, const Model& model) {
    if (sym == Symmetry::none) return "the schedule declares no rank symmetry";
    if (!model.duplex) return "the model's ports are simplex (duplex=0)";
    if (model.host_beta > 0) return "the model has a host channel (host_beta)";
    if (model.uses_hops() && !keeps_distances(sym, topo))
        return std::string("the model prices hops and ") + to_string(sym) + " moves change distances on " + topo.spec();
    return "";
}

}  // namespace collplan
