"""collplan.native: the MPI libraries' default algorithm choices (MPICH v5.0.1 ch4, Open MPI v5.0.10) at and around
each documented boundary, and that every choice is either a collplan algorithm that generates at that P or None
with a reason."""
from __future__ import annotations

import functools
import pathlib
import subprocess

import pytest
from native_pairs import Mpich, OpenMPI, schedule_pairs

from collplan import CollplanError, api, native

ROOT = pathlib.Path(__file__).resolve().parents[2]


def pick(library, collective, ranks, nbytes, **kw):
    c = native.choice(library, collective, ranks, nbytes, **kw)
    return c.native, c.algorithm, c.params


def alg(library, collective, ranks, nbytes, **kw):
    c = native.choice(library, collective, ranks, nbytes, **kw)
    assert c.source and (c.algorithm or c.reason), c
    return c.algorithm


# --- MPICH: one rank per node (no node hierarchy) goes straight to mpir/generic.json -----------------------------

def mpich(collective, ranks, nbytes, **kw):
    kw.setdefault("nodes", ranks)
    return alg("mpich", collective, ranks, nbytes, **kw)


def test_mpich_bcast_sizes_and_sizes_of_p():
    assert {mpich("bcast", 7, b) for b in (1, 12288, 1 << 24)} == {"bcast/binomial"}
    for b, want in ((12288, "binomial"), (12289, "scatter_recursive_doubling_allgather"),
                    (524288, "scatter_recursive_doubling_allgather"), (524289, "scatter_ring_allgather")):
        assert mpich("bcast", 8, b) == "bcast/" + want
    assert mpich("bcast", 12, 12288) == "bcast/binomial"
    assert mpich("bcast", 12, 12289) == "bcast/scatter_ring_allgather"


def test_mpich_allreduce_counts_ops_and_commutativity():
    assert mpich("allreduce", 8, 8) == "allreduce/recursive_doubling"
    assert mpich("allreduce", 8, 9) == "allreduce/rabenseifner"                    # 9 bytes: count 9 >= 8
    assert mpich("allreduce", 8, 56, type_size=8) == "allreduce/recursive_doubling"  # count 7 < pof2 8
    assert mpich("allreduce", 8, 64, type_size=8) == "allreduce/rabenseifner"        # count 8
    assert mpich("allreduce", 6, 32, type_size=8) == "allreduce/rabenseifner"        # pof2(6) = 4
    assert mpich("allreduce", 8, 1 << 20, builtin_op=False) == "allreduce/recursive_doubling"
    assert mpich("allreduce", 8, 1 << 20, commutative=False) == "allreduce/recursive_doubling"
    assert native.choice("mpich", "allreduce", 8, 0, nodes=8).native == "MPIR_Allreduce_intra_smp"


def test_mpich_alltoall():
    assert pick("mpich", "alltoall", 7, 32768, nodes=7)[1:] == ("alltoall/scattered", {"batch": "32"})
    assert mpich("alltoall", 7, 32769) == "alltoall/pairwise"
    # "comm_size<8" lies below is_sendbuf_inplace, so MPIR_Csel_search tests it, as P <= 8 (csel.c)
    assert mpich("alltoall", 8, 256) == "alltoall/scattered"
    assert mpich("alltoall", 8, 32769) == "alltoall/pairwise"
    assert pick("mpich", "alltoall", 9, 256, nodes=9)[1:] == ("alltoall/bruck", {"k": "2"})
    assert mpich("alltoall", 9, 257) == "alltoall/scattered"
    assert mpich("alltoall", 9, 32768) == "alltoall/scattered"
    assert mpich("alltoall", 9, 32769) == "alltoall/pairwise"
    assert mpich("alltoallv", 32, 100) == "alltoallv/async"      # one batch of MPIR_CVAR_ALLTOALL_THROTTLE
    assert mpich("alltoallv", 33, 100) is None


