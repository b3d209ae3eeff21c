"""`collplan calibrate`: the fitting on synthetic data with noise (collplan.calibrate), the machine file it
writes, and the command itself under mpirun -n 2 for both MPIs in --quick mode."""
from __future__ import annotations

import json
import math
import random
import sys
import tomllib

import pytest

from collplan import _core
from collplan import calibrate as cal
from collplan._core import CollplanError
from collplan.machines import load_machine

SIZES = [0] + [2 ** k for k in range(23)]  # 0, 1 B .. 4 MiB


def noisy(t: float, rng: random.Random, rel: float) -> float:
    return t * (1 + rng.uniform(-rel, rel))


# --------------------------------------------------------------------------------------------- statistics
def test_summarize_is_robust():
    s = cal.summarize([1.0, 2.0, 3.0, 4.0, 1000.0])
    assert s["median"] == 3.0 and s["q1"] == 2.0 and s["q3"] == 4.0 and s["min"] == 1.0 and s["n"] == 5
    assert s["spread"] == pytest.approx(2.0 / 3.0)


@pytest.mark.parametrize("bad,msg", [([], "no samples"), ([1.0, float("nan")], "nan"), ([1.0, -1.0], "-1.0")])
def test_summarize_refuses_bad_samples(bad, msg):
    with pytest.raises(CollplanError, match=msg):
        cal.summarize(bad)


# --------------------------------------------------------------------------------------------- line fits
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fit_line_recovers_alpha_beta_with_noise(seed):
    """5% uniform multiplicative noise: alpha and beta within 5% (the relative weights keep alpha exact even
    though the largest times are 10^4 times the smallest)."""
    rng = random.Random(seed)
    alpha, beta = 1.5e-6, 0.2e-9
    f = cal.fit_line(SIZES, [noisy(alpha + beta * m, rng, 0.05) for m in SIZES])
    assert f.a == pytest.approx(alpha, rel=0.05) and f.b == pytest.approx(beta, rel=0.05)
    assert f.r2 > 0.99 and f.max_rel < 0.10 and f.n == len(SIZES)


def test_fit_line_exact_and_constrained():
    f = cal.fit_line([0, 100, 200], [1.0, 2.0, 3.0])
    assert f.a == pytest.approx(1.0) and f.b == pytest.approx(0.01) and f.max_rel < 1e-12 and f.r2 == pytest.approx(1)
    flat = cal.fit_line([10, 20, 30], [3.0, 2.9, 2.8])  # decreasing: no negative slope
    assert flat.b == 0 and 2.8 < flat.a < 3.0
    origin = cal.fit_line([10, 20, 30], [0.5, 2.0, 3.5])  # would have a negative intercept
    assert origin.a == 0 and origin.b > 0


@pytest.mark.parametrize("x,y,msg", [([1, 2], [1.0], "2 sizes but 1 times"), ([1], [1.0], "too few"),
                                     ([1, 2], [1.0, 0.0], "time 0.0"), ([1, 2], [1.0, math.inf], "time inf"),
                                     ([-1, 2], [1.0, 1.0], "size -1"), ([5, 5], [1.0, 2.0], "all points have")])
def test_fit_line_fails_cleanly(x, y, msg):
    with pytest.raises(CollplanError, match=msg):
        cal.fit_line(x, y)


# --------------------------------------------------------------------------------------------- breakpoint
def eager_rendezvous(m: float) -> float:
    return 0.4e-6 + 0.15e-9 * m if m <= 8192 else 2.5e-6 + 0.08e-9 * m


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_piecewise_finds_the_breakpoint(seed):
    """A protocol switch after 8 KiB (a jump and a new slope), 3% noise: the split is exactly between 8 and
    16 KiB, both lines within 10% (intercepts) and 5% (the large-message slope)."""
    rng = random.Random(seed)
    pw = cal.fit_piecewise(SIZES, [noisy(eager_rendezvous(m), rng, 0.03) for m in SIZES])
    assert pw is not None and pw.eager_bytes == 8192 and pw.next_bytes == 16384
    assert pw.low.a == pytest.approx(0.4e-6, rel=0.10) and pw.high.a == pytest.approx(2.5e-6, rel=0.10)
    assert pw.high.b == pytest.approx(0.08e-9, rel=0.05)
    assert pw.max_rel < 0.06 and pw.f_stat >= cal.F_CRITICAL


