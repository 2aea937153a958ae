"""incastlab: reproduce, explain and fix TCP incast.

>>> import incastlab
>>> r = incastlab.simulate(incastlab.Scenario(servers=8, duration="1s"))
>>> r.goodput_mbps   # doctest: +SKIP
"""

def _package_version() -> str:
    """The installed package's version (pyproject.toml)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("incastlab")
    except PackageNotFoundError:
        return "unknown (not installed)"


from .errors import EnvironmentProblem, UsageError

__all__ = ["Scenario", "SimResult", "simulate", "sweep", "sweep_servers", "doctor", "UsageError",
           "EnvironmentProblem"]

# The API's names are imported when first used (PEP 562): ``import incastlab.cli.main``
# then costs no pydantic, pandas or core, and a refused argument returns at once.
_LAZY = {"Scenario": "scenario", "SimResult": "result", "simulate": "sim", "sweep": "sim", "sweep_servers": "sim",
         "doctor": "diagnosis"}  # incastlab.doctor(...): docs/doctor.md


def __getattr__(name: str):
    if name == "__version__":  # importlib.metadata costs ~80 ms: read when asked for
        globals()["__version__"] = _package_version()
        return globals()["__version__"]
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
