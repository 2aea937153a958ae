"""Fan-in: how many TCP senders delivered data to this host over the monitored interface
during a second.

Incast is many senders answering one receiver at once; a single bulk flow that loses packets
and waits out RTOs shows the same line-rate stretches and timeouts on the interface counters.
The receiving sockets tell them apart: a connection whose socket here received payload
segments (tcpi_data_segs_in grew) had a sender at its other end in that second.

Where the sockets come from (``crates/monitor/src/tcp_sockets.rs``): the kernel's sock_diag
netlink interface, the live connections once a second plus every connection freed in between
(its final counts, from the destroy broadcast). A snapshot of live connections alone (``ss
-tin``, what this did before) missed a whole read that opened and closed its connections
within the second (issue 11: 0 senders for a 4-server read on lo).

The counting rule (:class:`SenderCounter`, pure, tested on recorded input):

- a **connection** counts once per second, as one sender, when a socket of this host
  received payload on it in that second;
- only connections whose **traffic crosses the monitored interface** count: the peer is
  routed through it (``ip route get PEER``); local peers are routed through the loopback
  device, so on ``lo`` exactly the connections between two local sockets count, and on
  another interface none of them do;
- on a **loopback connection** both ends are sockets of this host and both may receive
  (a read sends its request one way and the data the other): its sender is the end that
  sent more payload bytes in the second, i.e. the one sending data towards the receiver
  (the server of a read, not the client with its 8-byte request). It is one sender, not two.

Each socket's counts are taken against what it had at the last reading it was seen in
(:class:`Baselines`). A socket leaves the dump before its destroy message is read: the kernel
unhashes it when it closes (a TIME_WAIT mini-socket takes its place), frees it when the last
reference goes, then a workqueue builds the destroy message (2-256 us after the close,
measured on loopback) and the collecting thread has to wake up and read it (longer on a
loaded host); a connection reset while its application still holds it is freed only at the
application's close(). A reading in between sees the socket in neither list; its baseline is
kept (``VANISHED_TTL_S``) for the destroy message, so its final counts are not taken from
zero, which counted the bytes it had received twice (a read's 185 blocks as 364, in CI).

Read in the monitor's own network namespace (``--netns`` re-runs the monitor inside the
interface's namespace).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from typing import Callable, Generic, Iterable, TypeVar

from . import native

# How many of the second's largest senders the record names.
TOP_SENDERS = 5

# How long the counts of a socket that left the dump are kept for its destroy message
# (module docstring); a message that never comes (dropped: an overrun, or not collected at
# all) leaves nothing behind after this.
VANISHED_TTL_S = 60.0

T = TypeVar("T")


@dataclass(frozen=True)
class TcpSocket:
    """One TCP socket of this host as the kernel reported it (``TcpWatch.read``)."""

    cookie: int  # the kernel's socket cookie: unique per socket
    local_ip: str
    local_port: int
    remote_ip: str
    remote_port: int
    bytes_received: int  # tcpi_bytes_received (a FIN advances it by one)
    data_segs_in: int  # tcpi_data_segs_in: segments that carried payload
    closed: bool = False  # freed since the last reading: these are its final counts
    total_retrans: int = 0  # tcpi_total_retrans: segments it sent again

    @property
    def local(self) -> str:
        return _endpoint(self.local_ip, self.local_port)

    @property
    def remote(self) -> str:
        return _endpoint(self.remote_ip, self.remote_port)


@dataclass(frozen=True)
class Delivery:
    """One connection's data towards a receiver on this host in one second."""

    sender: str  # "ip:port" of the end that sent
    receiver: str  # "ip:port" of the socket here that received
    bytes: int


def _endpoint(ip: str, port: int) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


class Baselines(Generic[T]):
    """Per socket (cookie), a count as of the last reading the socket was in.

    A socket live at one reading and in neither the dump nor the destroy messages of the
    next has been unhashed but its destroy message has not come in yet (module docstring):
    its count is kept, for ``ttl_s``, as the baseline of its final counts.
    """

    def __init__(self, ttl_s: float = VANISHED_TTL_S, clock: Callable[[], float] = time.monotonic):
        self.ttl_s = ttl_s
        self.clock = clock
        self.live: dict[int, T] = {}  # cookie -> count, the sockets live at the last reading
        self.vanished: dict[int, tuple[T, float]] = {}  # cookie -> (count, when it left the dump)

    def get(self, cookie: int, default: T) -> T:
        if cookie in self.live:
            return self.live[cookie]
        if cookie in self.vanished:
            return self.vanished[cookie][0]
        return default

    def replace(self, sockets: list[TcpSocket], count: Callable[[TcpSocket], T]) -> None:
        """The reading's sockets (one entry each, as :func:`one_per_socket` gives) become the baselines."""
        t = self.clock()
        seen = {s.cookie for s in sockets}
        for cookie, c in self.live.items():
            if cookie not in seen:
                self.vanished[cookie] = (c, t)
        for cookie in seen:
            self.vanished.pop(cookie, None)  # reported closed (final), or live again
        self.vanished = {k: v for k, v in self.vanished.items() if t - v[1] < self.ttl_s}
        self.live = {s.cookie: count(s) for s in sockets if not s.closed}


