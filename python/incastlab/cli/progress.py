"""Progress on stderr, only for a person watching (stderr is a terminal)."""

from __future__ import annotations

import sys
import time
from typing import Callable


def tty_progress(what: str, total: int, minimum: int = 2) -> Callable[[int, int], None] | None:
    """A ``progress(done, total)`` callback that redraws one stderr line, or None when
    stderr is not a terminal or the work is too small to need one."""
    if total < minimum or not sys.stderr.isatty():
        return None
    start = time.monotonic()

    def show(done: int, total: int) -> None:
        elapsed = time.monotonic() - start
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\r{what}: {done}/{total} points, {elapsed:.1f} s{end}")
        sys.stderr.flush()

    return show
