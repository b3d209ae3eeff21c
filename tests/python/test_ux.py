"""The user's first hour: tables within 100 columns, --csv beside --json, plots in the format of their
extension with the legend off the data, --version, help texts, progress when stderr is a pipe, --schedule -,
reproduce's required claims, run --format osu, and runtime.md's Python example under both MPIs."""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from collplan import cli, plot, reproduce
from collplan.api import estimate, schedule
from collplan.reproduce import Claim, Report

ROOT = Path(__file__).resolve().parents[2]
MODEL = "hockney:alpha=1us,beta=1ns/B"


def cp(*args, env=None, input=None, timeout=120) -> subprocess.CompletedProcess:
    full = {**os.environ, "COLUMNS": "100", **(env or {})}
    return subprocess.run([sys.executable, "-m", "collplan", *args], capture_output=True, text=True, env=full,
                          input=input, timeout=timeout)


# ------------------------------------------------------------------------------------------- widths
TABLES = [
    ["estimate", "--collective", "alltoall", "--algorithm", "all", "--machine", "ib-qdr"],
    ["estimate", "--collective", "allgather", "--algorithm", "all", "--machine", "ib-qdr", "--all-params"],
    ["estimate", "--collective", "allreduce", "--algorithm", "all", "--machine", "ib-qdr"],
    ["machines"], ["machines", "-v"], ["algorithms"],
    ["plan", "--collective", "allreduce", "--ranks", "64", "--machine", "ib-qdr"],
    ["tune", "--algorithm", "torgos", "--topology", "torus:16x16", "--r", "10", "--r", "100"],
    ["dissemination", "--ranks", "100"],
    ["simulate", "--collective", "alltoall", "--algorithm", "all", "--ranks", "16", "--machine", "ib-qdr",
     "--sizes", "1KiB,64KiB"],
    ["verify", "--all", "--collective", "barrier", "--max-ranks", "12"],
    ["reproduce", "dissemination-table1", "--quick"],
    ["reproduce", "gossip-paragon", "--quick"],
]


@pytest.mark.parametrize("args", TABLES, ids=lambda a: "-".join(a[:3]))
def test_tables_fit_100_columns(args, tmp_path):
    if args[0] == "reproduce":
        args = args + ["--out", str(tmp_path)]
    r = cp(*args)
    assert r.returncode == 0, r.stderr
    widest = max(r.stdout.splitlines(), key=len)
    assert len(widest) <= 100, widest


def test_estimate_puts_the_winners_time_by_its_name_and_the_bound_apart():
    """The lower bound right after "best" read as the winner's time: the winner's cell carries its time, the bound
    is the last column, and a table split into blocks repeats the size and the winner in every block."""
    base = ["estimate", "--collective", "alltoall", "--algorithm", "all", "--machine", "ib-qdr", "--sizes", "16B,1MiB"]
    wide = cp(*base, env={"COLUMNS": "400"}).stdout.splitlines()
    header = next(ln for ln in wide if ln.startswith("size"))
    assert header.split()[:2] == ["size", "best"] and header.rstrip().endswith("lower bound"), header
    row = next(ln for ln in wide if ln.lstrip().startswith("16B"))
    assert re.match(r"\s*16B\s+\S+.*?\d+(\.\d+)?(ns|us|ms) ", row), row
    narrow = cp(*base, env={"COLUMNS": "60"}).stdout.splitlines()
    blocks = [ln for ln in narrow if ln.startswith("size")]
    assert len(blocks) >= 2 and all(b.split()[:2] == ["size", "best"] for b in blocks), narrow


def test_estimate_shows_each_algorithms_best_parameters_and_all_params_every_set():
    base = ["estimate", "--collective", "alltoall", "--algorithm", "all", "--machine", "ib-qdr", "--sizes", "16B,1MiB"]
    best = cp(*base).stdout
    assert "bruck[k=" not in best.split("\n# (..)")[0].split("\n", 1)[1].replace("best", "")  # no column per k
    assert re.search(r"\d(us|ms) \(k=\d+\)", best) and "--all-params" in best
    every = cp(*base, "--all-params").stdout
    assert "bruck[k=2]" in every and "bruck[k=16]" in every


def test_wide_table_is_wrapped_into_blocks_repeating_the_size_column():
    r = cp("estimate", "--collective", "alltoall", "--algorithm", "all", "--machine", "ib-qdr", "--sizes", "16B,1MiB",
           "--all-params")
    headers = [ln for ln in r.stdout.splitlines() if ln.lstrip().startswith("size ")]
    assert len(headers) >= 2
    assert sum(ln.split()[0] == "1MiB" for ln in r.stdout.splitlines() if ln.split()) == len(headers)


