"""The scenario schema, as the Rust core defines it (``crates/sim/src/schema.rs``).

Every scenario field is written down once, in the core: its core name (``rto_min_ps``),
the name people write (``rto_min``, ``--rto-min``), its unit, its range, its default
and a one-line doc. This module reads the copy committed beside it
(``scenario_schema.json``, so ``import incastlab`` needs no build) and gives each field
the edge work the core leaves to Python: parsing ``200us`` and ``0.1%``, refusing a
value outside its own range in the units its user wrote, and converting between the
public value (SI: bytes, bit/s, seconds) and the core's (picoseconds).

``python -m incastlab.schema_gen --write`` regenerates the committed copy and the docs table
(``docs/scenario-fields.md``) from the built core; ``tests/test_schema.py`` fails when
either is stale.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import units
from .errors import UsageError

SCHEMA_PATH = Path(__file__).with_name("scenario_schema.json")
DOCS_TABLE_PATH = Path(__file__).resolve().parents[2] / "docs" / "scenario-fields.md"

PS_PER_S = 10**12

# What a bare number means, per unit: the SI base unit (bytes, bit/s, seconds).
_METAVAR = {"count": "N", "bytes": "SIZE", "bits_per_second": "RATE", "picoseconds": "TIME",
            "fraction": "FRACTION", "per_second": "PER_S", "flag": "", "choice": "WORD", "weights": "W,W,...",
            "durations": "TIME,TIME,..."}
UNIT_WORDS = {"count": "count", "bytes": "bytes", "bits_per_second": "bit/s", "picoseconds": "seconds",
               "fraction": "fraction", "per_second": "/s", "flag": "on/off", "choice": "word", "weights": "list",
               "durations": "list of seconds"}
# Units whose values are plain real numbers (no unit suffix to parse).
REAL_UNITS = ("fraction", "per_second")

# Words that switch a duration on or off (``delayed_ack="on"`` is Linux's 40 ms minimum
# delayed-ACK timer: 000_315d806dde942a9f.txt §4.2, "Most TCP implementations wait only 40ms").
SWITCHED_ON = {"delayed_ack": 40 * 10**9}
_OFF_WORDS = ("off", "none", "no")
_ON_WORDS = ("on", "yes")


@dataclass(frozen=True)
class FieldSpec:
    """One scenario field of the core's schema, with its edge work."""

    name: str
    public: str
    unit: str
    min: float | int | None
    max: float | int | None
    choices: tuple[str, ...]
    optional: bool
    unset: str
    doc: str
    limit_source: str
    default: Any  # the core's default, in the core's units

    # --- names ---------------------------------------------------------------------

    @property
    def flag(self) -> str:
        """The command-line flag: ``--rto-min``."""
        return "--" + self.public.replace("_", "-")

    @property
    def result_name(self) -> str:
        """The column a result row gives this field under: the core's name, in SI units
        (``rto_min_ps`` -> ``rto_min_s``)."""
        return self.name[:-3] + "_s" if self.name.endswith("_ps") else self.name

    @property
    def metavar(self) -> str:
        return _METAVAR[self.unit]

    # --- values ----------------------------------------------------------------------

    @property
    def public_default(self) -> Any:
        """The default in public units (None where it depends on other fields)."""
        return None if self.default is None else self.to_public(self.default)

    def to_public(self, native: Any) -> Any:
        """The core's value in public units: picoseconds become seconds, a list of weights
        or durations its text (``[3, 1]`` -> ``"3,1"``, ``[20_000_000, 0]`` -> ``"20us,0s"``:
        one value in a result column)."""
        if native is None or self.unit not in ("picoseconds", "weights", "durations"):
            return native
        if self.unit == "weights":
            return ",".join(str(w) for w in native)
        if self.unit == "durations":
            return ",".join(units.exact_duration(ps) for ps in native)
        return native / PS_PER_S

    def to_native(self, public: Any) -> Any:
        """A public value in the core's units: seconds become whole picoseconds (exact for
        any duration people write, up to ~2250 s to the picosecond), weights and durations a
        list."""
        if public is None or self.unit not in ("picoseconds", "weights", "durations"):
            return public
        if self.unit == "weights":
            return [int(w) for w in public.split(",")]
        if self.unit == "durations":
            return [units.parse_duration_ps(d, self.public, allow_zero=True) for d in public.split(",")]
        return round(public * PS_PER_S)

    def format(self, public: Any) -> str:
        """A public value as people write it, exactly: ``"200us"``, ``"32KiB"``, ``"1Gbps"``."""
        if public is None:
            return "none"
        if self.unit == "picoseconds":
            return units.exact_duration(self.to_native(public))
        if self.unit == "bytes":
            return units.exact_size(public)
        if self.unit == "bits_per_second":
            return units.exact_rate(public)
        if self.unit == "flag":
            return "on" if public else "off"
        return str(public)

    def dump(self, public: Any) -> Any:
        """The value as ``Scenario.model_dump`` writes it: quantities as exact text (so
        ``Scenario(**s.model_dump()) == s``), everything else as is."""
        if public is None or self.unit not in ("picoseconds", "bytes", "bits_per_second"):
            return public
        return self.format(public)

    def allowed(self) -> str:
        """What this field allows on its own, in the units people write."""
        if self.unit == "choice":
            text = "one of " + ", ".join(self.choices)
        elif self.unit == "weights":
            text = f"whole numbers of at least {self.min}, one per class, e.g. 3,1"
        elif self.unit == "durations":
            text = (f"durations of {units.exact_duration(self.min)} to {units.exact_duration(self.max)} each, "
                    "e.g. 20us,70us")
        elif self.unit == "flag":
            text = "on or off"
        elif self.unit in REAL_UNITS:
            text = f"a number from {self.min:g} to {self.max:g}"
            text += " per second" if self.unit == "per_second" else ""
        else:
            text = _range_text(self)
        if self.limit_source:
            text += f" ({self.limit_source})"
        return text

    def parse(self, raw: Any) -> Any:
        """``raw`` (text as typed, or a number in the SI base unit) as a public value in
        this field's own range; anything else is a UsageError naming the field."""
        if raw is None:
            if self.optional:
                return None
            raise UsageError(self.public, raw, self.allowed())
        if self.unit == "flag":
            return _parse_flag(self, raw)
        if self.unit == "choice":
            word = str(raw).strip().lower().replace("-", "_")
            if word not in self.choices:
                raise UsageError(self.public, raw, self.allowed())
            return word
        if self.unit in REAL_UNITS:
            return self._in_range(raw, _parse_fraction(self, raw))
        if self.unit == "weights":
            return _parse_weights(self, raw)
        if self.unit == "durations":
            return _parse_durations(self, raw)
        if self.unit == "picoseconds":
            return self.to_public(self._in_range(raw, _parse_duration(self, raw)))
        return self._in_range(raw, _parse_whole(self, raw))

    def _in_range(self, raw: Any, value: Any) -> Any:
        if not (self.min <= value <= self.max):  # also refuses NaN
            # text as typed; a number in the field's unit (5 s of RTT reads "5s", not 5.0)
            shown = raw if isinstance(raw, str) or self.unit in REAL_UNITS else self.format(self.to_public(value))
            raise UsageError(self.public, shown, self.allowed())
        return value


