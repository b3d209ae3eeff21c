"""What the MPI library itself would run for a collective call: the default selection rules of MPICH 5.0 (ch4) and
Open MPI 5.0 (coll/tuned's fixed decisions, coll/han on several nodes, coll/self at one rank), as tables, and the
collplan algorithm that sends the same messages in the same rounds where there is one.

Read from the sources, not copied: MPICH v5.0.1 (maint/tuning/coll/ch4/generic.json, posix_generic.json,
mpir/generic.json, src/mpid/ch4/src/ch4_coll.h and ch4_coll_impl.h, src/mpi/coll/src/csel.c) and Open MPI v5.0.10
(ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, ompi/mca/coll/base/, ompi/mca/coll/han/). docs/profile.md,
"What the MPI library would run", has the rules in prose and what could not be determined.

`bytes` is collplan's size (docs/profile.md's `bytes` row); each rule's comment says which quantity the library
compares and how it follows from `bytes`. Assumed and not modelled: blocking calls, no MPI_IN_PLACE, host memory,
one thread in MPI, default MCA parameters and CVARs, ranks spread over `nodes` nodes in blocks of ranks/nodes.
"""
from __future__ import annotations

import re

from dataclasses import dataclass, field

from . import api
from ._core import CollplanError

LIBRARIES = ("mpich", "openmpi")

MPICH = "mpich v5.0.1"
OMPI = "ompi v5.0.10"


@dataclass
class NativeChoice:
    library: str            # "mpich" | "openmpi"
    native: str             # the library's own name of what it runs
    algorithm: str | None   # the collplan algorithm sending the same messages in the same rounds; None: none
    params: dict = field(default_factory=dict)  # collplan params (strings)
    source: str = ""        # where the rule is (tag, file, function or JSON path)
    reason: str = ""        # with algorithm None: what collplan lacks


@dataclass(frozen=True)
class _Call:
    collective: str
    ranks: int
    bytes: int
    commutative: bool
    builtin_op: bool
    type_size: int
    nodes: int
    counts: tuple | None

    @property
    def count(self) -> int:  # elements, where a rule or a fallback compares the count, not bytes
        return self.bytes // self.type_size

    @property
    def pof2(self) -> int:  # the largest power of two <= P (MPICH MPL_pof2, Open MPI opal_hibit)
        return 1 << (self.ranks.bit_length() - 1)

    @property
    def is_pow2(self) -> bool:
        return self.ranks == self.pof2


def _pick(library, native, algorithm=None, params=None, source="", reason=""):
    return NativeChoice(library, native, algorithm, dict(params or {}), source, reason)


# ---------------------------------------------------------------------------------------------------------------
# MPICH v5.0.1, ch4 device. MPID_<Coll> (src/mpid/ch4/src/ch4_coll.h) searches the composition tree CH4_TREE
# (maint/tuning/coll/ch4/generic.json, MPIR_CVAR_<COLL>_COMPOSITION=0); the composition runs the collective on the
# netmod (MPIDI_NM_mpi_<coll>: ofi and ucx without HCOLL call MPIR_<Coll>_impl, which searches MPIR_TREE,
# maint/tuning/coll/mpir/generic.json), on shared memory (MPIDI_POSIX_mpi_<coll>, POSIX_TREE,
# maint/tuning/coll/ch4/posix_generic.json; no match: MPIR_<Coll>_impl), or on both, node by node. A tree is a list
# of (condition, subtree or leaf), searched in order as src/mpi/coll/src/csel.c does; "=any" always holds.
# The quantities (csel.c get_avg_msgsize, get_total_msgsize, get_count):
#   avg_msg_size    count x type size: the vector (allreduce, reduce, bcast) or one block (alltoall) = `bytes`
#   total_msg_size  allgather, reduce_scatter_block: P x block = P x `bytes`; allgatherv, reduce_scatter: the sum
#                   over the ranks = `bytes`
#   count<pow2      elements (`bytes` / type_size) < the largest power of two <= P
#   comm_hierarchy=parent  the communicator has node_comm and node_roots_comm: several ranks share a node
#                   (MPIR_Comm_commit creates them when num_external != local_size, commutil.c)
#   comm_size=node_comm_size  every rank on one node (num_external == 1)
# ---------------------------------------------------------------------------------------------------------------

# The leaves are short names: a CH4_TREE leaf X is MPIDI_<Coll>_intra_composition_X, an MPIR_TREE leaf X is
# MPIR_<Coll>_intra_X, <Coll> the collective with a capital (Reduce_scatter_block).

CH4_TREE = {
    "bcast": [("comm_hierarchy=parent", [("comm_size<8", "alpha"),
                                         ("comm_size=pow2", [("avg_msg_size<12288", "alpha"),
                                                             ("avg_msg_size<524288", "beta"),
                                                             ("avg_msg_size=any", "gamma")]),
                                         ("comm_size=any", [("avg_msg_size<12288", "alpha"),
                                                            ("avg_msg_size=any", "gamma")])]),
              ("comm_hierarchy=any", "gamma")],
    "allreduce": [("comm_size=node_comm_size", "gamma"),
                  ("comm_size=any", [("comm_hierarchy=parent", [("is_commutative=yes", "alpha"),
                                                                ("is_commutative=no", "beta")]),
                                     ("comm_hierarchy=any", "beta")])],
    "reduce": [("comm_hierarchy=parent", [("is_commutative=yes", [("avg_msg_size<=2048", "beta"),
                                                                  ("avg_msg_size=any", "alpha")]),
                                          ("is_commutative=no", "gamma")]),
               ("comm_hierarchy=any", "gamma")],
    "barrier": [("comm_hierarchy=parent", "alpha"), ("comm_hierarchy=any", "beta")],
    "gather": "alpha", "scatter": "alpha", "alltoall": "beta", "alltoallv": "alpha", "allgather": "beta",
    "allgatherv": "alpha", "reduce_scatter": "alpha", "reduce_scatter_block": "alpha",
}

