"""The monitor's per-second loop: drain the native sampler, read TCP and qdisc counters,
compute rates at every timescale, judge, and hand one record per second to the caller.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import EnvironmentProblem, UsageError
from . import flows, native, procnet, qdisc, senders, timescales, verdict
from .counter_clock import CounterClock

NS_PER_S = timescales.NS_PER_S
# the achieved median may differ from the request by this much before we say we could not
# sample at the requested interval (the acceptance bound)
INTERVAL_TOLERANCE = 0.20
# drain this long after a window ends, so a reading after its end exists to interpolate to
DRAIN_LAG_NS = 5_000_000
# how long the loop waits for the counter thread's reading of a window's end before it reads
# the counters itself (and from then on, so that readings stay in time order)
COUNTER_WAIT_S = 1.0
SERIES = ("t_end_ns", "dt_ns", "rx_bytes", "tx_bytes", "rx_packets", "tx_packets")


def _readings_after(held: dict, t_ns: int) -> dict:
    """The readings of ``held`` that end after ``t_ns`` (the next window's context)."""
    keep = [i for i, t in enumerate(held["t_end_ns"]) if t > t_ns]
    return {k: [v[i] for i in keep] for k, v in held.items()}


@dataclass
class MonitorConfig:
    iface: str
    interval_ns: int = 100_000
    duration_ns: int = 10 * NS_PER_S
    line_rate_bps: float | None = None
    tcp_netns: list[str | None] = field(default_factory=lambda: [None])
    qdisc_dev: str | None = None  # default: iface
    qdisc_netns: str | None = None
    spin_ns: int = 0
    source: str = "auto"  # "auto" (eBPF if the kernel allows, else sysfs) | "ebpf" | "sysfs"
    netns: str | None = None  # where the interface lives (for the record only)
    flow_interval_ns: int = flows.DEFAULT_INTERVAL_NS  # how often the sockets are read


def sysfs_line_rate_bps(iface: str) -> float | None:
    """The link speed of a physical interface; None for virtual ones (veth, bridges,
    loopback report no or a made-up speed) or when the driver does not know it."""
    base = f"/sys/class/net/{iface}"
    if not os.path.exists(f"{base}/device"):
        return None
    try:
        with open(f"{base}/speed") as f:
            mbps = int(f.read().strip())
    except (OSError, ValueError):
        return None
    return mbps * 1e6 if mbps > 0 else None


def is_loopback(iface: str) -> bool:
    """Whether the interface is a loopback device (IFF_LOOPBACK in its sysfs flags)."""
    try:
        with open(f"/sys/class/net/{iface}/flags") as f:
            return bool(int(f.read().strip(), 16) & 0x8)
    except (OSError, ValueError):
        return False


def default_iface() -> str:
    """The interface of the default IPv4 route, else eth0."""
    try:
        with open("/proc/net/route") as f:
            for line in f.readlines()[1:]:
                parts = line.split()
                if len(parts) > 2 and parts[1] == "00000000":
                    return parts[0]
    except OSError:
        pass
    return "eth0"


class CounterDeltas:
    """Per-second increases of named cumulative counters, wrap- and reset-safe."""

    def __init__(self):
        self.prev: dict[str, int] = {}
        self.resets: list[str] = []

    def update(self, current: dict[str, int | None]) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        for name, cur in current.items():
            if cur is None:
                out[name] = None
                self.prev.pop(name, None)
                continue
            if name in self.prev:
                value, event = native().counter_delta(self.prev[name], cur)
                if event == "reset":
                    self.resets.append(name)
                out[name] = value
            else:
                out[name] = None  # first reading: no interval yet
            self.prev[name] = cur
        return out


def _fmt_scale(ns: int) -> str:
    if ns >= NS_PER_S and ns % NS_PER_S == 0:
        return f"{ns // NS_PER_S}s"
    if ns >= 1_000_000 and ns % 1_000_000 == 0:
        return f"{ns // 1_000_000}ms"
    return f"{round(ns / 1000)}us"


class Monitor:
    """One monitoring run; call :meth:`run` with a callback taking each per-second record."""

    def __init__(self, cfg: MonitorConfig, recorder=None):
        self.cfg = cfg
        self.recorder = recorder
        self.all_dt: list[int] = []
        self.missed = 0
        self.uncertain = 0
        self.wraps = 0
        self.resets = 0
        self.tcp = CounterDeltas()
        self.senders: senders.SenderWatch | None = None
        self.poller: flows.FlowPoller | None = None
        self.stalls = flows.StallTracker()
        self._pending: list[flows.Reading] = []
        self._last_reading_ns: int | None = None
        self._previous_facts: verdict.SecondFacts | None = None
        self.millisampler = None  # a millisampler.MonitorWriter, when asked for
        self.qd = CounterDeltas()
        # TCP and qdisc counters read at each window's end (counter_clock.py); None before the
        # first window's end is known, and after a reading did not come in time
        self.counter_clock: CounterClock | None = None
        self.unavailable: dict[str, str] = {}
        self.incast_seconds = 0
        self.seconds = 0
        self.source = "none"
        self.loopback = is_loopback(cfg.iface)
        self.source_reason = "asked for with --source"
        #: The signal that ended the run early (SIGINT, SIGTERM, SIGHUP), else None.
        self.stopped_by: str | None = None

    # -- readers -----------------------------------------------------------------
    def _watch_senders(self) -> None:
        try:
            self.senders = senders.SenderWatch(self.cfg.iface)
            self.poller = flows.FlowPoller(self.senders, self.cfg.flow_interval_ns).start()
        except OSError as e:
            self.unavailable["tcp senders"] = f"cannot read this namespace's TCP sockets (sock_diag): {e}"

    def _read_flows(self, end_ns: int, series: dict) -> flows.SecondFlows | None:
        """The second ending at ``end_ns`` as the socket readings saw it (``flows.fold``)."""
        if self.poller is None:
            return None
        try:
            got = self._pending + self.poller.drain()
        except OSError as e:
            self.unavailable["tcp senders"] = f"cannot read this namespace's TCP sockets (sock_diag): {e}"
            self.poller = None
            return None
        self.unavailable.update(self.senders.unavailable)
        mine = [r for r in got if r.t_ns <= end_ns]
        self._pending = [r for r in got if r.t_ns > end_ns]
        folded, self._last_reading_ns = flows.fold(
            mine, self.stalls, self._last_reading_ns, self.cfg.line_rate_bps,
            np.asarray(series["t_end_ns"], dtype=np.float64), np.asarray(series["dt_ns"], dtype=np.float64),
            np.asarray(series["rx_bytes"], dtype=np.float64))
        return folded

    def _read_tcp(self) -> dict[str, int | None]:
        counters, unavailable = procnet.read_tcp_counters(self.cfg.tcp_netns)
        self.unavailable.update(unavailable)
        return counters

    def _read_counters(self) -> tuple[dict[str, int | None], dict[str, int | None]]:
        return self._read_tcp(), self._read_qdiscs()

    def _start_counter_clock(self, ends: list[int]) -> CounterClock | None:
        return CounterClock(self._read_counters, ends).start()

    def _counters_at(self, end_ns: int) -> tuple[int, tuple[dict[str, int | None], dict[str, int | None]]]:
        """The TCP and qdisc counters as read at the window's end, and when they were read."""
        got = None if self.counter_clock is None else self.counter_clock.at(end_ns, COUNTER_WAIT_S)
        if got is not None:
            return got
        if self.counter_clock is not None:
            # the thread is behind or gone: read here from now on, so readings stay in order
            self.counter_clock.stop()
            self.counter_clock = None
            self.unavailable["counters at each second's end"] = (
                "the counter thread fell behind; TCP and qdisc counters are read when a second is judged "
                "(see counters_late_s)")
        return time.monotonic_ns(), self._read_counters()

    def _read_qdiscs(self) -> dict[str, int | None]:
        dev = self.cfg.qdisc_dev or self.cfg.iface
        try:
            qs = qdisc.read_qdiscs(dev, self.cfg.qdisc_netns)
        except (OSError, ValueError) as e:
            self.unavailable[f"qdisc ({dev})"] = str(e)
            return {}
        out: dict[str, int | None] = {}
        for q in qs:
            out[f"{q.name}.drops"] = q.drops
            out[f"{q.name}.overlimits"] = q.overlimits
        return out

    def _open_sampler(self):
        """The in-kernel bucket counter where allowed (and asked), else the sysfs poller."""
        cfg = self.cfg
        iface_ok = "/" not in cfg.iface and cfg.iface not in ("", ".", "..") and \
            os.path.isdir(f"/sys/class/net/{cfg.iface}")
        if not iface_ok:
            raise UsageError("--iface", cfg.iface, "an interface of this network namespace (see `ip link`)")
        source = cfg.source
        if source == "auto":
            # the source closest to the wire: software devices (veth, bridge, lo) count
            # every packet in their sysfs counters at the moment it is transmitted (veth's
            # rx counters are its peer's tx), while the eBPF ingress hook runs when this
            # host's stack gets to the packet, after backlog batching; NIC drivers may
            # refresh sysfs counters only periodically, so hardware gets eBPF
            if os.path.exists(f"/sys/class/net/{cfg.iface}/device"):
                source = "ebpf"
                self.source_reason = "hardware NIC: counted in the kernel, at the tc hooks"
            else:
                source = "sysfs"
                self.source_reason = ("software device: its sysfs counters move per packet at transmit time "
                                      "(closer to the wire than the eBPF ingress hook)")
        if source == "ebpf":
            try:
                sampler = native().KernelSampler(cfg.iface, cfg.interval_ns)
                self.source = "ebpf"
                return sampler
            except OSError as e:
                if cfg.source == "ebpf":
                    raise EnvironmentProblem(f"--source ebpf: {e}") from None
                self.unavailable["ebpf"] = f"{e}; using the sysfs poller instead"
                self.source_reason = "eBPF not available here"
        try:
            sampler = native().Sampler(cfg.iface, cfg.interval_ns, cfg.spin_ns)
        except ValueError as e:
            raise UsageError("--iface", cfg.iface, "an interface of this network namespace (see `ip link`)") from e
        except OSError as e:
            raise EnvironmentProblem(f"cannot read the counters of {cfg.iface}: {e}") from None
        self.source = "sysfs"
        return sampler

    # -- the loop ----------------------------------------------------------------
    def run(self, emit: Callable[[dict], None]) -> dict:
        """Watch for the configured duration, calling ``emit`` once per second; returns the
        summary. On Ctrl-C (or SIGTERM, SIGHUP: ``incastlab.interrupts``) the readings since
        the last second are still recorded, ``stopped_by`` names the signal, and the
        interrupt is re-raised: ``summary()`` then covers the seconds watched."""
        try:
            return self._run(emit)
        except KeyboardInterrupt as e:
            from ..interrupts import signal_name

            self.stopped_by = signal_name(e)
            raise

    def _run(self, emit: Callable[[dict], None]) -> dict:
        cfg = self.cfg
        sampler = self._open_sampler()
        t0 = time.monotonic_ns()  # set again below, once the counters are read
        try:
            tcp_now, qd_now = self._read_counters()  # the first window's baseline
            self.tcp.update(tcp_now)
            self.qd.update(qd_now)
            self._watch_senders()
            # Windows are exact seconds [w0 + k s, w0 + (k+1) s) from the first reading; we
            # drain a little after each window's end so readings cover it, and hold every
            # reading not yet behind the window just judged (bucket edges are interpolated
            # across readings). A host too loaded to judge a second within a second falls
            # behind: the drains then reach past the window, and the held readings still
            # cover it (before, only the previous drain was carried, and a window two drains
            # back read as 0 bytes); `lag_s` says how far behind.
            t0 = time.monotonic_ns()
            w0: int | None = None
            held: dict | None = None
            done = 0
            while done < cfg.duration_ns:
                step = min(NS_PER_S, cfg.duration_ns - done)
                base = w0 if w0 is not None else t0
                delay = (base + done + step + DRAIN_LAG_NS - time.monotonic_ns()) / NS_PER_S
                if delay > 0:
                    time.sleep(delay)
                try:
                    got = sampler.drain()
                except OSError as e:
                    raise EnvironmentProblem(f"sampling {cfg.iface} stopped: {e}") from None
                if not got["t_end_ns"]:
                    raise EnvironmentProblem(f"sampling {cfg.iface} produced no reading in a second "
                                             "(the polling thread did not run)")
                if w0 is None:
                    w0 = got["t_end_ns"][0] - got["dt_ns"][0]
                    ends = list(range(w0 + NS_PER_S, w0 + cfg.duration_ns, NS_PER_S)) + [w0 + cfg.duration_ns]
                    self.counter_clock = self._start_counter_clock(ends)
                self._account(got, t0)
                keys = SERIES + (("rx_ce", "tx_ce") if "rx_ce" in got else ())
                held = {k: list(got[k]) for k in keys} if held is None else {k: held[k] + list(got[k]) for k in keys}
                start, end = w0 + done, w0 + done + step
                record = self._second(held, got, start, end, t0)
                record["lag_s"] = round(max(0, time.monotonic_ns() - end) / NS_PER_S, 3)
                emit(record)
                held = _readings_after(held, start)
                done += step
        except KeyboardInterrupt:
            self._last_readings(sampler, t0)
            raise
        finally:
            sampler.stop()
            if self.poller is not None:
                self.poller.stop()
            if self.counter_clock is not None:
                self.counter_clock.stop()
        return self.summary()

    def _last_readings(self, sampler, t0: int) -> None:
        """Record what was sampled since the last full second (a run stopped by a signal)."""
        try:
            got = sampler.drain()
        except OSError:
            return
        if got["t_end_ns"]:
            self._account(got, t0)

    def _account(self, got: dict, t0: int) -> None:
        """Book-keeping for one drain: timing, counter events, the recording."""
        self.all_dt.extend(got["dt_ns"])
        self.missed += got["missed"]
        self.uncertain += got["uncertain"]
        self.wraps += got["wraps"]
        self.resets += got["resets"]
        if self.recorder is not None:
            t_end = np.asarray(got["t_end_ns"], dtype=np.int64)
            dt = np.asarray(got["dt_ns"], dtype=np.int64)
            self.recorder.write(((t_end - t0) / NS_PER_S).tolist(), (dt / NS_PER_S).tolist(), got["rx_bytes"],
                                got["tx_bytes"], got["rx_packets"], got["tx_packets"])

    def _second(self, series: dict, got: dict, start_ns: int, end_ns: int, t0: int) -> dict:
        """The record of window [start_ns, end_ns) from ``series`` (readings covering it);
        ``got`` is the latest drain (timing statistics are per drain)."""
        cfg = self.cfg
        t_end = np.asarray(series["t_end_ns"], dtype=np.int64)
        dt = np.asarray(series["dt_ns"], dtype=np.int64)
        in_window = (t_end > start_ns) & (t_end - dt < end_ns)
        stats = native().interval_stats(got["dt_ns"])
        median = stats["median_ns"]
        # the finest timescale we can claim: the median achieved interval, or coarser if
        # the driver refreshes its counters less often than we poll
        finest = max(median, cfg.interval_ns)
        refresh = {}
        for d in ("rx", "tx"):
            eff = timescales.effective_resolution_ns(dt[in_window], np.asarray(series[f"{d}_bytes"])[in_window],
                                                     np.asarray(series[f"{d}_packets"])[in_window])
            if eff:
                refresh[d] = eff
                finest = max(finest, eff)
        scales = [(label, ns) for label, ns in timescales.TIMESCALES if ns >= finest]
        if all(ns != finest for _, ns in scales):
            # a fixed key (JSON consumers must not depend on the interval achieved);
            # the interval itself is interval.finest_us
            scales.append(("finest", finest))
        directions, rates = [], {}
        for d in ("rx", "tx"):
            nbytes = np.asarray(series[f"{d}_bytes"], dtype=np.float64)
            per_scale = timescales.window_rates(t_end, dt, nbytes, start_ns, end_ns, [ns for _, ns in scales])
            rates[d] = {
                label: None if r is None else {
                    "avg_mbps": round(r.avg_bps / 1e6, 3),
                    "peak_mbps": round(r.peak_bps / 1e6, 3),
                    "ratio": None if r.ratio is None else round(r.ratio, 2),
                }
                for (label, _), r in zip(scales, per_scale)
            }
            pk = timescales.bucket_bytes(t_end, dt, np.asarray(series[f"{d}_packets"], dtype=np.float64),
                                         start_ns, end_ns - start_ns, 1)
            rates[d]["packets"] = int(round(pk[0]))
            total = timescales.bucket_bytes(t_end, dt, nbytes, start_ns, end_ns - start_ns, 1)[0]
            avg = float(total) * 8 * NS_PER_S / (end_ns - start_ns)
            rates[d]["avg_mbps"] = round(avg / 1e6, 3)
            one_ms = next((r for (lbl, _), r in zip(scales, per_scale) if lbl == "1ms"), None)
            runs = []
            if one_ms is not None and cfg.line_rate_bps:
                runs = timescales.burst_runs(t_end, dt, nbytes, start_ns, end_ns, 1_000_000,
                                             verdict.LINE_FRACTION * cfg.line_rate_bps)
            directions.append(verdict.DirectionFacts(d, avg, one_ms.peak_bps if one_ms else None, runs))
        counters_read_ns, (tcp_now, qd_now) = self._counters_at(end_ns)
        tcp = self.tcp.update(tcp_now)
        qd = self.qd.update(qd_now)
        drops = {k[: -len(".drops")]: v for k, v in qd.items() if k.endswith(".drops") and v is not None}
        overlimits = {k[: -len(".overlimits")]: v for k, v in qd.items() if k.endswith(".overlimits") and v is not None}
        second_flows = self._read_flows(end_ns, series)
        deliveries = None if second_flows is None else second_flows.deliveries
        nsenders = None if deliveries is None else len(deliveries)
        # loopback keeps one counter and reports it as both rx and tx (drivers/net/loopback.c,
        # loopback_get_stats64): the same bursts, judged once
        judged = [d for d in directions if d.name == "rx"] if self.loopback else directions
        facts = verdict.SecondFacts(judged, cfg.line_rate_bps, tcp.get("rto_timeouts"), tcp.get("retrans_segs"),
                                    drops, nsenders, tcp.get("dsack_recv_segs"),
                                    fanin=None if second_flows is None else second_flows.fanin,
                                    stalls=None if second_flows is None else second_flows.stalls)
        v = verdict.judge(facts, self._previous_facts)
        old_rule = verdict.judge_ratio(facts)
        self._previous_facts = facts
        if self.millisampler is not None:
            self.millisampler.second(series, start_ns, end_ns, t0, second_flows, got)
        self.seconds += 1
        self.incast_seconds += v.level == "incast"
        return {
            "type": "second",
            "t_s": round((end_ns - t0) / NS_PER_S, 3),
            "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds"),
            "iface": cfg.iface,
            "netns": cfg.netns,
            "window_s": round((end_ns - start_ns) / NS_PER_S, 6),
            "source": self.source,
            "source_reason": self.source_reason,
            "interval": {
                "requested_us": cfg.interval_ns / 1000,
                "median_us": median / 1000,
                "p99_us": stats["p99_ns"] / 1000,
                "max_us": stats["max_ns"] / 1000,
                "jitter_us": stats["jitter_ns"] / 1000,
                "samples": stats["count"],
                "missed": got["missed"],
                "uncertain": got["uncertain"],
                "realtime": got["realtime"],
                "finest_us": finest / 1000,
                "driver_refresh_us": {d: ns / 1000 for d, ns in refresh.items()},
            },
            "line_rate_mbps": None if cfg.line_rate_bps is None else cfg.line_rate_bps / 1e6,
            "rx": rates["rx"],
            "tx": rates["tx"],
            "bursts_1ms": {d.name: d.burst_runs_ms for d in directions},
            "tcp": tcp,
            # how long after the window's end its TCP and qdisc counters were read
            "counters_late_s": round(max(0, counters_read_ns - end_ns) / NS_PER_S, 3),
            "ecn_ce": {d: int(sum(got[f"{d}_ce"])) for d in ("rx", "tx")} if "rx_ce" in got else None,
            "qdisc_drops": drops,
            "qdisc_overlimits": overlimits,
            "tcp_senders": nsenders,
            "tcp_top_senders": None if deliveries is None else [
                {"sender": d.sender, "receiver": d.receiver, "bytes": d.bytes}
                for d in deliveries[:senders.TOP_SENDERS]],
            "counter_events": {"wraps": got["wraps"], "resets": got["resets"] + len(self.tcp.resets) + len(self.qd.resets)},
            "unavailable": dict(self.unavailable),
            "fanin": None if facts.fanin is None else {"senders": facts.fanin.senders,
                                                       "interval_ms": round(facts.fanin.interval_s * 1e3, 3)},
            "stalled_senders": facts.stalls,
            "verdict": v.level,
            "evidence": v.evidence,
            "verdict_ratio_rule": old_rule.level,
        }

    def summary(self) -> dict:
        stats = native().interval_stats(self.all_dt) or {}
        req = self.cfg.interval_ns
        median = stats.get("median_ns")
        ok = median is not None and abs(median - req) <= INTERVAL_TOLERANCE * req
        if median is None:
            statement = "no interval was sampled"
        elif self.source == "ebpf":
            statement = (f"counted in the kernel (eBPF, tc hooks) in exact {_fmt_scale(req)} buckets"
                         + (f"; {self.missed} buckets lost to a stalled reader" if self.missed else ""))
            ok = ok and not self.missed
        elif ok:
            statement = f"achieved the requested {_fmt_scale(req)} interval (median within {INTERVAL_TOLERANCE:.0%})"
        else:
            statement = (f"could not sample at {_fmt_scale(req)} on this machine: achieved median "
                         f"{median / 1000:.0f} us; rates are claimed only at that scale and coarser")
        return {
            "type": "summary",
            "iface": self.cfg.iface,
            "source": self.source,
            "source_reason": self.source_reason,
            "seconds": self.seconds,
            "stopped_by": self.stopped_by,
            "incast_seconds": self.incast_seconds,
            "interval": {
                "requested_us": req / 1000,
                "median_us": None if median is None else median / 1000,
                "p99_us": stats.get("p99_ns", 0) / 1000 if stats else None,
                "max_us": stats.get("max_ns", 0) / 1000 if stats else None,
                "jitter_us": stats.get("jitter_ns", 0) / 1000 if stats else None,
                "samples": stats.get("count", 0),
                "missed": self.missed,
                "uncertain": self.uncertain,
                "within_tolerance": ok,
                "statement": statement,
            },
            "counter_events": {"wraps": self.wraps, "resets": self.resets + len(self.tcp.resets) + len(self.qd.resets)},
            "unavailable": dict(self.unavailable),
        }