def _range_text(f: FieldSpec) -> str:
    def fmt(n: int) -> str:
        return f.format(f.to_public(n)) if f.unit != "count" else str(n)

    above_zero = f.unit == "picoseconds" and f.min == 1
    unbounded = f.max >= 2**63 or (f.unit == "count" and f.max >= 2**32 - 1)
    if unbounded:
        return "a duration above zero, e.g. 200us or 2s" if above_zero else f"at least {fmt(f.min)}"
    if above_zero:
        return f"above zero, at most {fmt(f.max)}"
    return f"{fmt(f.min)} to {fmt(f.max)}"


def _plain_number(f: FieldSpec, raw: Any) -> Any:
    """numpy and other numbers as int/float; refuse bools, lists, dicts and the like."""
    if isinstance(raw, bool) or not isinstance(raw, (str, numbers.Real)):
        raise UsageError(f.public, raw, f"a number or a quantity with a unit: {f.allowed()}")
    if isinstance(raw, numbers.Integral):
        return int(raw)
    if isinstance(raw, numbers.Real):
        return float(raw)
    return raw


def _parse_whole(f: FieldSpec, raw: Any) -> int:
    v = _plain_number(f, raw)
    allowed = f.allowed()
    if isinstance(v, float):
        if not math.isfinite(v) or not v.is_integer():
            raise UsageError(f.public, raw, f"a whole number: {allowed}")
        return int(v)
    if isinstance(v, int):
        return v
    if f.unit == "bytes":
        return units.parse_size(v, f.public, minimum=0)
    if f.unit == "bits_per_second":
        return units.parse_rate(v, f.public)
    try:
        return int(v.strip())
    except ValueError:
        raise UsageError(f.public, raw, f"a whole number: {allowed}") from None


def _parse_duration(f: FieldSpec, raw: Any) -> int:
    if isinstance(raw, (bool, str)):
        word = str(raw).strip().lower()
        if raw is False or word in _OFF_WORDS:
            if f.min == 0:
                return 0
            raise UsageError(f.public, raw, f.allowed())
        if raw is True or word in _ON_WORDS:
            if f.public in SWITCHED_ON:
                return SWITCHED_ON[f.public]
            raise UsageError(f.public, raw, f.allowed())
    v = _plain_number(f, raw)
    if isinstance(v, float) and not math.isfinite(v):
        raise UsageError(f.public, raw, f.allowed())
    return units.parse_duration_ps(v, f.public, allow_zero=True)


