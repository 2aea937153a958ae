"""A sweep's figure and tables: the plotted result against the study's x field, one line per
combination of the other varied fields (mean over seeds, the min-max spread shaded), one
panel per value of the first of them when there are too many lines for one."""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..schema import BY_PUBLIC

MAX_LINES_PER_PANEL = 10
MAX_PANELS = 6


@dataclass
class SweepView:
    x: str  # result column on the x axis
    y: str
    lines: list[str]  # result columns that tell lines apart (series first)
    panel: str | None  # result column that tells panels apart
    x_label: str
    note: str = ""


def view(df: pd.DataFrame, study: dict[str, Any]) -> SweepView | None:
    """How to draw ``df`` (a sweep's rows) given the study's description; None when there is
    nothing to draw against (no numeric x, no y column)."""
    columns = study.get("columns", {})
    x_field = (study.get("plot") or {}).get("x")
    y = (study.get("plot") or {}).get("y") or "goodput_mbps"
    x = columns.get(x_field, x_field)
    if x is None or x not in df or y not in df or not pd.api.types.is_numeric_dtype(df[x]):
        return None
    varied = [columns.get(k, k) for k, v in study.get("grid", {}).items() if k != x_field and len(v) > 1]
    varied = [c for c in varied if c in df and c != "seed"]
    lines = (["series"] if "series" in df and df["series"].nunique() > 1 else []) + varied
    panel = None
    n_lines = df[lines].drop_duplicates().shape[0] if lines else 1
    if n_lines > MAX_LINES_PER_PANEL and len(lines) > 1:
        panel, lines = lines[0], lines[1:]
    label = BY_PUBLIC[x_field].public if x_field in BY_PUBLIC else x_field
    unit = {"bytes": " (bytes)", "picoseconds": " (s)", "bits_per_second": " (bit/s)"}.get(
        BY_PUBLIC[x_field].unit if x_field in BY_PUBLIC else "", "")
    return SweepView(x, y, lines, panel, label + unit)


def _label(row: dict, columns: list[str]) -> str:
    if not columns:
        return "all"
    return ", ".join(f"{c.removesuffix('_bytes').removesuffix('_s')}={_fmt_value(c, row[c])}" for c in columns)


def _fmt_value(column: str, v: Any) -> str:
    by_result = {f.result_name: f for f in BY_PUBLIC.values()}
    f = by_result.get(column)
    if f is None or pd.isna(v):
        return str(v)
    try:
        return f.format(v.item() if hasattr(v, "item") else v)
    except (TypeError, ValueError):
        return str(v)


def aggregate(df: pd.DataFrame, v: SweepView) -> pd.DataFrame:
    """Mean, min and max of y over seeds, per panel, line and x."""
    keys = ([v.panel] if v.panel else []) + v.lines + [v.x]
    g = df.groupby(keys, dropna=False, sort=False)[v.y]
    return g.agg(["mean", "min", "max", "count"]).reset_index()


def figure_png(df: pd.DataFrame, v: SweepView, title: str) -> bytes:
    """The figure as PNG bytes."""
    from matplotlib.figure import Figure

    agg = aggregate(df, v)
    panels = list(dict.fromkeys(agg[v.panel])) if v.panel else [None]
    shown = panels[:MAX_PANELS]
    if len(panels) > MAX_PANELS:
        v.note = f"{MAX_PANELS} of {len(panels)} panels drawn; the tables have them all"
    cols = min(len(shown), 3)
    rows = (len(shown) + cols - 1) // cols
    width = 8.0 if cols == 1 else 4.6 * cols + 0.6
    fig = Figure(figsize=(width, 3.6 * rows + 1.2 if cols > 1 else 4.8), dpi=100)
    axes = fig.subplots(rows, cols, squeeze=False)
    xs = agg[v.x]
    logx = xs.min() > 0 and xs.max() / xs.min() >= 16
    for i, p in enumerate(shown):
        ax = axes[i // cols][i % cols]
        part = agg[agg[v.panel] == p] if v.panel else agg
        # records, not iterrows: a row Series would turn 32768 into 32768.0 next to a float column
        line_keys = part[v.lines].drop_duplicates().to_dict("records") if v.lines else [{}]
        for j, key in enumerate(line_keys):
            if j >= MAX_LINES_PER_PANEL:
                v.note = f"at most {MAX_LINES_PER_PANEL} lines per panel drawn; the tables have them all"
                break
            sel = part
            for c in v.lines:
                sel = sel[sel[c] == key[c]]
            sel = sel.sort_values(v.x)
            ax.plot(sel[v.x], sel["mean"], marker="os^vD<>ph*"[j % 10], linestyle="-" if j % 2 == 0 else "--",
                    label=_label(key, v.lines), markersize=4)
            if (sel["count"] > 1).any():
                ax.fill_between(sel[v.x], sel["min"], sel["max"], alpha=0.15)
        if logx:
            from matplotlib.ticker import NullFormatter, ScalarFormatter

            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(ScalarFormatter())  # 64, not 2^6
            ax.xaxis.set_minor_formatter(NullFormatter())
            if xs.nunique() <= 12:
                ax.set_xticks(sorted(xs.unique()))
        ax.set_xlabel(v.x_label)
        ax.set_ylabel(v.y)
        ax.grid(True, alpha=0.3)
        if v.panel:
            ax.set_title(_label({v.panel: p}, [v.panel]), fontsize=10)
        if v.lines and not v.panel:
            ax.legend(fontsize=7, loc="best")
    for k in range(len(shown), rows * cols):
        axes[k // cols][k % cols].set_visible(False)
    fig.suptitle(title, fontsize=11)
    if v.lines and v.panel:  # the panels share their lines: one legend below them, covering none
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0.04 + 0.03 * math.ceil(len(labels) / 3) / rows, 1, 1))
    else:
        fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def tables(df: pd.DataFrame, v: SweepView) -> list[tuple[str, pd.DataFrame]]:
    """Mean y by x (rows) and line (columns), one table per panel."""
    agg = aggregate(df, v)
    out = []
    panels = list(dict.fromkeys(agg[v.panel])) if v.panel else [None]
    for p in panels:
        part = agg[agg[v.panel] == p] if v.panel else agg
        line = [_label(r, v.lines) for r in part[v.lines].to_dict("records")] if v.lines else "mean"
        wide = part.assign(line=line).pivot_table(index=v.x, columns="line", values="mean", sort=False)
        wide.index = [_fmt_value(v.x, x) for x in wide.index]
        wide.index.name = v.x_label
        out.append((_label({v.panel: p}, [v.panel]) if v.panel else "", wide))
    return out


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()
