"""What a reproduction is, as data: series, a sweep axis, a plot and checks.

A reproduction module (one per reproduced figure or table) builds one ``Experiment``
and nothing else; ``incastlab.experiments.run`` turns it into simulated points, a CSV, a
figure and a list of checks. Nothing here runs a simulation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import pandas as pd

from ..table import plural

# A check measures the result DataFrame (one row per simulated point: the core's result
# fields plus ``series``, ``panel``, ``x`` and ``seed``) and says what it saw and whether
# the source's claim holds: ``(measured, passed)``.
Measure = Callable[[pd.DataFrame], tuple[str, bool]]


@dataclass(frozen=True)
class Series:
    """One line of the figure: a label and the Scenario fields that differ from ``base``."""

    label: str
    params: Mapping[str, Any] = field(default_factory=dict)
    #: Sub-figure this series is drawn in ("" when the figure has one panel), e.g. "(a) Reno".
    panel: str = ""
    #: Axis values of this series alone (default: the experiment's), e.g. a 10 Gbps panel
    #: that sweeps further than the 1 Gbps one; and its ``--quick`` values.
    values: tuple[Any, ...] | None = None
    quick_values: tuple[Any, ...] | None = None
    #: Extra matplotlib line style, e.g. ``{"color": "C1", "linestyle": "--"}`` to pair lines.
    style: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    """A claim of a source document and how to measure it on our results."""

    claim: str
    #: File and figure/section, e.g. ``"000_315d806dde942a9f.txt Fig. 13"``.
    source: str
    measure: Measure


@dataclass(frozen=True)
class Observe:
    """What a reproduction reads from every port of each point besides its result: the
    per-port series sampled at ``interval`` (``incastlab.utilization``), reduced by
    ``columns(result)`` (a ``SimResult`` whose ``port_util`` is set) to extra columns of the
    point's row, so checks and plots read them like any result field. The series themselves
    are not kept (a point's series can be hundreds of MB)."""

    interval: str
    columns: Callable[[Any], Mapping[str, Any]]
    #: Also record the ground truth of losses and timeouts (``SimResult.truth``, ``incastlab.truth``).
    truth: bool = False


@dataclass(frozen=True)
class Plot:
    """How the figure is drawn.

    ``kind``: ``"lines"`` (``y`` against the sweep axis, one line per series, one subplot
    per panel; mean over seeds with the min-max spread shaded), ``"dart"`` (the summed
    ``dart_histogram`` of each series as bars, one subplot per series, FAST'08 Fig. 11) or
    ``"categories"`` (timeout categories per series, ours next to the source's numbers,
    FAST'08 Table 3) or ``"custom"`` (``draw(fig, df)`` draws its own axes: figures whose
    axes are not the sweep's, e.g. peak/average against the sampling interval).
    """

    kind: str = "lines"
    y: str = "goodput_mbps"
    ylabel: str = "Goodput (Mbps)"
    xlabel: str = "Number of servers"
    #: Log-scale x axis (sweeps to 1024 servers); the FAST'08 figures are linear.
    logx: bool = False
    #: Log-scale y axis (curves that differ by orders of magnitude, FAST'08 Fig. 13).
    logy: bool = False
    #: Draw the payload capacity of the link as a dotted line (lines plots of goodput).
    link_rate: bool = True
    #: kind="categories": {series label: {result field: the source's number}}.
    reference: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    #: kind="lines": {panel: (result field, y label)} for a panel that draws another field
    #: than ``y`` (fast08-fig14's panel (c): the victim's goodput).
    panel_y: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    #: kind="custom": draws the figure's axes on a matplotlib Figure from the result DataFrame.
    draw: Callable[[Any, pd.DataFrame], None] | None = None


#: What makes runs of one point differ when several seeds are run (``Experiment.seed_variation``,
#: ``incastlab demo``): each server's think time drawn from U(0, 3 us) per block.
SEED_VARIATION: Mapping[str, Any] = {"jitter": "3us"}


@dataclass(frozen=True)
class Experiment:
    """One reproduced figure or table of a source document."""

    #: Command-line name, e.g. ``"fast08-fig13"``.
    name: str
    #: Figure title: what is plotted, e.g. ``"Reno, NewReno and SACK"``.
    title: str
    #: The source figure, e.g. ``"000_315d806dde942a9f.txt Fig. 10"`` (printed on the plot).
    source: str
    #: What the reproduction shows and which parameters were chosen why (``--list``, docs).
    summary: str
    series: tuple[Series, ...]
    checks: tuple[Check, ...]
    #: Scenario fields shared by every series (series params override them).
    base: Mapping[str, Any] = field(default_factory=dict)
    #: The Scenario field swept along the x axis and its values.
    axis: str = "servers"
    values: tuple[Any, ...] = (1, 2, 4, 8, 16, 32, 64)
    #: Values for ``--quick`` (default: the same as ``values``).
    quick_values: tuple[Any, ...] | None = None
    #: Simulated time per point: FAST'08 §3.1 "each measurement runs for 20 seconds".
    duration: str = "20s"
    #: Simulated time per point with ``--quick`` (tests and CI, not for conclusions).
    quick_duration: str = "1s"
    #: Runs per point when ``--seeds`` is not given.
    seeds: int = 1
    #: Scenario fields every point gets when several seeds are run, so that runs differ:
    #: a FAST'08 run has no randomness, so by default each server's think time is drawn
    #: from U(0, 3 us) per block, the draw the ns-2 and ns-3 comparisons make
    #: (docs/model.md, "Single runs are chaotic"). Not random tie order, which moves the
    #: collapse systematically (docs/model.md, "Tie order"). Empty where the workload
    #: itself draws at random per seed (Osada et al.'s active servers and UDP phases).
    seed_variation: Mapping[str, Any] = field(default_factory=lambda: dict(SEED_VARIATION))
    plot: Plot = field(default_factory=Plot)
    #: Optional extra text printed after the run (e.g. Table 3 next to the paper's).
    report: Callable[[pd.DataFrame], str] | None = None
    #: Per-port series each point samples and reduces to extra columns (``Observe``); such
    #: points are simulated every time (the result store keeps result rows only).
    observe: Observe | None = None

    def axis_values(self, quick: bool, series: Series | None = None) -> tuple[Any, ...]:
        """The sweep of ``series`` (or of the experiment), full or ``--quick``."""
        values, fast = self.values, self.quick_values
        if series is not None and series.values is not None:
            values, fast = series.values, series.quick_values
        return tuple(fast) if quick and fast else tuple(values)

    def point_duration(self, quick: bool) -> str:
        return self.quick_duration if quick else self.duration

    def run_text(self, quick: bool) -> str:
        """How long each point runs, in words: blocks, one-shot flows until delivered, or a
        simulated time."""
        if self.base.get("blocks"):
            return plural(self.base["blocks"], "block")
        if self.axis == "duration":
            return "each stopped at its point's time"
        if self.base.get("duration"):
            return f"{self.base['duration']} simulated"
        if self.base.get("workload") in ("incast", "shuffle", "permutation"):
            return "until its flows are delivered"
        return f"{self.point_duration(quick)} simulated"

    def panels(self) -> list[str]:
        """Panel names in the order their first series appears."""
        return list(dict.fromkeys(s.panel for s in self.series))