def test_mpich_allgather_total_bytes():
    # total_msg_size = P x block
    assert mpich("allgather", 8, 65535) == "allgather/recursive_doubling"
    assert mpich("allgather", 8, 65536) == "allgather/ring"
    assert mpich("allgather", 5, 16383) == "allgather/bruck"      # 81915 < 81920
    assert mpich("allgather", 5, 16384) == "allgather/ring"
    # allgatherv: the sum over the ranks
    assert mpich("allgatherv", 16, 524287) is None                # recursive doubling: not in collplan
    assert mpich("allgatherv", 16, 524288) == "allgatherv/ring"
    assert mpich("allgatherv", 5, 81919) == "allgatherv/bruck"
    assert mpich("allgatherv", 5, 81920) == "allgatherv/ring"
    # the ring sends parts over MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE (32 KiB) in pieces
    assert mpich("allgatherv", 5, 5 * 32768) == "allgatherv/ring"
    assert mpich("allgatherv", 5, 5 * 32768 + 1) is None
    assert mpich("allgatherv", 5, 100000, counts=[32769, 30000, 30000, 7231, 0]) is None


def test_mpich_reduce():
    assert pick("mpich", "reduce", 8, 2048, nodes=8)[1:] == ("reduce/binomial", {"relative": "1"})
    assert mpich("reduce", 8, 2049) == "reduce/rabenseifner"
    assert mpich("reduce", 8, 2056, type_size=512) == "reduce/binomial"   # count 4 < 8
    assert mpich("reduce", 6, 4096) is None                                 # folds differ off powers of two
    assert pick("mpich", "reduce", 8, 4096, nodes=8, commutative=False)[1:] == ("reduce/binomial", {"relative": "0"})
    assert pick("mpich", "reduce", 8, 4096, nodes=8, builtin_op=False)[1:] == ("reduce/binomial", {"relative": "1"})


def test_mpich_reduce_scatter():
    assert mpich("reduce_scatter", 5, 524287) == "reduce_scatter/recursive_halving"
    assert mpich("reduce_scatter", 5, 524288) == "reduce_scatter/pairwise"
    assert mpich("reduce_scatter", 8, 64, commutative=False) is None
    assert "MPIR_Reduce_scatter_intra_noncommutative" == native.choice(
        "mpich", "reduce_scatter", 8, 64, nodes=8, commutative=False).native
    assert native.choice("mpich", "reduce_scatter", 8, 64, nodes=8, commutative=False,
                         counts=[8, 8, 8, 8, 8, 8, 8, 8]).native == "MPIR_Reduce_scatter_intra_noncommutative"
    assert native.choice("mpich", "reduce_scatter", 8, 64, nodes=8, commutative=False,
                         counts=[9, 7, 8, 8, 8, 8, 8, 8]).native == "MPIR_Reduce_scatter_intra_recursive_doubling"
    assert native.choice("mpich", "reduce_scatter", 6, 64, nodes=6,
                         commutative=False).native == "MPIR_Reduce_scatter_intra_recursive_doubling"
    # reduce_scatter_block: total = P x block
    assert mpich("reduce_scatter_block", 8, 65535) == "reduce_scatter_block/recursive_halving"
    assert mpich("reduce_scatter_block", 8, 65536) == "reduce_scatter_block/pairwise"
    assert mpich("reduce_scatter_block", 7, 8, commutative=False) is None


def test_mpich_barrier_gather_scatter():
    assert pick("mpich", "barrier", 9, 0, nodes=9)[1:] == ("barrier/dissemination", {"n": "1"})
    assert mpich("gather", 9, 1 << 20, root=3) == "gather/binomial"
    assert mpich("scatter", 9, 1, root=8) == "scatter/binomial"


# --- MPICH: the node hierarchy (ch4/generic.json compositions) --------------------------------------------------

