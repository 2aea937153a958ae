"""What this kernel offers the testbed: congestion controls and ECN-marking qdiscs.

The testbed runs whatever congestion control the kernel has (TCP_CONGESTION on the
servers' sockets). Asking for one it lacks, e.g. ``dctcp`` where ``tcp_dctcp`` is neither
built in nor a module, is refused before anything is set up, naming what the kernel does
offer; so is an ECN marking threshold, which the testbed's switch (``tbf`` on a bridge
port) never applies. docs/testbed.md, "DCTCP and ECN", shows how to run the comparison on
a host that has both.
"""

from __future__ import annotations

import gzip
import os
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