def test_piecewise_survives_outliers():
    """Two sizes spoilt by other load (5x and 3x their time) hide the switch from the F test on all points; the
    repeat without the n/10 worst points finds it."""
    rng = random.Random(11)
    y = [noisy(eager_rendezvous(m), rng, 0.03) for m in SIZES]
    y[-1] *= 5
    y[-3] *= 3
    pw = cal.fit_piecewise(SIZES, y)
    assert pw is not None and pw.eager_bytes == 8192 and pw.trimmed == 2
    assert pw.high.b == pytest.approx(0.08e-9, rel=0.05)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_piecewise_declines_a_single_line(seed):
    rng = random.Random(seed)
    assert cal.fit_piecewise(SIZES, [noisy(1e-6 + 0.1e-9 * m, rng, 0.03) for m in SIZES]) is None


def test_piecewise_places_a_switch_the_lines_fit_poorly():
    """Open MPI's shared-memory switch on a 16-core node (bench/planner/node16/calibrate_openmpi_P16.toml, the
    one-way medians in us at SIZES): 1.20 us at 2 KiB, 2.75 us at 4 KiB. Two lines fit 0 B-4 MiB so loosely
    that the least-squares split lands at 8-16 KiB; the step where the time grows faster than the size is the
    switch."""
    us = [0.315, 0.411, 0.408, 0.411, 0.41, 0.498, 0.504, 0.616, 0.557, 0.636, 0.785, 0.914, 1.203, 2.748, 3.699,
          5.339, 8.276, 14.096, 18.547, 34.658, 66.387, 131.005, 253.283, 470.051]
    pw = cal.fit_piecewise(SIZES, [t * 1e-6 for t in us])
    assert pw is not None and (pw.eager_bytes, pw.next_bytes) == (2048, 4096) and pw.f_stat >= cal.F_CRITICAL


def test_piecewise_switch_needs_the_time_to_stay_up():
    """One slow size (3x) in the latency range is an outlier, not a protocol switch: no split is placed at it."""
    y = [1e-6 + 0.1e-9 * m for m in SIZES]
    y[10] *= 3  # 512 B
    assert cal._switch(SIZES, y, 3) is None
    y[11] *= 3  # and every size from 512 B on: now it is a switch, after 256 B
    for i in range(12, len(y)):
        y[i] *= 3
    assert cal._switch(SIZES, y, 3) == 10


def test_piecewise_needs_enough_points():
    with pytest.raises(CollplanError, match="too few"):
        cal.fit_piecewise([1, 2, 3, 4], [1.0, 1.0, 2.0, 2.0])


# --------------------------------------------------------------------------------------------- loggp
def test_loggp_recovers_known_parameters():
    """o_s = 0.2 us, o_r = 0.3 us, per-byte overhead 0.05 ns/B; L = 0.4 us; g(m) = 0.25 us + m 0.1 ns/B: the fit
    gives o = 0.25 us, L = T(0) - 2o, g, G, O within 3% under 2% noise."""
    rng = random.Random(7)
    o_s, o_r, O, L, g, G = 0.2e-6, 0.3e-6, 0.05e-9, 0.4e-6, 0.25e-6, 0.1e-9
    osz = [0, 64, 256, 1024, 4096]
    o_send = {m: noisy(o_s + O * m, rng, 0.02) for m in osz}
    o_recv = {m: noisy(o_r + O * m, rng, 0.02) for m in osz}
    o_recv[0], o_send[0] = o_r, o_s
    gsz = [2 ** k for k in range(23)]
    n = 32
    one = [o_s + L + o_r + G * m + 0.9e-6 for m in gsz]          # one message + the ack
    many = [t + (n - 1) * (g + G * m) for t, m in zip(one, gsz)]
    gap = cal.gap_per_message(gsz, [noisy(t, rng, 0.002) for t in many], one, n)
    p = cal.fit_loggp(o_s + L + o_r, o_send, o_recv, gsz, gap, eager_bytes=8192)
    assert p["o"] == pytest.approx(0.25e-6) and p["L"] == pytest.approx(L) and not p["L_clamped"]
    assert p["g"] == pytest.approx(g + G, rel=0.03) and p["G"] == pytest.approx(G, rel=0.03)
    assert p["O_direct"] == pytest.approx(O, rel=0.2) and p["O"] == 0
    assert p["G_fit"].x_min > 8192
    assert cal.loggp_oneway(p, 1) == pytest.approx(2 * p["o"] + L)
    # a one-way slope of 2 G + 2 O' (two copies in series, overlapped in a burst): O' = (slope - G) / 2
    q = cal.split_per_byte(p, 0.3e-9)
    assert q["O"] == pytest.approx((0.3e-9 - p["G"]) / 2)
    m = 1 << 20
    assert cal.loggp_oneway(q, m) - cal.loggp_oneway(q, 0) == pytest.approx(0.3e-9 * m, rel=1e-3)
    assert cal.split_per_byte(p, 0.5 * p["G"])["O"] == 0


