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


__version__ = _package_version()

from .errors import EnvironmentProblem, UsageError
from .scenario import Scenario
from .sim import SimResult, simulate, sweep, sweep_servers

__all__ = ["Scenario", "SimResult", "simulate", "sweep", "sweep_servers", "UsageError", "EnvironmentProblem"]
