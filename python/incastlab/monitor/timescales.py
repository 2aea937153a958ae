"""Average and peak rates at several timescales from irregular counter intervals.

The blog's poller (``003_a133663d5dbcfa75.txt``, the escript output) printed, once a second,
the peak and average rate and their ratio; the ratio grew from 1.1 at 500 ms polling to 4
at 8 ms. We compute the same from one fine-grained series at every timescale at once.

Method: the cumulative byte count is known at each reading; between readings we assume it
grew linearly (the most a reading lets us claim), evaluate it at the edges of fixed buckets
and take differences. A bucket's rate is therefore never above the average rate of the
intervals it overlaps: a long sampling stall cannot create a fake peak.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NS_PER_S = 1_000_000_000

# (label, bucket length in ns) reported every second, coarsest first
TIMESCALES = [("1s", NS_PER_S), ("100ms", 100_000_000), ("10ms", 10_000_000), ("1ms", 1_000_000)]


@dataclass(frozen=True)
class ScaleRate:
    """Rates over one window at one timescale (bits per second)."""

    scale_ns: int
    avg_bps: float
    peak_bps: float

    @property
    def ratio(self) -> float | None:
        """Peak / average; None when nothing moved (an idle link has no burstiness)."""
        return self.peak_bps / self.avg_bps if self.avg_bps > 0 else None


def bucket_bytes(t_end_ns: np.ndarray, dt_ns: np.ndarray, nbytes: np.ndarray,
                 start_ns: int, scale_ns: int, nbuckets: int) -> np.ndarray:
    """Bytes in each of ``nbuckets`` buckets ``[start + i*scale, start + (i+1)*scale)``."""
    t_end = np.asarray(t_end_ns, dtype=np.float64)
    t_start = t_end - np.asarray(dt_ns, dtype=np.float64)
    # cumulative count at each reading: before the first interval, then after each one
    times = np.concatenate([t_start[:1], t_end])
    cum = np.concatenate([[0.0], np.cumsum(np.asarray(nbytes, dtype=np.float64))])
    edges = start_ns + scale_ns * np.arange(nbuckets + 1, dtype=np.float64)
    return np.diff(np.interp(edges, times, cum))


def window_rates(t_end_ns, dt_ns, nbytes, start_ns: int, end_ns: int,
                 scales: list[int]) -> list[ScaleRate | None]:
    """Average and peak rate over ``[start_ns, end_ns)`` at each bucket length in ``scales``.

    A timescale longer than the window is reported as None; so is any timescale when
    there is no reading. The average is over the whole window; peaks only over whole
    buckets (a partial last bucket would understate its rate).
    """
    out: list[ScaleRate | None] = []
    window_ns = end_ns - start_ns
    if len(t_end_ns) == 0 or window_ns <= 0:
        return [None for _ in scales]
    total = bucket_bytes(t_end_ns, dt_ns, nbytes, start_ns, window_ns, 1)[0]
    avg = total * 8 * NS_PER_S / window_ns
    for scale in scales:
        n = int(window_ns // scale)
        if n < 1:
            out.append(None)
            continue
        b = bucket_bytes(t_end_ns, dt_ns, nbytes, start_ns, scale, n)
        out.append(ScaleRate(scale_ns=scale, avg_bps=avg, peak_bps=float(b.max()) * 8 * NS_PER_S / scale))
    return out


def burst_runs(t_end_ns, dt_ns, nbytes, start_ns: int, end_ns: int, scale_ns: int,
               threshold_bps: float) -> list[int]:
    """Lengths (in buckets) of runs of consecutive buckets at or above ``threshold_bps``."""
    n = int((end_ns - start_ns) // scale_ns)
    if len(t_end_ns) == 0 or n < 1:
        return []
    rates = bucket_bytes(t_end_ns, dt_ns, nbytes, start_ns, scale_ns, n) * 8 * NS_PER_S / scale_ns
    return runs_at_or_above(rates, threshold_bps)


def runs_at_or_above(rates, threshold_bps: float) -> list[int]:
    """Lengths of the runs of consecutive ``rates`` at or above ``threshold_bps``, in order
    (the bursts of ``burst_runs``; ``incastlab.utilization`` counts a simulated port's by it)."""
    runs, current = [], 0
    for above in np.asarray(rates) >= threshold_bps:
        if above:
            current += 1
        elif current:
            runs.append(current)
            current = 0
    if current:
        runs.append(current)
    return runs


def effective_resolution_ns(dt_ns, nbytes, npackets) -> int | None:
    """Estimate of how often the counter really changes, when the driver refreshes it
    more slowly than we poll (many NICs update sysfs counters only periodically).

    Returns the mean time between changes if packets flowed faster than we polled but the
    counter moved in fewer than a quarter of the intervals; None when it looks per-packet.
    """
    dt = np.asarray(dt_ns)
    if len(dt) < 8:
        return None
    changes = int(np.count_nonzero(np.asarray(nbytes)))
    if int(np.sum(npackets)) < 2 * len(dt) or changes * 4 >= len(dt):
        return None
    return int(dt.sum() // max(changes, 1))
