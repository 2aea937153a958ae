"""A recording of the client's link as the doctor's description.

Two kinds of file, told apart by their columns:

- **Millisampler-style series** (``incastlab.millisampler``: ``monitor --millisampler``
  on a real host, ``simulate --millisampler`` for every simulated machine): bytes in per
  bucket at 100 us, 1 ms and 10 ms, and **``in_flows``, the connections that delivered data
  to the host in each bucket**: its fan-in per interval. The doctor's fan-in is the 90th
  percentile of ``in_flows`` over the buckets received at line rate (at least
  ``LINE_FRACTION`` of it, the monitor verdict's share) at the finest scale that has it
  (100 us from the simulator; 10 ms from the monitor, whose socket readings are 10 ms
  apart, so a real host's fan-in counts every sender of 10 ms, an upper bound). Why the
  90th percentile: the port overflows in the instants the most senders meet, and the
  median line-rate bucket is one read's own senders; the maximum is a single bucket.
- **a ``monitor --record`` file** (``monitor/record.py``: per fine interval ``t_s, dt_s,
  rx/tx bytes and packets``): no flows, so the fan-in must be given (``--fan-in``).

From both: **bursts**, runs of intervals received above half the line rate (the blog's
microbursts, ``003_a133663d5dbcfa75.txt``) merged across gaps shorter than one RTT, whose
median size is taken as one read's block (the response per server is the block over the
fan-in unless ``--response`` is given); **the line rate**, if not given, the fastest
millisecond rounded up to a standard rate (a 100 us bucket may hold a packet over its share). A burst is cut where a loss recovery dips the rate
below half, so the median burst underestimates a block when the link drops (the Riak case
in docs/doctor.md): give ``--response`` when the reply size is known.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from ..monitor.verdict import LINE_FRACTION

STANDARD_RATES_BPS = (10**8, 10**9, 10 * 10**9, 25 * 10**9, 40 * 10**9, 50 * 10**9, 100 * 10**9,
                      200 * 10**9, 400 * 10**9)
BURST_SHARE = 0.5
FAN_IN_PERCENTILE = 90


@dataclass(frozen=True)
class RecordingSummary:
    path: str
    kind: str                    # "monitor --record", or "Millisampler (simulator|monitor), host H"
    seconds: float
    intervals: int
    line_rate_bps: int
    line_rate_given: bool
    average_rx_bps: float
    peak_rx_bps: float
    bursts: int
    burst_bytes_median: int
    bursts_per_second: float
    fan_in: int | None = None            # from in_flows; None: the file has none
    fan_in_scale_s: float | None = None
    fan_in_buckets: int = 0              # line-rate buckets it was read from
    fan_in_spread: tuple = ()            # in_flows at the line-rate buckets: median, p90, max
    in_retrans: int | None = None        # data segments received again (simulator files)
    extra: list = field(default_factory=list)

    def text(self) -> str:
        s = (f"{self.path} ({self.kind}): {self.seconds:.2f} s in {self.intervals} intervals, rx average "
             f"{self.average_rx_bps / 1e6:.0f} Mbps, peak {self.peak_rx_bps / 1e6:.0f} Mbps; {self.bursts} bursts "
             f"above {BURST_SHARE:.0%} of {self.line_rate_bps / 1e9:g} Gbps ({self.bursts_per_second:.1f}/s), "
             f"median {self.burst_bytes_median:,} B")
        if self.fan_in is not None:
            med, p90, mx = self.fan_in_spread
            s += (f"; fan-in {self.fan_in}: senders per {self.fan_in_scale_s * 1e3:g} ms bucket at line rate "
                  f"(p{FAN_IN_PERCENTILE} of {self.fan_in_buckets} buckets; median {med:g}, max {mx:g})")
        return s

    def notes(self, fan_in: int, response_bytes: int | None) -> list[str]:
        """What the recording says beyond the description: its losses, and the get rate a
        Riak-like description of the same load would have."""
        out = list(self.extra)
        if self.in_retrans:
            out.append(f"the recording shows {self.in_retrans:,} data segments received again "
                       f"({self.in_retrans / max(self.seconds, 1e-12):.0f}/s): its port drops")
        response = response_bytes or max(1, self.burst_bytes_median // max(fan_in, 1))
        gets = self.average_rx_bps / (8 * fan_in * response)
        out.append(f"the doctor models one read of {fan_in} servers at a time; reads that overlap (a key-value "
                   f"store's gets) are the Riak-like description: at this average, about {gets:.3g} reads a second "
                   f"of {fan_in} x {response:,} B (incastlab doctor --get-rate {gets:.3g} --reply-size {response}B "
                   f"--n-val {fan_in} --nodes N ...)")
        return out


def _standard_rate(rx: np.ndarray, dt: np.ndarray) -> int:
    """The line rate: the fastest 1 ms (or the interval, if coarser) rounded up to a standard
    rate. Not the fastest fine interval: a 100 us bucket counts whole packets, so at line
    rate one may hold a packet more than its share (1.1 Gbps at 1 Gbps)."""
    k = max(1, int(round(1e-3 / max(float(np.median(dt)), 1e-9))))
    if len(rx) >= k:
        c = np.concatenate([[0.0], np.cumsum(rx)])
        d = np.concatenate([[0.0], np.cumsum(dt)])
        span = d[k:] - d[:-k]
        peak = float(np.max(np.where(span > 0, (c[k:] - c[:-k]) * 8 / np.where(span > 0, span, 1), 0)))
    else:
        peak = float(np.max(np.where(dt > 0, rx * 8 / np.where(dt > 0, dt, 1), 0)))
    return next((r for r in STANDARD_RATES_BPS if r >= peak * 0.99), STANDARD_RATES_BPS[-1])


def _bursts(t_end: np.ndarray, dt: np.ndarray, rx: np.ndarray, hot: np.ndarray, rtt_s: float) -> list[float]:
    bursts: list[float] = []
    current, last_end = 0.0, None
    for i in np.flatnonzero(hot):
        start = t_end[i] - dt[i]
        if last_end is not None and start - last_end <= max(rtt_s, dt[i]):
            current += rx[i]
        else:
            if current:
                bursts.append(current)
            current = rx[i]
        last_end = t_end[i]
    if current:
        bursts.append(current)
    return bursts


def _is_millisampler(path: str) -> bool:
    if not str(path).lower().endswith(".parquet"):
        return False
    import pyarrow.parquet as pq

    try:
        return "scale_s" in pq.read_schema(path).names
    except Exception:  # noqa: BLE001 - not a Parquet file: monitor.record.read says why
        return False


def has_fan_in(path: str) -> bool:
    """Whether the file can give the fan-in per interval (a Millisampler file)."""
    return _is_millisampler(path)


def _millisampler(path: str):
    """(kind, t_end, dt, rx, fan-in fields, in_retrans, extra notes) of the busiest host."""
    from .. import millisampler

    try:
        df = millisampler.read(path)
    except UsageError as e:
        raise UsageError("--record", path, e.allowed) from None
    if len(df) == 0:
        raise UsageError("--record", path, "a recording with at least one interval")
    extra = []
    hosts = df["host"].unique().tolist()
    finest = float(df["scale_s"].min())
    fine = df[df["scale_s"] == finest]
    host = max(hosts, key=lambda h: float(fine[fine["host"] == h]["in_bytes"].astype("float64").sum()))
    if len(hosts) > 1:
        extra.append(f"the recording holds {len(hosts)} hosts; read the busiest receiver, {host}")
    df = df[df["host"] == host]
    fine = df[df["scale_s"] == finest].sort_values("t_s")
    source = str(fine["source"].iloc[0])
    t_start = fine["t_s"].astype("float64").to_numpy()
    dt = np.full(len(fine), finest)
    rx = fine["in_bytes"].astype("float64").to_numpy()
    retrans = fine["in_retrans"].dropna()
    in_retrans = int(retrans.astype("int64").sum()) if len(retrans) else None
    flows = {float(sc): g.sort_values("t_s") for sc, g in df.groupby("scale_s") if g["in_flows"].notna().any()}
    return f"Millisampler ({source}), {host}", t_start + dt, dt, rx, flows, in_retrans, extra


def _fan_in(flows: dict, line_rate_bps: int) -> tuple[int | None, float | None, int, tuple]:
    if not flows:
        return None, None, 0, ()
    scale = min(flows)
    g = flows[scale]
    rate = g["in_bytes"].astype("float64").to_numpy() * 8 / scale
    f = g["in_flows"].astype("float64").to_numpy()
    hot = (rate >= LINE_FRACTION * line_rate_bps) & np.isfinite(f)
    if not hot.any():
        return None, scale, 0, ()
    x = f[hot]
    n = max(1, math.ceil(float(np.percentile(x, FAN_IN_PERCENTILE))))
    return n, scale, int(hot.sum()), (float(np.median(x)), float(np.percentile(x, FAN_IN_PERCENTILE)), float(x.max()))


def summarize(path: str, line_rate_bps: int | None, rtt_s: float) -> RecordingSummary:
    if _is_millisampler(path):
        kind, t_end, dt, rx, flows, in_retrans, extra = _millisampler(path)
    else:
        from ..monitor.record import read

        df = read(path)
        if len(df) == 0:
            raise UsageError("--record", path, "a recording with at least one interval")
        kind, flows, in_retrans, extra = "monitor --record", {}, None, []
        dt = df["dt_s"].to_numpy(dtype=float)
        rx = df["rx_bytes"].to_numpy(dtype=float)
        t_end = df["t_s"].to_numpy(dtype=float)
    ok = dt > 0
    rate = np.zeros_like(rx)
    rate[ok] = rx[ok] * 8 / dt[ok]
    peak = float(rate.max())
    given = line_rate_bps is not None
    if line_rate_bps is None:
        line_rate_bps = _standard_rate(rx, dt)
    bursts = _bursts(t_end, dt, rx, rate >= BURST_SHARE * line_rate_bps, rtt_s)
    seconds = float(dt.sum())
    if not bursts:
        raise UsageError("--record", path, f"a recording with bursts above {BURST_SHARE:.0%} of the line rate "
                         f"({line_rate_bps / 1e9:g} Gbps; give --rate if the link is slower)")
    fan_in, scale, buckets, spread = _fan_in(flows, int(line_rate_bps))
    if flows and fan_in is None:
        extra.append(f"no bucket at line rate ({LINE_FRACTION:.0%} of {line_rate_bps / 1e9:g} Gbps) with its flows "
                     "counted: the fan-in is not read from this recording")
    return RecordingSummary(path=path, kind=kind, seconds=seconds, intervals=len(rx), line_rate_bps=int(line_rate_bps),
                            line_rate_given=given, average_rx_bps=float(rx.sum() * 8 / max(seconds, 1e-12)),
                            peak_rx_bps=peak, bursts=len(bursts), burst_bytes_median=int(np.median(bursts)),
                            bursts_per_second=len(bursts) / max(seconds, 1e-12), fan_in=fan_in,
                            fan_in_scale_s=scale, fan_in_buckets=buckets, fan_in_spread=spread,
                            in_retrans=in_retrans, extra=extra)
