"""Wang, Lin, Ranka (1993), Tables 4-6 in shape on the CM-5 model: AC, LP, RS_N, DRS_N, RS_NH (and the optimal
edge colouring) on test sets 1-3; communication cost per message size, scheduling cost, phases; the paper's
conclusions checked one by one. Also Table 2 (the calibration) and Table 3 (Generate_Recv both ways).

Costs: static schedules are priced by the analytic estimate (docs/models.md) under the machine cm5-32; DRS_N by
its protocol simulation (src/collplan/sim/drs_n.hpp), whose time includes Generate_Recv (step 1 of its Fig. 5).
"Used once" adds the scheduling cost: steps counted by the scheduler x the machine's [scheduling] step.
"""
from __future__ import annotations

import math
from pathlib import Path

from .. import _core
from .. import unstructured as u
from ..api import estimate, schedule
from . import Claim, Report

NAME = "unstructured-cm5"
SUMMARY = "Wang/Lin/Ranka CM-5: AC, LP, RS_N, DRS_N, RS_NH on test sets 1-3 (Tables 4-6), node contention"
MACHINE = "cm5-32"
P = 32
ALGS = ["AC", "LP", "RS_N", "DRS_N", "RS_NH", "EC"]
FILES = {"AC": "async", "LP": "linear_permutation", "RS_N": "random_schedule", "RS_NH": "random_schedule_heap",
         "EC": "edge_coloring"}

# The paper's readable measurements used for calibration and comparison (never as results).
TABLE2_RECV_MS = {256: [0.089, 0.125, 0.205, 0.375, 0.731, 1.396], 4096: [0.516, 1.083, 2.189, 4.693, 9.865, 19.485]}
TABLE2_D = [1, 2, 4, 8, 16, 31]
TABLE4_RSN_COMP_MS = {4: 1.572, 16: 6.267, 31: 12.857}
TABLE4_RSN_PERM = {4: 5.54, 16: 18.56, 31: 34.2}
TABLE4_SIZES = {4: [16, 512, 1024, 2048, 4096, 32768, 131072], 16: [16, 256, 512, 1024, 2048, 4096, 131072],
                31: [16, 128, 256, 512, 1024, 16384, 131072]}
TABLE5_UNITS = {4: [32, 64, 256, 1024, 2048, 4096], 16: [16, 32, 128, 512, 2048, 4096], 31: [16, 64, 256, 1024, 2048, 4096]}
TABLE6_UNITS = [16, 32, 64, 128, 256, 512, 1024, 2048]


# ------------------------------------------------------------------------------------------------- calibration
def _table2_model(A: float, g: float, G: float, d: int, m: int) -> float:
    """Receiver's time (s) when d nodes send m bytes to it at once, estimate semantics, LogGP with 2o + L = A."""
    b = m - 1
    return A + b * G + (d - 1) * max(g, b * G)


def fit_table2() -> dict:
    """Least-squares fit (relative error) of Table 2's recv column: {'A': 2o+L, 'g', 'G'} in s and s/B."""
    from scipy.optimize import least_squares

    def residuals(x):
        return [(_table2_model(x[0] * 1e-6, x[1] * 1e-6, x[2] * 1e-6, d, m) * 1e3 - r) / r
                for m, col in TABLE2_RECV_MS.items() for d, r in zip(TABLE2_D, col)]
    x = least_squares(residuals, [50, 40, 0.15], bounds=([0, 0, 0], [1e4, 1e4, 10])).x
    return {"A": x[0] * 1e-6, "g": x[1] * 1e-6, "G": x[2] * 1e-6}


def fit_schedule_step(trials: int = 20) -> float:
    """Seconds per RS_N scheduling step that best fit Table 4's RS_N scheduling cost (least squares)."""
    work = {d: sum(u.plan("random_schedule", u.testset1(P, d, 1000 + t), seed=t)["work"] for t in range(trials)) / trials
            for d in TABLE4_RSN_COMP_MS}
    return (sum(work[d] * TABLE4_RSN_COMP_MS[d] * 1e-3 for d in work) / sum(w * w for w in work.values()))


def _machine_step() -> float:
    return _core.parse_time(str(u.machine_table(MACHINE, "scheduling")["step"]))


# ------------------------------------------------------------------------------------------------- one case
def _params(alg: str, seed: int) -> dict:
    return {"seed": seed} if alg in ("AC", "RS_N", "RS_NH") else {}


