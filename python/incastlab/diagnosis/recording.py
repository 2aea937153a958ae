"""A ``monitor --record`` file as the doctor's description.

The recording (main's format, ``monitor/record.py``: per fine interval ``t_s, dt_s,
rx_bytes, tx_bytes, rx_packets, tx_packets``) says how the client's link was used, not
how many servers answered. What it gives:

- **bursts**: runs of intervals received above half the line rate (the blog's
  microbursts, ``003_a133663d5dbcfa75.txt``), merged across gaps shorter than one RTT;
  their median size is the bytes one read brought in (the block), so the response per
  server is the block over the fan-in the user gives;
- **the line rate**, if not given: the fastest interval, rounded up to a standard rate.

This is the one module that knows the recording's columns: when issue 26 adds the
Millisampler series (flows per interval, retransmissions), the fan-in can be read here
instead of asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from ..monitor.record import read

STANDARD_RATES_BPS = (10**8, 10**9, 10 * 10**9, 25 * 10**9, 40 * 10**9, 50 * 10**9, 100 * 10**9,
                      200 * 10**9, 400 * 10**9)
BURST_SHARE = 0.5


@dataclass(frozen=True)
class RecordingSummary:
    path: str
    seconds: float
    intervals: int
    line_rate_bps: int
    line_rate_given: bool
    average_rx_bps: float
    peak_rx_bps: float
    bursts: int
    burst_bytes_median: int
    bursts_per_second: float

    def text(self) -> str:
        return (f"{self.path}: {self.seconds:.2f} s in {self.intervals} intervals, rx average "
                f"{self.average_rx_bps / 1e6:.0f} Mbps, peak {self.peak_rx_bps / 1e6:.0f} Mbps; {self.bursts} bursts "
                f"above {BURST_SHARE:.0%} of {self.line_rate_bps / 1e9:g} Gbps ({self.bursts_per_second:.1f}/s), "
                f"median {self.burst_bytes_median:,} B")


def summarize(path: str, line_rate_bps: int | None, rtt_s: float) -> RecordingSummary:
    df = read(path)
    if len(df) == 0:
        raise UsageError("--record", path, "a recording with at least one interval")
    dt = df["dt_s"].to_numpy(dtype=float)
    rx = df["rx_bytes"].to_numpy(dtype=float)
    ok = dt > 0
    rate = np.zeros_like(rx)
    rate[ok] = rx[ok] * 8 / dt[ok]
    peak = float(rate.max())
    given = line_rate_bps is not None
    if line_rate_bps is None:
        line_rate_bps = next((r for r in STANDARD_RATES_BPS if r >= peak * 0.99), STANDARD_RATES_BPS[-1])
    hot = rate >= BURST_SHARE * line_rate_bps
    t = df["t_s"].to_numpy(dtype=float)
    bursts: list[float] = []
    current, last_end = 0.0, None
    for i in np.flatnonzero(hot):
        start = t[i] - dt[i]
        if last_end is not None and start - last_end <= max(rtt_s, dt[i]):
            current += rx[i]
        else:
            if current:
                bursts.append(current)
            current = rx[i]
        last_end = t[i]
    if current:
        bursts.append(current)
    seconds = float(dt.sum())
    if not bursts:
        raise UsageError("--record", path, f"a recording with bursts above {BURST_SHARE:.0%} of the line rate "
                         f"({line_rate_bps / 1e9:g} Gbps; give --rate if the link is slower)")
    return RecordingSummary(path=path, seconds=seconds, intervals=len(df), line_rate_bps=int(line_rate_bps),
                            line_rate_given=given, average_rx_bps=float(rx.sum() * 8 / max(seconds, 1e-12)),
                            peak_rx_bps=peak, bursts=len(bursts), burst_bytes_median=int(np.median(bursts)),
                            bursts_per_second=len(bursts) / max(seconds, 1e-12))