# ------------------------------------------------------------------------------------------- --csv
CSV_JSON = [
    (["estimate", "--collective", "alltoall", "--algorithm", "all", "--ranks", "16", "--model", MODEL,
      "--sizes", "8,1KiB"], "results"),
    (["machines"], "machines"),
    (["algorithms", "--collective", "barrier"], "algorithms"),
    (["tune", "--algorithm", "circgos", "--topology", "ring:81", "--r", "1", "--r", "10"], "results"),
    (["simulate", "--collective", "allgather", "--algorithm", "ring", "--ranks", "8", "--model", MODEL,
      "--sizes", "1KiB,4KiB"], "results"),
    (["verify", "--all", "--collective", "barrier", "--max-ranks", "8"], "algorithms"),
    (["plan", "--collective", "allreduce", "--ranks", "16", "--machine", "ib-qdr"], "ranges"),
    (["dissemination", "--ranks", "20"], "candidates"),
    (["matrix", "stats", "testset1:P=16,d=3,seed=1"], None),
    (["verify", "--collective", "allgather", "--algorithm", "ring", "--ranks", "5"], None),
]


@pytest.mark.parametrize("args,key", CSV_JSON, ids=lambda a: "-".join(a[:2]) if isinstance(a, list) else str(a))
def test_csv_has_the_rows_of_json(args, key):
    j = cp(*args, "--json")
    c = cp(*args, "--csv")
    assert j.returncode == c.returncode and j.returncode in (0, 1), j.stderr + c.stderr
    doc = json.loads(j.stdout)
    records = doc[key] if key else [doc]
    rows = list(csv.DictReader(io.StringIO(c.stdout)))
    assert len(rows) == len(records) > 0
    first = next(iter(records[0]))  # the first field of each record, as text
    for row, rec in zip(rows, records):
        if not isinstance(rec[first], (dict, list)):
            assert row[first] == str(rec[first]) or float(row[first]) == pytest.approx(rec[first])


def test_json_and_csv_are_exclusive():
    r = cp("machines", "--json", "--csv")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--csv" in r.stderr


# ------------------------------------------------------------------------------------------- plots
MAGIC = {".png": b"\x89PNG", ".svg": (b"<?xml", b"<svg"), ".pdf": b"%PDF"}


@pytest.mark.parametrize("ext", [".png", ".svg", ".pdf"])
def test_plot_format_follows_the_extension(ext, tmp_path):
    out = tmp_path / f"a{ext}"
    r = cp("estimate", "--collective", "allgather", "--algorithm", "all", "--ranks", "8", "--model", MODEL,
           "--sizes", "8,1KiB", "--plot", str(out))
    assert r.returncode == 0, r.stderr
    magic = MAGIC[ext]
    assert out.read_bytes().startswith(magic if isinstance(magic, bytes) else magic)


def test_unknown_plot_extension_is_a_one_line_error_before_any_work(tmp_path):
    out = tmp_path / "a.jpg"
    r = cp("estimate", "--collective", "allgather", "--algorithm", "all", "--ranks", "8", "--model", MODEL,
           "--plot", str(out))
    assert r.returncode == 2 and not out.exists() and r.stdout == ""
    assert r.stderr.strip().count("\n") == 0 and ".png, .svg, .pdf" in r.stderr


def _figures(monkeypatch, draw):
    """The figures `draw` saves (save_figure intercepted: nothing written)."""
    figs = []

    def keep(fig, path):
        plot.check_plot_path(str(path))
        figs.append(fig)
    monkeypatch.setattr(plot, "save_figure", keep)
    import collplan.simplot as simplot
    monkeypatch.setattr(simplot, "save_figure", keep)
    draw()
    return figs


