"""Wang, Lin, Ranka (1993), Tables 4-6 in shape on the CM-5 model: AC, LP, RS_N, DRS_N, RS_NH (and the optimal
edge colouring) on test sets 1-3; communication cost per message size, scheduling cost, phases; the paper's
conclusions checked one by one. Also Table 2 (the calibration) and Table 3 (Generate_Recv both ways).

Costs: static schedules are priced by the analytic estimate (docs/models.md) under the machine cm5-32; DRS_N by
its protocol simulation (src/collplan/algorithms/alltoallv/drs_n_sim.hpp), whose time includes Generate_Recv (step 1 of its Fig. 5).
"Used once" adds the scheduling cost: steps counted by the scheduler x the machine's [scheduling] step.
"""
from __future__ import annotations

import math
from pathlib import Path

from .. import _core
from .. import unstructured as u
from ..api import estimate, schedule
from . import Claim, Report, ranking

NAME = "unstructured-cm5"
SUMMARY = "Wang/Lin/Ranka CM-5: AC, LP, RS_N, DRS_N, RS_NH on test sets 1-3 (Tables 4-6), node contention"
MACHINE = "cm5-32"
HALF = "cm5-32-halfduplex"  # the same with a node's sends and receives sharing its port: how the ranking depends on it
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
TABLE6_UNITS = {2800: [16, 32, 64, 128, 256, 512, 1024, 2048], 9428: [16, 32, 64, 128, 256, 512, 1024],
                53961: [16, 32, 64, 128, 256]}
PAPER_ALGS = ["AC", "LP", "RS_N", "DRS_N", "RS_NH"]
# Tables 4-6, communication cost (ms) of AC, LP, RS_N, DRS_N (, RS_NH) at the largest size of each case, and the
# phases ('perm') of RS_N and RS_NH: compared with collplan's, never used as results.
TABLE4_LARGEST = {4: [286.952, 272.649, 164.951, 174.290], 16: [3236.886, 1421.718, 1105.936, 1169.099],
                  31: [11409.862, 1980.108, 2388.292, 2765.645]}
TABLE4_COMM = {  # every row of Table 4 (AC, LP, RS_N, DRS_N), by d and message size
    4: {16: [2.065, 3.410, 1.679, 2.994], 512: [3.539, 4.415, 2.480, 3.743], 1024: [4.819, 5.547, 3.192, 4.505],
        2048: [7.388, 7.738, 4.365, 5.911], 4096: [12.368, 12.118, 6.911, 8.764],
        32768: [79.343, 77.439, 44.317, 49.391], 131072: [286.952, 272.649, 164.951, 174.290]},
    16: {16: [6.585, 7.788, 6.072, 10.416], 256: [11.317, 9.136, 7.728, 11.750], 512: [14.997, 10.850, 9.072, 13.262],
         1024: [21.796, 13.982, 11.589, 16.187], 2048: [35.014, 19.517, 15.702, 21.315],
         4096: [61.103, 31.016, 24.749, 31.697], 131072: [3236.886, 1421.718, 1105.936, 1169.099]},
    31: {16: [16.558, 8.934, 11.335, 23.563], 128: [23.297, 9.745, 12.918, 24.847], 256: [28.944, 11.111, 14.678, 26.226],
         512: [36.995, 13.684, 17.252, 29.158], 1024: [53.933, 17.581, 21.929, 35.054],
         16384: [505.558, 131.647, 154.408, 194.999], 131072: [11409.862, 1980.108, 2388.292, 2765.645]}}
TABLE5_LARGEST = {4: [155.872, 165.550, 110.546, 106.924, 105.026], 16: [865.381, 953.548, 406.768, 468.583, 359.516],
                  31: [4577.956, 1298.740, 1342.152, 1481.374, 1231.085]}
TABLE5_PERM = {4: (5.54, 5.66), 16: (18.56, 19.1), 31: (34.2, 34.56)}  # (RS_N, RS_NH)
TABLE6_LARGEST = {2800: [184.354, 141.512, 119.301, 106.379, 100.708], 9428: [234.905, 171.527, 152.494, 131.186, 127.600],
                  53961: [179.254, 153.044, 130.772, 118.193, 110.744]}
TABLE6_PERM = {2800: (15.15, 19.65), 9428: (16.45, 22.5), 53961: (18.05, 26.4)}
# Sec. 5, test set 3: messages sent per processor (max, min, average), message length in units (max, min, average).
PAPER_MESH_STATS = {2800: (15, 3, 9.25, 36, 1, 14.2), 9428: (16, 3, 10.5, 99, 1, 32.04),
                    53961: (18, 6, 10.81, 276, 1, 93.21)}
