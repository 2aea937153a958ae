"""Differential comparison with htsim (Broadcom/csg-htsim), from committed reference runs.

    python -m incastlab.peers.htsim                          # every reference, side by side
    python -m incastlab.peers.htsim --only tcp-432-100 --seeds 3
    python -m incastlab.peers.htsim --json
    python -m incastlab.peers.htsim --explain                # the field-by-field alignment
    python -m incastlab.peers.htsim --only tcp-432-100 --print-scenario | target/release/examples/run_json

htsim is in no package registry, so the project cannot install it: its runs were made
outside the repository (``peers/htsim/README.md`` says how, and what each driver does) and
only their numbers are committed, in ``peers/htsim/references.json``, each with htsim's
commit, the command line, the machine, the date and the load. This module

- reads the references (``load_references``);
- maps each reference's htsim settings onto a ``Scenario`` aligned with htsim's model field
  by field (``scenario_for``; ``ALIGNMENT`` says which field follows which part of htsim's
  code; TCP and DCTCP by ``ALIGNMENT``, NDP by ``NDP_ALIGNMENT``), refusing by name what
  incastlab cannot express (htsim's random-drop queue) and, on our side, a ``--ours`` change
  of a field that defines the reference;
- runs incastlab here, each run in a fresh interpreter so that its peak memory is its own
  (``run_ours``), for the references' seeds and, on seed 1, for repeated timing runs;
- prints both simulators' last-flow completion (median over seeds, with the range), the
  ratio, each one's wall time (fastest and median) and peak memory, and the speed-up, with
  the model differences that remain named (``REMAINING_DIFFERENCES``, NDP's
  ``NDP_REMAINING_DIFFERENCES``), and for NDP the NACKs, returned headers and trims of both.

A speed-up is a ratio of two times taken on one machine: against references measured on
another CPU model it is shown, marked, and given no verdict (as ``incastlab bench`` does).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import EnvironmentProblem, UsageError
from ..scenario import Scenario
from .compare import parse_assignment

REPO_ROOT = Path(__file__).resolve().parents[3]
REFERENCES = REPO_ROOT / "peers" / "htsim" / "references.json"
PROG = "python -m incastlab.peers.htsim"

# The agreement asked of aligned models (issue 28: "the same completion times within 10 %").
AGREEMENT = 0.10

# htsim's own values that the mapping uses: where each is in htsim's code (at the commit the
# references name).
HTSIM_RTO_FLOOR = "250ms"  # tcp.cpp, TcpSrc::receivePacket: if (_rto < timeFromSec(0.25)) _rto = 0.25 s
HTSIM_IW_PACKETS = 10  # tcp.cpp, TcpSrc::TcpSrc: _cwnd = 10 * _mss
HTSIM_ECN_K_PACKETS = 15  # datacenter/fat_tree_topology.cpp, alloc_queue, ECN: ECNQueue(..., memFromPkt(15))
HTSIM_LINK_DELAY = "1us"  # fat_tree_topology.cpp: the constructor without latencies, _hop_latency = 1 us
HTSIM_LINK_RATE = "10Gbps"  # the drivers' speedFromMbps(10000), as the stock mains
# No cap on htsim's backoff (TcpSrc::rtx_timer_hook: _rto *= 2); ours must have one, and a
# deadline past 2^64 ps (213 days) would not fit a picosecond clock: 10^6 s is above every
# timeout these references reach (the slowest, 431-to-1, backs off to 131,072 s).
OURS_RTO_MAX = "1000000s"
# NDP (ndp.cpp, ndppacket.h at the same commit)
HTSIM_NDP_HEADER = 64  # NdpPacket::ACKSIZE: a data packet is its payload + 64 B; a header, ACK, NACK, PULL 64 B
HTSIM_NDP_END_S = 10.0  # the NDP mains' eventlist.setEndtime(timeFromSec(10))
# Swift (swift.cpp at the same commit: SwiftSrc::SwiftSrc and SwiftSubflowSrc::SwiftSubflowSrc)
HTSIM_SWIFT_BASE_US = 20.0  # _base_delay = timeFromUs(20)
HTSIM_SWIFT_HDIV = 6.55  # _h = _base_delay / 6.55, per hop (Route::hop_count: the links of the path)
HTSIM_SWIFT_FS_RANGE_US = 5 * HTSIM_SWIFT_BASE_US  # _fs_range = 5 * _base_delay
HTSIM_SWIFT_RTO_MIN = "100us"  # _min_rto = timeFromUs(100)


# --- the references ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HtsimSettings:
    """What one htsim reference ran: the driver's arguments, in htsim's terms."""

    protocol: str  # tcp (TcpSrc), dctcp (DCTCPSrc) or ndp (NdpSrc)
    nodes: int  # FatTreeTopology's no_of_nodes: k^3/4 hosts
    conns: int  # senders: setIncast(conns, nodes - conns), all to host 0
    flow_bytes: int  # set_flowsize
    packet_bytes: int  # Packet::set_packet_size
    queue_packets: int  # memFromPkt(q): every switch queue
    queue: str  # FatTreeTopology's queue type: ecn, random or composite
    scan_ms: float = 10.0  # the retransmission timer scanner's period
    duration_s: float | None = None  # a fixed simulated span (None: until every flow is done)
    diagnostic: str | None = None  # a driver change that is not htsim's model (never mapped)
    iw_packets: int | None = None  # NDP's and Swift's initial window (-cwnd)
    return_to_sender: bool | None = None  # NDP: CompositeQueue::setRTS

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "HtsimSettings":
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(d) - known)
        if unknown:
            raise EnvironmentProblem(f"{REFERENCES.name}: unknown htsim setting(s) {', '.join(unknown)}")
        return cls(**d)


@dataclass(frozen=True)
class Reference:
    """One committed htsim measurement: its settings, per-seed results and timing runs."""

    id: str
    title: str
    settings: HtsimSettings
    command: str
    results: list[dict[str, Any]]  # one per seed: last_flow_s, fct_p50_s, timeouts, ...
    timing: list[dict[str, Any]]  # repeated runs of one seed: total_s, elapsed_s, maxrss_kib, loadavg
    finding: str | None = None  # what the measurements showed where the models part
    date: str = ""

    @property
    def seeds(self) -> list[int]:
        return [r["seed"] for r in self.results if "seed" in r]


@dataclass(frozen=True)
class References:
    htsim: dict[str, Any]  # repository, commit, build
    machine: dict[str, Any]  # cpu, cores, ...
    refs: list[Reference]

    def by_id(self, ids: Sequence[str]) -> list[Reference]:
        known = {r.id: r for r in self.refs}
        for i in ids:
            if i not in known:
                raise UsageError("--only", i, "one or more of " + ", ".join(known))
        return [known[i] for i in ids]


def load_references(path: Path = REFERENCES) -> References:
    """The committed references; ``EnvironmentProblem`` if the file is missing or malformed."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise EnvironmentProblem(f"cannot read the htsim references {path}: {e}") from None
    try:
        refs = [Reference(id=r["id"], title=r["title"], settings=HtsimSettings.from_dict(r["settings"]),
                          command=r["command"], results=r["results"], timing=r.get("timing", []),
                          finding=r.get("finding"), date=r.get("date", ""))
                for r in data["references"]]
        return References(htsim=data["htsim"], machine=data["machine"], refs=refs)
    except (KeyError, TypeError) as e:
        raise EnvironmentProblem(f"{path}: malformed reference ({e})") from None


