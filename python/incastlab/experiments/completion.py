"""One-shot incasts against the line-rate optimum: what fattree-incast and ndp-incast share
(the optimum of N flows, each series' completion over it, and their two-panel figure)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .measure import curve


@dataclass(frozen=True)
class LineRateOptimum:
    """N flows of ``flow_bytes`` each through the receiver's link of ``rate_bps``."""

    flow_bytes: int
    rate_bps: float

    def seconds(self, n) -> np.ndarray:
        """N flows' payload at the receiver's line rate (seconds)."""
        return np.asarray(n, dtype=float) * self.flow_bytes * 8 / self.rate_bps

    def over(self, df: pd.DataFrame, label: str) -> pd.Series:
        """Series ``label``'s last-flow completion over the optimum, per N."""
        c = curve(df, label, "incast_completion_s")
        return c / self.seconds(c.index)

    def draw(self, fig, df: pd.DataFrame, labels, xlabel: str, bar: float | None = None) -> None:
        """(a) each series' completion beside the optimum, (b) completion over the optimum
        (with ``bar``, a check's limit, dashed)."""
        a, b = fig.subplots(1, 2)
        for label in labels:
            c = curve(df, label, "incast_completion_s")
            a.plot(c.index, c.values, marker="o", label=label)
            r = self.over(df, label)
            b.plot(r.index, r.values, marker="o", label=label)
        n = np.array(sorted(df["x"].unique()))
        a.plot(n, self.seconds(n), "k:", label="line-rate optimum")
        for ax in (a, b):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(xlabel)
            ax.legend(fontsize=7)
        a.set_ylabel("last flow's completion (s)")
        a.set_title("(a) completion", fontsize=10)
        b.axhline(1.0, color="k", linestyle=":")
        if bar is not None:
            b.axhline(bar, color="gray", linestyle="--", linewidth=0.8)
        b.set_ylabel("completion / line-rate optimum")
        b.set_title("(b) over the optimum", fontsize=10)