# Test set 3 here: the airfoil triangulation extruded into a 3-D wing section (`layers` layers spanning a cube),
# cut into 32 parts by recursive coordinate bisection; (refine, layers) give the point count nearest the paper's
# (322 x 9 = 2898, 322 x 29 = 9338, 1226 x 44 = 53944). Why 3-D and RCB: docs/unstructured.md, "Test set 3".
MESHES = {2800: (0, 9), 9428: (0, 29), 53961: (1, 44)}
PHASE_TOL = 0.10      # phases within 10% of the paper's
STAT_TOL = 0.25       # mesh statistics within 25% of the paper's
CLOSE = 0.10          # "close to": within 10%


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


def _case(matrices: list, sizes: list[int], step_s: float, machine: str = MACHINE) -> dict:
    """Mean over the matrices: comm[alg][size] (s), comp[alg] (s), perm[alg] (phases)."""
    comm = {a: [0.0] * len(sizes) for a in ALGS}
    comp = {a: 0.0 for a in ALGS}
    perm = {a: 0.0 for a in ALGS}
    drs = {"inquiries": 0.0, "refused": 0.0, "messages": 0.0}
    n = len(matrices)
    for k, m in enumerate(matrices):
        for a in ALGS:
            if a == "DRS_N":
                gr = u.generate_recv_cost(m, machine=machine)["am_s"]
                for i, s in enumerate(sizes):
                    r = u.drs_n(m, s, machine, seed=k + 1)
                    comm[a][i] += (r["time_s"] + gr) / n
                drs["inquiries"] += r["inquiries"] / n
                drs["refused"] += r["refused"] / n
                drs["messages"] += u.stats(m)["messages"] / n
                continue
            sch = schedule("alltoallv/" + FILES[a], ranks=P, params=_params(a, k + 1), matrix=m)
            for i, row in enumerate(estimate(sch, sizes, machine=machine)):
                comm[a][i] += row.time_s / n
            if a != "AC":
                pl = u.plan(FILES[a], m, seed=k + 1)
                comp[a] += pl["work"] * step_s / n
                perm[a] += len(pl["phases"]) / n
    return {"sizes": sizes, "comm": comm, "comp": comp, "perm": perm, "drs": drs}


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
def _largest(res: dict, algs: list[str]) -> dict:
    return {a: res["comm"][a][-1] for a in algs}


def _order_claims(table: str, paper: dict, ours: dict, label) -> list[Claim]:
    """Per case: which algorithm is fastest at the largest size, and the whole order of the five."""
    out = []
    for key, vals in paper.items():
        if key not in ours or ours[key]["sizes"][-1] != _sizes(table, key)[-1]:
            continue
        p = dict(zip(PAPER_ALGS, vals))
        o = _largest(ours[key], PAPER_ALGS)
        size = ours[key]["sizes"][-1]
        out.append(Claim(f"Table {table}, {label(key)}, msg_unit {size} B: the fastest of AC, LP, RS_N, DRS_N, RS_NH",
                         min(p, key=p.get), min(o, key=o.get),
                         detail=f"paper {ranking(p)}; collplan {ranking(o)}"))
    return out


def _sizes(table: str, key) -> list[int]:
    return {"4": TABLE4_SIZES, "5": TABLE5_UNITS, "6": TABLE6_UNITS}[table][key]


