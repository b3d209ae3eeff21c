"""Progress of long work on stderr, one helper for every command (verify --all, estimate --algorithm all, simulate
--sizes, plan, reproduce).

Nothing is printed for work shorter than a couple of seconds. After that, on a terminal one line is rewritten in
place twice a second; when stderr is a file or a pipe (batch jobs, CI logs) a full line is printed every 5 seconds
(``COLLPLAN_PROGRESS_SECONDS`` changes the interval), e.g.::

    collplan: estimate: 12/40 algorithms, 31 s

A background thread prints, so a single long step (a schedule of a million ranks) is reported too: the C++ core
releases the interpreter while it works. ``--no-progress`` turns it off.
"""
from __future__ import annotations

import os
import sys
import threading
import time


def _interval(tty: bool) -> float:
    try:
        return max(0.05, float(os.environ.get("COLLPLAN_PROGRESS_SECONDS", "")))
    except ValueError:
        return 0.5 if tty else 5.0


class Progress:
    """``Progress(what, total, enabled, command)``: call ``step(done)`` as work completes and ``done()`` at the end
    (or use it as a context manager). ``total`` 0 means unknown: only the elapsed time is shown."""

    def __init__(self, what: str, total: int = 0, enabled: bool = True, command: str = "plan"):
        self.what, self.total, self.command = what, total, command
        self.count = 0
        self.t0 = time.monotonic()
        self.tty = sys.stderr.isatty()
        self._stop = threading.Event()
        self._printed = False
        self._thread = None
        if enabled:
            self._thread = threading.Thread(target=self._run, name="collplan-progress", daemon=True)
            self._thread.start()

    def step(self, done: int | None = None) -> None:
        self.count = self.count + 1 if done is None else done

    def line(self) -> str:
        secs = f"{time.monotonic() - self.t0:.0f} s"
        if self.total:
            return f"collplan: {self.command}: {self.count}/{self.total} {self.what}, {secs}"
        return f"collplan: {self.command}: {self.what}, {secs}"

    def _run(self) -> None:
        every = _interval(self.tty)
        if self._stop.wait(min(2.0, every)):
            return
        while True:
            text = self.line()
            try:
                if self.tty:
                    print("\r" + text.ljust(60), end="", file=sys.stderr, flush=True)
                else:
                    print(text, file=sys.stderr, flush=True)
            except (OSError, ValueError):  # stderr closed: stop reporting, never fail the work
                return
            self._printed = True
            if self._stop.wait(every):
                return

    def done(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        if self.tty and self._printed:
            print("\r" + " " * 70 + "\r", end="", file=sys.stderr, flush=True)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.done()
