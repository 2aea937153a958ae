"""What a report shows, read from a directory: sweeps, reproductions and result stores.

- a sweep: ``NAME.study.json`` (written by ``incastlab sweep``) and the CSV it names;
- a reproduction: ``NAME.checks.json`` with ``NAME.csv`` and ``NAME.png`` (``incastlab reproduce``);
- a store: a directory holding ``incastlab-store.json`` (DIR itself or any directory below it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import UsageError
from ..study.store import MARKER, ResultStore


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
    sweeps = [_sweep(p) for p in sorted(base.glob("*.study.json"))]
    reproductions = [_reproduction(p) for p in sorted(base.glob("*.checks.json"))]
    store_dirs = sorted({m.parent for m in base.rglob(MARKER)})
    stores = [_store(d) for d in store_dirs]
    contents = Contents(base, [s for s in sweeps if s], [r for r in reproductions if r], stores)
    if contents.empty():
        raise UsageError(param, str(root), "a directory with NAME.study.json (incastlab sweep), NAME.checks.json "
                         f"(incastlab reproduce) or a result store ({MARKER}); this one has none")
    return contents


def _sweep(path: Path) -> SweepData | None:
    meta = json.loads(path.read_text())
    if meta.get("kind") != "incastlab sweep":
        return None
    csv = path.with_name(meta.get("csv") or path.name.replace(".study.json", ".csv"))
    df = pd.read_csv(csv) if csv.exists() else pd.DataFrame()
    return SweepData(meta.get("name") or path.name.removesuffix(".study.json"), meta, df)


def _reproduction(path: Path) -> ReproductionData:
    from .. import experiments

    name = path.name.removesuffix(".checks.json")
    csv, png = path.with_name(f"{name}.csv"), path.with_name(f"{name}.png")
    data = ReproductionData(name, json.loads(path.read_text()), png if png.exists() else None,
                            pd.read_csv(csv) if csv.exists() else None)
    if name in experiments.REGISTRY:
        exp = experiments.load(name)
        data.title, data.source, data.summary = exp.title, exp.source, exp.summary
    return data


def _store(path: Path) -> StoreData:
    store = ResultStore(path, "DIR")
    return StoreData(path, store.read(), len(store.files()), store.journals())
