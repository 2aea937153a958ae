"""TCP and qdisc counters read at the end of each window, not when the window is judged.

The per-second loop judges a window after it ended; on a loaded host that can be seconds
later (``lag_s``). Read then, a window's RTO timeouts and drops were those counted since the
previous window was judged, so they could land seconds late, in a window whose bytes and
fan-in belong to another moment. A small thread reads the counters at each window's end
instead, and the loop takes the reading of the window it judges (waiting a little for it if
the thread is behind; reading at once, as before, if it does not come).

A thread that wakes after several ends have passed (a stalled host) reads once and gives that
reading to every end it missed: those windows then show no increase and the last one all of
it, which is what reading at judge time did for every window. Each window's record says how
long after its end its counters were read (``counters_late_s``).
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class CounterClock(Generic[T]):
    """Calls ``read()`` once at (or as soon as possible after) each of ``ends`` (monotonic
    ns, ascending), in its own thread; :meth:`at` gives the reading of one end."""

    def __init__(self, read: Callable[[], T], ends: list[int], clock: Callable[[], int] = time.monotonic_ns):
        self.read = read
        self.clock = clock
        self._ends = list(ends)
        self._next = 0  # index of the first end not yet read for
        self._at: dict[int, tuple[int, T]] = {}  # end -> (when it was read, the reading)
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="incastlab-counter-clock", daemon=True)

    def start(self) -> CounterClock[T]:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)

    def step(self) -> bool:
        """Read once if an end has passed, for every end passed and not yet read; False when
        every end is read (the thread runs this; tests call it with a fake clock)."""
        if self._next >= len(self._ends):
            return False
        now = self.clock()
        if now < self._ends[self._next]:
            return True
        got = self.read()
        read_at = self.clock()
        with self._cond:
            while self._next < len(self._ends) and self._ends[self._next] <= now:
                self._at[self._ends[self._next]] = (read_at, got)
                self._next += 1
            self._cond.notify_all()
        return self._next < len(self._ends)

    def _run(self) -> None:
        try:
            while not self._stop.is_set() and self.step():
                delay = (self._ends[self._next] - self.clock()) / 1e9
                if delay > 0 and self._stop.wait(delay):
                    return
        except BaseException as e:  # noqa: BLE001 - the loop falls back to reading itself
            self._error = e
        finally:
            with self._cond:
                self._cond.notify_all()

    def at(self, end: int, timeout_s: float) -> tuple[int, T] | None:
        """The reading taken for ``end`` and when (monotonic ns); None if the thread has not
        read it within ``timeout_s`` or has stopped. Each end is given out once."""
        def ready() -> bool:
            return end in self._at or self._stop.is_set() or not self._thread.is_alive()

        with self._cond:
            if self._thread.is_alive():
                self._cond.wait_for(ready, timeout=timeout_s)
            return self._at.pop(end, None)
