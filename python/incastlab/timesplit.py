"""Where the time went: a result's ``time_flow_*`` and ``time_block_*`` fields (scenario field
``time_breakdown``) read as one table of components, seconds and shares.

The core splits each flow's part of a block (from the client's request to its last byte
delivered; a one-shot flow, from its start; a Riak reply, from its get's issue) into
components that add up to its completion time; docs/simulate.md, "Where the time went",
defines them. ``over="block"`` reads the means over each block's last part (the part that
ended the block, so they add up to the mean block time; an incast's last flow; for Riak's
gets, the reply that completed each get at the read quorum, so they add up to the mean get
latency); ``over="flow"`` the means over every part (every reply).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

#: (field suffix, what it is in a person's words), in the order a table shows them.
COMPONENTS: tuple[tuple[str, str], ...] = (
    ("transmission", "transmitting at its fair share"),
    ("queueing", "queueing (and slow start's ramp)"),
    ("rto_wait", "waiting out RTO timers"),
    ("recovery", "retransmission rounds"),
    ("pause", "held by PAUSE"),
    ("trim_recovery", "trims and NACKs (a trimmed packet until its resend arrived)"),
    ("pull_wait", "waiting for pulls or credit beyond its fair share"),
    ("request", "the request's trip"),
    ("other", "other"),
)


@dataclass(frozen=True)
class TimeSplit:
    """Mean completion time of the parts (seconds), and its split by component."""

    over: str                          # "block" (each block's last part) or "flow" (every part)
    parts: int
    mean_s: float
    seconds: dict[str, float]          # component -> mean seconds, COMPONENTS' order

    def share(self, component: str) -> float:
        return self.seconds[component] / self.mean_s if self.mean_s > 0 else 0.0

    def rows(self) -> list[dict[str, Any]]:
        """One row per component: key, what, seconds, share (0-1)."""
        return [{"component": k, "what": what, "seconds": self.seconds[k], "share": self.share(k)}
                for k, what in COMPONENTS]

    def sentence(self, least_share: float = 0.01) -> str:
        """The components of at least ``least_share``, largest first: "81% waiting out RTO
        timers, 12% transmitting at its fair share, ..."."""
        big = sorted(((self.share(k), what) for k, what in COMPONENTS if self.share(k) >= least_share),
                     reverse=True)
        return ", ".join(f"{s:.0%} {what}" for s, what in big)


def where_the_time_went(result: Any, over: str = "block") -> TimeSplit | None:
    """The split a result carries (a ``SimResult`` or its dict), or None if it was run
    without ``time_breakdown`` or finished no part."""
    if over not in ("block", "flow"):
        raise ValueError(f"over: 'block' or 'flow', not {over!r}")
    row: Mapping[str, Any] = result.to_dict() if hasattr(result, "to_dict") else result
    parts = row.get(f"time_{over}s")
    mean = row.get(f"time_{over}_s")
    if not parts or mean is None:
        return None
    # (a result from before the receiver-driven components has none: zero)
    seconds = {k: float(row.get(f"time_{over}_{k}_s", 0.0)) for k, _ in COMPONENTS}
    return TimeSplit(over=over, parts=int(parts), mean_s=float(mean), seconds=seconds)