class SenderCounter:
    """Turns one reading of the host's TCP sockets per second into that second's senders.

    ``crosses_iface(peer_ip)`` says whether traffic from that peer reaches this host over
    the monitored interface.
    """

    def __init__(self, crosses_iface: Callable[[str], bool], clock: Callable[[], float] = time.monotonic):
        self.crosses_iface = crosses_iface
        # cookie -> (bytes_received, data_segs_in) at the last reading the socket was in
        self.baselines: Baselines[tuple[int, int]] = Baselines(clock=clock)

    @property
    def last(self) -> dict[int, tuple[int, int]]:
        """The live sockets' counts at the last reading."""
        return self.baselines.live

    def prime(self, sockets: Iterable[TcpSocket]) -> None:
        """The baseline: what connections open at the start had received before."""
        self.baselines.replace(one_per_socket(sockets), _counts)

    def update(self, sockets: Iterable[TcpSocket]) -> list[Delivery]:
        """The second's senders, one per connection, largest first."""
        per_connection: dict[tuple[str, str], Delivery] = {}
        latest = one_per_socket(sockets)
        for s in latest:
            # unseen: opened since the last reading
            before_bytes, before_segs = self.baselines.get(s.cookie, (0, 0))
            # data_segs_in is a u32 that may wrap: any change means payload arrived
            if s.data_segs_in == before_segs or not self.crosses_iface(s.remote_ip):
                continue
            d = Delivery(sender=s.remote, receiver=s.local, bytes=max(0, s.bytes_received - before_bytes))
            # both ends of a loopback connection are here: one key for the pair, and the
            # end that sent more is the sender
            key = tuple(sorted((s.local, s.remote)))
            if key not in per_connection or d.bytes > per_connection[key].bytes:
                per_connection[key] = d
        self.baselines.replace(latest, _counts)
        return sorted(per_connection.values(), key=lambda d: (-d.bytes, d.sender))


def _counts(s: TcpSocket) -> tuple[int, int]:
    return s.bytes_received, s.data_segs_in


def one_per_socket(sockets: Iterable[TcpSocket]) -> list[TcpSocket]:
    """One entry per socket: a socket dumped live and then freed before the reading ended
    appears twice; its counts only grow, so the later (larger) entry wins."""
    by_cookie: dict[int, TcpSocket] = {}
    for s in sockets:
        old = by_cookie.get(s.cookie)
        if old is None or (s.bytes_received, s.closed) >= (old.bytes_received, old.closed):
            by_cookie[s.cookie] = s
    return list(by_cookie.values())


class RouteCache:
    """Whether a peer is reached through the interface, one route lookup per peer address
    (routes are taken as fixed for the run)."""

    def __init__(self, iface: str, lookup: Callable[[str], int | None] | None = None):
        self.ifindex = socket.if_nametoindex(iface)
        self.lookup = lookup or native().route_ifindex
        self.cache: dict[str, bool] = {}

    def __call__(self, peer_ip: str) -> bool:
        if peer_ip not in self.cache:
            try:
                # (the lookup routes an IPv4-mapped IPv6 peer as the IPv4 address it is)
                self.cache[peer_ip] = self.lookup(peer_ip) == self.ifindex
            except (OSError, ValueError):
                self.cache[peer_ip] = False  # no route back: not through this interface
        return self.cache[peer_ip]


class SenderWatch:
    """The monitor's fan-in source: the kernel's sockets in, a count per second out."""

    def __init__(self, iface: str):
        self.watch = native().TcpWatch()
        self.counter = SenderCounter(RouteCache(iface))
        self.unavailable: dict[str, str] = {}
        self.counter.prime(self._read())

    def read(self) -> list[TcpSocket]:
        """The sockets now (live, and freed since the last read), noting what is unavailable."""
        return self._read()

    def _read(self) -> list[TcpSocket]:
        got = self.watch.read()
        if got["closed_unavailable"]:
            self.unavailable["tcp senders (closed connections)"] = got["closed_unavailable"]
        if got["overruns"]:
            self.unavailable["tcp senders (closed connections)"] = (
                f"the kernel dropped destroy messages {got['overruns']} times (connections closing faster than "
                "they were read): closed connections may be missing from the count")
        return [TcpSocket(*t) for t in got["sockets"]]

    def second(self) -> list[Delivery]:
        return self.counter.update(self._read())
