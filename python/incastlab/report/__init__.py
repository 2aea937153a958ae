"""``incastlab report DIR``: one static HTML page of a study (docs/sweep.md, "Report").

The page stands alone (figures embedded as PNG data, no script, no network): for each
sweep its figure, its tables and its metadata (grid, run, versions); for each
reproduction its figure and the source's claims with what we measured; for each result
store what it holds, by core, and its runs. ``screenshot`` renders it in headless
Chromium, which is how the tests and the docs look at it.
"""

from __future__ import annotations

import json
import platform
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from .. import __version__
from ..outfiles import write_atomically
from ..experiments.sources import cite
from ..schema import FIELDS
from ..study.store import DamagedFileWarning
from ..study.worker import core_identity
from . import figures
from .collect import Contents, ReproductionData, StoreData, SweepData, collect

TEMPLATE = "page.html.j2"


def build(root: str | Path, param: str = "DIR") -> str:
    """The page for the directory ``root`` as HTML text."""
    contents = collect(root, param)
    return render(contents)


def write(root: str | Path, out: str | Path | None = None, param: str = "DIR") -> Path:
    """Write the page (default ``root/report.html``), atomically; returns its path."""
    html = build(root, param)
    path = Path(out) if out is not None else Path(root) / "report.html"
    write_atomically(path, lambda tmp: Path(tmp).write_text(html, encoding="utf-8"))
    return path


def render(contents: Contents) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("incastlab.report", "."),
                             autoescape=jinja2.select_autoescape(["html", "j2"]), trim_blocks=True)
    core_version, core_build = core_identity()
    sweeps = _each(_sweep, contents.sweeps, lambda s: f"{s.name}.study.json")
    reproductions = _each(_reproduction, contents.reproductions, lambda r: f"{r.name}.checks.json")
    stores = _each(_store, contents.stores, lambda s: str(s.path))
    counts = []
    if sweeps:
        counts.append(f"{len(sweeps)} sweep{'s' if len(sweeps) > 1 else ''}")
    if reproductions:
        passed = sum(r["passed"] for r in reproductions)
        total = sum(len(r["checks"]) for r in reproductions)
        counts.append(f"{len(reproductions)} reproduction{'s' if len(reproductions) > 1 else ''}, "
                      f"{passed} of {total} checks pass")
    if stores:
        counts.append(f"{sum(s['rows'] for s in stores)} stored points")
    return env.get_template(TEMPLATE).render(
        title=contents.root.resolve().name or str(contents.root), counts="; ".join(counts),
        generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"), version=__version__, core_version=core_version,
        core_build=core_build, host=platform.node(), sweeps=sweeps, reproductions=reproductions, stores=stores)


def _each(render_one: Callable[[Any], dict[str, Any]], items: list, name: Callable[[Any], str]) -> list[dict]:
    """``render_one`` of every item; one whose file holds what it should not (a hand-edited
    study file) is left out with a one-line warning, not the whole page."""
    out = []
    for item in items:
        try:
            out.append(render_one(item))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            why = " ".join(str(e).split())[:120] or type(e).__name__
            warnings.warn(DamagedFileWarning(f"report: skipping {name(item)}: its contents do not read ({why})"),
                          stacklevel=2)
    return out


def _table_html(df: pd.DataFrame, index: bool = True) -> str:
    return df.to_html(border=0, index=index, float_format=lambda v: f"{v:.4g}", na_rep="", escape=True)