# --- htsim's settings -> an aligned Scenario -------------------------------------------------


def fat_tree_k(nodes: int) -> int:
    """The k of htsim's 3-tier FatTreeTopology for ``nodes`` hosts (its set_params: the
    smallest k with k^3/4 >= nodes, which must be equal)."""
    k = 2
    while k ** 3 // 4 < nodes:
        k += 2
    if k ** 3 // 4 != nodes:
        raise UsageError("nodes", nodes, "k^3/4 hosts for an even k (htsim's 3-tier FatTreeTopology), e.g. 432 or 8192")
    return k


@dataclass(frozen=True)
class Aligned:
    """One Scenario field set to follow htsim: its value for a reference, and where htsim
    does it."""

    field: str
    value: Callable[[HtsimSettings], Any]
    why: str


def _buffer_bytes(h: HtsimSettings) -> int:
    return h.queue_packets * h.packet_bytes


# htsim's TCP opens every flow with a SYN (TcpPacket::new_syn_pkt, 1 byte) that TcpSink
# answers with an ACK (TcpAck::ACKSIZE, 40 bytes); TcpSrc sends its first window when that ACK
# arrives. Ours start established, so the data's start is that round trip, on a cross-pod
# path: 6 links each way, 1 us and the packet's serialization at 10 Gbps each.
SYN_BYTES, ACK_BYTES, CROSS_POD_LINKS = 1, 40, 6


def syn_round_trip_ps(h: HtsimSettings) -> int:
    """When htsim's first data packet leaves a cross-pod sender: its SYN's round trip."""
    link_ps = 1_000_000  # HTSIM_LINK_DELAY
    ps_per_byte = 800  # 10 Gbps (HTSIM_LINK_RATE)
    return CROSS_POD_LINKS * (2 * link_ps + (SYN_BYTES + ACK_BYTES) * ps_per_byte)


# Every Scenario field the mapping sets, in the order it sets them, with htsim's source.
ALIGNMENT: tuple[Aligned, ...] = (
    Aligned("workload", lambda h: "incast", "one-shot flows, all from time 0 (TcpSrc::connect(..., 0))"),
    Aligned("topology", lambda h: "fat_tree", "FatTreeTopology, 3 tiers"),
    Aligned("fat_tree_k", lambda h: fat_tree_k(h.nodes), "FatTreeTopology::set_params: k^3/4 hosts, k/2 per ToR"),
    Aligned("servers", lambda h: h.conns, "senders (-conns)"),
    Aligned("placement", lambda h: "tail", "ConnectionMatrix::setIncast(conns, nodes - conns): receiver host 0, "
            "senders the last conns hosts"),
    Aligned("sru", lambda h: h.flow_bytes, "set_flowsize: bytes per flow"),
    Aligned("rate", lambda h: HTSIM_LINK_RATE, "speedFromMbps(10000) on every link, all tiers"),
    Aligned("rtt", lambda h: "4us", "1 us on each host link (FatTreeTopology's hop latency): rtt/4"),
    Aligned("trunk_delay", lambda h: HTSIM_LINK_DELAY, "1 us ToR-aggregation links; no switch latency"),
    Aligned("core_delay", lambda h: HTSIM_LINK_DELAY, "1 us aggregation-core links"),
    Aligned("buffer", _buffer_bytes, "memFromPkt(q) bytes per switch queue"),
    Aligned("buffer_admission", lambda h: "bytes", "Queue: dropped if queued bytes + its size > max, the packet "
            "in service counted"),
    Aligned("mss", lambda h: h.packet_bytes, "Packet::set_packet_size: every data packet carries that many bytes"),
    Aligned("header", lambda h: 0, "no header counted: a data packet is packet_bytes on the wire"),
    Aligned("init_cwnd", lambda h: HTSIM_IW_PACKETS, "TcpSrc: _cwnd = 10 * _mss"),
    Aligned("rwnd", lambda h: "1GiB", "TcpSink advertises no window"),
    Aligned("tcp", lambda h: "newreno", "TcpSrc: fast recovery with partial ACKs (RFC 6582 style), no SACK"),
    Aligned("tcp_rules", lambda h: "rfc", "TcpSrc: recovery only past _recoverq; timer stopped when all is acked"),
    Aligned("limited_transmit", lambda h: False, "TcpSrc sends nothing new on the first two duplicate ACKs"),
    Aligned("dupack_threshold", lambda h: 3, "TcpSrc: _dupacks == 3"),
    Aligned("delayed_ack", lambda h: "0s", "TcpSink ACKs every packet"),
    Aligned("rto_min", lambda h: HTSIM_RTO_FLOOR, "TcpSrc floors _rto at 0.25 s"),
    Aligned("rto_max", lambda h: OURS_RTO_MAX, "TcpSrc doubles _rto without a cap (ours: far above these runs)"),
    Aligned("timer_granularity", lambda h: f"{h.scan_ms:g}ms", "TcpRtxTimerScanner(scan_ms): timers looked at "
            "every scan_ms"),
    Aligned("timer_ticks", lambda h: True, "a timeout is taken at a scan, not at its deadline"),
    Aligned("timestamps", lambda h: True, "every ACK echoes its data packet's send time: an RTT sample"),
    Aligned("rto_backoff", lambda h: "new_ack", "TcpSrc recomputes _rto from srtt and mdev at every ACK"),
    Aligned("cc", lambda h: "dctcp" if h.protocol == "dctcp" else "newreno", "TcpSrc or DCTCPSrc"),
    Aligned("ecn_threshold", lambda h: HTSIM_ECN_K_PACKETS if h.protocol == "dctcp" else None,
            "FatTreeTopology's ECN queues mark above 15 packets (memFromPkt(15))"),
    Aligned("load_balancing", lambda h: "ecmp", "one of get_bidir_paths at random per flow (rand() % paths): "
            "per-flow ECMP over the (k/2)^2 core paths"),
    Aligned("tie_break", lambda h: "fifo", "EventList: a multimap, equal times in insertion order"),
    Aligned("start", lambda h: f"{syn_round_trip_ps(h)}ps", "TcpSrc's first window leaves when the ACK of its "
            "1-byte SYN arrives: one round trip (12.1968 us across pods)"),
    Aligned("duration", lambda h: None if h.duration_s is None else f"{h.duration_s:g}s",
            "the run ends when every flow is acknowledged (or at the fixed span)"),
)

