"""incastlab: reproduce, explain and fix TCP incast.

>>> import incastlab
>>> r = incastlab.simulate(incastlab.Scenario(servers=8, duration="1s"))
>>> r.goodput_mbps   # doctest: +SKIP

The names below are imported on first use (PEP 562), so that ``import incastlab.cli.main``
is light: the CLI sets its signal handlers (``incastlab.interrupts``) before the second
of imports a command needs, and Ctrl-C or SIGTERM in that second is the CLI's one line,
not a traceback from inside pydantic (docs/faults.md, "Signals").
"""

from importlib import import_module

from .errors import EnvironmentProblem, UsageError

# name -> the module that defines it
_LAZY = {
    "Scenario": ".scenario",
    "SimResult": ".result",
    "simulate": ".sim",
    "sweep": ".sim",
    "sweep_servers": ".sim",
    "doctor": ".diagnosis",  # incastlab.doctor(...): docs/doctor.md
}

__all__ = ["Scenario", "SimResult", "simulate", "sweep", "sweep_servers", "doctor", "UsageError",
           "EnvironmentProblem"]


def _package_version() -> str:
    """The installed package's version (pyproject.toml)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("incastlab")
    except PackageNotFoundError:
        return "unknown (not installed)"


def __getattr__(name: str):
    if name == "__version__":
        value = _package_version()  # importlib.metadata: a quarter second, so on first use
    elif name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})
