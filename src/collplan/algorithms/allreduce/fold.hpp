// MPICH's fold of P ranks onto P' = 2^floor(log2 P) survivors, shared by the allreduce algorithms that need a
// power of two (recursive_doubling, rabenseifner). With r = P - P': among ranks 0..2r-1 every even rank sends its
// whole vector to rank + 1 and sits out; the odd rank reduces x_{rank-1} (+) x_rank (lower rank on the left, so
// the fold is exact for non-commutative operations) and, at the end, sends the result back.
#pragma once
#include "collplan/schedule/schedule.hpp"

namespace collplan {

struct Fold {
    int pof2 = 1, rem = 0;
    explicit Fold(int P) {
        while (pof2 * 2 <= P) pof2 *= 2;
        rem = P - pof2;
    }
    bool sits_out(int r) const { return r < 2 * rem && r % 2 == 0; }
    bool absorbs(int r) const { return r < 2 * rem && r % 2 == 1; }
    int new_rank(int r) const { return r < 2 * rem ? r / 2 : r - rem; }
    int real_rank(int nr) const { return nr < rem ? 2 * nr + 1 : nr + rem; }

    // The fold's first step; out ends with the rank's (folded) vector. Returns false for a rank that sits out:
    // its whole program (send x, receive the result into out) is then already written.
    bool fold_in(RankBuilder& b, int r, Segment in, Segment out, Segment tmp) const {
        if (sits_out(r)) {
            b.send(r + 1, 0, {in});
            b.recv(r + 1, 0, {out});
            return false;
        }
        b.copy({in}, {out});
        if (absorbs(r)) {
            b.recv(r - 1, 0, {tmp});
            b.fence();
            b.reduce({tmp}, {out});  // x_{r-1} (+) x_r
        }
        return true;
    }
    // The fold's last step: absorbing ranks return the result to the rank that sat out.
    void fold_out(RankBuilder& b, int r, Segment out) const {
        if (absorbs(r)) {
            b.fence();
            b.send(r - 1, 0, {out});
        }
    }
};

}  // namespace collplan
