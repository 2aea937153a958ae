"""What this kernel offers the testbed: congestion controls, ECN-marking qdiscs and the
TCP socket options of Linux 6.15 (``TCP_RTO_MIN_US``, ``TCP_DELACK_MAX_US``).

The testbed runs whatever congestion control the kernel has (TCP_CONGESTION on the
servers' sockets). Asking for one it lacks, e.g. ``dctcp`` where ``tcp_dctcp`` is neither
built in nor a module, is refused before anything is set up, naming what the kernel does
offer; so is an ECN marking threshold, which the testbed's switch (``tbf`` on a bridge
port) never applies. docs/testbed.md, "DCTCP and ECN", shows how to run the comparison on
a host that has both.
"""

from __future__ import annotations

import errno
import gzip
import os
import socket
from pathlib import Path

from ..errors import UsageError

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
KERNEL_CONFIG = Path("/proc/config.gz")
DOC = 'docs/testbed.md, "DCTCP and ECN"'
# qdiscs that can set CE at a threshold: red (with `ecn`, min = max = K packets), fq_codel
# and fq (`ce_threshold`, a sojourn time), pie / fq_pie (`ecn`), dualpi2 (its step threshold)
MARKING_QDISCS = ("red", "fq_codel", "fq", "pie", "fq_pie", "dualpi2")


def modules_dir() -> Path:
    return Path("/lib/modules") / os.uname().release


def available_congestion_controls(available: Path = AVAILABLE, modules: Path | None = None) -> list[str] | None:
    """The kernel's loaded congestion controls, then those ``modprobe tcp_NAME`` would add;
    None where the kernel does not say (no such /proc file: not Linux)."""
    if not available.exists():
        return None
    names = available.read_text().split()
    ipv4 = (modules or modules_dir()) / "kernel" / "net" / "ipv4"
    if ipv4.is_dir():
        for p in sorted(ipv4.glob("tcp_*.ko*")):
            name = p.name.split(".ko")[0][len("tcp_"):]
            if name != "diag" and name not in names:  # tcp_diag is the socket monitor, not a cc
                names.append(name)
    return names


def check_congestion(cc: str | None, param: str = "--cc", offered: list[str] | None = None) -> None:
    """Refuse (UsageError) a congestion control this kernel does not offer (where it says)."""
    if cc is None:
        return
    offered = available_congestion_controls() if offered is None else offered
    if offered is not None and cc not in offered:
        raise UsageError(param, cc, f"a congestion control this kernel offers ({', '.join(offered) or 'none found'}; "
                                    f"see {DOC})")


def marking_qdiscs(config: Path = KERNEL_CONFIG, modules: Path | None = None) -> list[str] | None:
    """The ECN-marking qdiscs this kernel has (built in or as modules); None if it cannot tell."""
    found, known = set(), False
    if config.exists():
        known = True
        for line in gzip.decompress(config.read_bytes()).decode(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.startswith("CONFIG_NET_SCH_") and value in ("y", "m"):
                found.add(key[len("CONFIG_NET_SCH_"):].lower())
    sched = (modules or modules_dir()) / "kernel" / "net" / "sched"
    if sched.is_dir():
        known = True
        found |= {p.name.split(".ko")[0][len("sch_"):] for p in sched.glob("sch_*.ko*")}
    return [q for q in MARKING_QDISCS if q in found] if known else None


def check_ecn_threshold(k: int | None, param: str = "--ecn-threshold", qdiscs: list[str] | None = None) -> None:
    """Refuse an ECN marking threshold: the testbed's switch does not mark."""
    if k is None:
        return
    qdiscs = marking_qdiscs() if qdiscs is None else qdiscs
    have = ("which ECN-marking qdiscs this kernel has is unknown" if qdiscs is None else
            f"this kernel's ECN-marking qdiscs are {', '.join(qdiscs)}" if qdiscs else
            f"this kernel has no ECN-marking qdisc: none of {', '.join(MARKING_QDISCS)} is built")
    raise UsageError(param, k, f"no threshold: the testbed's tbf port never marks CE, and {have}; see {DOC}")


# Linux 6.15's per-socket timer options (include/uapi/linux/tcp.h), with what each bounds
# and the range the kernel accepts once it has rounded microseconds up to jiffies
# (net/ipv4/tcp.c, do_tcp_setsockopt): RTOmin 2 jiffies .. TCP_RTO_MIN (200 ms), the
# delayed-ACK bound 2 jiffies (TCP_TIMEOUT_MIN) .. TCP_DELACK_MAX (200 ms)
SOCKET_OPTIONS = {"TCP_RTO_MIN_US": 45, "TCP_DELACK_MAX_US": 46}
OPTION_MAX_US = 200_000


def has_socket_option(name: str) -> bool:
    """The running kernel knows the TCP option `name` (setting its own default on a fresh
    socket succeeds; ENOPROTOOPT: it does not)."""
    s = socket.socket()
    try:
        s.setsockopt(socket.IPPROTO_TCP, SOCKET_OPTIONS[name], OPTION_MAX_US)
        return True
    except OSError as e:
        if e.errno == errno.ENOPROTOOPT:
            return False
        raise
    finally:
        s.close()


def check_socket_option(name: str, flag: str, seconds: float | None, jiffy_s: float | None = None,
                        present: bool | None = None) -> None:
    """Refuse `flag` (a duration for socket option `name`) where the kernel lacks the option,
    or outside what the kernel accepts: 2 jiffies to 200 ms."""
    if seconds is None:
        return
    shown = f"{seconds * 1e3:g}ms"
    if not (has_socket_option(name) if present is None else present):
        raise UsageError(flag, shown, f"a kernel with {name} (Linux 6.15+); {os.uname().release} has none")
    if jiffy_s is None:
        from .compare import jiffy_seconds
        jiffy_s = jiffy_seconds() or 0.001
    kept = jiffies_up(seconds, jiffy_s)
    if not 2 * jiffy_s - 1e-9 <= kept <= OPTION_MAX_US / 1e6 + 1e-9:
        raise UsageError(flag, shown, f"above {jiffy_s * 1e3:g}ms (one jiffy: the kernel rounds up to whole jiffies "
                                      f"and takes 2 or more) and at most 200ms, the range {name} takes here")


def jiffies_up(seconds: float, jiffy_s: float) -> float:
    """`seconds` as the kernel keeps it: rounded up to whole jiffies (usecs_to_jiffies)."""
    import math
    us, tick_us = round(seconds * 1e6), round(jiffy_s * 1e6)
    return math.ceil(us / tick_us) * tick_us / 1e6
