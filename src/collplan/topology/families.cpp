// Topology families (see families.hpp).
#include "collplan/topology/families.hpp"

#include "collplan/common/error.hpp"

namespace collplan {
namespace {

// Every way to write P as a product of `parts` sides >= 2, in lexicographic order.
void factorizations(int P, int parts, std::vector<int>& cur, std::vector<std::vector<int>>& out) {
    if (parts == 1) {
        if (P >= 2) {
            cur.push_back(P);
            out.push_back(cur);
            cur.pop_back();
        }
        return;
    }
    for (int a = 2; a <= P / 2; ++a)
        if (P % a == 0) {
            cur.push_back(a);
            factorizations(P / a, parts - 1, cur, out);
            cur.pop_back();
        }
}

std::string shape(const std::string& kind, const std::vector<int>& sides) {
    std::string s = kind + ":";
    for (size_t i = 0; i < sides.size(); ++i) s += (i ? "x" : "") + std::to_string(sides[i]);
    return s;
}

// A grid family's kind ("torus" or "mesh") and dimensions; false for the other families; throws for unknown names.
bool grid_family(const std::string& family, std::string& kind, int& nd) {
    if (family == "full" || family == "ring" || family == "line" || family == "hypercube") return false;
    if (family == "torus2d" || family == "mesh2d" || family == "torus3d" || family == "mesh3d") {
        kind = family.substr(0, family.size() - 2);
        nd = family.back() == 'd' && family[family.size() - 2] == '3' ? 3 : 2;
        return true;
    }
    throw Error("unknown topology family '" + family +
                "' (allowed: full, ring, line, hypercube, torus2d, mesh2d, torus3d, mesh3d)");
}

}  // namespace

std::vector<std::string> family_topologies(const std::string& family, int P) {
    std::string kind;
    int nd = 0;
    if (grid_family(family, kind, nd)) {
        std::vector<std::vector<int>> fs;
        std::vector<int> cur;
        factorizations(P, nd, cur, fs);
        std::vector<std::string> out;
        for (const auto& f : fs) out.push_back(shape(kind, f));
        return out;
    }
    if (family == "hypercube") {
        if (P & (P - 1)) return {};
        int d = 0;
        while ((1 << d) < P) ++d;
        return {"hypercube:" + std::to_string(d)};
    }
    return {family + ":" + std::to_string(P)};
}

std::vector<std::string> balanced_family_shapes(const std::string& family, int P, const BalancedGrid& balanced) {
    std::string kind;
    int nd = 0;
    if (!grid_family(family, kind, nd)) {
        if (family == "hypercube" && P < 2) return {};
        return family_topologies(family, P);
    }
    std::vector<int> sides = balanced(P, nd);
    if (sides.empty()) return {};
    std::vector<int> fastest_first(sides.rbegin(), sides.rend());
    if (nd == 3) return {shape(kind, fastest_first)};
    return {shape(kind, fastest_first), shape(kind, sides)};
}

}  // namespace collplan
