"""Figures in the style of the source papers.

``goodput_vs_servers`` draws FAST'08 Fig. 4 (``000_315d806dde942a9f.txt`` §4.1): goodput
in Mbps against the number of servers, linear axes, one line per configuration.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

import pandas as pd

from .outfiles import check_writable, write_atomically

FORMATS = ("png", "svg", "pdf")


def check_plot_path(path: str | os.PathLike, param: str = "--plot") -> Path:
    """Refuse a figure path we could not write, before any simulation runs."""
    return check_writable(path, param, FORMATS)


def goodput_vs_servers(
    series: Mapping[str, pd.DataFrame],
    path: str | os.PathLike,
    title: str = "TCP incast: goodput vs. number of servers",
    link_rate_bps: int | None = None,
) -> Path:
    """Plot each ``label -> sweep DataFrame`` (columns servers, goodput_mbps) to ``path``.

    Where a frame has several runs of one number of servers (seeds), the line is their
    mean and a band shades their min-max spread. The format follows the extension (.png,
    .svg or .pdf); the file is written atomically.
    """
    # A bare Figure (no pyplot): no global state, no display, safe next to other threads.
    from matplotlib.figure import Figure

    p = check_plot_path(path)
    fig = Figure(figsize=(7.5, 4.8), dpi=120)
    ax = fig.subplots()
    markers = "osD^v<>px*"
    runs = 1
    for i, (label, df) in enumerate(series.items()):
        g = df.groupby("servers")["goodput_mbps"]
        mean, lo, hi = g.mean(), g.min(), g.max()
        line, = ax.plot(mean.index, mean.to_numpy(), marker=markers[i % len(markers)], linewidth=1.6,
                        markersize=5, label=label)
        runs = max(runs, int(g.size().max()) if len(df) else 1)
        if (hi > lo).any():
            ax.fill_between(mean.index, lo.to_numpy(), hi.to_numpy(), color=line.get_color(), alpha=0.18,
                            linewidth=0)
    if link_rate_bps:
        ax.axhline(link_rate_bps / 1e6, color="grey", linestyle=":", linewidth=1,
                   label=f"link rate ({link_rate_bps / 1e6:g} Mbps)")
    if runs > 1:  # say what the lines and bands are
        from matplotlib.patches import Patch

        ax.add_artist(ax.legend(handles=[Patch(color="grey", alpha=0.3, label=f"min-max of {runs} runs")],
                                fontsize=8, loc="upper left"))
        ax.text(0.01, 0.02, f"lines: mean of {runs} runs per point", transform=ax.transAxes, fontsize=7,
                color="dimgrey")
    ax.set_xlabel("Number of servers")
    ax.set_ylabel("Goodput (Mbps)")
    ax.set_title(title)
    ax.set_xlim(left=0)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # servers come whole (no tick at 0.5)
    top = max([link_rate_bps / 1e6 if link_rate_bps else 0.0]
              + [float(df["goodput_mbps"].max()) for df in series.values() if len(df)])
    ax.set_ylim(0, top * 1.25 if top > 0 else 1.0)  # headroom so the legend sits above the curves
    ax.grid(True, linestyle="--", linewidth=0.6, alpha=0.7)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    write_atomically(p, lambda tmp: fig.savefig(tmp, format=p.suffix.lower().lstrip(".")))
    return p


def completion_vs_senders(
    series: Mapping[str, pd.DataFrame],
    path: str | os.PathLike,
    title: str,
    optimum_bytes_per_sender: int | None = None,
    link_rate_bps: int | None = None,
) -> Path:
    """One-shot flows: the last flow's completion (``incast_completion_s``, else the
    slowest flow's ``fct_max_s``) against the senders, log-log, with the receiver's
    line-rate optimum (every sender's bytes at ``link_rate_bps``) when both are given."""
    from matplotlib.figure import Figure

    p = check_plot_path(path)
    fig = Figure(figsize=(7.5, 4.8), dpi=120)
    ax = fig.subplots()
    markers = "osD^v<>px*"
    for i, (label, df) in enumerate(series.items()):
        d = df.sort_values("servers")
        y = d["incast_completion_s"].fillna(d["fct_max_s"]) if "incast_completion_s" in d else d["fct_max_s"]
        ax.plot(d["servers"], y * 1e3, marker=markers[i % len(markers)], linewidth=1.6, markersize=5, label=label)
    if optimum_bytes_per_sender and link_rate_bps:
        n = sorted({int(v) for df in series.values() for v in df["servers"]})
        ax.plot(n, [k * optimum_bytes_per_sender * 8 / link_rate_bps * 1e3 for k in n], "k:", linewidth=1,
                label=f"line-rate optimum ({link_rate_bps / 1e9:g} Gbps)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Senders per incast")
    ax.set_ylabel("Last flow's completion (ms)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", linestyle="--", linewidth=0.5, alpha=0.6)
    ax.legend(fontsize=8)
    fig.tight_layout()
    write_atomically(p, lambda tmp: fig.savefig(tmp, format=p.suffix.lower().lstrip(".")))
    return p
