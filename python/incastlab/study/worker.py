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


def ignore_sigint() -> None:
    """Process-pool initializer: Ctrl-C goes to the whole process group, and the parent
    alone decides what stops (it ends its workers), so workers print no traceback."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