# NDP's mapping (NdpSrc/NdpSink, CompositeQueue, NdpPullPacer: drivers/ndp_incast as
# old_tests/main_ndp_incast_shortflows.cpp builds them). The fields shared with TCP's mapping
# first, then NDP's own; TCP's knobs (cc, delayed ACKs, ...) stay unset: NDP refuses them.
_SHARED = ("topology", "fat_tree_k", "servers", "placement", "sru", "rate", "rtt", "trunk_delay", "core_delay",
           "buffer", "buffer_admission", "mss", "tie_break")
NDP_ALIGNMENT: tuple[Aligned, ...] = (
    Aligned("workload", lambda h: "incast", "one-shot flows, all from time 0 (NdpSrc::connect(..., 0))"),
    *(a for a in ALIGNMENT if a.field in _SHARED),
    Aligned("transport", lambda h: "ndp", "NdpSrc and NdpSink"),
    Aligned("trimming", lambda h: True, "COMPOSITE queues on every switch port (CompositeQueue: a data packet that "
            "does not fit is trimmed, the arrival or the queue's tail at random, drand() < 0.5)"),
    Aligned("return_to_sender", lambda h: bool(h.return_to_sender),
            "CompositeQueue::setRTS on every switch queue (-rts; htsim's default is off)"),
    Aligned("header", lambda h: HTSIM_NDP_HEADER, "NdpPacket: set_size(payload + ACKSIZE), ACKSIZE = 64; a trimmed "
            "packet, ACK, NACK and PULL are 64 B; the pull pacer's spacing is (9000 + 64) B at the link rate"),
    Aligned("init_cwnd", lambda h: h.iw_packets, "NdpSrc::setCwnd(cwnd x 9000 B): the first window (-cwnd)"),
    Aligned("load_balancing", lambda h: "spray", "SCATTER_PERMUTE: every packet (and every ACK, NACK, pull) on its "
            "own path of the (k/2)^2 (ours: each switch picks the uplink at random)"),
    Aligned("rto_min", lambda h: OURS_RTO_MAX, "NdpSrc::rtx_timer_hook returns at once (RESEND_ON_TIMEOUT is not "
            "defined): htsim's NDP never times out; ours' timer is set past the run"),
    Aligned("rto_max", lambda h: OURS_RTO_MAX, "(with rto_min: no timeout within the run)"),
    Aligned("duration", lambda h: f"{h.duration_s if h.duration_s is not None else HTSIM_NDP_END_S:g}s",
            "setEndtime(10 s): a flow not finished by then never is"),
)


def _swift_h_us() -> float:
    return HTSIM_SWIFT_BASE_US / HTSIM_SWIFT_HDIV


# Swift's mapping (SwiftSrc/SwiftSink over FairScheduler host queues and drop-tail switch queues:
# drivers/swift_incast as datacenter/main_swift.cpp builds them). htsim's Swift keeps TcpSrc's
# NewReno-style recovery and RFC 6298-style timer, so most of TCP's mapping carries over; its
# own constants are SwiftSrc's defaults.
_SWIFT_SHARED = ("topology", "fat_tree_k", "servers", "placement", "sru", "rate", "rtt", "trunk_delay", "core_delay",
                 "buffer", "buffer_admission", "mss", "header", "rwnd", "tcp", "tcp_rules", "limited_transmit",
                 "dupack_threshold", "delayed_ack", "rto_max", "timer_granularity", "timer_ticks", "load_balancing",
                 "tie_break")
