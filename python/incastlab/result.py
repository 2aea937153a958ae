"""One simulated point's result: the core's row with its scenario, read as attributes.

Kept apart from ``incastlab.sim`` (the API that runs points) so that the engine that runs
them (``incastlab.study``) and the API both build on it without importing each other.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from .scenario import Scenario


@dataclass(frozen=True)
class Observed:
    """What a point recorded beside its result row, kept in memory (threads only): the
    per-port series and the ground truth of losses and timeouts, each None unless asked for."""

    port_util: Any = None
    truth: Any = None


@dataclass(frozen=True)
class SimResult:
    """The outcome of one simulated point: the core's flat result, read as attributes.

    ``r.goodput_mbps``, ``r.timeouts``, ``r["drops"]``; ``r.to_dict()`` is the JSON object
    ``incastlab simulate --json`` prints. Times are seconds, rates Mbps, sizes bytes.
    """

    data: Mapping[str, Any]
    scenario: Scenario | None = field(default=None, compare=False)
    #: Every port's series (``incastlab.utilization.PortUtil``) when sampling was asked for.
    port_util: Any = field(default=None, compare=False)
    #: The ground truth of every loss and timeout (``incastlab.truth.Losses``) when asked for.
    truth: Any = field(default=None, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "data", MappingProxyType(dict(self.data)))

    def __getattr__(self, name: str) -> Any:
        if name in ("data", "scenario", "port_util", "truth") or name.startswith("__"):
            raise AttributeError(name)
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(f"SimResult has no field {name!r}") from None

    def __repr__(self) -> str:
        # the headline numbers in their units, not the whole mapping (issue 11: picoseconds)
        d = self.data
        head = ", ".join(f"{k}={d[k]!r}" for k in ("servers", "goodput_mbps", "blocks", "timeouts", "drops",
                                                   "sim_seconds") if k in d)
        return f"SimResult({head}, scenario={self.scenario!r})" if self.scenario is not None else f"SimResult({head})"

    def __reduce__(self):  # MappingProxyType does not pickle; rebuild from a plain dict
        return (SimResult, (dict(self.data), self.scenario, self.port_util, self.truth))

    def __getitem__(self, name: str) -> Any:
        return self.data[name]

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.data))

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (a copy), in the core's field order."""
        return dict(self.data)

    def to_json(self) -> str:
        """One line of ``--json`` output."""
        return json.dumps(self.to_dict())


def with_scenario(data: Mapping[str, Any], scn: Scenario) -> dict[str, Any]:
    """The core's result row with every scenario field (SI units, ``docs/scenario-fields.md``)
    and the incastlab version, so a row read alone says what produced it. The core's own
    columns win: they give what ran (the per-server part in fixed-block mode, the buffer
    as ports count it). The preset comes first: two rows of the same fields read differently
    under ``rfc`` and ``fast08`` (``docs/scenario-fields.md``, Presets)."""
    from . import __version__

    row = {"preset": scn.preset, **data}
    for name, value in scn.result_fields().items():
        row.setdefault(name, value)
    row["incastlab_version"] = __version__
    return row
