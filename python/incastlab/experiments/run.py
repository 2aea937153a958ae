"""Run a reproduction: every (series, axis value, seed) point, the checks, the files.

Data flows one way (DESIGN.md): Experiment -> Scenarios -> simulated points (a
DataFrame) -> checks -> DIR/NAME.csv, DIR/NAME.png, DIR/NAME.checks.json, each written
atomically.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from .. import sim
from ..errors import EnvironmentProblem, UsageError
from ..outfiles import together, write_csv, write_text
from ..scenario import Scenario
from .figure import draw
from .spec import Experiment, Series

# The four keys of every entry of NAME.checks.json, in this order.
CHECK_KEYS = ("claim", "source", "measured", "pass")


@dataclass(frozen=True)
class Point:
    series: Series
    x: Any
    seed: int
    scenario: Scenario


def parse_overrides(exp: Experiment, items: list[str]) -> dict[str, str]:
    """``--set FIELD=VALUE`` items as Scenario fields for every point of ``exp``; each is
    checked on its own (UsageError naming ``--set``) before anything runs."""
    out: dict[str, str] = {}
    for item in items:
        field, sep, value = item.partition("=")
        field = field.strip().replace("-", "_")
        if not sep or field not in Scenario.model_fields:
            raise UsageError("--set", item, "FIELD=VALUE with FIELD a scenario field, e.g. condition_i=delivered "
                             "(incastlab simulate --help lists them as flags)")
        if field in (exp.axis, "seed"):
            raise UsageError("--set", item, f"a field other than the axis ({exp.axis}) and seed")
        # a field the series set is what their labels name: changing it under them would
        # run every series with one value and keep the old labels (two "different" arms
        # of a comparison, one run); refused, naming the series
        defining = [s.label for s in exp.series if field in s.params]
        if defining:
            shown = ", ".join(repr(x) for x in defining[:3]) + (f" and {len(defining) - 3} more" if len(defining) > 3
                                                                  else "")
            raise UsageError("--set", item, f"a field the series are not defined by ({field} is set by the series "
                             f"{shown}); `incastlab sweep` varies any field freely")
        try:
            Scenario(**{"servers": 1, field: value})
        except UsageError as e:
            raise UsageError("--set", item, f"a valid {field} ({e.allowed})") from None
        out[field] = value
    return out


def points(exp: Experiment, quick: bool = False, seeds: int | None = None,
           overrides: dict[str, str] | None = None) -> list[Point]:
    """The simulated points of ``exp``, with ``overrides`` (see ``parse_overrides``) on
    every one; refuses (EnvironmentProblem) a knob this build lacks."""
    runs = exp.seeds if seeds is None else seeds
    out = []
    for s in exp.series:
        for x in exp.axis_values(quick, s):
            for seed in range(1, runs + 1):
                fields = {**exp.base, **s.params, **(overrides or {}), exp.axis: x, "seed": seed}
                # (one-shot flows run until they are delivered)
                if "blocks" not in fields and fields.get("workload") not in ("incast", "shuffle", "permutation"):
                    fields.setdefault("duration", exp.point_duration(quick))
                if runs > 1:
                    for k, v in exp.seed_variation.items():
                        fields.setdefault(k, v)
                try:
                    scn = Scenario(**fields)
                except UsageError as e:
                    raise EnvironmentProblem(
                        f"{exp.name}: series {s.label!r} needs a scenario this build cannot express ({e})"
                    ) from None
                out.append(Point(s, x, seed, scn))
    return out


def simulate(exp: Experiment, quick: bool = False, jobs: int | None = None, seeds: int | None = None,
             progress: sim.TickFn | None = None,
             overrides: dict[str, str] | None = None, store: Any = None,
             announce: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Every point of ``exp`` as one DataFrame row: series, panel, x, seed, then the result fields.

    With a ``store`` (``incastlab.study.store.ResultStore`` or its directory), the points
    it has are read from it and the others are simulated and added, as ``incastlab sweep``
    does; rows then also carry the store's columns (``point_key``, ``from_store``, ...)."""
    from ..study import api

    pts = points(exp, quick, seeds, overrides)
    if exp.observe is not None:
        return _labelled(pts, _observed(exp, pts, jobs, progress))
    try:
        outcome = api.run_scenarios([p.scenario for p in pts], store=store, jobs=jobs, progress=progress,
                                    announce=announce, meta={"reproduction": exp.name})
        df = api.frame(outcome.rows)
    except UsageError as e:
        raise EnvironmentProblem(f"{exp.name}: the simulator refused a point ({e})") from None
    return _labelled(pts, df)


