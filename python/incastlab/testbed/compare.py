"""What the simulator needs to know about the kernel the testbed runs on: its timer tick.

The simulator side of `incastlab validate` is the "linux" preset (``incastlab.presets``),
which reads the running kernel item by item; this module probes the one value no sysctl
shows, HZ. What remains different is listed in docs/testbed.md ("Simulator vs testbed").
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
