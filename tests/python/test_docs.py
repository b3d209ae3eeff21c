"""Every `collplan` command quoted in README.md and docs/*.md, so the documentation cannot drift from the CLI:
each one parses (its options, choices and required arguments exist), and the ones that need nothing but this
installation -- no file the reader makes first, no MPI launcher, no paper reproduction of minutes -- run and end as
the text around them says (exit 0; 1 or 2 where the block shows a failed check or an error). Where a block shows
what such a command prints (`$ collplan ...` and the lines below it), every line shown is in its output, in that
order, at the 100 columns the pages are written for ("..." stands for lines left out)."""
from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from collplan import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# what a quoted command may name that exists only on the reader's machine or after another command
USER_FILES = re.compile(r"(^|/)(my|mymachine)\.toml$|^(wisdom|w|rules|tuning)\.json$|^rules\.txt$|^prof2?/?$|"
                        r"^/tmp/rec|^DIR$|\.(png|goal|mtx|jpg)$|^out/$|^rec-")
SUBCOMMANDS = {*cli.build_parser()._subparsers._group_actions[0].choices, "--version"}
SLOW = ("reproduce", "calibrate", "run", "profile", "replay", "pmpi")  # minutes, or MPI, or a recorded profile


def _commands() -> list[tuple[str, str, bool]]:
    """(file, command, the block shows an error) for every command line of a fenced block: a line that starts with
    `collplan ` (after a `$ ` prompt and an `mpirun -n N` / `env VAR=...` launcher), continuations joined;
    synopses (`[--x]`, `(--a | --b)`) and output lines are not commands."""
    out = []
    for md in DOCS:
        for block in re.findall(r"```(?:sh|bash|console|shell|text)?\n(.*?)```", md.read_text(), re.S):
            shows_error = "error:" in block or "FAILED" in block
            for line in re.sub(r"\\\n\s*", " ", block).splitlines():
                line = line.strip().removeprefix("$ ")
                line = re.sub(r"^(mpirun|mpiexec)\s+-n\s+\d+\s+(env\s+(\S+=\S+\s+)*)?", "", line)
                if not line.startswith("collplan ") or re.match(r"collplan\s*:", line):
                    continue
                if re.search(r"\[--|\(--|\bDIR\b.*\bM\b", line):
                    continue
                words = line.split()
                if len(words) < 2 or words[1] not in SUBCOMMANDS:
                    continue
                out.append((md.name, line, shows_error))
    return out


def _argv(line: str) -> list[str]:
    """The command's arguments: up to a pipe, without its comment."""
    return shlex.split(line.split(" | ")[0], comments=True)[1:]


def _unique(commands):
    """One of each command (README.md quotes several of the pages' examples again)."""
    seen, out = set(), []
    for f, c, e in commands:
        key = tuple(_argv(c))
        if key not in seen:
            seen.add(key)
            out.append((f, c, e))
    return out


COMMANDS = _unique(_commands())


def test_the_documents_quote_commands():
    assert len(COMMANDS) >= 60 and {f for f, _, _ in COMMANDS} >= {"README.md", "planner.md", "verify.md"}


@pytest.mark.parametrize("where,line,shows_error", COMMANDS, ids=[f"{f}:{c[:60]}" for f, c, _ in COMMANDS])
def test_every_quoted_command_parses(where, line, shows_error):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            cli.build_parser().parse_args(_argv(line))
        except SystemExit as e:  # --version and --help end here with 0
            assert e.code == 0 or shows_error, \
                f"{where}: `{line}` does not parse: {err.getvalue().strip().splitlines()[-1:]}"
        except Exception as e:  # collplan's parser raises what argparse would print (cli._Parser)
            assert shows_error, f"{where}: `{line}` does not parse: {e}"


def _runnable(line: str) -> bool:
    argv = _argv(line)
    return (argv[0] not in SLOW and not any(USER_FILES.search(a) for a in argv)
            and "--all" not in argv and argv[0] != "--version")


RUN = [(f, c, e) for f, c, e in COMMANDS if _runnable(c)]


@pytest.mark.parametrize("where,line,shows_error", RUN, ids=[f"{f}:{c[:60]}" for f, c, _ in RUN])
def test_every_self_contained_quoted_command_runs(where, line, shows_error, tmp_path):
    r = subprocess.run([sys.executable, "-m", "collplan", *_argv(line)], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    if shows_error and r.returncode in (1, 2):  # the block shows the error or the failed check it prints
        assert "Traceback" not in r.stderr and (r.stderr.startswith("collplan") or "FAILED" in r.stdout), r.stderr
        return
    assert r.returncode == 0, f"{where}: `{line}` exited {r.returncode}: {r.stderr.strip()[-300:]}"


def _shown() -> list[tuple[str, str, list[str]]]:
    """(file, command, the output lines the page shows) of every `$ collplan ...` that runs here."""
    out = []
    for md in DOCS:
        for block in re.findall(r"```(?:sh|bash|console|shell|text)?\n(.*?)```", md.read_text(), re.S):
            for part in re.split(r"^\$ ", re.sub(r"\\\n\s*", " ", block), flags=re.M)[1:]:
                lines = part.rstrip("\n").split("\n")
                shown = [ln.rstrip() for ln in lines[1:] if ln.strip() and ln.strip() != "..."]
                # simulate prints its own wall time: what it shows cannot be compared
                if (lines[0].startswith("collplan ") and shown and " | " not in lines[0] and _runnable(lines[0])
                        and _argv(lines[0])[0] != "simulate"):
                    out.append((md.name, lines[0], shown))
    return out


SHOWN = _shown()


@pytest.mark.parametrize("where,line,shown", SHOWN, ids=[f"{f}:{c[:60]}" for f, c, _ in SHOWN])
def test_what_a_page_shows_a_command_print_is_what_it_prints(where, line, shown, tmp_path):
    r = subprocess.run([sys.executable, "-m", "collplan", *_argv(line)], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300, env={**os.environ, "COLUMNS": "100"})
    got = iter(ln.rstrip() for ln in (r.stdout + r.stderr).splitlines())
    missing = [ln for ln in shown if not any(ln == g for g in got)]
    assert not missing, f"{where}: `{line}` no longer prints (in this order):\n" + "\n".join(missing[:5])
