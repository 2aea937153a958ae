"""SIGTERM and SIGHUP handled as Ctrl-C is: one way to stop, whatever sent the signal.

The CLI installs ``handle_signals()`` for the length of a command. The first SIGINT,
SIGTERM or SIGHUP raises ``Interrupted`` (a ``KeyboardInterrupt``) in the main thread, so
every path that already cleans up after Ctrl-C (the core asked to stop, worker processes
ended, a testbed torn down, a run journal marked, staged output files removed) runs for
the other two as well, and the command ends with status 128 + the signal's number (130
for SIGINT, 143 for SIGTERM, 129 for SIGHUP), as a shell reports a process the signal
killed. A second signal while that cleanup runs is acknowledged and waited out; a third
stops the process at once (staged files are still removed; a testbed left up is removed by
the next testbed command, a worker process ends with its parent: docs/faults.md).

``deferred()`` holds a signal back while a few file renames that belong together run
(``outfiles.Outputs.commit``): the command then stops right after them, with every file
in place, never with half of them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Callable, Iterator

#: The signals that stop a command the way Ctrl-C does.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A stop signal (SIGINT, SIGTERM or SIGHUP) received by a command."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


def exit_status(e: KeyboardInterrupt) -> int:
    """128 + the signal's number; a plain KeyboardInterrupt is SIGINT's 130."""
    return e.exit_status if isinstance(e, Interrupted) else 128 + signal.SIGINT


def signal_name(e: KeyboardInterrupt) -> str:
    return e.name if isinstance(e, Interrupted) else "SIGINT"


class _State:
    def __init__(self) -> None:
        self.received = 0
        self.deferring = 0
        self.pending: int | None = None
        #: What to clean up before stopping at once (third signal): staged output files.
        self.last_words: list[Callable[[], None]] = []


_STATE = _State()


def _say(text: str) -> None:
    try:  # a closed terminal (SIGHUP) has no stderr to write to
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _handler(signum: int, frame) -> None:  # noqa: ARG001 - signal API
    _STATE.received += 1
    name = signal.Signals(signum).name
    if _STATE.received == 1:
        if _STATE.deferring:
            _STATE.pending = signum
            return
        raise Interrupted(signum)
    if _STATE.received == 2:
        _say(f"incastlab: {name} again: still stopping (cleaning up); a third signal stops at once")
        return
    for clean in list(_STATE.last_words):
        try:
            clean()
        except Exception:  # noqa: BLE001 - stopping at once: nothing may stop the exit
            pass
    _say(f"incastlab: {name}: stopped at once")
    os._exit(128 + signum)


@contextlib.contextmanager
def handle_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise ``Interrupted`` in the main thread while this is
    open; the previous handlers come back after (the CLI is also called in-process)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    _STATE.received, _STATE.deferring, _STATE.pending = 0, 0, None
    for s in STOP_SIGNALS:
        signal.signal(s, _handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold a stop signal back until the block has run. Only the main thread, where the
    handler raises, holds it back; elsewhere (a worker thread writing its own file) the
    block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _STATE.deferring += 1
    try:
        yield
    finally:
        _STATE.deferring -= 1
        if not _STATE.deferring and _STATE.pending is not None:
            signum, _STATE.pending = _STATE.pending, None
            raise Interrupted(signum)


def on_abrupt_exit(clean: Callable[[], None]) -> Callable[[], None]:
    """Run ``clean`` if a third signal stops the process at once; returns the function
    that unregisters it."""
    _STATE.last_words.append(clean)

    def forget() -> None:
        with contextlib.suppress(ValueError):
            _STATE.last_words.remove(clean)

    return forget