def _claims(t1: dict, t2: dict, t3: dict, phases: dict, gr: dict, mesh_stats: dict) -> list[Claim]:
    paper4 = ["AC", "LP", "RS_N", "DRS_N"]
    cl = []
    for d, v in phases.items():
        cl.append(Claim(f"RS_N needs about d + log d phases (Table 4, d = {d}: the paper's count)", TABLE4_RSN_PERM[d],
                        v, "~", PHASE_TOL, "phases", detail=f"d + log2 d = {d + math.log2(d):.2f}"))
    ok = sum(d <= v <= d + math.log2(d) + 1 for d, v in phases.items())
    cl.append(Claim("RS_N's phases lie between d and d + log2 d + 1 (collplan's own check of its RS_N)", len(phases),
                    ok, unit="cases", required=True))
    small = {d: _best(r, 0, paper4, once=True) for d, r in t1.items() if d < 31}
    cl.append(Claim("AC is the best for small messages (schedule used once; sparse matrices, test set 1)", len(small),
                    sum(b == "AC" for b in small.values()), unit="cases",
                    detail="; ".join(f"d={d}: best at {t1[d]['sizes'][0]} B is {b}" for d, b in small.items())))
    large = {d: _best(r, -1, paper4, once=False) for d, r in t1.items() if d < 31}
    cl.append(Claim("RS_N is the best for large messages when its schedule is reused (sparse matrices, test set 1)",
                    len(large), sum(b == "RS_N" for b in large.values()), unit="cases",
                    detail="; ".join(f"d={d}: best at {t1[d]['sizes'][-1]} B is {b}" for d, b in large.items())))
    medium = {}
    for d, r in t1.items():
        if d < 31:
            medium[d] = [r["sizes"][i] for i in range(1, len(r["sizes"]) - 1) if _best(r, i, paper4, once=True) == "DRS_N"]
    cl.append(Claim("DRS_N is the best for medium sizes when the schedule is used once (test set 1): cases where it is "
                    "best at some medium size", len(medium), sum(bool(v) for v in medium.values()), unit="cases",
                    detail="; ".join(f"d={d}: DRS_N best at {v or 'no medium size'}" for d, v in medium.items())))
    dense = t1[31]
    lp = sum(dense["comm"]["LP"][i] <= dense["comm"]["RS_N"][i] for i in range(len(dense["sizes"])))
    gain = [1 - v[1] / v[2] for v in TABLE4_COMM[31].values()]
    cl.append(Claim(f"LP is good for dense matrices (d = 31: no slower than RS_N at any size; the paper: LP "
                    f"{min(gain):.0%}-{max(gain):.0%} faster than RS_N at every size of Table 4)", len(dense["sizes"]),
                    lp, unit="sizes",
                    detail=f"LP/RS_N at {dense['sizes'][-1]} B: {dense['comm']['LP'][-1] / dense['comm']['RS_N'][-1]:.3f}"
                    f" (paper {TABLE4_LARGEST[31][1] / TABLE4_LARGEST[31][2]:.3f}); LP/optimum (EC): "
                    f"{dense['comm']['LP'][-1] / dense['comm']['EC'][-1]:.3f}"))
    for d, r in t2.items():
        cl.append(Claim(f"RS_NH beats RS_N on non-uniform sizes (test set 2, d = {d}, largest msg_unit; sec. 5.1.2): "
                        "RS_NH / RS_N below 1", 1.0, r["comm"]["RS_NH"][-1] / r["comm"]["RS_N"][-1], "<",
                        detail=f"the paper's ratio {TABLE5_LARGEST[d][4] / TABLE5_LARGEST[d][2]:.3f}"))
    for d, r in t2.items():
        cl.append(Claim(f"RS_NH phases (Table 5, d = {d})", TABLE5_PERM[d][1], r["perm"]["RS_NH"], "~", PHASE_TOL,
                        "phases", detail=f"RS_N: paper {TABLE5_PERM[d][0]}, collplan {r['perm']['RS_N']:.2f}"))
    for pts, r in t3.items():
        cl.append(Claim(f"RS_N phases (Table 6, {pts} points)", TABLE6_PERM[pts][0], r["perm"]["RS_N"], "~", PHASE_TOL,
                        "phases", detail=f"optimum (edge colouring) {r['perm']['EC']:.0f}"))
        cl.append(Claim(f"RS_NH phases (Table 6, {pts} points)", TABLE6_PERM[pts][1], r["perm"]["RS_NH"], "~", PHASE_TOL,
                        "phases", detail=f"RS_NH - RS_N: paper {TABLE6_PERM[pts][1] - TABLE6_PERM[pts][0]:.2f}, "
                        f"collplan {r['perm']['RS_NH'] - r['perm']['RS_N']:.2f}"))
    cl += _order_claims("5", TABLE5_LARGEST, t2, lambda d: f"d = {d}")
    cl += _order_claims("6", TABLE6_LARGEST, t3, lambda pts: f"{pts} points")
    for pts, r in t3.items():
        cl.append(Claim(f"On the mesh matrices DRS_N beats RS_N for large messages (Table 6, {pts} points, largest "
                        "msg_unit): DRS_N / RS_N below 1", 1.0, r["comm"]["DRS_N"][-1] / r["comm"]["RS_N"][-1], "<",
                        detail=f"the paper's ratio {TABLE6_LARGEST[pts][3] / TABLE6_LARGEST[pts][2]:.3f}"))
        cl.append(Claim(f"... and has results close to RS_NH's (Table 6, {pts} points, largest msg_unit): DRS_N / RS_NH",
                        TABLE6_LARGEST[pts][3] / TABLE6_LARGEST[pts][4], r["comm"]["DRS_N"][-1] / r["comm"]["RS_NH"][-1],
                        "~", CLOSE))
    for pts, st in mesh_stats.items():
        p = PAPER_MESH_STATS[pts]
        cl.append(Claim(f"test set 3, {pts} points: average messages sent per processor", p[2], st["avg_sent"], "~",
                        STAT_TOL, detail=f"max/min: paper {p[0]}/{p[1]}, collplan {st['max_sent']}/{st['min_sent']}; "
                        f"{st['points']} points"))
        cl.append(Claim(f"test set 3, {pts} points: average message length", p[5], st["avg_len"], "~", STAT_TOL, "units",
                        detail=f"max/min: paper {p[3]}/{p[4]}, collplan {st['max_len']}/{st['min_len']}"))
    cl.append(Claim("Generate_Recv with counts + messages is cheaper than the global concatenate (Table 3)", len(gr),
                    sum(v["am_s"] < v["concat_s"] for v in gr.values()), unit="cases",
                    detail="; ".join(f"P={p} d={d}: {v['am_s'] * 1e3:.3f} vs {v['concat_s'] * 1e3:.3f} ms"
                                     for (p, d), v in gr.items())))
    return cl


