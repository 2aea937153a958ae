"""Progress on stderr: a tqdm bar with an ETA for a person watching a terminal, and plain
lines when stderr is a file or a pipe (logs, CI) once the work has run long enough to
need them.

Progress counts points, and inside a running point how far it has got (simulated time
over the duration, or blocks over the block count: ``incastlab.sim``), so a single
long point (``simulate --servers 100000``) shows that it moves and when it should end.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol

#: Without a terminal, stay quiet for work that ends sooner than this (tests, quick runs).
QUIET_SECONDS = 5.0
#: Without a terminal, a line at least this often while a point runs (besides one per point).
LOG_EVERY_SECONDS = 10.0


class Progress(Protocol):
    def __call__(self, done: float, total: int, simulated_s: float | None = None) -> None:
        """``done`` points of ``total`` (finished ones plus the running ones' fractions);
        ``simulated_s``: the simulated time the running points have reached."""


def _eta(elapsed: float, done: float, total: int) -> str:
    if done <= 0 or done >= total:
        return ""
    return f", ETA {elapsed / done * (total - done):.0f} s"


def point_progress(what: str, total: int, minimum: int = 1, line_per_point: bool = True,
                   unit: str = "point") -> Progress | None:
    """A progress callback for ``total`` points (or other ``unit``s: a read's blocks), or
    None when there are fewer than ``minimum``.

    In logs, a line per finished point (``line_per_point``), or at most one every
    ``LOG_EVERY_SECONDS`` (sweeps of thousands of short points)."""
    if total < minimum:
        return None
    if sys.stderr.isatty():
        return _TerminalProgress(what, total, unit)
    return _LogProgress(what, total, line_per_point, unit)


class _TerminalProgress:
    """A tqdm bar, redrawn in place, closed when the last point is done."""

    def __init__(self, what: str, total: int, unit: str = "point"):
        import shutil

        from tqdm import tqdm

        # A terminal that reports no size (a pseudo-terminal under script(1)) gives tqdm
        # -1 rows, and it then draws nothing: take shutil's reading, which falls back.
        size = shutil.get_terminal_size(fallback=(100, 24))
        self.bar = tqdm(total=total, desc=what, unit=unit, file=sys.stderr, leave=True, ncols=size.columns,
                        nrows=size.lines,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.1f}/{total} " + unit + "s "
                                   "[{elapsed}<{remaining}{postfix}]")

    def __call__(self, done: float, total: int, simulated_s: float | None = None) -> None:
        self.bar.n = done
        running = simulated_s is not None and done < total
        self.bar.set_postfix_str(f"simulated {simulated_s:.3g} s" if running else "", refresh=False)
        self.bar.refresh()
        if done >= total:
            self.bar.close()


class _LogProgress:
    """A plain line per finished point (or only for the last one), and one every
    ``LOG_EVERY_SECONDS`` in between, after the first ``QUIET_SECONDS``."""

    def __init__(self, what: str, total: int, line_per_point: bool = True, unit: str = "point"):
        self.what = what
        self.unit = unit
        self.line_per_point = line_per_point
        self.start = time.monotonic()
        self.last_line = self.start
        self.last_whole = 0

    def __call__(self, done: float, total: int, simulated_s: float | None = None) -> None:
        now = time.monotonic()
        elapsed = now - self.start
        finished = int(done) > self.last_whole
        self.last_whole = max(self.last_whole, int(done))
        due = now - self.last_line >= LOG_EVERY_SECONDS
        if elapsed < QUIET_SECONDS or not ((finished and (self.line_per_point or done >= total)) or due):
            return
        shown = f"{int(done)}" if finished else f"{done:.2f}"  # whole units finished, else with the running ones' parts
        line = f"{self.what}: {shown}/{total} {self.unit}s, {elapsed:.1f} s{_eta(elapsed, done, total)}"
        if simulated_s is not None and not finished:
            line += f" (simulated {simulated_s:.3g} s)"
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
        self.last_line = now