def test_mpich_one_node_shared_memory():
    for c in ("barrier", "bcast", "allreduce", "reduce"):
        ch = native.choice("mpich", c, 4, 64)
        assert ch.algorithm is None and "release_gather" in ch.native, ch
    # non-commutative: no release/gather; the MPIR rules on the whole communicator
    assert alg("mpich", "allreduce", 4, 64, commutative=False) == "allreduce/recursive_doubling"
    assert pick("mpich", "reduce", 4, 64, commutative=False)[1:] == ("reduce/binomial", {"relative": "0"})
    # bcast on one node, P = 2^k >= 8: alpha (< 12288) and beta (< 524288) are shared memory, gamma the MPIR rules
    assert alg("mpich", "bcast", 8, 12287) is None
    assert native.choice("mpich", "bcast", 8, 12288).source.count("_beta") == 1
    assert alg("mpich", "bcast", 8, 524287) is None
    assert alg("mpich", "bcast", 8, 524288) == "bcast/scatter_recursive_doubling_allgather"
    assert alg("mpich", "bcast", 8, 524289) == "bcast/scatter_ring_allgather"
    assert alg("mpich", "bcast", 12, 12287) is None
    assert alg("mpich", "bcast", 12, 12288) == "bcast/binomial"           # gamma, then MPIR's "<= 12288"
    assert alg("mpich", "bcast", 12, 12289) == "bcast/scatter_ring_allgather"
    # the others take the MPIR rules on one node too
    assert alg("mpich", "alltoall", 9, 256) == "alltoall/bruck"


def test_mpich_several_nodes():
    for c in ("barrier", "bcast", "allreduce", "reduce"):
        ch = native.choice("mpich", c, 16, 64, nodes=4)
        assert ch.algorithm is None and "composition" in ch.native and "two-level" in ch.reason, ch
    assert alg("mpich", "allreduce", 16, 64, nodes=4, commutative=False) == "allreduce/recursive_doubling"
    assert alg("mpich", "bcast", 16, 1 << 20, nodes=4) == "bcast/scatter_ring_allgather"   # gamma
    assert alg("mpich", "bcast", 16, 1 << 16, nodes=4) is None                             # beta: two-level
    assert alg("mpich", "allgather", 16, 64, nodes=4) == "allgather/recursive_doubling"


# --- Open MPI ----------------------------------------------------------------------------------------------------

def ompi(collective, ranks, nbytes, **kw):
    return alg("openmpi", collective, ranks, nbytes, **kw)


def test_ompi_components():
    ch = native.choice("openmpi", "allreduce", 1, 8)
    assert ch.native == "self" and ch.algorithm is None
    assert native.choice("openmpi", "allreduce", 4, 8).native.startswith("tuned")      # one node: tuned
    assert native.choice("openmpi", "allreduce", 4, 8, nodes=2).native == "han allreduce"
    assert native.choice("openmpi", "allreduce", 4, 8, nodes=2, commutative=False).native.startswith("tuned")
    assert native.choice("openmpi", "bcast", 5, 8, nodes=2).native.startswith("tuned")  # 3 + 2 ranks: imbalanced
    assert native.choice("openmpi", "barrier", 5, 0, nodes=2).native == "han barrier"
    assert native.choice("openmpi", "alltoall", 4, 8, nodes=2).native.startswith("tuned")


def test_ompi_allreduce():
    assert ompi("allreduce", 4, 15) == "allreduce/ring"                 # < 16: ring, count 15 >= 4
    assert ompi("allreduce", 4, 16) == "allreduce/recursive_doubling"
    assert ompi("allreduce", 4, 8191) == "allreduce/recursive_doubling"
    assert ompi("allreduce", 4, 8192) == "allreduce/rabenseifner"
    assert ompi("allreduce", 5, 8192) is None                           # other fold off powers of two
    ch = native.choice("openmpi", "allreduce", 4, 8, type_size=8)       # ring, count 1 < 4: recursive doubling
    assert ch.algorithm == "allreduce/recursive_doubling" and "count 1 < P" in ch.native
    assert ompi("allreduce", 16, 63) == "allreduce/ring"                # segmented ring, segment size 0
    assert ompi("allreduce", 2, 131071, commutative=False) == "allreduce/recursive_doubling"
    assert ompi("allreduce", 2, 131072, commutative=False) is None      # basic linear
    assert ompi("allreduce", 8, 1048575, commutative=False) == "allreduce/recursive_doubling"
    assert ompi("allreduce", 8, 1048576, commutative=False) is None     # nonoverlapping: reduce + bcast


