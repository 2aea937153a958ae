"""Millisampler-style series: one Parquet schema for a real host and a simulated machine.

Meta's Millisampler (Ghabashneh et al., "A Microscopic View of Bursts, Buffer Contention, and
Loss in Data Centers", IMC 2022; engineering.fb.com, 2023-04-17) "collects time series of
ingress and egress traffic volumes, number of active flows, incoming ECN marks, and ingress
and egress retransmissions ... at 100us, 1ms, and 10ms time granularities". Here both faces
write those columns, one row per host, timescale and bucket (:data:`SCHEMA`):

| column | what | monitor (a real host) | simulator (a machine) |
|---|---|---|---|
| ``source`` | who measured | ``monitor`` | ``simulator`` |
| ``host`` | the machine | the interface (``eth0``) | ``host 3`` |
| ``scale_s`` | bucket length | 0.0001, 0.001, 0.01 | the same |
| ``t_s`` | bucket start, s from the run's start | | |
| ``in_bytes``, ``out_bytes`` | wire bytes received, sent | rx/tx counters (sysfs or eBPF) | the switch port towards it / its NIC |
| ``active_flows`` | TCP connections that carried data | connections that delivered payload, per socket reading (10 ms; null finer) | distinct flows with data in or out |
| ``in_flows`` | the fan-in: connections that delivered data to this host | the same readings (10 ms; null finer) | distinct flows with data on its downlink |
| ``in_retrans`` | data segments received again | null (a stateless counter cannot tell) | on its downlink, below its flow's highest sequence |
| ``out_retrans`` | segments sent again | ``tcpi_total_retrans`` per socket reading (10 ms; null finer) | on its NIC |
| ``ecn_ce`` | CE-marked packets received | eBPF buckets (null with sysfs) | on its downlink |

A null is "not measured at this scale", never zero. :func:`read` reads a file of either
source (a file from before ``in_flows`` was added reads it as null), :func:`burstiness` is
one analysis over both. ``in_flows`` is what the doctor reads as the fan-in per interval
(``diagnosis/recording.py``): ``active_flows`` counts a host's own sends too.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .errors import UsageError

SCALES_S = (1e-4, 1e-3, 1e-2)
SCHEMA = pa.schema([
    ("source", pa.string()), ("host", pa.string()), ("scale_s", pa.float64()), ("t_s", pa.float64()),
    ("in_bytes", pa.uint64()), ("out_bytes", pa.uint64()), ("active_flows", pa.uint32()),
    ("in_flows", pa.uint32()), ("in_retrans", pa.uint32()), ("out_retrans", pa.uint32()), ("ecn_ce", pa.uint32()),
])
COLUMNS = tuple(SCHEMA.names)
#: Columns a file may lack (written before they were added): read as null.
LATER_COLUMNS = ("in_flows",)
PS_PER_S = 10**12


def check_path(path: str, param: str) -> None:
    """A .parquet file in an existing, writable directory, or a UsageError naming ``param``."""
    if Path(path).suffix.lower() != ".parquet":
        raise UsageError(param, path, "a file name ending in .parquet")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise UsageError(param, path, "a file in an existing, writable directory")


def _table(frames: list[pd.DataFrame]) -> pa.Table:
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame({c: [] for c in COLUMNS})
    arrays = []
    for f in SCHEMA:
        col = df[f.name] if f.name in df else pd.Series([None] * len(df))
        # nullable integers: a None is "not measured"
        arrays.append(pa.array(col.astype(object).where(col.notna(), None).tolist(), type=f.type))
    return pa.Table.from_arrays(arrays, schema=SCHEMA)


def write(frames: list[pd.DataFrame], path: str | os.PathLike) -> Path:
    """The rows of ``frames`` as one Parquet file, atomically."""
    from .outfiles import write_atomically

    table = _table(frames)
    return write_atomically(path, lambda tmp: pq.write_table(table, tmp))


def read(path: str | os.PathLike) -> pd.DataFrame:
    """A file either face wrote, as a DataFrame (nullable integer columns); UsageError if
    it is not one."""
    p = Path(path)
    if p.suffix.lower() != ".parquet" or not p.is_file():
        raise UsageError("FILE", str(path), "an existing .parquet file of Millisampler-style series")
    try:
        table = pq.read_table(p)
    except (pa.ArrowInvalid, OSError) as e:
        raise UsageError("FILE", str(path), f"a Parquet file ({' '.join(str(e).split())})") from None
    for c in LATER_COLUMNS:
        if c not in table.column_names:
            table = table.append_column(c, pa.nulls(len(table), SCHEMA.field(c).type))
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        raise UsageError("FILE", str(path), f"Millisampler-style series (missing columns {', '.join(missing)})")
    return table.select(list(COLUMNS)).cast(SCHEMA).to_pandas(types_mapper=pd.ArrowDtype)


# ---- the simulator -------------------------------------------------------------------------

def from_port_util(u, hosts: list[int] | None = None) -> list[pd.DataFrame]:
    """Every machine's series (``utilization.PortUtil``) at each Millisampler scale the
    recording allows (at or above its interval, a whole multiple of it)."""
    out = []
    for scale in SCALES_S:
        ps = round(scale * PS_PER_S)
        if ps < u.interval_ps or ps % u.interval_ps:
            continue
        a = u.aggregate(scale)
        flows = u.flows.get(ps)
        n = a.whole()
        for h in hosts if hosts is not None else u.machines():
            d, nic = u.downlink(h), u.nic(h)
            active = None if flows is None else (flows[d, :n].astype(np.int64) + flows[nic, :n])
            inbound = None if flows is None else flows[d, :n]
            out.append(pd.DataFrame({
                "source": "simulator", "host": f"host {h}", "scale_s": scale, "t_s": np.arange(n) * scale,
                "in_bytes": a["tx_bytes"][d, :n], "out_bytes": a["tx_bytes"][nic, :n],
                "active_flows": active if active is not None else [None] * n,
                "in_flows": inbound if inbound is not None else [None] * n,
                "in_retrans": a["retrans_packets"][d, :n], "out_retrans": a["retrans_packets"][nic, :n],
                "ecn_ce": a["ce_packets"][d, :n],
            }))
    return out


# ---- the monitor -----------------------------------------------------------------------------

class MonitorWriter:
    """Collects a monitor run's seconds (``Monitor.millisampler``) and writes them at the end
    (a few MB an hour at 100 us: 10,000 rows a second)."""

    def __init__(self, path: str, iface: str):
        check_path(path, "--millisampler")
        self.path, self.iface = path, iface
        self.frames: list[pd.DataFrame] = []

    def second(self, series: dict, start_ns: int, end_ns: int, t0: int, flows, got: dict) -> None:
        """Window ``[start_ns, end_ns)`` from the sampler's readings ``series`` (rx/tx),
        the socket readings folded (``flows.SecondFlows`` or None) and the latest drain
        ``got`` (its eBPF CE counts, when the source is eBPF)."""
        from .monitor.timescales import bucket_bytes

        t_end = np.asarray(series["t_end_ns"], dtype=np.float64)
        dt = np.asarray(series["dt_ns"], dtype=np.float64)
        for scale in SCALES_S:
            ns = round(scale * 1e9)
            n = int((end_ns - start_ns) // ns)
            if n < 1 or len(t_end) == 0:
                continue
            starts = start_ns + ns * np.arange(n)
            rows = {
                "source": "monitor", "host": self.iface, "scale_s": scale, "t_s": (starts - t0) / 1e9,
                "in_bytes": np.round(bucket_bytes(t_end, dt, np.asarray(series["rx_bytes"], np.float64),
                                                  start_ns, ns, n)).astype(np.uint64),
                "out_bytes": np.round(bucket_bytes(t_end, dt, np.asarray(series["tx_bytes"], np.float64),
                                                   start_ns, ns, n)).astype(np.uint64),
                "active_flows": [None] * n, "in_flows": [None] * n, "in_retrans": [None] * n, "out_retrans": [None] * n,
                "ecn_ce": [None] * n,
            }
            if "rx_ce" in got and "rx_ce" in series:
                ce = np.asarray(series["rx_ce"], np.float64)
                rows["ecn_ce"] = np.round(bucket_bytes(t_end, dt, ce, start_ns, ns, n)).astype(np.uint32)
            if flows is not None and flows.t_ns and scale >= 0.01:
                # each socket reading lands in the bucket its time falls in (readings ~10 ms apart)
                idx = (np.asarray(flows.t_ns) - start_ns) // ns
                ok = (idx >= 0) & (idx < n)
                active, retrans = np.zeros(n, np.int64), np.zeros(n, np.int64)
                np.maximum.at(active, idx[ok], np.asarray(flows.active)[ok])
                np.add.at(retrans, idx[ok], np.asarray(flows.retrans)[ok])
                # the readings count connections that delivered payload to this host: its fan-in
                rows["active_flows"], rows["in_flows"], rows["out_retrans"] = active, active, retrans
            self.frames.append(pd.DataFrame(rows))

    def close(self) -> Path:
        return write(self.frames, self.path)


# ---- one analysis for both ---------------------------------------------------------------------

def burstiness(df: pd.DataFrame) -> pd.DataFrame:
    """Per source, host and timescale: the mean and peak receive rate (bit/s) and their
    ratio (the blog's measure, 003_a133663d5dbcfa75.txt), the mean active flows where
    measured and the segments sent again in all. Reads a file of either face (:func:`read`)."""
    rows = []
    for (source, host, scale), g in df.groupby(["source", "host", "scale_s"], sort=True):
        rate = g["in_bytes"].astype("float64").to_numpy() * 8 / scale
        flows = g["active_flows"].dropna().astype("float64")
        retrans = g["out_retrans"].dropna().astype("float64")
        rows.append({"source": source, "host": host, "scale_s": scale, "buckets": len(g),
                     "mean_bps": rate.mean(), "peak_bps": rate.max(),
                     "peak_to_mean": rate.max() / rate.mean() if rate.mean() > 0 else float("nan"),
                     "active_flows_mean": flows.mean() if len(flows) else float("nan"),
                     "out_retrans": float(retrans.sum()) if len(retrans) else float("nan")})
    return pd.DataFrame(rows)
