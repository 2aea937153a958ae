"""The fixes the doctor tries: each a change to the scenario, what it takes to make it, the
exact setting, and its side effects. Each is simulated at the user's point; the report
ranks them by goodput there, then by p99 block time.

| fix | the change | source |
|---|---|---|
| fine RTO | rto_min 200 us with microsecond timers; on Linux one jiffy (route ``rto_min``, ``net.ipv4.tcp_rto_min_us``, ``TCP_RTO_MIN_US``) | SIGCOMM'09 (``001_e0dada207805edc8.txt``, "Preventing Incast: Fine grained TCP timeout", "Is it Practical?"); FAST'08 §5.1.2 (Fig. 13) |
| DCTCP | cc=dctcp, ECN marking at K packets on the client's port | DCTCP paper §3.4 (K > C x RTT / 7; 20 at 1 Gbps, 65 at 10 Gbps) |
| buffer | the per-port buffer (or pool) the screen says holds N windows | FAST'08 §4.3 (Fig. 6) |
| serialization | at most K servers at once (NCCS), K from the screen | Osada et al. (``004_f48ce568b38e0ea9.txt``) §4.3 |
| OCS | Osada et al.'s n_min connections with window wnd_pkt | Osada et al. §4.4, Eqs. (8)-(11) |
| receive-window clamp | rwnd = (buffer + BDP) / N | the N x window bound (screen.py); ICTCP's idea without its control loop |
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import units
from .cluster import Cluster
from .screen import HEADER_BYTES, Screen

#: Largest buffer the doctor proposes (a deep-buffered switch's per-port share).
MAX_BUFFER_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Fix:
    key: str
    name: str
    fields: dict        # scenario keywords the fix sets on top of the cluster
    takes: str          # what it takes, and where
    setting: str        # the exact command or setting
    side_effects: str
    cost: int           # COSTS index: what has to change, cheapest first


#: What a fix has to change, cheapest first (the report's "cheapest fix that works").
COSTS = ("a host setting", "the client application", "switch configuration and every host", "switch hardware")


def _dctcp_k(cluster: Cluster, screen: Screen, mtu: int) -> int:
    """DCTCP paper §3.4: K > C x RTT / 7 packets; its deployments use 20 at 1 Gbps and 65
    at 10 Gbps (log-interpolated between, BDP / 7 above). Kept within half the port's
    buffer so a burst above K still has room."""
    bdp_pkts = screen.bdp_bytes / mtu
    g = cluster.rate_bps / 1e9
    if g <= 1:
        paper = 20
    elif g <= 10:
        paper = 20 * (65 / 20) ** math.log10(g)
    else:
        paper = 65 * g / 10
    k = max(math.ceil(bdp_pkts / 7), round(paper))
    return max(1, min(k, screen.port_room_bytes // mtu // 2))


def _round_up_size(n: int) -> int:
    """Up to 1, 1.5 or 2 x a power of two KiB, a size a switch datasheet would name."""
    kib = max(1, math.ceil(n / 1024))
    p = 2 ** max(0, (kib - 1).bit_length() - 1)
    for m in (1, 1.5, 2):
        if kib <= m * p:
            return int(m * p * 1024)
    return 2 * p * 1024


def candidates(cluster: Cluster, screen: Screen) -> list[Fix]:
    n = cluster.fan_in
    mss = cluster.mss
    mtu = mss + HEADER_BYTES
    fixes: list[Fix] = []
    delack = float(cluster.setting("delayed_ack", 0) or 0)

    # fine RTO
    if cluster.is_linux:
        gran = float(cluster.setting("timer_granularity", 1e-6))
        rto = max(1e-3, gran)
        ms = f"{rto * 1e3:g}ms"
        us = round(rto * 1e6)
        fixes.append(Fix(
            "rto_min", f"RTOmin {ms} (one jiffy)", {"rto_min": rto},
            "a route metric or sysctl on every server (no reboot); Linux rounds it to timer ticks "
            f"({gran * 1e3:g} ms here)",
            f"ip route change <datacenter prefix> dev <if> rto_min {ms}   # any kernel; or "
            f"sysctl -w net.ipv4.tcp_rto_min_us={us} (kernels with it); or setsockopt(TCP_RTO_MIN_US, {us})",
            ("spurious timeouts where an ACK is held by delayed ACK (40 ms > RTOmin; WREN'09, "
             "002_08b014e448da6385.txt: pair it with TCP_QUICKACK on the client); " if delack > 0 else "") +
            "keep it to datacenter routes: wide-area flows would retransmit spuriously", cost=0))
    else:
        fixes.append(Fix(
            "rto_min", "RTOmin 200 us, microsecond timers", {"rto_min": 200e-6, "timer_granularity": 1e-6},
            "a TCP stack with high-resolution timers on every server (SIGCOMM'09, 'Is it Practical?')",
            "rto_min=200us, timer granularity 1 us (on Linux: route rto_min / tcp_rto_min_us, "
            "bounded below by the jiffy)",
            "spurious timeouts with delayed ACK; only for datacenter paths", cost=0))

    # DCTCP
    k = _dctcp_k(cluster, screen, mtu)
    fixes.append(Fix(
        "dctcp", f"DCTCP, ECN marking at K={k} packets", {"cc": "dctcp", "ecn_threshold": k},
        "ECN marking on the switch port towards the client (every switch on the path) and DCTCP on every "
        "server and client",
        f"switch: mark CE when the egress queue holds >= {k} packets ({k * mtu:,} B; min = max threshold); "
        "hosts: sysctl -w net.ipv4.tcp_congestion_control=dctcp net.ipv4.tcp_ecn=1",
        "a switch feature (ECN/RED marking); DCTCP must not share a queue with non-ECN or wide-area "
        "traffic (RFC 8257 §4: datacenter only); the RTO stays 200 ms, so first-flight losses still wait it out", cost=2))

    # buffer
    need = n * screen.window_bytes - screen.bdp_bytes
    if cluster.pool_bytes is not None:
        need *= 2  # a port gets alpha/(1+alpha) = half of the free pool
    have = cluster.pool_bytes or cluster.buffer_bytes
    size = min(MAX_BUFFER_BYTES, _round_up_size(max(need, 2 * have)))
    if size > have:
        where = "shared pool" if cluster.pool_bytes is not None else "buffer per port"
        fields = {"buffer_pool": size, "buffer": size} if cluster.pool_bytes is not None else {"buffer": size}
        fixes.append(Fix(
            "buffer", f"{where} {units.format_size(size)}", fields,
            "a switch with that much buffer for the client's port (hardware, or a deeper-buffer model)",
            f"{where} >= {units.format_size(size)}" + (" (capped at 64 MiB; the screen asks "
                                                       f"{units.format_size(need)})" if need > size else ""),
            "cost; more queueing delay for every flow through the port (bufferbloat); holds the collapse off "
            "only up to the fan-in it was sized for", cost=3))

    # serialization: at most K servers at once
    k_ser = max(1, (screen.port_room_bytes + screen.bdp_bytes) // max(screen.window_bytes, 1))
    if k_ser < n:
        fixes.append(Fix(
            "serialize", f"serialize the reads, {k_ser} at a time", {"mitigation": "nccs", "nccs_k": int(k_ser)},
            "a change in the client application (request scheduling), nothing in the network",
            f"the client keeps at most {k_ser} requests outstanding, sending the next when one response "
            "is nearly done (NCCS, Osada et al. §4.3)",
            "a block takes at least N x response / rate even when the network is idle; one slow server "
            "delays the rest", cost=1))
    if screen.osada is not None and screen.osada.n_min < n:
        o = screen.osada
        fixes.append(Fix(
            "ocs", f"Osada OCS: {o.n_min} at a time, window {o.wnd_pkt} packets", {"mitigation": "ocs"},
            "a change in the client application: connection sets and an advertised window per set",
            f"n_min={o.n_min} (Eq. {'8' if o.window_case == 'a' else '10'}), wnd_pkt={o.wnd_pkt} "
            f"(Eq. 9), Q_max^TCP={o.q_max_tcp_packets} packets (Eq. 11)",
            "application change; relies on the response size being known in advance", cost=1))

    # receive-window clamp
    clamp = max(2 * mss, ((screen.port_room_bytes + screen.bdp_bytes) // n) // mtu * mss)
    if clamp < min(screen.rwnd_bytes, cluster.response_bytes):
        fixes.append(Fix(
            "rwnd", f"clamp the receive window to {units.format_size(clamp)}", {"rwnd": clamp},
            "a socket option or route metric on the client only",
            f"setsockopt(TCP_WINDOW_CLAMP, {clamp}) on the client's sockets, or "
            f"ip route change <datacenter prefix> dev <if> window {clamp}",
            "caps every flow from those servers at one window per RTT "
            f"({clamp * 8 / max(cluster.rtt_s, 1e-9) / 1e9:.2g} Gbps a flow); below 2 MSS per flow it "
            "cannot help (the clamp stops at 2 MSS)", cost=0))
    return fixes
