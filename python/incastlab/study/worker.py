"""What a worker runs: a batch of scenarios in the core, nothing else.

Local threads, local processes and Dask workers all call ``run_batch``, so a point is
simulated the same way wherever it runs. It takes the scenarios as the core's JSON and
returns the core's JSON, so nothing but strings crosses a process or network boundary,
and it refuses to run on a core other than the one the parent keyed the points by: a
Dask worker with another build would otherwise file its results under the wrong key.

A point run by a thread of this process may also carry what only this process can give
it (``InProcess``): files to record, a probe the parent reads its progress from, and a
reduction of its per-port series to a few columns, made in the worker so the series
(hundreds of MB) is dropped at once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, Callable


@functools.cache
def core_identity() -> tuple[str, str]:
    """(version, build) of the core this process loads: the crate version and the first 16
    hex digits of the SHA-256 of the native library file. The crate version alone is not
    bumped on every change of the core; the library's bytes change with any change of its
    code, so a rebuilt core never reuses results of another (docs/sweep.md, "Store")."""
    from .. import _native

    h = hashlib.sha256()
    with open(_native.__file__, "rb") as f:  # in chunks: no copy of the library held at once
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    digest = h.hexdigest()
    return _native.version(), digest[:16]


@dataclass(frozen=True)
class InProcess:
    """What a point run in this process may carry besides its scenario (threads only)."""

    #: Files to write (``incastlab.recording.Recording``), or None.
    recording: Any = None
    #: An ``_native.Progress`` the run reports its simulated time and blocks to, or None.
    probe: Any = None
    #: ``reduce(result, observed) -> extra columns`` (``result.Observed``), applied here; the
    #: series and the truth are dropped.
    reduce: Callable[[dict, Any], dict] | None = None


def simulate_point(text: str, local: InProcess | None = None) -> tuple[str, Any, dict | None]:
    """One point: the core's result JSON for the scenario JSON ``text``, what it recorded
    in memory (``result.Observed``: per-port series, ground truth) when asked for and not
    reduced, and the columns ``local.reduce`` made of it (else None)."""
    from .. import _native

    if local is None or not (local.reduce or (local.recording is not None and local.recording.wanted)):
        return _native.simulate(text, progress=local.probe if local else None), None, None
    rec = local.recording
    if rec is not None and rec.wanted:
        from ..recording import simulate_recording

        from ..result import Observed

        data, util, losses = simulate_recording(json.loads(text), rec, local.probe)
        out = json.dumps(data)
        observed = Observed(util, losses) if (util is not None or losses is not None) else None
    else:
        out, observed = _native.simulate(text, progress=local.probe), None
    if local.reduce is None:
        return out, observed, None
    return out, None, dict(local.reduce(json.loads(out), observed))


def run_batch(tasks: list[tuple], expected_core: tuple[str, str]) -> dict:
    """Simulate ``tasks`` (``(key, scenario JSON)``, or ``(key, scenario JSON, InProcess)``
    from a thread of this process; in order) on this process's core.

    Returns ``{"results": [(key, result JSON), ...], "observed": {key: Observed}, "columns":
    {key: reduced columns}, "wall_s": seconds, "core": (version, build)}``. Raises
    EnvironmentProblem when this core is not ``expected_core``."""
    from ..errors import EnvironmentProblem

    core = core_identity()
    if tuple(expected_core) != core:
        raise EnvironmentProblem(f"this worker's incastlab core is {core[0]} build {core[1]}, the sweep's is "
                           f"{expected_core[0]} build {expected_core[1]}: install the same build on every worker")
    start = time.perf_counter()
    results, series, columns = [], {}, {}
    for key, text, *local in tasks:
        out, observed, extra = simulate_point(text, *local)
        results.append((key, out))
        if observed is not None:
            series[key] = observed
        if extra is not None:
            columns[key] = extra
    return {"results": results, "observed": series, "columns": columns, "wall_s": time.perf_counter() - start,
            "core": core}


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