def _observed(exp: Experiment, pts: list[Point], jobs: int | None, progress) -> pd.DataFrame:
    """Simulate ``pts`` sampling every port (``exp.observe``); each row gets the observed
    columns. The store is not used: it keeps result rows, not port series."""
    from ..recording import Recording
    from ..units import parse_duration_ps

    rec = Recording(port_util_interval_ps=parse_duration_ps(exp.observe.interval, "observe.interval"),
                    losses=exp.observe.truth)

    def reduce(result: dict, observed) -> dict:  # in the worker: the series is dropped at once
        return exp.observe.columns(sim.SimResult(result, port_util=observed.port_util, truth=observed.truth))

    try:
        results = sim.run_points([p.scenario for p in pts], jobs=jobs, progress=progress,
                                 recordings=[rec] * len(pts), reduce=reduce)
    except UsageError as e:
        raise EnvironmentProblem(f"{exp.name}: the simulator refused a point ({e})") from None
    return sim.to_frame(results)


def _labelled(pts: list[Point], df: pd.DataFrame) -> pd.DataFrame:
    """``df`` (one row per point, in order) with ``series``, ``panel``, ``x`` and ``seed`` first."""
    labels = pd.DataFrame({
        "series": [p.series.label for p in pts],
        "panel": [p.series.panel for p in pts],
        "x": [p.x for p in pts],
    })
    # the core echoes the seed; our own label is the fallback for a core that does not
    df = df.drop(columns=[c for c in labels if c in df])
    if "seed" not in df:
        df.insert(0, "seed", [p.seed for p in pts])
    return pd.concat([labels, df], axis=1)


def evaluate(exp: Experiment, df: pd.DataFrame) -> list[dict[str, Any]]:
    """Each check as ``{claim, source, measured, pass}``.

    A check that needs a result field this build of the core does not report fails and
    says so, rather than stopping the other checks."""
    out = []
    for c in exp.checks:
        try:
            measured, ok = c.measure(df)
        except KeyError as e:
            measured, ok = f"could not measure: {e.args[0] if e.args else e} missing from the results", False
        out.append({"claim": c.claim, "source": c.source, "measured": str(measured), "pass": bool(ok)})
    return out


def csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with list-valued cells (``dart_histogram``) as JSON text, for the CSV."""
    out = df.copy()
    for col in out.columns:
        if out[col].map(lambda v: isinstance(v, (list, tuple))).any():
            out[col] = out[col].map(json.dumps)
    return out


def write_outputs(exp: Experiment, df: pd.DataFrame, checks: list[dict[str, Any]], out: Path,
                  note: str = "") -> dict[str, Path]:
    """DIR/NAME.csv, DIR/NAME.png and DIR/NAME.checks.json, put in place together."""
    paths = {
        "csv": out / f"{exp.name}.csv",
        "png": out / f"{exp.name}.png",
        "checks": out / f"{exp.name}.checks.json",
    }
    text = json.dumps([{k: c[k] for k in CHECK_KEYS} for c in checks], indent=2, allow_nan=False,
                      default=_plain) + "\n"
    with together():  # the three files appear together or not at all (docs/faults.md)
        write_csv(csv_frame(df), paths["csv"], "--out")
        draw(exp, df, paths["png"], note=note)
        write_text(paths["checks"], text, "--out")
    return paths


def _plain(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    raise TypeError(f"not JSON serializable: {type(v).__name__}")
