"""The first screen: closed-form bounds that bracket the onset before anything is simulated.

Two bounds on the synchronized burst, in bytes on the wire (MSS + header per packet):

- **No drop possible** while N x W <= B + BDP, W the most one flow can have in flight
  (its window cap, the receive window, or its whole response if smaller): every window fits
  in the pipe and the client port's buffer together. Below ``n_safe`` incast cannot start.
- **Drops in the first round trip** once N x IW > B + BDP, IW the initial window (or the
  response, if smaller): the very first flight overflows the port, and a server whose whole
  window is lost has no duplicate ACKs to recover with (FAST'08 §5.1, full-window loss).
  From ``n_burst`` on a collapse is expected unless the timeout is short.

The onset is searched by simulation inside [n_safe, n_burst], widened if the simulations
disagree. A shared pool under dynamic thresholds (Choudhury-Hahne) gives one port at most
alpha / (1 + alpha) of the pool when it is alone; ``port_room`` uses that.

Osada et al.'s model (``004_f48ce568b38e0ea9.txt`` §4, Eqs. (8)-(11)) gives the
serialization fix its numbers: how many connections at once (n_min), with which window
(wnd_pkt), and the queue they build (Q_max^TCP).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import UsageError
from ..model.serialization import SerializationModel, serialization_model
from ..scenario import Scenario
from .cluster import Cluster

HEADER_BYTES = 40
DT_ALPHA = 1.0  # the scenario's dt_alpha default


@dataclass(frozen=True)
class Screen:
    bdp_bytes: int
    port_room_bytes: int        # buffer one port can hold (pool share under dynamic sharing)
    window_bytes: int           # most one flow can have in flight, on the wire
    initial_window_bytes: int   # first flight of one flow, on the wire
    rwnd_bytes: int             # the flows' receive window (the stack's, resolved by the core)
    n_safe: int                 # largest N with N x window <= room + BDP (0: even one flow can overflow)
    n_burst: int                # smallest N with N x initial window > room + BDP
    osada: SerializationModel | None

    def text(self) -> str:
        safe = (f"no drop possible up to {self.n_safe} servers" if self.n_safe >= 1
                else "one flow's window alone can overflow them")
        return (f"N x window vs buffer + BDP: {self.window_bytes:,} B a flow, {self.port_room_bytes:,} B of buffer "
                f"+ {self.bdp_bytes:,} B in flight: {safe}; the first "
                f"flight ({self.initial_window_bytes:,} B a flow) overflows from {self.n_burst} servers")


def _wire(payload: int, mss: int) -> int:
    """Bytes on the wire for `payload` bytes of TCP payload."""
    return payload + math.ceil(payload / mss) * HEADER_BYTES


def screen(cluster: Cluster) -> Screen:
    s = Scenario(servers=1, blocks=1, duration=None, **cluster.fields())  # the core resolves the stack's values
    mss = int(s.mss)
    bdp = int(cluster.rate_bps * cluster.rtt_s / 8)
    room = cluster.buffer_bytes
    if cluster.pool_bytes is not None:
        room = int(cluster.pool_bytes * DT_ALPHA / (1 + DT_ALPHA))
    rwnd = int(s.rwnd)
    window = _wire(min(rwnd, cluster.response_bytes), mss)
    iw = _wire(min(int(s.init_cwnd) * mss, cluster.response_bytes, rwnd), mss)
    n_safe = (room + bdp) // window
    n_burst = (room + bdp) // iw + 1
    try:
        osada = serialization_model(cluster.rate_bps, round(cluster.rtt_s * 1e12), mss, cluster.response_bytes,
                                    servers=cluster.fan_in, buffer_packets=max(1, room // (mss + HEADER_BYTES)))
    except UsageError:  # a BDP of 2 packets or less: outside the model (its derivation starts at IW 2)
        osada = None
    return Screen(bdp_bytes=bdp, port_room_bytes=room, window_bytes=window, initial_window_bytes=iw, rwnd_bytes=rwnd,
                  n_safe=int(n_safe), n_burst=int(max(n_burst, 1)), osada=osada)
