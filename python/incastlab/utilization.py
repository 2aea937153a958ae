"""Per-port utilization of a simulated run, read the way an operator reads a cluster.

The core samples every port at one interval (``crates/sim/src/port_util.rs``: bytes and
packets whose transmission finished, drops, RTO timeouts of the flows a port delivers, and
per second the distinct data flows). Here that fine series is added up to coarser
intervals (any multiple of the recorded one, up to 1 s), turned into the Riak blog's
numbers (``003_a133663d5dbcfa75.txt``: the peak/average ratio per second at each polling
interval, "dropped frames per second per machine") and judged second by second by the
monitor's own rule (``incastlab.monitor.verdict.judge``), so a simulated cluster and a real
host are read by one rule.

**A machine's facts** (``second_facts``), mapped onto the monitor's ``SecondFacts``:

- ``rx`` is the switch port towards the machine (what its NIC receives, one link's
  propagation earlier), ``tx`` the machine's own NIC; ``line_rate_bps`` the NIC's rate;
- ``peak_1ms_bps``: the largest 1 ms bucket of the second (None when the series was
  recorded coarser than 1 ms, as the monitor reports when it could not poll that fast);
  ``burst_runs_ms``: runs of 1 ms buckets at or above ``LINE_FRACTION`` of line rate;
- ``rto_timeouts``: the RTO timeouts, in that second, of the TCP flows whose data the
  machine receives. The monitor reads its host's TcpExt TCPTimeouts, which counts the
  host's own sockets; in the testbed's single-namespace runs those are the servers', and in
  the blog's Riak cluster every machine both sends and receives. The simulator knows which
  receiver each stalled flow was sending to, so it attributes each timeout to that
  receiver, where the incast that caused it happened;
- ``qdisc_drops``: the frames the switch dropped on the port towards the machine (the
  switch's discards the blog's operators finally got to read, comment 17) under the name
  ``switch port to host H``: the real host's evidence of loss is a qdisc or retransmissions,
  the simulated switch's is the drop itself;
- ``retrans_segs`` and ``spurious_retrans``: None (not sampled; drops stand for loss);
- ``senders``: distinct flows whose data the port delivered in the second (the monitor's
  fan-in from sock_diag: connections that delivered payload in the second).

Only whole seconds are judged (the monitor also reports whole windows).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import UsageError
from .monitor import verdict
from .monitor.timescales import runs_at_or_above

PS_PER_S = 10**12
#: The core records from 100 us to 1 s (``port_util.rs``: MIN_INTERVAL, MAX_INTERVAL).
MIN_INTERVAL_S = 100e-6
MAX_INTERVAL_S = 1.0
#: The blog's polling intervals (2 ms to 500 ms), the monitor's 1 ms, 100 us and 1 s, finest first.
INTERVALS_S = (100e-6, 1e-3, 2e-3, 4e-3, 8e-3, 16e-3, 32e-3, 64e-3, 125e-3, 250e-3, 500e-3, 1.0)
SUFFIXES = ("csv", "parquet")
#: Columns of the per-interval series, and of the file.
SERIES = ("tx_bytes", "tx_packets", "drop_bytes", "drop_packets", "timeouts", "ce_packets", "retrans_packets")
#: Columns a file written before issue 26 lacks (read as zeros).
NEWER = ("ce_packets", "retrans_packets")


@dataclass(frozen=True)
class PortUtil:
    """Every port's series at one interval: arrays of shape (ports, intervals).

    ``ports`` is a DataFrame with ``port``, ``from``, ``to`` (``"host 3"``, ``"switch 0"``)
    and ``rate_bps``; ``senders`` has shape (ports, seconds); ``flows`` maps a window (ps:
    the recorded interval, 1 ms, 10 ms, 1 s) to the distinct data flows per window, (ports,
    windows): a distinct count does not add up, so each window has its own."""

    interval_ps: int
    ports: pd.DataFrame
    series: dict[str, np.ndarray]
    senders: np.ndarray
    truncated: bool = False
    #: Intervals of the last group that are really there (aggregation keeps a partial group).
    last_fill: int = field(default=0)
    flows: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def interval_s(self) -> float:
        return self.interval_ps / PS_PER_S

    @property
    def intervals(self) -> int:
        return self.series["tx_bytes"].shape[1]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.series[name]

    # ---- building --------------------------------------------------------------------

    @staticmethod
    def from_native(columns: dict[str, Any]) -> PortUtil:
        """From ``_native.simulate_recording``'s port series (little-endian column bytes)."""
        meta = json.loads(columns["meta"])
        n, k, secs = len(meta["ports"]), meta["intervals"], meta["seconds"]
        types = {"tx_bytes": "<u8", "drop_bytes": "<u8", "tx_packets": "<u4", "drop_packets": "<u4",
                 "timeouts": "<u4", "ce_packets": "<u4", "retrans_packets": "<u4"}
        # views of the bytes, no copy: the core's 36 B per port and interval, not 56 as int64
        series = {name: np.frombuffer(columns[name], dtype=t).reshape(n, k) for name, t in types.items()}
        senders = np.frombuffer(columns["senders"], dtype="<u4").reshape(n, secs)
        flows = {w: np.frombuffer(columns[f"flows_{w}"], dtype="<u4").reshape(n, -1)
                 for w in meta.get("flow_windows_ps", [])}
        return PortUtil(meta["interval_ps"], pd.DataFrame(meta["ports"]), series, senders, meta["truncated"],
                        flows=flows)

    def aggregate(self, interval_s: float) -> PortUtil:
        """The series added up to ``interval_s``, a whole multiple of the recorded interval
        (and at most 1 s). A last partial group is kept, so totals are preserved."""
        k = _multiple(interval_s, self.interval_ps)
        if k == 1:
            return self
        groups = -(-self.intervals // k)
        pad = groups * k - self.intervals
        out = {}
        for name, a in self.series.items():
            padded = np.pad(a, ((0, 0), (0, pad)))
            out[name] = padded.reshape(a.shape[0], groups, k).sum(axis=2, dtype=np.int64)
        return PortUtil(self.interval_ps * k, self.ports, out, self.senders, self.truncated,
                        last_fill=(k - pad) if pad else 0, flows=self.flows)

    def whole(self) -> int:
        """Intervals that are whole (a partial last group left out)."""
        return self.intervals - (1 if self.last_fill else 0)

    def rate_bps(self) -> np.ndarray:
        """Each interval's rate, bits per second (ports x intervals)."""
        return self.series["tx_bytes"] * 8 * PS_PER_S / self.interval_ps

    # ---- files -----------------------------------------------------------------------

    def to_frame(self) -> pd.DataFrame:
        """One row per port and interval: ``port``, ``from``, ``to``, ``rate_bps``, ``t_s``
        (the interval's start), ``interval_s``, then the series, then ``truncated`` (the same
        on every row: the cap cut the run after the last interval)."""
        n, k = self.series["tx_bytes"].shape
        df = pd.DataFrame({
            "port": np.repeat(self.ports["port"].to_numpy(), k),
            "from": np.repeat(self.ports["from"].to_numpy(), k),
            "to": np.repeat(self.ports["to"].to_numpy(), k),
            "rate_bps": np.repeat(self.ports["rate_bps"].to_numpy(), k),
            "t_s": np.tile(np.arange(k) * self.interval_s, n),
            "interval_s": self.interval_s,
        })
        for name in SERIES:
            df[name] = self.series[name].ravel()
        df["truncated"] = self.truncated
        return df

    def write(self, path: str | os.PathLike) -> Path:
        """The per-interval rows (``to_frame``) as CSV or Parquet by extension, atomically."""
        from .outfiles import write_atomically

        df = self.to_frame()
        if Path(path).suffix.lower() == ".parquet":
            return write_atomically(path, lambda tmp: df.to_parquet(tmp, index=False))
        return write_atomically(path, lambda tmp: df.to_csv(tmp, index=False))

    @staticmethod
    def read(path: str | os.PathLike) -> PortUtil:
        """A file ``write`` wrote (the per-second senders are not in it: zeros)."""
        p = Path(path)
        df = pd.read_parquet(p) if p.suffix.lower() == ".parquet" else pd.read_csv(p)
        ports = df.drop_duplicates("port")[["port", "from", "to", "rate_bps"]].reset_index(drop=True)
        n = len(ports)
        k = len(df) // n
        interval_ps = int(round(float(df["interval_s"].iloc[0]) * PS_PER_S))
        series = {name: (df[name].to_numpy(dtype=np.int64) if name in df else np.zeros(len(df), np.int64)).reshape(n, k)
                  for name in SERIES}
        seconds = -(-k * interval_ps // PS_PER_S)
        truncated = bool(df["truncated"].iloc[0]) if "truncated" in df and len(df) else False
        return PortUtil(interval_ps, ports, series, np.zeros((n, seconds), dtype=np.int64), truncated)

    # ---- machines --------------------------------------------------------------------

    def port_index(self, frm: str, to: str) -> int:
        hit = np.flatnonzero((self.ports["from"] == frm).to_numpy() & (self.ports["to"] == to).to_numpy())
        if len(hit) == 0:
            raise KeyError(f"no port from {frm} to {to}")
        return int(hit[0])

    def machines(self) -> list[int]:
        """Hosts, by number."""
        hosts = self.ports.loc[self.ports["from"].str.startswith("host"), "from"]
        return sorted(int(h.split()[1]) for h in hosts)

    def downlink(self, host: int) -> int:
        """Index of the switch port towards ``host`` (its receive side)."""
        hit = np.flatnonzero((self.ports["to"] == f"host {host}").to_numpy())
        return int(hit[0])

    def nic(self, host: int) -> int:
        """Index of ``host``'s NIC (its transmit side)."""
        hit = np.flatnonzero((self.ports["from"] == f"host {host}").to_numpy())
        return int(hit[0])


def _multiple(interval_s: float, base_ps: int) -> int:
    ps = int(round(interval_s * PS_PER_S))
    if not (MIN_INTERVAL_S * PS_PER_S <= ps <= MAX_INTERVAL_S * PS_PER_S) or ps % base_ps:
        raise UsageError("interval", f"{interval_s:g}s",
                         f"a whole multiple of the recorded {base_ps / 1e6:g} us, from 100 us to 1 s")
    return ps // base_ps


def check_interval(interval_s: float, param: str = "port_util_interval") -> int:
    """The interval in picoseconds, refused outside 100 us .. 1 s."""
    ps = int(round(interval_s * PS_PER_S))
    if not (MIN_INTERVAL_S * PS_PER_S <= ps <= MAX_INTERVAL_S * PS_PER_S):
        raise UsageError(param, f"{interval_s:g}s", "an interval from 100us to 1s")
    return ps


# ---- the blog's numbers ------------------------------------------------------------------

def peak_to_average(u: PortUtil, port: int, interval_s: float, window_s: float = 1.0) -> pd.DataFrame:
    """Per whole window of ``window_s``: the average rate, the peak ``interval_s`` bucket and
    their ratio, on one port: the blog's escript ("divides the maximum bandwidth observed
    during that second by the average bandwidth for the second"). Buckets start at each
    window's start; where ``interval_s`` does not divide the window (64 ms in 1 s) the last
    partial bucket is left out of the peak (it would understate its rate), not the average."""
    k = _multiple(interval_s, u.interval_ps)
    per = _multiple(window_s, u.interval_ps)
    if k > per:
        raise UsageError("interval", f"{interval_s:g}s", f"at most the window ({window_s:g}s)")
    windows = u.intervals // per
    b = u["tx_bytes"][port, : windows * per].reshape(windows, per)
    buckets = per // k
    peak_bytes = b[:, : buckets * k].reshape(windows, buckets, k).sum(axis=2).max(axis=1)
    avg = b.sum(axis=1) * 8 / window_s
    peak = peak_bytes * 8 / interval_s
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(avg > 0, peak / avg, np.nan)
    return pd.DataFrame({"t_s": np.arange(windows) * window_s, "avg_bps": avg, "peak_bps": peak, "ratio": ratio})


def drops_per_second(u: PortUtil) -> pd.DataFrame:
    """Frames dropped on the switch port towards each machine, per whole second
    (the blog's "dropped frames per second per machine"); columns ``host``, ``second``,
    ``drops``, ``rx_mbps`` and ``tx_mbps`` (that second's average rates)."""
    sec = u.aggregate(1.0)
    rows = []
    for h in u.machines():
        d, n = u.downlink(h), u.nic(h)
        for s in range(sec.whole()):
            rows.append({"host": h, "second": s, "drops": int(sec["drop_packets"][d, s]),
                         "rx_mbps": sec["tx_bytes"][d, s] * 8 / 1e6, "tx_mbps": sec["tx_bytes"][n, s] * 8 / 1e6})
    return pd.DataFrame(rows, columns=["host", "second", "drops", "rx_mbps", "tx_mbps"])


def _direction(u_ms: PortUtil, port: int, second: int, avg_bps: float, line_rate: float, name: str
               ) -> verdict.DirectionFacts:
    if u_ms is None:
        return verdict.DirectionFacts(name, avg_bps, None)
    ms = u_ms["tx_bytes"][port, second * 1000:(second + 1) * 1000] * 8 * 1000.0
    runs = runs_at_or_above(ms, verdict.LINE_FRACTION * line_rate)  # the monitor's bursts, counted its way
    return verdict.DirectionFacts(name, avg_bps, float(ms.max()), runs)


def second_facts(u: PortUtil, host: int, second: int) -> verdict.SecondFacts:
    """Machine ``host``'s evidence over second ``second``, as the monitor's ``SecondFacts``
    (the mapping is in the module docstring)."""
    sec = u.aggregate(1.0)
    if second >= sec.whole():
        raise IndexError(f"second {second} is not whole in this run ({sec.whole()} are)")
    return _facts(u, sec, _one_ms(u), host, second)


def _one_ms(u: PortUtil) -> PortUtil | None:
    """The series at 1 ms, or None when it was recorded coarser (the verdict's peak is 1 ms)."""
    return u.aggregate(1e-3) if (PS_PER_S // 1000) % u.interval_ps == 0 else None


def _fanin(u: PortUtil, fine: PortUtil | None, port: int, second: int, line: float) -> verdict.FanIn | None:
    """The most distinct flows delivering within one 1 ms while the port ran at line rate
    (``verdict.FanIn``); None when the series has no 1 ms flow counts (recorded coarser)."""
    ms = u.flows.get(PS_PER_S // 1000)
    if ms is None or fine is None:
        return None
    lo, hi = second * 1000, (second + 1) * 1000
    rate = fine["tx_bytes"][port, lo:hi] * 8 * 1000.0
    at_line = rate >= verdict.LINE_FRACTION * line
    counts = ms[port, lo:hi][: len(at_line)]
    return verdict.FanIn(int(counts[at_line[: len(counts)]].max(initial=0)), 1e-3)


def _facts(u: PortUtil, sec: PortUtil, fine: PortUtil | None, host: int, second: int) -> verdict.SecondFacts:
    d, n = u.downlink(host), u.nic(host)
    line = float(u.ports["rate_bps"].iloc[n])
    directions = [
        _direction(fine, d, second, float(sec["tx_bytes"][d, second] * 8), line, "rx"),
        _direction(fine, n, second, float(sec["tx_bytes"][n, second] * 8), line, "tx"),
    ]
    drops = {f"switch port to host {host}": int(sec["drop_packets"][d, second])}
    senders = int(u.senders[d, second]) if second < u.senders.shape[1] else 0
    # retransmissions of the flows towards the machine, seen on its downlink (Millisampler's
    # ingress retransmissions); the simulator has no D-SACK count: none are taken as spurious
    retrans = int(sec["retrans_packets"][d, second])
    return verdict.SecondFacts(directions, line, int(sec["timeouts"][d, second]), retrans, drops, senders, None,
                               fanin=_fanin(u, fine, d, second, line))


def verdicts(u: PortUtil, hosts: list[int] | None = None) -> pd.DataFrame:
    """The verdict for every machine and whole second: ``host``, ``second``, ``level`` and
    ``evidence`` by ``monitor.verdict.judge`` (the second before passed along, as the
    monitor does), ``ratio_level`` by the rule before issue 26 (``judge_ratio``), and the
    facts they read: ``fanin`` (senders within one 1 ms at line rate), ``senders`` (of the
    second), ``timeouts``, ``drops`` and ``retrans``."""
    sec, fine = u.aggregate(1.0), _one_ms(u)
    rows = []
    for h in hosts if hosts is not None else u.machines():
        previous = None
        for s in range(sec.whole()):
            f = _facts(u, sec, fine, h, s)
            v = verdict.judge(f, previous)
            rows.append({"host": h, "second": s, "level": v.level, "evidence": v.evidence,
                         "ratio_level": verdict.judge_ratio(f).level,
                         "fanin": f.fanin.senders if f.fanin is not None else None, "senders": f.senders,
                         "timeouts": f.rto_timeouts, "drops": sum(f.qdisc_drops.values()),
                         "retrans": f.retrans_segs})
            previous = f
    return pd.DataFrame(rows, columns=["host", "second", "level", "evidence", "ratio_level", "fanin", "senders",
                                       "timeouts", "drops", "retrans"])