def _parse_fraction(f: FieldSpec, raw: Any) -> float:
    v = _plain_number(f, raw)
    if isinstance(v, str):
        text = v.strip()
        try:
            return float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise UsageError(f.public, raw, f"{f.allowed()}, e.g. 0.5 or 0.1%") from None
    return float(v)


def _parse_list(f: FieldSpec, raw: Any, split: Callable[[str], list[str]], parse_one: Callable[[Any], int],
                text: Callable[[int], str]) -> str:
    """A list field's value, typed as text (``split`` into items) or given as a list, as the
    exact text of its items (``text``), each parsed by ``parse_one`` and in the field's
    range; anything else, or no item, is refused naming the field."""
    if isinstance(raw, str):
        parts = split(raw)
    elif isinstance(raw, (list, tuple)):
        parts = list(raw)
    else:
        raise UsageError(f.public, raw, f.allowed())
    values = []
    for p in parts:
        try:
            v = parse_one(p)
        except UsageError:
            raise UsageError(f.public, raw, f.allowed()) from None
        if not (f.min <= v <= f.max):
            raise UsageError(f.public, raw, f.allowed())
        values.append(v)
    if not values:
        raise UsageError(f.public, raw, f.allowed())
    return ",".join(text(v) for v in values)


def _parse_weights(f: FieldSpec, raw: Any) -> str:
    """``"3,1"``, ``"3:1"`` or a list of whole numbers as the text ``"3,1"``."""
    return _parse_list(f, raw, lambda t: [p.strip() for p in t.replace(":", ",").split(",")],
                       lambda p: _parse_whole(f, p), str)


def _parse_durations(f: FieldSpec, raw: Any) -> str:
    """``"20us,70us"`` or a list of durations (text, or numbers of seconds) as the exact
    text ``"20us,70us"``."""
    def one(p: Any) -> int:
        if isinstance(p, bool) or not isinstance(p, (str, numbers.Real)):
            raise UsageError(f.public, p, f.allowed())
        return units.parse_duration_ps(p, f.public, allow_zero=True)

    return _parse_list(f, raw, lambda t: [p.strip() for p in t.split(",")], one, units.exact_duration)


def _parse_flag(f: FieldSpec, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "on", "yes"):
        return True
    if text in ("0", "false", "off", "no"):
        return False
    raise UsageError(f.public, raw, "on or off")


# --- the schema ------------------------------------------------------------------------


def _field_from_json(d: dict) -> FieldSpec:
    rng = d["range"] if isinstance(d["range"], dict) else {}
    return FieldSpec(name=d["name"], public=d["public"], unit=d["unit"], min=rng.get("min"), max=rng.get("max"),
                     choices=tuple(d["choices"]), optional=d["optional"], unset=d["unset"], doc=d["doc"],
                     limit_source=d["limit_source"], default=d["default"])


def load(text: str | None = None) -> tuple[FieldSpec, ...]:
    """The fields of the committed schema (or of ``text``, the core's JSON)."""
    doc = json.loads(text if text is not None else SCHEMA_PATH.read_text())
    return tuple(_field_from_json(d) for d in doc["fields"])


FIELDS: tuple[FieldSpec, ...] = load()
BY_PUBLIC: dict[str, FieldSpec] = {f.public: f for f in FIELDS}
BY_NAME: dict[str, FieldSpec] = {f.name: f for f in FIELDS}


# --- the presets -----------------------------------------------------------------------


@dataclass(frozen=True)
class PresetSetting:
    """One field a preset sets: the field, its value in public units, where it comes from."""

    field: FieldSpec
    value: Any
    why: str

    @property
    def text(self) -> str:
        """The value as people write it: ``1000B``, ``ns2``, ``on``."""
        return self.field.format(self.value)


@dataclass(frozen=True)
class PresetSpec:
    """A named preset of the core (``crates/sim/src/preset.rs``): the fields it sets where
    a scenario does not; ``host`` says how a front reads the running host instead."""

    name: str
    doc: str
    host: str
    settings: tuple[PresetSetting, ...]

    def values(self) -> dict[str, Any]:
        """The preset's fields as Scenario keywords, in public units."""
        return {s.field.public: s.value for s in self.settings}


def load_presets(text: str | None = None, fields: tuple[FieldSpec, ...] | None = None) -> dict[str, PresetSpec]:
    """The presets of the committed schema (or of ``text``), by name, ``rfc`` first."""
    doc = json.loads(text if text is not None else SCHEMA_PATH.read_text())
    by_name = {f.name: f for f in (fields if fields is not None else load(text))}
    out = {}
    for p in doc["presets"]:
        settings = tuple(PresetSetting(by_name[s["field"]], by_name[s["field"]].to_public(s["value"]), s["why"])
                         for s in p["settings"])
        out[p["name"]] = PresetSpec(p["name"], p["doc"], p["host"], settings)
    return out


PRESETS: dict[str, PresetSpec] = load_presets(fields=FIELDS)