def test_ompi_alltoall():
    assert ompi("alltoall", 2, 1) == "alltoall/ring"
    assert ompi("alltoall", 2, 2) == "alltoall/ring"                    # two_proc
    assert pick("openmpi", "alltoall", 5, 8191)[1:] == ("alltoall/scattered", {"batch": "0"})
    assert pick("openmpi", "alltoall", 5, 8192)[1:] == ("alltoall/scattered", {"batch": "0"})
    assert pick("openmpi", "alltoall", 16, 511)[1:] == ("alltoall/bruck", {"k": "2"})
    assert ompi("alltoall", 16, 512) == "alltoall/scattered"
    assert ompi("alltoall", 64, 1 << 20) == "alltoall/ring"
    assert ompi("alltoallv", 2, 10) == "alltoallv/linear_permutation"
    assert ompi("alltoallv", 3, 10) == "alltoallv/linear_permutation"
    assert ompi("alltoallv", 4, 10) == "alltoallv/async"
    assert ompi("alltoallv", 63, 10) == "alltoallv/async"
    assert ompi("alltoallv", 64, 10) is None                            # pairwise, P = 2^k: not XOR
    assert ompi("alltoallv", 100, 10) == "alltoallv/linear_permutation"


def test_ompi_barrier():
    assert pick("openmpi", "barrier", 2, 0)[1:] == ("barrier/dissemination", {"n": "1"})
    assert ompi("barrier", 3, 0) is None
    assert ompi("barrier", 7, 0) is None                                # linear
    assert ompi("barrier", 63, 0) is None                               # recursive doubling
    assert ompi("barrier", 64, 0) == "barrier/dissemination"            # bruck


def test_ompi_bcast():
    assert pick("openmpi", "bcast", 2, 31)[1:] == ("bcast/chain", {"segments": "1"})
    assert ompi("bcast", 3, 32) is None                                 # binary tree
    ch = native.choice("openmpi", "bcast", 2, 32)                       # at P = 2 the one message, as linear
    assert ch.algorithm == "bcast/linear" and "binary_tree" in ch.native and "P = 2" in ch.source
    assert ompi("bcast", 5, 63) is None
    assert ompi("bcast", 5, 64) is None                                 # Open MPI's binomial tree
    assert ompi("bcast", 5, 1048575) == "bcast/linear"
    assert ompi("bcast", 5, 1048576) == "bcast/chain"
    assert ompi("bcast", 16, 1048575) is None
    assert ompi("bcast", 16, 1048576) == "bcast/scatter_recursive_doubling_allgather"
    assert ompi("bcast", 17, 1048576) == "bcast/scatter_recursive_doubling_allgather"
    assert ompi("bcast", 2048, 524288) == "bcast/scatter_recursive_doubling_allgather"
    ch = native.choice("openmpi", "bcast", 2048, 1 << 20, type_size=1024)     # count 1024 < P: linear
    assert ch.algorithm == "bcast/linear" and "count 1024 < P" in ch.native


def test_ompi_reduce():
    assert ompi("reduce", 2, 7) == "reduce/rabenseifner"
    assert ompi("reduce", 2, 7, type_size=4) == "reduce/linear"          # count 1 < 2
    assert ompi("reduce", 3, 7) is None
    assert ompi("reduce", 3, 8) is None                                 # binary
    assert ompi("reduce", 8, 8191) is None
    assert pick("openmpi", "reduce", 8, 8192, root=5)[1:] == ("reduce/binomial", {"relative": "1"})
    assert ompi("reduce", 5, 100, commutative=False) == "reduce/linear"
    assert ompi("reduce", 3, 7, commutative=False) is None              # in-order binary
    assert ompi("reduce", 2, 7, commutative=False) == "reduce/linear"   # at P = 2 the one message
    assert ompi("reduce", 2, 1 << 20) == "reduce/linear"                # chain, at P = 2 the one message


def test_ompi_reduce_scatter():
    assert ompi("reduce_scatter", 8, 100, commutative=False) is None
    assert ompi("reduce_scatter", 8, 262143) == "reduce_scatter/recursive_halving"
    assert ompi("reduce_scatter", 8, 262144) == "reduce_scatter/ring"
    assert ompi("reduce_scatter_block", 5, 8191) == "reduce_scatter_block/recursive_halving"
    assert ompi("reduce_scatter_block", 5, 8192) is None                # butterfly
    assert ompi("reduce_scatter_block", 5, 8, commutative=False) is None


