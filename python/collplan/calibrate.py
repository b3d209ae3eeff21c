"""Fitting for `collplan calibrate`: machine parameters from measured times (pure functions, no MPI).

The measurements come from the C++ kernels (src/collplan/measure/calibrate.hpp) run by
collplan/commands/calibrate.py; docs/calibration.md explains the methods. Everything here works on plain lists of
seconds and bytes, so it is tested on synthetic data (tests/python/test_calibrate.py).

- ``summarize``: robust statistics of repeated samples (median, quartiles, spread = IQR / median).
- ``fit_line``: weighted least squares on *relative* error for T(m) = a + b m (weights 1/T^2), so a 1 us and a
  1 ms point count alike -- the error a cost model makes is judged relative to the time it predicts. Reports R^2
  (of the weighted fit) and the largest relative residual. a and b are kept >= 0.
- ``fit_piecewise``: two independent lines with a breakpoint between two measured sizes (the eager/rendezvous
  switch of an MPI library), chosen by least squares over every split; accepted only when an F test says the two
  lines explain the data much better than one.
- ``fit_hockney``: alpha, beta from the one-way times (half the ping-pong round trip).
- ``fit_loggp``: LogGP's L, o, g, G (and the per-byte overhead O) following Kielmann, Bal, Verstoep, "Fast
  measurement of LogP parameters for message passing platforms" (IPDPS workshops 2000): o_s(m) and o_r(m) from
  the time spent in the send and in the receive of an arrived message, g(m) from the saturation of a burst of
  messages; and Hoefler, Lichei, Rehm, "Low-overhead LogGP parameter assessment for modern interconnection
  networks" (IPDPS 2007): G as the slope of the gap over the large sizes, L = one-way time of a 0-byte message
  minus 2o.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

from ._core import CollplanError, format_bytes

F_CRITICAL = 20.0  # F statistic a breakpoint must reach (two extra parameters); far above the 1% point of F(2, n)
SWITCH_GROWTH = 0.03  # a step whose median time grows this much faster than its size marks a protocol switch
SWITCH_MAX_BYTES = 1 << 20  # ... up to this size (eager limits are 4-256 KiB; above, cache effects grow faster too)
CALL_BYTES_MAX = 1024  # local operations below this size time the call (reduce_call, copy_call), not the bytes
MAX_MODEL_FACTOR = 10.0  # a fitted model off by more than this factor at a measured size is refused (check_fit)


# ------------------------------------------------------------------------------------------------ statistics
def _quantile(xs: list[float], q: float) -> float:
    """Linear-interpolation quantile of sorted xs."""
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(samples, what: str = "samples") -> dict:
    """Median, quartiles, minimum, count and spread ((q3 - q1) / median) of repeated times (seconds)."""
    xs = sorted(float(x) for x in samples)
    if not xs:
        raise CollplanError(f"{what}: no samples (allowed: at least one time)")
    if not all(math.isfinite(x) and x >= 0 for x in xs):
        bad = next(x for x in xs if not (math.isfinite(x) and x >= 0))
        raise CollplanError(f"{what}: sample {bad} is invalid (allowed: finite times >= 0)")
    med = _quantile(xs, 0.5)
    q1, q3 = _quantile(xs, 0.25), _quantile(xs, 0.75)
    return {"median": med, "q1": q1, "q3": q3, "min": xs[0], "n": len(xs),
            "spread": (q3 - q1) / med if med > 0 else 0.0}


# ------------------------------------------------------------------------------------------------ line fits
@dataclass
class Fit:
    """T(m) = a + b m on the points x (bytes), y (seconds)."""
    a: float
    b: float
    r2: float            # 1 - weighted SSE / weighted total sum of squares (weights 1/y^2)
    max_rel: float       # max |T(m) - y| / y over the points
    rms_rel: float       # sqrt(mean relative residual^2)
    n: int
    x_min: float
    x_max: float

    def __call__(self, m: float) -> float:
        return self.a + self.b * m

    def as_dict(self) -> dict:
        return asdict(self)


def _check_points(x, y, need: int, what: str) -> tuple[list[float], list[float]]:
    x, y = [float(v) for v in x], [float(v) for v in y]
    if len(x) != len(y):
        raise CollplanError(f"{what}: {len(x)} sizes but {len(y)} times (allowed: one time per size)")
    if len(x) < need:
        raise CollplanError(f"{what}: {len(x)} points are too few (allowed: at least {need})")
    for m, t in zip(x, y):
        if not (math.isfinite(m) and m >= 0):
            raise CollplanError(f"{what}: size {m} is invalid (allowed: finite sizes >= 0)")
        if not (math.isfinite(t) and t > 0):
            raise CollplanError(f"{what}: time {t} at size {m:g} B is invalid (allowed: finite times > 0)")
    if len(set(x)) < 2:
        raise CollplanError(f"{what}: all points have the size {x[0]:g} B (allowed: at least two different sizes)")
    return x, y


def _wls(x, y, w) -> tuple[float, float]:
    sw = sum(w)
    mx = sum(wi * xi for wi, xi in zip(w, x)) / sw
    my = sum(wi * yi for wi, yi in zip(w, y)) / sw
    sxx = sum(wi * (xi - mx) ** 2 for wi, xi in zip(w, x))
    sxy = sum(wi * (xi - mx) * (yi - my) for wi, xi, yi in zip(w, x, y))
    b = sxy / sxx
    return my - b * mx, b


def _fit(x, y, a: float, b: float) -> Fit:
    w = [1.0 / t ** 2 for t in y]
    sw = sum(w)
    my = sum(wi * yi for wi, yi in zip(w, y)) / sw
    rel = [(a + b * m - t) / t for m, t in zip(x, y)]
    sse = sum(r * r for r in rel)
    sst = sum(wi * (yi - my) ** 2 for wi, yi in zip(w, y))
    r2 = 1.0 - sse / sst if sst > 0 else 1.0
    return Fit(a=a, b=b, r2=r2, max_rel=max(abs(r) for r in rel), rms_rel=math.sqrt(sse / len(rel)),
               n=len(x), x_min=min(x), x_max=max(x))


def fit_line(x, y, what: str = "fit") -> Fit:
    """Least squares of T(m) = a + b m on relative error, with a >= 0 and b >= 0."""
    x, y = _check_points(x, y, 2, what)
    w = [1.0 / t ** 2 for t in y]
    a, b = _wls(x, y, w)
    if b < 0:  # no growth with size: a constant (the weighted mean minimising relative error)
        a, b = sum(wi * yi for wi, yi in zip(w, y)) / sum(w), 0.0
    elif a < 0:  # through the origin: min sum ((b m - y) / y)^2
        a, b = 0.0, sum(m / t for m, t in zip(x, y)) / sum((m / t) ** 2 for m, t in zip(x, y))
    return _fit(x, y, a, b)


@dataclass
class Piecewise:
    """Two lines: `low` for sizes <= `eager_bytes`, `high` above (the breakpoint lies in (eager_bytes, next_bytes))."""
    low: Fit
    high: Fit
    eager_bytes: float   # the largest measured size on the low line
    next_bytes: float    # the smallest measured size on the high line
    f_stat: float        # F statistic of two lines against one
    max_rel: float
    rms_rel: float
    trimmed: int = 0     # outliers left out of the test and the fit (see fit_piecewise)

    def __call__(self, m: float) -> float:
        return self.low(m) if m <= self.eager_bytes else self.high(m)

    def jump(self) -> float:
        """How much longer the first size on the high line takes than the low line predicts there: the rendezvous
        synchronisation (the model's rndv; LogGPS, Ino, Fujimoto, Hagihara 2001). 0 or less: no jump."""
        return self.high(self.next_bytes) - self.low(self.next_bytes)

    def as_dict(self) -> dict:
        return {"low": self.low.as_dict(), "high": self.high.as_dict(), "eager_bytes": self.eager_bytes,
                "next_bytes": self.next_bytes, "f_stat": self.f_stat, "max_rel": self.max_rel,
                "rms_rel": self.rms_rel, "trimmed": self.trimmed}


def _sse(f: Fit) -> float:
    return f.rms_rel ** 2 * f.n


def fit_piecewise(x, y, min_points: int = 3, what: str = "piecewise fit") -> Piecewise | None:
    """The best split into two lines (each on at least min_points sizes), or None when one line is as good.

    Where the times show a protocol switch (_switch: a step where the time grows faster than the size), the split
    is there; otherwise every split between consecutive distinct sizes is tried, and the one with the least total
    relative squared error wins. It is accepted when F = ((SSE_1 - SSE_2) / 2) / (SSE_2 / (n - 4)) >= F_CRITICAL:
    two more parameters must explain far more than noise would. A few outliers (a size whose median was spoilt by
    other load on the machine) can hide a clear switch, so when the test fails, it is repeated once without the n/10
    points that the two lines fit worst; the result then says how many points were left out (`trimmed`).
    """
    x, y = _check_points(x, y, 2 * min_points, what)
    pw = _piecewise(x, y, min_points, what)
    if pw is None or pw.f_stat >= F_CRITICAL:
        return pw if pw is not None and pw.f_stat >= F_CRITICAL else None
    drop = len(x) // 10
    if drop == 0 or len(x) - drop < 2 * min_points:
        return None
    rel = sorted(range(len(x)), key=lambda i: -abs(pw(x[i]) / y[i] - 1))[:drop]
    keep = [i for i in range(len(x)) if i not in set(rel)]
    again = _piecewise([x[i] for i in keep], [y[i] for i in keep], min_points, what)
    if again is None or again.f_stat < F_CRITICAL:
        return None
    again.trimmed = drop
    return again


def _piecewise(x, y, min_points: int, what: str) -> Piecewise | None:
    """The least-squares split and its F statistic (not yet tested against F_CRITICAL)."""
    pts = sorted(zip(x, y))
    x, y = [p[0] for p in pts], [p[1] for p in pts]
    one = fit_line(x, y, what)
    best = None
    switch = _switch(x, y, min_points)
    for k in [switch] if switch is not None else range(min_points, len(x) - min_points + 1):
        if x[k - 1] == x[k] or len(set(x[:k])) < 2 or len(set(x[k:])) < 2:
            continue
        lo, hi = fit_line(x[:k], y[:k], what), fit_line(x[k:], y[k:], what)
        sse = _sse(lo) + _sse(hi)
        if best is None or sse < best[0]:
            best = (sse, k, lo, hi)
    if best is None:
        return None
    sse2, k, lo, hi = best
    n = len(x)
    dof = max(1, n - 4)
    f = ((_sse(one) - sse2) / 2) / (sse2 / dof) if sse2 > 0 else math.inf
    return Piecewise(low=lo, high=hi, eager_bytes=x[k - 1], next_bytes=x[k], f_stat=f,
                     max_rel=max(lo.max_rel, hi.max_rel), rms_rel=math.sqrt(sse2 / n))


def _switch(x, y, min_points: int) -> int | None:
    """The split k (x[:k] | x[k:]) just after a protocol switch, or None. A cost a + b m with a, b >= 0 grows at
    most in proportion to the size, so a step between consecutive sizes (up to SWITCH_MAX_BYTES) whose median time
    grows more than SWITCH_GROWTH faster than its size is a switch -- if the time stays up at the next size too,
    within 10% (a single slow size is an outlier, not a switch). The steepest such step wins. The least-squares
    split misses a switch where the lines fit the whole range poorly: Open MPI's shared-memory switch between 2
    and 4 KiB on a 16-core node, fitted at 8-16 KiB (bench/planner/node16/calibrate_openmpi_P16.toml's ping-pong;
    tests/python/test_calibrate.py)."""
    best = None
    for i in range(min_points - 1, len(x) - min_points):
        if x[i] <= 0 or x[i + 1] > SWITCH_MAX_BYTES or i + 2 >= len(x) or y[i + 2] < 0.9 * y[i + 1]:
            continue
        growth = (y[i + 1] / y[i]) / (x[i + 1] / x[i])
        if growth > 1 + SWITCH_GROWTH and (best is None or growth > best[0]):
            best = (growth, i + 1)
    return None if best is None else best[1]


# ------------------------------------------------------------------------------------------------ models
def fit_hockney(sizes, oneway_s, fit_sizes=None) -> dict:
    """alpha, beta (and the breakpoint) from one-way times (seconds) at sizes (bytes).

    The single line is fitted on `fit_sizes` (default: all sizes), e.g. the log-uniform sweep without the extra
    sizes measured around the breakpoint, so every decade of sizes weighs the same; the piecewise fit uses all.
    """
    x, y = _check_points(sizes, oneway_s, 2, "hockney fit")
    chosen = set(float(s) for s in fit_sizes) if fit_sizes is not None else set(x)
    line = fit_line([m for m in x if m in chosen], [t for m, t in zip(x, y) if m in chosen], "hockney fit")
    pw = fit_piecewise(x, y, what="hockney breakpoint") if len(x) >= 6 else None
    return {"alpha": line.a, "beta": line.b, "line": line, "piecewise": pw}


def gap_per_message(sizes, burst_n_s, burst_1_s, count) -> list[float]:
    """g(m) = (T_burst(n, m) - T_burst(1, m)) / (n - 1): the time per message once the pipe is full
    (the latency and the ack cancel; Kielmann et al. 2000 take the saturated burst time per message)."""
    counts = list(count) if isinstance(count, (list, tuple)) else [count] * len(sizes)
    out = []
    for m, tn, t1, n in zip(sizes, burst_n_s, burst_1_s, counts):
        if n < 2:
            raise CollplanError(f"burst count {n} at {m:g} B is too small (allowed: >= 2)")
        g = (tn - t1) / (n - 1)
        out.append(max(g, 1e-12))  # a burst faster than one message: noise at the clock's resolution
    return out


def fit_loggp(zero_oneway_s: float, o_send: dict, o_recv: dict, gap_sizes, gap_s, eager_bytes=None) -> dict:
    """LogGP parameters.

    zero_oneway_s: one-way time of a 0-byte message (half the ping-pong round trip).
    o_send, o_recv: {size: median time in MPI_Send / in MPI_Recv of an arrived message}, eager sizes only.
    gap_sizes, gap_s: g(m) per size (gap_per_message).
    eager_bytes: the breakpoint of the ping-pong, if one was found: G is fitted above it when there are enough
    sizes there (the rendezvous protocol of large messages), else over the upper half of the sizes.
    """
    if not o_send or set(o_send) != set(o_recv):
        raise CollplanError("loggp fit: overhead samples missing or at different sizes for send and receive")
    m0 = min(o_send)
    o = (o_send[m0] + o_recv[m0]) / 2
    L = zero_oneway_s - 2 * o
    osizes = sorted(o_send)
    O_fit = fit_line(osizes, [(o_send[m] + o_recv[m]) / 2 for m in osizes], "loggp O fit") if len(osizes) >= 2 else None
    gx, gy = _check_points(gap_sizes, gap_s, 3, "loggp gap fit")
    small = gy[gx.index(min(gx))]
    big = [(m, t) for m, t in zip(gx, gy) if eager_bytes is not None and m > eager_bytes]
    if len(big) < 3:
        half = sorted(zip(gx, gy))[len(gx) // 2:]
        big = half if len(half) >= 2 else sorted(zip(gx, gy))
    G_fit = fit_line([m for m, _ in big], [t for _, t in big], "loggp G fit")
    return {"L": L, "o": o, "g": small, "G": G_fit.b, "O": 0.0, "O_direct": O_fit.b if O_fit else 0.0,
            "o_send": o_send[m0], "o_recv": o_recv[m0], "G_fit": G_fit, "O_fit": O_fit, "L_clamped": L <= 0}


def split_per_byte(p: dict, oneway_slope: float) -> dict:
    """Set O so that the estimate's LogGP message, 2(o + m O) + L + (m - 1) G (docs/models.md), grows with the
    measured one-way slope while a port is busy only (m - 1) G (the burst gap): O = (slope - G) / 2, >= 0.

    On shared memory a one-way message is a copy into a shared buffer and a copy out, one after the other, but a
    burst overlaps the copies of consecutive messages, so the gap per byte G is about half the one-way slope; the
    per-byte overhead O is the part of the one-way time that does not hold the port."""
    return dict(p, O=max(0.0, (oneway_slope - p["G"]) / 2), oneway_slope=oneway_slope)


def loggp_oneway(p: dict, m: float) -> float:
    """One message under the estimate's LogGP (docs/models.md): 2(o + m O) + L + (m - 1) G."""
    return 2 * (p["o"] + m * p.get("O", 0.0)) + loggp_L(p) + max(0.0, m - 1) * p["G"]


def fit_local(sizes, times_s, what: str) -> Fit:
    """Per-byte cost of a local operation (reduction, copy): the slope of T(m) = c + b m."""
    return fit_line(sizes, times_s, what)


# ------------------------------------------------------------------------------------------------ result
def fit_host(streams: dict, reduce_busy: dict, host_ranks: int, hosts: int) -> dict | None:
    """The host's channel (the model's host_beta; docs/models.md, "Ranks that share a host"): 1 / the most bytes per
    second the ranks of one host moved together, over k pairs exchanging at once (streams: {bytes: {k: B/s}}).
    Written only when at least two pairs ran: one pair cannot say what several share (the max-rate model of Gropp,
    Olson, Samfass 2016 needs the node's aggregate, not one pair's rate)."""
    if not streams:
        return None
    for m, byk in streams.items():
        for k, v in byk.items():
            if not (math.isfinite(v) and v > 0):
                raise CollplanError(f"calibrate: host rate {v} at {k} pairs of {m} B is invalid (allowed: finite, > 0)")
    (m_best, k_best), best = max((((m, k), v) for m, byk in streams.items() for k, v in byk.items()),
                                 key=lambda kv: kv[1])
    pairs = max(k for byk in streams.values() for k in byk)
    big = max(streams)
    return {"ranks": host_ranks, "hosts": hosts, "pairs": pairs, "rate_max": best, "at_bytes": m_best,
            "at_pairs": k_best, "pair_rate": streams[big].get(1, 0.0), "beta": 1 / best if pairs >= 2 else None,
            "streams": streams, "reduce_busy": dict(sorted(reduce_busy.items()))}


def _medians(table: dict) -> dict:
    return {m: summarize(v, f"samples at {m} B")["median"] for m, v in sorted(table.items())}


def build(data: dict, coarse, P: int, library: str, abi: str, reps: int, quick: bool, host: str = "",
          date: str = "", elapsed_s: float = 0.0) -> dict:
    """Every fit of a calibrate run from its raw samples (data: the tables of commands/calibrate.py's Run)."""
    pp = {m: summarize(v, f"ping-pong at {m} B") for m, v in sorted(data["pingpong"].items())}
    sizes = sorted(pp)
    hock = fit_hockney(sizes, [pp[m]["median"] for m in sizes], fit_sizes=coarse)
    pw = hock["piecewise"]
    b1, bn = _medians(data["burst1"]), _medians(data["burstn"])
    gsizes = sorted(bn)
    gap = gap_per_message(gsizes, [bn[m] for m in gsizes], [b1[m] for m in gsizes],
                          [data["burst_count"][m] for m in gsizes])
    o_send, o_recv = _medians(data["o_send"]), _medians(data["o_recv"])
    if 0 not in pp:
        raise CollplanError("calibrate: no 0-byte ping-pong (needed for LogGP's L)")
    lg = fit_loggp(pp[0]["median"], o_send, o_recv, gsizes, gap, pw.eager_bytes if pw else None)
    lg = split_per_byte(lg, pw.high.b if pw else hock["line"].b)
    clock = summarize(data["timer"], "timer")["median"]
    lg["L_floor"] = clock  # L is kept at least one clock read: below that the difference T(0) - 2o is noise
    lg["L_clamped"] = lg["L"] < clock
    red, cp = _medians(data["reduce"]), _medians(data["copy"])
    # the per-byte slopes from 1 KiB on; the time of one call of the smallest size (one double) is the cost per call
    gamma = fit_local([m for m in red if m >= CALL_BYTES_MAX], [t for m, t in red.items() if m >= CALL_BYTES_MAX],
                      "reduction fit")
    rho = fit_local([m for m in cp if m >= CALL_BYTES_MAX], [t for m, t in cp.items() if m >= CALL_BYTES_MAX],
                    "copy fit")
    calls = {name: (d[min(d)] if min(d) < CALL_BYTES_MAX else None) for name, d in (("reduce", red), ("copy", cp))}
    spreads = [(pp[m]["spread"], m) for m in sizes]
    channel = fit_host(data.get("streams", {}), data.get("reduce_busy", {}), data.get("host_ranks", 0),
                       data.get("hosts", 1))
    return {
        "ranks": P, "mpi": library, "abi": abi, "host": host, "date": date, "reps": reps, "quick": quick,
        "elapsed_s": elapsed_s, "coarse_sizes": list(coarse),
        "hockney": {"alpha": hock["alpha"], "beta": hock["beta"], "line": hock["line"], "piecewise": pw},
        "loggp": lg, "gamma": gamma, "rho": rho,
        "pingpong": {m: pp[m] for m in sizes}, "gap": dict(zip(gsizes, gap)),
        "burst_count": {m: data["burst_count"][m] for m in gsizes},
        "o_send": o_send, "o_recv": o_recv, "reduce": red, "copy": cp, "calls": calls,
        "barrier": summarize(data["barrier"], "barrier"), "timer": summarize(data["timer"], "timer"),
        "spread_median": sorted(s for s, _ in spreads)[len(spreads) // 2], "spread_worst": max(spreads),
        "host_channel": channel, "stream_count": dict(data.get("stream_count", {})),
    }


def model_oneway(r: dict, kind: str, m: float) -> float:
    """The one-way time of an m-byte message under the fitted model of this kind."""
    if kind == "hockney":
        return r["hockney"]["alpha"] + r["hockney"]["beta"] * m
    rv = rendezvous(r)  # as written: a rendezvous message pays the jump (rndv) on top
    return loggp_oneway(r["loggp"], m) + (rv.jump() if rv and m > rv.eager_bytes else 0.0)


def rendezvous(r: dict) -> Piecewise | None:
    """The ping-pong's two lines where they jump at the switch (what eager and rndv are written from), else None."""
    pw = r["hockney"]["piecewise"]
    return pw if pw and pw.jump() > 0 else None


def check_fit(r: dict, kind: str) -> None:
    """Refuse (CollplanError) a fit that its own residuals say is wrong: the model's one-way time off by more than
    MAX_MODEL_FACTOR from the measured median at some size, a constant that is not finite, or no time per byte
    (LogGP's G, Hockney's beta) although the measured times grow with size. Measurements taken while other work
    ran are the usual cause (once: o = 8 ms against 0.3 us measured, +2,410,790 % at 0 B)."""
    load = r.get("loadavg_before", [None])[0]
    busy = (f"the machine was probably busy (load average {load:.1f} on {r.get('cpus', '?')} CPUs); "
            if load is not None else "the machine was probably busy; ")
    why = f"{busy}run again on an idle machine"
    per_byte = r["hockney"]["beta"] if kind == "hockney" else r["loggp"]["G"]
    constants = [r["hockney"]["alpha"], per_byte] if kind == "hockney" else \
        [loggp_L(r["loggp"]), r["loggp"]["o"], r["loggp"]["g"], per_byte, r["loggp"].get("O", 0.0)]
    if not all(math.isfinite(c) and c >= 0 for c in constants):
        raise CollplanError(f"calibrate: the {kind} fit is unreliable: a constant is negative or not finite; {why}")
    sizes = sorted(m for m in r["pingpong"] if m in set(r["coarse_sizes"]))
    if per_byte <= 0 and r["pingpong"][sizes[-1]]["median"] > 2 * r["pingpong"][sizes[0]]["median"]:
        what = "beta" if kind == "hockney" else "G"
        raise CollplanError(f"calibrate: the {kind} fit is unreliable: {what} = 0 s/B although the one-way time "
                            f"grows from {fmt_time(r['pingpong'][sizes[0]]['median'])} at {format_bytes(sizes[0])} "
                            f"to {fmt_time(r['pingpong'][sizes[-1]]['median'])} at {format_bytes(sizes[-1])}; {why}")
    errors = [(model_oneway(r, kind, m) / r["pingpong"][m]["median"], m) for m in sizes]
    ratio, m = max(errors, key=lambda e: max(e[0], 1 / e[0]) if e[0] > 0 else math.inf)
    if not 1 / MAX_MODEL_FACTOR <= ratio <= MAX_MODEL_FACTOR:
        raise CollplanError(f"calibrate: the {kind} fit is unreliable: its worst residual is {_pct(ratio - 1)} at "
                            f"{format_bytes(m)} ({fmt_time(model_oneway(r, kind, m))} against "
                            f"{fmt_time(r['pingpong'][m]['median'])} measured; allowed: within a factor of "
                            f"{MAX_MODEL_FACTOR:g}); {why}")


# ------------------------------------------------------------------------------------------------ writing
def fmt_time(s: float) -> str:
    """A time with a unit the model parser reads, 6 significant digits ('1.23456us')."""
    if s == 0:
        return "0s"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(s) >= f:
            return f"{s / f:.6g}{unit}"
    return f"{s / 1e-12:.6g}ps"


def fmt_per_byte(s: float) -> str:
    return fmt_time(s) + "/B"


def _fmt_rate(s_per_byte: float) -> str:
    return f"{1e-9 / s_per_byte:.3g} GB/s" if s_per_byte > 0 else "inf"


def _toml_str(s: str) -> str:
    return json.dumps(s)


def _quality(f: Fit) -> str:
    return f"R^2 = {f.r2:.4f}, max relative residual {100 * f.max_rel:.1f}%, rms {100 * f.rms_rel:.1f}%"


def _sources(r: dict) -> dict:
    pp_sizes = sorted(r["pingpong"])
    n = f"{r['reps']} samples per size (median; warm-up iterations untimed)"
    line, pw, lg = r["hockney"]["line"], r["hockney"]["piecewise"], r["loggp"]
    sweep = f"{len(r['coarse_sizes'])} sizes {r['coarse_sizes'][0]}..{r['coarse_sizes'][-1]} B"
    gsz = sorted(r["gap"])
    osz = sorted(r["o_send"])
    common = f"; {r['mpi']}, P={r['ranks']}, ranks 0 and 1, {r['host']}, {r['date']}"
    out = {
        "alpha": f"intercept of a least-squares line on relative error through the one-way ping-pong times "
                 f"(half the MPI_Send/MPI_Recv round trip), {sweep}, {n}; {_quality(line)}{common}",
        "beta": "slope of the same line as alpha" + common,
        "eager": (f"breakpoint of a two-line fit of the ping-pong times over {len(pp_sizes)} sizes (F = "
                  f"{pw.f_stat:.0f}{', ' + str(pw.trimmed) + ' outliers left out' if pw.trimmed else ''}): the last size on the small-message line; next measured size {pw.next_bytes:g} B"
                  if pw else "no breakpoint found in the ping-pong times; LogGOPSim's default") + common,
        **({"rndv": f"the jump of the one-way ping-pong time at the breakpoint: the large-message line minus the "
                    f"small-message line at {pw.next_bytes:g} B ({fmt_time(pw.high(pw.next_bytes))} - "
                    f"{fmt_time(pw.low(pw.next_bytes))}), the synchronisation of a rendezvous message (LogGPS, Ino, "
                    f"Fujimoto, Hagihara 2001; docs/models.md){common}"} if rendezvous(r) else {}),
        "o": f"mean of the time inside MPI_Send ({fmt_time(lg['o_send'])}) and inside MPI_Recv of an arrived message "
             f"({fmt_time(lg['o_recv'])}) at {osz[0]} B, {n} (Kielmann, Bal, Verstoep 2000){common}",
        "O": f"(one-way slope {fmt_per_byte(lg['oneway_slope'])} of the ping-pong above the breakpoint - G) / 2: the "
             f"per-byte time of a single message that does not hold the port in a burst (the direct measurement, the "
             f"slope of the send/receive overhead over {len(osz)} eager sizes {osz[0]}..{osz[-1]} B, is "
             f"{fmt_per_byte(lg['O_direct'])}, in [calibration])" + common,
        "L": f"one-way time of a 0-byte message minus 2o (Hoefler, Lichei, Rehm 2007)"
             + (f" -- measured {fmt_time(lg['L'])}, below one clock read, so set to the clock read time: the "
                "overheads cover the whole transfer" if lg["L_clamped"] else "") + common,
        "g": f"gap of the smallest size {gsz[0]} B: (T(burst of n) - T(burst of 1)) / (n - 1), n = "
             f"{r['burst_count'][gsz[0]]} back-to-back MPI_Send (Kielmann et al. 2000){common}",
        "G": f"slope of the gap g(m) over {lg['G_fit'].n} sizes {lg['G_fit'].x_min:g}..{lg['G_fit'].x_max:g} B "
             f"(Hoefler et al. 2007); {_quality(lg['G_fit'])}{common}",
        **{f"{name}_call": f"median time of one {what} of {min(r[name])} B, all ranks at once: the cost of a call, "
                            f"which every {name} op pays on top of its bytes (docs/models.md){common}"
           for name, what in (("reduce", "MPI_Reduce_local (double, sum)"), ("copy", "memmove"))
           if r["calls"][name]},
        "gamma": f"slope of MPI_Reduce_local(MPI_DOUBLE, MPI_SUM) time (what the executor calls) over "
                 f"{r['gamma'].n} sizes {r['gamma'].x_min:g}..{r['gamma'].x_max:g} B, all ranks at once; "
                 f"{_quality(r['gamma'])}{common}",
        "rho": f"slope of memmove time (the executor's copy) over {r['rho'].n} sizes {r['rho'].x_min:g}.."
               f"{r['rho'].x_max:g} B, all ranks at once; {_quality(r['rho'])}{common}",
        "cpu": "1: o is CPU time (measured inside MPI_Send and MPI_Recv), so the overheads of a rank's messages take "
               "turns on its CPU with each other and its local work, as in LogGOPSim (docs/models.md)",
        "topology": "one node per rank, every pair one hop apart (full:P); ranks share one host's memory",
        **_host_sources(r, common),
        "command": f"mpirun -n {r['ranks']} collplan calibrate" + (" --quick" if r["quick"] else ""),
    }
    return out


def _host_sources(r: dict, common: str) -> dict:
    hc = r.get("host_channel")
    if not hc:
        return {}
    if hc["beta"] is None:
        return {"host_beta": f"not written: {hc['ranks']} rank(s) on the host, one pair measured ({_fmt_bw(hc['pair_rate'])}); "
                             "run calibrate with the ranks of a whole host" + common}
    sizes = sorted(hc["streams"])
    return {"host_beta": f"1 / the most bytes per second the {hc['ranks']} ranks of rank 0's host moved together: k pairs "
                         f"(i, {hc['ranks'] // 2} + i) exchanging {r['stream_count'].get(hc['at_bytes'], '?')} messages "
                         f"each way at once (MPI_Isend/MPI_Irecv/MPI_Waitall), k = 1..{hc['pairs']}, at "
                         f"{', '.join(format_bytes(m) for m in sizes)}: {_fmt_bw(hc['rate_max'])} at {hc['at_pairs']} pairs of "
                         f"{format_bytes(hc['at_bytes'])} (one pair: {_fmt_bw(hc['pair_rate'])}); the max-rate model, Gropp, "
                         f"Olson, Samfass, EuroMPI 2016; docs/models.md{common}",
            "host_ranks": f"the ranks on rank 0's host (MPI_Comm_split_type SHARED): {hc['ranks']}, on {hc['hosts']} "
                          f"host(s); consecutive ranks per host assumed{common}"}


def _fmt_bw(rate: float) -> str:
    return f"{rate / 1e9:.3g} GB/s"


def _call(r: dict, name: str) -> float:
    """The time of one local call ('reduce' or 'copy'): measured at the smallest size where calibrate timed one
    (without a size below 1 KiB: the intercept of the per-byte line)."""
    t = r["calls"][name]
    return t if t is not None else r["gamma" if name == "reduce" else "rho"].a


def _model_table(r: dict, kind: str) -> dict:
    lg = r["loggp"]
    common = {"gamma": fmt_per_byte(r["gamma"].b), "rho": fmt_per_byte(r["rho"].b)}
    for name in ("reduce", "copy"):
        if r["calls"][name]:
            common[f"{name}_call"] = fmt_time(r["calls"][name])
    hc = r.get("host_channel")
    if hc and hc["beta"] is not None:
        common.update(host_beta=fmt_per_byte(hc["beta"]), host_ranks=str(hc["ranks"]))
    if kind == "hockney":
        return {"kind": "hockney", "alpha": fmt_time(r["hockney"]["alpha"]),
                "beta": fmt_per_byte(r["hockney"]["beta"]), **common}
    if kind == "loggp":  # LogGP's o and L are a small message's: a rendezvous message pays the jump on top
        rv = rendezvous(r)
        rndv = {"eager": f"{int(rv.eager_bytes)}B", "rndv": fmt_time(rv.jump())} if rv else {}
        return {"kind": "loggp", **_loggp_keys(lg), "cpu": "1", **rndv, **common}
    raise CollplanError(f"model kind '{kind}' is unknown (allowed: hockney, loggp)")


def loggp_L(p: dict) -> float:
    """L as written: the measured T(0) - 2o, at least p["L_floor"] (one clock read) when that is set."""
    return max(p["L"], p.get("L_floor", 0.0))


def _loggp_keys(lg: dict) -> dict:
    keys = {"L": fmt_time(loggp_L(lg)), "o": fmt_time(lg["o"]), "g": fmt_time(lg["g"]), "G": fmt_per_byte(lg["G"])}
    if lg["O"] > 0:  # 0 is the model's default and not a valid [network] value
        keys["O"] = fmt_per_byte(lg["O"])
    return keys


def _network_table(r: dict) -> dict:
    lg, pw = r["loggp"], r["hockney"]["piecewise"]
    net = _loggp_keys(lg)
    if pw:
        net["eager"] = f"{int(pw.eager_bytes)}B"
    return net


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v) if math.isfinite(v) else _toml_str(str(v))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return _toml_str(str(v))


def _table(name: str, d: dict) -> list[str]:
    return [f"[{name}]"] + [f"{k} = {_toml_value(v)}" for k, v in d.items()] + [""]


def _calibration_table(r: dict) -> dict:
    pp = r["pingpong"]
    xs = sorted(pp)
    line, pw, lg = r["hockney"]["line"], r["hockney"]["piecewise"], r["loggp"]
    t = {"ranks": r["ranks"], "mpi": r["mpi"], "host": r["host"], "date": r["date"], "reps": r["reps"],
         "quick": r["quick"], "elapsed_s": round(r["elapsed_s"], 3),
         "hockney_r2": line.r2, "hockney_max_rel": line.max_rel, "hockney_rms_rel": line.rms_rel}
    if pw:
        t.update(piecewise_eager_bytes=pw.eager_bytes, piecewise_next_bytes=pw.next_bytes, piecewise_f=pw.f_stat,
                 piecewise_max_rel=pw.max_rel, piecewise_trimmed=pw.trimmed, eager_alpha_s=pw.low.a, eager_beta_s_per_byte=pw.low.b,
                 rendezvous_alpha_s=pw.high.a, rendezvous_beta_s_per_byte=pw.high.b)
    t.update(O_direct_s_per_byte=lg["O_direct"], oneway_slope_s_per_byte=lg["oneway_slope"],
             loadavg_before=r.get("loadavg_before", [0.0]), loadavg_after=r.get("loadavg_after", [0.0]),
             o_send_s=lg["o_send"], o_recv_s=lg["o_recv"], L_measured_s=lg["L"], G_r2=lg["G_fit"].r2,
             G_max_rel=lg["G_fit"].max_rel, gamma_r2=r["gamma"].r2, gamma_max_rel=r["gamma"].max_rel,
             reduce_call_s=_call(r, "reduce"), rho_r2=r["rho"].r2, rho_max_rel=r["rho"].max_rel,
             copy_call_s=_call(r, "copy"),
             barrier_median_s=r["barrier"]["median"], clock_read_s=r["timer"]["median"],
             pingpong_spread_median=r["spread_median"], pingpong_spread_worst=r["spread_worst"][0],
             pingpong_sizes_bytes=xs, pingpong_oneway_median_s=[pp[m]["median"] for m in xs],
             pingpong_oneway_q1_s=[pp[m]["q1"] for m in xs], pingpong_oneway_q3_s=[pp[m]["q3"] for m in xs],
             gap_sizes_bytes=sorted(r["gap"]), gap_s=[r["gap"][m] for m in sorted(r["gap"])],
             burst_count=[r["burst_count"][m] for m in sorted(r["gap"])],
             overhead_sizes_bytes=sorted(r["o_send"]), o_send_median_s=[r["o_send"][m] for m in sorted(r["o_send"])],
             o_recv_median_s=[r["o_recv"][m] for m in sorted(r["o_recv"])],
             reduce_sizes_bytes=sorted(r["reduce"]), reduce_median_s=[r["reduce"][m] for m in sorted(r["reduce"])],
             copy_sizes_bytes=sorted(r["copy"]), copy_median_s=[r["copy"][m] for m in sorted(r["copy"])])
    hc = r.get("host_channel")
    if hc:
        sizes = sorted(hc["streams"])
        t.update(host_ranks=hc["ranks"], hosts=hc["hosts"], stream_sizes_bytes=sizes,
                 stream_pairs=sorted(hc["streams"][sizes[-1]]),
                 stream_B_per_s=[[hc["streams"][m][k] for k in sorted(hc["streams"][m])] for m in sizes],
                 reduce_busy_ranks=list(hc["reduce_busy"]),
                 reduce_busy_s_per_byte=list(hc["reduce_busy"].values()))
    return t


def machine_toml(r: dict, kind: str, name: str) -> str:
    """The machine file (docs/calibration.md): [model] of the chosen kind, [network] for the loggp simulator,
    [sources] saying how each constant was measured, [calibration] with the fit statistics and raw medians."""
    desc = f"this machine ({r['host']}) calibrated with {r['mpi']}, P={r['ranks']}"
    lines = [f"# Calibrated by `collplan calibrate` on {r['host']} at {r['date']} with {r['mpi']}, P={r['ranks']}.",
             "# [model] and [network] are the fitted constants; [sources] says how each was measured;",
             "# [calibration] keeps the fit statistics and the measured medians (seconds, bytes). docs/calibration.md",
             f"name = {_toml_str(name)}",
             f"description = {_toml_str(desc)}",
             f"topology = \"full:{r['ranks']}\"", ""]
    lines += _table("model", _model_table(r, kind))
    lines += _table("network", _network_table(r))
    lines += _table("sources", _sources(r))
    lines += _table("calibration", _calibration_table(r))
    return "\n".join(lines)


def check_machine_text(text: str, where: str) -> None:
    """Raise CollplanError unless text is a machine file load_machine accepts (checked before writing it)."""
    import tomllib

    from . import _core
    from .machines import _model_spec, _network_spec
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CollplanError(f"calibrate produced an invalid machine file for {where}: {e}") from None
    _model_spec(data["model"], where)
    _network_spec(data.get("network"), where)
    _core.Topology.parse(data["topology"])


# ------------------------------------------------------------------------------------------------ report
def _pct(x: float) -> str:
    return f"{100 * x:+.1f}%"


def _host_report(r: dict) -> list[str]:
    hc = r.get("host_channel")
    if not hc:
        return []
    big = max(hc["streams"])
    rates = ", ".join(f"{k}: {hc['streams'][big][k] / 1e9:.3g}" for k in sorted(hc["streams"][big]))
    busy = ", ".join(f"{k}: {fmt_per_byte(v)}" for k, v in hc["reduce_busy"].items())
    head = (f"host      host_beta = {fmt_per_byte(hc['beta'])} ({_fmt_bw(hc['rate_max'])} at {hc['at_pairs']} pairs of "
            f"{format_bytes(hc['at_bytes'])}), host_ranks = {hc['ranks']}" if hc["beta"] is not None else
            f"host      not measured: {hc['ranks']} rank(s) on the host, one pair (run calibrate with a whole host's ranks)")
    return [head, f"          k pairs exchanging {format_bytes(big)} (GB/s): {rates}",
            f"          MPI_Reduce_local with k ranks busy (s/B): {busy}"]


def report_text(r: dict, kind: str, sizes_shown: int = 8) -> str:
    """The human-readable report: fitted values, fit quality, measured vs predicted one-way times."""
    h, lg, pw, line = r["hockney"], r["loggp"], r["hockney"]["piecewise"], r["hockney"]["line"]
    out = [f"# collplan calibrate: {r['mpi']}, P={r['ranks']}, {r['host']}, {r['date']} "
           f"({r['elapsed_s']:.0f} s, {r['reps']} samples per size{', quick' if r['quick'] else ''})",
           f"hockney   alpha = {fmt_time(h['alpha'])}, beta = {fmt_per_byte(h['beta'])} ({_fmt_rate(h['beta'])})",
           f"          fit over {line.n} sizes: {_quality(line)}"]
    if pw:
        out.append(f"breakpoint  eager <= {pw.eager_bytes:g} B (next measured size {pw.next_bytes:g} B, F = "
                   f"{pw.f_stat:.0f}{f', {pw.trimmed} outliers left out' if pw.trimmed else ''}): below alpha = {fmt_time(pw.low.a)}, beta = {fmt_per_byte(pw.low.b)}; above "
                   f"alpha = {fmt_time(pw.high.a)}, beta = {fmt_per_byte(pw.high.b)}; two lines: max relative "
                   f"residual {100 * pw.max_rel:.1f}%; "
                   + (f"jump at {pw.next_bytes:g} B (rndv) {fmt_time(pw.jump())}" if rendezvous(r) else
                      "no jump at the switch (no rndv)"))
    else:
        out.append("breakpoint  none found (one line fits as well as two)")
    out += [f"loggp     L = {fmt_time(loggp_L(lg))}{' (measured ' + fmt_time(lg['L']) + ', kept at one clock read)' if lg['L_clamped'] else ''}, "
            f"o = {fmt_time(lg['o'])} (send {fmt_time(lg['o_send'])}, recv {fmt_time(lg['o_recv'])}), "
            f"g = {fmt_time(lg['g'])}, G = {fmt_per_byte(lg['G'])} ({_fmt_rate(lg['G'])}), "
            f"O = {fmt_per_byte(max(lg['O'], 0))} (direct: {fmt_per_byte(lg['O_direct'])})",
            f"          G fit: {_quality(lg['G_fit'])}",
            f"local     gamma = {fmt_per_byte(r['gamma'].b)} (MPI_Reduce_local, double sum; {_quality(r['gamma'])})"
            + (f"; {fmt_time(r['calls']['reduce'])} per call" if r["calls"]["reduce"] else ""),
            f"          rho = {fmt_per_byte(r['rho'].b)} (memmove; {_quality(r['rho'])})",
            *_host_report(r),
            f"barrier   MPI_Barrier {fmt_time(r['barrier']['median'])} (median; not in the model: the executor's "
            f"barrier is a dissemination of 0-byte messages)",
            f"noise     ping-pong spread (IQR / median): median {100 * r['spread_median']:.1f}%, worst "
            f"{100 * r['spread_worst'][0]:.1f}% at {r['spread_worst'][1]:g} B; one clock read "
            f"{fmt_time(r['timer']['median'])}; load average before/after "
            f"{r.get('loadavg_before', [0])[0]:.2f}/{r.get('loadavg_after', [0])[0]:.2f} on {r.get('cpus', '?')} CPUs",
            f"[model] kind: {kind}" + (f"; written to {r['out']}" if r.get("out") else ""),
            "",
            "#     size   measured  hockney   err   2-lines   err     loggp   err"]
    xs = [m for m in sorted(r["pingpong"]) if m in set(r["coarse_sizes"])]
    step = max(1, math.ceil(len(xs) / sizes_shown))
    shown = sorted(set(xs[::step]) | {xs[-1]})
    for m in shown:
        t = r["pingpong"][m]["median"]
        hk = h["alpha"] + h["beta"] * m
        two = pw(m) if pw else hk
        lgp = model_oneway(r, "loggp", m)
        out.append(f"{format_bytes(m):>10s} {fmt_time(t):>10s} {fmt_time(hk):>8s} {_pct(hk / t - 1):>6s} {fmt_time(two):>9s} "
                   f"{_pct(two / t - 1):>6s} {fmt_time(lgp):>9s} {_pct(lgp / t - 1):>6s}")
    return "\n".join(out)
