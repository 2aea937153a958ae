"""Per-flow deliveries at a short interval: the fan-in the verdict needs "in the same
instants", the gaps of a flow that waited out a retransmission timeout, and Millisampler's
active flows and retransmissions per 10 ms.

A thread reads the host's TCP sockets (``senders.SenderWatch``: sock_diag, the live ones and
those freed since) every ``interval`` (10 ms by default) on an absolute schedule and keeps,
per reading, which connections delivered payload since the one before (``senders.Delivery``,
counted as ``senders.SenderCounter`` counts a second) and how many segments this host's
sockets retransmitted (``tcpi_total_retrans``). The per-second loop drains the readings and
folds them (:func:`fold`) into the second's senders, its fan-in per interval while the link
ran at line rate, the senders that resumed after a silence of ``verdict.STALL_S``, and the
per-interval series.

Why 10 ms: one dump of a few hundred sockets takes well under a millisecond, so a hundred a
second cost little; finer, the readings' own timing jitter (a Python thread on a loaded
host) would be as large as the interval. The interval each second achieved is what the fan-in
is stated at (``FanIn.interval_s``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import senders, verdict

DEFAULT_INTERVAL_NS = 10_000_000


@dataclass
class Reading:
    """One reading of the host's sockets."""

    t_ns: int  # CLOCK_MONOTONIC when it was taken (the samplers' clock)
    deliveries: list[senders.Delivery]  # connections that delivered since the reading before
    retrans: int  # segments this host's sockets through the interface retransmitted since then


class FlowPoller:
    """The thread that reads the sockets every ``interval_ns`` (module docstring)."""

    def __init__(self, watch: senders.SenderWatch, interval_ns: int = DEFAULT_INTERVAL_NS,
                 clock: Callable[[], int] = time.monotonic_ns):
        self.watch = watch
        self.interval_ns = interval_ns
        self.clock = clock
        # per socket, tcpi_total_retrans at the last reading it was in (senders.Baselines)
        self._retrans: senders.Baselines[int] = senders.Baselines()
        self._readings: list[Reading] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._run, name="incastlab-flow-poller", daemon=True)

    def start(self) -> FlowPoller:
        self._thread.start()
        return self

    def _run(self) -> None:
        deadline = self.clock()
        while not self._stop.is_set():
            deadline += self.interval_ns
            try:
                self.poll()
            except OSError as e:  # the per-second loop reports it
                self._error = e
                return
            delay = (deadline - self.clock()) / 1e9
            if delay < 0:
                deadline = self.clock()  # late: read at once, lateness does not accumulate
            elif self._stop.wait(delay):
                return

    def poll(self) -> Reading:
        """Read the sockets once (the thread does this; tests call it directly)."""
        sockets = self.watch.read()
        t = self.clock()
        deliveries = self.watch.counter.update(sockets)
        retrans = 0
        latest = senders.one_per_socket(sockets)
        for s in latest:
            before = self._retrans.get(s.cookie, s.total_retrans if not s.closed else 0)
            if self.watch.counter.crosses_iface(s.remote_ip):
                retrans += max(0, s.total_retrans - before)
        self._retrans.replace(latest, lambda s: s.total_retrans)
        r = Reading(t, deliveries, retrans)
        with self._lock:
            self._readings.append(r)
        return r

    def drain(self) -> list[Reading]:
        """The readings since the last drain; OSError if the thread stopped on one."""
        if self._error is not None:
            raise self._error
        with self._lock:
            out, self._readings = self._readings, []
        return out

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=1.0)


@dataclass
class SecondFlows:
    """What a second's readings say (:func:`fold`)."""

    deliveries: list[senders.Delivery]  # one per connection, largest first
    fanin: verdict.FanIn | None
    stalls: int
    # per reading in the second: its time (ns), the connections that delivered, retransmissions
    t_ns: list[int] = field(default_factory=list)
    active: list[int] = field(default_factory=list)
    retrans: list[int] = field(default_factory=list)


def connection(d: senders.Delivery) -> tuple[str, str]:
    """A connection's key whichever of its ends sent more in a reading (loopback)."""
    a, b = sorted((d.sender, d.receiver))
    return a, b


class StallTracker:
    """When each connection last delivered, across seconds: a delivery after a silence of
    ``verdict.STALL_S`` or more is a stall that ended (an RTO waited out, or an application
    that was idle: the count is evidence, not proof)."""

    def __init__(self):
        self.last: dict[tuple[str, str], int] = {}

    def update(self, r: Reading, previous_t_ns: int | None) -> int:
        ended = 0
        for d in r.deliveries:
            key = connection(d)
            last = self.last.get(key)
            # silent in every reading between its last delivery and this one
            if last is not None and previous_t_ns is not None and previous_t_ns - last >= verdict.STALL_S * 1e9:
                ended += 1
            self.last[key] = r.t_ns
        return ended


def fold(readings: list[Reading], stalls: StallTracker, previous_t_ns: int | None, line_rate_bps: float | None,
         rx_t_end_ns: np.ndarray, rx_dt_ns: np.ndarray, rx_bytes: np.ndarray, bucket_ns: int = 1_000_000
         ) -> tuple[SecondFlows, int | None]:
    """A second's readings (in time order) as its senders, fan-in at line rate and stalls.

    The fan-in of a reading is the connections that delivered since the reading before it,
    counted when the receive counter had a ``bucket_ns`` bucket at ``LINE_FRACTION`` of the
    line rate or more within that span (the rx intervals ``rx_*``); without a line rate the
    fan-in is not claimed (None). Returns the folded second and the last reading's time
    (the next second's ``previous_t_ns``).
    """
    from .timescales import bucket_bytes

    # per connection, per direction (sender, receiver): the second's bytes. A loopback
    # connection's first reading may hold only the client's request (the server's socket
    # received it); its sender is the direction that carried more over the whole second.
    per: dict[tuple[str, str], dict[tuple[str, str], int]] = {}
    best = 0
    spans: list[float] = []
    out = SecondFlows([], None, 0)
    ended = 0
    for r in readings:
        ended += stalls.update(r, previous_t_ns)
        for d in r.deliveries:
            ways = per.setdefault(connection(d), {})
            ways[d.sender, d.receiver] = ways.get((d.sender, d.receiver), 0) + d.bytes
        out.t_ns.append(r.t_ns)
        out.active.append(len(r.deliveries))
        out.retrans.append(r.retrans)
        if previous_t_ns is not None and line_rate_bps and len(rx_t_end_ns) and r.deliveries:
            n = int((r.t_ns - previous_t_ns) // bucket_ns)
            if n >= 1:
                b = bucket_bytes(rx_t_end_ns, rx_dt_ns, rx_bytes, previous_t_ns, bucket_ns, n)
                if (b * 8 * 1e9 / bucket_ns).max() >= verdict.LINE_FRACTION * line_rate_bps:
                    best = max(best, len(r.deliveries))
        if previous_t_ns is not None:
            spans.append((r.t_ns - previous_t_ns) / 1e9)
        previous_t_ns = r.t_ns
    out.deliveries = sorted((senders.Delivery(*way, nbytes) for way, nbytes in
                             (max(ways.items(), key=lambda w: (w[1], w[0])) for ways in per.values())),
                            key=lambda d: (-d.bytes, d.sender))
    out.stalls = ended
    if line_rate_bps and spans:
        out.fanin = verdict.FanIn(best, float(np.median(spans)))
    return out, previous_t_ns