def _ratio_note(t1: dict) -> str:
    """Paper / collplan over Table 4's cells, per algorithm: how far below the paper collplan's times are."""
    parts = []
    for j, a in enumerate(["AC", "LP", "RS_N", "DRS_N"]):
        r = [TABLE4_COMM[d][s][j] / (t1[d]["comm"][a][i] * 1e3) for d in t1 for i, s in enumerate(t1[d]["sizes"])
             if s in TABLE4_COMM[d]]
        parts.append(f"{a} {min(r):.2f}-{max(r):.2f}")
    return ("Table 4, paper time / collplan time over its cells (how far below the paper collplan is): " +
            ", ".join(parts))


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
    mats = {}
    for d in ds:
        mats[d] = [u.testset2(P, d, s) for s in range(1, trials + 1)]
        t2[d] = _case(mats[d], _pick(TABLE5_UNITS[d], quick), step)
        rows += _rows("5", f"d={d}", t2[d])
    mesh_stats = {}
    for pts in (list(MESHES)[:2] if quick else MESHES):
        refine, layers = MESHES[pts]
        m, info = u.mesh_matrix(P, refine, layers=layers, part="rcb")
        mats[pts] = [m]
        t3[pts] = _case([m], _pick(TABLE6_UNITS[pts], quick), step)
        rows += _rows("6", f"{pts} points", t3[pts])
        mesh_stats[pts] = dict(u.stats(m), points=info["points"])
        st = mesh_stats[pts]
        notes.append(f"mesh for the paper's {pts} points: the airfoil refined {refine}x, {layers} layers "
                     f"({info['points']} points), RCB into {P}: messages sent per processor max {st['max_sent']} min "
                     f"{st['min_sent']} avg {st['avg_sent']:.2f}; lengths max {st['max_len']} min {st['min_len']} avg "
                     f"{st['avg_len']:.2f} units (the paper: " + "{} {} {} {} {} {}".format(*PAPER_MESH_STATS[pts]) + ")")
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
    notes.append(_ratio_note(t1))
    for key, r in list(t2.items()) + list(t3.items()):
        h = _case(mats[key], r["sizes"][-1:], step, HALF)
        name = f"d = {key}" if key in t2 else f"{key} points"
        notes.append(f"largest msg_unit, {name}: ranking on {MACHINE} {ranking(_largest(r, PAPER_ALGS))}; on {HALF} "
                     f"{ranking(_largest(h, PAPER_ALGS))}")
    for key, r in list(t2.items()) + list(t3.items()):
        if "drs" in r:
            notes.append(f"DRS_N inquiries at the largest msg_unit ({'d = ' if key in t2 else ''}{key}"
                         f"{' points' if key in t3 else ''}): {r['drs']['inquiries']:.0f} per run, "
                         f"{r['drs']['refused']:.0f} refused, for {r['drs']['messages']:.0f} messages")
    notes.append(f"{trials} matrices per case (the paper: 50); times in ms; 'comp' = scheduling steps x "
                 f"{step * 1e6:.2f} us; DRS_N includes Generate_Recv; table 3 rows: AC column = concatenate, "
                 f"LP column = counts + messages")
    report = Report(title="Unstructured all-to-many personalized communication on the CM-5 model "
                          "(Wang, Lin, Ranka 1993, Tables 3-6)",
                    columns=["table", "case", "size"] + ALGS, rows=rows, claims=_claims(t1, t2, t3, phases, gr, mesh_stats),
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