SWIFT_ALIGNMENT: tuple[Aligned, ...] = (
    Aligned("workload", lambda h: "incast", "one-shot flows, all from time 0 (SwiftSrc::connect(..., 0))"),
    *(a for a in ALIGNMENT if a.field in _SWIFT_SHARED),
    Aligned("transport", lambda h: "swift", "SwiftSrc and SwiftSink (swift.cpp)"),
    Aligned("init_cwnd", lambda h: h.iw_packets, "SwiftSrc::set_cwnd(cwnd x packet size): the first window (-cwnd)"),
    Aligned("rto_min", lambda h: HTSIM_SWIFT_RTO_MIN, "SwiftSubflowSrc: _min_rto = 100 us (initial _rto 1 ms)"),
    Aligned("timestamps", lambda h: True, "SwiftSubflowSrc::update_rtt: an RTT sample (and RTO) from every ACK's "
            "echoed send time, retransmissions included"),
    Aligned("rto_backoff", lambda h: "new_ack", "update_rtt recomputes _rto from srtt and mdev at every ACK"),
    Aligned("swift_rto", lambda h: "delay", "update_rtt: the RTO from Swift's own delay samples, as ours' "
            "swift_rto = delay (Swift §3.6)"),
    Aligned("swift_base_target", lambda h: f"{HTSIM_SWIFT_BASE_US + _swift_h_us():.6f}us",
            "targetDelay: _base_delay (20 us) + hop_count x _h, hop_count the links of the path; ours counts "
            "switches (links - 1), so ours' base is htsim's plus one h: base + switches x h = htsim's target"),
    Aligned("swift_h", lambda h: f"{_swift_h_us():.6f}us", "_h = _base_delay / 6.55 per hop"),
    Aligned("swift_fs_range", lambda h: f"{HTSIM_SWIFT_FS_RANGE_US:g}us", "_fs_range = 5 x _base_delay"),
    Aligned("swift_fs_min_cwnd", lambda h: 0.1, "_fs_min_cwnd = 0.1 packets"),
    Aligned("swift_fs_max_cwnd", lambda h: 100.0, "_fs_max_cwnd = 100 packets"),
    Aligned("swift_ai", lambda h: 1.0, "_ai = 1"),
    Aligned("swift_beta", lambda h: 0.8, "_beta = 0.8"),
    Aligned("swift_max_mdf", lambda h: 0.5, "_max_mdf = 0.5"),
    Aligned("duration", lambda h: f"{h.duration_s:g}s" if h.duration_s is not None else None,
            "the driver's end time (-end_s): a flow not done by then never is"),
)

ALIGNED_FIELDS = frozenset(a.field for a in ALIGNMENT + NDP_ALIGNMENT + SWIFT_ALIGNMENT)


def alignment_for(h: HtsimSettings) -> tuple[Aligned, ...]:
    """The mapping that applies to ``h``'s protocol."""
    return {"ndp": NDP_ALIGNMENT, "swift": SWIFT_ALIGNMENT}.get(h.protocol, ALIGNMENT)

# Fields that define a reference: --ours may not change them (pick another reference).
DEFINED_BY_REFERENCE = {
    "workload": "the workload", "topology": "the topology", "fat_tree_k": "-nodes", "servers": "-conns",
    "sru": "-flowsize", "buffer": "-q x packet size", "mss": "the packet size", "placement": "setIncast's hosts",
    "duration": "the run's span",
}

# What incastlab cannot express, by htsim setting: refused by name.
REFUSED_SETTINGS: dict[tuple[str, Any], str] = {
    ("queue", "random"): "htsim's RandomQueue drops an arriving packet with probability 0.1 once more than "
                         "(its size - 3 packets) would be held; incastlab's ports drop only when full",
}

# What remains different after the alignment: named, with the size of its effect where the
# references measured it (peers/htsim/README.md gives the evidence).
REMAINING_DIFFERENCES: tuple[tuple[str, str], ...] = (
    ("timeouts at a scan",
     "htsim takes a timeout at the first scan strictly after its deadline and retransmits (scan period - "
     "lateness)/200 after that scan (under 50 us); a backed-off deadline falls on a scan, so it fires one scan "
     "(10 ms) late. Ours fire at the first tick at or after the deadline. With htsim's offset removed "
     "(diagnostic driver) its 100- and 431-to-1 runs end as with it"),
    ("order of simultaneous events",
     "a burst of retransmissions on one 10 ms tick meets an 8-packet port: which flows it admits hangs on the "
     "order of simultaneous events. Both simulators keep insertion order; with ours' tie_break=random the "
     "100-to-1 ends between 16.8 and 31.8 s (5 seeds)"),
    ("htsim's flow size",
     "TcpSrc::set_flowsize adds one MSS: a 450 KB flow sends 52 packets of 9000 B and counts as finished "
     "at the ACK of the 51st; htsim's completion here is when the sink holds the flow's bytes"),
    ("connection set-up", "htsim's SYN round trip is a common start here, the cross-pod one (12.1968 us); at "
     "431-to-1 the 35 senders in the receiver's pod start 4-8 us later than in htsim"),
    ("ACK size", "htsim's ACKs are 40 B; ours are header-only, 0 B with header 0 (6 links x 32 ns per RTT)"),
    ("ssthresh after a repeated timeout",
     "htsim sets max(cwnd/2, 2 MSS) at every timeout (tcp.cpp, TcpSrc::deflate_window), so 2 packets after a "
     "lost retransmission; RFC 5681 §3.1 (ours) keeps the first timeout's. With ours' rule in htsim's driver "
     "(diag-tcp-432-100-hold-ssthresh) htsim's 100-to-1 median FCT moves from 2.30 to 2.56 s, one of the "
     "two timeout steps (0.26 s each) to ours' 2.80 s"),
    ("initial ssthresh", "htsim 100 packets; ours the receive window. A 50-packet flow never reaches it"),
    ("host NICs", "htsim's FairPriorityQueue (ACKs first, round robin per flow, 1000 packets); ours FIFO. "
     "One flow per sender: no effect"),
    ("DCTCP", "htsim marks at dequeue when more than K bytes are queued and cuts cwnd by alpha/2 every "
     "window while alpha > 0; ours mark at arrival at K packets held and cut once per window with marks "
     "(RFC 8257). With 8-packet queues neither marks (K = 15)"),
)