def test_ompi_allgather():
    assert ompi("allgather", 2, 1 << 20) == "allgather/ring"            # two_proc
    assert ompi("allgather", 4, 100) == "allgather/recursive_doubling"
    assert ompi("allgather", 5, 100) == "allgather/bruck"               # recursive doubling falls back
    assert ompi("allgather", 32, 1023) == "allgather/recursive_doubling"
    assert ompi("allgather", 32, 1024) is None                          # neighbour exchange
    assert ompi("allgather", 33, 1024) == "allgather/ring"              # ... odd P: ring
    # allgatherv compares the bytes per rank
    assert ompi("allgatherv", 2, 2 * 2047 + 1) == "allgatherv/ring"
    assert ompi("allgatherv", 2, 2 * 2048) == "allgatherv/ring"         # two_proc
    assert ompi("allgatherv", 8, 8 * 1023) is None                      # gatherv + bcast
    assert ompi("allgatherv", 8, 8 * 1024) == "allgatherv/bruck"


def test_ompi_gather_scatter():
    assert ompi("gather", 5, 1023, root=2) == "gather/binomial"
    assert ompi("gather", 5, 1024) == "gather/linear"
    assert ompi("gather", 5, 262144) is None                            # linear_sync
    assert ompi("scatter", 8, 16383) == "scatter/binomial"
    assert ompi("scatter", 8, 16384) == "scatter/linear"                # linear_nb
    assert ompi("scatter", 2, 1) == "scatter/linear"


# --- every call maps to a schedulable algorithm or to None with a reason -----------------------------------------

@functools.lru_cache(maxsize=None)
def schedulable(algorithm, ranks, params, root):
    collective = algorithm.split("/")[0]
    kw = {}
    if collective in ("allgatherv", "reduce_scatter"):
        kw["counts"] = [1] * ranks
    if collective == "alltoallv":
        kw["matrix"] = [[1] * ranks for _ in range(ranks)]
    api.schedule(algorithm, ranks, params=dict(params), root=root, **kw)
    return True


SIZES = (0, 8, 100, 2048, 12288, 65536, 524289, 4 << 20)


@pytest.mark.parametrize("library", native.LIBRARIES)
@pytest.mark.parametrize("ranks", [*range(1, 17), 64, 100, 1024])
def test_every_choice_schedules_or_says_why(library, ranks):
    names = {a["name"] for a in api.algorithms()}
    for collective in api.COLLECTIVE_NAMES:
        for nodes in sorted({1, min(2, ranks), ranks}):
            for root in sorted({0, ranks - 1}):
                for commutative in (True, False):
                    for nbytes in SIZES:
                        c = native.choice(library, collective, ranks, nbytes, commutative=commutative, root=root,
                                          nodes=nodes, type_size=8)
                        assert c.library == library and c.native and c.source
                        if c.algorithm is None:
                            assert c.reason, c
                            continue
                        assert c.algorithm in names and c.algorithm.startswith(collective + "/"), c
                        rooted = api.describe(collective)["rooted"]
                        assert schedulable(c.algorithm, ranks, tuple(sorted(c.params.items())), root if rooted else 0)


# --- Open MPI at run time: the pairs that exchange messages (pml monitoring) are the mapped schedule's ----------

