"""A study: shared fields, a grid, named series and seeds; from the command line or a TOML file.

A study file, every key checked against the scenario schema::

    title = "Buffer against RTOmin"   # optional
    seeds = 3                         # optional: seed = 1, 2, 3 at every point

    [base]                            # fields every point shares
    duration = "2s"

    [grid]                            # crossed: every combination, the last varying fastest
    servers = "1..64"                 # the --grid grammar, or a list: [1, 2, "4..64"]
    buffer = ["32KiB", "64KiB"]

    [[series]]                        # optional: named series, each on top of [base]
    label = "RTOmin 200 ms"
    rto_min = "200ms"

    [[series]]
    label = "RTOmin 200 us"
    rto_min = "200us"
    timer_granularity = "100us"

    [plot]                            # optional: what the report draws
    x = "servers"                     # a grid field (default: the first numeric one that varies)
    y = "goodput_mbps"                # a result column (default: goodput_mbps)
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import UsageError
from ..schema import BY_PUBLIC
from . import grid as grammar

if TYPE_CHECKING:
    from ..scenario import Scenario

TOP_KEYS = ("title", "seeds", "base", "grid", "series", "plot")
MAX_SEEDS = 100_000
# Fields whose values are words or switches: no x axis to plot against.
WORD_UNITS = ("choice", "flag", "weights", "durations")


@dataclass(frozen=True)
class Series:
    label: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StudyPoint:
    series: str
    seed: int | None
    values: Mapping[str, Any]  # the grid values of this point (public units)
    scenario: Scenario


@dataclass(frozen=True)
class Study:
    """What to simulate: ``base`` fields, a ``grid`` crossed, ``series`` on top, ``seeds`` runs."""

    name: str = "sweep"
    title: str = ""
    base: Mapping[str, Any] = field(default_factory=dict)
    grid: Mapping[str, list[Any]] = field(default_factory=dict)
    series: tuple[Series, ...] = (Series(""),)
    seeds: int | None = None
    plot_x: str | None = None
    plot_y: str = "goodput_mbps"

    def points(self) -> list[StudyPoint]:
        """Every point: series, then grid combinations (last field fastest), then seeds."""
        from ..scenario import Scenario

        seeds = [None] if self.seeds is None else list(range(1, self.seeds + 1))
        out = []
        for s in self.series:
            for combo in grammar.combinations(self.grid):
                for seed in seeds:
                    fields = {**self.base, **s.params, **combo}
                    if seed is not None:
                        fields["seed"] = seed
                    try:
                        scn = Scenario(**fields)
                    except UsageError as e:
                        at = ", ".join(f"{k}={BY_PUBLIC[k].format(v)}" for k, v in combo.items())
                        where = (f"series {s.label!r}, " if s.label else "") + at
                        raise UsageError(e.param, e.value, f"{e.allowed} (at the point {where})") from None
                    out.append(StudyPoint(s.label, seed, combo, scn))
        return out

    def x_field(self) -> str | None:
        """The plot's x axis: ``[plot] x``, else the first grid field with a number for a
        value that varies (``preset=rfc,fast08 servers=1..64`` plots against servers, one
        line per preset), else the first grid field."""
        if self.plot_x is not None:
            return self.plot_x
        numeric = [k for k, values in self.grid.items()
                   if k in BY_PUBLIC and BY_PUBLIC[k].unit not in WORD_UNITS and len(values) > 1]
        return next(iter(numeric or self.grid), None)

    def describe(self) -> dict[str, Any]:
        """The study as JSON-able text in the units people write (metadata, the report)."""
        fmt = lambda params: {k: BY_PUBLIC[k].format(v) for k, v in params.items()}  # noqa: E731
        return {
            "name": self.name, "title": self.title, "base": fmt(self.base), "grid": grammar.formatted(self.grid),
            "series": [{"label": s.label, **fmt(s.params)} for s in self.series], "seeds": self.seeds,
            "plot": {"x": self.x_field(), "y": self.plot_y},
            "columns": {k: BY_PUBLIC[k].result_name for k in [*self.grid, *self.base]
                        + [p for s in self.series for p in s.params]},
        }


#: A study file lists fields and values: anything this large is not one.
MAX_STUDY_BYTES = 2**20


def from_grid(items: list[str], seeds: int | None = None, name: str = "sweep") -> Study:
    """A study from ``--grid`` items and ``--seeds``."""
    g = grammar.parse_grid(items)
    return _checked(Study(name=name, grid=g, seeds=_seeds(seeds, "--seeds")), "--grid")


def from_mapping(grid: Mapping[str, Any] | None = None, base: Mapping[str, Any] | None = None,
                 seeds: int | None = None, series: Mapping[str, Mapping[str, Any]] | None = None,
                 name: str = "sweep", title: str = "") -> Study:
    """A study from Python: ``grid={"servers": "1..64", "buffer": ["32KiB", "64KiB"]}``,
    ``base={"duration": "2s"}``, ``series={"label": {fields}}``."""
    g = grammar.grid_from_mapping(grid or {}, "grid")
    b = _fields(base or {}, "base")
    ss = tuple(Series(label, _fields(params, f"series {label!r}")) for label, params in (series or {}).items())
    return _checked(Study(name=name, title=title, base=b, grid=g, series=ss or (Series(""),),
                          seeds=_seeds(seeds, "seeds")), "grid")


def load(path: str | os.PathLike, seeds: int | None = None) -> Study:
    """A study file (TOML, see the module docstring); ``seeds`` overrides the file's."""
    p = Path(path)
    param = str(p)
    try:
        regular = not p.exists() or p.is_file()
        too_big = regular and p.exists() and p.stat().st_size > MAX_STUDY_BYTES
    except (OSError, ValueError):
        regular, too_big = True, False  # read_text below says what is wrong
    if not regular:  # a FIFO would block, /dev/zero fill the memory
        raise UsageError("--study", param, "a study file (TOML), not a directory, device or FIFO")
    if too_big:
        raise UsageError("--study", param, f"a study file of at most {MAX_STUDY_BYTES // 2**20} MiB")
    try:
        doc = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise UsageError("--study", param, "an existing study file (TOML)") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:  # ValueError: a NUL byte in the path
        raise UsageError("--study", param, f"a readable study file ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise UsageError("--study", param, f"a TOML file ({e})") from None
    for key in doc:
        if key not in TOP_KEYS:
            raise UsageError(f"{param}: {key}", doc[key], "one of the keys " + ", ".join(TOP_KEYS))
    title = doc.get("title", "")
    if not isinstance(title, str):
        raise UsageError(f"{param}: title", title, "text")
    base = _fields(_no_bare_durations(_table(doc, "base", param), f"{param}: [base]"), f"{param}: [base]")
    g = grammar.grid_from_mapping(_no_bare_durations(_table(doc, "grid", param), f"{param}: [grid]"),
                                  f"{param}: [grid]")
    raw_series = doc.get("series", [])
    if not isinstance(raw_series, list) or not all(isinstance(s, dict) for s in raw_series):
        raise UsageError(f"{param}: series", raw_series, "[[series]] tables, each with a label and fields")
    series = []
    for i, s in enumerate(raw_series, 1):
        label = s.get("label")
        if not isinstance(label, str) or not label.strip():
            raise UsageError(f"{param}: series {i}", s, "a table with label = \"...\" and scenario fields")
        where = f"{param}: [[series]] {label!r}"
        series.append(Series(label, _fields(_no_bare_durations({k: v for k, v in s.items() if k != "label"}, where),
                                            where)))
    if len({s.label for s in series}) != len(series):
        raise UsageError(f"{param}: series", [s.label for s in series], "series with distinct labels")
    plot = _table(doc, "plot", param)
    for key in plot:
        if key not in ("x", "y"):
            raise UsageError(f"{param}: [plot] {key}", plot[key], "x (a grid field) or y (a result column)")
    study = Study(name=p.stem, title=title, base=base, grid=g, series=tuple(series) or (Series(""),),
                  seeds=_seeds(seeds if seeds is not None else doc.get("seeds"), f"{param}: seeds"),
                  plot_x=plot.get("x"), plot_y=plot.get("y", "goodput_mbps"))
    if study.plot_x is not None and study.plot_x not in g:
        raise UsageError(f"{param}: [plot] x", study.plot_x, "a field of the grid: " + ", ".join(g))
    if not isinstance(study.plot_y, str):
        raise UsageError(f"{param}: [plot] y", study.plot_y, "a result column such as goodput_mbps")
    return _checked(study, f"{param}: [grid]")


def _no_bare_durations(mapping: Mapping[str, Any], param: str) -> Mapping[str, Any]:
    """Refuse a TOML number (not 0) for a duration field: a file is written text, and
    ``timer_granularity = 100`` would be a 100 s clock (units.parse_duration_ps)."""
    for name, raw in mapping.items():
        f = BY_PUBLIC.get(str(name).replace("-", "_"))
        if f is None or f.unit != "picoseconds":
            continue
        for v in raw if isinstance(raw, list) else [raw]:
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v != 0:
                raise UsageError(f"{param} {f.public}", v, f"a duration as text with its unit, e.g. \"{v:g}us\", "
                                 f"\"{v:g}ms\" or \"{v:g}s\" (a bare number is refused in a study file)")
    return mapping


def _table(doc: Mapping[str, Any], key: str, param: str) -> Mapping[str, Any]:
    t = doc.get(key, {})
    if not isinstance(t, dict):
        raise UsageError(f"{param}: {key}", t, f"a [{key}] table")
    return t


def _fields(mapping: Mapping[str, Any], param: str) -> dict[str, Any]:
    """Scenario fields with one value each, parsed by the schema."""
    out = {}
    for name, raw in mapping.items():
        f = grammar.lookup(name, param, f"{name}={raw!r}")
        try:
            out[f.public] = f.parse(raw)
        except UsageError as e:
            raise UsageError(f"{param} {f.public}", raw, e.allowed) from None
    return out


def _seeds(seeds: Any, param: str) -> int | None:
    if seeds is None:
        return None
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= MAX_SEEDS:
        raise UsageError(param, seeds, f"a whole number of seeds from 1 to {MAX_SEEDS}")
    return seeds


def _checked(study: Study, param: str) -> Study:
    """Refuse a study whose fields collide: a field both varied and fixed, or seeds twice."""
    if not study.grid:
        raise UsageError(param, None, "at least one FIELD=VALUES, e.g. servers=1,2,4..64")
    if study.seeds is not None and "seed" in study.grid:
        raise UsageError(param, "seed=...", "either a seed field in the grid or a number of seeds, not both")
    fixed = set(study.base) | {p for s in study.series for p in s.params}
    both = [f for f in study.grid if f in fixed]
    if both:
        raise UsageError(param, both[0], "a field varied by the grid or fixed by base/series, not both")
    return study
