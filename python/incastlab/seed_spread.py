"""The simulator's own run-to-run spread where a scenario is random: the same scenario over
several seeds, each drawing the servers' think times anew, and whether a measured run falls
inside that spread.

``incastlab validate --sim-seeds N`` uses it. Where incast starts, a run's goodput is set by
a handful of timeouts (at 2 servers one retransmission timeout is a fifth of a 20-block
run), so one seed is one draw of a wide distribution, as one testbed run is: the testbed's
runs of one point moved between 35 and 92 Mbit/s over a day, and the simulator's seeds of the
same point between 29 and 96 (docs/testbed.md, "The simulator's spread over seeds").
Without think times the simulator's servers start in lock step and every seed gives the
same run, so there is no spread to report."""

from __future__ import annotations

import statistics
from typing import Any


def over_seeds(scenario: Any, seeds: int, first: dict | None = None) -> dict:
    """``scenario`` (a Scenario) run with seeds ``scenario.seed``, ``+1``, ... (``seeds`` of
    them); ``first``: the result already run with ``scenario.seed``, not run again. Each
    run's goodput and timeouts, in seed order, and their medians and extremes."""
    from .scenario import Scenario
    from .sim import simulate
    base = scenario.model_dump()
    start = int(base.get("seed") or 1)
    goodput, timeouts = [], []
    for i in range(seeds):
        res = first if (i == 0 and first is not None) else \
            simulate(Scenario(**{**base, "seed": start + i})).to_dict()
        goodput.append(res["goodput_mbps"])
        timeouts.append(res["timeouts"])
    return {
        "seeds": list(range(start, start + seeds)),
        "goodput_mbps": goodput, "timeouts": timeouts,
        "goodput_mbps_p50": statistics.median(goodput), "goodput_mbps_min": min(goodput),
        "goodput_mbps_max": max(goodput),
        "timeouts_p50": statistics.median(timeouts), "timeouts_min": min(timeouts), "timeouts_max": max(timeouts),
    }


def inside(goodput_mbps: float, timeouts: int, spread: dict) -> bool:
    """The measured run's goodput and its timeouts both lie within the seeds' range (ends
    included)."""
    return (spread["goodput_mbps_min"] <= goodput_mbps <= spread["goodput_mbps_max"]
            and spread["timeouts_min"] <= timeouts <= spread["timeouts_max"])


def describe(spread: dict, key: str, spec: str) -> str:
    """``p50 [min-max]`` of one quantity, for a table cell."""
    return (f"{format(spread[key + '_p50'], spec)} [{format(spread[key + '_min'], spec)}-"
            f"{format(spread[key + '_max'], spec)}]")
