"""``incastlab monitor plot FILE``: rate over time at several resolutions.

One panel per direction; one line per timescale (1 s, 100 ms, 10 ms, 1 ms and the finest
recorded), so the picture of the blog (``003_a133663d5dbcfa75.txt``: the same traffic looks
flat at 1 s and hits line rate at a few ms) is visible in one figure.
"""

from __future__ import annotations

import numpy as np

from ..outfiles import write_atomically
from . import record, timescales

NS_PER_S = timescales.NS_PER_S


def _scale_label(s: float) -> str:
    """A timescale for a legend, to 3 significant digits: a measured median of 99.9865 us
    reads "100 us", not "0.0999865 ms"."""
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} us"


def _series(df, column: str, scale_s: float):
    t_end_ns = (df["t_s"].to_numpy() * NS_PER_S).astype(np.float64)
    dt_ns = (df["dt_s"].to_numpy() * NS_PER_S).astype(np.float64)
    start = t_end_ns[0] - dt_ns[0]
    scale_ns = scale_s * NS_PER_S
    n = int((t_end_ns[-1] - start) // scale_ns)
    if n < 1:
        return None, None
    b = timescales.bucket_bytes(t_end_ns, dt_ns, df[column].to_numpy(), start, scale_ns, n)
    t = (start + scale_ns * (np.arange(n) + 0.5)) / NS_PER_S
    return t, b * 8 / scale_s / 1e6


def plot(path: str, out: str) -> dict:
    """Draw the recording at ``path`` into the PNG ``out``; return what was drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = record.read(path)
    if len(df) < 2:
        from ..errors import UsageError
        raise UsageError("FILE", path, "a recording with at least two intervals")
    finest = float(np.median(df["dt_s"]))
    # one bucket per finest interval: a recording whose times jump far beyond its intervals
    # (not one the monitor writes) would ask for billions of them
    span = float(df["t_s"].iloc[-1] - df["t_s"].iloc[0] + df["dt_s"].iloc[0])
    if span / finest > 100 * len(df) + 10**6:
        from ..errors import UsageError
        raise UsageError("FILE", path, "a monitor recording whose intervals cover its times")
    scales = [s for s in (1.0, 0.1, 0.01, 0.001) if s >= finest]
    if not scales or scales[-1] > finest * 1.5:
        scales.append(finest)
    fig, axes = plt.subplots(2, 1, figsize=(11, 7), sharex=True)
    drawn = {}
    for ax, d in zip(axes, ("rx", "tx")):
        for s in reversed(scales):  # finest first, so coarse lines stay on top
            t, mbps = _series(df, f"{d}_bytes", s)
            if t is None:
                continue
            label = _scale_label(s)
            ax.plot(t, mbps, label=label, linewidth=0.6 if s < 0.01 else 1.4, drawstyle="steps-mid")
            drawn.setdefault(d, {})[label] = float(mbps.max())
        ax.set_ylabel(f"{d} rate (Mbit/s)")
        ax.legend(title="timescale", loc="upper right", fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle(f"{path}: rate at several timescales (median sampling interval {finest * 1e6:.0f} us)")
    fig.tight_layout()
    try:  # whole or not at all: a full disk leaves no 0-byte PNG
        write_atomically(out, lambda tmp: fig.savefig(tmp, dpi=120, format="png"), "--out")
    finally:
        plt.close(fig)
    return {"file": path, "out": out, "peak_mbps": drawn, "median_interval_us": finest * 1e6}
