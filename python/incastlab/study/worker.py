"""What a worker runs: a batch of scenarios in the core, nothing else.

Local threads, local processes and Dask workers all call ``run_batch``, so a point is
simulated the same way wherever it runs. It takes the scenarios as the core's JSON and
returns the core's JSON, so nothing but strings crosses a process or network boundary,
and it refuses to run on a core other than the one the parent keyed the points by: a
Dask worker with another build would otherwise file its results under the wrong key.
"""

from __future__ import annotations

import functools
import hashlib
import time
from pathlib import Path


@functools.cache
def core_identity() -> tuple[str, str]:
    """(version, build) of the core this process loads: the crate version and the first 16
    hex digits of the SHA-256 of the native library file. The crate version alone is not
    bumped on every change of the core; the library's bytes change with any change of its
    code, so a rebuilt core never reuses results of another (docs/sweep.md, "Store")."""
    from .. import _native

    digest = hashlib.sha256(Path(_native.__file__).read_bytes()).hexdigest()
    return _native.version(), digest[:16]


def run_batch(tasks: list[tuple[str, str]], expected_core: tuple[str, str]) -> dict:
    """Simulate ``tasks`` (``(key, scenario JSON)``, in order) on this process's core.

    Returns ``{"results": [(key, result JSON), ...], "wall_s": seconds, "core": (version,
    build)}``. Raises EnvironmentProblem when this core is not ``expected_core``."""
    from .. import _native

    from ..errors import EnvironmentProblem

    core = core_identity()
    if tuple(expected_core) != core:
        raise EnvironmentProblem(f"this worker's incastlab core is {core[0]} build {core[1]}, the sweep's is "
                           f"{expected_core[0]} build {expected_core[1]}: install the same build on every worker")
    start = time.perf_counter()
    results = [(key, _native.simulate(text)) for key, text in tasks]
    return {"results": results, "wall_s": time.perf_counter() - start, "core": core}


def warm_up(hold_s: float) -> tuple[str, str]:
    """Load the core and hold this worker for ``hold_s``, so that a pool's other warm-up
    calls land on other workers; returns the core's identity."""
    identity = core_identity()
    time.sleep(hold_s)
    return identity


def start_in_pool(parent_pid: int) -> None:
    """Process-pool initializer. Stop signals (SIGINT, SIGTERM, SIGHUP) go to a whole
    process group from a terminal or a service manager, and the parent alone decides what
    stops (it ends its workers with SIGKILL), so workers ignore them and print no
    traceback. And a worker ends when the parent does, also after ``kill -9`` of the
    parent, which no cleanup code of its own survives to do: see ``watch_parent``."""
    import signal

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    watch_parent(parent_pid)


def watch_parent(pid: int) -> None:
    """End this process as soon as process ``pid`` has ended: a daemon thread waits on a
    pidfd (Linux 5.3+; it becomes readable when the process exits) or, without one, polls.
    A pool worker's own parent is the forkserver, which lives as long as its workers, so
    this watches the process that made the pool, not ``os.getppid()``."""
    import os
    import select
    import threading

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:  # gone already
        os._exit(1)
    except (AttributeError, OSError):  # no pidfd here: poll once a second
        fd = None

    def wait_for_exit() -> None:
        if fd is not None:
            select.select([fd], [], [])
        else:
            while _alive(pid):
                time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=wait_for_exit, name="incastlab-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
