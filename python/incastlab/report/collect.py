"""What a report shows, read from a directory: sweeps, reproductions and result stores.

- a sweep: ``NAME.study.json`` (written by ``incastlab sweep``) and the CSV it names;
- a reproduction: ``NAME.checks.json`` with ``NAME.csv`` and ``NAME.png`` (``incastlab reproduce``);
- a store: a directory holding ``incastlab-store.json`` (DIR itself or any directory below it).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

import pandas as pd

from ..errors import UsageError
from ..study.store import MARKER, DamagedFileWarning, ResultStore

T = TypeVar("T")


@dataclass
class SweepData:
    name: str
    meta: dict[str, Any]
    df: pd.DataFrame


@dataclass
class ReproductionData:
    name: str
    checks: list[dict[str, Any]]
    png: Path | None
    df: pd.DataFrame | None
    title: str = ""
    source: str = ""
    summary: str = ""


@dataclass
class StoreData:
    path: Path
    df: pd.DataFrame
    files: int
    journals: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Contents:
    root: Path
    sweeps: list[SweepData]
    reproductions: list[ReproductionData]
    stores: list[StoreData]

    def empty(self) -> bool:
        return not (self.sweeps or self.reproductions or self.stores)


def collect(root: str | Path, param: str = "DIR") -> Contents:
    """Everything a report can show under ``root``."""
    base = Path(root)
    try:
        is_dir = base.is_dir()
    except (OSError, ValueError):  # a NUL byte, a name too long
        is_dir = False
    if not is_dir:
        raise UsageError(param, str(root), "an output directory of incastlab sweep/reproduce, or a result store")
    sweeps = [_readable(_sweep, p) for p in sorted(base.glob("*.study.json"))]
    reproductions = [_readable(_reproduction, p) for p in sorted(base.glob("*.checks.json"))]
    store_dirs = sorted({m.parent for m in base.rglob(MARKER)})
    stores = [_readable(_store, d) for d in store_dirs]
    contents = Contents(base, [s for s in sweeps if s], [r for r in reproductions if r], [s for s in stores if s])
    if contents.empty():
        raise UsageError(param, str(root), "a directory with NAME.study.json (incastlab sweep), NAME.checks.json "
                         f"(incastlab reproduce) or a result store ({MARKER}); this one has none")
    return contents


class Damaged(ValueError):
    """A file of the directory does not hold what its name says."""


def _readable(read: Callable[[Path], T], path: Path) -> T | None:
    """``read(path)``, or None with a one-line warning when a file it reads is damaged
    (cut short, garbled, hand-edited): one bad file does not stop the page."""
    try:
        if not path.is_dir() and not path.is_file():  # a FIFO would block the report forever
            raise Damaged("not a regular file")
        return read(path)
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError) as e:
        why = " ".join(str(e).split())[:160] or type(e).__name__
        warnings.warn(DamagedFileWarning(f"report: skipping {path}: {why}"), stacklevel=2)
        return None


def _json(path: Path, kind: type) -> Any:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise Damaged(f"not JSON ({e})") from None
    if not isinstance(value, kind):
        raise Damaged(f"not a JSON {'object' if kind is dict else 'list'}")
    return value


def _csv(path: Path) -> pd.DataFrame | None:
    if not path.exists():
        return None
    if not path.is_file():
        raise Damaged(f"{path.name} is not a regular file")
    try:
        return pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise Damaged(f"{path.name} does not read as CSV ({' '.join(str(e).split())[:100]})") from None


def _sweep(path: Path) -> SweepData | None:
    meta = _json(path, dict)
    if meta.get("kind") != "incastlab sweep":
        return None
    for key, kind in (("study", dict), ("summary", dict), ("argv", list)):
        if not isinstance(meta.get(key, kind()), kind):
            raise Damaged(f"its {key!r} is not a JSON {'object' if kind is dict else 'list'}")
    csv = path.with_name(str(meta.get("csv") or path.name.replace(".study.json", ".csv")))
    df = _csv(csv)
    return SweepData(str(meta.get("name") or path.name.removesuffix(".study.json")), meta,
                     df if df is not None else pd.DataFrame())


def _reproduction(path: Path) -> ReproductionData:
    from .. import experiments

    name = path.name.removesuffix(".checks.json")
    csv, png = path.with_name(f"{name}.csv"), path.with_name(f"{name}.png")
    checks = _json(path, list)
    if not all(isinstance(c, dict) for c in checks):
        raise Damaged("its checks are not JSON objects")
    data = ReproductionData(name, checks, png if png.is_file() else None, _csv(csv))
    if name in experiments.REGISTRY:
        exp = experiments.load(name)
        data.title, data.source, data.summary = exp.title, exp.source, exp.summary
    return data


def _store(path: Path) -> StoreData:
    store = ResultStore(path, "DIR", readonly=True)  # reporting only reads
    return StoreData(path, store.read(), len(store.files()), store.journals())
