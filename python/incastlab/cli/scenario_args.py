"""The ``Scenario`` knobs as command-line flags, shared by every face that simulates.

Flags are passed to ``Scenario`` as the text the user typed, so units are parsed and
ranges checked in one place; a refusal is re-labelled with the flag the user typed.
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from typing import Any, Iterator

from ..errors import UsageError
from ..scenario import Scenario

# field -> (flag, metavar, help). Defaults are printed from Scenario itself.
_KNOBS: dict[str, tuple[str, str, str]] = {
    "sru": ("--sru", "SIZE", "bytes each server returns per block (fixed-SRU mode, FAST'08)"),
    "block": ("--block", "SIZE", "fixed-block mode: block size split over the servers (block/N each)"),
    "buffer": ("--buffer", "SIZE", "switch output-port buffer"),
    "rate": ("--rate", "RATE", "rate of every link"),
    "rtt": ("--rtt", "TIME", "round-trip propagation delay (each of the 4 links gets RTT/4)"),
    "rto_min": ("--rto-min", "TIME", "RFC 6298 minimum retransmission timeout"),
    "rto_max": ("--rto-max", "TIME", "maximum backed-off retransmission timeout"),
    "timer_granularity": ("--timer-granularity", "TIME", "RFC 6298 clock granularity G"),
    "dupack_threshold": ("--dupack-threshold", "N", "duplicate ACKs that trigger fast retransmit"),
    "init_cwnd": ("--init-cwnd", "SEGMENTS", "initial congestion window"),
    "rwnd": ("--rwnd", "SIZE", "advertised receive window (per-flow window cap)"),
    "jitter": ("--jitter", "TIME", "server think time, uniform in [0, TIME) per request"),
    "send_jitter": ("--send-jitter", "TIME", "host timing noise per data packet, uniform in [0, TIME]"),
    "mss": ("--mss", "BYTES", "TCP payload per segment"),
    "tcp": ("--tcp", "VARIANT", "TCP loss-recovery variant: reno, newreno or sack"),
    "rto_random": ("--rto-random", "FRACTION", "randomize each RTO by x (1 + U(0, FRACTION)); SIGCOMM'09 uses 0.5"),
    "seed": ("--seed", "N", "random seed (same seed, same result)"),
    "buffer_packets": ("--buffer-packets", "N", "the switch buffer's limit in packets (ns-2's qlim_; implies "
                       "--buffer-admission packets)"),
    "buffer_admission": ("--buffer-admission", "RULE", "how a switch port admits a packet: bytes (fits beside "
                         "every byte held), packets (ns-2) or mtu_slots (ns-3: one more MTU fits beside those "
                         "waiting)"),
    "rto_backoff": ("--rto-backoff", "RULE", "when the RTO backoff ends: sample (at the next RTT sample, Karn; "
                    "ns-2) or new_ack (at every ACK of new data; ns-3)"),
    "tcp_rules": ("--tcp-rules", "RULES", "whose rules TCP follows where implementations differ: rfc (the RFCs "
                  "as written), ns2 (ns-2.35's Agent/TCP, which FAST'08 ran) or ns3 (ns-3.44's TcpSocketBase)"),
    "tie_break": ("--tie-break", "RULE", "order of exactly simultaneous events: fifo (as scheduled, ns-2/ns-3) "
                  "or random (seeded: how much a result hangs on ties)"),
    "header": ("--header", "BYTES", "header bytes per packet on the wire (TCP/IP 40; ns-3's PPP links 42)"),
    "active_servers": ("--active-servers", "N", "of the servers, N chosen at random answer each block (Osada et al.)"),
    "mitigation": ("--mitigation", "SCHEME", "ntcp, tcpfg, ictcp, ccs, nccs or ocs (Osada et al.)"),
    "nccs_k": ("--k", "K", "NCCS: at most K connections open at once"),
    "condition_i": ("--condition-i", "READING", "NCCS/OCS: count S - T1 V in bits the servers sent (sent), bits the "
                    "client received (delivered), or as sent and also check as a connection opens (open)"),
    "udp": ("--udp", "FRACTION", "UDP background as a fraction of the link rate, e.g. 0.1%% or 0.001"),
    "syn_timeout": ("--syn-timeout", "TIME", "SYN retransmission timeout"),
    "udp_packet": ("--udp-packet", "SIZE", "UDP background datagram size on the wire"),
}
_FLAG_OF = {field: flag for field, (flag, _, _) in _KNOBS.items()}
_FLAG_OF.update({"slow_start": "--no-slow-start", "slow_start_after_idle": "--slow-start-after-idle",
                 "limited_transmit": "--limited-transmit", "timer_ticks": "--timer-ticks",
                 "handshake": "--handshake", "timestamps": "--timestamps", "delayed_ack": "--delayed-ack",
                 "duration": "--duration", "blocks": "--blocks", "servers": "--servers"})


def _shown_default(field: str) -> str:
    value = Scenario.model_fields[field].default
    if value is None:
        return "off"
    dumped = Scenario(servers=1).model_dump()[field]
    return str(dumped)


def add_scenario_arguments(parser: argparse.ArgumentParser, *, duration_default: str | None = None) -> None:
    """Add every Scenario knob except ``--servers`` to ``parser``."""
    g = parser.add_argument_group("scenario (defaults: FAST'08 Table 1, 32 KiB buffer)")
    for field, (flag, metavar, text) in _KNOBS.items():
        g.add_argument(flag, dest=field, metavar=metavar, default=None,
                       help=f"{text} (default {_shown_default(field)})")
    g.add_argument("--no-slow-start", dest="slow_start", action="store_false", default=None,
                   help="start each flow in congestion avoidance (default: slow start on)")
    g.add_argument("--delayed-ack", dest="delayed_ack", metavar="TIME", nargs="?", const="40ms", default=None,
                   help="delayed ACKs with this timeout (40ms if no value; default off, as in FAST'08's ns-2 runs)")
    g.add_argument("--handshake", dest="handshake", action="store_true", default=None,
                   help="open a new connection for every block (Osada et al.); default: persistent")
    g.add_argument("--limited-transmit", dest="limited_transmit", action=argparse.BooleanOptionalAction,
                   default=None, help="RFC 3042 limited transmit (default on: RFC 5681 §3.2, ns-2, ns-3, Linux; "
                                      "FAST'08 Table 1 says off, docs/model.md)")
    g.add_argument("--timestamps", dest="timestamps", action="store_true", default=None,
                   help="RFC 7323 timestamps: RTT samples from every ACK, backoff cleared (Linux); default off (ns-2)")
    g.add_argument("--timer-ticks", dest="timer_ticks", action="store_true", default=None,
                   help="timers fire on multiples of --timer-granularity, like jiffies (default: exact)")
    g.add_argument("--slow-start-after-idle", dest="slow_start_after_idle", action="store_true", default=None,
                   help="RFC 5681 4.1 restart window after an idle RTO (Linux default; off as in ns-2)")
    shown = duration_default or "20s, FAST'08 §3.1"
    stop = g.add_mutually_exclusive_group()
    stop.add_argument("--duration", dest="duration", metavar="TIME", default=duration_default,
                      help=f"simulated time per point (default {shown})")
    stop.add_argument("--blocks", dest="blocks", metavar="N", default=None,
                      help="stop after N blocks instead of after a duration")


def scenario_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The Scenario keywords the user gave (unset flags leave Scenario's defaults)."""
    fields = {}
    for field in [*_KNOBS, "slow_start", "slow_start_after_idle", "limited_transmit", "timer_ticks", "handshake", "timestamps",
                  "delayed_ack", "duration", "blocks"]:
        value = getattr(args, field, None)
        if value is not None:
            fields[field] = value
    if "blocks" in fields:
        fields.pop("duration", None)  # a default duration does not compete with --blocks
    return fields


@contextmanager
def flag_names() -> Iterator[None]:
    """Re-raise a Scenario refusal with the flag name (``buffer`` -> ``--buffer``)."""
    try:
        yield
    except UsageError as e:
        base, _, rest = e.param.partition(" ")  # "rtt (link_delay_ps)" from the core
        flag = _FLAG_OF.get(base)
        if flag is None:
            raise
        raise UsageError(f"{flag} {rest}".strip(), e.value, e.allowed) from None


def build_scenarios(args: argparse.Namespace, servers: list[int]) -> list[Scenario]:
    """One Scenario per number of servers, from the parsed flags."""
    fields = scenario_fields(args)
    with flag_names():
        return [Scenario(**fields, servers=n) for n in servers]