def _case(matrices: list, sizes: list[int], step_s: float) -> dict:
    """Mean over the matrices: comm[alg][size] (s), comp[alg] (s), perm[alg] (phases)."""
    comm = {a: [0.0] * len(sizes) for a in ALGS}
    comp = {a: 0.0 for a in ALGS}
    perm = {a: 0.0 for a in ALGS}
    n = len(matrices)
    for k, m in enumerate(matrices):
        for a in ALGS:
            if a == "DRS_N":
                gr = u.generate_recv_cost(m, machine=MACHINE)["am_s"]
                for i, s in enumerate(sizes):
                    comm[a][i] += (u.drs_n(m, s, MACHINE, seed=k + 1)["time_s"] + gr) / n
                continue
            sch = schedule("alltoallv/" + FILES[a], ranks=P, params=_params(a, k + 1), matrix=m)
            for i, row in enumerate(estimate(sch, sizes, machine=MACHINE)):
                comm[a][i] += row.time_s / n
            if a != "AC":
                pl = u.plan(FILES[a], m, seed=k + 1)
                comp[a] += pl["work"] * step_s / n
                perm[a] += len(pl["phases"]) / n
    return {"sizes": sizes, "comm": comm, "comp": comp, "perm": perm}


def _rows(table: str, case: str, res: dict) -> list[list]:
    rows = [[table, case, s] + [round(res["comm"][a][i] * 1e3, 4) for a in ALGS] for i, s in enumerate(res["sizes"])]
    rows.append([table, case, "comp"] + [("-" if a in ("AC", "DRS_N") else round(res["comp"][a] * 1e3, 4)) for a in ALGS])
    rows.append([table, case, "perm"] + [("-" if a in ("AC", "DRS_N") else round(res["perm"][a], 2)) for a in ALGS])
    return rows


def _once(res: dict, a: str, i: int) -> float:
    return res["comm"][a][i] + res["comp"][a]


def _best(res: dict, i: int, algs: list[str], once: bool) -> str:
    return min(algs, key=lambda a: _once(res, a, i) if once else res["comm"][a][i])


# ------------------------------------------------------------------------------------------------- claims
def _claims(t1: dict, t2: dict, t3: dict, phases: dict, gr: dict) -> list[Claim]:
    paper4 = ["AC", "LP", "RS_N", "DRS_N"]
    cl = []
    ok = all(d <= v <= d + math.log2(d) + 1 for d, v in phases.items())
    cl.append(Claim("RS_N needs about d + log d phases", ok, "; ".join(
        f"d={d}: {v:.2f} (d + log2 d = {d + math.log2(d):.2f}, paper {TABLE4_RSN_PERM[d]})" for d, v in phases.items()),
        required=True))
    small = {d: _best(r, 0, paper4, once=True) for d, r in t1.items() if d < 31}
    cl.append(Claim("AC is the best for small messages (schedule used once; sparse matrices)",
                    all(b == "AC" for b in small.values()),
                    "; ".join(f"d={d}: best at {t1[d]['sizes'][0]} B is {b}" for d, b in small.items())))
    large = {d: _best(r, -1, paper4, once=False) for d, r in t1.items() if d < 31}
    cl.append(Claim("RS_N is the best for large messages when its schedule is reused (sparse matrices)",
                    all(b == "RS_N" for b in large.values()),
                    "; ".join(f"d={d}: best at {t1[d]['sizes'][-1]} B is {b}" for d, b in large.items())))
    medium = {}
    for d, r in t1.items():
        if d < 31:
            medium[d] = [r["sizes"][i] for i in range(1, len(r["sizes"]) - 1) if _best(r, i, paper4, once=True) == "DRS_N"]
    cl.append(Claim("DRS_N is the best for medium sizes when the schedule is used once",
                    all(v for v in medium.values()),
                    "; ".join(f"d={d}: DRS_N best at {v or 'no medium size'}" for d, v in medium.items())))
    dense = t1[31]
    lp_ok = all(dense["comm"]["LP"][i] <= dense["comm"]["RS_N"][i] for i in range(len(dense["sizes"])))
    cl.append(Claim("LP is good for dense matrices (d = 31: no slower than RS_N at any size)", lp_ok,
                    f"LP/RS_N at {dense['sizes'][-1]} B: {dense['comm']['LP'][-1] / dense['comm']['RS_N'][-1]:.3f}; "
                    f"LP/optimum (EC): {dense['comm']['LP'][-1] / dense['comm']['EC'][-1]:.3f}"))
    rsnh = {d: r["comm"]["RS_NH"][-1] / r["comm"]["RS_N"][-1] for d, r in t2.items()}
    cl.append(Claim("RS_NH beats RS_N on non-uniform message sizes (test set 2, largest msg_unit)",
                    all(v < 1 for v in rsnh.values()), "; ".join(f"d={d}: RS_NH/RS_N {v:.3f}" for d, v in rsnh.items())))
    mesh = {k: r["comm"]["DRS_N"][-1] / r["comm"]["RS_N"][-1] for k, r in t3.items()}
    cl.append(Claim("On the mesh matrices DRS_N beats RS_N for large messages (test set 3)",
                    all(v < 1 for v in mesh.values()), "; ".join(f"{k}: DRS_N/RS_N {v:.3f}" for k, v in mesh.items())))
    cl.append(Claim("Generate_Recv with counts + messages is cheaper than the global concatenate (Table 3)",
                    all(v["am_s"] < v["concat_s"] for v in gr.values()),
                    "; ".join(f"P={p} d={d}: {v['am_s'] * 1e3:.3f} vs {v['concat_s'] * 1e3:.3f} ms"
                              for (p, d), v in gr.items())))
    return cl