# NDP's: what remains different after NDP_ALIGNMENT (peers/htsim/README.md, "NDP").
NDP_REMAINING_DIFFERENCES: tuple[tuple[str, str], ...] = (
    ("when a flow is done",
     "htsim's driver records a flow when its source holds the last ACK (NdpSrc's 'finished at'); ours when the "
     "receiver holds the last byte: ours is earlier by the ACK's trip back, 6 links x (1 us + 64 B at 10 Gbps) = "
     "6.3 us across pods (0.17 % of the 10-to-1's 3.70 ms; 0.02 % of the 100-to-1's)"),
    ("spraying", "htsim's source routes each packet on the next path of a shuffled list of all (k/2)^2 "
     "(SCATTER_PERMUTE, reshuffled every round), its sink the ACKs, NACKs and pulls likewise; ours lets each "
     "switch pick the uplink at random. Both send every packet on its own path, evenly on average"),
    ("timeouts", "htsim's NdpSrc never times out (rtx_timer_hook returns before anything: RESEND_ON_TIMEOUT is "
     "not defined); ours' timer is set past the run (rto_min 10^6 s). A header dropped at a full header queue "
     "without return-to-sender strands its flow in both"),
    ("header queue", "htsim's CompositeQueue serves the data queue once in 100,001 turns while both queues hold "
     "packets; ours serves headers first always (docs/transports.md)"),
)


# Swift's: what remains different after SWIFT_ALIGNMENT (peers/htsim/README.md, "Swift").
SWIFT_REMAINING_DIFFERENCES: tuple[tuple[str, str], ...] = (
    ("data lost before a go-back-N timeout",
     "htsim's SwiftSubflowSrc goes back N at a timeout (_highest_sent = _last_acked + mss) and then gives each "
     "subflow sequence number it sends again a fresh data sequence number (send_next_packet: get_next_dsn), so data "
     "lost beyond the retransmitted packet is never sent again and its flow never completes at the receiver: at "
     "1000-to-1 175-187 of 1000 flows complete, at 432 hosts 1-3 of 100 and 2 of 431. Ours resends it. Completion is "
     "therefore not compared; drops and timeouts are (htsim's stop once its flows have sent all their data, so they "
     "lack what resending the lost data would cost)"),
    ("timer", "htsim's timeouts are found by a scan every 10 ms (as main_swift) and its first RTO is 1 ms; ours fire at "
     "the first 10 ms tick at or after the deadline, and its first RTO comes from the path's RTT (RFC 6298 floor)"),
    ("window floor", "htsim's _min_cwnd is 10 bytes (0.0067 packets of 1500 B, 0.0011 of 9000 B); ours 0.001 packets"),
    ("host queues", "htsim's FairScheduler per sending host (a flow may hold 2 packets in it, then waits); ours FIFO. "
     "One flow per sender"),
    ("decrease test", "htsim's can_decrease compares with its RFC 6298 srtt; ours with its own smoothed delay (the "
     "same samples, gain 1/8)"),
    ("ACK size", "htsim's ACKs are 40 B; ours header-only, 0 B with header 0"),
)


def refusal(h: HtsimSettings) -> UsageError | None:
    """Why incastlab cannot run ``h``, naming the htsim setting; None if it can."""
    for (name, value), why in REFUSED_SETTINGS.items():
        if getattr(h, name) == value:
            return UsageError(name, value, f"a setting incastlab can express: {why}")
    if (h.protocol == "ndp") != (h.queue == "composite"):
        return UsageError("queue", h.queue, "composite with protocol ndp, and ndp only with composite (NdpSrc needs "
                                            "trimming queues; TcpSrc never reads a trimmed header)")
    if h.protocol == "swift" and h.queue != "ecn":
        return UsageError("queue", h.queue, "ecn with protocol swift (htsim's ECNQueue, drop-tail: SwiftSrc ignores "
                                            "the marks)")
    if h.protocol in ("ndp", "swift") and not h.iw_packets:
        return UsageError("iw_packets", h.iw_packets, "the first window in packets, at least 1 (-cwnd)")
    if h.diagnostic:
        return UsageError("diagnostic", h.diagnostic, "none: a driver change for a diagnosis, not htsim's model")
    return None


def scenario_for(h: HtsimSettings, seed: int = 1, ours: dict[str, str] | None = None) -> Scenario:
    """The Scenario aligned with htsim's settings ``h``, seeded ``seed``, with ``ours``
    (FIELD=VALUE texts) changed on our side only. ``UsageError`` names an htsim setting
    incastlab cannot express, or a ``--ours`` field the reference defines."""
    why = refusal(h)
    if why is not None:
        raise why
    kw: dict[str, Any] = {}
    for a in alignment_for(h):
        value = a.value(h)
        if value is not None:
            kw[a.field] = value
    for name in ours or {}:
        if name in DEFINED_BY_REFERENCE:
            raise UsageError("--ours", f"{name}={ours[name]}",
                             f"a field the reference does not define: {name} is htsim's {DEFINED_BY_REFERENCE[name]} "
                             f"(choose another reference with --only)")
        if name == "seed":
            raise UsageError("--ours", f"seed={ours[name]}", "no seed: --seeds sets them")
    kw.update(ours or {})
    kw["seed"] = seed
    return Scenario(**kw)


# --- running ours ------------------------------------------------------------------------------

