// Shared machinery of the gossip family (Juurlink, Rao, Sibeyn, "Gossiping on meshes and tori", IEEE TPDS 9(6),
// 1998): allgather on linear arrays, rings, meshes and tori in the wormhole model. The generators
// approach1, approach2, circgos, highdimgos, highdimgos_coloured, approach11/21/22, torgos and cubgos are thin
// files over this engine.
//
// Data. Each rank's contribution may be split into C "colours" (chunks): rank r's in[0..C) goes to out[r*C+c];
// colour c of every rank travels independently (the colouring of highdimgos'). A RankSet names the ranks whose
// colour-c chunk a message carries.
//
// Steps. Every transfer is stamped with a step (the paper's synchronous routing step); a rank's ops of one step
// form one group (fence), so a rank starts step s+1 when its ops of step s are done. Transfers of different colours
// with the same step share the group: that is the all-port concurrency of the paper. With oneport, the transfers of
// a step are edge-coloured (a rank is in at most one transfer per slot) and each rank runs its slots one after the
// other: the Paragon's "a PU cannot send and receive at the same time", with the black/white alternation of rings.
//
// Ports. A transfer along axis i in the + direction uses send port 2i and receive port 2i+1 (the link it leaves and
// the link it enters by); in the - direction send port 2i+1 and receive port 2i. A model with fewer ports takes
// them modulo its port count.
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collplan/algorithms/registry.hpp"