# ------------------------------------------------------------------------------------------------- run
def _pick(sizes: list[int], quick: bool) -> list[int]:
    """Quick mode: the smallest, a middle and the largest size."""
    return sorted({sizes[0], sizes[len(sizes) // 2], sizes[-1]}) if quick else list(sizes)


def run(quick: bool) -> Report:
    trials = 2 if quick else 10
    step = _machine_step()
    rows, notes = [], []
    ds = [4, 16, 31]
    t1, t2, t3 = {}, {}, {}
    for d in ds:
        t1[d] = _case([u.testset1(P, d, s) for s in range(1, trials + 1)], _pick(TABLE4_SIZES[d], quick), step)
        rows += _rows("4", f"d={d}", t1[d])
    for d in ds:
        t2[d] = _case([u.testset2(P, d, s) for s in range(1, trials + 1)], _pick(TABLE5_UNITS[d], quick), step)
        rows += _rows("5", f"d={d}", t2[d])
    for refine in ([1, 2] if quick else [2, 3, 4]):
        m, info = u.mesh_matrix(P, refine)
        key = f"{info['points']} points"
        t3[key] = _case([m], _pick(TABLE6_UNITS, quick), step)
        rows += _rows("6", key, t3[key])
        st = u.stats(m)
        notes.append(f"mesh {key} (airfoil refined {refine}x, METIS into {P}): messages sent per processor max "
                     f"{st['max_sent']} min {st['min_sent']} avg {st['avg_sent']:.2f}; lengths max {st['max_len']} "
                     f"min {st['min_len']} avg {st['avg_len']:.2f} units")
    phases = {d: sum(len(u.plan("random_schedule", u.testset1(P, d, 500 + s), seed=s)["phases"])
                     for s in range(trials * 5)) / (trials * 5) for d in ds}
    gr = {}
    for p in ([32] if quick else [32, 128, 256]):
        for d in ([4, 16] if quick else [4, 16, 32]):
            if d < p:
                gr[(p, d)] = u.generate_recv_cost(u.testset1(p, d, 1), machine=MACHINE)
                rows.append(["3", f"P={p} d={d}", "concat vs AM"] + [round(gr[(p, d)]["concat_s"] * 1e3, 4),
                            round(gr[(p, d)]["am_s"] * 1e3, 4)] + ["-"] * (len(ALGS) - 2))
    for m_bytes, col in TABLE2_RECV_MS.items():
        model = [_recv_time(d, m_bytes) * 1e3 for d in TABLE2_D]
        notes.append(f"Table 2 recv at {m_bytes} B, d = {TABLE2_D}: model " + ", ".join(f"{x:.3f}" for x in model) +
                     " ms; paper " + ", ".join(f"{x:.3f}" for x in col) + " ms")
    notes.append(f"{trials} matrices per case (the paper: 50); times in ms; 'comp' = scheduling steps x "
                 f"{step * 1e6:.2f} us; DRS_N includes Generate_Recv; table 3 rows: AC column = concatenate, "
                 f"LP column = counts + messages")
    report = Report(title="Unstructured all-to-many personalized communication on the CM-5 model "
                          "(Wang, Lin, Ranka 1993, Tables 3-6)",
                    columns=["table", "case", "size"] + ALGS, rows=rows, claims=_claims(t1, t2, t3, phases, gr),
                    notes=notes)
    report.figures[f"{NAME}-testset1"] = lambda path: _plot(t1, path)
    return report


def _recv_time(d: int, m: int) -> float:
    """Table 2's scenario under the machine model: d ranks send m bytes each to rank 31 at once (estimate)."""
    mat = [[0] * P for _ in range(P)]
    for i in range(d):
        mat[i][P - 1] = 1
    return estimate(schedule("alltoallv/async", ranks=P, matrix=mat), [m], machine=MACHINE)[0].time_s


def _plot(t1: dict, path: Path) -> None:
    from ..plot import legend_outside, line_style, pyplot, save_figure
    plt = pyplot()
    fig, axes = plt.subplots(1, len(t1), figsize=(4.2 * len(t1), 3.6))
    for ax, (d, r) in zip(axes, t1.items()):
        for i, a in enumerate(ALGS):
            ax.loglog(r["sizes"], [x * 1e3 for x in r["comm"][a]], ms=3, label=a, **line_style(i))
        ax.set_title(f"test set 1, d = {d}")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("communication time (ms)")
        ax.grid(True, which="both", alpha=0.3)
    legend_outside(axes[-1])
    fig.tight_layout()
    save_figure(fig, path)
