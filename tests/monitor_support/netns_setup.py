"""A minimal incast topology in network namespaces, built and torn down by the monitor's
end-to-end test (the real-TCP testbed is a separate face).

    ilmon-s (16 server addresses)  --  ilmon-sw (router; tbf on the port to the client)  --  ilmon-c (client)
    198.18.61.2-17/24 on ilmon-s0      ilmon-sws 198.18.61.1 | ilmon-swc 198.18.60.1       198.18.60.2 on ilmon-c0

The tbf on ``ilmon-swc`` is the shallow switch port: ``RATE`` with a 64 KiB drop-tail
limit (FAST'08, ``000_315d806dde942a9f.txt`` §3: 32-64 KB per port). Segmentation and
receive offloads are off on every veth so the counters and the qdisc see real frames.
Addresses are in the RFC 2544 benchmarking range.
"""

from __future__ import annotations

import subprocess

PREFIX = "ilmon"
CLIENT, SWITCH, SERVERS = f"{PREFIX}-c", f"{PREFIX}-sw", f"{PREFIX}-s"
CLIENT_IF, SW_CLIENT_IF, SW_SERVER_IF, SERVER_IF = f"{PREFIX}-c0", f"{PREFIX}-swc", f"{PREFIX}-sws", f"{PREFIX}-s0"
CLIENT_ADDR = "198.18.60.2"
SERVER_ADDRS = [f"198.18.61.{i}" for i in range(2, 18)]
QUEUE_LIMIT_BYTES = 64 * 1024


def sh(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def nsx(ns: str, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return sh("ip", "netns", "exec", ns, *cmd, check=check)


def teardown() -> None:
    for ns in (CLIENT, SWITCH, SERVERS):
        sh("ip", "netns", "del", ns, check=False)


def setup(rate: str) -> None:
    teardown()
    for ns in (CLIENT, SWITCH, SERVERS):
        sh("ip", "netns", "add", ns)
        nsx(ns, "ip", "link", "set", "lo", "up")
    sh("ip", "link", "add", CLIENT_IF, "netns", CLIENT, "type", "veth", "peer", "name", SW_CLIENT_IF, "netns", SWITCH)
    sh("ip", "link", "add", SERVER_IF, "netns", SERVERS, "type", "veth", "peer", "name", SW_SERVER_IF, "netns", SWITCH)
    for ns, dev in ((CLIENT, CLIENT_IF), (SWITCH, SW_CLIENT_IF), (SWITCH, SW_SERVER_IF), (SERVERS, SERVER_IF)):
        nsx(ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off")
        nsx(ns, "ip", "link", "set", dev, "up")
    nsx(CLIENT, "ip", "addr", "add", f"{CLIENT_ADDR}/24", "dev", CLIENT_IF)
    nsx(CLIENT, "ip", "route", "add", "default", "via", "198.18.60.1")
    nsx(SWITCH, "ip", "addr", "add", "198.18.60.1/24", "dev", SW_CLIENT_IF)
    nsx(SWITCH, "ip", "addr", "add", "198.18.61.1/24", "dev", SW_SERVER_IF)
    nsx(SWITCH, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
    for a in SERVER_ADDRS:
        nsx(SERVERS, "ip", "addr", "add", f"{a}/24", "dev", SERVER_IF)
    nsx(SERVERS, "ip", "route", "add", "default", "via", "198.18.61.1")
    # the shallow switch port towards the client: drop-tail at 64 KiB behind a token bucket
    nsx(SWITCH, "tc", "qdisc", "replace", "dev", SW_CLIENT_IF, "root", "tbf", "rate", rate,
        "burst", "16kb", "limit", str(QUEUE_LIMIT_BYTES))
