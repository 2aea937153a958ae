"""Run one scenario in the simulator and on the testbed, point by point.

The simulator gets the "Linux reading" of the testbed's scenario, so the comparison is
about the network and the loss recovery, not about defaults that differ on purpose:
SACK loss recovery, initial window 10, MSS 1448 with RFC 7323 timestamps (RTT samples
from every ACK, backoff cleared on a valid sample), delayed ACK with
Linux's 40 ms minimum timer unless --quickack, restart from the initial window after
idle (tcp_slow_start_after_idle), an uncapped receive window unless --rwnd-clamp, and
RTO timers on jiffies (granularity detected from the kernel where it can be).
What remains different is listed in docs/testbed.md ("Simulator vs testbed").
"""

from __future__ import annotations

import socket

TCP_RTO_MIN_US = 45


def _accepts_rto_min(us: int) -> bool:
    s = socket.socket()
    try:
        s.setsockopt(socket.IPPROTO_TCP, TCP_RTO_MIN_US, us)
        return True
    except OSError:
        return False
    finally:
        s.close()


def jiffy_seconds() -> float | None:
    """The kernel's timer tick. TCP_RTO_MIN_US (Linux 6.15+) accepts a value only when it
    rounds up to at least 2 jiffies, so the smallest accepted value is one jiffy + 1 us.
    None where the option does not exist."""
    if not _accepts_rto_min(200_000):
        return None
    lo, hi = 1, 200_000  # lo refused (or untested), hi accepted
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _accepts_rto_min(mid):
            hi = mid
        else:
            lo = mid
    return (hi - 1) / 1e6


def linux_scenario(*, servers: int, sru: int, block: int | None, buffer: int, rate: int, rtt_s: float,
                   rto_min_s: float, blocks: int, quickack: bool, rwnd_clamp: int | None, seed: int = 1):
    from ..scenario import Scenario
    jiffy = jiffy_seconds()
    part = dict(block=block) if block is not None else dict(sru=sru)  # fixed-block or fixed-SRU mode
    kw = dict(servers=servers, **part, buffer=buffer, rate=rate, rtt=rtt_s, rto_min=rto_min_s,
              blocks=blocks, duration=None, tcp="sack", init_cwnd=10, mss=1448, timestamps=True,
              delayed_ack=0 if quickack else 0.040, slow_start_after_idle=True,
              rwnd=rwnd_clamp if rwnd_clamp else "1GiB", seed=seed)
    if jiffy:
        kw.update(timer_granularity=jiffy, timer_ticks=True)
    return Scenario(**kw)
