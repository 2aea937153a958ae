"""A reproduction's figure, shaped like the source's: same axes, one line per series.

Every figure names the source figure it reproduces and the scenario it ran, so a PNG
found on its own still says what it is.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from ..outfiles import write_atomically
from ..scenario import Scenario
from . import measure
from .sources import cite
from .spec import Experiment

MARKERS = "osD^v<>px*hH"

# Timeout categories of FAST'08 Table 3 (§5.1), in the table's order.
CATEGORIES = [
    ("blocks", "data blocks"),
    ("timeouts", "timeout events"),
    ("timeouts_full_window", "full window\nlosses"),
    ("timeouts_lost_retransmit", "lost\nretransmits"),
    ("timeouts_last_packet", "last packets\ndropped"),
    ("timeouts_other", "other"),
]


# (Scenario field, how the figure names it) for the subtitle; fields a series varies are
# in the legend instead.
_SHOWN = [("block", "block"), ("sru", "SRU"), ("buffer", "buffer"), ("rate", ""), ("rtt", "RTT"),
          ("tcp", ""), ("rto_min", "RTOmin")]


def scenario_text(exp: Experiment) -> str:
    """What every series shares, in a few words (what differs is in the legend)."""
    varied = {exp.axis}.union(*(s.params for s in exp.series))
    if any(s.params.get("mitigation") == "tcpfg" for s in exp.series):
        varied.add("rto_min")  # TCPFG brings its own (200 us)
    base = {k: v for k, v in exp.base.items() if k in Scenario.model_fields and k not in varied}
    try:
        dump = Scenario(**{"servers": 1, **base}).model_dump()
    except Exception:  # a knob this build lacks: the series labels still say it
        return ""
    parts = []
    for key, name in _SHOWN:
        if key in varied or (key == "block" and dump["block"] is None) or (key == "sru" and (dump["block"] or "block" in varied)):
            continue
        value = {"tcp": {"newreno": "NewReno", "reno": "Reno", "sack": "SACK"}.get(dump["tcp"], dump["tcp"])}.get(
            key, dump[key])
        if key == "tcp" and "cc" in varied:
            value = f"{value} loss recovery"  # the congestion controls are in the legend
        if key == "buffer" and dump.get("buffer_sharing") == "dynamic" and dump.get("buffer_pool"):
            value = f"{dump['buffer_pool']} shared pool (alpha {dump['dt_alpha']:g})"  # the per-port size is not the limit
        elif key == "buffer" and dump.get("buffer_packets"):
            value = f"{dump['buffer_packets']} packets"  # counted in packets (Osada et al.), not bytes
        elif key == "buffer" and dump.get("buffer_admission") == "packets":
            scn = Scenario(**{"servers": 1, **base})
            value = f"{value} = {scn.buffer // (scn.mss + scn.header)} packets"  # as ns-2's DropTail counts it
        parts.append(f"{name} {value}".strip())
    # the reading: what the core does differently from its defaults (docs/model.md)
    if dump.get("mss") != "1460B" and "mss" not in varied:  # model_dump gives sizes as text, e.g. "1000B"
        parts.append(f"{dump['mss']} packets")
    if "limited_transmit" not in varied:
        parts.append("LT on" if dump.get("limited_transmit") else "LT off")
    if dump.get("tcp_rules", "rfc") != "rfc" and "tcp_rules" not in varied:
        parts.append({"ns2": "ns-2's TCP rules", "ns3": "ns-3's TCP rules"}[dump["tcp_rules"]])
    return ", ".join(parts)


def draw(exp: Experiment, df: pd.DataFrame, path: Path, note: str = "") -> Path:
    from matplotlib.figure import Figure  # no pyplot: no global state, thread safe

    kind = exp.plot.kind
    if kind == "custom":
        return _custom(exp, df, path, note)
    groups = exp.panels() if kind == "lines" else [s.label for s in exp.series]
    n = len(groups)
    cols = min(n, 3)
    rows_ = int(np.ceil(n / cols))
    fig = Figure(figsize=(max(7.0, 5.2 * cols + 0.6), 4.2 * rows_ + 0.9), dpi=110)
    axes = np.atleast_1d(fig.subplots(rows_, cols, squeeze=False)).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    if kind == "lines":
        for ax, panel in zip(axes, groups):
            _lines(ax, exp, df, panel)
    elif kind == "dart":
        for ax, label in zip(axes, groups):
            _dart(ax, df, label)
    elif kind == "categories":
        for ax, label in zip(axes, groups):
            _categories(ax, exp, df, label)
    else:
        raise ValueError(f"unknown plot kind {kind!r}")
    width = int(12.5 * fig.get_figwidth())  # characters of a 9-point line
    lines = textwrap.wrap(f"{exp.title}. {cite(exp.source)}, reproduced with incastlab", width)
    lines += textwrap.wrap("; ".join(t for t in (scenario_text(exp), note) if t), width)
    fig.suptitle("\n".join(lines), fontsize=9)
    fig.tight_layout()
    write_atomically(path, lambda tmp: fig.savefig(tmp, format="png"))
    return path


def _custom(exp: Experiment, df: pd.DataFrame, path: Path, note: str) -> Path:
    """A figure whose axes the experiment draws itself (``Plot.draw``), titled as the others."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12.0, 8.0), dpi=110)
    exp.plot.draw(fig, df)
    width = int(12.5 * fig.get_figwidth())
    lines = textwrap.wrap(f"{exp.title}. {cite(exp.source)}, reproduced with incastlab", width)
    if note:
        lines += textwrap.wrap(note, width)
    fig.suptitle("\n".join(lines), fontsize=9)
    fig.tight_layout()
    write_atomically(path, lambda tmp: fig.savefig(tmp, format="png"))
    return path


