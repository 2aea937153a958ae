"""TCP counters from ``/proc/net/snmp`` and ``/proc/net/netstat``.

Both files hold pairs of lines per group: ``Prefix: Name1 Name2 ...`` then
``Prefix: value1 value2 ...``. They are per network namespace: the retransmission timeouts
of an incast are counted at the senders, so read them where the senders are
(``--tcp-netns``), as the blog did with ``netstat -s`` on the sending host
(``003_a133663d5dbcfa75.txt``, "Riak in Production at Voxer").
"""

from __future__ import annotations

from . import native

# our name -> (group, field); descriptions in docs/monitor.md
TCP_COUNTERS = {
    "retrans_segs": ("Tcp", "RetransSegs"),
    "rto_timeouts": ("TcpExt", "TCPTimeouts"),
    "spurious_rtos": ("TcpExt", "TCPSpuriousRTOs"),
    "spurious_rtx_host_queues": ("TcpExt", "TCPSpuriousRtxHostQueues"),
    "fast_retrans": ("TcpExt", "TCPFastRetrans"),
    "lost_retransmit": ("TcpExt", "TCPLostRetransmit"),
    "listen_drops": ("TcpExt", "ListenDrops"),
    "dsack_recv_segs": ("TcpExt", "TCPDSACKRecvSegs"),
}


class ProcNetFormatError(ValueError):
    """The file does not have the header/value line pairs of /proc/net/snmp."""


def parse_proc_net(text: str) -> dict[str, dict[str, int]]:
    """``{group: {field: value}}`` from the text of /proc/net/snmp or /proc/net/netstat."""
    groups: dict[str, dict[str, int]] = {}
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) % 2:
        raise ProcNetFormatError("odd number of lines: header and value lines must pair up")
    for header, values in zip(lines[0::2], lines[1::2]):
        hp, _, hnames = header.partition(":")
        vp, _, vnums = values.partition(":")
        if hp != vp or not hp:
            raise ProcNetFormatError(f"header {hp!r} is followed by values of {vp!r}")
        names, nums = hnames.split(), vnums.split()
        if len(names) != len(nums):
            raise ProcNetFormatError(f"{hp}: {len(names)} names but {len(nums)} values")
        try:
            # MaxConn in /proc/net/snmp is -1 ("no limit"): keep ints signed here
            groups[hp] = {n: int(v) for n, v in zip(names, nums)}
        except ValueError as e:
            raise ProcNetFormatError(f"{hp}: {e}") from None
    return groups


def tcp_counters(snmp_text: str, netstat_text: str) -> dict[str, int | None]:
    """Our TCP counters from the two files; a field the kernel lacks is None."""
    groups = parse_proc_net(snmp_text)
    groups.update(parse_proc_net(netstat_text))
    return {name: groups.get(g, {}).get(f) for name, (g, f) in TCP_COUNTERS.items()}


def read_text(netns: str | None, name: str) -> str:
    """/proc/net/NAME here (``netns`` None) or inside a named network namespace."""
    if netns is None:
        with open(f"/proc/net/{name}") as f:
            return f.read()
    return native().read_proc_net_in(netns, name)


def read_tcp_counters(netns_list: list[str | None]) -> tuple[dict[str, int | None], dict[str, str]]:
    """TCP counters summed over namespaces (None = this one), and what could not be read.

    Returns ``(counters, unavailable)``; ``unavailable`` maps a source to the reason.
    """
    total: dict[str, int | None] = {k: None for k in TCP_COUNTERS}
    unavailable: dict[str, str] = {}
    for ns in netns_list:
        where = f"netns {ns}" if ns else "this netns"
        try:
            got = tcp_counters(read_text(ns, "snmp"), read_text(ns, "netstat"))
        except (OSError, ProcNetFormatError) as e:
            unavailable[f"tcp ({where})"] = str(e)
            continue
        for k, v in got.items():
            if v is None:
                unavailable.setdefault(f"tcp.{k}", "this kernel does not export it")
            elif v >= 0:
                total[k] = (total[k] or 0) + v
    return total, unavailable
