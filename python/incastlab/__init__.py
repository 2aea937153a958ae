"""incastlab: reproduce, explain and fix TCP incast.

>>> import incastlab
>>> r = incastlab.simulate(incastlab.Scenario(servers=8, duration="1s"))
>>> r.goodput_mbps   # doctest: +SKIP
"""

from .errors import EnvironmentProblem, UsageError
from .scenario import Scenario
from .sim import SimResult, simulate, sweep, sweep_servers

__all__ = ["Scenario", "SimResult", "simulate", "sweep", "sweep_servers", "UsageError", "EnvironmentProblem"]