# What each composition runs (src/mpid/ch4/src/ch4_coll_impl.h): "two_level" a shared-memory collective inside each
# node and a netmod one among the node leaders; "shm" MPIDI_SHM_mpi_<coll> on the whole communicator
# (-> POSIX_TREE); the others the netmod on the whole communicator (-> MPIR_TREE). Alltoall beta, allgather beta and
# allgatherv alpha take MPIDI_SHM_mpi_<coll> on one node, whose default (MPIR_CVAR_<COLL>_POSIX_INTRA_ALGORITHM=mpir,
# posix_coll.h) is MPIR_<Coll>_impl: the netmod's path.
CH4_KIND = {("bcast", "alpha"): "two_level", ("bcast", "beta"): "two_level", ("allreduce", "alpha"): "two_level",
            ("reduce", "alpha"): "two_level", ("reduce", "beta"): "two_level", ("barrier", "alpha"): "two_level",
            ("allreduce", "gamma"): "shm"}

POSIX_TREE = {
    "bcast": [("is_multi_threaded=no", "MPIDI_POSIX_mpi_bcast_release_gather")],
    "barrier": [("is_multi_threaded=no", "MPIDI_POSIX_mpi_barrier_release_gather")],
    "allreduce": [("is_multi_threaded=no", [("is_commutative=yes", "MPIDI_POSIX_mpi_allreduce_release_gather")])],
    "reduce": [("is_multi_threaded=no", [("is_commutative=yes", "MPIDI_POSIX_mpi_reduce_release_gather")])],
}


def _hierarchy_split(parent_first, rows):
    """The same rows under comm_hierarchy=parent (with `parent_first` in front) and comm_hierarchy=any."""
    return [("comm_hierarchy=parent", [*parent_first, *rows]), ("comm_hierarchy=any", rows)]


# mpir/generic.json gives allgather and allgatherv the same tree.
_ALLGATHER = [("comm_size=pow2", [("total_msg_size<524288", "recursive_doubling"), ("total_msg_size=any", "ring")]),
              ("comm_size=any", [("total_msg_size<81920", "brucks"), ("total_msg_size=any", "ring")])]
_REDUCE_LARGE = [("is_op_built_in=yes", [("count<pow2", "binomial"), ("count=any", "reduce_scatter_gather")]),
                 ("is_op_built_in=no", "binomial")]

MPIR_TREE = {
    "bcast": [("comm_size<8", _hierarchy_split([("avg_msg_size<=0", "smp")], [("avg_msg_size=any", "binomial")])),
              ("comm_size=pow2", _hierarchy_split([("avg_msg_size<=0", "smp")], [
                  ("avg_msg_size<=12288", "binomial"),
                  ("avg_msg_size<=524288", "scatter_recursive_doubling_allgather"),
                  ("avg_msg_size=any", "scatter_ring_allgather")])),
              ("comm_size=any", _hierarchy_split([("avg_msg_size<=0", "smp")], [
                  ("avg_msg_size<=12288", "binomial"),
                  ("avg_msg_size=any", "scatter_ring_allgather")]))],
    "allreduce": [("avg_msg_size<=0", [("is_commutative=yes", "smp"), ("is_commutative=no", "recursive_doubling")]),
                  ("avg_msg_size<=8", "recursive_doubling"),
                  ("avg_msg_size=any", [("is_op_built_in=no", "recursive_doubling"),
                                        ("is_op_built_in=yes", [("count<pow2", "recursive_doubling"),
                                                                ("count=any", "reduce_scatter_allgather")])])],
    "allgather": _ALLGATHER,
    "allgatherv": _ALLGATHER,
    "reduce": _hierarchy_split([("avg_msg_size<=0", [("is_commutative=yes", "smp"),
                                                     ("is_commutative=no", "binomial")])],
                               [("avg_msg_size<=2048", "binomial"), ("avg_msg_size=any", _REDUCE_LARGE)]),
    "reduce_scatter": [("is_commutative=yes", [("total_msg_size<524288", "recursive_halving"),
                                               ("total_msg_size=any", "pairwise")]),
                       ("is_commutative=no", [("is_block_regular=yes", [("comm_size=pow2", "noncommutative"),
                                                                        ("comm_size=any", "recursive_doubling")]),
                                              ("is_block_regular=no", "recursive_doubling")])],
    "reduce_scatter_block": [("is_commutative=yes", [("total_msg_size<524288", "recursive_halving"),
                                                     ("total_msg_size=any", "pairwise")]),
                             ("is_commutative=no", [("comm_size=pow2", "noncommutative"),
                                                    ("comm_size=any", "recursive_doubling")])],
    "gather": "binomial",
    "scatter": "binomial",
    "barrier": [("comm_hierarchy=parent", "smp"), ("comm_hierarchy=any", "k_dissemination")],  # with "k=2"
    "alltoall": [("is_sendbuf_inplace=yes", "pairwise_sendrecv_replace"),
                 ("is_sendbuf_inplace=no", [("comm_size<8", [("avg_msg_size<=32768", "scattered"),
                                                             ("avg_msg_size=any", "pairwise")]),
                                            ("comm_size=any", [("avg_msg_size<=256", "brucks"),
                                                               ("avg_msg_size<=32768", "scattered"),
                                                               ("avg_msg_size=any", "pairwise")])])],
    "alltoallv": [("is_sendbuf_inplace=yes", "pairwise_sendrecv_replace"), ("is_sendbuf_inplace=no", "scattered")],
}


# MPIR_CVAR_ALLTOALL_THROTTLE (src/mpi/coll/cvars.txt, default 32): the batch of MPIR_Alltoall_intra_scattered and
# MPIR_Alltoallv_intra_scattered (distance 0, the local copy, counts in the first batch).
MPICH_ALLTOALL_THROTTLE = 32
# MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE (src/mpi/coll/cvars.txt, default 32768).
MPICH_ALLGATHERV_PIPELINE_MSG_SIZE = 32768


