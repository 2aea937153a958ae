"""Progress on stderr: a redrawn line with an ETA for a person watching a terminal, and a
plain line per point when stderr is a file or a pipe (logs, CI) once the work has run long
enough to need one."""

from __future__ import annotations

import sys
import time
from typing import Callable

#: Without a terminal, stay quiet for work that ends sooner than this (tests, quick runs).
QUIET_SECONDS = 5.0


def _eta(elapsed: float, done: int, total: int) -> str:
    if done == 0 or done >= total:
        return ""
    return f", ETA {elapsed / done * (total - done):.0f} s"


def point_progress(what: str, total: int, minimum: int = 2) -> Callable[[int, int], None] | None:
    """A ``progress(done, total)`` callback for ``total`` points, or None when the work is
    too small to need one (fewer than ``minimum`` points)."""
    if total < minimum:
        return None
    start = time.monotonic()
    tty = sys.stderr.isatty()

    def show(done: int, total: int) -> None:
        elapsed = time.monotonic() - start
        line = f"{what}: {done}/{total} points, {elapsed:.1f} s{_eta(elapsed, done, total)}"
        if tty:
            end = "\n" if done >= total else ""
            sys.stderr.write(f"\r{line}\x1b[K{end}")  # \x1b[K: clear what a longer line left
        elif elapsed >= QUIET_SECONDS:
            sys.stderr.write(line + "\n")
        else:
            return
        sys.stderr.flush()

    return show
