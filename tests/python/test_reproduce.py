"""Every registered reproduction runs in quick mode, holds its required claims and writes its files."""
from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from collplan import reproduce


def test_listing():
    p = subprocess.run([sys.executable, "-m", "collplan", "reproduce"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    for name in reproduce.names():
        assert name in p.stdout


def test_unknown_reproduction_is_one_line_error():
    p = subprocess.run([sys.executable, "-m", "collplan", "reproduce", "no-such-table"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and "no-such-table" in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", reproduce.names())
def test_quick_reproduction(name, tmp_path):
    p = subprocess.run([sys.executable, "-m", "collplan", "reproduce", name, "--quick", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = list(csv.reader(open(tmp_path / f"{name}.csv")))
    assert len(rows) >= 2
    doc = json.loads((tmp_path / f"{name}.json").read_text())
    for c in doc["claims"]:
        assert c["holds"] or not c["required"], c
    report = reproduce.run(name, quick=True)
    for fig in report.figures:
        assert (tmp_path / f"{fig}.png").read_bytes()[:4] == b"\x89PNG"