def _mpich_quantity(call: _Call, key: str) -> int:
    if key == "avg_msg_size":
        return call.bytes
    # total_msg_size: csel.c get_total_msgsize -- P x block for allgather and reduce_scatter_block, the sum of the
    # ranks' parts (= bytes) for allgatherv and reduce_scatter
    return call.bytes * call.ranks if call.collective in ("allgather", "reduce_scatter_block") else call.bytes


def _mpich_holds(cond: str, call: _Call, searching: bool) -> bool:
    key, op, value = re.fullmatch(r"(\w+)(<=|<|=)(\w+)", cond).groups()
    if value == "any":
        return True
    if key in ("avg_msg_size", "total_msg_size"):
        q = _mpich_quantity(call, key)
        return q < int(value) if op == "<" else q <= int(value)
    if key == "comm_size":
        if op == "=":
            return {"pow2": call.is_pow2, "node_comm_size": call.nodes == 1}[value]
        # "comm_size<N" is P < N where prune_tree decides it and P <= N where MPIR_Csel_search does (csel.c)
        return call.ranks < int(value) if op == "<" and not searching else call.ranks <= int(value)
    if key == "comm_hierarchy":
        return call.ranks > call.nodes  # "parent": several ranks on some node
    if key == "count":
        return call.count < call.pof2
    truth = {"is_commutative": call.commutative, "is_op_built_in": call.builtin_op,
             "is_sendbuf_inplace": False, "is_multi_threaded": False,
             "is_block_regular": call.counts is None or len(set(call.counts)) <= 1}[key]
    return truth == (value == "yes")


def _search(tree, call: _Call) -> tuple[str | None, list[str]]:
    """The leaf csel.c reaches, and the conditions on its way; None where no branch holds. MPIR_Csel_prune
    (at communicator creation) decides the conditions on the communicator (comm_type, comm_size, comm_hierarchy)
    down to the first other one; MPIR_Csel_search, at each call, the rest."""
    path, searching = [], False
    while isinstance(tree, list):
        for cond, sub in tree:
            searching = searching or not (cond.startswith(("comm_type", "comm_size", "comm_hierarchy"))
                                          or cond.endswith("=any"))
            if _mpich_holds(cond, call, searching):
                lt = searching and cond.startswith("comm_size<") and "<=" not in cond
                path.append(f"{cond} (tested as <=)" if lt else cond)
                tree = sub
                break
        else:
            return None, path
    return tree, path


def _json_source(file: str, call: _Call, path: list[str], extra: str = "") -> str:
    return f"{MPICH} {file}: " + " > ".join([f"collective={call.collective}", "comm_type=intra", *path]) + extra


