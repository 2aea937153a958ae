"""Build and tear down the namespace cluster: client, switch (Linux bridge), N servers.

Knob -> Linux mechanism (docs/testbed.md has the why):
- bottleneck rate and switch buffer: ``tbf rate R limit BUFFER`` on the bridge port
  towards the client (drop-tail: tbf's inner bfifo drops arrivals when full);
- segmentation offloads: ``ethtool -K tso/gso/gro off`` on every veth, so the queue
  sees 1514-byte frames, not 64 KB super-packets that would fill a 64 KiB buffer at once;
- RTOmin: per-route ``rto_min`` on each server's route to the client (the sender decides
  when to time out), or ``net.ipv4.tcp_rto_min_us`` in each server namespace before
  its listening socket exists (the value is per namespace and copied into each socket
  when it is created), or the TCP_RTO_MIN_US socket option (see runner).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

from ..errors import EnvironmentProblem
from ..outfiles import write_text
from . import shell
from .cpu_idle import CHOICES as CPU_IDLE
from .names import CLIENT_ADDR, MAX_SERVERS, SUBNET_PREFIX_LEN, Names, server_addr

STATE_DIR = "/run/incastlab"
MTU = 1500
FRAME_BYTES = MTU + 14  # what tbf counts per full-sized packet (IP + Ethernet header)
RTO_MIN_VIA = ("route", "sysctl", "socket")


@dataclass
class TopologySpec:
    servers: int
    rate_bps: int = 10**9
    buffer_bytes: int = 64 * 1024
    offload: bool = False
    rto_min_s: float | None = None
    rto_min_via: str = "route"
    prefix: str = "iltb"
    # tbf bucket: four full frames. Measured here at 1 Gbps: with two frames tbf's timer
    # cannot keep the link busy (about 610 Mbps and drops with one sender); with four,
    # one sender gets 860-920 Mbps; a bigger bucket would act as extra buffer.
    burst_bytes: int = 4 * FRAME_BYTES
    # idle CPUs poll while a point runs ("poll"), or idle as the machine does ("system"):
    # ``testbed.cpu_idle``
    cpu_idle: str = "poll"
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if not 1 <= self.servers <= MAX_SERVERS:
            raise ValueError(f"servers must be 1..{MAX_SERVERS}")
        if self.rto_min_via not in RTO_MIN_VIA:
            raise ValueError(f"rto_min_via must be one of {RTO_MIN_VIA}")
        if self.cpu_idle not in CPU_IDLE:
            raise ValueError(f"cpu_idle must be one of {CPU_IDLE}")
        if self.buffer_bytes < FRAME_BYTES:
            raise ValueError(f"buffer must hold at least one {FRAME_BYTES}-byte frame")

    @property
    def names(self) -> Names:
        return Names(self.prefix)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:g}ms"


def list_netns() -> list[str]:
    out = shell.run(["ip", "-j", "netns", "list"], check=False).strip()
    if not out:
        return []
    return [e["name"] for e in json.loads(out)]


def find_stale(prefix: str = "iltb") -> dict[str, list[str]]:
    """Objects of ours left behind: namespaces and root-namespace links with our prefix."""
    names = Names(prefix)
    links_json = shell.run(["ip", "-j", "link", "show"], check=False).strip() or "[]"
    return {
        "netns": sorted(n for n in list_netns() if names.owns(n)),
        "links": sorted(l["ifname"] for l in json.loads(links_json) if names.owns(l["ifname"])),
    }


def state_path(prefix: str) -> str:
    return f"{STATE_DIR}/testbed-{prefix}.json"


def teardown(prefix: str = "iltb") -> dict[str, list[str]]:
    """Remove every namespace and root link with our prefix (a veth or bridge dies with
    its namespace). Touches nothing else. Returns what it removed."""
    stale = find_stale(prefix)
    for link in stale["links"]:
        shell.run(["ip", "link", "del", link], check=False)
    shell.ip_batch([f"netns del {ns}" for ns in stale["netns"]]) if stale["netns"] else None
    try:
        os.unlink(state_path(prefix))
    except FileNotFoundError:
        pass
    left = find_stale(prefix)
    if left["netns"] or left["links"]:
        raise EnvironmentProblem(f"could not remove {left}")
    return stale


class Topology:
    """A built cluster (or one to build)."""

    def __init__(self, spec: TopologySpec):
        self.spec = spec
        self.names = spec.names

    # -- addresses the runner needs --------------------------------------------------
    def server_endpoint(self, i: int) -> tuple[str, str]:
        """(namespace path, listen address) of server i (1-based)."""
        return self.names.netns_path(self.names.server_ns(i)), server_addr(i)

    @property
    def client_netns_path(self) -> str:
        return self.names.netns_path(self.names.client_ns)

    @property
    def bottleneck(self) -> tuple[str, str]:
        """(namespace, device) holding the tbf queue."""
        return self.names.switch_ns, Names.port_of(self.names.client_ns)

    # -- build -------------------------------------------------------------------------
    def up(self) -> None:
        shell.require_root()
        teardown(self.spec.prefix)  # a previous run may have died: start clean
        try:
            self._build()
        except BaseException:
            teardown(self.spec.prefix)
            raise
        os.makedirs(STATE_DIR, exist_ok=True)
        write_text(state_path(self.spec.prefix), json.dumps(asdict(self.spec)))  # whole or not at all

    def _build(self) -> None:
        n, s = self.names, self.spec
        endpoints = [n.client_ns] + [n.server_ns(i) for i in range(1, s.servers + 1)]
        root = [f"netns add {ns}" for ns in [n.switch_ns] + endpoints]
        # each veth is born with one end in its endpoint namespace, the other in the switch
        root += [f"link add {ep} netns {ep} type veth peer name {Names.port_of(ep)} netns {n.switch_ns}" for ep in endpoints]
        shell.ip_batch(root)
        sw = [f"link add {n.bridge} type bridge stp_state 0 forward_delay 0", f"link set {n.bridge} up", "link set lo up"]
        for ep in endpoints:
            sw += [f"link set {Names.port_of(ep)} master {n.bridge}", f"link set {Names.port_of(ep)} up"]
        shell.ip_batch(sw, netns=n.switch_ns)
        addrs = {n.client_ns: CLIENT_ADDR} | {n.server_ns(i): server_addr(i) for i in range(1, s.servers + 1)}
        for ep, addr in addrs.items():
            lines = ["link set lo up", f"addr add {addr}/{SUBNET_PREFIX_LEN} dev {ep}", f"link set {ep} up"]
            if ep != n.client_ns and s.rto_min_s is not None and s.rto_min_via == "route":
                # the sender's RTOmin: a host route to the client carrying rto_min
                # (iproute2 marks the metric locked, which tcp_rto_min() requires)
                lines.append(f"route add {CLIENT_ADDR}/32 dev {ep} rto_min {_ms(s.rto_min_s)}")
            shell.ip_batch(lines, netns=ep)
            if ep != n.client_ns and s.rto_min_s is not None and s.rto_min_via == "sysctl":
                us = max(1, round(s.rto_min_s * 1e6))
                shell.in_netns(ep, ["sysctl", "-q", "-w", f"net.ipv4.tcp_rto_min_us={us}"])
        self._offloads(endpoints)
        ns, dev = self.bottleneck
        shell.run(["tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf",
                   "rate", f"{s.rate_bps}bit", "burst", str(s.burst_bytes), "limit", str(s.buffer_bytes)])

    def _offloads(self, endpoints: list[str]) -> None:
        """Offloads off (or on) and receive packet steering on every veth end.

        RPS with all CPUs in the mask hashes each flow to one CPU. Without it a veth hands
        packets to the backlog of whichever CPU sent them (TCP also sends from ACK
        processing in softirq), so the two halves of one flow cross the bridge on two
        CPUs and arrive reordered: measured here as thousands of reordering events and
        DSACKs (spurious retransmissions) per sweep point. A switch does not reorder.
        A packet steered to the other CPU waits for the interrupt that wakes it, 30 us on
        this project's 2-vCPU VM when that CPU is halted: ``cpu_idle`` keeps idle CPUs
        polling while a point runs, so none is needed (docs/testbed.md).
        """
        state = "on" if self.spec.offload else "off"
        mask = format((1 << (os.cpu_count() or 1)) - 1, "x")

        def script(devs: list[str]) -> str:
            return " && ".join(
                f"ethtool -K {d} tso {state} gso {state} gro {state} && "
                f"echo {mask} > /sys/class/net/{d}/queues/rx-0/rps_cpus" for d in devs)

        for ep in endpoints:
            shell.in_netns(ep, ["sh", "-ec", script([ep])])
        shell.in_netns(self.names.switch_ns, ["sh", "-ec", script([Names.port_of(ep) for ep in endpoints])])

    def down(self) -> dict[str, list[str]]:
        return teardown(self.spec.prefix)

    @classmethod
    def load(cls, prefix: str = "iltb") -> "Topology":
        """The topology `testbed up` built (for `testbed run`)."""
        try:
            with open(state_path(prefix)) as f:
                spec = TopologySpec(**json.load(f))
        except FileNotFoundError:
            raise EnvironmentProblem(f"no testbed is up with prefix {prefix!r}: run `incastlab testbed up` first") from None
        except (OSError, ValueError, TypeError) as e:  # cut short, hand-edited, another version's
            raise EnvironmentProblem(f"the record of testbed {prefix!r} ({state_path(prefix)}) does not read "
                                     f"({' '.join(str(e).split())[:100]}): run `incastlab testbed up` again") from None
        if spec.names.client_ns not in list_netns():
            raise EnvironmentProblem(f"the testbed {prefix!r} was recorded but its namespaces are gone: run `incastlab testbed up` again")
        return cls(spec)