def _sweep(s: SweepData) -> dict[str, Any]:
    study = s.meta.get("study", {})
    summary = s.meta.get("summary", {})
    ex = summary.get("executor", {})
    rows = [
        ("grid", "; ".join(f"{k} = {', '.join(v)}" for k, v in study.get("grid", {}).items())),
        ("fixed", ", ".join(f"{k} = {v}" for k, v in study.get("base", {}).items()) or "(defaults)"),
    ]
    series = [x for x in study.get("series", []) if x.get("label")]
    if series:
        rows.append(("series", "; ".join(x["label"] + ": " + ", ".join(f"{k} = {v}" for k, v in x.items()
                                                                         if k != "label") for x in series)))
    rows.append(("seeds", str(study.get("seeds") or "1 (seed as the scenario gives it)")))
    if summary:
        rows.append(("points", f"{summary.get('points')}: {summary.get('from_store')} from the store, "
                               f"{summary.get('computed')} simulated"))
        over = summary.get("overhead_per_point_s")
        rows.append(("run", f"{summary.get('wall_s', 0):.1f} s on {ex.get('workers')} {_workers(ex.get('kind'))} "
                            f"({ex.get('where')}), startup {summary.get('startup_s', 0):.1f} s, "
                            f"{summary.get('batches')} batches; core time {summary.get('core_s', 0):.1f} s"
                            + (f", overhead {over * 1e3:.2f} ms per point" if over is not None else "")))
    rows += [
        ("when", f"{s.meta.get('started', '?')} to {s.meta.get('finished', '?')}"),
        ("command", " ".join(s.meta.get("argv", [])) or "(from Python)"),
        ("versions", f"incastlab {s.meta.get('incastlab_version')}, core {s.meta.get('core_version')} build "
                     f"{s.meta.get('core_build')}, Python {s.meta.get('python')}, host {s.meta.get('host')}"),
        ("files", f"{s.meta.get('csv')}; store {s.meta.get('store')}"),
    ]
    out: dict[str, Any] = {"name": s.name, "title": study.get("title", ""), "meta_rows": rows, "figure": None,
                           "tables": [], "note": "", "y": (study.get("plot") or {}).get("y", "goodput_mbps"),
                           "why_no_figure": ""}
    v = figures.view(s.df, study) if not s.df.empty else None
    if v is None:
        out["why_no_figure"] = "no rows, or the x field is not numeric (the CSV has the points)"
        return out
    out["figure"] = figures.data_uri(figures.figure_png(s.df, v, f"{s.name}: {v.y} against {v.x_label}"))
    out["tables"] = [(caption, _table_html(t)) for caption, t in figures.tables(s.df, v)]
    out["note"] = v.note
    return out


def _workers(kind: str | None) -> str:
    return {"threads": "worker threads", "processes": "worker processes", "dask": "Dask workers"}.get(
        kind or "", f"{kind} workers")


def _reproduction(r: ReproductionData) -> dict[str, Any]:
    points = ""
    if r.df is not None and not r.df.empty:
        seeds = r.df["seed"].nunique() if "seed" in r.df else 1
        points = f"{len(r.df)} simulated points, {r.df['series'].nunique() if 'series' in r.df else 1} series, " \
                 f"{seeds} seed{'s' if seeds > 1 else ''} each"
        if "from_store" in r.df:
            points += f"; {int(r.df['from_store'].sum())} read from the store"
    figure = figures.data_uri(r.png.read_bytes()) if r.png is not None else None
    checks = [{**c, "source": cite(c.get("source", ""))} for c in r.checks]  # "FAST'08 Fig. 4 (000_...txt)"
    return {"name": r.name, "title": r.title, "source": cite(r.source), "summary": r.summary, "figure": figure,
            "checks": checks, "passed": sum(1 for c in r.checks if c.get("pass")), "points": points}


def _store(s: StoreData) -> dict[str, Any]:
    df = s.df
    by_core = ""
    if not df.empty and "core_version" in df:
        counts = df.groupby(["core_version", "core_build"], dropna=False).size().rename("points").reset_index()
        by_core = _table_html(counts, index=False)
    varied = []
    # from the scenarios as keyed (scenario_json), not the result columns: the core reports
    # some under a field's name with another meaning (blocks completed, the per-server part)
    scenarios = [json.loads(t) for t in df["scenario_json"].dropna().unique()] if "scenario_json" in df else []
    for f in FIELDS:
        values = {json.dumps(sc.get(f.name)) for sc in scenarios}
        if len(values) > 1:
            native = sorted((json.loads(v) for v in values), key=lambda x: (x is None, isinstance(x, str), x or 0))
            shown = [f.format(f.to_public(v)) for v in native]
            text = ", ".join(shown[:16]) + (f", ... ({len(shown)} values)" if len(shown) > 16 else "")
            varied.append({"field": f.public, "values": text})
    runs = []
    for j in s.journals:
        ex = j.get("executor", {})
        runs.append({"run": j.get("run_id", ""), "started": j.get("started", ""), "status": j.get("status", ""),
                     "points": j.get("points"), "from store": j.get("from_store"), "simulated": j.get("computed"),
                     "workers": f"{ex.get('workers')} {_workers(ex.get('kind'))}" if ex.get("workers") else "",
                     "wall s": round(j["wall_s"], 1) if isinstance(j.get("wall_s"), (int, float)) else "",
                     "what": j.get("reproduction") or (j.get("study") or {}).get("name", "")})
    return {"path": str(s.path), "rows": len(df), "files": s.files, "by_core": by_core,
            "varied": _table_html(pd.DataFrame(varied), index=False) if varied else "",
            "runs": _table_html(pd.DataFrame(runs), index=False) if runs else ""}


def dumps(contents: Contents) -> str:  # pragma: no cover - debugging aid
    return json.dumps({"sweeps": [s.name for s in contents.sweeps],
                       "reproductions": [r.name for r in contents.reproductions],
                       "stores": [str(s.path) for s in contents.stores]})
