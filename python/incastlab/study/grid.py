"""The sweep grammar: ``FIELD=VALUES`` over any scenario field, parsed by the schema.

    servers=1,2,4..64          a list; ``A..B`` doubles from A (A, 2A, 4A, ...) and ends at B
    buffer=32KiB..256KiB       units work wherever the field takes them
    rto_min=200ms,1ms,200us
    servers=4..48+4            ``A..B+S``: from A in steps of S up to B (4, 8, ..., 48)
    rto_min=100us..100ms*10    ``A..B*F``: from A, times F each step, up to B (100us, 1ms, 10ms, 100ms)
    tcp=reno,newreno,sack      words and on/off flags are lists only

A range always includes both ends: ``3..64`` is 3, 6, 12, 24, 48, 64. Doubling is the
default because incast studies double (FAST'08 Fig. 4 and the reproductions' server
counts: 1, 2, 4, ..., 64). Every value is parsed by its field's schema entry
(``incastlab.schema``), so a refusal names the field and what it allows.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any, Iterable, Mapping

from ..errors import UsageError
from ..schema import BY_PUBLIC, FIELDS, REAL_UNITS, FieldSpec

#: A range longer than this is a typo (``1..1000000+1``), not a study.
MAX_RANGE_VALUES = 10_000
_RANGE = re.compile(r"^(?P<a>[^.]+?)\.\.(?P<b>[^+*]+?)(?:(?P<op>[+*])(?P<step>.+))?$")
_RANGED_UNITS = ("count", "bytes", "bits_per_second", "picoseconds", *REAL_UNITS)


def field_names_text() -> str:
    return ", ".join(f.public for f in FIELDS)


def lookup(name: str, param: str, item: Any) -> FieldSpec:
    """The schema field ``name`` (``rto-min`` and ``rto_min`` alike), or a UsageError
    naming ``param``, the item and every field."""
    f = BY_PUBLIC.get(str(name).strip().replace("-", "_"))
    if f is None:
        raise UsageError(param, item, f"FIELD=VALUES with FIELD a scenario field: {field_names_text()}")
    return f


def parse_assignment(item: str, param: str = "--grid") -> tuple[FieldSpec, list[Any]]:
    """``"servers=1,2,4..64"`` as (the field, its values in public units)."""
    name, sep, text = item.partition("=")
    if not sep or not name.strip():
        raise UsageError(param, item, f"FIELD=VALUES, e.g. servers=1,2,4..64 (FIELD: {field_names_text()})")
    f = lookup(name, param, item)
    return f, parse_values(f, text, param)


def parse_values(f: FieldSpec, raw: Any, param: str = "--grid") -> list[Any]:
    """Values of ``f``: text in the grammar (``"1,2,4..64"``), a list of such items or
    numbers (a study file's ``[1, 2, "4..64"]``), or one value."""
    items: list[Any]
    if isinstance(raw, str):
        items = [t for t in (s.strip() for s in raw.split(","))]
    elif isinstance(raw, (list, tuple)):
        items = [t.strip() if isinstance(t, str) else t for t in raw]
    else:
        items = [raw]
    if not items or any(t == "" for t in items):
        raise UsageError(f"{param} {f.public}", raw, f"a comma-separated list of values: {f.allowed()}")
    out: list[Any] = []
    for item in items:
        m = _RANGE.match(item) if isinstance(item, str) else None
        values = _expand(f, m, item, param) if m else [_parse_one(f, item, param)]
        out.extend(v for v in values if v not in out)
    return out


def _parse_one(f: FieldSpec, item: Any, param: str) -> Any:
    try:
        return f.parse(item)
    except UsageError as e:
        raise UsageError(f"{param} {f.public}", item, e.allowed) from None


def _expand(f: FieldSpec, m: re.Match, item: str, param: str) -> list[Any]:
    """A range ``A..B``, ``A..B+S`` or ``A..B*F`` of ``f``'s values, both ends included."""
    where = f"{param} {f.public}"
    if f.unit not in _RANGED_UNITS:
        raise UsageError(where, item, f"a list of values (a range needs numbers): {f.allowed()}")
    a, b = (_exact(f, _parse_one(f, m[k], param)) for k in ("a", "b"))
    op, step_text = m["op"] or "*", m["step"]
    if op == "*":
        try:
            factor = float(step_text) if step_text is not None else 2.0
        except ValueError:
            raise UsageError(where, item, "A..B*F with F a number above 1, e.g. 100us..100ms*10") from None
        if not factor > 1 or not math.isfinite(factor):
            raise UsageError(where, item, "A..B*F with F a number above 1, e.g. 100us..100ms*10")
        if a <= 0:
            raise UsageError(where, item, "a multiplying range that starts above 0 (or A..B+S for steps)")
    else:
        step = _exact(f, _parse_one(f, step_text, param))
        if not step > 0:
            raise UsageError(where, item, "A..B+S with S above 0")
    if b < a:
        raise UsageError(where, item, "a range A..B with A at most B")
    values, v = [], a
    while v < b:
        values.append(v)
        if len(values) > MAX_RANGE_VALUES:
            raise UsageError(where, item, f"a range of at most {MAX_RANGE_VALUES} values")
        nxt = v * factor if op == "*" else v + step
        v = round(nxt) if isinstance(a, int) and isinstance(nxt, float) and f.unit not in REAL_UNITS else nxt
        if f.unit in REAL_UNITS:
            v = round(v, 12)  # 0.1 + 0.2 is 0.3 here
    values.append(b)
    return [_parse_one(f, _public(f, x), param) for x in values]


def _exact(f: FieldSpec, public: Any) -> int | float:
    """A value to do range arithmetic on exactly: durations in whole picoseconds."""
    return f.to_native(public) if f.unit == "picoseconds" else public


def _public(f: FieldSpec, exact: int | float) -> Any:
    return f.to_public(exact) if f.unit == "picoseconds" else exact


def parse_grid(items: Iterable[str], param: str = "--grid") -> dict[str, list[Any]]:
    """``--grid`` items as {field: values}, in the order given; a field given twice is refused."""
    grid: dict[str, list[Any]] = {}
    for item in items:
        f, values = parse_assignment(item, param)
        if f.public in grid:
            raise UsageError(param, item, f"each field once ({f.public} is already in the grid)")
        grid[f.public] = values
    return grid


def grid_from_mapping(mapping: Mapping[str, Any], param: str) -> dict[str, list[Any]]:
    """A grid given as a mapping (Python, a study file's [grid]) as {field: values}."""
    out: dict[str, list[Any]] = {}
    for name, raw in mapping.items():
        f = lookup(name, param, f"{name}=...")
        if f.public in out:
            raise UsageError(param, name, f"each field once ({f.public} is already in the grid)")
        out[f.public] = parse_values(f, raw, param)
    return out


def combinations(grid: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid's values; the last field varies fastest."""
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def formatted(grid: Mapping[str, list[Any]]) -> dict[str, list[str]]:
    """The grid's values as people write them (for metadata and reports)."""
    return {name: [BY_PUBLIC[name].format(v) for v in values] for name, values in grid.items()}