# Runs in a fresh interpreter: one simulation, its result and the peak resident memory
# before (imports, and a one-packet warm-up run that loads what simulate imports lazily) and
# after it, in KiB (VmHWM: this process image's own high-water
# mark, as `incastlab bench` measures it).
_CHILD = """
import json, sys
def peak_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
from incastlab.scenario import Scenario
from incastlab.sim import simulate
simulate(Scenario(servers=1, blocks=1))  # what simulate imports on first use (about 95 MiB) is not the run's
before = peak_kib()
r = simulate(Scenario(**json.loads(sys.argv[1])))
print(json.dumps({"result": r.to_dict(), "rss_before_kib": before, "rss_after_kib": peak_kib()}))
"""


def run_once(s: Scenario) -> dict[str, Any]:
    """Simulate ``s`` in a fresh interpreter: its result, wall time and peak memory."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(s.model_dump())],
                          capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentProblem(f"incastlab run failed: {last}")
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**summary(s, child["result"]),
            "max_rss_mib": child["rss_after_kib"] / 1024,
            "sim_rss_mib": (child["rss_after_kib"] - child["rss_before_kib"]) / 1024}


def run_here(s: Scenario) -> dict[str, Any]:
    """Simulate ``s`` in this process (no memory figure): for tests and quick looks."""
    from ..sim import simulate

    return {**summary(s, simulate(s).to_dict()), "max_rss_mib": None, "sim_rss_mib": None}


def summary(s: Scenario, r: dict[str, Any]) -> dict[str, Any]:
    """The numbers compared with htsim's, from one result of ``s``."""
    # htsim's times count from 0, where its SYN leaves; ours from the data's start
    since_zero = (lambda t: None if t is None else t + s.start)
    return {
        "seed": r["seed"],
        "last_flow_s": since_zero(r.get("incast_completion_s")),
        "flows_completed": r.get("flows_completed"),
        "fct_p50_s": since_zero(r.get("fct_p50_s")),
        "fct_p99_s": since_zero(r.get("fct_p99_s")),
        "timeouts": r["timeouts"],
        "retransmits": r["retransmits"],
        # trimming and NDP (0 without them)
        "trims": r.get("trims", 0),
        "header_drops": r.get("header_drops", 0),
        "nacks": r.get("nacks", 0),
        "bounces": r.get("bounces", 0),
        "drops": r["drops"],
        "events": r["events"],
        "wall_s": r["wall_seconds"],
    }


def run_ours(h: HtsimSettings, seeds: Sequence[int], timing_runs: int, ours: dict[str, str] | None = None,
             runner: Callable[[Scenario], dict[str, Any]] = run_once) -> tuple[list[dict], list[dict]]:
    """Ours on ``seeds`` (one run each) and ``timing_runs`` runs of the first seed in all
    (the first seed's result run counts as one). Results are per seed; timing per run."""
    results, timing = [], []
    for i, seed in enumerate(seeds):
        r = runner(scenario_for(h, seed, ours))
        results.append(r)
        if i == 0:
            timing.append(r)
    for _ in range(max(timing_runs - 1, 0)):
        r = runner(scenario_for(h, seeds[0], ours))
        if r["last_flow_s"] != results[0]["last_flow_s"] or r["events"] != results[0]["events"]:
            raise EnvironmentProblem(f"seed {seeds[0]} gave two results: the simulator is not deterministic")
        timing.append(r)
    return results, timing


# --- side by side --------------------------------------------------------------------------------


def _median(xs: Sequence[float]) -> float | None:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.median(xs) if xs else None


def _fastest(xs: Sequence[float]) -> float | None:
    xs = [x for x in xs if x is not None]
    return min(xs) if xs else None


def ratio(ours: float | None, theirs: float | None) -> float | None:
    return None if ours is None or theirs is None or theirs == 0 else ours / theirs


# NDP's counters beside each other: htsim's NdpSrc counts NACKs and returned headers
# (_nacks_received, _bounces_received); its drivers count no trims, and its NDP takes no
# timeout (rtx_timer_hook returns at once).
NDP_COUNTERS_HTSIM = ("nacks", "bounces")
NDP_COUNTERS_OURS = ("nacks", "bounces", "trims", "header_drops", "timeouts")
# Swift's compared counters (htsim: every switch queue's num_drops; the timeouts its scanner starts)
SWIFT_COUNTERS = ("drops", "timeouts")