namespace collplan::gossip {

// A set of ranks as sorted, disjoint, non-touching half-open runs [lo, hi).
class RankSet {
public:
    RankSet() = default;
    static RankSet single(int r) { return range(r, r + 1); }
    static RankSet range(int lo, int hi);
    bool empty() const { return runs_.empty(); }
    int64_t count() const;
    bool intersects(const RankSet& o) const;
    RankSet& operator|=(const RankSet& o);
    RankSet minus(const RankSet& o) const;
    // `parts` pieces of near-equal counts in rank order (empty pieces when count() < parts).
    std::vector<RankSet> split(int parts) const;
    const std::vector<std::pair<int, int>>& runs() const { return runs_; }
    bool operator==(const RankSet&) const = default;

private:
    std::vector<std::pair<int, int>> runs_;
};

// Collects step-stamped transfers and turns them into an allgather Schedule. With only_rank >= 0 it builds that
// rank's program alone, but the routines still run on every line (what a rank holds and the step numbers depend
// on the whole gossip): one rank costs the whole gossip's time and the P rank sets it carries; all-port only the
// rank's own transfers are kept, oneport all of them (the slot colouring is global).
class Builder {
public:
    Builder(int ranks, int chunks, bool oneport, int only_rank);
    // `chunk` selects the out blocks (r*chunks + chunk for each rank r of data). Empty data is ignored.
    void transfer(int step, int from, int to, int chunk, const RankSet& data, int send_port, int recv_port);
    Schedule build() const;
    int ranks() const { return ranks_; }
    int chunks() const { return chunks_; }

private:
    struct Transfer {
        int step, from, to, chunk, send_port, recv_port;
        uint32_t data;  // index into data_
        int slot = 0;   // oneport: position within the step
    };
    void assign_slots(std::vector<Transfer>& ts) const;
    void emit(Schedule& s, int rank, const std::vector<const Transfer*>& mine) const;
    int ranks_, chunks_;
    bool oneport_;
    int only_rank_;
    bool keep_all_;  // keep every transfer, not only only_rank_'s
    std::vector<Transfer> transfers_;
    std::vector<RankSet> data_;
};

// A line of PUs: ranks in order along one axis; wrap = ring (torus side >= 3).
struct Line {
    std::vector<int> ranks;
    bool wrap = false;
    int axis = 0;
};

// What a 1-D routine works on: the builder, the line, the colour (data class, one timeline) and the chunk its
// data lives in. Routines take the data each position holds (indexed by position, updated in place) and the first
// step they may use, and return the first step after them.
struct Ctx {
    Builder& b;
    const Line& line;
    int chunk = 0;
};

// Sends `data` from position p to position q (neighbouring positions of a routine; hops may be many).
void send_along(const Ctx& c, int step, int p, int q, const RankSet& data);

// Gossip among the listed positions (sorted along the line; cyclic on a ring): position index j needs the data of
// every listed index in a different class (class = j mod period; period == list size means every index its own
// class). Each class comes from its nearest holder (ties: the + side), pipelined between consecutive listed
// positions: approach 1 when every position is listed.
int window_gossip(const Ctx& c, const std::vector<int>& listed, int period, std::vector<RankSet>& data, int start);

// Concentration tree over a path of positions (consecutive along the line) into path[root] by factors of radix
// (2 or 3), and its reverse. `height` = steps. Dissemination sends each sub-root only what it lacks.
struct Tree {
    std::vector<int> path;
    int root = 0;
    int height = 0;
    std::vector<std::tuple<int, int, int>> merges;  // (height, child position, parent position)
};
Tree concentration_tree(const std::vector<int>& path, int root, int radix);
int natural_root(int length, int radix);  // index of the root a segment of this length concentrates into
int concentrate(const Ctx& c, const Tree& t, std::vector<RankSet>& data, int start);
int disseminate(const Ctx& c, const Tree& t, std::vector<RankSet>& data, int start);

// One round of circgos phase 3: the old bridgeheads (holding `full`) feed the new ones between them with k packets,
// rightwards in order and leftwards in reverse order (end gaps of a linear array: from their only neighbour).
int stream_round(const Ctx& c, const std::vector<int>& old_pos, const std::vector<int>& new_pos, int k,
                 const RankSet& full, std::vector<RankSet>& data, int start);

// The 1-D algorithms on a whole line (every position ends with the union of all positions' data).
int approach1_line(const Ctx& c, std::vector<RankSet>& data, int start);
int approach2_line(const Ctx& c, int radix, std::vector<RankSet>& data, int start);
struct CircParams {
    int a = 1, b = 3, k = 1, radix = 3;
};
int circgos_line(const Ctx& c, const CircParams& p, std::vector<RankSet>& data, int start);
// Bridgehead positions of circgos on a line of n with a segments (each segment's natural root).
std::vector<int> circgos_bridgeheads(int n, int a, int radix);

// Lines of a topology along an axis (every combination of the other coordinates), as rank lists.
std::vector<Line> lines_along(const Topology& t, int axis);
bool grid_topology(const Topology& t);  // line, ring, mesh, torus
int grid_dims(const Topology& t);
bool wraps(const Topology& t, int axis);  // torus/ring side >= 3

// One 1-D algorithm choice per phase of highdimgos: 1 = approach 1, 2 = approach 2, 3 = circgos(a, b, k).
struct PhaseChoice {
    int alg = 1;
    CircParams circ;
};
// highdimgos: colours = 1 (all data along axis 0, then 1, ...) or d (colour c starts on axis c).
// node_colours: instead of splitting the data, the packet of a PU with even coordinate sum goes along the axes in
// order 0,1,... and that of an odd PU in order 1,0,... (2-D; the Paragon's black/white approach 11).
Schedule highdimgos(const Problem& p, const std::vector<PhaseChoice>& phases, int colours, bool node_colours,
                    bool oneport);

// torgos (2-D, bridgeheads on x0 - x1 = 0 mod g) and cubgos (d-D, sum x_i = 0 mod g).
struct DiagParams {
    int a = 1, b = 2, k = 1, radix = 3, colours = 1;
    bool sum_diagonal = true;  // false: torgos' x0 - x1
    bool oneport = false;
};
std::string diagonal_applies(const Topology& t, const DiagParams& p);
Schedule diagonal_gossip(const Problem& p, const DiagParams& d);
// The factor by which the bridgehead spacing shrinks in a round: b if it divides g, else the largest divisor of g
// that is at most b, else g itself.
int round_factor(int g, int b);

// Common parameter helpers.
bool oneport_param(const Problem& p);
int radix_param(const Problem& p);
std::string grid_applies(const Problem& p, int min_dims, int max_dims);

}  // namespace collplan::gossip