# (collective, P, bytes by collplan's convention, commutative, the algorithm the rules map it to)
RUNTIME_CASES = [
    ("bcast", 5, 1048575, True, "bcast/linear"), ("bcast", 5, 1048576, True, "bcast/chain"),
    ("bcast", 16, 1048576, True, "bcast/scatter_recursive_doubling_allgather"),
    ("allreduce", 4, 15, True, "allreduce/ring"), ("allreduce", 6, 100, True, "allreduce/recursive_doubling"),
    ("allreduce", 8, 10000, True, "allreduce/rabenseifner"),
    ("allreduce", 6, 100, False, "allreduce/recursive_doubling"),
    ("reduce", 2, 7, True, "reduce/rabenseifner"), ("reduce", 9, 10000, True, "reduce/binomial"),
    ("reduce", 6, 100, False, "reduce/linear"),
    ("alltoall", 16, 100, True, "alltoall/bruck"), ("alltoall", 6, 20000, True, "alltoall/scattered"),
    ("alltoallv", 3, 10, True, "alltoallv/linear_permutation"), ("alltoallv", 5, 10, True, "alltoallv/async"),
    ("allgather", 8, 100, True, "allgather/recursive_doubling"), ("allgather", 6, 100, True, "allgather/bruck"),
    ("allgather", 2, 100, True, "allgather/ring"),
    ("allgatherv", 12, 12 * 2000, True, "allgatherv/bruck"), ("allgatherv", 2, 2 * 100, True, "allgatherv/ring"),
    ("gather", 9, 100, True, "gather/binomial"), ("gather", 5, 2000, True, "gather/linear"),
    ("scatter", 9, 100, True, "scatter/binomial"), ("scatter", 5, 3000, True, "scatter/linear"),
    ("reduce_scatter", 9, 9 * 1000, True, "reduce_scatter/recursive_halving"),
    ("reduce_scatter", 9, 9 * 30000, True, "reduce_scatter/ring"),
    ("reduce_scatter_block", 6, 1000, True, "reduce_scatter_block/recursive_halving"),
    ("barrier", 2, 0, True, "barrier/dissemination"),
]


def test_openmpi_sends_what_the_choice_schedules(tmp_path):
    """Each case's messages per (sender, receiver) under Open MPI (pml monitoring, one node) equal those of the
    collplan schedule it maps to: the rule and the mapping both hold for the installed library. A rank's message to
    itself (Open MPI's pairwise alltoallv) is collplan's local copy and is left out."""
    ompi = OpenMPI(tmp_path)
    for collective, ranks, nbytes, commutative, algorithm in RUNTIME_CASES:
        root = ranks - 1 if api.describe(collective)["rooted"] else 0
        choice = native.choice("openmpi", collective, ranks, nbytes, commutative=commutative, root=root)
        assert choice.algorithm == algorithm, choice
        per_rank = nbytes // ranks if collective in ("allgatherv", "reduce_scatter") else nbytes
        sent = ompi.pairs(ranks, collective, per_rank, root, *([] if commutative else ["noncommutative"]))
        assert sent == schedule_pairs(choice, ranks, root), (collective, ranks, nbytes, choice.native)


# --- MPICH at run time, one rank per node (MPIR_CVAR_NOLOCAL=1, the ucx netmod): the pairs that exchange messages,
# read from the tag of every ucp_tag_recv_nbx (src/mpid/ch4/netmod/ucx/ucx_types.h: the sender's rank in bits
# 32..47), less those of a run without the collective, are the mapped schedule's

MPICH_RUNTIME_CASES = [
    ("bcast", 8, 12288, True, "bcast/binomial"),
    ("bcast", 8, 12289, True, "bcast/scatter_recursive_doubling_allgather"),
    ("bcast", 12, 12289, True, "bcast/scatter_ring_allgather"),
    ("allreduce", 8, 8, True, "allreduce/recursive_doubling"), ("allreduce", 6, 100, True, "allreduce/rabenseifner"),
    ("allreduce", 6, 100, False, "allreduce/recursive_doubling"),
    ("reduce", 8, 2049, True, "reduce/rabenseifner"), ("reduce", 6, 100, True, "reduce/binomial"),
    ("reduce", 6, 100, False, "reduce/binomial"),
    ("alltoall", 8, 100, True, "alltoall/scattered"), ("alltoall", 9, 100, True, "alltoall/bruck"),
    ("alltoall", 8, 32769, True, "alltoall/pairwise"), ("alltoall", 9, 32769, True, "alltoall/pairwise"),
    ("alltoallv", 5, 10, True, "alltoallv/async"),
    ("allgather", 8, 100, True, "allgather/recursive_doubling"), ("allgather", 6, 100, True, "allgather/bruck"),
    ("allgather", 6, 20000, True, "allgather/ring"),
    ("allgatherv", 6, 6 * 100, True, "allgatherv/bruck"), ("allgatherv", 6, 6 * 20000, True, "allgatherv/ring"),
    ("gather", 9, 100, True, "gather/binomial"), ("scatter", 9, 100, True, "scatter/binomial"),
    ("reduce_scatter", 9, 9 * 100, True, "reduce_scatter/recursive_halving"),
    ("reduce_scatter", 9, 9 * 60000, True, "reduce_scatter/pairwise"),
    ("reduce_scatter_block", 6, 100, True, "reduce_scatter_block/recursive_halving"),
    ("reduce_scatter_block", 6, 100000, True, "reduce_scatter_block/pairwise"),
    ("barrier", 6, 0, True, "barrier/dissemination"),
]