@dataclass
class Row:
    """One reference beside ours (``ours`` empty when it cannot run here)."""

    ref: Reference
    same_machine: bool
    ours: list[dict[str, Any]] = field(default_factory=list)
    ours_timing: list[dict[str, Any]] = field(default_factory=list)
    not_run: str | None = None  # why ours did not run
    changed: dict[str, str] = field(default_factory=dict)  # --ours

    def record(self) -> dict[str, Any]:
        ref, theirs = self.ref, self.ref.results
        t_last = [r.get("last_flow_s") for r in theirs]
        o_last = [r.get("last_flow_s") for r in self.ours]
        t_wall = [t["total_s"] for t in ref.timing]
        o_wall = [t["wall_s"] for t in self.ours_timing]
        tm, om = _median(t_last), _median(o_last)
        rec: dict[str, Any] = {
            "id": ref.id,
            "title": ref.title,
            "settings": ref.settings.__dict__,
            "htsim_command": ref.command,
            "htsim_date": ref.date,
            "htsim_seeds": len(theirs),
            "htsim_last_flow_s": t_last,
            "htsim_last_flow_median_s": tm,
            "htsim_fct_p50_median_s": _median([r.get("fct_p50_s") for r in theirs]),
            "htsim_timeouts_median": _median([r.get("timeouts") for r in theirs]),
            "htsim_flows_finished_median": _median([r.get("flows_finished", r.get("completed")) for r in theirs]),
            "htsim_wall_fastest_s": _fastest(t_wall),
            "htsim_wall_median_s": _median(t_wall),
            "htsim_max_rss_mib": _fastest([t["maxrss_kib"] / 1024 for t in ref.timing]),
            "htsim_loadavg": [t.get("loadavg_before") for t in ref.timing],
            "htsim_finding": ref.finding,
            "ours_not_run": self.not_run,
            "ours_changed": self.changed,
        }
        if ref.settings.protocol == "swift":
            rec.update({f"htsim_{k}_median": _median([r.get(k) for r in theirs]) for k in SWIFT_COUNTERS})
            if self.not_run is None:
                rec.update({f"ours_{k}_median": _median([r.get(k) for r in self.ours]) for k in SWIFT_COUNTERS})
        if ref.settings.protocol == "ndp":
            rec.update({f"htsim_{k}_median": _median([r.get(k) for r in theirs]) for k in NDP_COUNTERS_HTSIM})
            if self.not_run is None:
                rec.update({f"ours_{k}_median": _median([r.get(k) for r in self.ours]) for k in NDP_COUNTERS_OURS})
        if self.not_run is None:
            rec.update({
                "ours_seeds": len(self.ours),
                "ours_last_flow_s": o_last,
                "ours_last_flow_median_s": om,
                "ours_fct_p50_median_s": _median([r.get("fct_p50_s") for r in self.ours]),
                "ours_timeouts_median": _median([r.get("timeouts") for r in self.ours]),
                "ours_flows_finished_median": _median([r.get("flows_completed") for r in self.ours]),
                "ours_wall_fastest_s": _fastest(o_wall),
                "ours_wall_median_s": _median(o_wall),
                "ours_max_rss_mib": _fastest([t["max_rss_mib"] for t in self.ours_timing]),
                "ours_sim_rss_mib": _fastest([t["sim_rss_mib"] for t in self.ours_timing]),
                "last_flow_ratio": ratio(om, tm),
                "fct_p50_ratio": ratio(_median([r.get("fct_p50_s") for r in self.ours]),
                                       _median([r.get("fct_p50_s") for r in theirs])),
                "within_agreement": None if ratio(om, tm) is None else abs(ratio(om, tm) - 1) <= AGREEMENT,
                "speedup_fastest": ratio(_fastest(t_wall), _fastest(o_wall)),
                "speedup_median": ratio(_median(t_wall), _median(o_wall)),
                "memory_ratio": ratio(_fastest([t["max_rss_mib"] for t in self.ours_timing]),
                                      _fastest([t["maxrss_kib"] / 1024 for t in ref.timing])),
                "same_machine": self.same_machine,
            })
        return rec


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def compare(refs: References, chosen: Sequence[Reference], seeds: int | None, timing_runs: int,
            ours: dict[str, str] | None = None, runner: Callable[[Scenario], dict[str, Any]] = run_once,
            progress: Callable[[str], None] = lambda m: None) -> list[Row]:
    """Every chosen reference beside ours; ``seeds`` caps the seeds taken from each."""
    same = cpu_model() == refs.machine.get("cpu")
    rows = []
    for ref in chosen:
        row = Row(ref, same, changed=dict(ours or {}))
        why = refusal(ref.settings)
        if why is not None:
            row.not_run = str(why)
        else:
            use = ref.seeds[:seeds] if seeds else ref.seeds
            progress(f"{ref.id}: incastlab, seeds {','.join(map(str, use))}")
            row.ours, row.ours_timing = run_ours(ref.settings, use, timing_runs, ours, runner)
        rows.append(row)
    return rows