def _mpich_algorithm(call: _Call, name: str):
    """The collplan algorithm of MPIR_<Coll>_intra_<name>: (algorithm, params, reason). The collplan algorithms'
    headers (src/collplan/algorithms/<collective>/) name the MPICH function each follows."""
    c = call.collective
    same = {("bcast", "binomial"), ("bcast", "scatter_recursive_doubling_allgather"),
            ("bcast", "scatter_ring_allgather"), ("allreduce", "recursive_doubling"), ("allgather", "ring"),
            ("allgather", "recursive_doubling"), ("allgatherv", "ring"), ("reduce_scatter", "recursive_halving"),
            ("reduce_scatter", "pairwise"), ("reduce_scatter_block", "recursive_halving"),
            ("reduce_scatter_block", "pairwise"), ("gather", "binomial"), ("scatter", "binomial"),
            ("alltoall", "pairwise")}
    if c == "allgatherv" and name == "ring":
        # allgatherv_intra_ring.c: when the largest part exceeds MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE it travels
        # in pieces of that size
        largest = max(call.counts) if call.counts else -(-call.bytes // call.ranks)
        if largest > MPICH_ALLGATHERV_PIPELINE_MSG_SIZE:
            return None, {}, (f"parts over {MPICH_ALLGATHERV_PIPELINE_MSG_SIZE} bytes (MPIR_CVAR_ALLGATHERV_PIPELINE_"
                              "MSG_SIZE) go round the ring in pieces of that size; allgatherv/ring sends each whole")
    if (c, name) in same:
        return f"{c}/{name}", {}, ""
    if name == "brucks" and c in ("allgather", "allgatherv"):
        return f"{c}/bruck", {}, ""
    if name == "brucks":  # alltoall: radix 2
        return "alltoall/bruck", {"k": "2"}, ""
    if name == "reduce_scatter_allgather":
        return "allreduce/rabenseifner", {}, ""
    if c == "reduce" and name == "binomial":
        # reduce_intra_binomial.c: the tree is rooted at the root for commutative operations, else at rank 0 and
        # the result is sent to the root
        return "reduce/binomial", {"relative": "1" if call.commutative else "0"}, ""
    if name == "reduce_scatter_gather":
        if call.is_pow2:
            return "reduce/rabenseifner", {}, ""
        return None, {}, ("for P not a power of two MPICH's reduce folds the odd ranks onto the even ones, "
                          "reduce/rabenseifner the even onto the odd (its header)")
    if name == "k_dissemination":  # barrier_intra_k_dissemination.c: k = 2 calls MPIR_Barrier_intra_dissemination
        return "barrier/dissemination", {"n": "1"}, ""
    if name == "scattered" and c == "alltoall":
        return "alltoall/scattered", {"batch": str(MPICH_ALLTOALL_THROTTLE)}, ""
    if name == "scattered":  # alltoallv
        if call.ranks <= MPICH_ALLTOALL_THROTTLE:  # one batch: every receive and send posted at once
            return "alltoallv/async", {}, ""
        return None, {}, (f"batches of {MPICH_ALLTOALL_THROTTLE} (MPIR_CVAR_ALLTOALL_THROTTLE) at P > "
                          f"{MPICH_ALLTOALL_THROTTLE}: collplan has no batched alltoallv")
    return None, {}, {
        "smp": "node-aware: a collective inside each node and one among the node leaders; collplan has no "
               "two-level algorithm",
        "recursive_doubling": f"collplan has no recursive-doubling {c}",
        "noncommutative": "collplan has no recursive-halving reduce-scatter for non-commutative operations",
        "pairwise_sendrecv_replace": "in place (MPI_IN_PLACE): collplan has no sendrecv_replace exchange",
    }.get(name, f"collplan has no algorithm sending the messages of MPIR_{c.capitalize()}_intra_{name}")


def _mpich(call: _Call) -> NativeChoice:
    coll = call.collective.capitalize()
    letter, path = _search(CH4_TREE[call.collective], call)
    comp = f"MPIDI_{coll}_intra_composition_{letter}"
    ch4_source = _json_source("maint/tuning/coll/ch4/generic.json", call, path, f" -> {comp}")
    kind = CH4_KIND.get((call.collective, letter), "netmod")
    if kind == "two_level" and call.nodes > 1:
        return _pick("mpich", comp, None, {}, ch4_source,
                     "two-level: a shared-memory collective inside each node and a netmod one among the node "
                     "leaders (ch4_coll_impl.h); collplan has no hierarchical algorithm")
    if kind != "netmod":  # shared memory over every rank (one node)
        leaf, spath = _search(POSIX_TREE.get(call.collective, []), call)
        if leaf is not None:
            return _pick("mpich", leaf, None, {}, ch4_source + "; " + _json_source(
                "maint/tuning/coll/ch4/posix_generic.json", call, spath),
                "shared-memory release/gather through a shared buffer and flags, no messages (from the 5th bcast, "
                "reduce, barrier or allreduce on the node's communicator on; the first 4 run the MPIR algorithm, "
                "MPIR_CVAR_POSIX_NUM_COLLS_THRESHOLD=5, posix_coll_release_gather.h)")
    name, path = _search(MPIR_TREE[call.collective], call)
    source = ch4_source + "; " + _json_source("maint/tuning/coll/mpir/generic.json", call, path)
    algorithm, params, reason = _mpich_algorithm(call, name)
    return _pick("mpich", f"MPIR_{coll}_intra_{name}", algorithm, params, source, reason)


# ---------------------------------------------------------------------------------------------------------------
# Open MPI v5.0.10. Which coll component serves a communicator (priorities: self 75, han 35, tuned 30, basic 10):
#   one rank                      coll/self (coll_self_component.c), a local copy
#   every rank on one node        coll/tuned: han disqualifies itself ("comm has only local processes",
#                                 coll_han_module.c mca_coll_han_comm_query); coll/sm's priority is 0
#   several nodes                 coll/han for allgather, allreduce, barrier, bcast, gather, reduce, scatter
#                                 (mca_coll_han_comm_query), falling back to tuned for non-commutative allreduce and
#                                 reduce (coll_han_allreduce.c, coll_han_reduce.c) and, for allgather, bcast, gather,
#                                 reduce and scatter, when the nodes hold different numbers of ranks
#                                 (are_ppn_imbalanced); coll/tuned for the others
# coll/tuned without dynamic rules (coll_tuned_use_dynamic_rules=0) runs ompi_coll_tuned_<coll>_intra_dec_fixed
# (coll_tuned_decision_fixed.c), which picks an algorithm number from the communicator size and a byte count; its
# *_do_this passes segment size 0 and fan-out 0 (no segmentation; a chain of fan-out 0 is forced to 1,
# coll_base_topo.c ompi_coll_base_topo_build_chain).
# OMPI_FIXED[coll] = (line of the function, rows); rows: ((op, P) | None for "else", algorithm | sizes) tried in
# order; sizes: (limit, algorithm) = "quantity < limit", (None, algorithm) the else. With "commutative" /
# "noncommutative" the function first tests ompi_op_is_commute.
# ---------------------------------------------------------------------------------------------------------------

OMPI_FIXED = {
    # total_dsize = type size x count: the vector = `bytes`
    "allreduce": (55, {
        "noncommutative": [(("<", 4), [(131072, 3), (None, 1)]), (("<", 8), 3), (("<", 16), [(1048576, 3), (None, 2)]),
                           (("<", 128), 3), (("<", 256), [(131072, 2), (524288, 3), (None, 2)]),
                           (("<", 512), [(4096, 2), (524288, 3), (None, 2)]), (None, [(2048, 2), (None, 3)])],
        "commutative": [(("<", 4), [(8, 4), (4096, 3), (8192, 4), (16384, 3), (65536, 4), (262144, 5), (None, 6)]),
                        (("<", 8), [(16, 4), (8192, 3), (None, 6)]), (("<", 16), [(8192, 3), (None, 6)]),
                        (("<", 32), [(64, 5), (4096, 3), (None, 6)]), (("<", 64), [(128, 5), (None, 6)]),
                        (("<", 128), [(262144, 3), (None, 6)]), (("<", 256), [(131072, 2), (262144, 3), (None, 6)]),
                        (("<", 512), [(4096, 2), (None, 6)]), (("<", 2048), [(2048, 2), (16384, 3), (None, 6)]),
                        (("<", 4096), [(2048, 2), (4096, 5), (16384, 3), (None, 6)]),
                        (None, [(2048, 2), (16384, 5), (32768, 3), (None, 6)])]}),
    # total_dsize = type size x scount: one block = `bytes`
    "alltoall": (228, [
        (("==", 2), [(2, 2), (4, 5), (16, 2), (64, 5), (256, 2), (4096, 5), (32768, 2), (262144, 4), (1048576, 5),
                     (None, 2)]),
        (("<", 8), [(8192, 4), (16384, 1), (65536, 4), (524288, 1), (1048576, 2), (None, 1)]),
        (("<", 16), [(262144, 4), (None, 1)]),
        (("<", 32), [(4, 4), (512, 3), (8192, 4), (32768, 1), (262144, 4), (524288, 1), (None, 4)]),
        (("<", 64), [(512, 3), (524288, 1), (None, 4)]),
        (("<", 128), [(1024, 3), (2048, 1), (4096, 4), (262144, 1), (None, 2)]),
        (("<", 256), [(1024, 3), (2048, 4), (262144, 1), (None, 2)]),
        (("<", 512), [(1024, 3), (8192, 4), (32768, 1), (None, 2)]),
        (("<", 1024), [(512, 3), (8192, 4), (16384, 1), (131072, 4), (262144, 1), (None, 2)]),
        (("<", 2048), [(512, 3), (1024, 4), (2048, 1), (16384, 4), (262144, 1), (None, 4)]),
        (("<", 4096), [(1024, 3), (4096, 4), (8192, 1), (131072, 4), (None, 1)]),
        (None, [(2048, 3), (8192, 4), (16384, 1), (32768, 4), (65536, 1), (None, 4)])]),
    # the communicator size only
    "alltoallv": (418, [(("<", 4), 2), (("<", 64), 1), (("<", 128), 2), (("<", 256), 1), (("<", 1024), 2), (None, 1)]),
    "barrier": (464, [(("<", 4), 3), (("<", 8), 1), (("<", 64), 3), (("<", 256), 4), (("<", 512), 6), (("<", 1024), 4),
                      (("<", 4096), 6), (None, 4)]),
    # total_dsize = type size x count: the message = `bytes`
    "bcast": (512, [
        (("<", 4), [(32, 3), (256, 5), (512, 3), (1024, 7), (32768, 1), (131072, 5), (262144, 2), (524288, 1),
                    (1048576, 6), (None, 5)]),
        (("<", 8), [(64, 5), (128, 6), (2048, 5), (8192, 6), (1048576, 1), (None, 2)]),
        (("<", 16), [(8, 7), (64, 5), (4096, 7), (16384, 5), (32768, 6), (None, 1)]),
        (("<", 32), [(4096, 7), (1048576, 6), (None, 8)]), (("<", 64), [(2048, 6), (None, 7)]), (("<", 128), 7),
        (("<", 256), [(2, 6), (16384, 5), (32768, 1), (65536, 5), (None, 7)]),
        (("<", 1024), [(16384, 7), (32768, 4), (None, 7)]), (("<", 2048), [(524288, 7), (None, 8)]),
        (("<", 4096), [(262144, 7), (None, 8)]), (None, [(8192, 7), (16384, 5), (262144, 7), (None, 8)])]),
    # total_dsize = type size x count: the vector = `bytes`
    "reduce": (662, {
        "noncommutative": [(("<", 4), [(8, 6), (None, 1)]), (("<", 8), 1),
                           (("<", 16), [(1024, 6), (8192, 1), (16384, 6), (262144, 1), (None, 6)]), (("<", 128), 6),
                           (("<", 256), [(512, 6), (1024, 1), (None, 6)]), (None, 6)],
        "commutative": [(("<", 4), [(8, 7), (16, 4), (32, 3), (262144, 1), (524288, 3), (1048576, 2), (None, 3)]),
                        (("<", 8), [(4096, 4), (65536, 2), (262144, 5), (524288, 1), (1048576, 5), (None, 1)]),
                        (("<", 16), [(8192, 4), (None, 5)]), (("<", 32), [(4096, 4), (None, 5)]), (("<", 256), 5),
                        (("<", 512), [(8192, 5), (16384, 6), (None, 5)]), (("<", 2048), 5),
                        (("<", 4096), [(512, 5), (1024, 6), (8192, 5), (16384, 6), (None, 5)]),
                        (None, [(16, 5), (32, 6), (1024, 5), (2048, 6), (8192, 5), (16384, 6), (None, 5)])]}),
    # total_dsize = type size x the sum of rcounts = `bytes`
    "reduce_scatter": (824, {
        "noncommutative": [(None, 1)],
        "commutative": [(("<", 4), [(65536, 3), (131072, 4), (None, 3)]), (("<", 8), [(8, 1), (262144, 2), (None, 3)]),
                        (("<", 32), [(262144, 2), (None, 3)]),
                        (("<", 64), [(64, 1), (2048, 2), (524288, 4), (None, 3)]),
                        (("<", 128), [(256, 1), (512, 2), (2048, 4), (4096, 2), (None, 4)]),
                        (("<", 256), [(256, 1), (512, 2), (None, 4)]), (("<", 512), [(256, 1), (1024, 2), (None, 4)]),
                        (("<", 1024), [(512, 1), (2048, 2), (8192, 4), (16384, 2), (None, 4)]),
                        (("<", 2048), [(512, 1), (4096, 2), (16384, 4), (32768, 2), (None, 4)]),
                        (("<", 4096), [(512, 1), (4096, 2), (None, 4)]), (None, [(1024, 1), (8192, 2), (None, 4)])]}),
    # total_dsize = type size x rcount: one rank's block = `bytes`
    "reduce_scatter_block": (972, {
        "noncommutative": [(None, 1)],
        "commutative": [(("<", 4), [(4, 2), (8, 4), (16, 3), (128, 4), (256, 3), (4096, 4), (8192, 3), (131072, 4),
                                    (None, 1)]),
                        (("<", 8), [(8, 3), (32, 2), (256, 4), (8192, 3), (16384, 4), (1048576, 3), (None, 1)]),
                        (("<", 16), [(4, 1), (32, 3), (128, 4), (524288, 3), (4194304, 1), (None, 4)]),
                        (("<", 32), [(32, 1), (524288, 3), (2097152, 1), (4194304, 3), (None, 4)]),
                        (None, [(4, 3), (16, 1), (65536, 4), (262144, 1), (None, 4)])]}),
    # total_dsize = type size x scount: one block = `bytes`
    "allgather": (1093, [
        (("==", 2), 6), (("<", 32), 3), (("<", 64), [(1024, 3), (65536, 5), (None, 4)]),
        (("<", 128), [(512, 3), (65536, 5), (None, 4)]),
        (("<", 256), [(512, 3), (131072, 5), (524288, 4), (1048576, 5), (None, 4)]),
        (("<", 512), [(32, 3), (128, 2), (1024, 3), (131072, 5), (524288, 4), (1048576, 5), (None, 4)]),
        (("<", 1024), [(64, 3), (256, 2), (2048, 3), (None, 5)]),
        (("<", 2048), [(4, 3), (8, 2), (16, 3), (32, 2), (256, 3), (512, 2), (4096, 3), (None, 5)]),
        (("<", 4096), [(32, 2), (128, 3), (512, 2), (4096, 3), (None, 5)]),
        (None, [(2, 3), (8, 2), (16, 3), (512, 2), (4096, 3), (None, 5)])]),
    # per_rank_dsize = (type size x the sum of rcounts) / P = `bytes` // P
    "allgatherv": (1239, [
        (("==", 2), [(2048, 3), (4096, 5), (8192, 3), (None, 5)]),
        (("<", 8), [(256, 1), (4096, 4), (8192, 3), (16384, 4), (262144, 2), (None, 4)]),
        (("<", 16), [(1024, 1), (None, 2)]), (("<", 32), [(128, 1), (262144, 2), (None, 3)]),
        (("<", 64), [(256, 1), (8192, 2), (None, 3)]), (("<", 128), [(256, 1), (4096, 2), (None, 3)]),
        (("<", 256), [(1024, 2), (65536, 4), (None, 3)]), (("<", 512), [(1024, 2), (None, 3)]),
        (("<", 1024), [(512, 2), (1024, 1), (4096, 2), (1048576, 4), (None, 3)]), (None, [(4096, 2), (None, 4)])]),
    # total_dsize = type size x count of one rank's block = `bytes`
    "gather": (1379, [
        (("<", 4), [(2, 3), (4, 1), (32768, 2), (65536, 1), (131072, 2), (None, 3)]),
        (("<", 8), [(1024, 2), (8192, 1), (32768, 2), (262144, 1), (None, 3)]), (("<", 256), 2),
        (("<", 512), [(2048, 2), (8192, 1), (None, 2)]), (None, 2)]),
    "scatter": (1468, [
        (("<", 4), [(2, 3), (131072, 1), (262144, 3), (None, 1)]),
        (("<", 8), [(2048, 2), (4096, 1), (8192, 2), (32768, 1), (1048576, 3), (None, 1)]),
        (("<", 16), [(16384, 2), (1048576, 3), (None, 1)]), (("<", 32), [(16384, 2), (32768, 1), (None, 3)]),
        (("<", 64), [(512, 2), (8192, 3), (16384, 2), (None, 3)]), (None, [(512, 2), (None, 3)])]),
}

# The algorithm numbers' names (the "Algorithms:" comment of each function, coll_tuned_<coll>_decision.c).
OMPI_NAMES = {
    "allreduce": ["basic_linear", "nonoverlapping", "recursive_doubling", "ring", "segmented_ring", "rabenseifner"],
    "alltoall": ["linear", "pairwise", "modified_bruck", "linear_sync", "two_proc"],
    "alltoallv": ["basic_linear", "pairwise"],
    "barrier": ["linear", "double_ring", "recursive_doubling", "bruck", "two_proc", "tree"],
    "bcast": ["basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree", "binomial", "knomial",
              "scatter_allgather", "scatter_allgather_ring"],
    "reduce": ["linear", "chain", "pipeline", "binary", "binomial", "in-order_binary", "rabenseifner"],
    "reduce_scatter": ["non-overlapping", "recursive_halving", "ring", "butterfly"],
    "reduce_scatter_block": ["basic_linear", "recursive_doubling", "recursive_halving", "butterfly"],
    "allgather": ["linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"],
    "allgatherv": ["default", "bruck", "ring", "neighbor", "two_proc"],
    "gather": ["basic_linear", "binomial", "linear_sync"],
    "scatter": ["basic_linear", "binomial", "linear_nb"],
}

OMPI_HAN = ("allgather", "allreduce", "barrier", "bcast", "gather", "reduce", "scatter")
OMPI_HAN_BALANCED_ONLY = ("allgather", "bcast", "gather", "reduce", "scatter")


def _ompi_fixed(call: _Call) -> tuple[int, str]:
    """The algorithm number coll_tuned_decision_fixed.c picks, and the rule as text."""
    line, rows = OMPI_FIXED[call.collective]
    side = ""
    if isinstance(rows, dict):
        side = "commutative" if call.commutative else "noncommutative"
        rows = rows[side]
    # allgatherv compares per_rank_dsize, the others their total_dsize (see OMPI_FIXED's comments)
    size = call.bytes // call.ranks if call.collective == "allgatherv" else call.bytes
    what = "per_rank_dsize" if call.collective == "allgatherv" else "total_dsize"
    for p, sizes in rows:
        if p is None or (call.ranks == p[1] if p[0] == "==" else call.ranks < p[1]):
            break
    ptext = "else" if p is None else f"communicator_size {p[0]} {p[1]}"
    stext = ""
    if isinstance(sizes, list):
        for limit, alg in sizes:
            if limit is None or size < limit:
                stext = ", else" if limit is None else f", {what} < {limit}"
                break
    else:
        alg = sizes
    rule = ", ".join(filter(None, [side, ptext])) + stext
    return alg, (f"{OMPI} ompi/mca/coll/tuned/coll_tuned_decision_fixed.c:{line} "
                 f"ompi_coll_tuned_{call.collective}_intra_dec_fixed: {rule} -> {alg}")


def _ompi_algorithm(call: _Call, name: str) -> tuple[str, str | None, dict, str]:
    """(native name, collplan algorithm, params, reason) of the tuned algorithm called `name` (ompi_info's
    enumerator of coll_tuned_<coll>_algorithm), after the fallbacks inside ompi/mca/coll/base/coll_base_<coll>.c."""
    c, P = call.collective, call.ranks
    if P == 2 and name in _OMPI_ONE_MESSAGE_AT_2.get(c, ()):
        # two ranks: every tree is the one message between the root and the other rank, as the linear algorithm
        return f"tuned {c} {OMPI_NAMES[c].index(name) + 1} ({name})", f"{c}/linear", {}, ""
    if name not in OMPI_NAMES[c]:
        return f"tuned {c} {name}", None, {}, f"collplan does not know Open MPI's {c} algorithm '{name}'"
    native = f"tuned {c} {OMPI_NAMES[c].index(name) + 1} ({name})"
    pow2 = call.is_pow2

    def fallback(to: str, why: str):
        n, a, p, r = _ompi_algorithm(call, to)
        return f"{native}, {why}: {n}", a, p, r

    if c == "allreduce":
        if name == "recursive_doubling":  # the fold of MPICH's (coll_base_allreduce.c)
            return native, "allreduce/recursive_doubling", {}, ""
        if name in ("ring", "segmented_ring"):
            if name == "segmented_ring":  # segsize 0: one segment, count < P x count -> the ring
                return fallback("ring", "segment size 0")
            if call.count < P:
                return fallback("recursive_doubling", f"count {call.count} < P")
            return native, "allreduce/ring", {}, ""
        if name == "rabenseifner":
            if call.count < call.pof2 or not call.commutative:
                return fallback("basic_linear",
                                f"count {call.count} < {call.pof2}" if call.commutative else "non-commutative")
            if pow2:
                return native, "allreduce/rabenseifner", {}, ""
            return native, None, {}, ("for P not a power of two Open MPI folds by exchanging vector halves, "
                                      "allreduce/rabenseifner by sending whole vectors (MPICH's fold)")
        return native, None, {}, {"basic_linear": "a linear reduce to rank 0 and a linear bcast",
                                  "nonoverlapping": "a reduce then a bcast, each chosen by tuned"}[name]
    if c == "alltoall":
        if name in ("linear", "linear_sync"):  # linear_sync with coll_tuned_alltoall_max_requests 0 posts all
            return native, "alltoall/scattered", {"batch": "0"}, ""
        if name in ("pairwise", "two_proc"):  # send to r + k, receive from r - k at every P
            return native, "alltoall/ring", {}, ""
        return native, "alltoall/bruck", {"k": "2"}, ""
    if c == "alltoallv":
        if name == "basic_linear":
            return native, "alltoallv/async", {}, ""
        if not pow2 or P <= 2:
            return native, "alltoallv/linear_permutation", {}, ""
        return native, None, {}, ("pairwise exchanges with r + k and r - k; alltoallv/linear_permutation uses "
                                  "r XOR k when P is a power of two")
    if c == "barrier":
        if name in ("bruck", "two_proc") or (name == "recursive_doubling" and P <= 2):
            return native, "barrier/dissemination", {"n": "1"}, ""
        return native, None, {}, {"linear": "every rank to rank 0 and back",
                                  "double_ring": "a token twice around the ring",
                                  "recursive_doubling": "pairwise exchanges with r XOR 2^k (plus a fold), not "
                                                        "dissemination's r + 2^k",
                                  "tree": "a binary tree up and down"}[name]
    if c == "bcast":
        if name == "basic_linear":
            return native, "bcast/linear", {}, ""
        if name in ("chain", "pipeline"):  # segment size 0, fan-out 1: one chain, one segment
            return native, "bcast/chain", {"segments": "1"}, ""
        if name in ("scatter_allgather", "scatter_allgather_ring"):
            if call.count < P:
                return fallback("basic_linear", f"count {call.count} < P")
            return native, ("bcast/scatter_recursive_doubling_allgather" if name == "scatter_allgather"
                            else "bcast/scatter_ring_allgather"), {}, ""
        return native, None, {}, {
            "split_binary_tree": "collplan has no split binary tree",
            "binary_tree": "collplan has no binary-tree bcast",
            "binomial": "Open MPI's binomial tree clears a rank's highest bit to find its parent "
                        "(ompi_coll_base_topo_build_bmtree), bcast/binomial (MPICH's) its lowest: other pairs",
            "knomial": "collplan has no k-nomial bcast (radix coll_tuned_bcast_knomial_radix = 4)"}[name]
    if c == "reduce":
        if name == "linear":
            return native, "reduce/linear", {}, ""
        if name == "binomial":  # in-order binomial tree rooted at the root (only chosen for commutative ops)
            return native, "reduce/binomial", {"relative": "1"}, ""
        if name == "rabenseifner":
            if call.pof2 < 2 or call.count < call.pof2 or not call.commutative:
                return fallback("linear",
                                "count < the largest power of two <= P" if call.commutative else "non-commutative")
            if pow2 and P == 2:  # the rules pick it at P < 4 only; at P = 2 both are one exchange and one send
                return native, "reduce/rabenseifner", {}, ""
            return native, None, {}, ("for P not a power of two Open MPI folds by exchanging vector halves, "
                                      "reduce/rabenseifner by sending whole vectors")
        return native, None, {}, f"collplan has no {name} reduce tree"
    if c == "reduce_scatter":
        if name == "recursive_halving":
            return native, "reduce_scatter/recursive_halving", {}, ""
        if name == "ring":
            return native, "reduce_scatter/ring", {}, ""
        return native, None, {}, {"non-overlapping": "a reduce to rank 0 then a scatterv",
                                  "butterfly": "collplan has no butterfly reduce-scatter"}[name]
    if c == "reduce_scatter_block":
        if name == "recursive_halving":
            return native, "reduce_scatter_block/recursive_halving", {}, ""
        return native, None, {}, {"basic_linear": "a reduce to rank 0 then a scatter",
                                  "recursive_doubling": "collplan has no recursive-doubling reduce-scatter",
                                  "butterfly": "collplan has no butterfly reduce-scatter"}[name]
    if c in ("allgather", "allgatherv"):
        if name == "recursive_doubling" and not pow2:
            return fallback("bruck", "P not a power of two")
        if name == "neighbor" and P % 2:
            return fallback("ring", "odd P")
        algorithm = {"bruck": "bruck", "recursive_doubling": "recursive_doubling", "ring": "ring",
                     "two_proc": "ring"}.get(name)
        if algorithm:
            return native, f"{c}/{algorithm}", {}, ""
        return native, None, {}, {"linear": "a gather to rank 0 then a bcast",
                                  "default": "a gatherv to rank 0 then a bcast",
                                  "neighbor": "collplan has no neighbour-exchange allgather"}[name]
    if c == "gather":
        if name == "linear_sync":
            return native, None, {}, "a synchronised linear gather (first segment, then the rest)"
        return native, "gather/" + ("binomial" if name == "binomial" else "linear"), {}, ""
    # scatter: linear_nb posts the root's sends at once, basic_linear sends them one by one: the same messages
    return native, "scatter/" + ("binomial" if name == "binomial" else "linear"), {}, ""


# Open MPI's trees that are one message root <-> the other rank at P = 2 (a split binary tree sends two halves).
_OMPI_ONE_MESSAGE_AT_2 = {"bcast": ("binary_tree", "binomial", "knomial"),
                          "reduce": ("binary", "binomial", "in-order_binary", "chain", "pipeline")}


def _openmpi(call: _Call) -> NativeChoice:
    if call.ranks == 1:
        return _pick("openmpi", "self", None, {}, f"{OMPI} ompi/mca/coll/self/coll_self_module.c",
                     "one rank: coll/self copies locally, nothing is sent")
    balanced = call.ranks % call.nodes == 0
    if (call.nodes > 1 and call.collective in OMPI_HAN
            and not (call.collective in ("allreduce", "reduce") and not call.commutative)
            and (balanced or call.collective not in OMPI_HAN_BALANCED_ONLY)):
        return _pick("openmpi", f"han {call.collective}", None, {},
                     f"{OMPI} ompi/mca/coll/han/coll_han_module.c mca_coll_han_comm_query, "
                     f"coll_han_{call.collective}.c",
                     "HAN two-level: an intra-node and an inter-node collective on sub-communicators; collplan has "
                     "no hierarchical algorithm")
    alg, source = _ompi_fixed(call)
    name = OMPI_NAMES[call.collective][alg - 1]
    native, algorithm, params, reason = _ompi_algorithm(call, name)
    if call.ranks == 2 and name in _OMPI_ONE_MESSAGE_AT_2.get(call.collective, ()):
        source += " (P = 2: the tree is one message, as linear)"
    return _pick("openmpi", native, algorithm, params, source, reason)


def choice(library: str, collective: str, ranks: int, bytes: int, *, commutative: bool = True, root: int = 0,
           nodes: int = 1, counts=None, type_size: int = 1, builtin_op: bool = True) -> NativeChoice:
    """What `library` runs by default for one call of `collective` on `ranks` ranks over `nodes` nodes, `bytes`
    by collplan's convention (docs/profile.md). type_size: the datatype's size, where a rule counts elements;
    builtin_op: a predefined operation (MPICH's rules; a non-commutative one is a user's); counts: the profile's
    values, summing to `bytes` (allgatherv, reduce_scatter: each rank's part, where MPICH looks at the largest and
    at whether they are all equal); root: checked for the rooted collectives, ignored by the others (no rule of
    either library depends on it)."""
    if library not in LIBRARIES:
        raise CollplanError(f"unknown MPI library '{library}' (allowed: {', '.join(LIBRARIES)})")
    rooted = api.describe(collective)["rooted"]
    for what, value, low in (("ranks", ranks, 1), ("bytes", bytes, 0), ("type_size", type_size, 1),
                             ("nodes", nodes, 1)):
        if not isinstance(value, int) or value < low:
            raise CollplanError(f"{what} {value!r} is invalid (allowed: an integer >= {low})")
    if nodes > ranks:
        raise CollplanError(f"nodes {nodes} is invalid (allowed: 1..{ranks}, the ranks)")
    if rooted and (not isinstance(root, int) or not 0 <= root < ranks):
        raise CollplanError(f"root {root!r} is invalid (allowed: an integer 0..{ranks - 1})")
    if counts is not None and len(counts) != ranks:
        raise CollplanError(f"counts has {len(counts)} entries (allowed: {ranks}, one per rank)")
    if counts is not None and sum(counts) != bytes:
        raise CollplanError(f"counts sum to {sum(counts)} (allowed: bytes, {bytes})")
    call = _Call(collective, ranks, bytes, bool(commutative), bool(builtin_op) and bool(commutative), type_size,
                 nodes, tuple(counts) if counts is not None else None)
    return _mpich(call) if library == "mpich" else _openmpi(call)


def runs(library: str, collective: str, ranks: int, bytes: int, name: str, *, commutative: bool = True,
         type_size: int = 1) -> NativeChoice:
    """What `library` runs where its selection names the algorithm `name` (a tuning file's rule rather than the
    default rules): Open MPI's coll/tuned enumerator name (ompi_info: coll_tuned_<coll>_algorithm), MPICH's
    MPIR_<Coll>_intra_<name>. `bytes` as choice() takes it; the fallbacks inside the algorithms apply."""
    call = _Call(collective, ranks, bytes, bool(commutative), bool(commutative), type_size, 1, None)
    if library == "openmpi":
        native, algorithm, params, reason = _ompi_algorithm(call, name)
        return _pick(library, native, algorithm, params, f"{OMPI} ompi/mca/coll/base/coll_base_{collective}.c", reason)
    algorithm, params, reason = _mpich_algorithm(call, name)
    return _pick(library, f"MPIR_{collective.capitalize()}_intra_{name}", algorithm, params,
                 f"{MPICH} src/mpi/coll/{collective}/", reason)


def library_of(mpi_version: str) -> str:
    """The library of an MPI_Get_library_version text (the profile's `mpi` line)."""
    text = mpi_version.strip()
    if text.startswith("Open MPI v"):
        return "openmpi"
    if text.startswith("MPICH Version:"):
        return "mpich"
    raise CollplanError(f"MPI library '{text.splitlines()[0][:60] if text else text}' is not known "
                        f"(allowed: Open MPI 'Open MPI v...', MPICH 'MPICH Version: ...')")