def test_loggp_fails_cleanly():
    with pytest.raises(CollplanError, match="overhead samples"):
        cal.fit_loggp(1e-6, {}, {}, [1, 2, 3], [1e-6] * 3)
    with pytest.raises(CollplanError, match="burst count 1"):
        cal.gap_per_message([8], [1e-6], [1e-6], 1)


# --------------------------------------------------------------------------------------------- machine file
def synthetic_run(seed: int = 3, tamper=None) -> dict:
    """Raw samples as commands/calibrate.py collects them, from eager_rendezvous() and known local costs (tamper:
    a function that changes them before the fit)."""
    rng = random.Random(seed)
    reps = 9
    samples = lambda t: [noisy(t, rng, 0.03) for _ in range(reps)]  # noqa: E731
    data = {"pingpong": {m: samples(eager_rendezvous(m)) for m in SIZES}, "burst1": {}, "burstn": {},
            "burst_count": {}, "o_send": {}, "o_recv": {}, "reduce": {}, "copy": {}}
    for m in SIZES[1:]:
        n = max(4, min(64, (16 << 20) // m))
        data["burst1"][m] = samples(2 * eager_rendezvous(m))
        data["burstn"][m] = [t + (n - 1) * (0.2e-6 + 0.09e-9 * m) for t in data["burst1"][m]]
        data["burst_count"][m] = n
    for m in [0, 4, 64, 1024, 8192]:
        data["o_send"][m], data["o_recv"][m] = samples(0.1e-6 + 0.02e-9 * m), samples(0.15e-6 + 0.02e-9 * m)
    for m in [1024, 16384, 262144, 4 << 20]:
        data["reduce"][m], data["copy"][m] = samples(50e-9 + 0.3e-9 * m), samples(20e-9 + 0.1e-9 * m)
    data["barrier"], data["timer"] = samples(1e-6), samples(20e-9)
    if tamper:
        tamper(data)
    return cal.build(data, SIZES, 2, "Synthetic MPI 1.0", "mpich", reps, False, host="testhost",
                     date="2026-01-01T00:00:00+00:00", elapsed_s=1.0)


@pytest.mark.parametrize("kind", ["hockney", "loggp"])
def test_machine_file_loads_and_estimates(tmp_path, kind):
    r = synthetic_run()
    text = cal.machine_toml(r, kind, "synthetic")
    cal.check_machine_text(text, "synthetic")
    path = tmp_path / "m.toml"
    path.write_text(text)
    m = load_machine(str(path))
    assert m.model.startswith(kind + ":") and m.topology == "full:2" and "Synthetic MPI 1.0, P=2" in m.description
    assert "L=" in m.network and "eager=8192B" in m.network
    data = tomllib.loads(text)
    assert data["calibration"]["piecewise_eager_bytes"] == 8192
    assert len(data["calibration"]["pingpong_oneway_median_s"]) == len(SIZES)
    for key in ("alpha", "beta", "gamma", "rho", "L", "o", "g", "G", "O", "eager"):
        assert "Synthetic MPI 1.0" in data["sources"][key] and "testhost" in data["sources"][key]
    # the rho fit: 0.1 ns/B, gamma 0.3 ns/B within 5%
    assert r["rho"].b == pytest.approx(0.1e-9, rel=0.05) and r["gamma"].b == pytest.approx(0.3e-9, rel=0.05)
    from collplan.api import estimate, schedule
    rows = estimate(schedule("allgather/ring", ranks=2), [8, 1 << 20], machine=str(path))
    assert all(0 < row.time_s < 1 for row in rows)
    report = cal.report_text(r, kind)
    assert "R^2 =" in report and "eager <= 8192 B" in report and "measured" in report


@pytest.mark.parametrize("kind", ["hockney", "loggp"])
def test_a_good_fit_passes_the_residual_check(kind):
    cal.check_fit(synthetic_run(), kind)


def _busy_overheads(data):  # the send/recv overhead kernel ran while the machine was busy: o = 8 ms
    for m in data["o_send"]:
        data["o_send"][m] = [8e-3] * len(data["o_send"][m])
        data["o_recv"][m] = [8e-3] * len(data["o_recv"][m])


def _flat_bursts(data):  # bursts measured under load: no gap grows with the size, G = 0
    for m in data["burstn"]:
        data["burstn"][m] = list(data["burst1"][m])


@pytest.mark.parametrize("tamper,kind,needle", [
    (_busy_overheads, "loggp", "worst residual is +"),
    (_flat_bursts, "loggp", "G = 0 s/B although the one-way time grows"),
])
def test_a_fit_its_residuals_call_wrong_is_refused(tamper, kind, needle):
    r = synthetic_run(tamper=tamper)
    r.update(loadavg_before=[3.5], cpus=2)
    with pytest.raises(CollplanError) as e:
        cal.check_fit(r, kind)
    msg = str(e.value)
    assert "fit is unreliable" in msg and needle in msg, msg
    assert "load average 3.5 on 2 CPUs" in msg and "run again on an idle machine" in msg and "\n" not in msg
    cal.check_fit(r, "hockney")  # the ping-pong itself was fine: the other model stands


def test_check_machine_text_refuses_a_bad_file():
    text = cal.machine_toml(synthetic_run(), "hockney", "x").replace('kind = "hockney"', 'kind = "nope"')
    with pytest.raises(CollplanError):
        cal.check_machine_text(text, "x")


def test_formats_parse_back():
    for s in (0.5e-9, 1.25e-6, 3.5e-3, 2.0):
        assert _core.parse_time(cal.fmt_time(s)) == pytest.approx(s, rel=1e-5)
    spec = _core.check_model(f"hockney:alpha={cal.fmt_time(1e-6)},beta={cal.fmt_per_byte(12.5e-12)}")
    assert spec.startswith("hockney:")


# --------------------------------------------------------------------------------------------- under MPI
@pytest.mark.parametrize("abi", ["openmpi", "mpich"])
def test_calibrate_quick_under_mpirun(abi, tmp_path):
    from test_mpi import mpirun
    out = tmp_path / f"{abi}.toml"
    r = mpirun(abi, 2, [sys.executable, "-m", "collplan", "calibrate", "--quick", "--out", str(out),
                        "--max-size", "256KiB", "--model", "loggp"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "R^2 =" in r.stdout and "max relative residual" in r.stdout and "measured" in r.stdout, r.stdout
    assert "calibrate [" in r.stderr  # progress on stderr
    m = load_machine(str(out))
    assert m.model.startswith("loggp:") and m.topology == "full:2"
    assert ("Open MPI" in m.description) == (abi == "openmpi")
    data = tomllib.loads(out.read_text())
    cal_table = data["calibration"]
    assert 0 <= cal_table["hockney_r2"] <= 1 and cal_table["hockney_max_rel"] >= 0
    values = [_core.parse_time(v) for k, v in data["model"].items() if k in ("L", "o", "g")]
    values += [_core.parse_time(v[:-2]) for k, v in data["model"].items() if k in ("G", "gamma", "rho")]
    values += [_core.parse_time(data["network"]["o"])]
    assert all(math.isfinite(v) and v > 0 for v in values), data["model"]
    assert all(t > 0 for t in cal_table["pingpong_oneway_median_s"])


def test_calibrate_measures_the_host_channel_under_mpirun(tmp_path):
    """P = 4 on one host: two pairs exchange at once, so host_beta (1 / the most the host moved) and host_ranks go
    into [model] with their source, cpu = 1 with them, and the report shows the rate per number of pairs."""
    from test_mpi import mpirun
    out = tmp_path / "host.toml"
    r = mpirun("openmpi", 4, [sys.executable, "-m", "collplan", "calibrate", "--quick", "--out", str(out),
                              "--max-size", "1MiB"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "k pairs exchanging 1MiB (GB/s): 1: " in r.stdout and ", 2: " in r.stdout, r.stdout
    data = tomllib.loads(out.read_text())
    model, cal_table = data["model"], data["calibration"]
    assert model["host_ranks"] == "4" and model["cpu"] == "1", model
    rates = cal_table["stream_B_per_s"][-1]
    assert cal_table["stream_pairs"] == [1, 2] and len(rates) == 2 and all(x > 0 for x in rates)
    assert _core.parse_time(model["host_beta"][:-2]) == pytest.approx(1 / max(max(x) for x in cal_table["stream_B_per_s"]),
                                                                       rel=1e-6)
    assert "max-rate model" in data["sources"]["host_beta"]
    assert "host_beta=" in load_machine(str(out)).model


def test_the_host_channel_fit():
    """fit_host: the most bytes per second over sizes and pairs; one pair alone writes no host_beta (it cannot say
    what several pairs share); a rate that is not finite and positive is refused."""
    streams = {65536: {1: 10e9, 2: 18e9, 3: 21e9, 4: 20e9}, 1 << 20: {1: 9e9, 2: 16e9, 3: 19e9, 4: 19.5e9}}
    h = cal.fit_host(streams, {1: 80e-12, 8: 95e-12}, 8, 1)
    assert h["beta"] == pytest.approx(1 / 21e9) and (h["at_bytes"], h["at_pairs"], h["pairs"]) == (65536, 3, 4)
    assert h["pair_rate"] == 9e9  # one pair at the largest size
    r = synthetic_run(tamper=lambda d: d.update(streams=streams, reduce_busy={1: 80e-12, 8: 95e-12}, host_ranks=8))
    text = cal.machine_toml(r, "loggp", "synthetic")
    cal.check_machine_text(text, "synthetic")
    data = tomllib.loads(text)
    assert data["model"]["host_ranks"] == "8" and "21 GB/s at 3 pairs of 64KiB" in data["sources"]["host_beta"]
    one = cal.fit_host({1 << 20: {1: 9e9}}, {}, 2, 1)
    assert one["beta"] is None
    r1 = synthetic_run(tamper=lambda d: d.update(streams={1 << 20: {1: 9e9}}, host_ranks=2))
    data1 = tomllib.loads(cal.machine_toml(r1, "loggp", "synthetic"))
    assert "host_beta" not in data1["model"] and data1["sources"]["host_beta"].startswith("not written")
    with pytest.raises(CollplanError, match="host rate nan"):
        cal.fit_host({8: {1: float("nan")}}, {}, 2, 1)


def test_calibrate_json_and_one_rank(tmp_path):
    from test_mpi import mpirun
    r = mpirun("mpich", 2, [sys.executable, "-m", "collplan", "calibrate", "--quick", "--json", "--max-size", "64KiB"])
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(r.stdout)
    assert res["ranks"] == 2 and res["hockney"]["alpha"] > 0 and res["hockney"]["beta"] > 0
    one = mpirun("mpich", 1, [sys.executable, "-m", "collplan", "calibrate", "--quick", "--out", str(tmp_path / "x.toml")])
    assert one.returncode == 2 and "at least 2 ranks" in one.stderr and "Traceback" not in one.stderr
    assert not (tmp_path / "x.toml").exists()
