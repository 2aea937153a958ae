"""Kernel counters read around a run: per-namespace TCP MIBs and the bottleneck qdisc."""

from __future__ import annotations

import json

from . import shell


def parse_mib(text: str) -> dict[str, int]:
    """``/proc/net/netstat`` and ``/proc/net/snmp`` come as header/value line pairs:
    ``TcpExt: A B`` then ``TcpExt: 1 2``. Returns {"TcpExt.A": 1, ...}."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    for head, vals in zip(lines[0::2], lines[1::2]):
        hk, _, hnames = head.partition(":")
        vk, _, vnums = vals.partition(":")
        if hk != vk:
            continue
        for name, num in zip(hnames.split(), vnums.split()):
            try:
                out[f"{hk}.{name}"] = int(num)
            except ValueError:
                pass
    return out


def tcp_mib(netns: str) -> dict[str, int]:
    """The TCP counters of one namespace (they are per network namespace)."""
    return parse_mib(shell.in_netns(netns, ["cat", "/proc/net/netstat", "/proc/net/snmp"]))


def qdisc_stats(netns: str, dev: str) -> dict[str, int]:
    """drops / packets / bytes / backlog of the root qdisc of `dev` (``tc -s -j``)."""
    out = json.loads(shell.run(["tc", "-n", netns, "-s", "-j", "qdisc", "show", "dev", dev]) or "[]")
    root = next((q for q in out if q.get("root")), out[0] if out else {})
    return {k: int(root.get(k, 0)) for k in ("drops", "packets", "bytes", "backlog", "overlimits", "requeues")}