def _assert_legends_outside(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = [ax for ax in fig.axes if ax.get_legend() is not None]
    assert axes
    for ax in axes:
        lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
        assert len(lines) <= plot.MAX_LINES
        styles = [(ln.get_color(), ln.get_linestyle(), ln.get_marker()) for ln in lines]
        assert len(set(styles)) == len(styles)  # every line looks different
        leg = ax.get_legend().get_window_extent(renderer)
        for other in fig.axes:  # off the data of every panel
            box = other.get_window_extent(renderer)
            overlap_x = min(leg.x1, box.x1) - max(leg.x0, box.x0)
            overlap_y = min(leg.y1, box.y1) - max(leg.y0, box.y0)
            assert overlap_x <= 1 or overlap_y <= 1, (leg, box)


def test_estimate_plot_best_per_algorithm_and_legend_outside(monkeypatch):
    rows = []
    for name, params in [("alltoall/bruck", {"k": k}) for k in range(2, 17)] + [
            ("alltoall/pairwise", {}), ("alltoall/ring", {}), ("alltoall/scattered", {})]:
        rows += estimate(schedule(name, ranks=16, params=params), [8, 1024, 65536], model=MODEL)
    figs = _figures(monkeypatch, lambda: plot.plot_estimates(rows, "x.png"))
    assert len(figs) == 1 and len(figs[0].axes) == 1
    labels = [ln.get_label() for ln in figs[0].axes[0].get_lines()]
    assert "bruck (best k)" in labels and len(labels) == 5
    _assert_legends_outside(figs[0])
    figs = _figures(monkeypatch, lambda: plot.plot_estimates(rows, "x.png", all_params=True))
    assert len(figs[0].axes) >= 3  # 18 lines: several panels
    _assert_legends_outside(figs[0])


def test_plan_and_simulation_plots_keep_legends_outside(monkeypatch):
    from collplan import simplot
    from collplan.planner import plan
    from collplan.sim import simulate
    p = plan("alltoall", 16, None, "ib-qdr", "8B..64KiB", progress=False)
    _assert_legends_outside(_figures(monkeypatch, lambda: plot.plot_plan(p, "p.svg"))[0])
    sims = [simulate(schedule(a, ranks=16), model=MODEL, fidelity="flow", size=n)
            for a in ("alltoall/pairwise", "alltoall/ring") for n in (1024, 4096)]
    _assert_legends_outside(_figures(monkeypatch, lambda: simplot.plot_times(sims, "t.pdf"))[0])
    one = simulate(schedule("alltoall/pairwise", topology="torus:4x4"), machine="a2at-torus", fidelity="flow",
                   size=4096)
    _assert_legends_outside(_figures(monkeypatch, lambda: simplot.plot_links(one, "l.png"))[0])


# ------------------------------------------------------------------------------------------- version, help
def test_version():
    r = cp("--version")
    assert r.returncode == 0 and re.match(r"collplan \d+\.\d+", r.stdout)
    assert "openmpi" in r.stdout and "mpich" in r.stdout


def _parsers(p, path=()):
    yield path, p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                yield from _parsers(sp, path + (name,))


def test_every_option_has_help_and_every_command_an_example():
    leaves = 0
    for path, p in _parsers(cli.build_parser()):
        for a in p._actions:
            if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert a.help, f"collplan {' '.join(path)} {'/'.join(a.option_strings) or a.dest} has no help text"
        if path and not any(isinstance(a, argparse._SubParsersAction) for a in p._actions):
            leaves += 1
            assert p.epilog and "example" in p.epilog and "collplan" in p.epilog, f"collplan {' '.join(path)}"
    assert leaves >= 15


def test_help_shows_defaults():
    r = cp("estimate", "--help")
    text = " ".join(r.stdout.split())
    assert r.returncode == 0 and "(default: 16B..1MiB)" in text and "(default: sum)" in text and "example:" in text


# ------------------------------------------------------------------------------------------- progress
def test_progress_lines_when_stderr_is_a_pipe():
    # simplex ports: every rank walked (no one-rank estimate), long enough for progress lines
    args = ["estimate", "--collective", "alltoall", "--algorithm", "all", "--ranks", "128", "--model",
            "hockney:alpha=1.6us,beta=0.3125ns/B,duplex=0"]
    r = cp(*args, env={"COLLPLAN_PROGRESS_SECONDS": "0.05"})
    assert r.returncode == 0
    lines = [ln for ln in r.stderr.splitlines() if ln]
    assert lines and all(re.fullmatch(r"collplan: estimate: \d+/\d+ algorithms, \d+ s", ln) for ln in lines), r.stderr
    quiet = cp(*args, "--no-progress", env={"COLLPLAN_PROGRESS_SECONDS": "0.05"})
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_progress_helper_reports_a_single_long_step(capsys, monkeypatch):
    import time

    from collplan.progress import Progress
    monkeypatch.setenv("COLLPLAN_PROGRESS_SECONDS", "0.05")
    with Progress("items", 3, command="test") as bar:
        bar.step()
        time.sleep(0.4)
    err = capsys.readouterr().err
    assert "collplan: test: 1/3 items, 0 s" in err
    with Progress("items", 3, enabled=False):
        time.sleep(0.2)
    assert capsys.readouterr().err == ""


# ------------------------------------------------------------------------------------------- --schedule -
def test_schedule_from_stdin():
    text = cp("export", "--collective", "allgather", "--algorithm", "ring", "--ranks", "5", "-o", "-").stdout
    r = cp("verify", "--schedule", "-", input=text)
    assert r.returncode == 0 and "allgather/ring P=5" in r.stdout and "ok" in r.stdout
    bad = cp("verify", "--schedule", "-", input="not a schedule\n")
    assert bad.returncode == 2 and bad.stderr.startswith("collplan: error: standard input:")
    assert len(bad.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------------------------------- reproduce
def _fake_report(holds: bool, required: bool) -> Report:
    return Report(title="fake", columns=["a", "b"], rows=[[1, 2.5]],
                  claims=[Claim("the fast claim holds", 1.0, 1.0, required=True),
                          Claim("the slow claim holds", 1.0, 1.02 if holds else 1.04, "~", 0.03,
                                required=required)])


@pytest.mark.parametrize("holds,required,code", [(True, True, 0), (False, False, 0), (False, True, 1)])
def test_reproduce_exit_code_follows_the_required_claims(holds, required, code, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(reproduce, "run", lambda name, quick=False: _fake_report(holds, required))
    assert cli.main(["reproduce", "fake", "--out", str(tmp_path), "--no-progress"]) == code
    out, err = capsys.readouterr()
    assert "[holds, required] the fast claim holds" in out
    if code:
        assert "FAILED: 1 required claim(s) do not hold: the slow claim holds" in out
        assert "required claim(s) failed: the slow claim holds" in err
    else:
        assert "FAILED" not in out


def test_reproduce_errors_name_the_output_file_not_a_temporary(tmp_path, monkeypatch, capsys):
    report = _fake_report(True, True)

    def draw(path):
        fig, ax = plot.pyplot().subplots()
        ax.plot([1, 2], [1, 2], label="x")
        plot.legend_outside(ax)
        plot.save_figure(fig, path)
    report.figures["fig"] = draw
    monkeypatch.setattr(reproduce, "run", lambda name, quick=False: report)
    (tmp_path / "fig.png").mkdir()  # the figure's path is taken by a directory
    assert cli.main(["reproduce", "fake", "--out", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{tmp_path / 'fig.png'}" in err and "tmp" not in err.replace(
        str(tmp_path), "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake.csv", "fake.json", "fig.png"]


# ------------------------------------------------------------------------------------------- MPI
def _mpirun(abi, n, args):
    from test_mpi import mpirun
    return mpirun(abi, n, args)


@pytest.mark.parametrize("abi", ["openmpi", "mpich"])
def test_run_format_osu(abi):
    r = _mpirun(abi, 2, [sys.executable, "-m", "collplan", "run", "--collective", "allreduce", "--algorithm",
                         "rabenseifner", "--sizes", "8B,64B", "--iters", "10", "--format", "osu"])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    heads = [i for i, ln in enumerate(lines) if re.fullmatch(
        r"# Size\s+Avg Latency\(us\)\s+Min Latency\(us\)\s+Max Latency\(us\)\s+Iterations", ln)]
    assert len(heads) == 2 and "# allreduce/rabenseifner" in lines and "# native (MPI library)" in lines
    for h in heads:
        for ln in lines[h + 1:h + 3]:
            size, avg, lo, hi, iters = ln.split()
            assert size in ("8", "64") and 0 < float(lo) <= float(avg) <= float(hi) and int(iters) >= 10


@pytest.mark.parametrize("abi", ["openmpi", "mpich"])
def test_runtime_md_python_example_runs(abi, tmp_path):
    text = (ROOT / "docs" / "runtime.md").read_text()
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    script = tmp_path / "example.py"
    script.write_text(example + "\nprint('example ok', comm.rank)\n")
    r = _mpirun(abi, 2, [sys.executable, str(script)])
    assert r.returncode == 0 and r.stdout.count("example ok") == 2, r.stdout + r.stderr


def test_panels_keep_an_algorithms_parameter_sets_together():
    names = [f"bruck[k={k}]" for k in range(2, 17)] + ["direct", "multiphase[p=3,3]", "multiphase[p=6]", "ring"]
    got = plot.panels(names, 7, group=lambda n: n.split("[")[0])
    assert all(len(p) <= 7 for p in got) and sum(got, []) == names
    assert got[-1] == ["direct", "multiphase[p=3,3]", "multiphase[p=6]", "ring"]  # no bruck mixed in


def test_simulate_help_lists_every_network_key_by_fidelity():
    from collplan.commands.simulate import NETWORK_KEYS
    err = cp("simulate", "--collective", "allgather", "--algorithm", "ring", "--ranks", "4", "--model",
             "hockney:alpha=1us,beta=1ns/B", "--set", "warp=1").stderr
    allowed = re.search(r"allowed: ([^)]*)\)", err).group(1).split(", ")  # the simulators' own list
    assert sorted({k for names in NETWORK_KEYS.values() for k in names}) == sorted(allowed)
    text = cp("simulate", "--help").stdout
    assert "network keys" in text and "pacing_factor" in text and "packet:" in text
