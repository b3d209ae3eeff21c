#!/usr/bin/env python3
"""Regenerates the seed corpora in fuzz/corpus/<target>/ from collplan's own exports and machine files.

Run from the repository root with the package installed (make install):  .venv/bin/python fuzz/make_corpus.py
The seeds are small valid inputs (each a few hundred bytes to a few KB); libFuzzer mutates them. They are
committed; what the fuzzer finds beyond them goes to build/fuzz/corpus (not committed).
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

from collplan.machines import load_machine, machine_names

ROOT = pathlib.Path(__file__).resolve().parent
CORPUS = ROOT / "corpus"
COLLPLAN = [sys.executable, "-m", "collplan"]


def put(target: str, name: str, text: str) -> None:
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(text)


def export(*args: str) -> str:
    coll = args[1].split("/")[0]
    return subprocess.run(COLLPLAN + ["export", "--collective", coll, *args, "-o", "-"], check=True, capture_output=True, text=True).stdout


def schedules() -> None:
    for name, args in {
        "allgather_ring_3": ["--algorithm", "allgather/ring", "--ranks", "3"],
        "allgather_bruck_5": ["--algorithm", "allgather/bruck", "--ranks", "5"],
        "alltoall_a2at_torus4x2": ["--algorithm", "alltoall/a2at", "--topology", "torus:4x2"],
        "alltoall_multiphase_8": ["--algorithm", "alltoall/multiphase", "--ranks", "8", "--param", "partition=2+1"],
        "alltoallv_lp_3": ["--algorithm", "alltoallv/linear_permutation", "--ranks", "3", "--matrix", "testset1:P=3,d=2,seed=1"],
        "allreduce_rabenseifner_3": ["--algorithm", "allreduce/rabenseifner", "--ranks", "3"],
        "allreduce_nway_5": ["--algorithm", "allreduce/nway_dissemination", "--ranks", "5", "--param", "n=2"],
        "barrier_dissemination_3": ["--algorithm", "barrier/dissemination", "--ranks", "3"],
    }.items():
        put("schedule_text", name, export(*args))
    # Every option and quoting form of the grammar in one small hand-written schedule (docs/schedule.md).
    put("schedule_text", "options", (
        "collplan-schedule 1  # comment\n"
        "collective allreduce\nranks 2\nblocks in=2 out=2 tmp=1\n"
        'algorithm "a \\"quoted\\" \\x41"\nparams k=2\ntopology ring:2\n'
        "flags needs_commutative needs_inverse idempotent_only rank_consistent cyclic_symmetric\n"
        "rank 0\n  0: copy in[0+2] -> out[0+2]\n  1: send to 1 tag 3 out[0+1] units 5 port 1 ties 1\n"
        "  2: | recv from 1 tag 3 tmp[0+1]\n  3: reduce tmp[0+1] -> out[0+1] reverse inverse after 1,2\n"
        "  4: calc 7\n  5: barrier\n"
        "rank 1\n  0: copy in[0+2] -> out[0+2]\r\n  1: send to 0 tag 3 out[0+1]\n  2: recv from 0 tag 3 tmp[0+1]\n"
        "  3: reduce tmp[0+1] -> out[0+1] after 2\n  4: barrier\n"))


def wisdom() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        w = pathlib.Path(tmp) / "w.json"
        for args in (["--collective", "allgather", "--ranks", "8", "--sizes", "16B..64KiB"],
                     ["--collective", "allreduce", "--ranks", "6", "--sizes", "8B..1MiB"]):
            subprocess.run(COLLPLAN + ["plan", *args, "--machine", "ib-qdr", "--no-progress", "--wisdom", str(w)],
                           check=True, capture_output=True)
        put("wisdom", "planned", w.read_text())
    put("wisdom", "hand", '{"format": "collplan-wisdom/1", "entries": [\n'
        ' {"collective": "alltoallv", "topology": "torus:4x4", "algorithm": "native", "params": {}},\n'
        ' {"collective": "allreduce", "ranks": 8, "op": "sum", "min_bytes": 0, "max_bytes": 65536,'
        ' "algorithm": "allreduce/recexch", "params": {"k": 4, "note": "a\\tb\\n\\/\\\\\\""},'
        ' "predicted_s": 1.5e-05, "evaluator": null, "flag": true, "list": [1, [2, {}]]}\n]}\n')


def specs() -> None:
    for n in machine_names():
        m = load_machine(n)
        put("model_spec", n, m.model)
        put("topology_spec", n, m.topology)
        if m.network:
            put("net_params", n, m.network)
    for i, s in enumerate(["loggp:L=5us,o=1.5us,g=2us,G=0.5ns/B,O=0.1ns/B,ports=2",
                           "circuit:lambda=177.5us,tau=0.394us/B,delta=51.5us,rho=0.54us/B,q=750us",
                           "hockney:alpha=1us,beta=4GB/s,gamma=0.2ns/B,barrier=3us,duplex=0"]):
        put("model_spec", f"extra{i}", s)
    for i, s in enumerate(["line:7", "ring:2", "torus:4x4x3", "hypercube:5", "full:9", "fattree:4,3", "mesh:1x3"]):
        put("topology_spec", f"extra{i}", s)
    for i, s in enumerate(["", "mtu=2KiB,header=64B,vcs=4,dateline=0,switching=wormhole,voq=1",
                           "L=2us,o=1us,g=3us,G=0.3ns/B,O=0ns/B,eager=64KiB,cpus=2,link_bw=40Gbit/s",
                           "pacing=gap,pacing_gap=20ns,pacing_factor=1.5,arbitration=random,inject_bw=1ns/B,overhead=1us"]):
        put("net_params", f"extra{i}", s)
    for i, s in enumerate(["4KiB", "16", "1.5us", "20 ns", "1ns/B", "3.2GiB/s", "40Gbit/s", "16B..1MiB",
                           "8,1KiB,64KiB", "0..400B:50B", "1e-3ms"]):
        put("units", f"s{i}", s)
    for i, s in enumerate(["allreduce/ring", "ring", "allreduce/recexch:k=4", "alltoall/multiphase:partition=2+2",
                           "allgather/circgos:a=2,b=3,k=1,topology=fattree:4,2", "native",
                           "allreduce/nway_dissemination:n=2,takeout=keep,forward=partial", "alltoall/bruck:radix=3"]):
        put("algorithm_spec", f"s{i}", s)


if __name__ == "__main__":
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    schedules()
    wisdom()
    specs()
    total = sum(f.stat().st_size for f in CORPUS.rglob("*") if f.is_file())
    print(f"{sum(1 for f in CORPUS.rglob('*') if f.is_file())} seeds, {total} bytes in {CORPUS}")