def _s(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _range(xs: Sequence[float | None]) -> str:
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f"{_s(statistics.median(xs))} [{_s(min(xs))}-{_s(max(xs))}]"


def render(rows: Sequence[Row], refs: References) -> str:
    head = ("reference", "htsim last flow s", "ours last flow s", "ratio", "p50 FCT ratio",
            "htsim wall s", "ours wall s", "speed-up", "htsim MiB", "ours MiB")
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    notes = []
    for row in rows:
        r = row.record()
        if row.not_run:
            lines.append(" | ".join([r["id"], _range(r["htsim_last_flow_s"]), "not run", "-", "-",
                                     f"{_s(r['htsim_wall_fastest_s'])} / {_s(r['htsim_wall_median_s'])}", "-", "-",
                                     _s(r["htsim_max_rss_mib"]), "-"]))
            notes.append(f"{r['id']}: {row.not_run}")
            continue
        mark = "" if r["same_machine"] else " (other machine)"
        verdict = "" if r["within_agreement"] is None else (" ok" if r["within_agreement"] else " >10%")
        lines.append(" | ".join([
            r["id"], _range(r["htsim_last_flow_s"]), _range(r["ours_last_flow_s"]),
            f"{_s(r['last_flow_ratio'])}{verdict}", _s(r["fct_p50_ratio"]),
            f"{_s(r['htsim_wall_fastest_s'])} / {_s(r['htsim_wall_median_s'])}",
            f"{_s(r['ours_wall_fastest_s'])} / {_s(r['ours_wall_median_s'])}",
            f"{_s(r['speedup_fastest'])}x{mark}", _s(r["htsim_max_rss_mib"]),
            f"{_s(r['ours_max_rss_mib'])} (+{_s(r['ours_sim_rss_mib'], 2)})",
        ]))
        if row.ref.settings.protocol == "ndp":
            n = row.ref.settings.conns
            notes.append(f"{r['id']}: flows finished htsim {_s(r['htsim_flows_finished_median'])}/{n}, ours "
                         f"{_s(r['ours_flows_finished_median'])}/{n}; NACKs htsim {_s(r['htsim_nacks_median'])}, ours "
                         f"{_s(r['ours_nacks_median'])}; returned headers htsim {_s(r['htsim_bounces_median'])}, ours "
                         f"{_s(r['ours_bounces_median'])}; ours trims {_s(r['ours_trims_median'])}, headers dropped "
                         f"{_s(r['ours_header_drops_median'])}, timeouts {_s(r['ours_timeouts_median'])} (htsim's NDP "
                         "has none); medians over seeds")
        if row.ref.settings.protocol == "swift":
            n = row.ref.settings.conns
            notes.append(f"{r['id']}: flows finished htsim {_s(r['htsim_flows_finished_median'])}/{n} (see 'data lost "
                         f"before a go-back-N timeout'), ours {_s(r['ours_flows_finished_median'])}/{n}; drops htsim "
                         f"{_s(r['htsim_drops_median'])}, ours {_s(r['ours_drops_median'])}; timeouts htsim "
                         f"{_s(r['htsim_timeouts_median'])}, ours {_s(r['ours_timeouts_median'])}; medians over seeds")
        if row.changed:
            notes.append(f"{r['id']}: ours changed ({', '.join(f'{k}={v}' for k, v in row.changed.items())}): "
                         "not the aligned model")
        if row.ref.finding:
            notes.append(f"{r['id']}: {row.ref.finding}")
    h = refs.htsim
    out = [f"htsim {h.get('repository', '')} at {h.get('commit', '')[:12]}, measured on {refs.machine.get('cpu')}; "
           "incastlab here. Last flow: median [min-max] over seeds. Wall: fastest / median, each simulator's own "
           "timer (build and run). MiB: peak resident memory of the process (ours: a Python interpreter; in "
           "brackets what the simulation added to it).", "", *lines, ""]
    if notes:
        out += ["Notes:", *(f"- {n}" for n in notes), ""]
    kinds = {row.ref.settings.protocol if row.ref.settings.protocol in ("ndp", "swift") else "tcp" for row in rows}
    for kind in sorted(kinds):
        which = {"ndp": "NDP", "swift": "Swift", "tcp": "TCP and DCTCP"}[kind]
        diffs = {"ndp": NDP_REMAINING_DIFFERENCES, "swift": SWIFT_REMAINING_DIFFERENCES}.get(kind, REMAINING_DIFFERENCES)
        out += [f"Model differences that remain, {which} (peers/htsim/README.md):",
                *(f"- {name}: {text}" for name, text in diffs), ""]
    if out[-1] == "":
        out.pop()
    return "\n".join(out)


def explain(h: HtsimSettings | None = None) -> str:
    """The alignment, field by field (with the values for ``h`` if given)."""
    if h is None:
        return "\n".join(["TCP and DCTCP (TcpSrc, DCTCPSrc):", _explain(ALIGNMENT, None), "",
                          "NDP (NdpSrc, CompositeQueue):", _explain(NDP_ALIGNMENT, None), "",
                          "Swift (SwiftSrc, drop-tail ECNQueue, FairScheduler host queues; where a line names TcpSrc, "
                          "SwiftSubflowSrc repeats its code: handle_ack, rtx_timer_hook, SwiftRtxTimerScanner):",
                          _explain(SWIFT_ALIGNMENT, None)])
    return _explain(alignment_for(h), h)


def _explain(alignment: Sequence[Aligned], h: HtsimSettings | None) -> str:
    lines = []
    for a in alignment:
        value = "" if h is None else f" = {a.value(h)!s}"
        lines.append(f"{a.field}{value}: {a.why}")
    return "\n".join(lines)


# --- command line --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Compare incastlab with htsim's committed reference runs (peers/htsim/references.json): the "
                    "same fat-tree incasts, with incastlab's model aligned to htsim's field by field; last-flow "
                    "completion, wall time and peak memory side by side.")
    p.add_argument("--only", metavar="ID[,ID...]", default=None, help="references to run (default: all)")
    p.add_argument("--list", action="store_true", help="list the references and exit")
    p.add_argument("--seeds", type=_positive, default=None, metavar="N",
                   help="at most the first N of each reference's seeds (default: all of them)")
    p.add_argument("--timing-runs", type=_positive, default=3, metavar="R",
                   help="runs of the first seed for the wall time (default 3)")
    p.add_argument("--ours", action="append", default=[], metavar="FIELD=VALUE",
                   help="change a field on incastlab's side only (the row is then not the aligned model)")
    p.add_argument("--explain", action="store_true", help="print the field-by-field alignment and exit")
    p.add_argument("--json", action="store_true", help="one JSON object per reference")
    p.add_argument("--print-scenario", action="store_true",
                   help="print each chosen reference's aligned scenario (its first seed, --ours applied) as one "
                        "line of the core's JSON, for crates/sim/examples/run_json, and exit")
    p.add_argument("--references", type=Path, default=REFERENCES, metavar="FILE", help=argparse.SUPPRESS)
    return p


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected a whole number of at least 1")
    return v


def run(args: argparse.Namespace) -> int:
    refs = load_references(args.references)
    if args.explain:
        print(explain())
        return 0
    if args.list:
        for r in refs.refs:
            print(f"{r.id}: {r.title}")
        return 0
    chosen = refs.by_id(args.only.split(",")) if args.only else refs.refs
    ours = dict(parse_assignment(t, "--ours") for t in args.ours)
    for ref in chosen:  # every refusal before anything runs
        if refusal(ref.settings) is None:
            scenario_for(ref.settings, 1, ours)
    if args.print_scenario:
        for ref in chosen:
            print(json.dumps(scenario_for(ref.settings, ref.seeds[0], ours).to_native()))
        return 0
    rows = compare(refs, chosen, args.seeds, args.timing_runs, ours,
                   progress=lambda m: print(f"{PROG}: {m}", file=sys.stderr, flush=True))
    if args.json:
        for row in rows:
            print(json.dumps(row.record()))
    else:
        print(render(rows, refs))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except (UsageError, EnvironmentProblem) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