def _lines(ax, exp: Experiment, df: pd.DataFrame, panel: str) -> None:
    y, ylabel = exp.plot.panel_y.get(panel, (exp.plot.y, exp.plot.ylabel))
    for i, s in enumerate(x for x in exp.series if x.panel == panel):
        d = df[df["series"] == s.label].groupby("x")[y]
        mean, lo, hi = d.mean(), d.min(), d.max()
        # every second line dashed, so a curve lying exactly on another shows through it
        # (osada-fig9: NCCS K=4 and K=8); a series' own style wins
        look = {"marker": MARKERS[i % len(MARKERS)], "markersize": 4, "linewidth": 1.5,
                "linestyle": "-" if i % 2 == 0 else (0, (5, 2)), **s.style}
        line, = ax.plot(mean.index, mean.values, label=s.label, **look)
        if (hi > lo).any():
            ax.fill_between(mean.index, lo.values, hi.values, color=line.get_color(), alpha=0.18, linewidth=0)
    if exp.plot.link_rate and y in ("goodput_mbps", "victim_goodput_mbps"):
        cap = measure.link_payload_mbps(df[df["panel"] == panel])
        ax.axhline(cap, color="grey", linestyle=":", linewidth=1, label=f"payload capacity ({cap:.0f} Mbps)")
    if exp.plot.logx:
        from matplotlib.ticker import FuncFormatter

        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # 64, not 2^6
    else:
        ax.set_xlim(left=0)
    if exp.plot.logy:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax.set_yscale("log")  # collapsed curves differ by orders of magnitude, not Mbps
        # labels at 1, 2 and 5 of every decade: a panel within one decade (fast08-fig13 (b),
        # 110-950 Mbps) otherwise shows a single label
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # 100, not 10^2
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlabel(exp.plot.xlabel)
    ax.set_ylabel(ylabel)
    if panel:
        ax.set_title(panel, fontsize=10)
    ax.grid(True, linestyle="--", linewidth=0.6, alpha=0.7)
    # below the axes, so it never covers a curve (issue 11: fast08-fig13, -fig6, osada-fig9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)


def _dart(ax, df: pd.DataFrame, label: str) -> None:
    hist = measure.dart_histogram(df, label)
    xs = np.arange(len(hist))
    ax.bar(xs, hist, color="tab:blue", width=0.8)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(i) for i in xs[:-1]] + [f">={xs[-1]}"], fontsize=7)
    ax.set_xlabel("DART: duplicate ACKs received at the timeout")
    ax.set_ylabel(f"Timeouts (per {df['sim_seconds'].max():g} s run)")
    ax.set_title(f"{label}: {int(round(hist.sum()))} timeouts", fontsize=10)
    ax.grid(True, axis="y", linestyle="--", linewidth=0.6, alpha=0.7)


def _categories(ax, exp: Experiment, df: pd.DataFrame, label: str) -> None:
    ours = [measure.per_run_total(df, label, col) if col in df else np.nan for col, _ in CATEGORIES]
    ref = exp.plot.reference.get(label, {})
    theirs = [ref.get(col, np.nan) for col, _ in CATEGORIES]
    xs = np.arange(len(CATEGORIES))
    ax.bar(xs - 0.2, ours, width=0.4, label="incastlab", color="tab:blue")
    ax.bar(xs + 0.2, theirs, width=0.4, label="FAST'08 Table 3", color="white", edgecolor="tab:red", hatch="//")
    ax.set_xticks(xs)
    ax.set_xticklabels([name for _, name in CATEGORIES], fontsize=7, rotation=30)
    ax.set_ylabel(f"Count per {df['sim_seconds'].max():g} s run")
    ax.set_title(label, fontsize=10)
    ax.grid(True, axis="y", linestyle="--", linewidth=0.6, alpha=0.7)
    ax.legend(fontsize=7)
