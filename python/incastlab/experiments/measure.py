"""Small readers of a reproduction's result DataFrame, shared by the checks.

The DataFrame has one row per simulated point: the core's result fields plus ``series``
(the label), ``panel``, ``x`` (the sweep axis value) and ``seed``. With several seeds a
point's value is the mean over its runs; counts summed over a series are per run (the
mean over seeds), so they compare with a paper's one 20 s run (FAST'08 Table 3).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# Payload capacity of a link carrying 1460 B of payload in every 1500 B packet.
PAYLOAD_SHARE = 1460 / 1500


def rows(df: pd.DataFrame, series: str) -> pd.DataFrame:
    d = df[df["series"] == series]
    if d.empty:
        raise KeyError(f"no points for series {series!r}")
    return d


def curve(df: pd.DataFrame, series: str, col: str = "goodput_mbps") -> pd.Series:
    """``col`` against the sweep axis for one series, mean over seeds, sorted by x."""
    return rows(df, series).groupby("x")[col].mean().sort_index()


def at(df: pd.DataFrame, series: str, x, col: str = "goodput_mbps") -> float:
    """``col`` of one series at one axis value (mean over seeds)."""
    c = curve(df, series, col)
    if x not in c.index:
        raise KeyError(f"series {series!r} has no point at {x!r}")
    return float(c[x])


def per_run_total(df: pd.DataFrame, series: str, col: str) -> float:
    """``col`` summed over the series' axis values, averaged over seeds (one run's worth)."""
    d = rows(df, series)
    return float(d[col].sum() / d["seed"].nunique())


def dart_histogram(df: pd.DataFrame, series: str) -> np.ndarray:
    """The series' DART histograms summed over its points, averaged over seeds.

    Index = duplicate ACKs received when the timeout fired; the last bin holds that many
    or more (FAST'08 §5.1, Fig. 11)."""
    d = rows(df, series)
    hists = [np.asarray(h, dtype=float) for h in d["dart_histogram"]]
    width = max(len(h) for h in hists)
    total = np.zeros(width)
    for h in hists:
        total[: len(h)] += h
    return total / d["seed"].nunique()


def first_below(c: pd.Series, level: float) -> int | None:
    """The smallest x (server count) at which curve `c` is below `level`; None if never."""
    low = c[c < level]
    return int(low.index[0]) if len(low) else None


def onset(c: pd.Series) -> int | None:
    """Fewest servers whose goodput is below 75 % of one server's: where the curve bends
    (large buffers' curves level off at 60-70 % rather than collapse, so a 50 % rule would
    miss them; the same rule as tests/test_fast08_validation.py)."""
    return first_below(c, 0.75 * c.iloc[0])


def link_payload_mbps(df: pd.DataFrame) -> float:
    """Payload capacity of the client's link in Mbps (from the first point's rate)."""
    return float(df["rate_bps"].iloc[0]) / 1e6 * PAYLOAD_SHARE


def ratio(a: float, b: float) -> float:
    """a / b, infinite when b is zero and a is not."""
    if b == 0:
        return float("inf") if a > 0 else 1.0
    return a / b


def fmt_x(v: float) -> str:
    """A ratio as text: ``12.3x``."""
    return "inf" if v == float("inf") else f"{v:.1f}x"


def mbps(v: float) -> str:
    return f"{v:.0f} Mbps" if v >= 10 else f"{v:.1f} Mbps"