def test_mpich_sends_what_the_choice_schedules(tmp_path):
    """As test_openmpi_sends_what_the_choice_schedules, for MPICH with every rank on a node of its own (its MPIR
    rules; the shared-memory and node-aware paths send no messages to compare)."""
    mpich = Mpich(tmp_path)
    for collective, ranks, nbytes, commutative, algorithm in MPICH_RUNTIME_CASES:
        root = ranks - 1 if api.describe(collective)["rooted"] else 0
        choice = native.choice("mpich", collective, ranks, nbytes, commutative=commutative, nodes=ranks, root=root)
        assert choice.algorithm == algorithm, choice
        per_rank = nbytes // ranks if collective in ("allgatherv", "reduce_scatter") else nbytes
        got = mpich.pairs(ranks, collective, per_rank, root, *([] if commutative else ["noncommutative"]))
        assert got == schedule_pairs(choice, ranks, root, "recv"), (collective, ranks, nbytes, choice.native)


# --- library_of and errors ---------------------------------------------------------------------------------------

def test_library_of_real_version_strings():
    ompi_info = ROOT / ".mpi/openmpi/bin/ompi_info"
    mpichversion = ROOT / ".mpi/mpich/bin/mpichversion"
    if not ompi_info.exists() or not mpichversion.exists():
        pytest.skip("no .mpi/openmpi or .mpi/mpich (make install)")
    text = subprocess.run([ompi_info, "--version"], capture_output=True, text=True, check=True).stdout
    assert native.library_of(text) == "openmpi"
    text = subprocess.run([mpichversion], capture_output=True, text=True, check=True).stdout
    assert native.library_of(text) == "mpich"
    assert native.library_of(text.splitlines()[0]) == "mpich"   # a profile's `mpi` line: the first line


def test_library_of_profile_lines_and_others():
    assert native.library_of("Open MPI v5.0.8, package: Open MPI ..., repo rev: v5.0.8, Apr 18, 2025") == "openmpi"
    assert native.library_of("MPICH Version:      4.0.2") == "mpich"
    for text in ("Intel(R) MPI Library 2021.10 for Linux* OS", "MVAPICH2 Version: 2.3.7", ""):
        with pytest.raises(CollplanError, match="allowed"):
            native.library_of(text)


@pytest.mark.parametrize("args, kw, word", [
    (("lam", "allreduce", 4, 8), {}, "unknown MPI library"),
    (("mpich", "allreducee", 4, 8), {}, "unknown collective"),
    (("mpich", "allreduce", 0, 8), {}, "ranks 0"),
    (("mpich", "allreduce", 4, -1), {}, "bytes -1"),
    (("mpich", "allreduce", 4, 8), {"nodes": 5}, "nodes 5"),
    (("openmpi", "bcast", 4, 8), {"root": 4}, "root 4"),
    (("mpich", "gather", 4, 8), {"root": -1}, "root -1"),
    (("openmpi", "allreduce", 4, 8), {"type_size": 0}, "type_size 0"),
    (("mpich", "reduce_scatter", 4, 8), {"counts": [1, 2]}, "counts has 2"),
    (("mpich", "reduce_scatter", 2, 8), {"counts": [1, 2]}, "counts sum to 3"),
])
def test_errors_name_the_value(args, kw, word):
    with pytest.raises(CollplanError, match=word):
        native.choice(*args, **kw)
